# -*- test-case-name: tests.authentication.test_bearertoken -*-
"""
The C{Authorization: Bearer} header: upstream
C{k8s.io/apiserver/pkg/authentication/request/bearertoken}.
"""

from __future__ import annotations

from typing import Callable

from twisted.internet import defer
from twisted.web.iweb import IRequest
from zope.interface import implementer

from kubetwist.authentication.authenticator import (
    AuthenticationError,
    IAuthenticator,
    ITokenAuthenticator,
)
from kubetwist.authentication.user import UserInfo

#: Upstream's warning for an C{Authorization} header with two spaces between C{Bearer} and the
#: token.
INVALID_TOKEN_WITH_SPACE_WARNING = (
    "the provided Authorization header contains extra space before the bearer token, "
    "and is ignored"
)


def bearer_token(request: IRequest) -> tuple[str | None, bool]:
    """
    The bearer token of a request, parsed as upstream.

    The first C{Authorization} header is stripped of surrounding white space and split on single
    spaces into at most three parts; the scheme must be C{bearer} in any case; the token is the
    second part (anything after a further space is ignored).

    @return: C{(token, extra_space)}: C{token} is C{None} when there is no bearer token;
        C{extra_space} is true when the header was C{Bearer} followed by two spaces (upstream
        warns about it).
    """
    values = request.requestHeaders.getRawHeaders(b"authorization")
    if not values:
        return None, False
    header = values[0].decode("utf-8", "surrogateescape").strip()
    if not header:
        return None, False
    parts = header.split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None, False
    if parts[1] == "":
        return None, len(parts) == 3
    return parts[1], False


@implementer(IAuthenticator)
class BearerTokenAuthenticator:
    """
    Authenticates the request's bearer token with a token authenticator.

    On success the C{Authorization} header is removed, so nothing behind the filter can reuse
    the credential (upstream does the same).
    """

    def __init__(
        self,
        token_authenticator: ITokenAuthenticator,
        warn: Callable[[IRequest, str], None] | None = None,
    ) -> None:
        """
        @param token_authenticator: resolves tokens to users.
        @param warn: called with the request and a warning text (the lead's C{Warning:} header
            machinery), for the two-spaces case.
        """
        self._tokens = token_authenticator
        self._warn = warn

    def authenticate(self, request: IRequest) -> "defer.Deferred[UserInfo | None]":
        """
        @return: a Deferred of the token's user, of C{None} without a bearer token; it fails
            with L{AuthenticationError} C{invalid bearer token} when the token is unknown, or
            with the token authenticator's own error.
        """
        token, extra_space = bearer_token(request)
        if token is None:
            if extra_space and self._warn is not None:
                self._warn(request, INVALID_TOKEN_WITH_SPACE_WARNING)
            return defer.succeed(None)

        def found(user: UserInfo | None) -> UserInfo:
            if user is None:
                raise AuthenticationError("invalid bearer token")
            request.requestHeaders.removeHeader(b"authorization")
            return user

        return self._tokens.authenticate_token(token).addCallback(found)
