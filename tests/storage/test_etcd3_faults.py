# -*- test-case-name: tests.storage.test_etcd3_faults -*-
"""
etcd faults as L{kubetwist.storage.etcd3.Etcd3Storage} meets them, against the fake gateway of
L{tests.storage.test_etcd3_gateway} on a fake clock: per-call deadlines, failover on
C{Unavailable}, watches that reconnect with backoff and resume without loss or repetition,
the compaction transaction and the rate-limited health probe.
"""

from __future__ import annotations

import orjson
from treq.testing import StubTreq
from twisted.internet.defer import fail
from twisted.internet.error import ConnectionRefusedError
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.server import NOT_DONE_YET

from kubetwist.storage.compaction import CompactTxnResult
from kubetwist.storage.etcd3 import Etcd3Storage, EtcdError
from kubetwist.storage.interfaces import UnreachableError
from tests.storage.test_etcd3_gateway import FakeGateway, b64, header, kv


class HangingGateway(FakeGateway):
    """A L{FakeGateway} that never answers requests to the paths in C{hang}."""

    def __init__(self) -> None:
        super().__init__()
        self.hang: set[str] = set()
        self.hanging: list = []

    def render_POST(self, request):
        if request.path.decode() in self.hang:
            self.requests.append((request.path.decode(), orjson.loads(request.content.read())))
            self.hanging.append(request)
            return NOT_DONE_YET
        return super().render_POST(request)


class SwitchClient:
    """An HTTP client that refuses every connection while C{down}, else uses C{stub}."""

    def __init__(self, stub: StubTreq) -> None:
        self.stub = stub
        self.down = False
        self.urls: list[str] = []

    def post(self, url, **kwargs):
        self.urls.append(url)
        if self.down:
            return fail(ConnectionRefusedError())
        return self.stub.post(url, **kwargs)


def line(result: dict) -> bytes:
    return orjson.dumps({"result": result}) + b"\n"


KEY = "/registry/pods/ns/a"


def put(rev: int, n: int, prev: int | None = None) -> dict:
    event: dict = {"kv": kv(KEY, {"n": n}, rev, 2)}
    if prev is not None:
        event["prev_kv"] = kv(KEY, {"n": n - 1}, prev, 2)
    return event


