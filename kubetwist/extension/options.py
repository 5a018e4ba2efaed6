# -*- test-case-name: tests.extension.test_options -*-
"""
The command line of an extension API server: upstream
C{k8s.io/apiserver/pkg/server/options/recommended.go} (C{RecommendedOptions}: secure serving,
etcd, delegated authentication and authorization, admission, features) with upstream's flag
names and defaults, plus kubetwist's C{--data-dir} for the embedded store.

A server's C{twistd} plugin subclasses L{ExtensionServerOptions}, setting
C{default_etcd_prefix} (sample-apiserver: C{/registry/wardle.example.com}) and
C{admission_plugin_names} (the names its L{ExtensionConfig
<kubetwist.extension.server.ExtensionConfig>} registers, all on by default), and returns an
L{ExtensionAPIService <kubetwist.extension.service.ExtensionAPIService>} from its
C{makeService}.
"""

from __future__ import annotations

import ipaddress
import sys
from typing import Optional

from twisted.python import usage

from kubetwist.authorization.options import parse_go_duration
from kubetwist.extension.delegated import (
    DelegatingAuthenticationOptions,
    DelegatingAuthorizationOptions,
)

__all__ = ["ExtensionServerOptions"]


def _split(value: str) -> list[str]:
    return [v.strip() for v in str(value or "").split(",") if v.strip()]


