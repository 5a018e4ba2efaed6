# -*- test-case-name: tests.extension.test_delegated -*-
"""
Delegated authentication and authorization of an extension API server: upstream
C{k8s.io/apiserver/pkg/server/options/authentication.go} (C{DelegatingAuthenticationOptions},
C{--authentication-kubeconfig}), C{authorization.go} (C{DelegatingAuthorizationOptions},
C{--authorization-kubeconfig}), C{pkg/authentication/authenticatorfactory/delegating.go},
C{pkg/authorization/authorizerfactory/delegating.go} and C{pkg/authorization/path}.

An extension server trusts the main server for who a user is and what they may do:

 - bearer tokens are checked by a C{TokenReview} (C{authentication.k8s.io/v1}) POSTed to the
   main server named by C{--authentication-kubeconfig}, answers cached
   C{--authentication-token-webhook-cache-ttl} (10 s);
 - client certificates verify against C{--client-ca-file}, else the C{client-ca-file} of the
   C{kube-system/extension-apiserver-authentication} ConfigMap the main server publishes;
 - the authenticating front proxy (the aggregator) is trusted through
   C{--requestheader-client-ca-file} and the other C{--requestheader-*} flags, else through
   the ConfigMap's C{requestheader-*} keys (read once at start, as upstream's C{RunOnce});
 - anonymous requests are allowed through authentication (upstream's delegating default);
 - authorization is the union of the C{system:masters} group, the always-allowed paths
   (C{--authorization-always-allow-paths}, default C{/healthz}, C{/readyz}, C{/livez}) and a
   C{SubjectAccessReview} (C{authorization.k8s.io/v1}) POSTed to the main server named by
   C{--authorization-kubeconfig}, allowed answers cached
   C{--authorization-webhook-cache-authorized-ttl}, others
   C{--authorization-webhook-cache-unauthorized-ttl} (10 s each).

The HTTP clients are treq clients over the kubeconfig's server, CA, client certificate or
token (L{kubetwist.authorization.webhook.load_webhook_kubeconfig}); nothing blocks the reactor.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from cryptography import x509
from twisted.internet import defer
from twisted.logger import Logger
from zope.interface import implementer

from kubetwist.authentication.anonymous import AnonymousAuthenticator
from kubetwist.authentication.bearertoken import BearerTokenAuthenticator
from kubetwist.authentication.config import STANDARD_FRONT_PROXY_HEADERS
from kubetwist.authentication.group import AuthenticatedGroupAdder
from kubetwist.authentication.requestheader import (
    RequestHeaderAuthenticator,
    RequestHeaderConfig,
)
from kubetwist.authentication.union import UnionAuthenticator
from kubetwist.authentication.webhook import WebhookTokenAuthenticator
from kubetwist.authentication.websocket import ProtocolAuthenticator
from kubetwist.authentication.x509 import X509Authenticator
from kubetwist.authorization import PrivilegedGroups, UnionAuthorizer
from kubetwist.authorization.authorizer import ALLOW, NO_OPINION, Attributes, IAuthorizer
from kubetwist.authorization.webhook import (
    WebhookAuthorizer,
    http_client_for,
    load_webhook_kubeconfig,
)

log = Logger()

__all__ = [
    "AUTHENTICATION_CONFIGMAP_NAME", "AUTHENTICATION_CONFIGMAP_NAMESPACE",
    "AlwaysAllowPathsAuthorizer", "DelegatedAuthentication", "DelegatingAuthenticationOptions",
    "DelegatingAuthorizationOptions", "DelegationError", "authentication_configmap_data",
    "build_delegated_authentication", "build_delegated_authorizer",
]

#: Upstream C{authenticationConfigMapNamespace} / C{authenticationConfigMapName}.
AUTHENTICATION_CONFIGMAP_NAMESPACE = "kube-system"
AUTHENTICATION_CONFIGMAP_NAME = "extension-apiserver-authentication"
#: Upstream's C{authenticationRoleName} (named in the forbidden warning).
AUTHENTICATION_ROLE_NAME = "extension-apiserver-authentication-reader"

TOKENREVIEWS_PATH = "/apis/authentication.k8s.io/v1/tokenreviews"
SUBJECTACCESSREVIEWS_PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
CONFIGMAP_PATH = (f"/api/v1/namespaces/{AUTHENTICATION_CONFIGMAP_NAMESPACE}/configmaps/"
                  f"{AUTHENTICATION_CONFIGMAP_NAME}")


class DelegationError(Exception):
    """The delegated configuration cannot be built; C{str()} is upstream's start-up error."""


