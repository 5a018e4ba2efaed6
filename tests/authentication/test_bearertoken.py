"""Tests for L{kubetwist.authentication.bearertoken}."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from kubetwist.authentication.authenticator import AuthenticationError, IAuthenticator
from kubetwist.authentication.bearertoken import (
    INVALID_TOKEN_WITH_SPACE_WARNING,
    BearerTokenAuthenticator,
    bearer_token,
)
from kubetwist.authentication.tokenfile import TokenFileAuthenticator
from kubetwist.authentication.user import UserInfo
from tests.authentication.fakes import FakeRequest, resolved

ALICE = UserInfo(name="alice", uid="1", groups=["dev"])


def _request(*values: bytes) -> FakeRequest:
    return FakeRequest(headers={b"Authorization": list(values)} if values else None)


class BearerTokenParsingTests(SynchronousTestCase):
    """bearer_token() parses the header as upstream."""

    def test_cases(self) -> None:
        """Scheme in any case, surrounding space trimmed, third part ignored, other schemes
        and empty tokens give no token."""
        cases = [
            (b"Bearer abc", ("abc", False)),
            (b"bearer abc", ("abc", False)),
            (b"BEARER abc", ("abc", False)),
            (b"  Bearer abc  ", ("abc", False)),
            (b"Bearer abc def", ("abc", False)),
            (b"Bearer  abc", (None, True)),
            (b"Bearer ", (None, False)),
            (b"Bearer", (None, False)),
            (b"Basic YWxpY2U6cHc=", (None, False)),
            (b"", (None, False)),
            (b"Bearer\tabc", (None, False)),
        ]
        for header, expected in cases:
            self.assertEqual(bearer_token(_request(header)), expected, header)

    def test_no_header(self) -> None:
        """Without the header there is no token."""
        self.assertEqual(bearer_token(_request()), (None, False))

    def test_first_header_used(self) -> None:
        """With several Authorization headers the first is used (Go's Header.Get)."""
        self.assertEqual(bearer_token(_request(b"Bearer one", b"Bearer two")), ("one", False))


class BearerTokenAuthenticatorTests(SynchronousTestCase):
    """BearerTokenAuthenticator over a token table."""

    def setUp(self) -> None:
        self.warnings: list[str] = []
        self.auth = BearerTokenAuthenticator(
            TokenFileAuthenticator({"good": ALICE}),
            warn=lambda request, text: self.warnings.append(text),
        )

    def test_provides(self) -> None:
        """It is an IAuthenticator."""
        self.assertTrue(verifyObject(IAuthenticator, self.auth))

    def test_valid_token(self) -> None:
        """A known token gives its user and the Authorization header is removed."""
        request = _request(b"Bearer good")
        self.assertEqual(resolved(self.auth.authenticate(request)), ALICE)
        self.assertFalse(request.requestHeaders.hasHeader(b"authorization"))

    def test_unknown_token(self) -> None:
        """An unknown token is 'invalid bearer token' and the header stays."""
        request = _request(b"Bearer bad")
        with self.assertRaises(AuthenticationError) as ctx:
            resolved(self.auth.authenticate(request))
        self.assertEqual(str(ctx.exception), "invalid bearer token")
        self.assertTrue(request.requestHeaders.hasHeader(b"authorization"))

    def test_no_token(self) -> None:
        """No bearer header is no opinion."""
        self.assertIsNone(resolved(self.auth.authenticate(_request(b"Basic x"))))
        self.assertEqual(self.warnings, [])

    def test_extra_space_warns(self) -> None:
        """'Bearer  token' is ignored with upstream's warning."""
        self.assertIsNone(resolved(self.auth.authenticate(_request(b"Bearer  good"))))
        self.assertEqual(self.warnings, [INVALID_TOKEN_WITH_SPACE_WARNING])
