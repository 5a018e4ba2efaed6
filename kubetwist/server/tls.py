# -*- test-case-name: tests.server.test_tls -*-
"""
The serving TLS configuration: upstream C{k8s.io/apiserver/pkg/server/secure_serving.go}
(C{SecureServingInfo.tlsConfig}) and C{dynamiccertificates}' client-CA handling.

kube-apiserver serves TLS 1.2 or newer, offers C{h2} then C{http/1.1} by ALPN, and, when a
client CA is configured, uses Go's C{tls.VerifyClientCertIfGiven}: it asks for a client
certificate (listing the acceptable CAs), lets clients without one in (tokens, anonymous), and
fails the handshake when a presented certificate does not verify against the client CAs.
L{ServerTLSContextFactory} builds the same behaviour on pyOpenSSL for Twisted's TLS transport
(C{SSL4ServerEndpoint}, C{listenSSL}, C{TLSMemoryBIOFactory}).
"""

from __future__ import annotations

from typing import Iterable, Sequence

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from OpenSSL import SSL, crypto
from twisted.internet.interfaces import IOpenSSLServerConnectionCreator
from twisted.internet.ssl import ContextFactory
from zope.interface import implementer

#: ALPN protocols in the server's order of preference, as kube-apiserver's C{NextProtos}.
ALPN_PROTOCOLS: tuple[bytes, ...] = (b"h2", b"http/1.1")

#: TLS 1.2 cipher suites: Go's default secure list (ECDHE with AEAD first, then ECDHE-CBC).
#: TLS 1.3 suites are not configurable, as in Go.
CIPHERS = (
    b"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    b"ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    b"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
    b"ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA:"
    b"ECDHE-ECDSA-AES256-SHA:ECDHE-RSA-AES256-SHA"
)


def load_certificates(path: str) -> list[x509.Certificate]:
    """
    Every certificate of a PEM bundle (C{--client-ca-file}, a certificate with its chain).

    @raise ValueError: the file holds no PEM certificate, or one does not parse; the message
        names the file.
    @raise OSError: the file cannot be read.
    """
    with open(path, "rb") as f:
        data = f.read()
    try:
        certs = x509.load_pem_x509_certificates(data)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    if not certs:
        raise ValueError(f"{path}: no certificate found")
    return certs


def _choose_alpn(offered: Sequence[bytes]) -> bytes:
    # Server preference, as Go's negotiateALPN: the first of ours the client also offered.
    for proto in ALPN_PROTOCOLS:
        if proto in offered:
            return proto
    return SSL.NO_OVERLAPPING_PROTOCOLS


@implementer(IOpenSSLServerConnectionCreator)
class ServerTLSContextFactory(ContextFactory):
    """
    The server side of TLS for the API endpoint.

    Provides both Twisted interfaces that C{listenSSL}/C{SSL4ServerEndpoint} accept:
    C{IOpenSSLServerConnectionCreator} (C{serverConnectionForTLS}) and the older
    C{getContext()}.  The C{SSL.Context} is built once.

    @ivar client_ca_certs: the certificates client certificates are verified against (the same
        list the x509 authenticator should use).
    """

    isClient = 0

    def __init__(
        self,
        cert_chain: list[x509.Certificate],
        private_key: object,
        client_ca_certs: Iterable[x509.Certificate] = (),
    ) -> None:
        """
        @param cert_chain: the serving certificate followed by its intermediates.
        @param private_key: a C{cryptography} private key matching C{cert_chain[0]}.
        @param client_ca_certs: trusted client CAs; empty means no client certificate is asked
            for (C{tls.NoClientCert}).
        @raise ValueError: the chain is empty or the key does not match the certificate.
        """
        if not cert_chain:
            raise ValueError("no serving certificate")
        self.client_ca_certs = list(client_ca_certs)
        ctx = SSL.Context(SSL.TLS_METHOD)
        ctx.set_min_proto_version(SSL.TLS1_2_VERSION)
        ctx.set_options(
            SSL.OP_NO_COMPRESSION
            | SSL.OP_CIPHER_SERVER_PREFERENCE
            | SSL.OP_SINGLE_ECDH_USE
            | getattr(SSL, "OP_NO_RENEGOTIATION", 0)
        )
        ctx.set_cipher_list(CIPHERS)
        ctx.use_certificate(crypto.X509.from_cryptography(cert_chain[0]))
        for extra in cert_chain[1:]:
            ctx.add_extra_chain_cert(crypto.X509.from_cryptography(extra))
        try:
            pkey = crypto.PKey.from_cryptography_key(private_key)  # type: ignore[arg-type]
            ctx.use_privatekey(pkey)
            ctx.check_privatekey()
        except SSL.Error:
            raise ValueError("private key does not match the serving certificate") from None
        if self.client_ca_certs:
            store = ctx.get_cert_store()
            assert store is not None
            names = []
            for ca in self.client_ca_certs:
                pyca = crypto.X509.from_cryptography(ca)
                store.add_cert(pyca)
                names.append(pyca.get_subject())
            ctx.set_client_ca_list(names)
            # VerifyClientCertIfGiven: ask, do not require, fail on a bad certificate.
            ctx.set_verify(SSL.VERIFY_PEER | SSL.VERIFY_CLIENT_ONCE)
        else:
            ctx.set_verify(SSL.VERIFY_NONE)
        ctx.set_session_id(b"kubetwist")
        ctx.set_alpn_select_callback(lambda conn, offered: _choose_alpn(offered))
        self._context = ctx

    @classmethod
    def from_files(
        cls, cert_file: str, key_file: str, client_ca_files: Iterable[str] = ()
    ) -> "ServerTLSContextFactory":
        """
        Build from PEM files: C{--tls-cert-file} (certificate then chain),
        C{--tls-private-key-file}, and the client CA bundles (C{--client-ca-file}).

        @raise ValueError: a file does not parse, or the key does not match.
        @raise OSError: a file cannot be read.
        """
        chain = load_certificates(cert_file)
        with open(key_file, "rb") as f:
            try:
                key = serialization.load_pem_private_key(f.read(), password=None)
            except (ValueError, TypeError) as e:
                raise ValueError(f"{key_file}: {e}") from None
        cas: list[x509.Certificate] = []
        for path in client_ca_files:
            for cert in load_certificates(path):
                if cert not in cas:
                    cas.append(cert)
        return cls(chain, key, cas)

    def getContext(self) -> SSL.Context:
        """The shared C{SSL.Context} (C{twisted.internet.ssl.ContextFactory})."""
        return self._context

    def serverConnectionForTLS(self, tlsProtocol: object) -> SSL.Connection:
        """A new server-side C{SSL.Connection} (C{IOpenSSLServerConnectionCreator})."""
        return SSL.Connection(self._context, None)


def server_context_factory(
    cert_file: str, key_file: str, client_ca_files: list[str]
) -> ServerTLSContextFactory:
    """
    The TLS factory for the secure port: TLS >= 1.2, ALPN C{h2}/C{http/1.1}, client certificates
    requested and, when given, verified against C{client_ca_files}.

    Use with C{SSL4ServerEndpoint(reactor, port, factory, interface=...)}.

    @raise ValueError: a file does not parse, or the key does not match the certificate.
    @raise OSError: a file cannot be read.
    """
    return ServerTLSContextFactory.from_files(cert_file, key_file, client_ca_files)
