# -*- test-case-name: tests.server.test_reuseport -*-
"""L{kubetwist.server.reuseport}: two TLS listeners sharing one port with SO_REUSEPORT."""

from __future__ import annotations

import socket
import tempfile

from twisted.internet import reactor
from twisted.trial.unittest import TestCase
from twisted.web.resource import Resource
from twisted.web.server import Site

from kubetwist.server.reuseport import ReusePortSSLServerEndpoint, secure_endpoint
from kubetwist.server.tls import server_context_factory
from kubetwist.storage.etcd3 import new_etcd_client
from tests.storage.test_etcd3_tls import TestPKI


class Answer(Resource):
    isLeaf = True

    def __init__(self, text: bytes) -> None:
        super().__init__()
        self.text = text

    def render_GET(self, request):
        return self.text


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ReusePortTests(TestCase):
    """Listeners made with SO_REUSEPORT."""

    def setUp(self) -> None:
        self.pki = TestPKI(tempfile.mkdtemp(prefix="kubetwist-reuseport-"))
        cert, key = self.pki.issue("server", True, ips=("127.0.0.1",))
        self.tls = server_context_factory(cert, key, [])

    async def listen(self, port: int, text: bytes):
        endpoint = ReusePortSSLServerEndpoint(reactor, port, self.tls, interface="127.0.0.1")
        listening = await endpoint.listen(Site(Answer(text)))
        self.addCleanup(listening.stopListening)
        return listening

    async def fetch(self, port: int) -> bytes:
        client, pool = new_etcd_client(reactor, self.pki.ca_file)
        try:
            response = await client.get(f"https://127.0.0.1:{port}/")
            return await response.content()
        finally:
            await pool.closeCachedConnections()

    async def test_two_listeners_one_port(self):
        """Two listeners bind one port; with the first closed the second still answers."""
        port = free_port()
        first = await self.listen(port, b"first")
        await self.listen(port, b"second")
        self.assertEqual(first.getHost().port, port)
        self.assertIn(await self.fetch(port), (b"first", b"second"))
        await first.stopListening()
        self.assertEqual(await self.fetch(port), b"second")

    async def test_plain_listener_refused(self):
        """Without SO_REUSEPORT a second listener on the port fails (the default)."""
        port = free_port()
        await self.listen(port, b"first")
        endpoint = secure_endpoint(reactor, {"secure-port": port, "bind-address": "127.0.0.1"},
                                   self.tls)
        with self.assertRaises(Exception) as caught:
            await endpoint.listen(Site(Answer(b"x")))
        self.assertIn("Address already in use", str(caught.exception))

    def test_choice(self):
        """secure_endpoint picks the SO_REUSEPORT endpoint only with --reuse-port."""
        options = {"secure-port": 6443, "bind-address": "0.0.0.0", "reuse-port": True}
        self.assertIsInstance(secure_endpoint(reactor, options, self.tls),
                              ReusePortSSLServerEndpoint)
