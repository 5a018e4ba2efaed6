# -*- test-case-name: tests.storage.test_etcd3_tls -*-
"""
The HTTP client the etcd3 store talks to the gateway with: upstream
C{k8s.io/apiserver/pkg/storage/storagebackend/factory/etcd3.go} (C{newETCD3Client}: the
C{--etcd-cafile}, C{--etcd-certfile} and C{--etcd-keyfile} TLS settings).

For C{https://} endpoints the server certificate is verified against the CA file (or, without
one, the platform's trust store) and its name or IP address checked with C{service_identity};
a client certificate and key, when given, are presented for etcd's C{--client-cert-auth}.
"""

from __future__ import annotations

from typing import Any

from treq.client import HTTPClient
from twisted.internet import ssl
from twisted.web.client import Agent, BrowserLikePolicyForHTTPS, HTTPConnectionPool
from twisted.web.iweb import IPolicyForHTTPS
from zope.interface import implementer


@implementer(IPolicyForHTTPS)
class EtcdTLSPolicy:
    """
    TLS for every C{https://} etcd endpoint: verify the server against C{trust_root} (the
    platform's store when C{None}) and the endpoint's host; present C{client_certificate}.

    @param trust_root: C{IOpenSSLTrustRoot}, e.g. an C{ssl.Certificate} of the CA.
    @param client_certificate: an C{ssl.PrivateCertificate}, or C{None}.
    """

    def __init__(self, trust_root: Any = None, client_certificate: Any = None) -> None:
        self.trust_root = trust_root
        self.client_certificate = client_certificate

    def creatorForNetloc(self, hostname: bytes, port: int) -> Any:
        """C{IPolicyForHTTPS}: the client TLS options for C{hostname:port}."""
        kwargs: dict[str, Any] = {}
        if self.trust_root is not None:
            kwargs["trustRoot"] = self.trust_root
        if self.client_certificate is not None:
            kwargs["clientCertificate"] = self.client_certificate
        return ssl.optionsForClientTLS(hostname.decode("ascii"), **kwargs)


def tls_policy(cafile: str = "", certfile: str = "", keyfile: str = "") -> IPolicyForHTTPS:
    """
    The TLS policy for C{--etcd-cafile}/C{--etcd-certfile}/C{--etcd-keyfile} (PEM files; the
    key may also be inside the certificate file).  Reads the files now (at start-up).

    @raise OSError: a file cannot be read.
    @raise ValueError: a file is not PEM of the expected kind.
    """
    if not (cafile or certfile or keyfile):
        return BrowserLikePolicyForHTTPS()
    trust_root = None
    if cafile:
        with open(cafile, "rb") as f:
            trust_root = ssl.Certificate.loadPEM(f.read())
    client_certificate = None
    if certfile:
        with open(certfile, "rb") as f:
            pem = f.read()
        if keyfile:
            with open(keyfile, "rb") as f:
                pem = pem + b"\n" + f.read()
        try:
            client_certificate = ssl.PrivateCertificate.loadPEM(pem)
        except Exception as e:  # noqa: BLE001 -- OpenSSL raises its own error types
            raise ValueError(f"cannot load the etcd client certificate and key: {e}") from None
    return EtcdTLSPolicy(trust_root, client_certificate)


def new_etcd_client(reactor: Any, cafile: str = "", certfile: str = "", keyfile: str = "",
                    max_persistent_per_host: int = 16,
                    ) -> tuple[HTTPClient, HTTPConnectionPool]:
    """
    A C{treq} client for L{kubetwist.storage.etcd3.Etcd3Storage} with its own persistent
    connection pool (the caller closes it with C{closeCachedConnections()} at shutdown).

    @return: C{(client, pool)}.
    """
    pool = HTTPConnectionPool(reactor, persistent=True)
    pool.maxPersistentPerHost = max_persistent_per_host
    agent = Agent(reactor, contextFactory=tls_policy(cafile, certfile, keyfile), pool=pool)
    return HTTPClient(agent), pool


__all__ = ["EtcdTLSPolicy", "new_etcd_client", "tls_policy"]
