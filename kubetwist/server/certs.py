# -*- test-case-name: tests.server.test_certs -*-
"""
Generated serving certificates: upstream C{k8s.io/apiserver/pkg/server/options} (C{serving.go},
C{MaybeDefaultWithSelfSignedCerts}) and C{k8s.io/client-go/util/cert}, with kubetwist's twist.

kube-apiserver, started without C{--tls-cert-file}, writes a self-signed serving pair into
C{--cert-dir}.  kubetwist goes one step further so that a bare C{twistd kubeapi} is usable by
kubectl at once: it creates a small certificate authority and issues from it

 - the serving certificate (C{apiserver.crt}/C{apiserver.key}), and
 - an admin client certificate (C{admin.crt}/C{admin.key}: CN C{kubernetes-admin}, O
   C{system:masters}, the identity kubeadm gave its admin.conf before 1.29).

The CA (C{ca.crt}/C{ca.key}) is also a client CA: a client presenting the admin certificate is
authenticated by the x509 authenticator.  Files already present and valid are reused on restart.

Keys are ECDSA P-256 (fast to generate, accepted by every client), PEM encoded; private key files
are written with mode 0600, atomically.  Generation is CPU work done once at start-up, before
the reactor runs.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
import socket
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Iterable

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: File names inside the certificate directory.
CA_CERT_NAME = "ca.crt"
CA_KEY_NAME = "ca.key"
SERVING_CERT_NAME = "apiserver.crt"
SERVING_KEY_NAME = "apiserver.key"
ADMIN_CERT_NAME = "admin.crt"
ADMIN_KEY_NAME = "admin.key"

#: Subject of the generated CA.
CA_COMMON_NAME = "kubetwist-ca"
#: Subject of the generated serving certificate.
SERVING_COMMON_NAME = "kube-apiserver"
#: Subject of the generated admin client certificate (user name, group).
ADMIN_COMMON_NAME = "kubernetes-admin"
ADMIN_ORGANIZATION = "system:masters"

#: Validity periods.
CA_VALIDITY = datetime.timedelta(days=3650)
LEAF_VALIDITY = datetime.timedelta(days=365)
#: Certificates are back-dated by this much to tolerate clock skew (upstream uses one hour).
BACKDATE = datetime.timedelta(hours=1)

#: DNS names every serving certificate carries (kube-apiserver's default service names).
DEFAULT_DNS_NAMES = (
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)
#: IP addresses every serving certificate carries.
DEFAULT_IPS = ("127.0.0.1", "::1")


@dataclass
class ServingCerts:
    """
    The certificate directory's files and their parsed contents.

    @ivar cert_dir: the directory.
    @ivar ca_cert_file: path of C{ca.crt} (PEM, the CA certificate; also the client CA).
    @ivar ca_key_file: path of C{ca.key}.
    @ivar cert_file: path of C{apiserver.crt} (the serving certificate alone).
    @ivar key_file: path of C{apiserver.key}.
    @ivar admin_cert_file: path of C{admin.crt}.
    @ivar admin_key_file: path of C{admin.key}.
    @ivar generated: names of the files written by this call (empty when all were reused).
    """

    cert_dir: str
    ca_cert_file: str
    ca_key_file: str
    cert_file: str
    key_file: str
    admin_cert_file: str
    admin_key_file: str
    ca_cert: x509.Certificate
    ca_key: ec.EllipticCurvePrivateKey
    serving_cert: x509.Certificate
    serving_key: ec.EllipticCurvePrivateKey
    admin_cert: x509.Certificate
    admin_key: ec.EllipticCurvePrivateKey
    generated: list[str] = field(default_factory=list)

    def client_ca_files(self, extra: Iterable[str] = ()) -> list[str]:
        """
        The client CA bundle: the generated CA followed by C{extra} (e.g. C{--client-ca-file}).

        @return: a list of PEM file paths, without duplicates, generated CA first.
        """
        out = [self.ca_cert_file]
        for path in extra:
            if path not in out:
                out.append(path)
        return out


def first_service_ip(service_cidr: str) -> str:
    """
    The first usable address of the service range, given to the C{kubernetes} Service.

    Mirrors upstream C{ServiceIPRange}: C{10.0.0.0/24} -> C{10.0.0.1}.

    @raise ValueError: C{service_cidr} is not a CIDR.
    """
    net = ipaddress.ip_network(service_cidr, strict=False)
    return str(net.network_address + 1)


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def ensure_serving_certs(
    cert_dir: str,
    hostnames: list[str],
    ips: list[str],
    *,
    service_cidr: str | None = None,
    now: Callable[[], datetime.datetime] = _utcnow,
) -> ServingCerts:
    """
    Load the CA, serving and admin certificates from C{cert_dir}, generating what is missing.

    A file pair is regenerated when either file is absent or unreadable, the key does not match
    the certificate, the certificate is expired (or not yet valid), or it is not signed by the CA.
    A new CA regenerates both leaves.  A serving certificate lacking one of the wanted names is
    also reissued (so a new C{--advertise-address} reaches clients after a restart).

    Serving certificate names: DNS C{localhost}, the machine's host name,
    L{DEFAULT_DNS_NAMES}, then C{hostnames}; IP C{127.0.0.1}, C{::1}, then C{ips} (unspecified
    addresses C{0.0.0.0}/C{::} are skipped) and, when C{service_cidr} is given, its first
    address.

    @param cert_dir: directory created (mode 0700) if absent.
    @param hostnames: extra DNS names (e.g. from C{--tls-sni-cert-key} or the external host).
    @param ips: extra IP addresses (bind and advertise addresses, the first service IP).
    @param service_cidr: C{--service-cluster-ip-range}, whose first IP is added.
    @param now: clock returning an aware UTC datetime.
    @raise ValueError: an IP address is malformed.
    @raise OSError: the directory or a file cannot be written.
    """
    os.makedirs(cert_dir, mode=0o700, exist_ok=True)
    paths = {
        name: os.path.join(cert_dir, name)
        for name in (
            CA_CERT_NAME, CA_KEY_NAME, SERVING_CERT_NAME, SERVING_KEY_NAME,
            ADMIN_CERT_NAME, ADMIN_KEY_NAME,
        )
    }
    current = now()
    dns_names, ip_addresses = _wanted_names(hostnames, ips, service_cidr)
    generated: list[str] = []

    ca = _load_pair(paths[CA_CERT_NAME], paths[CA_KEY_NAME], None, current)
    if ca is None or not _is_ca(ca[0]):
        ca_key = _new_key()
        ca_cert = _issue_ca(ca_key, current)
        _write_pair(paths[CA_CERT_NAME], paths[CA_KEY_NAME], ca_cert, ca_key)
        generated += [CA_CERT_NAME, CA_KEY_NAME]
        ca = (ca_cert, ca_key)
    ca_cert, ca_key = ca

    serving = _load_pair(paths[SERVING_CERT_NAME], paths[SERVING_KEY_NAME], ca_cert, current)
    if serving is None or not _has_names(serving[0], dns_names, ip_addresses):
        key = _new_key()
        cert = _issue_serving(ca_cert, ca_key, key, dns_names, ip_addresses, current)
        _write_pair(paths[SERVING_CERT_NAME], paths[SERVING_KEY_NAME], cert, key)
        generated += [SERVING_CERT_NAME, SERVING_KEY_NAME]
        serving = (cert, key)

    admin = _load_pair(paths[ADMIN_CERT_NAME], paths[ADMIN_KEY_NAME], ca_cert, current)
    if admin is None:
        key = _new_key()
        cert = _issue_admin(ca_cert, ca_key, key, current)
        _write_pair(paths[ADMIN_CERT_NAME], paths[ADMIN_KEY_NAME], cert, key)
        generated += [ADMIN_CERT_NAME, ADMIN_KEY_NAME]
        admin = (cert, key)

    return ServingCerts(
        cert_dir=cert_dir,
        ca_cert_file=paths[CA_CERT_NAME],
        ca_key_file=paths[CA_KEY_NAME],
        cert_file=paths[SERVING_CERT_NAME],
        key_file=paths[SERVING_KEY_NAME],
        admin_cert_file=paths[ADMIN_CERT_NAME],
        admin_key_file=paths[ADMIN_KEY_NAME],
        ca_cert=ca_cert,
        ca_key=ca_key,
        serving_cert=serving[0],
        serving_key=serving[1],
        admin_cert=admin[0],
        admin_key=admin[1],
        generated=generated,
    )


def _wanted_names(
    hostnames: Iterable[str], ips: Iterable[str], service_cidr: str | None
) -> tuple[list[str], list[ipaddress.IPv4Address | ipaddress.IPv6Address]]:
    dns: list[str] = []
    for name in ("localhost", socket.gethostname(), *DEFAULT_DNS_NAMES, *hostnames):
        if name and name not in dns:
            dns.append(name)
    addrs: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    extra = list(ips)
    if service_cidr:
        extra.append(first_service_ip(service_cidr))
    for text in (*DEFAULT_IPS, *extra):
        addr = ipaddress.ip_address(text)
        if addr.is_unspecified or addr in addrs:
            continue
        addrs.append(addr)
    return dns, addrs


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _serial() -> int:
    # 127 random bits: positive and at most 20 octets, as RFC 5280 asks.
    return secrets.randbits(127) | 1


def _name(common_name: str, organization: str | None = None) -> x509.Name:
    attrs = []
    if organization:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attrs)


def _issue_ca(key: ec.EllipticCurvePrivateKey, current: datetime.datetime) -> x509.Certificate:
    name = _name(CA_COMMON_NAME)
    public = key.public_key()
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(_serial())
        .not_valid_before(current - BACKDATE)
        .not_valid_after(current + CA_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=False, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )


def _leaf_builder(
    ca_cert: x509.Certificate,
    key: ec.EllipticCurvePrivateKey,
    subject: x509.Name,
    usage: x509.ObjectIdentifier,
    current: datetime.datetime,
) -> x509.CertificateBuilder:
    public = key.public_key()
    not_after = min(current + LEAF_VALIDITY, ca_cert.not_valid_after_utc)
    ski = ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject)
        .public_key(public)
        .serial_number(_serial())
        .not_valid_before(current - BACKDATE)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=False,
                crl_sign=False, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False
        )
    )


def _issue_serving(
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    key: ec.EllipticCurvePrivateKey,
    dns_names: list[str],
    ips: list[ipaddress.IPv4Address | ipaddress.IPv6Address],
    current: datetime.datetime,
) -> x509.Certificate:
    sans: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    sans += [x509.IPAddress(a) for a in ips]
    return (
        _leaf_builder(
            ca_cert, key, _name(SERVING_COMMON_NAME), ExtendedKeyUsageOID.SERVER_AUTH, current
        )
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .sign(ca_key, hashes.SHA256())
    )


def _issue_admin(
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    key: ec.EllipticCurvePrivateKey,
    current: datetime.datetime,
) -> x509.Certificate:
    return _leaf_builder(
        ca_cert, key, _name(ADMIN_COMMON_NAME, ADMIN_ORGANIZATION),
        ExtendedKeyUsageOID.CLIENT_AUTH, current,
    ).sign(ca_key, hashes.SHA256())


def _is_ca(cert: x509.Certificate) -> bool:
    try:
        bc = cert.extensions.get_extension_for_class(x509.BasicConstraints).value
        cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
    except x509.ExtensionNotFound:
        return False
    return bc.ca


def _has_names(
    cert: x509.Certificate,
    dns_names: list[str],
    ips: list[ipaddress.IPv4Address | ipaddress.IPv6Address],
) -> bool:
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    have_dns = set(san.get_values_for_type(x509.DNSName))
    have_ips = set(san.get_values_for_type(x509.IPAddress))
    return set(dns_names) <= have_dns and set(ips) <= have_ips


def _load_pair(
    cert_path: str,
    key_path: str,
    issuer: x509.Certificate | None,
    current: datetime.datetime,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None:
    """The pair at the paths if usable (see L{ensure_serving_certs}), else C{None}."""
    try:
        with open(cert_path, "rb") as f:
            cert = x509.load_pem_x509_certificate(f.read())
        with open(key_path, "rb") as f:
            key = serialization.load_pem_private_key(f.read(), password=None)
    except (OSError, ValueError, TypeError):
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        return None
    if key.public_key().public_numbers() != cert.public_key().public_numbers():
        return None
    if not cert.not_valid_before_utc <= current < cert.not_valid_after_utc:
        return None
    if issuer is not None:
        try:
            cert.verify_directly_issued_by(issuer)
        except (ValueError, TypeError, InvalidSignature):
            return None
    return cert, key


def _write_pair(
    cert_path: str, key_path: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey
) -> None:
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    write_file_atomically(key_path, key_pem, 0o600)
    write_file_atomically(cert_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)


def write_file_atomically(path: str, data: bytes, mode: int) -> None:
    """
    Write C{data} to C{path} with permission C{mode}: a temporary file in the same directory,
    fsync, then C{rename} over C{path}, so readers see the old or the new content, never a part.

    @raise OSError: the directory is not writable.
    """
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
