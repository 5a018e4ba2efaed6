# -*- test-case-name: tests.test_tap -*-
"""
C{twistd kubeapi}: upstream C{cmd/kube-apiserver/app} (C{options}, C{server.go}).

L{Options} takes kube-apiserver's flag names and defaults (plus kubetwist's C{--data-dir} and
C{--write-kubeconfig}); L{makeService} returns the L{KubeAPIService} MultiService: storage,
the three servers of the chain behind one filter chain, the HTTPS listener, and the post-start
hooks, with sd_notify and graceful shutdown.
"""

from __future__ import annotations

import ipaddress
import os
import re
import sys
from typing import Optional

from twisted.application.service import MultiService
from twisted.logger import Logger
from twisted.python import usage

log = Logger()

#: The Kubernetes API level kubetwist implements (what /version reports).
KUBERNETES_VERSION = "v1.32.0"

_GROUPS = [
    ("Etcd flags", ["encryption-provider-config", "etcd-servers", "etcd-prefix",
                    "etcd-cafile", "etcd-certfile", "etcd-keyfile", "etcd-compaction-interval"]),
    ("Secure serving flags", ["bind-address", "secure-port", "advertise-address", "cert-dir",
                              "strict-transport-security-directives",
                              "tls-cert-file", "tls-private-key-file"]),
    ("Authentication flags", ["api-audiences", "client-ca-file", "token-auth-file",
                              "anonymous-auth", "service-account-issuer",
                              "service-account-jwks-uri", "service-account-key-file",
                              "service-account-max-token-expiration",
                              "service-account-signing-key-file",
                              "service-account-lookup", "authentication-config",
                              "enable-bootstrap-token-auth",
                              "authentication-token-webhook-config-file",
                              "authentication-token-webhook-version",
                              "authentication-token-webhook-cache-ttl",
                              "oidc-issuer-url", "oidc-client-id", "oidc-ca-file",
                              "oidc-username-claim", "oidc-username-prefix",
                              "oidc-groups-claim", "oidc-groups-prefix", "oidc-signing-algs",
                              "oidc-required-claim", "requestheader-client-ca-file",
                              "requestheader-allowed-names", "requestheader-username-headers",
                              "requestheader-uid-headers", "requestheader-group-headers",
                              "requestheader-extra-headers-prefix"]),
    ("Authorization flags", ["authorization-config", "authorization-mode",
                             "authorization-policy-file",
                             "authorization-webhook-cache-authorized-ttl",
                             "authorization-webhook-cache-unauthorized-ttl",
                             "authorization-webhook-config-file",
                             "authorization-webhook-version"]),
    ("Admission flags", ["admission-control-config-file", "disable-admission-plugins",
                         "enable-admission-plugins"]),
    ("Auditing flags", ["audit-log-batch-buffer-size", "audit-log-compress", "audit-log-format",
                        "audit-log-maxage", "audit-log-maxbackup", "audit-log-maxsize",
                        "audit-log-mode", "audit-log-path",
                        "audit-log-truncate-enabled", "audit-log-truncate-max-batch-size",
                        "audit-log-truncate-max-event-size", "audit-policy-file",
                        "audit-webhook-batch-buffer-size", "audit-webhook-batch-max-size",
                        "audit-webhook-batch-max-wait", "audit-webhook-batch-throttle-burst",
                        "audit-webhook-batch-throttle-enable", "audit-webhook-batch-throttle-qps",
                        "audit-webhook-config-file", "audit-webhook-initial-backoff",
                        "audit-webhook-mode", "audit-webhook-truncate-enabled",
                        "audit-webhook-truncate-max-batch-size",
                        "audit-webhook-truncate-max-event-size"]),
    ("Generic flags", ["cors-allowed-origins", "enable-priority-and-fairness",
                       "max-requests-inflight",
                       "max-mutating-requests-inflight",
                       "min-request-timeout", "request-timeout", "shutdown-delay-duration"]),
    ("Misc flags", ["enable-aggregator-routing", "proxy-client-cert-file",
                    "proxy-client-key-file", "service-cluster-ip-range",
                    "service-node-port-range"]),
    ("Logs flags", ["logging-format", "v"]),
    ("kubetwist flags", ["data-dir", "write-kubeconfig", "reuse-port", "embedded-sync",
                         "workers"]),
]

def _default_admission_plugins() -> list[str]:
    from kubetwist.admission.registry import default_enabled_plugins

    return default_enabled_plugins()


def _known_admission_plugins() -> list[str]:
    from kubetwist.admission.registry import ALL_ORDERED_PLUGINS

    return sorted(ALL_ORDERED_PLUGINS)


_HSTS_DIRECTIVE = re.compile(r"^(max-age=\d+|includeSubDomains|preload)$")

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s)")


