# -*- test-case-name: tests.authentication.test_union -*-
"""
Authenticator interfaces: upstream C{k8s.io/apiserver/pkg/authentication/authenticator}.

Upstream's C{AuthenticateRequest} returns C{(response, ok, err)}; here an authenticator returns
a C{Deferred} (a token lookup may need storage or a webhook, and must never block the reactor)
that fires with a L{UserInfo} (ok), C{None} (no opinion: no credentials of its kind) or fails
with L{AuthenticationError} (credentials of its kind are present but invalid).  Authenticators
that can answer at once return an already-fired Deferred, so the filter chain stays
synchronous for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from twisted.internet.defer import Deferred
from twisted.web.iweb import IRequest
from zope.interface import Interface

from kubetwist.authentication.user import UserInfo


class AuthenticationError(Exception):
    """
    Credentials were presented but did not authenticate; the request gets 401.

    The message is logged, never sent to the client (the client sees C{Unauthorized}).
    """

    @classmethod
    def aggregate(cls, errors: Iterable[Exception]) -> "AuthenticationError | None":
        """
        Upstream C{utilerrors.NewAggregate}: C{None} for no errors, the single message for one,
        C{[msg1, msg2]} (duplicates removed) for more.
        """
        messages: list[str] = []
        for e in errors:
            msg = str(e)
            if msg not in messages:
                messages.append(msg)
        if not messages:
            return None
        if len(messages) == 1:
            return cls(messages[0])
        return cls("[" + ", ".join(messages) + "]")


class IAuthenticator(Interface):
    """Authenticates a request (upstream C{authenticator.Request})."""

    def authenticate(request: IRequest) -> "Deferred[UserInfo | None]":
        """
        The user the request's credentials name.

        @return: a Deferred firing with the user, or C{None} when this authenticator finds no
            credentials of its kind; it fails with L{AuthenticationError} when credentials of
            its kind are present but invalid.
        """


class ITokenAuthenticator(Interface):
    """Authenticates a bearer token (upstream C{authenticator.Token})."""

    def authenticate_token(token: str) -> "Deferred[UserInfo | None]":
        """
        The user a token names.

        @return: a Deferred firing with the user, or C{None} for an unknown token; it fails
            with L{AuthenticationError} when the token is recognised but invalid (e.g.
            expired).
        """


#: The audiences the authentication in progress is for (upstream C{authenticator.WithAudiences}
#: on the request context); C{None}: the server's own (C{--api-audiences}).
_REQUESTED_AUDIENCES: ContextVar = ContextVar("kubetwist_requested_audiences", default=None)


@contextmanager
def with_audiences(audiences: Sequence[str]) -> Iterator[None]:
    """
    Authenticate for C{audiences} inside the block (upstream C{authenticator.WithAudiences}):
    audience-aware token authenticators (service-account JWTs) check a token's C{aud} against
    these instead of the implicit API audiences.  A context variable: coroutines started
    inside the block (C{ensureDeferred} copies the context) keep seeing it, and it cannot leak
    into another request.
    """
    token = _REQUESTED_AUDIENCES.set(list(audiences))
    try:
        yield
    finally:
        _REQUESTED_AUDIENCES.reset(token)


def audiences_from() -> list[str] | None:
    """Upstream C{authenticator.AudiencesFrom}: the audiences set by L{with_audiences}."""
    return _REQUESTED_AUDIENCES.get()
