"""
Tests for L{kubetwist.server.tls}: the serving TLS configuration, over real handshakes.
"""

from __future__ import annotations

import os

from OpenSSL import SSL
from twisted.internet.interfaces import IOpenSSLServerConnectionCreator
from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from kubetwist.server.certs import ensure_serving_certs
from kubetwist.server.tls import (
    ServerTLSContextFactory,
    _choose_alpn,
    load_certificates,
    server_context_factory,
)
from tests.authentication.tlsserver import TLSServerTestCase, make_foreign_client

# Run by a child Python: connect with the ssl module offering ALPN; print what was negotiated.
_ALPN_SCRIPT = """
import socket, ssl, sys
port, cafile, offer = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(",")
ctx = ssl.create_default_context(cafile=cafile)
ctx.set_alpn_protocols(offer)
with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
    with ctx.wrap_socket(raw, server_hostname="localhost") as s:
        print(s.selected_alpn_protocol(), s.version())
"""

# Offer TLS 1.1 at most; print "refused" when the server will not speak it.
_OLD_TLS_SCRIPT = """
import socket, ssl, sys
port, cafile = int(sys.argv[1]), sys.argv[2]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.load_verify_locations(cafile)
ctx.set_ciphers("ALL:@SECLEVEL=0")
ctx.minimum_version = ssl.TLSVersion.TLSv1
ctx.maximum_version = ssl.TLSVersion.TLSv1_1
try:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            print("connected", s.version())
except ssl.SSLError as e:
    print("refused")
"""

# Connect without a client certificate and print the CA names the server asked for.
_CA_NAMES_SCRIPT = """
import socket, sys
from OpenSSL import SSL
port, cafile = int(sys.argv[1]), sys.argv[2]
ctx = SSL.Context(SSL.TLS_METHOD)
ctx.set_max_proto_version(SSL.TLS1_2_VERSION)
ctx.load_verify_locations(cafile)
raw = socket.create_connection(("127.0.0.1", port), timeout=10)
raw.settimeout(None)
conn = SSL.Connection(ctx, raw)
conn.set_connect_state()
conn.set_tlsext_host_name(b"localhost")
conn.do_handshake()
print(";".join(n.CN for n in conn.get_client_ca_list()))
conn.shutdown()
raw.close()
"""


class ALPNChoiceTests(SynchronousTestCase):
    """The server-preference ALPN choice."""

    def test_prefers_h2(self) -> None:
        """h2 wins over http/1.1 whatever order the client offers them in."""
        self.assertEqual(_choose_alpn([b"http/1.1", b"h2"]), b"h2")

    def test_http11_only(self) -> None:
        """A client offering only http/1.1 gets http/1.1."""
        self.assertEqual(_choose_alpn([b"http/1.1"]), b"http/1.1")

    def test_no_overlap(self) -> None:
        """With no common protocol, no protocol is selected (the handshake goes on)."""
        self.assertIs(_choose_alpn([b"spdy/3"]), SSL.NO_OVERLAPPING_PROTOCOLS)


class FactoryConstructionTests(SynchronousTestCase):
    """Building the factory from files."""

    def setUp(self) -> None:
        self.dir = self.mktemp()
        self.certs = ensure_serving_certs(self.dir, [], [])

    def test_provides_connection_creator(self) -> None:
        """The factory provides IOpenSSLServerConnectionCreator and makes server connections."""
        factory = server_context_factory(
            self.certs.cert_file, self.certs.key_file, [self.certs.ca_cert_file]
        )
        self.assertTrue(verifyObject(IOpenSSLServerConnectionCreator, factory))
        self.assertIsInstance(factory.serverConnectionForTLS(None), SSL.Connection)
        self.assertIsInstance(factory.getContext(), SSL.Context)
        self.assertEqual(factory.client_ca_certs, [self.certs.ca_cert])

    def test_client_cas_deduplicated(self) -> None:
        """The same CA named twice is trusted once."""
        factory = server_context_factory(
            self.certs.cert_file,
            self.certs.key_file,
            [self.certs.ca_cert_file, self.certs.ca_cert_file],
        )
        self.assertEqual(factory.client_ca_certs, [self.certs.ca_cert])

    def test_key_mismatch(self) -> None:
        """A key that is not the certificate's is refused with ValueError."""
        with self.assertRaises(ValueError) as ctx:
            server_context_factory(self.certs.cert_file, self.certs.admin_key_file, [])
        self.assertEqual(
            str(ctx.exception), "private key does not match the serving certificate"
        )

    def test_not_pem(self) -> None:
        """A certificate file without PEM certificates is refused, naming the file."""
        path = os.path.join(self.dir, "junk.crt")
        with open(path, "w") as f:
            f.write("not a certificate\n")
        with self.assertRaises(ValueError) as ctx:
            load_certificates(path)
        self.assertTrue(str(ctx.exception).startswith(path + ": "), str(ctx.exception))

    def test_empty_chain(self) -> None:
        """A factory needs a serving certificate."""
        self.assertRaises(ValueError, ServerTLSContextFactory, [], self.certs.serving_key)


class HandshakeTests(TLSServerTestCase):
    """Real clients against the factory on a loopback port."""

    async def test_alpn_h2(self) -> None:
        """A client offering h2 and http/1.1 negotiates h2."""
        out = await self.python_tls(_ALPN_SCRIPT, "h2,http/1.1")
        self.assertEqual(out.split()[0], "h2")

    async def test_alpn_http11(self) -> None:
        """A client offering only http/1.1 negotiates http/1.1."""
        out = await self.python_tls(_ALPN_SCRIPT, "http/1.1")
        self.assertEqual(out.split()[0], "http/1.1")

    async def test_tls_below_12_refused(self) -> None:
        """A client limited to TLS 1.1 cannot connect."""
        out = await self.python_tls(_OLD_TLS_SCRIPT)
        self.assertEqual(out.strip(), "refused")

    async def test_client_ca_names_advertised(self) -> None:
        """The CertificateRequest lists the client CA, and a client without a certificate
        still completes the handshake."""
        out = await self.python_tls(_CA_NAMES_SCRIPT)
        self.assertEqual(out.strip(), "kubetwist-ca")

    async def test_http2_without_client_cert(self) -> None:
        """curl over HTTP/2 without a certificate is served (anonymous clients connect)."""
        code, body, version, err = await self.curl("--http2")
        self.assertEqual((code, version), (0, "2"), err)
        self.assertEqual(body, {"proto": "HTTP/2", "chain": [], "user": None, "error": None})

    async def test_http11_with_client_cert(self) -> None:
        """curl over HTTP/1.1 presenting the admin certificate is served; the presented chain
        starts with the admin certificate (curl's OpenSSL appends the CA it trusts)."""
        code, body, version, err = await self.curl(
            "--http1.1", "--cert", self.certs.admin_cert_file, "--key", self.certs.admin_key_file
        )
        self.assertEqual((code, version), (0, "1.1"), err)
        self.assertEqual(body["proto"], "HTTP/1.1")
        self.assertEqual(body["chain"][0], "CN=kubernetes-admin,O=system:masters")
        self.assertEqual(body["user"]["username"], "kubernetes-admin")

    async def test_untrusted_client_cert_fails_handshake(self) -> None:
        """A certificate from an unknown CA fails the connection before any request is served
        (VerifyClientCertIfGiven)."""
        cert, key = make_foreign_client(self.directory)
        code, body, _, _ = await self.curl("--http2", "--cert", cert, "--key", key)
        self.assertNotEqual(code, 0)
        self.assertIsNone(body)
        self.assertEqual(self.resource.hits, 0)
