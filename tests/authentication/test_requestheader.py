"""Tests for L{kubetwist.authentication.requestheader}: the authenticating front proxy."""

from __future__ import annotations

from cryptography.x509.oid import NameOID
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.authenticator import AuthenticationError
from kubetwist.authentication.config import new_request_authenticator
from kubetwist.authentication.requestheader import (
    RequestHeaderAuthenticator,
    RequestHeaderConfig,
)
from tests.authentication.fakes import FakeRequest, resolved
from tests.authentication.test_x509 import CLIENT_AUTH, JANE, NOW, ROOT, _cert, _name

PROXY_CA, PROXY_CA_KEY = _cert(_name((NameOID.COMMON_NAME, "proxy-ca")), ca=True)
PROXY, _ = _cert(_name((NameOID.COMMON_NAME, "front-proxy-client")),
                 (PROXY_CA.subject, PROXY_CA_KEY), eku=CLIENT_AUTH)
OTHER_PROXY, _ = _cert(_name((NameOID.COMMON_NAME, "someone")),
                       (PROXY_CA.subject, PROXY_CA_KEY), eku=CLIENT_AUTH)
HEADERS = {b"X-Remote-User": b"bob", b"X-Remote-Group": [b"g1", b"g2"],
           b"X-Remote-Extra-Scopes": [b"a", b"b"], b"X-Remote-Extra-Foo%2fbar": b"x",
           b"X-Remote-Uid": b"u1"}


def config(**kw) -> RequestHeaderConfig:
    base = dict(client_cas=[PROXY_CA], username_headers=["X-Remote-User"],
                uid_headers=["X-Remote-Uid"], group_headers=["X-Remote-Group"],
                extra_header_prefixes=["X-Remote-Extra-"],
                allowed_names=["front-proxy-client"])
    base.update(kw)
    return RequestHeaderConfig(**base)


class RequestHeaderTests(SynchronousTestCase):
    def auth(self, chain, **kw) -> RequestHeaderAuthenticator:
        return RequestHeaderAuthenticator(config(**kw), now=lambda: NOW,
                                          peer_chain=lambda request: chain)

    def test_user_from_headers(self):
        """The proxy's certificate lets the headers name the user; they are then removed."""
        request = FakeRequest(headers=HEADERS)
        user = resolved(self.auth([PROXY]).authenticate(request))
        self.assertEqual((user.name, user.uid, user.groups, user.extra), (
            "bob", "u1", ["g1", "g2"], {"scopes": ["a", "b"], "foo/bar": ["x"]}))
        self.assertEqual([k for k, _ in request.requestHeaders.getAllRawHeaders()
                          if k.lower().startswith(b"x-remote")], [])

    def test_refusals(self):
        """Table: no certificate or no user header is no opinion; another CA or a name not
        allowed is an error."""
        self.assertIsNone(resolved(self.auth([]).authenticate(FakeRequest(headers=HEADERS))))
        self.assertIsNone(resolved(self.auth([PROXY]).authenticate(FakeRequest())))
        with self.assertRaises(AuthenticationError) as e:
            resolved(self.auth([JANE]).authenticate(FakeRequest(headers=HEADERS)))
        self.assertIn("x509: certificate signed by unknown authority", str(e.exception))
        with self.assertRaises(AuthenticationError) as e:
            resolved(self.auth([OTHER_PROXY]).authenticate(FakeRequest(headers=HEADERS)))
        self.assertEqual(str(e.exception),
                         "x509: subject with cn=someone is not in the allowed list")
        # no allowed names: any certificate of the proxy CA
        user = resolved(self.auth([OTHER_PROXY], allowed_names=[]).authenticate(
            FakeRequest(headers=HEADERS)))
        self.assertEqual(user.name, "bob")

    def test_in_the_chain(self):
        """In the request union the proxy comes first; a regular client certificate still
        authenticates by x509 (the proxy's error is only collected)."""
        from kubetwist.authentication.union import UnionAuthenticator
        from kubetwist.authentication.x509 import X509Authenticator

        x509_auth = X509Authenticator([ROOT], now=lambda: NOW, peer_chain=lambda r: [JANE])
        union = UnionAuthenticator([self.auth([JANE]), x509_auth])
        user = resolved(union.authenticate(FakeRequest(headers=HEADERS)))
        self.assertEqual((user.name, user.groups), ("jane", ["dev", "ops"]))
        union = UnionAuthenticator([self.auth([PROXY]), x509_auth])
        self.assertEqual(resolved(union.authenticate(FakeRequest(headers=HEADERS))).name, "bob")
        chain = new_request_authenticator(request_header=self.auth([PROXY]), anonymous=False)
        self.assertEqual(resolved(chain.authenticate(FakeRequest(headers=HEADERS))).groups,
                         ["g1", "g2", "system:authenticated"])


class ClearHeadersTests(SynchronousTestCase):
    """After any successful authentication the front-proxy headers are gone (upstream
    ClearAuthenticationHeaders), so no one behind the chain trusts a client's X-Remote-*."""

    def test_standard_headers(self):
        from kubetwist.authentication.config import authenticate_request
        from kubetwist.authentication.x509 import X509Authenticator

        x509_auth = X509Authenticator([ROOT], now=lambda: NOW, peer_chain=lambda r: [JANE])
        chain = new_request_authenticator(anonymous=False)
        self.assertIsNone(chain)
        request = FakeRequest(headers=HEADERS)
        self.assertEqual(resolved(authenticate_request(x509_auth, request)).name, "jane")
        self.assertEqual([k for k, _ in request.requestHeaders.getAllRawHeaders()
                          if k.lower().startswith(b"x-remote")], [])

    def test_configured_headers(self):
        from kubetwist.authentication.config import authenticate_request

        auth = RequestHeaderAuthenticator(config(username_headers=["X-Proxy-User"],
                                                 extra_header_prefixes=["X-Proxy-Extra-"]),
                                          now=lambda: NOW, peer_chain=lambda request: [])
        chain = new_request_authenticator(request_header=auth, anonymous=True,
                                          anonymous_paths=None)
        request = FakeRequest(headers={b"X-Proxy-User": b"x", b"X-Proxy-Extra-A": b"1",
                                       b"X-Remote-User": b"kept"})
        self.assertEqual(resolved(authenticate_request(chain, request)).name,
                         "system:anonymous")
        self.assertEqual(sorted(k for k, _ in request.requestHeaders.getAllRawHeaders()),
                         [b"X-Remote-User"])
