# -*- test-case-name: tests.authentication.test_config -*-
"""
Assembling the request authenticator from the options: upstream
C{k8s.io/kubernetes/pkg/kubeapiserver/authenticator} (C{Config.New}) and the authentication
filter's decision, C{k8s.io/apiserver/pkg/endpoints/filters/authentication.go}.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from cryptography import x509
from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.iweb import IRequest

from kubetwist.authentication.anonymous import ANONYMOUS_ALLOWED_PATHS, AnonymousAuthenticator
from kubetwist.authentication.authenticator import (
    IAuthenticator,
    ITokenAuthenticator,
)
from kubetwist.authentication.bearertoken import BearerTokenAuthenticator
from kubetwist.authentication.group import AuthenticatedGroupAdder
from kubetwist.authentication.union import UnionAuthenticator, UnionTokenAuthenticator
from kubetwist.authentication.user import ALL_UNAUTHENTICATED, ANONYMOUS, UserInfo
from kubetwist.authentication.websocket import ProtocolAuthenticator
from kubetwist.authentication.x509 import X509Authenticator
from kubetwist.runtime.errors import new_unauthorized

_log = Logger()


#: Upstream's standard front-proxy headers, removed after authentication when no
#: C{--requestheader-*} headers are configured: C{(names, lower-cased prefixes)}.
STANDARD_FRONT_PROXY_HEADERS = ((b"x-remote-user", b"x-remote-uid", b"x-remote-group"),
                                (b"x-remote-extra-",))


def new_request_authenticator(
    *,
    client_ca_certs: Iterable[x509.Certificate] = (),
    token_authenticators: Sequence[ITokenAuthenticator] = (),
    anonymous: bool = True,
    anonymous_paths: Iterable[str] | None = ANONYMOUS_ALLOWED_PATHS,
    warn: Callable[[IRequest, str], None] | None = None,
    request_header: IAuthenticator | None = None,
    token_cache: Callable[[ITokenAuthenticator], ITokenAuthenticator] | None = None,
) -> IAuthenticator | None:
    """
    kube-apiserver's authenticator chain::

        union-fail-on-error(
            authenticated-group-adder(union(requestheader, x509, bearer(T), websocket(T)))),
            anonymous(paths))

    where C{T} is the token union C{union(tokens...)}, optionally cached (C{token_cache}).

    The x509 authenticator is present when there are client CAs; the bearer authenticator
    when there are token authenticators (e.g. L{TokenFileAuthenticator
    <kubetwist.authentication.tokenfile.TokenFileAuthenticator>}, service-account tokens), in
    the given order.  A bad credential fails the request even on an anonymous path, as
    upstream.

    @param anonymous: C{--anonymous-auth}.
    @param anonymous_paths: paths anonymous requests may reach (C{None}: every path).
    @param warn: passed to L{BearerTokenAuthenticator}.
    @param request_header: the front-proxy authenticator (C{--requestheader-*}), tried first.
    @param token_cache: wraps the union of the token authenticators (kube-apiserver: a
        L{CachedTokenAuthenticator <kubetwist.authentication.tokencache.
        CachedTokenAuthenticator>} of 10 s).
    @return: the authenticator, or C{None} when nothing at all is configured (upstream then
        disables authentication; every request is served unauthenticated).
    """
    authenticators: list[IAuthenticator] = []
    if request_header is not None:
        authenticators.append(request_header)
    cas = list(client_ca_certs)
    if cas:
        authenticators.append(X509Authenticator(cas))
    tokens = list(token_authenticators)
    if tokens:
        token_auth = tokens[0] if len(tokens) == 1 else UnionTokenAuthenticator(tokens)
        if token_cache is not None:
            token_auth = token_cache(token_auth)
        authenticators.append(BearerTokenAuthenticator(token_auth, warn=warn))
        authenticators.append(ProtocolAuthenticator(token_auth))
    anonymous_auth = AnonymousAuthenticator(anonymous_paths) if anonymous else None
    if not authenticators:
        return anonymous_auth
    front_proxy = None
    if request_header is not None and hasattr(request_header, "config"):
        c = request_header.config
        front_proxy = (
            tuple(h.strip().lower().encode() for h in
                  c.username_headers + c.uid_headers + c.group_headers if h.strip()),
            tuple(p.strip().lower().encode() for p in c.extra_header_prefixes if p.strip()))
    chain: IAuthenticator = (
        authenticators[0] if len(authenticators) == 1 else UnionAuthenticator(authenticators)
    )
    chain = AuthenticatedGroupAdder(chain)
    if anonymous_auth is not None:
        chain = UnionAuthenticator([chain, anonymous_auth], fail_on_error=True)
    if front_proxy is not None:
        chain.front_proxy_headers = front_proxy  # type: ignore[attr-defined]
    return chain


def authenticate_request(
    authenticator: IAuthenticator, request: IRequest
) -> "defer.Deferred[UserInfo]":
    """
    The authentication filter's decision for one request.

    On success the C{Authorization} header is removed (also when a non-bearer authenticator
    succeeded, as upstream), and so are the front-proxy headers (upstream
    C{ClearAuthenticationHeaders}): those of C{--requestheader-*} (the authenticator's
    C{front_proxy_headers}), else C{X-Remote-User}, C{X-Remote-Uid}, C{X-Remote-Group} and
    C{X-Remote-Extra-*}, so nothing behind the chain can take them for a proxy's word.
    On failure the reason is logged and 401 is raised; the client only ever sees
    C{Unauthorized}.

    @return: a Deferred of the user; it fails with a C{StatusError} 401 C{{"kind": "Status",
        ..., "message": "Unauthorized", "reason": "Unauthorized", "code": 401}} when the
        authenticator fails (with L{AuthenticationError} or anything else) or has no
        opinion.
    """

    def failed(failure: Failure) -> UserInfo:
        # upstream: any error of the authenticator is a 401; the reason is only logged
        _log.info("Unable to authenticate the request: {err}", err=failure.getErrorMessage())
        raise new_unauthorized("Unauthorized")

    def succeeded(user: UserInfo | None) -> UserInfo:
        if user is None:
            raise new_unauthorized("Unauthorized")
        headers = request.requestHeaders
        headers.removeHeader(b"authorization")
        names, prefixes = getattr(authenticator, "front_proxy_headers",
                                  STANDARD_FRONT_PROXY_HEADERS)
        for name in names:
            headers.removeHeader(name)
        if prefixes:
            for name, _ in list(headers.getAllRawHeaders()):
                if name.lower().startswith(prefixes):
                    headers.removeHeader(name)
        return user

    return defer.maybeDeferred(authenticator.authenticate, request).addCallbacks(
        succeeded, failed)


def is_anonymous(user: UserInfo) -> bool:
    """Upstream C{isAnonymousUser}: named C{system:anonymous} or in C{system:unauthenticated}."""
    return user.name == ANONYMOUS or ALL_UNAUTHENTICATED in user.groups


__all__ = [
    "authenticate_request",
    "is_anonymous",
    "new_request_authenticator",
]
