# -*- test-case-name: tests.storage.test_etcd3_client -*-
"""
L{kubetwist.storage.etcd3.client.GatewayClient}: request bytes, the answer parser, kept-alive
connections, reconnects without a second txn, oversized answers and cancellation, driven in
memory (an endpoint handing out C{StringTransport}s); then against a real etcd (plain and
TLS), where the connection count and an etcd restart under kept connections are checked.
"""

from __future__ import annotations

import socket

import orjson
from twisted.internet import reactor
from twisted.internet.defer import CancelledError, fail, succeed
from twisted.internet.error import ConnectionDone, ConnectionRefusedError
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransportWithDisconnection
from twisted.trial.unittest import SynchronousTestCase, TestCase
from twisted.web.client import ResponseFailed, ResponseNeverReceived

from kubetwist.storage.etcd3 import Etcd3Storage, EtcdError, new_etcd_client
from kubetwist.storage.etcd3.client import GatewayClient, ResponseTooLarge
from kubetwist.storage.interfaces import UnreachableError
from tests.storage.contract import pod
from tests.storage.test_etcd3 import EtcdTestMixin

BASE = "http://etcd.example:2379"


class Transport(StringTransportWithDisconnection):
    """A C{StringTransport} whose close reaches the protocol; C{sock} backs C{getHandle}."""

    sock: socket.socket | None = None
    aborted = False

    def abortConnection(self):
        self.aborted = True
        self.loseConnection()

    def getHandle(self):
        return self.sock


class FakeEndpoint:
    """An C{IStreamClientEndpoint} connecting to in-memory transports (or refusing)."""

    def __init__(self) -> None:
        self.connections: list[tuple[object, Transport]] = []
        self.refuse = False

    def connect(self, factory):
        if self.refuse:
            return fail(ConnectionRefusedError())
        protocol = factory.buildProtocol(None)
        transport = Transport()
        transport.protocol = protocol
        protocol.makeConnection(transport)
        self.connections.append((protocol, transport))
        return succeed(protocol)

    def last(self) -> tuple[object, Transport]:
        return self.connections[-1]


def answer(body: bytes, code: int = 200, headers: bytes = b"") -> bytes:
    """An HTTP/1.1 answer with a Content-Length."""
    return (b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\n%bContent-Length: %d\r\n\r\n%b"
            % (code, headers, len(body), body))


