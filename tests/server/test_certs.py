"""
Tests for L{kubetwist.server.certs}: generated CA, serving and admin certificates.
"""

from __future__ import annotations

import datetime
import os
import socket
import stat

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.server.certs import (
    ensure_serving_certs,
    first_service_ip,
    write_file_atomically,
)

NOW = datetime.datetime(2025, 3, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)
ALL_FILES = ["ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "admin.crt", "admin.key"]


def _sans(cert: x509.Certificate) -> tuple[list[str], list[str]]:
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return (
        san.get_values_for_type(x509.DNSName),
        [str(a) for a in san.get_values_for_type(x509.IPAddress)],
    )


class GenerateTests(SynchronousTestCase):
    """A fresh directory gets a CA, a serving certificate and an admin certificate."""

    def setUp(self) -> None:
        self.dir = os.path.join(self.mktemp(), "pki")
        self.certs = ensure_serving_certs(
            self.dir, ["api.example.com"], ["0.0.0.0", "192.0.2.10"],
            service_cidr="10.96.0.0/12", now=lambda: NOW,
        )

    def test_files_and_modes(self) -> None:
        """All six files are written; keys are 0600, certificates 0644, the directory 0700."""
        self.assertEqual(self.certs.generated, ALL_FILES)
        modes = {
            name: stat.S_IMODE(os.stat(os.path.join(self.dir, name)).st_mode)
            for name in ALL_FILES
        }
        self.assertEqual(
            modes,
            {
                "ca.crt": 0o644, "ca.key": 0o600, "apiserver.crt": 0o644,
                "apiserver.key": 0o600, "admin.crt": 0o644, "admin.key": 0o600,
            },
        )
        self.assertEqual(stat.S_IMODE(os.stat(self.dir).st_mode), 0o700)
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(ALL_FILES))

    def test_paths(self) -> None:
        """The dataclass names each file inside the directory."""
        c = self.certs
        self.assertEqual(
            [c.ca_cert_file, c.ca_key_file, c.cert_file, c.key_file, c.admin_cert_file,
             c.admin_key_file],
            [os.path.join(self.dir, n) for n in ALL_FILES],
        )

    def test_ca(self) -> None:
        """The CA is self-signed, CN kubetwist-ca, a CA, valid ten years from an hour ago."""
        ca = self.certs.ca_cert
        self.assertEqual(ca.subject.rfc4514_string(), "CN=kubetwist-ca")
        self.assertEqual(ca.issuer, ca.subject)
        ca.verify_directly_issued_by(ca)
        self.assertTrue(ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
        self.assertEqual(ca.not_valid_before_utc, NOW - datetime.timedelta(hours=1))
        self.assertEqual(ca.not_valid_after_utc, NOW + datetime.timedelta(days=3650))
        self.assertIsInstance(self.certs.ca_key, ec.EllipticCurvePrivateKey)
        self.assertEqual(self.certs.ca_key.curve.name, "secp256r1")

    def test_serving(self) -> None:
        """The serving certificate is signed by the CA, for server auth, valid one year, with
        the default names, the host name, the given names and addresses."""
        cert = self.certs.serving_cert
        cert.verify_directly_issued_by(self.certs.ca_cert)
        self.assertEqual(cert.subject.rfc4514_string(), "CN=kube-apiserver")
        eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        self.assertEqual(list(eku), [ExtendedKeyUsageOID.SERVER_AUTH])
        self.assertFalse(cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
        self.assertEqual(cert.not_valid_after_utc, NOW + datetime.timedelta(days=365))
        dns, ips = _sans(cert)
        expected_dns = ["localhost", socket.gethostname(), "kubernetes", "kubernetes.default",
                        "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
                        "api.example.com"]
        # The host name may itself be "localhost"; it is then listed once.
        self.assertEqual(dns, list(dict.fromkeys(expected_dns)))
        self.assertEqual(ips, ["127.0.0.1", "::1", "192.0.2.10", "10.96.0.1"])

    def test_admin(self) -> None:
        """The admin certificate is CN kubernetes-admin, O system:masters, for client auth,
        signed by the CA."""
        cert = self.certs.admin_cert
        cert.verify_directly_issued_by(self.certs.ca_cert)
        self.assertEqual(
            cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value, "kubernetes-admin"
        )
        self.assertEqual(
            [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)],
            ["system:masters"],
        )
        eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        self.assertEqual(list(eku), [ExtendedKeyUsageOID.CLIENT_AUTH])

    def test_keys_match(self) -> None:
        """Each returned key is the private half of its certificate."""
        for cert, key in [
            (self.certs.ca_cert, self.certs.ca_key),
            (self.certs.serving_cert, self.certs.serving_key),
            (self.certs.admin_cert, self.certs.admin_key),
        ]:
            self.assertEqual(cert.public_key(), key.public_key())

    def test_client_ca_files(self) -> None:
        """The client CA bundle is the generated CA first, then extra files without repeats."""
        self.assertEqual(
            self.certs.client_ca_files(["/x/ca.pem", self.certs.ca_cert_file, "/x/ca.pem"]),
            [self.certs.ca_cert_file, "/x/ca.pem"],
        )


class ReuseTests(SynchronousTestCase):
    """Existing valid files survive a restart; broken ones are replaced."""

    def setUp(self) -> None:
        self.dir = self.mktemp()
        self.first = ensure_serving_certs(self.dir, [], [], now=lambda: NOW)

    def _again(self, hostnames=(), ips=(), now=NOW):
        return ensure_serving_certs(self.dir, list(hostnames), list(ips), now=lambda: now)

    def test_reused(self) -> None:
        """A second call writes nothing and loads the same certificates."""
        again = self._again()
        self.assertEqual(again.generated, [])
        self.assertEqual(again.ca_cert, self.first.ca_cert)
        self.assertEqual(again.serving_cert, self.first.serving_cert)
        self.assertEqual(again.admin_cert, self.first.admin_cert)

    def test_new_name_reissues_serving(self) -> None:
        """A name missing from the serving certificate reissues it from the same CA."""
        again = self._again(hostnames=["new.example"], ips=["198.51.100.7"])
        self.assertEqual(again.generated, ["apiserver.crt", "apiserver.key"])
        self.assertEqual(again.ca_cert, self.first.ca_cert)
        dns, ips = _sans(again.serving_cert)
        self.assertIn("new.example", dns)
        self.assertIn("198.51.100.7", ips)
        self.assertEqual(self._again(hostnames=["new.example"], ips=["198.51.100.7"]).generated, [])

    def test_expired_leaves_reissued(self) -> None:
        """Past a year the leaves are expired and reissued; the ten-year CA stays."""
        later = NOW + datetime.timedelta(days=400)
        again = self._again(now=later)
        self.assertEqual(
            again.generated, ["apiserver.crt", "apiserver.key", "admin.crt", "admin.key"]
        )
        self.assertEqual(again.ca_cert, self.first.ca_cert)
        self.assertEqual(
            again.serving_cert.not_valid_after_utc, later + datetime.timedelta(days=365)
        )

    def test_leaf_never_outlives_ca(self) -> None:
        """A leaf issued near the CA's end expires with the CA."""
        late = NOW + datetime.timedelta(days=3649)
        again = self._again(now=late)
        self.assertEqual(again.serving_cert.not_valid_after_utc, again.ca_cert.not_valid_after_utc)

    def test_missing_ca_regenerates_all(self) -> None:
        """Without the CA key everything is regenerated (leaves must chain to the new CA)."""
        os.unlink(self.first.ca_key_file)
        again = self._again()
        self.assertEqual(again.generated, ALL_FILES)
        self.assertNotEqual(again.ca_cert, self.first.ca_cert)
        again.serving_cert.verify_directly_issued_by(again.ca_cert)
        again.admin_cert.verify_directly_issued_by(again.ca_cert)

    def test_corrupt_key_regenerates_pair(self) -> None:
        """An unparsable admin key regenerates the admin pair only."""
        with open(self.first.admin_key_file, "w") as f:
            f.write("garbage")
        again = self._again()
        self.assertEqual(again.generated, ["admin.crt", "admin.key"])

    def test_mismatched_key_regenerates_pair(self) -> None:
        """A serving key that is not the certificate's regenerates the serving pair."""
        with open(self.first.admin_key_file, "rb") as f:
            admin_key = f.read()
        with open(self.first.key_file, "wb") as f:
            f.write(admin_key)
        again = self._again()
        self.assertEqual(again.generated, ["apiserver.crt", "apiserver.key"])
        self.assertEqual(again.serving_cert.public_key(), again.serving_key.public_key())


class HelperTests(SynchronousTestCase):
    """Small helpers."""

    def test_first_service_ip(self) -> None:
        """The first address after the network address, IPv4 and IPv6."""
        self.assertEqual(first_service_ip("10.0.0.0/24"), "10.0.0.1")
        self.assertEqual(first_service_ip("10.96.0.0/12"), "10.96.0.1")
        self.assertEqual(first_service_ip("fd00:10:96::/112"), "fd00:10:96::1")

    def test_first_service_ip_invalid(self) -> None:
        """A non-CIDR is a ValueError."""
        self.assertRaises(ValueError, first_service_ip, "nonsense")

    def test_bad_ip(self) -> None:
        """A malformed extra IP address is a ValueError."""
        self.assertRaises(ValueError, ensure_serving_certs, self.mktemp(), [], ["300.1.1.1"])

    def test_unspecified_ipv6_skipped(self) -> None:
        """The IPv6 unspecified address is not put in the certificate."""
        certs = ensure_serving_certs(self.mktemp(), [], ["::"])
        self.assertEqual(_sans(certs.serving_cert)[1], ["127.0.0.1", "::1"])

    def test_write_atomically_replaces(self) -> None:
        """Atomic writes replace the content and mode and leave no temporary file behind."""
        d = self.mktemp()
        os.makedirs(d)
        path = os.path.join(d, "f")
        write_file_atomically(path, b"one", 0o644)
        write_file_atomically(path, b"two", 0o600)
        with open(path, "rb") as f:
            self.assertEqual(f.read(), b"two")
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        self.assertEqual(os.listdir(d), ["f"])
