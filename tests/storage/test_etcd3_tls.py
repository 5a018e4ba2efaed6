# -*- test-case-name: tests.storage.test_etcd3_tls -*-
"""
TLS to etcd (C{--etcd-cafile}, C{--etcd-certfile}, C{--etcd-keyfile}) against a real etcd
started with C{--cert-file}, C{--key-file}, C{--trusted-ca-file} and C{--client-cert-auth};
the certificates are made here with C{cryptography}.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import tempfile

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from twisted.internet import reactor
from twisted.trial.unittest import TestCase

from kubetwist.storage.etcd3 import Etcd3Storage, new_etcd_client
from kubetwist.storage.interfaces import UnreachableError
from tests.storage.contract import pod
from tests.storage.test_etcd3 import _SKIP, EtcdServer, wait_for


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write(path: str, *pems: bytes) -> str:
    with open(path, "wb") as f:
        f.write(b"".join(pems))
    return path


class TestPKI:
    """
    A CA with a serving certificate for C{127.0.0.1}/C{localhost} and a client certificate,
    as PEM files in C{directory}; C{issue} makes more.
    """

    def __init__(self, directory: str, name: str = "etcd-ca") -> None:
        self.directory = directory
        self.now = datetime.datetime.now(datetime.UTC)
        self.ca_key = ec.generate_private_key(ec.SECP256R1())
        self.ca_cert = (
            x509.CertificateBuilder()
            .subject_name(_name(name)).issuer_name(_name(name))
            .public_key(self.ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self.now - datetime.timedelta(minutes=5))
            .not_valid_after(self.now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True,
                content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .sign(self.ca_key, hashes.SHA256())
        )
        self.ca_file = _write(os.path.join(directory, f"{name}.crt"),
                              self.ca_cert.public_bytes(serialization.Encoding.PEM))

    def issue(self, common_name: str, server: bool, ips: tuple[str, ...] = (),
              dns: tuple[str, ...] = ()) -> tuple[str, str]:
        """A leaf certificate signed by the CA: C{(cert_file, key_file)}."""
        key = ec.generate_private_key(ec.SECP256R1())
        # etcd's own gateway dials etcd with the serving certificate: it needs clientAuth too
        usage = [ExtendedKeyUsageOID.CLIENT_AUTH]
        if server:
            usage.insert(0, ExtendedKeyUsageOID.SERVER_AUTH)
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name)).issuer_name(self.ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self.now - datetime.timedelta(minutes=5))
            .not_valid_after(self.now + datetime.timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage(usage), critical=False)
        )
        names = [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
        names += [x509.DNSName(d) for d in dns]
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self.ca_key, hashes.SHA256())
        cert_file = _write(os.path.join(self.directory, f"{common_name}.crt"),
                           cert.public_bytes(serialization.Encoding.PEM))
        key_file = _write(os.path.join(self.directory, f"{common_name}.key"), key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()))
        return cert_file, key_file


class Etcd3TLSTests(TestCase):
    """The etcd3 store over https with a verified server and a client certificate."""

    skip = _SKIP

    @classmethod
    def _acquire(cls) -> tuple[EtcdServer, TestPKI, TestPKI]:
        state = cls.__dict__.get("_tls_state")
        if state is None:
            directory = tempfile.mkdtemp(prefix="kubetwist-etcd-pki-")
            pki = TestPKI(directory)
            other = TestPKI(directory, "other-ca")
            serving = pki.issue("etcd-server", True, ips=("127.0.0.1",), dns=("localhost",))
            client = pki.issue("kube-apiserver-etcd-client", False)
            server = EtcdServer(tls=(serving[0], serving[1], pki.ca_file), client_cert=client)
            tests = [n for n in dir(cls) if n.startswith("test")]
            state = cls._tls_state = {"server": server, "pki": pki, "other": other,
                                      "client": client, "remaining": len(tests), "error": None}
            try:
                server.start()
            except RuntimeError as e:
                state["error"] = e
        if state["error"] is not None:
            raise AssertionError(f"the TLS etcd did not start: {state['error']}")
        return state

    def setUp(self) -> None:
        def release() -> None:
            state = type(self).__dict__["_tls_state"]
            state["remaining"] -= 1
            if state["remaining"] <= 0:
                state["server"].stop()
                shutil.rmtree(state["pki"].directory, ignore_errors=True)

        try:
            state = self._acquire()
        finally:
            self.addCleanup(release)
        self.etcd, self.pki, self.other = state["server"], state["pki"], state["other"]
        self.client_cert = state["client"]

    def store(self, cafile: str, certfile: str = "", keyfile: str = "",
              url: str | None = None) -> Etcd3Storage:
        client, pool = new_etcd_client(reactor, cafile, certfile, keyfile)
        self.addCleanup(pool.closeCachedConnections)
        store = Etcd3Storage(reactor, client, [url or self.etcd.url], prefix="/tls/registry")
        self.addCleanup(store.stop)
        return store

    async def test_verified_with_client_certificate(self):
        """With the CA and a client certificate, writes, reads and watches work."""
        store = self.store(self.pki.ca_file, *self.client_cert)
        created = await store.create("/registry/pods/ns/a", pod("a"))
        self.assertEqual(await store.get("/registry/pods/ns/a"), created)
        events: list = []
        watch = store.watch("/registry/pods/ns/a", "0")
        watch.subscribe(events.append)
        await wait_for(lambda: events, what="the watch's first event")
        self.assertEqual([(e.type, e.object) for e in events], [("ADDED", created)])
        await store.check_health()
        watch.stop()

    async def test_kept_alive_over_tls(self):
        """Sequential calls share one verified TLS connection (one handshake)."""
        store = self.store(self.pki.ca_file, *self.client_cert)
        endpoint = store._client.endpoint_for(self.etcd.url)
        connects = []
        real = endpoint.endpoint
        endpoint.endpoint = type("Counting", (), {
            "connect": lambda _, factory: connects.append(1) or real.connect(factory)})()
        for name in ("ka", "kb", "kc"):
            created = await store.create(f"/registry/pods/keep/{name}", pod(name))
            self.assertEqual(await store.get(f"/registry/pods/keep/{name}"), created)
        self.assertEqual(len(connects), 1)

    async def test_restart_under_kept_connection(self):
        """
        etcd restarted while a TLS connection is kept: the next write sees etcd's close on
        the socket before writing and goes over a new connection (a new handshake).
        """
        store = self.store(self.pki.ca_file, *self.client_cert)
        await store.create("/registry/pods/restart/a", pod("a"))
        self.assertEqual(store._client.connection_count(), 1)
        self.etcd.halt()
        self.etcd.start()
        created = await store.create("/registry/pods/restart/b", pod("b"))
        self.assertEqual(await store.get("/registry/pods/restart/b"), created)

    async def test_by_host_name(self):
        """The server's DNS name is checked too (C{https://localhost:port})."""
        store = self.store(self.pki.ca_file, *self.client_cert,
                           url=self.etcd.url.replace("127.0.0.1", "localhost"))
        await store.check_health()

    async def test_untrusted_server(self):
        """A server certificate not signed by --etcd-cafile is refused: unreachable."""
        store = self.store(self.other.ca_file, *self.client_cert)
        with self.assertRaises(UnreachableError) as caught:
            await store.get("/registry/pods/ns/a", ignore_not_found=True)
        self.assertIn("certificate verify failed", str(caught.exception))

    async def test_no_client_certificate(self):
        """Without a client certificate etcd's --client-cert-auth refuses the connection."""
        store = self.store(self.pki.ca_file)
        with self.assertRaises(UnreachableError):
            await store.get("/registry/pods/ns/a", ignore_not_found=True)

    def test_bad_key_file(self):
        """A key file that is not a PEM key is a ValueError at start-up."""
        cert, _ = self.client_cert
        with self.assertRaises(ValueError):
            new_etcd_client(reactor, self.pki.ca_file, cert, self.pki.ca_file)