def parse_duration(text: str) -> float:
    """Parse a Go duration (C{1m0s}, C{60s}, C{1h}, C{500ms}, C{0}) into seconds."""
    text = text.strip()
    if text in ("0", ""):
        return 0.0
    pos, total = 0, 0.0
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    for m in _DURATION.finditer(text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * units[m.group(2)]
        pos = m.end()
    if pos != len(text) or pos == 0:
        raise usage.UsageError(f'invalid duration "{text}"')
    return total


class Options(usage.Options):
    """kube-apiserver's flags (the subset kubetwist implements), same names and defaults."""

    synopsis = "[options]"
    longdesc = ("Run a Kubernetes API server (kube-apiserver " + KUBERNETES_VERSION +
                " API level). With no --etcd-servers the cluster state is kept in an embedded "
                "store under --data-dir.")

    optParameters = [
        ["etcd-servers", None, "", "List of etcd servers to connect with (scheme://ip:port), "
         "comma separated. Empty: use the embedded store in --data-dir."],
        ["etcd-prefix", None, "/registry", "The prefix to prepend to all resource paths in etcd."],
        ["etcd-cafile", None, "", "SSL Certificate Authority file used to secure etcd "
         "communication."],
        ["etcd-certfile", None, "", "SSL certification file used to secure etcd communication."],
        ["etcd-keyfile", None, "", "SSL key file used to secure etcd communication."],
        ["etcd-compaction-interval", None, "5m0s", "The interval of compaction requests. If 0, "
         "the compaction request from apiserver is disabled."],
        ["encryption-provider-config", None, "", "The file containing configuration for "
         "encryption providers to be used for storing secrets in etcd"],
        ["bind-address", None, "0.0.0.0", "The IP address on which to listen for the "
         "--secure-port port."],
        ["secure-port", None, "6443", "The port on which to serve HTTPS with authentication "
         "and authorization."],
        ["advertise-address", None, "", "The IP address on which to advertise the apiserver to "
         "members of the cluster (the kubernetes Endpoints). Empty: --bind-address, or "
         "127.0.0.1."],
        ["cert-dir", None, "", "The directory where the TLS certs are located (default "
         "<data-dir>/pki)."],
        ["tls-cert-file", None, "", "File containing the default x509 Certificate for HTTPS."],
        ["tls-private-key-file", None, "", "File containing the default x509 private key "
         "matching --tls-cert-file."],
        ["client-ca-file", None, "", "If set, any request presenting a client certificate "
         "signed by one of the authorities in the client-ca-file is authenticated with an "
         "identity corresponding to the CommonName of the client certificate."],
        ["token-auth-file", None, "", "If set, the file that will be used to secure the secure "
         "port of the API server via token authentication."],
        ["anonymous-auth", None, "true", "Enables anonymous requests to the health and version "
         "endpoints."],
        ["api-audiences", None, "", "Identifiers of the API. The service account token "
         "authenticator will validate that tokens used against the API are bound to at least "
         "one of these audiences (comma separated; default: the service account issuers)."],
        ["service-account-issuer", None, "https://kubernetes.default.svc.cluster.local",
         "Identifier of the service account token issuer (the \"iss\" claim). Repeatable: the "
         "first signs new tokens, all are accepted."],
        ["service-account-jwks-uri", None, "", "Overrides the URI for the JSON Web Key Set "
         "in the discovery doc served at /.well-known/openid-configuration."],
        ["service-account-key-file", None, "", "File containing PEM-encoded x509 RSA or ECDSA "
         "private or public keys, used to verify ServiceAccount tokens. Repeatable (default: "
         "--service-account-signing-key-file)."],
        ["service-account-max-token-expiration", None, "", "The maximum validity duration of a "
         "token created by the service account token issuer (between 1h and 2^32 seconds)."],
        ["service-account-signing-key-file", None, "", "Path to the file that contains the "
         "current private key of the service account token issuer (default: an RSA key "
         "generated once as <cert-dir>/sa.key)."],
        ["service-account-lookup", None, "true", "If true, validate ServiceAccount tokens "
         "exist in etcd as part of authentication."],
        ["authentication-config", None, "", "File with Authentication Configuration to "
         "configure the JWT Token authenticator or the anonymous authenticator. This flag is "
         "mutually exclusive with the --oidc-* flags if the file configures the JWT Token "
         "authenticator. This flag is mutually exclusive with --anonymous-auth if the file "
         "configures the Anonymous authenticator."],
        ["enable-bootstrap-token-auth", None, "false", "Enable to allow secrets of type "
         "'bootstrap.kubernetes.io/token' in the 'kube-system' namespace to be used for TLS "
         "bootstrapping authentication."],
        ["authentication-token-webhook-config-file", None, "", "File with webhook "
         "configuration for token authentication in kubeconfig format. The API server will "
         "query the remote service to determine authentication for bearer tokens."],
        ["authentication-token-webhook-version", None, "v1beta1", "The API version of the "
         "authentication.k8s.io TokenReview to send to and expect from the webhook."],
        ["authentication-token-webhook-cache-ttl", None, "2m0s", "The duration to cache "
         "responses from the webhook token authenticator."],
        ["oidc-issuer-url", None, "", "The URL of the OpenID issuer, only HTTPS scheme will be "
         "accepted. If set, it will be used to verify the OIDC JSON Web Token (JWT)."],
        ["oidc-client-id", None, "", "The client ID for the OpenID Connect client, must be set "
         "if oidc-issuer-url is set."],
        ["oidc-ca-file", None, "", "If set, the OpenID server's certificate will be verified by "
         "one of the authorities in the oidc-ca-file, otherwise the host's root CA set will be "
         "used."],
        ["oidc-username-claim", None, "sub", "The OpenID claim to use as the user name. Note "
         "that claims other than the default ('sub') is not guaranteed to be unique and "
         "immutable."],
        ["oidc-username-prefix", None, "", "If provided, all usernames will be prefixed with "
         "this value. If not provided, username claims other than 'email' are prefixed by the "
         "issuer URL to avoid clashes. To skip any prefixing, provide the value '-'."],
        ["oidc-groups-claim", None, "", "If provided, the name of a custom OpenID Connect claim "
         "for specifying user groups. The claim value is expected to be a string or array of "
         "strings."],
        ["oidc-groups-prefix", None, "", "If provided, all groups will be prefixed with this "
         "value to prevent conflicts with other authentication strategies."],
        ["oidc-signing-algs", None, "RS256", "Comma-separated list of allowed JOSE asymmetric "
         "signing algorithms. JWTs with a supported 'alg' header values are: RS256, RS384, "
         "RS512, ES256, ES384, ES512, PS256, PS384, PS512."],
        ["oidc-required-claim", None, "", "A key=value pair that describes a required claim in "
         "the ID Token. If set, the claim is verified to be present in the ID Token with a "
         "matching value. Repeat this flag to specify multiple claims."],
        ["requestheader-client-ca-file", None, "", "Root certificate bundle to use to verify "
         "client certificates on incoming requests before trusting usernames in headers "
         "specified by --requestheader-username-headers. WARNING: generally do not depend on "
         "authorization being already done for incoming requests."],
        ["requestheader-allowed-names", None, "", "List of client certificate common names to "
         "allow to provide usernames in headers specified by --requestheader-username-headers. "
         "If empty, any client certificate validated by the authorities in "
         "--requestheader-client-ca-file is allowed."],
        ["requestheader-username-headers", None, "", "List of request headers to inspect for "
         "usernames. X-Remote-User is common."],
        ["requestheader-uid-headers", None, "", "List of request headers to inspect for UIDs. "
         "X-Remote-Uid is suggested."],
        ["requestheader-group-headers", None, "", "List of request headers to inspect for "
         "groups. X-Remote-Group is suggested."],
        ["requestheader-extra-headers-prefix", None, "", "List of request header prefixes to "
         "inspect. X-Remote-Extra- is suggested."],
        ["authorization-mode", None, "Node,RBAC", "Ordered list of plug-ins to do "
         "authorization on secure port (AlwaysAllow,AlwaysDeny,ABAC,Webhook,RBAC,Node). "
         "Defaults to Node,RBAC (what kubeadm and k3s run; kube-apiserver's own default is "
         "AlwaysAllow)."],
        ["enable-admission-plugins", None, "", "admission plugins that should be enabled in "
         "addition to default enabled ones (" + ", ".join(_default_admission_plugins()) + "). "
         "Comma-delimited list of admission plugins: " + ", ".join(_known_admission_plugins()) +
         ". The order of plugins in this flag does not matter. kubetwist: names of plugins not "
         "built yet are accepted and do nothing."],
        ["disable-admission-plugins", None, "", "admission plugins that should be disabled "
         "although they are in the default enabled plugins list. Comma-delimited list of "
         "admission plugins. The order of plugins in this flag does not matter."],
        ["admission-control-config-file", None, "", "File with admission control "
         "configuration."],
        ["authorization-config", None, "", "File with Authorization Configuration to configure "
         "the authorizer chain. Requires feature gate StructuredAuthorizationConfiguration. This "
         "flag is mutually exclusive with the other --authorization-mode and "
         "--authorization-webhook-* flags."],
        ["authorization-policy-file", None, "", "File with authorization policy in json line by "
         "line format, used with --authorization-mode=ABAC, on the secure port."],
        ["authorization-webhook-config-file", None, "", "File with webhook configuration in "
         "kubeconfig format, used with --authorization-mode=Webhook. The API server will query "
         "the remote service to determine access on the API server's secure port."],
        ["authorization-webhook-version", None, "v1beta1", "The API version of the "
         "authorization.k8s.io SubjectAccessReview to send to and expect from the webhook."],
        ["authorization-webhook-cache-authorized-ttl", None, "5m0s", "The duration to cache "
         "'authorized' responses from the webhook authorizer."],
        ["authorization-webhook-cache-unauthorized-ttl", None, "30s", "The duration to cache "
         "'unauthorized' responses from the webhook authorizer."],
        ["audit-policy-file", None, "", "Path to the file that defines the audit policy "
         "configuration."],
        ["audit-log-path", None, "", "If set, all requests coming to the apiserver will be "
         "logged to this file.  '-' means standard out."],
        ["audit-log-maxage", None, "0", "The maximum number of days to retain old audit log "
         "files based on the timestamp encoded in their filename."],
        ["audit-log-maxbackup", None, "0", "The maximum number of old audit log files to retain. "
         "Setting a value of 0 will mean there's no restriction on the number of files."],
        ["audit-log-maxsize", None, "0", "The maximum size in megabytes of the audit log file "
         "before it gets rotated."],
        ["audit-log-format", None, "json", "Format of saved audits. \"legacy\" indicates 1-line "
         "text format for each event. \"json\" indicates structured json format. Known formats "
         "are legacy,json."],
        ["audit-log-mode", None, "blocking", "Strategy for sending audit events. Blocking "
         "indicates sending events should block server responses. Batch causes the backend to "
         "buffer and write events asynchronously. Known modes are batch,blocking,"
         "blocking-strict. kubetwist: every mode writes from a thread, through a bounded buffer."],
        ["audit-log-compress", None, "false", "If set, the rotated log files will be compressed "
         "using gzip."],
        ["audit-log-batch-buffer-size", None, "10000", "The size of the buffer to store events "
         "before batching and writing."],
        ["audit-log-truncate-enabled", None, "false", "Whether event and batch truncating is "
         "enabled."],
        ["audit-log-truncate-max-batch-size", None, "10485760", "Maximum size of the batch sent "
         "to the underlying backend. Actual serialized size can be several hundreds of bytes "
         "greater. If a batch exceeds this limit, it is split into several batches of smaller "
         "size."],
        ["audit-log-truncate-max-event-size", None, "102400", "Maximum size of the audit event "
         "sent to the underlying backend. If the size of an event is greater than this number, "
         "first request and response are removed, and if this doesn't reduce the size enough, "
         "event is discarded."],
        ["audit-webhook-config-file", None, "", "Path to a kubeconfig formatted file that defines "
         "the audit webhook configuration."],
        ["audit-webhook-mode", None, "batch", "Strategy for sending audit events. Blocking "
         "indicates sending events should block server responses. Batch causes the backend to "
         "buffer and write events asynchronously. Known modes are batch,blocking,"
         "blocking-strict."],
        ["audit-webhook-initial-backoff", None, "10s", "The amount of time to wait before "
         "retrying the first failed request."],
        ["audit-webhook-truncate-enabled", None, "false", "Whether event and batch truncating "
         "is enabled."],
        ["audit-webhook-truncate-max-batch-size", None, "10485760", "Maximum size of the batch "
         "sent to the underlying backend. Actual serialized size can be several hundreds of "
         "bytes greater. If a batch exceeds this limit, it is split into several batches of "
         "smaller size."],
        ["audit-webhook-truncate-max-event-size", None, "102400", "Maximum size of the audit "
         "event sent to the underlying backend. If the size of an event is greater than this "
         "number, first request and response are removed, and if this doesn't reduce the size "
         "enough, event is discarded."],
        ["audit-webhook-batch-buffer-size", None, "10000", "The size of the buffer to store "
         "events before batching and writing. Only used in batch mode."],
        ["audit-webhook-batch-max-size", None, "400", "The maximum size of a batch. Only used in "
         "batch mode."],
        ["audit-webhook-batch-max-wait", None, "30s", "The amount of time to wait before force "
         "writing the batch that hadn't reached the max size. Only used in batch mode."],
        ["audit-webhook-batch-throttle-enable", None, "true", "Whether batching throttling is "
         "enabled. Only used in batch mode."],
        ["audit-webhook-batch-throttle-qps", None, "10", "Maximum average number of batches per "
         "second. Only used in batch mode."],
        ["audit-webhook-batch-throttle-burst", None, "15", "Maximum number of requests sent at "
         "the same moment if ThrottleQPS was not utilized before. Only used in batch mode."],
        ["cors-allowed-origins", None, "", "List of allowed origins for CORS, comma separated. "
         "An allowed origin can be a regular expression to support subdomain matching. If this "
         "list is empty CORS will not be enabled."],
        ["strict-transport-security-directives", None, "", "List of directives for HSTS, comma "
         "separated. If this list is empty, then HSTS directives will not be added. Example: "
         "'max-age=31536000,includeSubDomains,preload'"],
        ["enable-priority-and-fairness", None, "true", "If true, replace the max-in-flight "
         "handler with an enhanced one that queues and dispatches with priority and "
         "fairness"],
        ["max-requests-inflight", None, "400", "The maximum number of non-mutating requests in "
         "flight at a given time. 0: no limit."],
        ["max-mutating-requests-inflight", None, "200", "The maximum number of mutating requests "
         "in flight at a given time. 0: no limit."],
        ["min-request-timeout", None, "1800", "The minimum number of seconds a handler must keep "
         "a request open before timing it out (watches: a random value in [min, 2*min))."],
        ["request-timeout", None, "1m0s", "The duration a handler must keep a request open "
         "before timing it out."],
        ["shutdown-delay-duration", None, "0s", "Time to delay the termination: /readyz fails "
         "while requests are still served."],
        ["enable-aggregator-routing", None, "true", "Turns on aggregator routing requests to "
         "endpoints IP rather than cluster IP. (kubetwist: default true, it has no cluster "
         "network to reach a ClusterIP through)"],
        ["proxy-client-cert-file", None, "", "Client certificate used to prove the identity of "
         "the aggregator or kube-apiserver when it must call out during a request. This "
         "includes proxying requests to a user api-server and calling out to webhook "
         "admission plugins. It is expected that this cert includes a signature from the CA "
         "in the --requestheader-client-ca-file flag. That CA is published in the "
         "'extension-apiserver-authentication' configmap in the kube-system namespace. "
         "Components receiving calls from kube-aggregator should use that CA to perform their "
         "half of the mutual TLS verification."],
        ["proxy-client-key-file", None, "", "Private key for the client certificate used to "
         "prove the identity of the aggregator or kube-apiserver when it must call out during "
         "a request. This includes proxying requests to a user api-server and calling out to "
         "webhook admission plugins."],
        ["service-cluster-ip-range", None, "10.0.0.0/24", "A CIDR IP range from which to assign "
         "service cluster IPs."],
        ["service-node-port-range", None, "30000-32767", "A port range to reserve for services "
         "with NodePort visibility."],
        ["data-dir", None, "./kubetwist-data", "kubetwist: directory for the embedded store, "
         "generated certificates and the admin kubeconfig."],
        ["write-kubeconfig", None, "", "kubetwist: where to write the admin kubeconfig (default "
         "<data-dir>/admin.kubeconfig)."],
        ["reuse-port", None, "false", "kubetwist: listen with SO_REUSEPORT, so that several "
         "kubeapi processes on one etcd share --secure-port (the kernel spreads connections "
         "over them)."],
        ["embedded-sync", None, "normal", "kubetwist: durability of the embedded store: normal "
         "(SQLite synchronous=NORMAL: a process crash loses nothing, a power loss may lose the "
         "last writes) or full (synchronous=FULL: every write is synced to disk before it is "
         "answered)."],
        ["workers", None, "", "kubetwist: the number of server processes sharing --secure-port "
         "(SO_REUSEPORT; the first is the supervisor that starts, restarts and stops the "
         "others). Needs --etcd-servers when above 1: the embedded store has a single writer. "
         "Empty: one per core this process may run on with --etcd-servers, else 1."],
        # hidden (not in _GROUPS): which worker this process is; the supervisor passes it
        ["worker-index", None, "0", "kubetwist (internal): this process's worker number; "
         "0 is the supervisor."],
        ["logging-format", None, "text", 'Sets the log format. Permitted formats: "json" '
         '(gated by LoggingBetaOptions), "text".'],
        ["v", "v", "0", "number for the log level verbosity"],
    ]

    def _append(self, key: str, value: str) -> None:
        current = self[key] if isinstance(self[key], list) else []
        self[key] = current + [v for v in value.split(",") if v]

    def opt_version(self) -> None:
        """Print kubetwist's version and the Kubernetes API level it serves, then exit."""
        import kubetwist

        print(f"kubetwist {kubetwist.__version__} (Kubernetes {KUBERNETES_VERSION} API level)")
        sys.exit(0)

    def opt_service_account_issuer(self, value: str) -> None:
        """Identifier of the service account token issuer (repeatable)."""
        self._append("service-account-issuer", value)

    def opt_service_account_key_file(self, value: str) -> None:
        """A file of keys verifying ServiceAccount tokens (repeatable, or a comma list)."""
        self._append("service-account-key-file", value)

    def opt_anonymous_auth(self, value: str) -> None:
        """Enables anonymous requests (tracked: exclusive with the file's C{anonymous})."""
        self["anonymous-auth"] = value
        self["anonymous-auth-set"] = True

    def opt_oidc_required_claim(self, value: str) -> None:
        """A key=value required claim (repeatable)."""
        claims = self["oidc-required-claim"] if isinstance(self["oidc-required-claim"],
                                                           dict) else {}
        key, sep, val = value.partition("=")
        if not sep:
            raise usage.UsageError(f'invalid argument "{value}" for "--oidc-required-claim" '
                                   f'flag: malformed pair, expect string=string')
        claims[key] = val
        self["oidc-required-claim"] = claims

    def _requestheader_append(self, key: str, value: str) -> None:
        current = self[key] if isinstance(self[key], list) else []
        self[key] = current + [v for v in value.split(",")]

    def opt_requestheader_allowed_names(self, value: str) -> None:
        """Allowed common names (repeatable, comma list)."""
        self._requestheader_append("requestheader-allowed-names", value)

    def opt_requestheader_username_headers(self, value: str) -> None:
        """User name headers (repeatable, comma list)."""
        self._requestheader_append("requestheader-username-headers", value)

    def opt_requestheader_uid_headers(self, value: str) -> None:
        """UID headers (repeatable, comma list)."""
        self._requestheader_append("requestheader-uid-headers", value)

    def opt_requestheader_group_headers(self, value: str) -> None:
        """Group headers (repeatable, comma list)."""
        self._requestheader_append("requestheader-group-headers", value)

    def opt_requestheader_extra_headers_prefix(self, value: str) -> None:
        """Extra header prefixes (repeatable, comma list)."""
        self._requestheader_append("requestheader-extra-headers-prefix", value)

    def _authentication_flags(self) -> None:
        """The authentication flags of L{kubetwist.authentication.options} (files read and
        checked now: a bad one is a one-line error)."""
        from kubetwist.authentication.authnconfig import ConfigError
        from kubetwist.authentication.options import check_authentication_flags

        self["authentication-token-webhook-cache-ttl"] = parse_duration(
            str(self["authentication-token-webhook-cache-ttl"]))
        if not isinstance(self["oidc-required-claim"], dict):
            self["oidc-required-claim"] = {}
        try:
            check_authentication_flags(self)
        except ConfigError as e:
            raise usage.UsageError(str(e)) from None

    def _service_account_flags(self) -> None:
        """Normalize and check the C{--service-account-*} and C{--api-audiences} flags
        (upstream C{ServiceAccountAuthenticationOptions.Validate})."""
        o = self
        for key in ("service-account-issuer", "service-account-key-file"):
            if not isinstance(o[key], list):
                o[key] = [v for v in str(o[key] or "").split(",") if v]
        for issuer in o["service-account-issuer"]:
            if ":" in issuer and not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", issuer):
                raise usage.UsageError("service-account-issuer contained a ':' but was not a "
                                       "valid URL")
        o["api-audiences"] = [a.strip() for a in o["api-audiences"].split(",") if a.strip()]
        files = list(o["service-account-key-file"])
        if o["service-account-signing-key-file"]:
            files.append(o["service-account-signing-key-file"])
        for path in files:
            if not os.path.isfile(path):
                raise usage.UsageError(f"no such file: {path}")
        o["service-account-key-file"] = [os.path.abspath(p) for p in
                                         o["service-account-key-file"]]
        if o["service-account-signing-key-file"]:
            o["service-account-signing-key-file"] = os.path.abspath(
                o["service-account-signing-key-file"])
        elif o["service-account-key-file"]:
            raise usage.UsageError("service-account-signing-key-file is a required flag")
        max_exp = parse_duration(o["service-account-max-token-expiration"])
        if max_exp and not 3600 <= max_exp <= 2 ** 32:
            raise usage.UsageError("the service-account-max-token-expiration must be between "
                                   "1 hour and 2^32 seconds")
        o["service-account-max-token-expiration"] = int(max_exp)

    def _admission_flags(self) -> None:
        """
        C{--enable-admission-plugins} / C{--disable-admission-plugins} (upstream
        C{AdmissionOptions.Validate}); afterwards C{self["admission-plugins"]} holds the
        enabled names in upstream's order.
        """
        from kubetwist.admission.registry import enabled_plugin_names, validate_plugin_names

        o = self
        enable = [p.strip() for p in o["enable-admission-plugins"].split(",") if p.strip()]
        disable = [p.strip() for p in o["disable-admission-plugins"].split(",") if p.strip()]
        errs = validate_plugin_names(enable, disable)
        if errs:
            raise usage.UsageError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
        o["enable-admission-plugins"], o["disable-admission-plugins"] = enable, disable
        o["admission-plugins"] = enabled_plugin_names(enable, disable)
        from kubetwist.admission.config import AdmissionConfigError, read_admission_configuration

        try:
            o["admission-configs"] = read_admission_configuration(
                o["admission-control-config-file"], o["admission-plugins"])
        except AdmissionConfigError as e:
            raise usage.UsageError(str(e)) from None

    def _filter_flags(self) -> None:
        """C{--cors-allowed-origins} (regular expressions) and
        C{--strict-transport-security-directives} (upstream C{validateHSTSDirectives})."""
        o = self
        origins = [p.strip() for p in o["cors-allowed-origins"].split(",") if p.strip()]
        for p in origins:
            try:
                re.compile(p)
            except re.error as e:
                raise usage.UsageError(f'--cors-allowed-origins: invalid regular expression '
                                       f'"{p}": {e}') from None
        directives = [d.strip() for d in o["strict-transport-security-directives"].split(",")
                      if d.strip()]
        if any(not _HSTS_DIRECTIVE.match(d) for d in directives):
            raise usage.UsageError(
                "--strict-transport-security-directives invalid, allowed values: "
                "max-age=expireTime, includeSubDomains, preload. see "
                "https://tools.ietf.org/html/rfc6797#section-6.1 for more information")
        o["cors-allowed-origins"], o["strict-transport-security-directives"] = \
            origins, directives

    def _aggregator_flags(self) -> None:
        """C{--enable-aggregator-routing} (Go's C{ParseBool}); the proxy client certificate
        and key come together (upstream C{ProxyClientCertFile} and C{ProxyClientKeyFile})."""
        o = self
        value = str(o["enable-aggregator-routing"])
        truth = ("1", "t", "T", "TRUE", "true", "True")
        if value not in truth + ("0", "f", "F", "FALSE", "false", "False"):
            raise usage.UsageError(f'invalid argument "{value}" for '
                                   f'"--enable-aggregator-routing" flag: strconv.ParseBool: '
                                   f'parsing "{value}": invalid syntax')
        o["enable-aggregator-routing"] = value in truth
        if bool(o["proxy-client-cert-file"]) != bool(o["proxy-client-key-file"]):
            raise usage.UsageError("--proxy-client-cert-file and --proxy-client-key-file must "
                                   "be given together")

    def _priority_and_fairness_flags(self) -> None:
        """C{--enable-priority-and-fairness} (Go's C{ParseBool}) and upstream
        C{BuildPriorityAndFairness}'s check of the two in-flight limits."""
        o = self
        value = str(o["enable-priority-and-fairness"])
        if value not in ("1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE",
                         "false", "False"):
            raise usage.UsageError(f'invalid argument "{value}" for '
                                   f'"--enable-priority-and-fairness" flag: strconv.ParseBool: '
                                   f'parsing "{value}": invalid syntax')
        o["enable-priority-and-fairness"] = value in ("1", "t", "T", "TRUE", "true", "True")
        if o["enable-priority-and-fairness"] and \
                o["max-requests-inflight"] + o["max-mutating-requests-inflight"] <= 0:
            raise usage.UsageError(
                f"invalid configuration: MaxRequestsInFlight={o['max-requests-inflight']} and "
                f"MaxMutatingRequestsInFlight={o['max-mutating-requests-inflight']}; they must "
                f"add up to something positive")

    def parseOptions(self, options: Optional[list[str]] = None) -> None:
        """
        Parse and validate; a bad flag or value prints one line (C{Error: ...}, as
        kube-apiserver does) to stderr and exits with status 1, instead of twistd's usage
        dump with status 0.
        """
        # the kubeapi arguments as given: the supervisor starts its workers with them
        self["argv"] = list(sys.argv[1:] if options is None else options)
        try:
            super().parseOptions(options)
        except usage.UsageError as e:
            sys.stderr.write(f"Error: {e}\n")
            sys.stderr.flush()
            raise SystemExit(1) from None

    def getUsage(self, width: Optional[int] = None) -> str:
        """Flags grouped as kube-apiserver's C{--help} groups them."""
        by_name = {p[0]: p for p in self.optParameters}
        lines = [self.longdesc, ""]
        for title, names in _GROUPS:
            lines.append(f"{title}:")
            for n in names:
                _, _, default, doc = by_name[n]
                d = f' (default "{default}")' if default else ""
                lines.append(f"      --{n}=\n          {doc}{d}")
            lines.append("")
        lines.append("      --help\n          Display this help and exit.")
        return "\n".join(lines) + "\n"

    def _logs_flags(self) -> None:
        """C{-v}/C{--v} (C{-v=3} too, as pflag takes it) and C{--logging-format}, checked
        as upstream's C{logs.ValidateLoggingConfiguration}."""
        from kubetwist.server.logs import FORMATS, parse_verbosity

        try:
            self["v"] = parse_verbosity(self["v"])
        except ValueError:
            raise usage.UsageError(f'invalid argument "{self["v"]}" for "-v, --v" flag: '
                                   f'strconv.ParseInt: parsing "{self["v"]}": invalid '
                                   'syntax') from None
        if self["logging-format"] not in FORMATS:
            raise usage.UsageError(
                f'logging.format: Invalid value: "{self["logging-format"]}": Unsupported log '
                'format')

    def postOptions(self) -> None:
        """Validate every value; a bad one is a one-line C{usage.UsageError}."""
        o = self
        for key in ("secure-port", "max-requests-inflight", "max-mutating-requests-inflight",
                    "min-request-timeout"):
            try:
                o[key] = int(o[key])
            except ValueError:
                raise usage.UsageError(
                    f'invalid value "{o[key]}" for --{key}: must be an integer') from None
            if o[key] < 0:
                raise usage.UsageError(f"--{key} must not be negative")
        if not 0 < o["secure-port"] < 65536:
            raise usage.UsageError(f"--secure-port {o['secure-port']} must be between 1 and 65535")
        for key in ("request-timeout", "shutdown-delay-duration"):
            o[key] = parse_duration(o[key])
        self._logs_flags()
        try:
            ipaddress.ip_address(o["bind-address"])
        except ValueError:
            raise usage.UsageError(f'invalid --bind-address "{o["bind-address"]}"') from None
        if o["advertise-address"]:
            try:
                ipaddress.ip_address(o["advertise-address"])
            except ValueError:
                raise usage.UsageError(
                    f'invalid --advertise-address "{o["advertise-address"]}"') from None
        try:
            net = ipaddress.ip_network(o["service-cluster-ip-range"], strict=False)
        except ValueError:
            raise usage.UsageError(
                f'invalid --service-cluster-ip-range "{o["service-cluster-ip-range"]}"') from None
        if net.num_addresses < 8:
            raise usage.UsageError("--service-cluster-ip-range is too small")
        from kubetwist.registry.core.allocator import parse_port_range

        try:
            o["service-node-port-range"] = parse_port_range(o["service-node-port-range"])
        except ValueError as e:
            raise usage.UsageError(f"invalid --service-node-port-range: {e}") from None
        from kubetwist.authorization.options import validate_options

        try:
            validate_options(o)  # the modes, their files, --authorization-config
        except ValueError as e:
            raise usage.UsageError(str(e)) from None
        self._admission_flags()
        self._filter_flags()
        o["anonymous-auth"] = str(o["anonymous-auth"]).lower() in ("true", "1")
        o["service-account-lookup"] = str(o["service-account-lookup"]).lower() in ("true", "1")
        self._priority_and_fairness_flags()
        self._aggregator_flags()
        servers = [s.strip() for s in o["etcd-servers"].split(",") if s.strip()]
        for s in servers:
            if not re.match(r"^https?://[^/]+$", s.rstrip("/")):
                raise usage.UsageError(f'invalid --etcd-servers entry "{s}": want scheme://ip:port')
        o["etcd-servers"] = [s.rstrip("/") for s in servers]
        for key in ("etcd-cafile", "etcd-certfile", "etcd-keyfile"):
            if o[key] and not os.path.isfile(o[key]):
                raise usage.UsageError(f"--{key}: no such file: {o[key]}")
            o[key] = os.path.abspath(o[key]) if o[key] else ""
        if o["etcd-keyfile"] and not o["etcd-certfile"]:
            raise usage.UsageError("--etcd-keyfile needs --etcd-certfile")
        o["etcd-compaction-interval"] = parse_duration(o["etcd-compaction-interval"])
        o["reuse-port"] = str(o["reuse-port"]).lower() in ("true", "1")
        _workers_flags(self)
        if o["embedded-sync"] not in ("normal", "full"):
            raise usage.UsageError(
                f'invalid --embedded-sync "{o["embedded-sync"]}": want normal or full')
        if bool(o["tls-cert-file"]) != bool(o["tls-private-key-file"]):
            raise usage.UsageError("--tls-cert-file and --tls-private-key-file go together")
        for key in ("tls-cert-file", "tls-private-key-file", "client-ca-file", "token-auth-file"):
            if o[key] and not os.path.isfile(o[key]):
                raise usage.UsageError(f"--{key}: no such file: {o[key]}")
        if o["token-auth-file"]:
            from kubetwist.authentication.tokenfile import TokenFileAuthenticator

            try:
                TokenFileAuthenticator.from_file(o["token-auth-file"])
            except (ValueError, OSError) as e:
                raise usage.UsageError(f"--token-auth-file: {e}") from None
        if o["encryption-provider-config"]:
            from kubetwist.storage.value import EncryptionConfigError, load_encryption_config

            try:
                load_encryption_config(o["encryption-provider-config"])
            except EncryptionConfigError as e:
                raise usage.UsageError(str(e)) from None
            o["encryption-provider-config"] = os.path.abspath(o["encryption-provider-config"])
        self._service_account_flags()
        self._authentication_flags()
        _audit_flags(self)
        o["data-dir"] = os.path.abspath(o["data-dir"])
        o["cert-dir"] = os.path.abspath(o["cert-dir"] or os.path.join(o["data-dir"], "pki"))
        o["write-kubeconfig"] = os.path.abspath(
            o["write-kubeconfig"] or os.path.join(o["data-dir"], "admin.kubeconfig"))


def _workers_flags(o: Options) -> None:
    """
    C{--workers} and the hidden C{--worker-index} (kubetwist's; see
    L{kubetwist.server.workers}): afterwards both are ints, C{0 <= worker-index < workers}.
    Empty C{--workers} is C{len(os.sched_getaffinity(0))} with C{--etcd-servers}, else 1.
    Several workers share the port with C{SO_REUSEPORT}, so C{reuse-port} becomes true.

    @raise usage.UsageError: not an integer, below 1, an index out of range, or more than one
        worker on the embedded store (its lock admits a single writer process).
    """
    for key in ("workers", "worker-index"):
        if key == "workers" and str(o[key]).strip() == "":
            usable = getattr(os, "sched_getaffinity", None)  # Linux; elsewhere every core
            cores = len(usable(0)) if usable is not None else (os.cpu_count() or 1)
            o[key] = cores if o["etcd-servers"] else 1
            continue
        try:
            o[key] = int(o[key])
        except (TypeError, ValueError):
            raise usage.UsageError(
                f'invalid value "{o[key]}" for --{key}: must be an integer') from None
    if o["workers"] < 1:
        raise usage.UsageError(f"--workers={o['workers']} must be at least 1")
    if not 0 <= o["worker-index"] < o["workers"]:
        raise usage.UsageError(f"--worker-index={o['worker-index']} must be below "
                               f"--workers={o['workers']}")
    if o["workers"] > 1 and not o["etcd-servers"]:
        raise usage.UsageError(
            f"--workers={o['workers']} needs --etcd-servers: the embedded store in --data-dir "
            "has a single writer (one process holds its lock); use --workers=1 or etcd")
    if o["workers"] > 1:
        o["reuse-port"] = True


def _audit_flags(o: Options) -> None:
    """The C{--audit-*} flags (upstream C{AuditOptions.Validate}, and the policy file loaded
    as C{ApplyTo} loads it): numbers and durations parsed, a bad value or policy file a
    one-line C{usage.UsageError} (C{loading audit policy file: rules[0].level: Unsupported
    value: ...: from file p})."""
    from kubetwist.audit import validate_options

    for key in ("audit-log-maxage", "audit-log-maxbackup", "audit-log-maxsize",
                "audit-log-batch-buffer-size", "audit-webhook-batch-buffer-size",
                "audit-webhook-batch-max-size", "audit-webhook-batch-throttle-burst",
                "audit-log-truncate-max-batch-size", "audit-log-truncate-max-event-size",
                "audit-webhook-truncate-max-batch-size",
                "audit-webhook-truncate-max-event-size"):
        try:
            o[key] = int(o[key])
        except (TypeError, ValueError):
            raise usage.UsageError(f'invalid argument "{o[key]}" for "--{key}" flag: '
                                   f'strconv.ParseInt: parsing "{o[key]}": invalid syntax'
                                   ) from None
    try:
        o["audit-webhook-batch-throttle-qps"] = float(o["audit-webhook-batch-throttle-qps"])
    except (TypeError, ValueError):
        raise usage.UsageError(f'invalid argument "{o["audit-webhook-batch-throttle-qps"]}" '
                               'for "--audit-webhook-batch-throttle-qps" flag') from None
    for key in ("audit-webhook-batch-max-wait", "audit-webhook-initial-backoff"):
        if isinstance(o[key], str):
            o[key] = parse_duration(o[key])
    problem = validate_options(o)
    if problem:
        raise usage.UsageError(problem)


def makeService(options: Options) -> MultiService:
    """The twistd entry point: a L{KubeAPIService} on the global reactor."""
    from twisted.internet import reactor

    from kubetwist.app import KubeAPIService

    return KubeAPIService(reactor, dict(options), KUBERNETES_VERSION)