class WatchReconnectTests(SynchronousTestCase):
    """An established watch survives a lost stream and resumes from the next revision."""

    def setUp(self) -> None:
        self.gateway = FakeGateway()
        self.treq = StubTreq(self.gateway)
        self.client = SwitchClient(self.treq)
        self.clock = Clock()
        self.store = Etcd3Storage(self.clock, self.client, ["http://etcd:2379"])
        self.events: list = []
        self.watch = self.store.watch("/registry/pods", "5", recursive=True)
        self.watch.subscribe(self.events.append)
        self.treq.flush()

    def starts(self) -> list[str]:
        return [body["create_request"]["start_revision"]
                for path, body in self.gateway.requests if path == "/v3/watch"]

    def seen(self) -> list[tuple[str, int, str]]:
        return [(e.type, e.object.get("n", e.object.get("code")),
                 e.object["metadata"]["resourceVersion"] if "metadata" in e.object else "")
                for e in self.events]

    def test_resume_after_stream_ends(self):
        """After the stream ends the watch reconnects 0.1 s later from last revision + 1."""
        stream = self.gateway.watches[0]
        stream.write(line({**header(5), "created": True}))
        stream.write(line({**header(7), "events": [put(6, 1, 2), put(7, 2, 6)]}))
        self.treq.flush()
        stream.finish()
        self.treq.flush()
        self.assertFalse(self.watch.ended)
        self.assertEqual(self.starts(), ["6"])
        self.clock.advance(0.1)
        self.treq.flush()
        self.assertEqual(self.starts(), ["6", "8"])
        again = self.gateway.watches[1]
        again.write(line({**header(8), "created": True}))
        again.write(line({**header(8), "events": [put(8, 3, 7)]}))
        self.treq.flush()
        self.assertEqual(self.seen(), [("MODIFIED", 1, "6"), ("MODIFIED", 2, "7"),
                                       ("MODIFIED", 3, "8")])
        self.watch.stop()
        self.treq.flush()

    def test_no_repeated_event(self):
        """Events at or below the last delivered revision are not delivered again."""
        stream = self.gateway.watches[0]
        stream.write(line({**header(6), "events": [put(6, 1, 2)]}))
        self.treq.flush()
        stream.finish()
        self.treq.flush()
        self.clock.advance(0.1)
        self.treq.flush()
        self.gateway.watches[1].write(line({**header(7), "events": [put(6, 1, 2), put(7, 2, 6)]}))
        self.treq.flush()
        self.assertEqual(self.seen(), [("MODIFIED", 1, "6"), ("MODIFIED", 2, "7")])
        self.watch.stop()
        self.treq.flush()

    def test_partial_line_dropped_and_refetched(self):
        """A line cut off by the lost connection is not delivered; the reconnect asks again."""
        stream = self.gateway.watches[0]
        data = line({**header(6), "events": [put(6, 1, 2)]})
        stream.write(data[:20])
        self.treq.flush()
        stream.finish()
        self.treq.flush()
        self.assertEqual(self.events, [])
        self.clock.advance(0.1)
        self.treq.flush()
        self.assertEqual(self.starts(), ["6", "6"])
        self.watch.stop()
        self.treq.flush()

    def test_backoff_while_down(self):
        """Reconnects back off 0.1, 0.2, 0.4 s ... up to 3 s; a created answer resets it."""
        self.gateway.watches[0].finish()
        self.treq.flush()
        self.client.down = True
        attempts = []
        for step in [0.1, 0.2, 0.4, 0.8, 1.6, 3.0, 3.0]:
            before = len(self.client.urls)
            self.clock.advance(step - 0.01)
            self.treq.flush()
            self.assertEqual(len(self.client.urls), before)
            self.clock.advance(0.011)
            self.treq.flush()
            attempts.append(len(self.client.urls) - before)
        self.assertEqual(attempts, [1] * 7)
        self.assertFalse(self.watch.ended)
        self.assertEqual(self.events, [])
        self.client.down = False
        self.clock.advance(3.0)
        self.treq.flush()
        self.gateway.watches[-1].write(line({**header(5), "created": True}))
        self.treq.flush()
        self.gateway.watches[-1].finish()
        self.treq.flush()
        before = len(self.client.urls)
        self.clock.advance(0.1)
        self.treq.flush()
        self.assertEqual(len(self.client.urls), before + 1)
        self.watch.stop()
        self.treq.flush()

    def test_progress_notify_moves_resume_point(self):
        """A progress notification (no events, not created) advances the resume revision."""
        stream = self.gateway.watches[0]
        stream.write(line({**header(5), "created": True}))
        stream.write(line({**header(20)}))
        self.treq.flush()
        stream.finish()
        self.treq.flush()
        self.clock.advance(0.1)
        self.treq.flush()
        self.assertEqual(self.starts(), ["6", "21"])
        self.watch.stop()
        self.treq.flush()

    def test_compacted_gap(self):
        """A reconnect into a compacted gap ends the watch with 410 Expired."""
        stream = self.gateway.watches[0]
        stream.write(line({**header(6), "events": [put(6, 1, 2)]}))
        self.treq.flush()
        stream.finish()
        self.treq.flush()
        self.clock.advance(0.1)
        self.treq.flush()
        self.gateway.watches[1].write(line({**header(30), "canceled": True,
                                            "compact_revision": "25"}))
        self.treq.flush()
        self.assertEqual([(e.type, e.object.get("code"), e.object.get("reason"),
                           e.object.get("message")) for e in self.events[1:]],
                         [("ERROR", 410, "Expired", "too old resource version: 6 (25)")])
        self.assertTrue(self.watch.ended)

    def test_unavailable_stream_error_reconnects(self):
        """An C{Unavailable} error line (etcd stopping) reconnects instead of ending."""
        stream = self.gateway.watches[0]
        stream.write(orjson.dumps({"error": {"grpc_code": 14, "http_code": 503,
                                             "message": "etcdserver: server stopped"}}) + b"\n")
        self.treq.flush()
        self.assertFalse(self.watch.ended)
        self.assertEqual(len(self.gateway.finished), 1)
        self.clock.advance(0.1)
        self.treq.flush()
        self.assertEqual(self.starts(), ["6", "6"])
        self.watch.stop()
        self.treq.flush()

    def test_fatal_stream_error_ends(self):
        """A C{PermissionDenied} error line ends the watch with a 500 ERROR."""
        self.gateway.watches[0].write(orjson.dumps({"error": {
            "grpc_code": 7, "message": "etcdserver: permission denied"}}) + b"\n")
        self.treq.flush()
        self.assertEqual([(e.type, e.object["code"]) for e in self.events], [("ERROR", 500)])
        self.assertTrue(self.watch.ended)

    def test_stop_during_backoff(self):
        """Stopping a watch that waits to reconnect cancels the reconnect."""
        self.gateway.watches[0].finish()
        self.treq.flush()
        self.watch.stop()
        before = len(self.client.urls)
        self.clock.advance(10)
        self.treq.flush()
        self.assertEqual(len(self.client.urls), before)
        self.assertEqual(self.clock.getDelayedCalls(), [])


