"""Tests for L{kubetwist.authentication.websocket}: bearer tokens as WebSocket subprotocols."""

from __future__ import annotations

import base64

from twisted.internet import defer
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.authenticator import AuthenticationError
from kubetwist.authentication.user import UserInfo
from kubetwist.authentication.websocket import ProtocolAuthenticator
from tests.authentication.fakes import FakeRequest, resolved

UPGRADE = {b"Connection": b"Upgrade", b"Upgrade": b"websocket"}


def proto(token: bytes) -> bytes:
    return b"base64url.bearer.authorization.k8s.io." + base64.urlsafe_b64encode(token).rstrip(
        b"=")


class Tokens:
    def authenticate_token(self, token):
        return defer.succeed(UserInfo("jane") if token == "good" else None)


class ProtocolTests(SynchronousTestCase):
    def request(self, protocols, upgrade=True):
        headers = dict(UPGRADE) if upgrade else {}
        headers[b"Sec-WebSocket-Protocol"] = protocols
        return FakeRequest(headers=headers)

    def test_token(self):
        """The token subprotocol authenticates and is removed from the header."""
        r = self.request([b"v5.channel.k8s.io, " + proto(b"good"), b"v4.channel.k8s.io"])
        self.assertEqual(resolved(ProtocolAuthenticator(Tokens()).authenticate(r)).name, "jane")
        self.assertEqual(r.requestHeaders.getRawHeaders(b"sec-websocket-protocol"),
                         [b"v5.channel.k8s.io,v4.channel.k8s.io"])

    def test_table(self):
        """Table: upstream's refusals."""
        a = ProtocolAuthenticator(Tokens())
        self.assertIsNone(resolved(a.authenticate(self.request([proto(b"good")],
                                                               upgrade=False))))
        self.assertIsNone(resolved(a.authenticate(self.request([b"v5.channel.k8s.io"]))))
        cases = [
            ([proto(b"good")], "missing additional subprotocol"),
            ([b"x, " + proto(b"good") + b", " + proto(b"good")],
             "multiple base64.bearer.authorization tokens specified"),
            ([b"x, base64url.bearer.authorization.k8s.io.Z29vZA=="],
             "invalid base64.bearer.authorization token encoding"),
            ([b"x, " + proto(b"\xff\xfe")], "invalid base64.bearer.authorization token"),
            ([b"x, " + proto(b"bad")], "invalid bearer token"),
        ]
        for protocols, message in cases:
            with self.assertRaises(AuthenticationError) as e:
                resolved(a.authenticate(self.request(protocols)))
            self.assertEqual(str(e.exception), message)
