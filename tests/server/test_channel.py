# -*- test-case-name: tests.server.test_channel -*-
"""
L{kubetwist.server.channel}: the secure port's header limits, as kube-apiserver v1.32 has
them (measured: a request line and headers of 1052672 bytes are answered, 1052673 get Go's
431).
"""

from __future__ import annotations

import h2.config
import h2.connection
import h2.events
import h2.settings
from twisted.internet.address import IPv4Address
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.resource import Resource

from kubetwist.server.channel import (
    H2_HEADER_LIST_LIMIT,
    HTTP1_HEADER_LIMIT,
    TOO_LARGE_RESPONSE,
    KubeH2Connection,
    KubeHTTPChannel,
    KubeSite,
)

#: A 10,000-term label selector (about 118 KB), the issue's reproduction.
SELECTOR = ",".join(f"k{i}=v{i}" for i in range(10000)).encode()


class Echo(Resource):
    """Answers the length of the request's URI."""

    isLeaf = True

    def render_GET(self, request):
        return b"%d" % len(request.uri)


class H2Transport(StringTransport):
    negotiatedProtocol = b"h2"


class HTTP1Tests(SynchronousTestCase):
    def connect(self, transport=None):
        self.clock = Clock()
        site = KubeSite(Echo(), reactor=self.clock)
        protocol = site.buildProtocol(IPv4Address("TCP", "127.0.0.1", 1))
        transport = transport or StringTransport()
        protocol.makeConnection(transport)
        return protocol, transport

    def request(self, target: bytes, total: int | None = None) -> bytes:
        """Send one GET; pad it with an X-Pad header to C{total} bytes when given."""
        protocol, transport = self.connect()
        head = b"GET " + target + b" HTTP/1.1\r\nHost: x\r\n"
        if total is not None:
            pad = total - len(head) - len(b"X-Pad: \r\n\r\n")
            head += b"X-Pad: " + b"a" * pad + b"\r\n"
        data = head + b"\r\n"
        if total is not None:
            self.assertEqual(len(data), total)
        # in TLS-record-sized pieces, as a connection delivers them
        for i in range(0, len(data), 16384):
            protocol.dataReceived(data[i:i + 16384])
        self.transport = transport
        return transport.value()

    def test_long_selector(self):
        """A 118 KB URL is answered (Twisted alone drops the connection)."""
        target = b"/api/v1/configmaps?labelSelector=" + SELECTOR
        self.assertGreater(len(target), 117000)
        answer = self.request(target)
        self.assertTrue(answer.startswith(b"HTTP/1.1 200 OK\r\n"), answer[:100])
        self.assertTrue(answer.endswith(b"\r\n\r\n%d" % len(target)), answer[-100:])

    def test_limit(self):
        """1 MiB + 4096 bytes of request line and headers pass; one byte more is 431, and the
        connection closes half a second later."""
        answer = self.request(b"/", HTTP1_HEADER_LIMIT)
        self.assertTrue(answer.startswith(b"HTTP/1.1 200 OK\r\n"), answer[:100])
        answer = self.request(b"/", HTTP1_HEADER_LIMIT + 1)
        self.assertEqual(answer, TOO_LARGE_RESPONSE)
        self.assertFalse(self.transport.disconnecting)
        self.clock.advance(0.5)
        self.assertTrue(self.transport.disconnecting)

    def test_one_long_line(self):
        """A line longer than the limit is refused as soon as the limit is passed, before
        its end arrives; what follows is ignored."""
        protocol, transport = self.connect()
        protocol.dataReceived(b"GET /" + b"a" * HTTP1_HEADER_LIMIT)
        self.assertEqual(transport.value(), TOO_LARGE_RESPONSE)
        protocol.dataReceived(b"a" * 100 + b" HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n")
        self.assertEqual(transport.value(), TOO_LARGE_RESPONSE)

    def test_many_headers(self):
        """The number of headers is not limited (Go counts bytes only; Twisted allows
        500)."""
        protocol, transport = self.connect()
        headers = b"".join(b"X-H%d: v\r\n" % i for i in range(2000))
        protocol.dataReceived(b"GET / HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n")
        self.assertTrue(transport.value().startswith(b"HTTP/1.1 200 OK\r\n"))

    def test_keepalive(self):
        """The count starts again with each request of a connection."""
        protocol, transport = self.connect()
        request = b"GET /" + b"a" * (HTTP1_HEADER_LIMIT // 2) + b" HTTP/1.1\r\nHost: x\r\n\r\n"
        for _ in range(3):
            protocol.dataReceived(request)
        self.assertEqual(transport.value().count(b"HTTP/1.1 200 OK\r\n"), 3)

    def test_channel(self):
        protocol, _ = self.connect()
        self.assertIsInstance(protocol._channel, KubeHTTPChannel)


class HTTP2Tests(SynchronousTestCase):
    def setUp(self):
        self.clock = Clock()
        site = KubeSite(Echo(), reactor=self.clock)
        self.protocol = site.buildProtocol(IPv4Address("TCP", "127.0.0.1", 1))
        self.transport = H2Transport()
        self.protocol.makeConnection(self.transport)
        self.client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.client.initiate_connection()
        # hpack's Huffman coder takes seconds for a megabyte: send literals
        encode = self.client.encoder.encode
        self.client.encoder.encode = lambda headers, huffman=True: encode(headers, False)
        self.client.local_settings = h2.settings.Settings(
            client=True, initial_values={h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE: 1 << 24})
        self.pump()

    def pump(self) -> list:
        events = []
        for _ in range(20):
            data = self.client.data_to_send()
            if data:
                self.protocol.dataReceived(data)
            self.clock.advance(0)
            out = self.transport.value()
            self.transport.clear()
            if out:
                events += self.client.receive_data(out)
        return events

    def get(self, path: bytes) -> list:
        self.client.send_headers(1, [(b":method", b"GET"), (b":path", path),
                                     (b":scheme", b"https"), (b":authority", b"x")],
                                 end_stream=True)
        return self.pump()

    def test_settings(self):
        """The server advertises the larger header list limit."""
        self.assertIsInstance(self.protocol._channel, KubeH2Connection)
        self.assertEqual(self.client.remote_settings.max_header_list_size, H2_HEADER_LIST_LIMIT)

    def test_long_selector(self):
        """A 118 KB path is answered over HTTP/2 too (h2 alone takes 64 KiB)."""
        path = b"/api/v1/configmaps?labelSelector=" + SELECTOR
        events = self.get(path)
        responses = [e for e in events if isinstance(e, h2.events.ResponseReceived)]
        self.assertEqual(dict(responses[0].headers)[b":status"], b"200", events)
        data = b"".join(e.data for e in events if isinstance(e, h2.events.DataReceived))
        self.assertEqual(data, b"%d" % len(path), events)

    def test_beyond_limit(self):
        """Past the limit the connection ends."""
        events = self.get(b"/" + b"a" * H2_HEADER_LIST_LIMIT)
        self.assertTrue(any(isinstance(e, h2.events.ConnectionTerminated) for e in events),
                        events)