@dataclass
class DelegatingAuthenticationOptions:
    """
    Upstream C{DelegatingAuthenticationOptions} (defaults of
    C{NewDelegatingAuthenticationOptions}).

    @ivar remote_kubeconfig: C{--authentication-kubeconfig} (C{""} and optional: no
        TokenReview, no ConfigMap lookup).
    @ivar cache_ttl: C{--authentication-token-webhook-cache-ttl}, seconds.
    @ivar client_ca_file: C{--client-ca-file}.
    @ivar requestheader_client_ca_file: C{--requestheader-client-ca-file}; with the four
        header lists and C{requestheader_allowed_names}, the front proxy's trust.
    @ivar skip_lookup: C{--authentication-skip-lookup}: never read the ConfigMap.
    @ivar tolerate_lookup_failure: C{--authentication-tolerate-lookup-failure}.
    @ivar remote_kubeconfig_optional: without C{remote_kubeconfig}, go on without TokenReview
        and lookup (upstream C{RemoteKubeConfigFileOptional}); else that is a start-up error
        (kubetwist has no in-cluster configuration).
    """

    remote_kubeconfig: str = ""
    cache_ttl: float = 10.0
    client_ca_file: str = ""
    requestheader_client_ca_file: str = ""
    requestheader_username_headers: list[str] = field(
        default_factory=lambda: ["x-remote-user"])
    requestheader_uid_headers: list[str] = field(default_factory=list)
    requestheader_group_headers: list[str] = field(default_factory=lambda: ["x-remote-group"])
    requestheader_extra_headers_prefix: list[str] = field(
        default_factory=lambda: ["x-remote-extra-"])
    requestheader_allowed_names: list[str] = field(default_factory=list)
    skip_lookup: bool = False
    tolerate_lookup_failure: bool = False
    remote_kubeconfig_optional: bool = False


@dataclass
class DelegatingAuthorizationOptions:
    """
    Upstream C{DelegatingAuthorizationOptions} (defaults of
    C{NewDelegatingAuthorizationOptions}).

    @ivar remote_kubeconfig: C{--authorization-kubeconfig} (C{""} and optional: no
        SubjectAccessReview; every request the groups and paths do not allow is forbidden).
    @ivar allow_cache_ttl: C{--authorization-webhook-cache-authorized-ttl}, seconds.
    @ivar deny_cache_ttl: C{--authorization-webhook-cache-unauthorized-ttl}, seconds.
    @ivar always_allow_paths: C{--authorization-always-allow-paths}.
    @ivar always_allow_groups: groups allowed everything without asking (C{system:masters}).
    @ivar client_timeout: seconds a SubjectAccessReview call may take.
    @ivar remote_kubeconfig_optional: see L{DelegatingAuthenticationOptions}.
    """

    remote_kubeconfig: str = ""
    allow_cache_ttl: float = 10.0
    deny_cache_ttl: float = 10.0
    always_allow_paths: list[str] = field(
        default_factory=lambda: ["/healthz", "/readyz", "/livez"])
    always_allow_groups: list[str] = field(default_factory=lambda: ["system:masters"])
    client_timeout: float = 10.0
    remote_kubeconfig_optional: bool = False


@implementer(IAuthorizer)
class AlwaysAllowPathsAuthorizer:
    """
    Upstream C{path.NewAuthorizer}: non-resource requests on one of C{paths} (a trailing C{*}
    matches a prefix; the leading C{/} is optional) are allowed; everything else has no
    opinion.

    @raise ValueError: a C{*} that is not last (C{only trailing * allowed in "<path>"}).
    """

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths: set[str] = set()
        self.prefixes: list[str] = []
        for p in paths:
            p = p[1:] if p.startswith("/") else p
            if not p:
                self.paths.add(p)
                continue
            if "*" in p[:-1]:
                raise ValueError(f'only trailing * allowed in "{p}"')
            if p.endswith("*"):
                self.prefixes.append(p[:-1])
            else:
                self.paths.add(p)

    def authorize(self, attributes: Attributes) -> "defer.Deferred[tuple[str, str]]":
        if attributes.is_resource_request:
            return defer.succeed((NO_OPINION, ""))
        path = attributes.path[1:] if attributes.path.startswith("/") else attributes.path
        if path in self.paths or any(path.startswith(p) for p in self.prefixes):
            return defer.succeed((ALLOW, ""))
        return defer.succeed((NO_OPINION, ""))


