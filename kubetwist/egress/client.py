# -*- test-case-name: tests.egress.test_client -*-
"""
HTTPS clients for C{clientConfig}s: upstream C{k8s.io/apiserver/pkg/util/webhook}
(C{ClientManager.HookClient}, C{ValidateWebhookURL}) and the aggregator's proxy transport.

A C{clientConfig} (C{admissionregistration.k8s.io} C{WebhookClientConfig}, the CRD
conversion's, or an APIService's spec) names its server by C{url} or by C{service}
(C{namespace}, C{name}, C{path}, C{port}); C{caBundle} (base64 PEM in the API object, bytes
here) is the only trust root when given, the system's otherwise.  The certificate must carry
the name upstream checks: the URL's host, or C{<name>.<namespace>.svc} for a service, while
the TCP connection goes to the address the L{ServiceResolver
<kubetwist.egress.resolver.ServiceResolver>} picks.  Hostname checks are
C{service-identity}'s (through C{twisted.internet.ssl.optionsForClientTLS}); nothing blocks
the reactor.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import Any, Optional
from urllib.parse import urlsplit

from twisted.internet import ssl
from twisted.web.client import Agent, HTTPConnectionPool

from kubetwist.authentication.httpclient import TLSPolicy
from kubetwist.egress.resolver import Address, ServiceResolver

__all__ = ["Endpoint", "EgressClients", "ServerNamePolicy", "ca_bundle_bytes"]

_BEGIN = b"-----BEGIN CERTIFICATE-----"


def ca_bundle_bytes(client_config: dict) -> Optional[bytes]:
    """The C{caBundle} of a C{clientConfig} as PEM bytes (the API carries it base64 in JSON;
    a bytes value is taken as PEM already), or C{None}."""
    ca = client_config.get("caBundle")
    if not ca:
        return None
    if isinstance(ca, bytes):
        return ca
    return base64.b64decode(ca)


def _certificates(pem: bytes) -> list:
    chunks = [_BEGIN + c for c in pem.split(_BEGIN)[1:]]
    if not chunks:
        raise ValueError("unable to load root certificates: unable to parse bytes as PEM block")
    return [ssl.Certificate.loadPEM(c) for c in chunks]


class ServerNamePolicy(TLSPolicy):
    """
    Client TLS that verifies every connection's certificate against C{server_name} (not the
    address connected to) and C{trust_root}; C{insecure} verifies nothing (an APIService's
    C{insecureSkipTLSVerify}).  C{client_certificate} (a
    C{twisted.internet.ssl.PrivateCertificate}) is presented when given (the aggregator's
    C{--proxy-client-cert-file}).
    """

    def __init__(self, server_name: str, trust_root: Any = None,
                 client_certificate: Any = None, insecure: bool = False) -> None:
        super().__init__(trust_root, client_certificate, insecure, server_name=server_name)


@dataclass(frozen=True)
class Endpoint:
    """
    One resolved C{clientConfig}.

    @ivar url: the URL to request (its host the address to connect to).
    @ivar server_name: the name the certificate must carry.
    """

    url: str
    server_name: str


class EgressClients:
    """
    Resolves C{clientConfig}s and hands out treq clients, one kept-alive connection pool per
    (server name, CA bundle, insecure) so repeated webhook calls reuse connections.

    @param reactor: the reactor (C{IReactorTCP}, C{IReactorTime}).
    @param resolver: the L{ServiceResolver} for C{service} references (C{None}: only C{url}
        configs resolve).
    @param client_certificate: a C{PrivateCertificate} presented to every server, or C{None}.
    @param max_clients: how many distinct clients are kept (bounded memory; the oldest is
        dropped beyond it).
    """

    def __init__(self, reactor: Any, resolver: Optional[ServiceResolver] = None,
                 client_certificate: Any = None, max_clients: int = 256) -> None:
        self.reactor = reactor
        self.resolver = resolver
        self.client_certificate = client_certificate
        self.max_clients = max_clients
        self._clients: dict[tuple, Any] = {}
        self._pools: dict[tuple, HTTPConnectionPool] = {}

    async def endpoint(self, client_config: dict, default_port: int = 443) -> Endpoint:
        """
        Where C{client_config} points.

        @raise StatusError: what L{ServiceResolver.resolve} raises for a C{service}.
        @raise ValueError: neither C{url} nor C{service}, or a service without a resolver.
        """
        url = client_config.get("url")
        if url:
            return Endpoint(url, urlsplit(url).hostname or "")
        svc = client_config.get("service")
        if not svc:
            raise ValueError("clientConfig has neither url nor service")
        if self.resolver is None:
            raise ValueError("no service resolver configured")
        address: Address = await self.resolver.resolve(
            svc.get("namespace", ""), svc.get("name", ""), int(svc.get("port") or default_port))
        path = svc.get("path") or ""
        if path and not path.startswith("/"):
            path = "/" + path
        return Endpoint(f"https://{address.netloc}{path}", address.server_name)

    def client(self, server_name: str, ca_bundle: Optional[bytes] = None,
               insecure: bool = False) -> Any:
        """
        A treq C{HTTPClient} verifying C{server_name} against C{ca_bundle} (PEM bytes; the
        system's roots when C{None}).

        @raise ValueError: a C{ca_bundle} with no parseable certificate.
        """
        digest = hashlib.sha256(ca_bundle).hexdigest() if ca_bundle else ""
        key = (server_name, digest, insecure)
        found = self._clients.get(key)
        if found is not None:
            return found
        from treq.client import HTTPClient

        root = ssl.trustRootFromCertificates(_certificates(ca_bundle)) if ca_bundle else None
        policy = ServerNamePolicy(server_name, root, self.client_certificate, insecure)
        pool = HTTPConnectionPool(self.reactor, persistent=True)
        pool.maxPersistentPerHost = 8
        pool.retryAutomatically = False
        client = HTTPClient(Agent(self.reactor, contextFactory=policy, pool=pool,
                                  connectTimeout=10))
        if len(self._clients) >= self.max_clients:
            oldest = next(iter(self._clients))
            self._clients.pop(oldest)
            self._pools.pop(oldest).closeCachedConnections()
        self._clients[key] = client
        self._pools[key] = pool
        return client

    def close(self) -> Any:
        """Close every kept-alive connection; a Deferred firing when they are closed."""
        from twisted.internet.defer import gatherResults

        pools, self._pools, self._clients = list(self._pools.values()), {}, {}
        return gatherResults([p.closeCachedConnections() for p in pools])

    async def for_config(self, client_config: dict) -> tuple[Endpoint, Any]:
        """C{(endpoint, client)} for a C{clientConfig} (see L{endpoint}, L{client})."""
        ep = await self.endpoint(client_config)
        return ep, self.client(ep.server_name, ca_bundle_bytes(client_config))