class CallFaultTests(SynchronousTestCase):
    """Unary calls: deadlines, failover and C{Unavailable} answers."""

    def test_deadline_then_next_endpoint(self):
        """A call unanswered after request_timeout seconds moves on to the next endpoint."""
        hanging, answering = HangingGateway(), FakeGateway()
        hanging.hang.add("/v3/kv/range")
        stubs = {"http://a": StubTreq(hanging), "http://b": StubTreq(answering)}

        class Client:
            def post(self, url, **kwargs):
                return stubs[url[:8]].post(url, **kwargs)

        clock = Clock()
        store = Etcd3Storage(clock, Client(), ["http://a:2379", "http://b:2379"],
                             request_timeout=5.0)
        answering.answer({**header(3)})
        d = store.get("/registry/pods/x", ignore_not_found=True)
        stubs["http://a"].flush()
        self.assertNoResult(d)
        clock.advance(4.9)
        self.assertNoResult(d)
        clock.advance(0.1)
        stubs["http://b"].flush()
        self.assertIsNone(self.successResultOf(d))
        self.assertEqual(store._current, 1)

    def test_deadline_unreachable(self):
        """With every endpoint silent the call fails with UnreachableError at the deadline."""
        gateway = HangingGateway()
        gateway.hang.add("/v3/kv/txn")
        stub = StubTreq(gateway)
        clock = Clock()
        store = Etcd3Storage(clock, stub, ["http://a:2379"], request_timeout=2.0)
        d = store.create("/registry/pods/ns/a", {})
        stub.flush()
        clock.advance(2.0)
        stub.flush()
        error = self.failureResultOf(d, UnreachableError).value
        self.assertEqual(str(error), "etcd: no endpoint reachable (http://a:2379): "
                                     "context deadline exceeded")

    def unavailable(self) -> dict:
        return {"error": "etcdserver: no leader", "message": "etcdserver: no leader", "code": 14}

    def test_unavailable_read_fails_over(self):
        """A read answered C{Unavailable} is tried on the next endpoint."""
        gateway = FakeGateway()
        stub = StubTreq(gateway)
        store = Etcd3Storage(Clock(), stub, ["http://a:2379", "http://b:2379"])
        gateway.answer(self.unavailable(), code=503)
        gateway.answer({**header(4)})
        d = store.get("/registry/pods/x", ignore_not_found=True)
        stub.flush()
        self.assertIsNone(self.successResultOf(d))
        self.assertEqual(len(gateway.requests), 2)

    def test_unavailable_write_is_unreachable(self):
        """A write answered C{Unavailable} is not retried: UnreachableError (the API's 503)."""
        gateway = FakeGateway()
        stub = StubTreq(gateway)
        store = Etcd3Storage(Clock(), stub, ["http://a:2379", "http://b:2379"])
        gateway.answer(self.unavailable(), code=503)
        d = store.create("/registry/pods/ns/a", {})
        stub.flush()
        error = self.failureResultOf(d, UnreachableError).value
        self.assertEqual(str(error), "etcd: etcdserver: no leader")
        self.assertEqual(len(gateway.requests), 1)

    def test_other_errors_are_etcd_errors(self):
        """Other gRPC errors are L{EtcdError}s carrying the code, without failover."""
        gateway = FakeGateway()
        stub = StubTreq(gateway)
        store = Etcd3Storage(Clock(), stub, ["http://a:2379", "http://b:2379"])
        gateway.answer({"error": "x", "message": "etcdserver: too many requests",
                        "code": 8}, code=429)
        d = store.create("/registry/pods/ns/a", {})
        stub.flush()
        error = self.failureResultOf(d, EtcdError).value
        self.assertEqual((error.code, str(error)), (8, "etcdserver: too many requests"))


