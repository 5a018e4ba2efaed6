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
                              "service-account-signing-key-file"]),
    ("Authorization flags", ["authorization-mode"]),
    ("Admission flags", ["disable-admission-plugins", "enable-admission-plugins"]),
    ("Generic flags", ["cors-allowed-origins", "max-requests-inflight",
                       "max-mutating-requests-inflight",
                       "min-request-timeout", "request-timeout", "shutdown-delay-duration"]),
    ("Misc flags", ["service-cluster-ip-range", "service-node-port-range"]),
    ("kubetwist flags", ["data-dir", "write-kubeconfig", "reuse-port", "embedded-sync"]),
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
        ["authorization-mode", None, "AlwaysAllow", "Ordered list of plug-ins to do "
         "authorization on secure port (AlwaysAllow, AlwaysDeny)."],
        ["enable-admission-plugins", None, "", "admission plugins that should be enabled in "
         "addition to default enabled ones (" + ", ".join(_default_admission_plugins()) + "). "
         "Comma-delimited list of admission plugins: " + ", ".join(_known_admission_plugins()) +
         ". The order of plugins in this flag does not matter. kubetwist: names of plugins not "
         "built yet are accepted and do nothing."],
        ["disable-admission-plugins", None, "", "admission plugins that should be disabled "
         "although they are in the default enabled plugins list. Comma-delimited list of "
         "admission plugins. The order of plugins in this flag does not matter."],
        ["cors-allowed-origins", None, "", "List of allowed origins for CORS, comma separated. "
         "An allowed origin can be a regular expression to support subdomain matching. If this "
         "list is empty CORS will not be enabled."],
        ["strict-transport-security-directives", None, "", "List of directives for HSTS, comma "
         "separated. If this list is empty, then HSTS directives will not be added. Example: "
         "'max-age=31536000,includeSubDomains,preload'"],
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
    ]

    def _append(self, key: str, value: str) -> None:
        current = self[key] if isinstance(self[key], list) else []
        self[key] = current + [v for v in value.split(",") if v]

    def opt_service_account_issuer(self, value: str) -> None:
        """Identifier of the service account token issuer (repeatable)."""
        self._append("service-account-issuer", value)

    def opt_service_account_key_file(self, value: str) -> None:
        """A file of keys verifying ServiceAccount tokens (repeatable, or a comma list)."""
        self._append("service-account-key-file", value)

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

    def parseOptions(self, options: Optional[list[str]] = None) -> None:
        """
        Parse and validate; a bad flag or value prints one line (C{Error: ...}, as
        kube-apiserver does) to stderr and exits with status 1, instead of twistd's usage
        dump with status 0.
        """
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

    def postOptions(self) -> None:
        """Validate every value; a bad one is a one-line L{usage.UsageError}."""
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
        from kubetwist import authorization

        modes = [m.strip() for m in o["authorization-mode"].split(",") if m.strip()]
        try:
            authorization.validate_modes(modes)
        except ValueError as e:
            raise usage.UsageError(str(e)) from None
        o["authorization-mode"] = modes
        self._admission_flags()
        self._filter_flags()
        o["anonymous-auth"] = str(o["anonymous-auth"]).lower() in ("true", "1")
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
        o["data-dir"] = os.path.abspath(o["data-dir"])
        o["cert-dir"] = os.path.abspath(o["cert-dir"] or os.path.join(o["data-dir"], "pki"))
        o["write-kubeconfig"] = os.path.abspath(
            o["write-kubeconfig"] or os.path.join(o["data-dir"], "admin.kubeconfig"))


def makeService(options: Options) -> MultiService:
    """The twistd entry point: a L{KubeAPIService} on the global reactor."""
    from twisted.internet import reactor

    from kubetwist.app import KubeAPIService

    return KubeAPIService(reactor, dict(options), KUBERNETES_VERSION)
