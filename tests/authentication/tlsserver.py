"""
A tiny TLS twisted.web server for tests that need a real handshake: the generated certificates,
L{kubetwist.server.tls.ServerTLSContextFactory}, and a resource that reports what the request
saw (protocol, presented chain, authenticated user) as JSON.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import SSL4ServerEndpoint
from twisted.internet.utils import getProcessOutputAndValue
from twisted.trial.unittest import SkipTest, TestCase
from twisted.web.resource import Resource
from twisted.web.server import Site

from kubetwist.authentication.authenticator import AuthenticationError
from kubetwist.authentication.x509 import X509Authenticator, peer_certificates
from kubetwist.server.certs import ServingCerts, ensure_serving_certs
from kubetwist.server.tls import server_context_factory
from tests.authentication.fakes import resolved

CURL = shutil.which("curl")


class WhoAmI(Resource):
    """Answers C{{"proto", "chain": [subjects], "user": {...} | null, "error": str | null}}."""

    isLeaf = True

    def __init__(self, authenticator: X509Authenticator) -> None:
        super().__init__()
        self.authenticator = authenticator
        self.hits = 0

    def render_GET(self, request):
        self.hits += 1
        chain = peer_certificates(request)
        user = error = None
        try:
            info = resolved(self.authenticator.authenticate(request))
            if info is not None:
                user = info.to_user_info()
        except AuthenticationError as e:
            error = str(e)
        request.setHeader(b"content-type", b"application/json")
        return json.dumps(
            {
                "proto": request.clientproto.decode(),
                "chain": [c.subject.rfc4514_string() for c in chain],
                "user": user,
                "error": error,
            }
        ).encode()


def make_foreign_client(directory: str) -> tuple[str, str]:
    """A client certificate and key from a CA the server does not trust: (cert, key) paths."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "other-ca")])
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mallory")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), False)
        .sign(ca_key, hashes.SHA256())
    )
    cert_path = os.path.join(directory, "foreign.crt")
    key_path = os.path.join(directory, "foreign.key")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    return cert_path, key_path


class TLSServerTestCase(TestCase):
    """Starts the server on 127.0.0.1, port 0, with the real reactor; stops it after."""

    certs: ServingCerts
    port: int
    resource: WhoAmI

    async def _start(self) -> None:
        from twisted.internet import reactor

        self.directory = self.mktemp()
        os.makedirs(self.directory)
        self.certs = ensure_serving_certs(os.path.join(self.directory, "pki"), [], [])
        factory = server_context_factory(
            self.certs.cert_file, self.certs.key_file, self.certs.client_ca_files()
        )
        self.resource = WhoAmI(X509Authenticator([self.certs.ca_cert]))
        site = Site(self.resource)
        endpoint = SSL4ServerEndpoint(reactor, 0, factory, interface="127.0.0.1")
        listening = await endpoint.listen(site)
        self.addCleanup(listening.stopListening)
        self.port = listening.getHost().port
        self.url = f"https://127.0.0.1:{self.port}/whoami"

    def setUp(self) -> Deferred:
        return Deferred.fromCoroutine(self._start())

    def run_process(self, executable: str, args: list[str], env: dict | None = None) -> Deferred:
        """(stdout, stderr, exit code) of a child process, without blocking the reactor."""
        return getProcessOutputAndValue(
            executable, args, env=env if env is not None else dict(os.environ)
        )

    async def curl(self, *args: str) -> tuple[int, dict | None, str, str]:
        """
        Run curl against the server: (exit code, parsed JSON body or None, HTTP version as
        curl reports it, stderr).
        """
        if CURL is None:
            raise SkipTest("curl is not installed")
        out, err, code = await self.run_process(
            CURL,
            [
                "-sS", "--max-time", "10", "--cacert", self.certs.ca_cert_file,
                "-w", "\n%{http_version}", *args, self.url,
            ],
        )
        text = out.decode()
        body, _, version = text.rpartition("\n")
        parsed = json.loads(body) if code == 0 and body else None
        return code, parsed, version, err.decode()

    async def python_tls(self, script: str, *args: str) -> str:
        """Run a Python snippet (C{sys.argv[1:]} = port, CA file, *args) and return stdout."""
        out, err, code = await self.run_process(
            sys.executable, ["-c", script, str(self.port), self.certs.ca_cert_file, *args]
        )
        self.assertEqual(code, 0, err.decode())
        return out.decode()