def _client(reactor: Any, kubeconfig: str, client_factory: Optional[Callable],
            what: str) -> tuple:
    """C{(treq client, kubeconfig target)} of a kubeconfig file.

    @raise DelegationError: the file cannot be read (upstream's text: C{failed to get
        delegated <what> kubeconfig: <reason>})."""
    try:
        target = load_webhook_kubeconfig(kubeconfig)
        client = (client_factory or (lambda t: http_client_for(reactor, t)))(target)
    except ValueError as e:
        raise DelegationError(f"failed to get delegated {what} kubeconfig: {e}") from None
    return client, target


def _no_kubeconfig(what: str) -> DelegationError:
    """Upstream's error without a kubeconfig outside a cluster (C{rest.InClusterConfig})."""
    return DelegationError(f"failed to get delegated {what} kubeconfig: unable to load "
                           "in-cluster configuration, KUBERNETES_SERVICE_HOST and "
                           "KUBERNETES_SERVICE_PORT must be defined")


def _headers(token: str) -> dict:
    headers = {b"Content-Type": [b"application/json"], b"Accept": [b"application/json"]}
    if token:
        headers[b"Authorization"] = [b"Bearer " + token.encode()]
    return headers


def build_delegated_authorizer(reactor: Any, options: DelegatingAuthorizationOptions,
                               client_factory: Optional[Callable] = None) -> UnionAuthorizer:
    """
    Upstream C{DelegatingAuthorizationOptions.toAuthorizer}: privileged groups, always-allowed
    paths, then the SubjectAccessReview webhook of C{--authorization-kubeconfig} (decision on
    a failed review: no opinion, so 403 after a logged error, as upstream).

    @param client_factory: C{WebhookTarget -> treq client} (tests: a C{StubTreq}).
    @raise DelegationError: an unreadable kubeconfig, or a bad path pattern.
    """
    authorizers: list[Any] = []
    if options.always_allow_groups:
        authorizers.append(PrivilegedGroups(options.always_allow_groups))
    if options.always_allow_paths:
        try:
            authorizers.append(AlwaysAllowPathsAuthorizer(options.always_allow_paths))
        except ValueError as e:
            raise DelegationError(str(e)) from None
    if not options.remote_kubeconfig and not options.remote_kubeconfig_optional:
        raise _no_kubeconfig("authorization")
    if not options.remote_kubeconfig:
        log.warn("No authorization-kubeconfig provided, so SubjectAccessReview of "
                 "authorization tokens won't work.")
    else:
        client, target = _client(reactor, options.remote_kubeconfig, client_factory,
                                 "authorization")
        authorizers.append(WebhookAuthorizer(
            client, target.server.rstrip("/") + SUBJECTACCESSREVIEWS_PATH, reactor,
            version="v1", authorized_ttl=options.allow_cache_ttl,
            unauthorized_ttl=options.deny_cache_ttl, decision_on_error=NO_OPINION,
            timeout=options.client_timeout, token=target.token, name="delegated"))
    return UnionAuthorizer(authorizers)


def _pem_certificates(data: bytes, what: str) -> list[x509.Certificate]:
    try:
        certs = x509.load_pem_x509_certificates(data)
    except ValueError:
        certs = []
    if not certs:
        raise DelegationError(f"{what}: data does not contain any valid RSA or ECDSA "
                              "certificates")
    return certs


def _read_certificates(path: str, flag: str) -> list[x509.Certificate]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise DelegationError(f"unable to load {flag}: open {path}: "
                              f"{(e.strerror or str(e)).lower()}") from None
    return _pem_certificates(data, path)


def authentication_configmap_data(configmap: Optional[dict]) -> dict:
    """
    The trust the main server published in C{extension-apiserver-authentication}
    (upstream C{getClusterAuthenticationInfoFor}): C{{"client_cas": [cert],
    "requestheader": RequestHeaderConfig or None}}; the header lists are JSON arrays of
    strings in the ConfigMap.

    @raise DelegationError: a CA that is not PEM, or a list that is not a JSON array.
    """
    data = (configmap or {}).get("data") or {}
    out: dict[str, Any] = {"client_cas": [], "requestheader": None}
    if data.get("client-ca-file"):
        out["client_cas"] = _pem_certificates(data["client-ca-file"].encode(), "client-ca-file")
    if data.get("requestheader-client-ca-file"):
        def strings(key: str) -> list[str]:
            raw = data.get(key) or "[]"
            try:
                value = json.loads(raw)
            except ValueError:
                value = None
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise DelegationError(f"unable to parse {key}: {raw!r} is not a JSON list of "
                                      "strings")
            return value

        out["requestheader"] = RequestHeaderConfig(
            client_cas=_pem_certificates(data["requestheader-client-ca-file"].encode(),
                                         "requestheader-client-ca-file"),
            username_headers=strings("requestheader-username-headers"),
            uid_headers=strings("requestheader-uid-headers"),
            group_headers=strings("requestheader-group-headers"),
            extra_header_prefixes=strings("requestheader-extra-headers-prefix"),
            allowed_names=strings("requestheader-allowed-names"))
    return out


