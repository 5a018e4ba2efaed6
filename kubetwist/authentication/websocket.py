# -*- test-case-name: tests.authentication.test_websocket -*-
"""
Bearer tokens in the WebSocket subprotocols (browsers cannot set C{Authorization}): upstream
C{k8s.io/apiserver/pkg/authentication/request/websocket}.

A WebSocket upgrade request may carry the token as the subprotocol
C{base64url.bearer.authorization.k8s.io.<unpadded base64url of the token>} next to at least
one real subprotocol; on success that entry is removed from C{Sec-WebSocket-Protocol}.
"""

from __future__ import annotations

import base64
import binascii
from typing import Optional

from twisted.internet import defer
from twisted.web.iweb import IRequest
from zope.interface import implementer

from kubetwist.authentication.authenticator import (
    AuthenticationError,
    IAuthenticator,
    ITokenAuthenticator,
)
from kubetwist.authentication.user import UserInfo

BEARER_PROTOCOL_PREFIX = "base64url.bearer.authorization.k8s.io."
PROTOCOL_HEADER = b"sec-websocket-protocol"


def is_websocket_request(request: IRequest) -> bool:
    """Upstream C{wsstream.IsWebSocketRequest}: C{Connection: upgrade} (a token of it) and
    C{Upgrade: websocket}, case-insensitively."""
    headers = request.requestHeaders
    connection = b",".join(headers.getRawHeaders(b"connection", [])).lower()
    upgrade = (headers.getRawHeaders(b"upgrade", [b""])[0] or b"").strip().lower()
    return b"upgrade" in [t.strip() for t in connection.split(b",")] and upgrade == b"websocket"


@implementer(IAuthenticator)
class ProtocolAuthenticator:
    """See the module docstring."""

    def __init__(self, tokens: ITokenAuthenticator) -> None:
        self.tokens = tokens

    def authenticate(self, request: IRequest) -> "defer.Deferred[UserInfo | None]":
        """
        @return: a Deferred of the token's user, of C{None} without a token subprotocol; it
            fails with L{AuthenticationError} (C{multiple base64.bearer.authorization tokens
            specified}, C{invalid base64.bearer.authorization token encoding}, C{invalid
            base64.bearer.authorization token}, C{missing additional subprotocol}, C{invalid
            bearer token}).
        """
        if not is_websocket_request(request):
            return defer.succeed(None)
        token: Optional[str] = None
        others: list[str] = []
        for header in request.requestHeaders.getRawHeaders(PROTOCOL_HEADER, []):
            for protocol in header.decode("latin-1").split(","):
                protocol = protocol.strip()
                if not protocol.startswith(BEARER_PROTOCOL_PREFIX):
                    others.append(protocol)
                    continue
                if token is not None:
                    return defer.fail(AuthenticationError(
                        "multiple base64.bearer.authorization tokens specified"))
                encoded = protocol[len(BEARER_PROTOCOL_PREFIX):]
                try:
                    if "=" in encoded:
                        raise binascii.Error("padding")
                    raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
                except (binascii.Error, ValueError):
                    return defer.fail(AuthenticationError(
                        "invalid base64.bearer.authorization token encoding"))
                try:
                    token = raw.decode("utf-8")
                except UnicodeDecodeError:
                    return defer.fail(AuthenticationError(
                        "invalid base64.bearer.authorization token"))
        if token and not others:
            return defer.fail(AuthenticationError("missing additional subprotocol"))
        if not token:
            return defer.succeed(None)

        def found(user: Optional[UserInfo]) -> UserInfo:
            if user is None:
                raise AuthenticationError("invalid bearer token")
            request.requestHeaders.setRawHeaders(PROTOCOL_HEADER, [",".join(others).encode(
                "latin-1")])
            return user

        return defer.maybeDeferred(self.tokens.authenticate_token, token).addCallback(found)


__all__ = ["BEARER_PROTOCOL_PREFIX", "ProtocolAuthenticator", "is_websocket_request"]