def chunked(*chunks: bytes, trailer: bytes = b"") -> bytes:
    out = [b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n"]
    for chunk in chunks:
        out.append(b"%x;ext=1\r\n%b\r\n" % (len(chunk), chunk))
    out.append(b"0\r\n" + trailer + b"\r\n")
    return b"".join(out)


class ClientTestBase(SynchronousTestCase):
    max_response_bytes = 1 << 20

    def setUp(self) -> None:
        self.clock = Clock()
        self.client = GatewayClient(self.clock, max_response_bytes=self.max_response_bytes)
        self.fake = FakeEndpoint()
        self.client.endpoint_for(BASE).endpoint = self.fake

    def call(self, path: str = "/v3/kv/range", body: bytes = b'{"key":"YQ=="}',
             idempotent: bool = True):
        return self.client.unary(BASE, path, body, idempotent)

    def serve(self, data: bytes, pieces: int = 0) -> None:
        """The last connection receives C{data} (in pieces of C{pieces} bytes when given)."""
        protocol, _ = self.fake.last()
        if not pieces:
            protocol.dataReceived(data)
            return
        for i in range(0, len(data), pieces):
            protocol.dataReceived(data[i:i + pieces])


class RequestTests(ClientTestBase):
    """The request bytes."""

    def test_request_bytes(self):
        """One POST with Host, JSON content type and Content-Length, body as given."""
        self.call("/v3/kv/txn", b'{"compare":[]}', idempotent=False)
        _, transport = self.fake.last()
        self.assertEqual(transport.value(), (
            b"POST /v3/kv/txn HTTP/1.1\r\nHost: etcd.example:2379\r\n"
            b"Content-Type: application/json\r\nAccept: application/json\r\n"
            b"Content-Length: 14\r\n\r\n{\"compare\":[]}"))

    def test_path_prefix_of_endpoint(self):
        """An endpoint URL with a path puts it before the call's path."""
        base = "https://etcd.example/gw/"
        self.client.endpoint_for(base).endpoint = self.fake
        self.client.unary(base, "/v3/kv/range", b"{}")
        self.assertTrue(self.fake.last()[1].value().startswith(
            b"POST /gw/v3/kv/range HTTP/1.1\r\nHost: etcd.example\r\n"))

    def test_bad_endpoint(self):
        """An endpoint that is not an http(s) URL is a ValueError."""
        self.assertRaises(ValueError, self.client.unary, "unix:///x", "/v3/kv/range", b"{}")


class ParserTests(ClientTestBase):
    """The answer parser: Content-Length, chunked, interim answers, broken answers."""

    def test_content_length_any_split(self):
        """An answer cut at any byte boundary reads the same."""
        body = orjson.dumps({"header": {"revision": "7"}, "kvs": [{"key": "YQ=="}] * 20})
        for pieces in (0, 1, 7, 100):
            d = self.call()
            self.serve(answer(body), pieces)
            self.assertEqual(self.successResultOf(d), (200, body))
        self.assertEqual(len(self.fake.connections), 1)

    def test_chunked_any_split(self):
        """A chunked answer (extensions, a trailer) is joined; the connection is kept."""
        for pieces in (0, 1, 5):
            d = self.call()
            self.serve(chunked(b'{"a":', b'"' + b"x" * 3000 + b'"}',
                               trailer=b"Grpc-Trailer: 0\r\n"), pieces)
            self.assertEqual(self.successResultOf(d), (200, b'{"a":"' + b"x" * 3000 + b'"}'))
        self.assertEqual(len(self.fake.connections), 1)
        self.assertEqual(self.client.connection_count(), 1)

    def test_error_status_is_an_answer(self):
        """A non-200 answer is returned with its code (the store reads the gRPC error)."""
        d = self.call()
        self.serve(answer(b'{"code":14}', code=503))
        self.assertEqual(self.successResultOf(d), (503, b'{"code":14}'))

    def test_interim_answer_skipped(self):
        """A 100 Continue before the answer is skipped."""
        d = self.call()
        self.serve(b"HTTP/1.1 100 Continue\r\n\r\n" + answer(b"{}"), 3)
        self.assertEqual(self.successResultOf(d), (200, b"{}"))

    def test_until_close(self):
        """Without a length or chunking the body ends with the connection, not kept."""
        d = self.call()
        self.serve(b"HTTP/1.1 200 OK\r\n\r\n{\"a\"")
        self.serve(b":1}")
        self.assertNoResult(d)
        self.fake.last()[1].loseConnection()
        self.assertEqual(self.successResultOf(d), (200, b'{"a":1}'))
        self.assertEqual(self.client.connection_count(), 0)

    def test_not_http(self):
        """Garbage instead of HTTP/1.x fails with ResponseFailed and aborts."""
        d = self.call()
        self.serve(b"SSH-2.0-OpenSSH\r\n\r\n")
        self.failureResultOf(d, ResponseFailed)
        self.assertTrue(self.fake.last()[1].aborted)

    def test_bad_chunk(self):
        """A chunk size that is not hex fails with ResponseFailed."""
        d = self.call()
        self.serve(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
        self.failureResultOf(d, ResponseFailed)

    def test_lost_inside_body(self):
        """A connection lost inside the body fails with ResponseFailed (no retry)."""
        d = self.call()
        self.serve(answer(b'{"a":1}')[:-3])
        self.fake.last()[1].loseConnection()
        self.failureResultOf(d, ResponseFailed)
        self.assertEqual(len(self.fake.connections), 1)

    def test_unsolicited_bytes_close_idle(self):
        """Bytes on an idle connection (nothing asked) abort it: it is not reused."""
        d = self.call()
        self.serve(answer(b"{}"))
        self.successResultOf(d)
        self.serve(b"HTTP/1.1 200 OK\r\n")
        self.assertTrue(self.fake.last()[1].aborted)
        self.assertEqual(self.client.connection_count(), 0)

    def test_connection_close_header(self):
        """An answer with Connection: close ends the connection; the next call opens one."""
        d = self.call()
        self.serve(answer(b"{}", headers=b"Connection: close\r\n"))
        self.successResultOf(d)
        self.assertFalse(self.fake.last()[1].connected)
        self.call()
        self.assertEqual(len(self.fake.connections), 2)


class PoolTests(ClientTestBase):
    """Keep-alive, concurrency, idle limits and closing."""

    def test_reuse(self):
        """Sequential calls share one connection; concurrent ones get their own."""
        for _ in range(3):
            d = self.call()
            self.serve(answer(b"{}"))
            self.successResultOf(d)
        self.assertEqual(len(self.fake.connections), 1)
        first, second = self.call(), self.call()
        self.assertEqual(len(self.fake.connections), 2)
        self.fake.connections[0][0].dataReceived(answer(b"1"))
        self.fake.connections[1][0].dataReceived(answer(b"2"))
        self.assertEqual((self.successResultOf(first), self.successResultOf(second)),
                         ((200, b"1"), (200, b"2")))
        self.assertEqual(self.client.connection_count(), 2)

    def test_idle_limit(self):
        """Beyond max_persistent_per_host idle connections, a finished one is closed."""
        self.client.max_persistent_per_host = 1
        first, second = self.call(), self.call()
        self.fake.connections[0][0].dataReceived(answer(b"1"))
        self.fake.connections[1][0].dataReceived(answer(b"2"))
        self.successResultOf(first)
        self.successResultOf(second)
        self.assertEqual(self.client.connection_count(), 1)
        self.assertFalse(self.fake.connections[1][1].connected)

    def test_idle_timeout(self):
        """A connection idle longer than idle_timeout is closed instead of reused."""
        d = self.call()
        self.serve(answer(b"{}"))
        self.successResultOf(d)
        self.clock.advance(self.client.idle_timeout + 1)
        self.call()
        self.assertEqual(len(self.fake.connections), 2)
        self.assertFalse(self.fake.connections[0][1].connected)

    def test_closed_while_idle(self):
        """A kept connection the server closes is dropped; the next call opens a new one."""
        d = self.call()
        self.serve(answer(b"{}"))
        self.successResultOf(d)
        self.fake.last()[1].loseConnection()
        self.assertEqual(self.client.connection_count(), 0)
        d = self.call(idempotent=False)
        self.assertEqual(len(self.fake.connections), 2)
        self.serve(answer(b"{}"))
        self.successResultOf(d)

    def test_close_cached(self):
        """closeCachedConnections closes idle ones; a running call's closes when it ends."""
        idle = self.call()
        running = self.call()
        self.fake.connections[0][0].dataReceived(answer(b"{}"))
        self.successResultOf(idle)
        closed = self.client.closeCachedConnections()
        self.successResultOf(closed)
        self.assertFalse(self.fake.connections[0][1].connected)
        self.fake.connections[1][0].dataReceived(answer(b"{}"))
        self.successResultOf(running)
        self.assertFalse(self.fake.connections[1][1].connected)

    def test_refused(self):
        """A refused connect fails with the ConnectError (certainly not sent)."""
        self.fake.refuse = True
        self.failureResultOf(self.call(), ConnectionRefusedError)


class RetryTests(ClientTestBase):
    """A stale kept connection: reads are sent again, writes never."""

    def kept(self) -> None:
        d = self.call()
        self.serve(answer(b"{}"))
        self.successResultOf(d)

    def test_read_retried_once_on_new_connection(self):
        """A read on a kept connection that dies unanswered is sent once more, elsewhere."""
        self.kept()
        d = self.call(body=b'{"key":"Yg=="}')
        first = self.fake.last()[1]
        self.assertTrue(first.value().endswith(b'{"key":"Yg=="}'))
        first.loseConnection()
        self.assertEqual(len(self.fake.connections), 2)
        self.assertTrue(self.fake.last()[1].value().endswith(b'{"key":"Yg=="}'))
        self.serve(answer(b"ok"))
        self.assertEqual(self.successResultOf(d), (200, b"ok"))

    def test_read_not_retried_twice(self):
        """The retry's own failure is the call's: no third attempt."""
        self.kept()
        d = self.call()
        self.fake.last()[1].loseConnection()
        self.fake.last()[1].loseConnection()
        self.failureResultOf(d, ResponseNeverReceived)
        self.assertEqual(len(self.fake.connections), 2)

    def test_fresh_connection_not_retried(self):
        """A read on a new connection that dies unanswered fails (nothing was stale)."""
        d = self.call()
        self.fake.last()[1].loseConnection()
        self.failureResultOf(d, ResponseNeverReceived)
        self.assertEqual(len(self.fake.connections), 1)

    def test_txn_never_sent_twice(self):
        """A txn on a kept connection that dies unanswered fails; it is written once only."""
        self.kept()
        d = self.call("/v3/kv/txn", b'{"compare":[]}', idempotent=False)
        self.fake.last()[1].loseConnection()
        failure = self.failureResultOf(d, ResponseNeverReceived)
        self.assertIsInstance(failure.value.reasons[0].value, ConnectionDone)
        self.assertEqual(len(self.fake.connections), 1)
        self.assertEqual(self.fake.last()[1].value().count(b"POST /v3/kv/txn"), 1)

    def test_txn_skips_connection_closed_by_peer(self):
        """
        Before a txn is written on a kept connection its socket is peeked: an end of stream
        the reactor has not read yet drops the connection, and the txn goes on a new one.
        """
        self.kept()
        ours, theirs = socket.socketpair()
        self.addCleanup(ours.close)
        self.fake.last()[1].sock = ours
        theirs.close()
        d = self.call("/v3/kv/txn", b"{}", idempotent=False)
        self.assertEqual(len(self.fake.connections), 2)
        self.assertNotIn(b"/v3/kv/txn", self.fake.connections[0][1].value())
        self.serve(answer(b"{}"))
        self.successResultOf(d)

    def test_txn_uses_live_kept_connection(self):
        """A kept connection whose socket has nothing to read is reused for a txn."""
        self.kept()
        ours, theirs = socket.socketpair()
        self.addCleanup(ours.close)
        self.addCleanup(theirs.close)
        self.fake.last()[1].sock = ours
        self.call("/v3/kv/txn", b"{}", idempotent=False)
        self.assertEqual(len(self.fake.connections), 1)


class LimitTests(ClientTestBase):
    """Oversized answers and cancellation."""

    max_response_bytes = 100

    def test_content_length_too_large(self):
        """A Content-Length above the bound fails at once; the connection is aborted."""
        d = self.call()
        self.serve(answer(b"x" * 101)[:80])
        error = self.failureResultOf(d, ResponseTooLarge).value
        self.assertEqual(str(error), "grpc: received message larger than max (101 vs. 100)")
        self.assertTrue(self.fake.last()[1].aborted)
        self.assertEqual(self.client.connection_count(), 0)

    def test_exactly_the_bound(self):
        """An answer of exactly max_response_bytes is read."""
        d = self.call()
        self.serve(answer(b"x" * 100))
        self.assertEqual(self.successResultOf(d), (200, b"x" * 100))

    def test_chunks_too_large(self):
        """Chunks adding up beyond the bound fail before the rest is read."""
        d = self.call()
        self.serve(chunked(b"x" * 60, b"y" * 60)[:-20])
        self.failureResultOf(d, ResponseTooLarge)
        self.assertTrue(self.fake.last()[1].aborted)

    def test_until_close_too_large(self):
        """A body read until the close is bounded too."""
        d = self.call()
        self.serve(b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * 101)
        self.failureResultOf(d, ResponseTooLarge)

    def test_headers_too_large(self):
        """Headers without an end beyond 64 KiB fail."""
        d = self.call()
        self.serve(b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * 9000)
        self.failureResultOf(d, ResponseTooLarge)

    def test_cancel_aborts(self):
        """Cancelling a call (the store's deadline) aborts its connection: not reused."""
        d = self.call()
        d.cancel()
        self.failureResultOf(d, CancelledError)
        self.assertTrue(self.fake.last()[1].aborted)
        self.assertEqual(self.client.connection_count(), 0)
        self.call()
        self.assertEqual(len(self.fake.connections), 2)


class StoreMappingTests(ClientTestBase):
    """The store's errors for the client's failures are those it had with treq."""

    def store(self) -> Etcd3Storage:
        return Etcd3Storage(self.clock, self.client, [BASE], request_timeout=5.0)

    def test_txn_lost_is_unreachable_once(self):
        """A create whose kept connection dies unanswered: UnreachableError, one txn sent."""
        store = self.store()
        d = store.count("/registry/pods")
        self.serve(answer(orjson.dumps({"header": {"revision": "3"}})))
        self.assertEqual(self.successResultOf(d), 0)
        d = store.create("/registry/pods/ns/a", pod("a"))
        self.fake.last()[1].loseConnection()
        error = self.failureResultOf(d, UnreachableError).value
        self.assertIn("ResponseNeverReceived", str(error))
        self.assertEqual(self.fake.last()[1].value().count(b"POST /v3/kv/txn"), 1)
        self.assertEqual(len(self.fake.connections), 1)

    def test_txn_lost_not_sent_to_next_endpoint(self):
        """
        A txn whose connection died after it was written is not tried on the next member
        (it may have been applied); a refused connect is, and a read always is.
        """
        other = "http://other.example:2379"
        second = FakeEndpoint()
        self.client.endpoint_for(other).endpoint = second
        store = Etcd3Storage(self.clock, self.client, [BASE, other])
        d = store.create("/registry/pods/ns/a", pod("a"))
        self.fake.last()[1].loseConnection()
        self.failureResultOf(d, UnreachableError)
        self.assertEqual(second.connections, [])
        d = store.get("/registry/pods/ns/a", ignore_not_found=True)
        self.fake.last()[1].loseConnection()
        second.last()[0].dataReceived(answer(orjson.dumps({"header": {"revision": "3"}})))
        self.assertIsNone(self.successResultOf(d))
        self.fake.refuse = True
        store._current = 0
        d = store.create("/registry/pods/ns/a", pod("a"))
        self.assertIn(b"/v3/kv/txn", second.last()[1].value())

    def test_oversized_is_resource_exhausted(self):
        """An oversized answer is EtcdError code 8 (gRPC ResourceExhausted), as clientv3."""
        self.client.max_response_bytes = 10
        d = self.store().get("/registry/pods/ns/a", ignore_not_found=True)
        self.serve(answer(b"{" + b" " * 20 + b"}"))
        error = self.failureResultOf(d, EtcdError).value
        self.assertEqual(error.code, 8)
        self.assertEqual(str(error), "grpc: received message larger than max (22 vs. 10)")

    def test_deadline(self):
        """An unanswered call fails at request_timeout with the treq-era message."""
        d = self.store().get("/registry/pods/ns/a", ignore_not_found=True)
        self.clock.advance(5.0)
        error = self.failureResultOf(d, UnreachableError).value
        self.assertEqual(str(error), f"etcd: no endpoint reachable ({BASE}): "
                                     "context deadline exceeded")
        self.assertTrue(self.fake.last()[1].aborted)


class CountingEndpoint:
    """Wraps a real endpoint, counting the connections made through it."""

    def __init__(self, endpoint) -> None:
        self.endpoint = endpoint
        self.count = 0

    def connect(self, factory):
        self.count += 1
        return self.endpoint.connect(factory)


class RealEtcdTests(EtcdTestMixin, TestCase):
    """The client against a real etcd."""

    def counted(self, client: GatewayClient) -> CountingEndpoint:
        endpoint = client.endpoint_for(self.etcd.url)
        endpoint.endpoint = counter = CountingEndpoint(endpoint.endpoint)
        return counter

    async def test_kept_alive(self):
        """Sequential calls of a store go over one connection."""
        client = self.client()
        counter = self.counted(client)
        store = self.new_store(client)
        for name in "abcde":
            await store.create(f"/registry/pods/ns/{name}", pod(name))
            await store.get(f"/registry/pods/ns/{name}")
        self.assertEqual(counter.count, 1)
        self.assertEqual(client.connection_count(), 1)

    async def test_chunked_large_answer(self):
        """A range answer above Go's 2 KiB buffer (sent chunked) is read whole."""
        store = self.new_store(self.client())
        big = pod("big")
        big["metadata"]["annotations"] = {"x": "y" * 100_000}
        created = await store.create("/registry/pods/ns/big", big)
        self.assertEqual(await store.get("/registry/pods/ns/big"), created)

    async def test_restart_under_kept_connections(self):
        """
        etcd restarted while a connection is kept: the next write notices the closed socket
        before writing and uses a new connection; so does a read (sent again).
        """
        client = self.client()
        counter = self.counted(client)
        store = self.new_store(client)
        await store.create("/registry/pods/ns/a", pod("a"))
        self.etcd.halt()
        self.etcd.start()
        created = await store.create("/registry/pods/ns/b", pod("b"))
        self.assertEqual(counter.count, 2)
        self.etcd.halt()
        self.etcd.start()
        self.assertEqual(await store.get("/registry/pods/ns/b"), created)
        self.assertEqual(counter.count, 3)

    def test_new_etcd_client_shape(self):
        """new_etcd_client gives (client, pool) with the pool's closeCachedConnections."""
        client, pool = new_etcd_client(reactor)
        self.assertIs(client, pool)
        return pool.closeCachedConnections()