class _RequestHeader(RequestHeaderAuthenticator):
    """The front-proxy authenticator, with no opinion while it trusts no CA (its
    configuration may come later, from the ConfigMap)."""

    def authenticate_now(self, request: Any) -> Any:
        if not self.config.client_cas:
            return None
        return super().authenticate_now(request)


class _X509(X509Authenticator):
    """The client-certificate authenticator, with no opinion while it trusts no CA."""

    def authenticate(self, request: Any) -> Any:
        if not self.client_ca_certs:
            return defer.succeed(None)
        return super().authenticate(request)


def _front_proxy_headers(config: Optional[RequestHeaderConfig]) -> tuple:
    """The headers the authentication filter removes once the user is known (upstream
    C{ClearAuthenticationHeaders}): the front proxy's, else the standard ones."""
    if config is None:
        return STANDARD_FRONT_PROXY_HEADERS
    return (tuple(h.strip().lower().encode() for h in
                  config.username_headers + config.uid_headers + config.group_headers
                  if h.strip()),
            tuple(p.strip().lower().encode() for p in config.extra_header_prefixes
                  if p.strip()))


@dataclass
class DelegatedAuthentication:
    """
    The assembled delegated authentication.

    @ivar authenticator: the request authenticator.
    @ivar client_cas: every CA the TLS layer must accept client certificates from (the client
        CA and the front proxy's CA, upstream C{ApplyClientCert}).
    @ivar request_header: the front proxy's L{RequestHeaderConfig}, or C{None}.
    @ivar reload: C{async () -> bool}: read the ConfigMap again and take its CAs and headers
        where the flags did not name them (upstream's dynamic CA and request-header
        controllers); C{True} when something changed.  C{None} without a lookup.
    """

    authenticator: Any
    client_cas: list
    request_header: Optional[RequestHeaderConfig] = None
    reload: Optional[Callable[[], Any]] = None


async def _get_configmap(client: Any, target: Any) -> Optional[dict]:
    """The ConfigMap, C{None} when it does not exist (upstream: ignored).

    @raise DelegationError: forbidden or failing (the Status message)."""
    url = target.server.rstrip("/") + CONFIGMAP_PATH
    try:
        response = await client.get(url, headers=_headers(target.token))
        body = await response.content()
    except Exception as e:  # noqa: BLE001 -- every transport failure ends the same way
        raise DelegationError(f'Get "{url}": {e}') from None
    if response.code == 404:
        return None
    try:
        doc = json.loads(body)
    except ValueError:
        doc = {}
    if response.code != 200:
        if response.code == 403:
            log.warn("Unable to get configmap/{name} in {ns}.  Usually fixed by 'kubectl create "
                     "rolebinding -n {ns} ROLEBINDING_NAME --role={role} "
                     "--serviceaccount=YOUR_NS:YOUR_SA'", name=AUTHENTICATION_CONFIGMAP_NAME,
                     ns=AUTHENTICATION_CONFIGMAP_NAMESPACE, role=AUTHENTICATION_ROLE_NAME)
        message = doc.get("message") if isinstance(doc, dict) else None
        raise DelegationError(message or f"the server responded with the status code "
                                         f"{response.code}")
    return doc