class ExtensionServerOptions(usage.Options):
    """Upstream C{RecommendedOptions}' flags (the subset kubetwist implements)."""

    synopsis = "[options]"
    #: C{--etcd-prefix}'s default (upstream C{NewRecommendedOptions(prefix, ...)}).
    default_etcd_prefix = "/registry"
    #: the admission plugins the server registers, after upstream's generic ones
    #: (L{GENERIC_ADMISSION_PLUGINS <kubetwist.extension.namespaces.GENERIC_ADMISSION_PLUGINS>}),
    #: all on by default.
    admission_plugin_names: tuple[str, ...] = ()

    optParameters = [
        # secure serving
        ["bind-address", None, "0.0.0.0", "The IP address on which to listen for the "
         "--secure-port port."],
        ["secure-port", None, "443", "The port on which to serve HTTPS with authentication "
         "and authorization. It cannot be switched off with 0."],
        ["cert-dir", None, "apiserver.local.config/certificates", "The directory where the TLS "
         "certs are located. If --tls-cert-file and --tls-private-key-file are provided, this "
         "flag will be ignored."],
        ["tls-cert-file", None, "", "File containing the default x509 Certificate for HTTPS."],
        ["tls-private-key-file", None, "", "File containing the default x509 private key "
         "matching --tls-cert-file."],
        # etcd
        ["etcd-servers", None, "", "List of etcd servers to connect with (scheme://ip:port), "
         "comma separated. Without it the objects are kept in an embedded store under "
         "--data-dir."],
        ["etcd-prefix", None, None, "The prefix to prepend to all resource paths in etcd."],
        ["etcd-cafile", None, "", "SSL Certificate Authority file used to secure etcd "
         "communication."],
        ["etcd-certfile", None, "", "SSL certification file used to secure etcd "
         "communication."],
        ["etcd-keyfile", None, "", "SSL key file used to secure etcd communication."],
        ["data-dir", None, "apiserver.local.config/data", "The directory of the embedded store "
         "(used without --etcd-servers)."],
        # the core API server
        ["kubeconfig", None, "", "kubeconfig file pointing at the 'core' kubernetes server "
         "(NamespaceLifecycle reads its namespaces; without it, the "
         "--authentication-kubeconfig)."],
        # delegated authentication
        ["authentication-kubeconfig", None, "", "kubeconfig file pointing at the 'core' "
         "kubernetes server with enough rights to create tokenreviews.authentication.k8s.io."],
        ["authentication-token-webhook-cache-ttl", None, "10s", "The duration to cache "
         "responses from the webhook token authenticator."],
        ["authentication-skip-lookup", None, "false", "If false, the authentication-kubeconfig "
         "will be used to lookup missing authentication configuration from the cluster."],
        ["authentication-tolerate-lookup-failure", None, "false", "If true, failures to look "
         "up missing authentication configuration from the cluster are not considered fatal. "
         "Note that this can result in authentication that treats all requests as anonymous."],
        ["client-ca-file", None, "", "If set, any request presenting a client certificate "
         "signed by one of the authorities in the client-ca-file is authenticated with an "
         "identity corresponding to the CommonName of the client certificate."],
        ["requestheader-client-ca-file", None, "", "Root certificate bundle to use to verify "
         "client certificates on incoming requests before trusting usernames in headers "
         "specified by --requestheader-username-headers. WARNING: generally do not depend on "
         "authorization being already done for incoming requests."],
        ["requestheader-allowed-names", None, "", "List of client certificate common names to "
         "allow to provide usernames in headers specified by --requestheader-username-headers. "
         "If empty, any client certificate validated by the authorities in "
         "--requestheader-client-ca-file is allowed."],
        ["requestheader-username-headers", None, "x-remote-user", "List of request headers to "
         "inspect for usernames. X-Remote-User is common."],
        ["requestheader-uid-headers", None, "", "List of request headers to inspect for UIDs. "
         "X-Remote-Uid is suggested."],
        ["requestheader-group-headers", None, "x-remote-group", "List of request headers to "
         "inspect for groups. X-Remote-Group is suggested."],
        ["requestheader-extra-headers-prefix", None, "x-remote-extra-", "List of request "
         "header prefixes to inspect. X-Remote-Extra- is suggested."],
        # delegated authorization
        ["authorization-kubeconfig", None, "", "kubeconfig file pointing at the 'core' "
         "kubernetes server with enough rights to create "
         "subjectaccessreviews.authorization.k8s.io."],
        ["authorization-webhook-cache-authorized-ttl", None, "10s", "The duration to cache "
         "'authorized' responses from the webhook authorizer."],
        ["authorization-webhook-cache-unauthorized-ttl", None, "10s", "The duration to cache "
         "'unauthorized' responses from the webhook authorizer."],
        ["authorization-always-allow-paths", None, "/healthz,/readyz,/livez", "A list of HTTP "
         "paths to skip during authorization, i.e. these are authorized without contacting "
         "the 'core' kubernetes server."],
        # admission
        ["enable-admission-plugins", None, "", "admission plugins that should be enabled in "
         "addition to default enabled ones."],
        ["disable-admission-plugins", None, "", "admission plugins that should be disabled "
         "although they are in the default enabled plugins list."],
        # generic
        ["max-requests-inflight", None, "400", "The maximum number of non-mutating requests in "
         "flight at a given time."],
        ["max-mutating-requests-inflight", None, "200", "The maximum number of mutating "
         "requests in flight at a given time."],
        ["request-timeout", None, "1m0s", "An optional field indicating the duration a handler "
         "must keep a request open before timing it out."],
        ["min-request-timeout", None, "1800", "An optional field indicating the minimum number "
         "of seconds a handler must keep a request open before timing it out."],
        ["shutdown-delay-duration", None, "0s", "Time to delay the termination."],
    ]

    def parseOptions(self, options: Optional[list[str]] = None) -> None:
        """A bad flag prints one line (C{Error: ...}) and exits 1, as upstream's servers."""
        try:
            super().parseOptions(options)
        except usage.UsageError as e:
            sys.stderr.write(f"Error: {e}\n")
            sys.stderr.flush()
            raise SystemExit(1) from None

    def postOptions(self) -> None:
        """Parse every value; a bad one is a one-line C{usage.UsageError}."""
        o = self
        if o["etcd-prefix"] is None:
            o["etcd-prefix"] = self.default_etcd_prefix
        for key in ("secure-port", "max-requests-inflight", "max-mutating-requests-inflight",
                    "min-request-timeout"):
            try:
                o[key] = int(o[key])
            except ValueError:
                raise usage.UsageError(
                    f'invalid value "{o[key]}" for --{key}: must be an integer') from None
        if not 0 < o["secure-port"] < 65536:
            raise usage.UsageError(f"--secure-port {o['secure-port']} must be between 1 and "
                                   "65535")
        try:
            ipaddress.ip_address(o["bind-address"])
        except ValueError:
            raise usage.UsageError(f'invalid --bind-address "{o["bind-address"]}"') from None
        for key in ("request-timeout", "shutdown-delay-duration",
                    "authentication-token-webhook-cache-ttl",
                    "authorization-webhook-cache-authorized-ttl",
                    "authorization-webhook-cache-unauthorized-ttl"):
            try:
                o[key] = parse_go_duration(str(o[key]))
            except ValueError as e:
                raise usage.UsageError(f'invalid argument "{o[key]}" for "--{key}" flag: '
                                       f"{e}") from None
        for key in ("authentication-skip-lookup", "authentication-tolerate-lookup-failure"):
            o[key] = str(o[key]).lower() in ("true", "1", "t")
        for key in ("requestheader-allowed-names", "requestheader-username-headers",
                    "requestheader-uid-headers", "requestheader-group-headers",
                    "requestheader-extra-headers-prefix", "authorization-always-allow-paths",
                    "etcd-servers", "enable-admission-plugins", "disable-admission-plugins"):
            o[key] = _split(o[key])
        from kubetwist.extension.namespaces import GENERIC_ADMISSION_PLUGINS

        known = set(GENERIC_ADMISSION_PLUGINS) | set(self.admission_plugin_names)
        for flag in ("enable-admission-plugins", "disable-admission-plugins"):
            for name in o[flag]:
                if name not in known:
                    raise usage.UsageError(f'{flag} plugin "{name}" is unknown')
        enabled = set(o["enable-admission-plugins"])
        o["admission-plugins"] = [
            n for n in GENERIC_ADMISSION_PLUGINS + tuple(self.admission_plugin_names)
            if n in enabled or n not in o["disable-admission-plugins"]]

    def authentication_options(self) -> DelegatingAuthenticationOptions:
        """The L{DelegatingAuthenticationOptions} of the parsed flags."""
        o = self
        return DelegatingAuthenticationOptions(
            remote_kubeconfig=o["authentication-kubeconfig"],
            cache_ttl=o["authentication-token-webhook-cache-ttl"],
            client_ca_file=o["client-ca-file"],
            requestheader_client_ca_file=o["requestheader-client-ca-file"],
            requestheader_username_headers=list(o["requestheader-username-headers"]),
            requestheader_uid_headers=list(o["requestheader-uid-headers"]),
            requestheader_group_headers=list(o["requestheader-group-headers"]),
            requestheader_extra_headers_prefix=list(o["requestheader-extra-headers-prefix"]),
            requestheader_allowed_names=list(o["requestheader-allowed-names"]),
            skip_lookup=o["authentication-skip-lookup"],
            tolerate_lookup_failure=o["authentication-tolerate-lookup-failure"])

    def authorization_options(self) -> DelegatingAuthorizationOptions:
        """The L{DelegatingAuthorizationOptions} of the parsed flags."""
        o = self
        return DelegatingAuthorizationOptions(
            remote_kubeconfig=o["authorization-kubeconfig"],
            allow_cache_ttl=o["authorization-webhook-cache-authorized-ttl"],
            deny_cache_ttl=o["authorization-webhook-cache-unauthorized-ttl"],
            always_allow_paths=list(o["authorization-always-allow-paths"]))
