# -*- test-case-name: tests.authentication.test_webhook -*-
"""
The HTTPS client the authenticators use to reach issuers and webhooks (treq over a Twisted
C{Agent}; never blocking): trust roots from PEM, an optional client certificate, and
C{insecure-skip-tls-verify}.
"""

from __future__ import annotations

from typing import Any, Optional

from twisted.internet import ssl
from twisted.web.client import Agent, BrowserLikePolicyForHTTPS
from twisted.web.iweb import IPolicyForHTTPS
from zope.interface import implementer

_BEGIN = b"-----BEGIN CERTIFICATE-----"


def certificates_from_pem(pem: bytes) -> list[Any]:
    """
    Every certificate of a PEM bundle as C{twisted.internet.ssl.Certificate}s.

    @raise ValueError: no certificate, or one that does not parse (upstream's
        C{data does not contain any valid RSA or ECDSA certificates}).
    """
    chunks = [_BEGIN + c for c in pem.split(_BEGIN)[1:]]
    if not chunks:
        raise ValueError("data does not contain any valid RSA or ECDSA certificates")
    out = []
    for c in chunks:
        try:
            out.append(ssl.Certificate.loadPEM(c))
        except Exception:  # noqa: BLE001 -- pyOpenSSL raises its own error types
            raise ValueError("data does not contain any valid RSA or ECDSA certificates") from None
    return out


@implementer(IPolicyForHTTPS)
class TLSPolicy:
    """
    Client TLS for every C{https://} URL: verify the server against C{trust_root} (the
    platform's store when C{None}) and the URL's host (or C{server_name} when given, whatever
    address is connected to), present C{client_certificate}; with C{insecure} nothing is
    verified (C{insecure-skip-tls-verify}).
    """

    def __init__(self, trust_root: Any = None, client_certificate: Any = None,
                 insecure: bool = False, server_name: Optional[str] = None) -> None:
        self.trust_root = trust_root
        self.client_certificate = client_certificate
        self.insecure = insecure
        self.server_name = server_name

    def creatorForNetloc(self, hostname: bytes, port: int) -> Any:
        if self.insecure:
            kwargs: dict[str, Any] = {"verify": False}
            if self.client_certificate is not None:
                kwargs["privateKey"] = self.client_certificate.privateKey.original
                kwargs["certificate"] = self.client_certificate.original
            return ssl.CertificateOptions(**kwargs)
        kwargs = {}
        if self.trust_root is not None:
            kwargs["trustRoot"] = self.trust_root
        if self.client_certificate is not None:
            kwargs["clientCertificate"] = self.client_certificate
        return ssl.optionsForClientTLS(self.server_name or hostname.decode("ascii"), **kwargs)


def tls_policy(ca_pem: Optional[bytes] = None, cert_pem: Optional[bytes] = None,
               key_pem: Optional[bytes] = None, insecure: bool = False) -> IPolicyForHTTPS:
    """
    The policy for a CA bundle, client certificate and key (PEM bytes, any may be C{None}).

    @raise ValueError: unparseable PEM.
    """
    if not (ca_pem or cert_pem or insecure):
        return BrowserLikePolicyForHTTPS()
    root = None
    if ca_pem:
        root = ssl.trustRootFromCertificates(certificates_from_pem(ca_pem))
    client = None
    if cert_pem:
        try:
            client = ssl.PrivateCertificate.loadPEM(cert_pem + b"\n" + (key_pem or b""))
        except Exception as e:  # noqa: BLE001 -- pyOpenSSL raises its own error types
            raise ValueError(f"cannot load the client certificate and key: {e}") from None
    return TLSPolicy(root, client, insecure)


def http_client(reactor: Any, policy: IPolicyForHTTPS) -> Any:
    """A treq C{HTTPClient} over an C{Agent} with C{policy} (30 s connect timeout)."""
    from treq.client import HTTPClient

    return HTTPClient(Agent(reactor, contextFactory=policy, connectTimeout=30))
