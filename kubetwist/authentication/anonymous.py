# -*- test-case-name: tests.authentication.test_anonymous -*-
"""
Anonymous requests: upstream C{k8s.io/apiserver/pkg/authentication/request/anonymous}.

kube-apiserver (C{--anonymous-auth=true}) names every request without credentials
C{system:anonymous}; RBAC's C{system:public-info-viewer} role then lets it read only
C{/healthz}, C{/livez}, C{/readyz} and C{/version}.  The running server does exactly that
(every path, or the C{anonymous.conditions} paths of C{--authentication-config}; none with the
C{AlwaysAllow} authorizer: L{kubetwist.authentication.options}).  L{ANONYMOUS_ALLOWED_PATHS}
is the default of L{new_request_authenticator
<kubetwist.authentication.config.new_request_authenticator>} for callers that give no paths
(the unit tests' chain): anonymous only on those paths, every other unauthenticated request
401 C{Unauthorized}.
"""

from __future__ import annotations

from typing import Iterable
from urllib.parse import unquote

from twisted.internet import defer
from twisted.web.iweb import IRequest
from zope.interface import implementer

from kubetwist.authentication.authenticator import IAuthenticator
from kubetwist.authentication.user import ALL_UNAUTHENTICATED, ANONYMOUS, UserInfo

#: Paths readable without credentials: the non-resource URLs of C{system:public-info-viewer}.
ANONYMOUS_ALLOWED_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version", "/version/"})


def anonymous_user() -> UserInfo:
    """C{system:anonymous} in group C{system:unauthenticated} (a new object each call)."""
    return UserInfo(name=ANONYMOUS, groups=[ALL_UNAUTHENTICATED])


def is_anonymous_allowed_path(path: str) -> bool:
    """
    Whether an unauthenticated request for C{path} (the URL path, no query) is let in.

    Exact match, as upstream's anonymous conditions: C{/readyz} yes, C{/readyz/etcd} no.
    """
    return path in ANONYMOUS_ALLOWED_PATHS


def request_path(request: IRequest) -> str:
    """The request's URL path, percent-decoded (Go's C{req.URL.Path}), without the query."""
    raw = request.path.decode("utf-8", "surrogateescape")
    return unquote(raw, errors="surrogateescape")


@implementer(IAuthenticator)
class AnonymousAuthenticator:
    """
    Authenticates any request as L{anonymous_user} when its path is allowed (upstream
    C{anonymous.Authenticator}; C{None} or an empty set of paths allows every path, as upstream
    with no conditions).
    """

    def __init__(self, allowed_paths: Iterable[str] | None = ANONYMOUS_ALLOWED_PATHS) -> None:
        self.allowed_paths = frozenset(allowed_paths or ())

    def authenticate(self, request: IRequest) -> "defer.Deferred[UserInfo | None]":
        """
        @return: a (fired) Deferred of the anonymous user, or of C{None} when the path is not
            allowed.
        """
        if self.allowed_paths and request_path(request) not in self.allowed_paths:
            return defer.succeed(None)
        return defer.succeed(anonymous_user())
