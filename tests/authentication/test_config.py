"""Tests for L{kubetwist.authentication.config}: the assembled chain and the 401 decision."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.anonymous import AnonymousAuthenticator
from kubetwist.authentication.bearertoken import BearerTokenAuthenticator
from kubetwist.authentication.config import (
    authenticate_request,
    is_anonymous,
    new_request_authenticator,
)
from kubetwist.authentication.group import AuthenticatedGroupAdder
from kubetwist.authentication.tokenfile import TokenFileAuthenticator
from kubetwist.authentication.union import UnionAuthenticator
from kubetwist.authentication.user import UserInfo
from kubetwist.authentication.websocket import ProtocolAuthenticator
from kubetwist.authentication.x509 import X509Authenticator
from kubetwist.runtime.errors import StatusError
from tests.authentication.fakes import FakeRequest, resolved
from tests.authentication.test_x509 import ROOT

UNAUTHORIZED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Unauthorized",
    "reason": "Unauthorized",
    "code": 401,
}


def _request(path: bytes = b"/api/v1/pods", token: bytes | None = None) -> FakeRequest:
    headers = {b"Authorization": b"Bearer " + token} if token is not None else None
    return FakeRequest(path, headers)


class ChainTests(SynchronousTestCase):
    """new_request_authenticator with a token file and anonymous access."""

    def setUp(self) -> None:
        tokens = TokenFileAuthenticator({"tok": UserInfo(name="alice", uid="1", groups=["dev"])})
        self.auth = new_request_authenticator(token_authenticators=[tokens])

    def test_token_user_gets_authenticated_group(self) -> None:
        """A valid token authenticates its user plus system:authenticated; the header goes."""
        request = _request(token=b"tok")
        user = resolved(authenticate_request(self.auth, request))
        self.assertEqual(
            user, UserInfo(name="alice", uid="1", groups=["dev", "system:authenticated"])
        )
        self.assertFalse(request.requestHeaders.hasHeader(b"authorization"))

    def test_no_credentials_api_path(self) -> None:
        """No credentials on an API path is 401 Unauthorized."""
        with self.assertRaises(StatusError) as ctx:
            resolved(authenticate_request(self.auth, _request()))
        self.assertEqual(ctx.exception.status, UNAUTHORIZED)

    def test_no_credentials_public_path(self) -> None:
        """No credentials on /healthz is system:anonymous, without system:authenticated."""
        user = resolved(authenticate_request(self.auth, _request(b"/healthz")))
        self.assertEqual(
            user, UserInfo(name="system:anonymous", groups=["system:unauthenticated"])
        )
        self.assertTrue(is_anonymous(user))

    def test_bad_token_public_path(self) -> None:
        """A bad token is 401 even where anonymous access is allowed."""
        with self.assertRaises(StatusError) as ctx:
            resolved(authenticate_request(self.auth, _request(b"/version", token=b"nope")))
        self.assertEqual(ctx.exception.code, 401)

    def test_anonymous_disabled(self) -> None:
        """With --anonymous-auth=false /healthz needs credentials too."""
        auth = new_request_authenticator(
            token_authenticators=[TokenFileAuthenticator({})], anonymous=False
        )
        self.assertRaises(StatusError, lambda: resolved(
            authenticate_request(auth, _request(b"/healthz"))))


class ShapeTests(SynchronousTestCase):
    """Which authenticators are assembled."""

    def test_nothing_configured(self) -> None:
        """Without authenticators and anonymous access there is no authentication at all."""
        self.assertIsNone(new_request_authenticator(anonymous=False))

    def test_only_anonymous(self) -> None:
        """With only anonymous access the chain is the anonymous authenticator."""
        self.assertIsInstance(new_request_authenticator(), AnonymousAuthenticator)

    def test_x509_in_chain(self) -> None:
        """With client CAs and tokens: fail-on-error union of (group adder over the union of
        x509, bearer and WebSocket-protocol tokens) and anonymous."""
        auth = new_request_authenticator(
            client_ca_certs=[ROOT], token_authenticators=[TokenFileAuthenticator({})]
        )
        self.assertIsInstance(auth, UnionAuthenticator)
        self.assertTrue(auth.fail_on_error)
        adder, anonymous = auth.authenticators
        self.assertIsInstance(adder, AuthenticatedGroupAdder)
        self.assertIsInstance(anonymous, AnonymousAuthenticator)
        inner = adder.authenticator
        self.assertFalse(inner.fail_on_error)
        self.assertEqual(
            [type(a) for a in inner.authenticators],
            [X509Authenticator, BearerTokenAuthenticator, ProtocolAuthenticator],
        )
        self.assertEqual(inner.authenticators[0].client_ca_certs, [ROOT])

    def test_is_anonymous(self) -> None:
        """Named system:anonymous or in system:unauthenticated counts as anonymous."""
        self.assertTrue(is_anonymous(UserInfo(name="x", groups=["system:unauthenticated"])))
        self.assertFalse(is_anonymous(UserInfo(name="x", groups=["system:authenticated"])))
