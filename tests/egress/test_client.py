"""Tests for L{kubetwist.egress.client}: real TLS on loopback."""

from __future__ import annotations

import base64

from twisted.internet import reactor, ssl
from twisted.internet.defer import ensureDeferred
from twisted.trial.unittest import TestCase
from twisted.web import resource, server

from kubetwist.egress.client import EgressClients, ca_bundle_bytes
from kubetwist.egress.resolver import Address
from tests.pki import CA


class _Hello(resource.Resource):
    isLeaf = True

    def render_POST(self, request):
        return b"hello " + request.path


class _FixedResolver:
    def __init__(self, port: int) -> None:
        self.port = port

    async def resolve(self, namespace: str, name: str, port: int = 443) -> Address:
        return Address("127.0.0.1", self.port, f"{name}.{namespace}.svc")


class ClientTests(TestCase):
    def serve(self, names: list[str]) -> tuple[CA, int]:
        ca = CA()
        pair = ca.issue("hook", dns_names=names)
        options = ssl.PrivateCertificate.loadPEM(pair.pem).options()
        port = reactor.listenSSL(0, server.Site(_Hello()), options, interface="127.0.0.1")
        self.addCleanup(port.stopListening)
        return ca, port.getHost().port

    async def call(self, clients: EgressClients, config: dict) -> bytes:
        ep, client = await clients.for_config(config)
        response = await client.post(ep.url, data=b"{}", timeout=5)
        return await response.content()

    def test_service_reference(self) -> None:
        """A service reference connects to the resolved address and verifies the
        certificate against C{<svc>.<ns>.svc} with the CA bundle only."""
        ca, port = self.serve(["hook.ns.svc"])
        clients = EgressClients(reactor, _FixedResolver(port))
        self.addCleanup(clients.close)
        config = {"service": {"namespace": "ns", "name": "hook", "path": "validate"},
                  "caBundle": base64.b64encode(ca.cert).decode()}
        d = ensureDeferred(self.call(clients, config))
        d.addCallback(self.assertEqual, b"hello /validate")
        return d

    def test_wrong_name_refused(self) -> None:
        """A certificate for another name fails the TLS handshake."""
        ca, port = self.serve(["other.ns.svc"])
        clients = EgressClients(reactor, _FixedResolver(port))
        config = {"service": {"namespace": "ns", "name": "hook"}, "caBundle": ca.cert}
        d = ensureDeferred(self.call(clients, config))
        return self.assertFailure(d, Exception)

    def test_other_ca_refused(self) -> None:
        _, port = self.serve(["hook.ns.svc"])
        clients = EgressClients(reactor, _FixedResolver(port))
        config = {"service": {"namespace": "ns", "name": "hook"}, "caBundle": CA().cert}
        return self.assertFailure(ensureDeferred(self.call(clients, config)), Exception)

    def test_url(self) -> None:
        ca, port = self.serve(["localhost"])
        clients = EgressClients(reactor)
        self.addCleanup(clients.close)
        config = {"url": f"https://localhost:{port}/x", "caBundle": ca.cert}
        d = ensureDeferred(self.call(clients, config))
        d.addCallback(self.assertEqual, b"hello /x")
        return d

    def test_ca_bundle_bytes(self) -> None:
        self.assertIsNone(ca_bundle_bytes({}))
        self.assertEqual(ca_bundle_bytes({"caBundle": base64.b64encode(b"pem").decode()}),
                         b"pem")

    def test_clients_bounded(self) -> None:
        """Distinct server names beyond C{max_clients} evict the oldest client."""
        ca = CA()
        clients = EgressClients(reactor, max_clients=2)
        for n in ("a", "b", "c"):
            clients.client(n, ca.cert)
        self.assertEqual([k[0] for k in clients._clients], ["b", "c"])
        self.assertIs(clients.client("c", ca.cert), clients.client("c", ca.cert))