async def build_delegated_authentication(
        reactor: Any, options: DelegatingAuthenticationOptions,
        client_factory: Optional[Callable] = None) -> DelegatedAuthentication:
    """
    Upstream C{DelegatingAuthenticationOptions.ApplyTo} and
    C{DelegatingAuthenticatorConfig.New}: requestheader, x509, then TokenReview bearer tokens
    (and the WebSocket protocol token), the authenticated group added, anonymous last.

    @param client_factory: C{WebhookTarget -> treq client} (tests: a C{StubTreq}).
    @return: a Deferred-compatible coroutine of L{DelegatedAuthentication}.
    @raise DelegationError: upstream's start-up errors (C{unable to load configmap based
        request-header-client-ca-file: <reason>} unless the failure is tolerated, an
        unreadable CA file or kubeconfig).
    """
    client = target = None
    if not options.remote_kubeconfig and not options.remote_kubeconfig_optional:
        raise _no_kubeconfig("authentication")
    if options.remote_kubeconfig:
        client, target = _client(reactor, options.remote_kubeconfig, client_factory,
                                 "authentication")
    client_cas: list[x509.Certificate] = []
    request_header: Optional[RequestHeaderConfig] = None
    published: Optional[dict] = None
    need_lookup = not options.skip_lookup and (not options.client_ca_file or
                                               not options.requestheader_client_ca_file)
    if need_lookup:
        if client is None:
            log.warn("No authentication-kubeconfig provided in order to lookup client-ca-file "
                     "and requestheader-client-ca-file in configmap/{name} in {ns}, so client "
                     "certificate authentication won't work.",
                     name=AUTHENTICATION_CONFIGMAP_NAME, ns=AUTHENTICATION_CONFIGMAP_NAMESPACE)
        else:
            try:
                published = authentication_configmap_data(await _get_configmap(client, target))
            except DelegationError as e:
                if not options.tolerate_lookup_failure:
                    raise DelegationError("unable to load configmap based "
                                          f"request-header-client-ca-file: {e}") from None
                log.warn("Error looking up in-cluster authentication configuration: {err}",
                         err=str(e))
                log.warn("Continuing without authentication configuration. This may treat all "
                         "requests as anonymous.")
    if options.client_ca_file:
        client_cas = _read_certificates(options.client_ca_file, "client-ca-file")
    elif published is not None:
        client_cas = published["client_cas"]
    if options.requestheader_client_ca_file:
        request_header = RequestHeaderConfig(
            client_cas=_read_certificates(options.requestheader_client_ca_file,
                                          "request-header-client-ca-file"),
            username_headers=list(options.requestheader_username_headers),
            uid_headers=list(options.requestheader_uid_headers),
            group_headers=list(options.requestheader_group_headers),
            extra_header_prefixes=list(options.requestheader_extra_headers_prefix),
            allowed_names=list(options.requestheader_allowed_names))
    elif published is not None:
        request_header = published["requestheader"]
    tokens: list[Any] = []
    if client is not None:
        url = target.server.rstrip("/") + TOKENREVIEWS_PATH
        headers = _headers(target.token)

        async def post(body: bytes) -> tuple[int, bytes]:
            response = await client.post(url, data=body, headers=headers)
            return response.code, await response.content()

        tokens.append(WebhookTokenAuthenticator(
            lambda body: defer.ensureDeferred(post(body)), "v1", [], options.cache_ttl,
            reactor, url))
    # upstream DelegatingAuthenticatorConfig.New: front proxy first, then x509, then tokens
    rh = _RequestHeader(request_header or RequestHeaderConfig())
    x509_authenticator = _X509(client_cas)
    authenticators: list[Any] = [rh, x509_authenticator]
    for token_authenticator in tokens:
        authenticators += [BearerTokenAuthenticator(token_authenticator),
                           ProtocolAuthenticator(token_authenticator)]
    authenticator = UnionAuthenticator([
        AuthenticatedGroupAdder(UnionAuthenticator(authenticators)),
        AnonymousAuthenticator(None)], fail_on_error=True)
    authenticator.front_proxy_headers = _front_proxy_headers(request_header)
    result = DelegatedAuthentication(authenticator, [], request_header)

    def apply(cas: list, header: Optional[RequestHeaderConfig]) -> None:
        rh.config = header or RequestHeaderConfig()
        x509_authenticator.client_ca_certs = list(cas)
        authenticator.front_proxy_headers = _front_proxy_headers(header)
        tls_cas = list(cas)
        for ca in (header.client_cas if header else []):
            if ca not in tls_cas:
                tls_cas.append(ca)
        result.client_cas = tls_cas
        result.request_header = header

    apply(client_cas, request_header)

    async def reload() -> bool:
        data = authentication_configmap_data(await _get_configmap(client, target))
        cas = client_cas if options.client_ca_file else data["client_cas"]
        header = request_header if options.requestheader_client_ca_file else \
            data["requestheader"]
        if cas == x509_authenticator.client_ca_certs and header == result.request_header:
            return False
        log.info("Loaded new client CA and request header values from configmap/{name}",
                 name=AUTHENTICATION_CONFIGMAP_NAME)
        apply(cas, header)
        return True

    if need_lookup and client is not None:
        result.reload = reload
    return result