class CompactTxnTests(SynchronousTestCase):
    """Upstream C{Compact}'s transaction on C{compact_rev_key} through the gateway."""

    def setUp(self) -> None:
        self.gateway = FakeGateway()
        self.treq = StubTreq(self.gateway)
        self.store = Etcd3Storage(Clock(), self.treq, ["http://etcd:2379"], prefix="/other")

    def test_success_shape(self):
        """Compare version == expected, put the revision; the key is not under the prefix."""
        self.gateway.answer({**header(40), "succeeded": True})
        d = self.store.compact_txn(3, 31)
        self.treq.flush()
        self.assertEqual(self.successResultOf(d), CompactTxnResult(True, 4, 40, 31))
        key = b64("compact_rev_key")
        self.assertEqual(self.gateway.requests, [("/v3/kv/txn", {
            "compare": [{"target": "VERSION", "key": key, "version": "3", "result": "EQUAL"}],
            "success": [{"request_put": {"key": key, "value": b64("31")}}],
            "failure": [{"request_range": {"key": key}}],
        })])

    def test_failure_reads_version(self):
        """A failed compare answers the key's version and value and the header revision."""
        self.gateway.answer({**header(52), "responses": [{"response_range": {
            **header(52), "kvs": [{"key": b64("compact_rev_key"), "value": b64("44"),
                                   "version": "7", "mod_revision": "50"}], "count": "1"}}]})
        d = self.store.compact_txn(3, 31)
        self.treq.flush()
        self.assertEqual(self.successResultOf(d), CompactTxnResult(False, 7, 52, 44))
        self.assertEqual(self.store.compact_revision, 44)

    def test_compact_records_revision(self):
        """A compaction by this store moves compact_revision forward, never back."""
        self.gateway.answer({**header(60)})
        self.gateway.answer({**header(61)})
        self.successResultOf(self._flushed(self.store.compact(50)))
        self.successResultOf(self._flushed(self.store.compact(40)))
        self.assertEqual(self.store.compact_revision, 50)
        self.assertEqual([p for p, _ in self.gateway.requests],
                         ["/v3/kv/compaction", "/v3/kv/compaction"])

    def _flushed(self, d):
        self.treq.flush()
        return d


class HealthTests(SynchronousTestCase):
    """Upstream's etcd probe: a read of <prefix>/health, 2 s deadline, one per second."""

    def test_probe_and_rate_limit(self):
        """A probe reads <prefix>/health; within 1 s the last answer is reused."""
        gateway = FakeGateway()
        stub = StubTreq(gateway)
        clock = Clock()
        store = Etcd3Storage(clock, stub, ["http://etcd:2379"])
        gateway.answer({**header(3)})
        d = store.check_health()
        stub.flush()
        self.assertIsNone(self.successResultOf(d))
        self.assertEqual(gateway.requests, [("/v3/kv/range", {"key": b64("/registry/health")})])
        clock.advance(0.5)
        self.assertIsNone(self.successResultOf(store.check_health()))
        self.assertEqual(len(gateway.requests), 1)
        clock.advance(0.5)
        gateway.answer({"error": "x", "message": "etcdserver: no leader", "code": 14}, code=503)
        d = store.check_health()
        stub.flush()
        error = self.failureResultOf(d, UnreachableError).value
        self.assertEqual(str(error), "error getting data from etcd: no endpoint reachable "
                                     "(http://etcd:2379): EtcdError: etcdserver: no leader")
        clock.advance(0.2)
        again = self.failureResultOf(store.check_health(), UnreachableError).value
        self.assertIs(again, error)

    def test_probe_deadline(self):
        """A probe unanswered for 2 s fails with a deadline reason."""
        gateway = HangingGateway()
        gateway.hang.add("/v3/kv/range")
        stub = StubTreq(gateway)
        clock = Clock()
        store = Etcd3Storage(clock, stub, ["http://etcd:2379"], request_timeout=10.0)
        d = store.check_health()
        stub.flush()
        clock.advance(2.0)
        error = self.failureResultOf(d, UnreachableError).value
        self.assertEqual(str(error), "error getting data from etcd: no endpoint reachable "
                                     "(http://etcd:2379): context deadline exceeded")
