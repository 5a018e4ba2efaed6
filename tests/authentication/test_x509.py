"""
Tests for L{kubetwist.authentication.x509}: client-certificate users, chain verification, and
reading the peer certificate from HTTP/1.1 and HTTP/2 requests over real TLS.
"""

from __future__ import annotations

import datetime
import hashlib

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from kubetwist.authentication.authenticator import AuthenticationError, IAuthenticator
from kubetwist.authentication.x509 import (
    X509Authenticator,
    certificate_identifier,
    peer_certificates,
    user_from_certificate,
    verify_client_chain,
)
from tests.authentication.fakes import FakeRequest, resolved
from tests.authentication.tlsserver import TLSServerTestCase

NOW = datetime.datetime(2025, 6, 1, tzinfo=datetime.timezone.utc)
DAY = datetime.timedelta(days=1)


def _name(*pairs: tuple) -> x509.Name:
    return x509.Name([x509.NameAttribute(oid, value) for oid, value in pairs])


def _cert(
    subject: x509.Name,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None = None,
    ca: bool = False,
    eku: list | None = None,
    not_before: datetime.datetime = NOW - DAY,
    not_after: datetime.datetime = NOW + DAY,
    serial: int = 1000,
    ski: bool = True,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    issuer_name, issuer_key = issuer if issuer else (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ski:
        builder = builder.add_extension(
            x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
        )
    if eku is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage(eku), critical=False)
    return builder.sign(issuer_key, hashes.SHA256()), key


ROOT, ROOT_KEY = _cert(_name((NameOID.COMMON_NAME, "root")), ca=True, not_after=NOW + 100 * DAY)
ROOT_ISSUER = (ROOT.subject, ROOT_KEY)
INTER, INTER_KEY = _cert(_name((NameOID.COMMON_NAME, "inter")), ROOT_ISSUER, ca=True)
CLIENT_AUTH = [ExtendedKeyUsageOID.CLIENT_AUTH]
JANE, _ = _cert(
    _name(
        (NameOID.ORGANIZATION_NAME, "dev"),
        (NameOID.ORGANIZATION_NAME, "ops"),
        (NameOID.COMMON_NAME, "jane"),
    ),
    ROOT_ISSUER,
    eku=CLIENT_AUTH,
)


class UserFromCertificateTests(SynchronousTestCase):
    """CommonNameUserConversion."""

    def test_user(self) -> None:
        """CN is the name, each O a group in order, the extra carries the DER SHA-256."""
        digest = hashlib.sha256(JANE.public_bytes(Encoding.DER)).hexdigest()
        user = user_from_certificate(JANE)
        self.assertEqual(user.name, "jane")
        self.assertEqual(user.uid, "")
        self.assertEqual(user.groups, ["dev", "ops"])
        self.assertEqual(
            user.extra, {"authentication.kubernetes.io/credential-id": [f"X509SHA256={digest}"]}
        )

    def test_no_common_name(self) -> None:
        """A subject without CN names no user."""
        cert, _ = _cert(_name((NameOID.ORGANIZATION_NAME, "dev")), ROOT_ISSUER)
        self.assertIsNone(user_from_certificate(cert))

    def test_last_common_name(self) -> None:
        """With two CNs the last one is the name (Go's pkix.Name)."""
        cert, _ = _cert(
            _name((NameOID.COMMON_NAME, "first"), (NameOID.COMMON_NAME, "second")), ROOT_ISSUER
        )
        self.assertEqual(user_from_certificate(cert).name, "second")


class CertificateIdentifierTests(SynchronousTestCase):
    """certificateIdentifier."""

    def test_format(self) -> None:
        """Decimal serial, colon-separated upper-case hex key identifiers."""
        ski = ROOT.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
        cert, _ = _cert(_name((NameOID.COMMON_NAME, "x")), ROOT_ISSUER, serial=4660, ski=False)
        self.assertEqual(certificate_identifier(cert), "SN=4660, SKID=, AKID=")
        self.assertEqual(
            certificate_identifier(ROOT),
            "SN=1000, SKID=" + ":".join(f"{b:02X}" for b in ski) + ", AKID=",
        )


class VerifyChainTests(SynchronousTestCase):
    """verify_client_chain follows Go's Verify with ClientAuth usage."""

    def test_direct(self) -> None:
        """A leaf signed by a root verifies to [leaf, root]."""
        self.assertEqual(verify_client_chain([JANE], [ROOT], NOW), [JANE, ROOT])

    def test_intermediate(self) -> None:
        """A presented intermediate links the leaf to the root."""
        leaf, _ = _cert(_name((NameOID.COMMON_NAME, "l")), (INTER.subject, INTER_KEY))
        self.assertEqual(verify_client_chain([leaf, INTER], [ROOT], NOW), [leaf, INTER, ROOT])

    def test_missing_intermediate(self) -> None:
        """Without the intermediate the authority is unknown."""
        leaf, _ = _cert(_name((NameOID.COMMON_NAME, "l")), (INTER.subject, INTER_KEY))
        with self.assertRaises(AuthenticationError) as ctx:
            verify_client_chain([leaf], [ROOT], NOW)
        self.assertEqual(str(ctx.exception), "x509: certificate signed by unknown authority")

    def test_non_ca_issuer(self) -> None:
        """A certificate that is not a CA cannot issue."""
        leaf, _ = _cert(_name((NameOID.COMMON_NAME, "l")), (JANE.subject, ROOT_KEY))
        self.assertRaises(AuthenticationError, verify_client_chain, [leaf, JANE], [ROOT], NOW)

    def test_wrong_signature(self) -> None:
        """A certificate naming the root as issuer but signed by another key is unknown."""
        other = ec.generate_private_key(ec.SECP256R1())
        forged, _ = _cert(_name((NameOID.COMMON_NAME, "f")), (ROOT.subject, other))
        with self.assertRaises(AuthenticationError) as ctx:
            verify_client_chain([forged], [ROOT], NOW)
        self.assertEqual(str(ctx.exception), "x509: certificate signed by unknown authority")

    def test_expired(self) -> None:
        """An expired leaf is reported with Go's RFC 3339 times."""
        leaf, _ = _cert(
            _name((NameOID.COMMON_NAME, "old")), ROOT_ISSUER,
            not_before=NOW - 10 * DAY, not_after=NOW - 2 * DAY,
        )
        with self.assertRaises(AuthenticationError) as ctx:
            verify_client_chain([leaf], [ROOT], NOW)
        self.assertEqual(
            str(ctx.exception),
            "x509: certificate has expired or is not yet valid: current time "
            "2025-06-01T00:00:00Z is after 2025-05-30T00:00:00Z",
        )

    def test_not_yet_valid(self) -> None:
        """A leaf from the future is reported as 'is before'."""
        leaf, _ = _cert(
            _name((NameOID.COMMON_NAME, "new")), ROOT_ISSUER,
            not_before=NOW + DAY, not_after=NOW + 2 * DAY,
        )
        with self.assertRaises(AuthenticationError) as ctx:
            verify_client_chain([leaf], [ROOT], NOW)
        self.assertEqual(
            str(ctx.exception),
            "x509: certificate has expired or is not yet valid: current time "
            "2025-06-01T00:00:00Z is before 2025-06-02T00:00:00Z",
        )

    def test_server_only_usage(self) -> None:
        """A serverAuth-only certificate is not a client certificate."""
        leaf, _ = _cert(
            _name((NameOID.COMMON_NAME, "srv")), ROOT_ISSUER,
            eku=[ExtendedKeyUsageOID.SERVER_AUTH],
        )
        with self.assertRaises(AuthenticationError) as ctx:
            verify_client_chain([leaf], [ROOT], NOW)
        self.assertEqual(
            str(ctx.exception), "x509: certificate specifies an incompatible key usage"
        )

    def test_any_usage(self) -> None:
        """No EKU, or anyExtendedKeyUsage, allows client auth."""
        leaf, _ = _cert(
            _name((NameOID.COMMON_NAME, "any")), ROOT_ISSUER,
            eku=[ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE],
        )
        self.assertEqual(verify_client_chain([leaf], [ROOT], NOW)[0], leaf)


class X509AuthenticatorTests(SynchronousTestCase):
    """X509Authenticator with an injected chain reader."""

    def _auth(self, chain: list, roots: list | None = None) -> X509Authenticator:
        if roots is None:
            roots = [ROOT]
        return X509Authenticator(roots, now=lambda: NOW, peer_chain=lambda request: chain)

    def test_provides(self) -> None:
        """It is an IAuthenticator."""
        self.assertTrue(verifyObject(IAuthenticator, self._auth([])))

    def test_no_certificate(self) -> None:
        """No presented certificate is no opinion."""
        self.assertIsNone(resolved(self._auth([]).authenticate(FakeRequest())))

    def test_user(self) -> None:
        """A verifying certificate gives its user."""
        self.assertEqual(resolved(self._auth([JANE]).authenticate(FakeRequest())).name, "jane")

    def test_failure_message(self) -> None:
        """A failing chain is an error naming the certificate, as upstream."""
        with self.assertRaises(AuthenticationError) as ctx:
            resolved(self._auth([JANE], roots=[INTER]).authenticate(FakeRequest()))
        self.assertEqual(
            str(ctx.exception),
            f"verifying certificate {certificate_identifier(JANE)} failed: "
            "x509: certificate signed by unknown authority",
        )

    def test_plain_request(self) -> None:
        """A request without a TLS transport has no peer certificates."""
        self.assertEqual(peer_certificates(FakeRequest()), [])


class PeerCertificateOverTLSTests(TLSServerTestCase):
    """peer_certificates and X509Authenticator on real HTTP/1.1 and HTTP/2 requests."""

    def _admin(self) -> list[str]:
        return ["--cert", self.certs.admin_cert_file, "--key", self.certs.admin_key_file]

    def _assert_admin(self, body: dict, proto: str) -> None:
        self.assertEqual(body["proto"], proto)
        self.assertEqual(body["chain"][0], "CN=kubernetes-admin,O=system:masters")
        self.assertEqual(body["error"], None)
        self.assertEqual(body["user"]["username"], "kubernetes-admin")
        self.assertEqual(body["user"]["groups"], ["system:masters"])
        digest = hashlib.sha256(self.certs.admin_cert.public_bytes(Encoding.DER)).hexdigest()
        self.assertEqual(
            body["user"]["extra"],
            {"authentication.kubernetes.io/credential-id": [f"X509SHA256={digest}"]},
        )

    async def test_http11(self) -> None:
        """Over HTTP/1.1 the admin certificate authenticates kubernetes-admin."""
        code, body, version, err = await self.curl("--http1.1", *self._admin())
        self.assertEqual((code, version), (0, "1.1"), err)
        self._assert_admin(body, "HTTP/1.1")

    async def test_http2(self) -> None:
        """Over HTTP/2 (an H2Stream channel) the same certificate is found and authenticates."""
        code, body, version, err = await self.curl("--http2", *self._admin())
        self.assertEqual((code, version), (0, "2"), err)
        self._assert_admin(body, "HTTP/2")

    async def test_no_certificate(self) -> None:
        """A TLS client without a certificate has no chain and no x509 user."""
        code, body, _, err = await self.curl("--http1.1")
        self.assertEqual(code, 0, err)
        self.assertEqual((body["chain"], body["user"], body["error"]), ([], None, None))


class _TLSTransport:
    """A transport that claims to be TLS (for the per-connection cache)."""


from twisted.internet.interfaces import ISSLTransport  # noqa: E402
from zope.interface import classImplements  # noqa: E402

classImplements(_TLSTransport, ISSLTransport)


class ConnectionCacheTests(SynchronousTestCase):
    """The verified user is cached on the TLS connection; expiry is still enforced."""

    def test_verified_once_per_connection(self) -> None:
        """Two requests on one connection read and verify the chain once."""
        reads = []
        now = [NOW]
        auth = X509Authenticator([ROOT], now=lambda: now[0],
                                 peer_chain=lambda request: reads.append(1) or [JANE])
        transport = _TLSTransport()
        for _ in range(2):
            request = FakeRequest()
            request.transport = transport
            self.assertEqual(resolved(auth.authenticate(request)).name, "jane")
        self.assertEqual(len(reads), 1)

    def test_expired_leaf_reverified(self) -> None:
        """After the leaf's notAfter the chain is verified again (and fails)."""
        now = [NOW]
        auth = X509Authenticator([ROOT], now=lambda: now[0], peer_chain=lambda request: [JANE])
        request = FakeRequest()
        request.transport = _TLSTransport()
        self.assertEqual(resolved(auth.authenticate(request)).name, "jane")
        now[0] = JANE.not_valid_after_utc + DAY
        with self.assertRaises(AuthenticationError):
            resolved(auth.authenticate(request))
