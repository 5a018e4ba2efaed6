# -*- test-case-name: tests.storage.test_etcd3_gateway -*-
"""
Request shapes of L{kubetwist.storage.etcd3.Etcd3Storage} against a fake gRPC-JSON gateway
(a C{twisted.web} resource behind C{treq.testing.StubTreq}; no sockets, no etcd).
"""

from __future__ import annotations

import base64
import json

import orjson
from treq.testing import StubTreq
from twisted.internet.defer import fail
from twisted.internet.error import ConnectionRefusedError
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET

from kubetwist.storage.etcd3 import Etcd3Storage
from kubetwist.storage.interfaces import (
    KeyExistsError,
    ResourceVersionExpiredError,
    TooLargeResourceVersionError,
    UnreachableError,
)


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def kv(key: str, obj: dict, mod: int, create: int | None = None) -> dict:
    return {"key": b64(key), "value": base64.b64encode(orjson.dumps(obj)).decode(),
            "mod_revision": str(mod), "create_revision": str(create or mod), "version": "1"}


def header(revision: int) -> dict:
    return {"header": {"cluster_id": "1", "member_id": "2", "revision": str(revision),
                       "raft_term": "2"}}


class FakeGateway(Resource):
    """Answers POSTs from a queue of scripted JSON bodies; keeps C{/v3/watch} requests open."""

    isLeaf = True

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[str, dict]] = []
        self.answers: list[tuple[int, dict]] = []
        self.watches: list = []
        self.finished: list = []

    def answer(self, body: dict, code: int = 200) -> None:
        self.answers.append((code, body))

    def render_POST(self, request):
        path = request.path.decode()
        self.requests.append((path, json.loads(request.content.read())))
        if path == "/v3/watch":
            self.watches.append(request)
            request.notifyFinish().addBoth(self.finished.append)
            request.write(b"")
            return NOT_DONE_YET
        code, body = self.answers.pop(0)
        request.setResponseCode(code)
        request.setHeader(b"content-type", b"application/json")
        return orjson.dumps(body)


class GatewayTests(SynchronousTestCase):
    """The JSON the store sends and how it reads the gateway's answers."""

    def setUp(self) -> None:
        self.gateway = FakeGateway()
        self.treq = StubTreq(self.gateway)
        self.clock = Clock()
        self.store = Etcd3Storage(self.clock, self.treq, ["http://etcd:2379"])

    def result(self, d):
        self.treq.flush()
        return self.successResultOf(d)

    def failure(self, d, *types):
        self.treq.flush()
        return self.failureResultOf(d, *types).value

    def test_create_shape(self):
        """create is a txn comparing mod_revision == 0 then put, read back at header.revision."""
        self.gateway.answer({**header(7), "succeeded": True,
                             "responses": [{"response_put": {"header": {"revision": "7"}}}]})
        obj = self.result(self.store.create("/registry/pods/ns/a", {"metadata": {"name": "a"}}))
        self.assertEqual(obj, {"metadata": {"name": "a", "resourceVersion": "7"}})
        key = b64("/registry/pods/ns/a")
        self.assertEqual(self.gateway.requests, [("/v3/kv/txn", {
            "compare": [{"target": "MOD", "key": key, "mod_revision": "0", "result": "EQUAL"}],
            "success": [{"request_put": {"key": key, "value": b64('{"metadata":{"name":"a"}}')}}],
        })])

    def test_create_exists(self):
        """A txn answer without C{succeeded} means the key exists."""
        self.gateway.answer({**header(7)})
        self.failure(self.store.create("/registry/pods/ns/a", {}), KeyExistsError)

    def test_guaranteed_update_retries_with_returned_kv(self):
        """A failed swap retries with the kv of the txn's else-branch range."""
        key = "/registry/pods/ns/a"
        self.gateway.answer({**header(5), "kvs": [kv(key, {"spec": {"n": 1}}, 5)], "count": "1"})
        self.gateway.answer({**header(8), "responses": [{"response_range": {
            **header(8), "kvs": [kv(key, {"spec": {"n": 2}}, 8)], "count": "1"}}]})
        self.gateway.answer({**header(9), "succeeded": True})
        seen = []

        def update(current):
            seen.append(current["spec"]["n"])
            return {"spec": {"n": current["spec"]["n"] + 10}}

        obj = self.result(self.store.guaranteed_update(key, update))
        self.assertEqual(obj, {"spec": {"n": 12}, "metadata": {"resourceVersion": "9"}})
        self.assertEqual(seen, [1, 2])
        paths = [p for p, _ in self.gateway.requests]
        self.assertEqual(paths, ["/v3/kv/range", "/v3/kv/txn", "/v3/kv/txn"])
        self.assertEqual(self.gateway.requests[0][1], {"key": b64(key)})
        second = self.gateway.requests[2][1]
        self.assertEqual(second["compare"][0]["mod_revision"], "8")
        self.assertEqual(second["failure"], [{"request_range": {"key": b64(key)}}])

    def test_delete_shape(self):
        """delete compares the read mod_revision, deletes with prev_kv, else reads."""
        key = "/registry/pods/ns/a"
        self.gateway.answer({**header(5), "kvs": [kv(key, {"a": 1}, 4)], "count": "1"})
        self.gateway.answer({**header(6), "succeeded": True})
        obj = self.result(self.store.delete(key))
        self.assertEqual(obj, {"a": 1, "metadata": {"resourceVersion": "6"}})
        self.assertEqual(self.gateway.requests[1][1], {
            "compare": [{"target": "MOD", "key": b64(key), "mod_revision": "4",
                         "result": "EQUAL"}],
            "success": [{"request_delete_range": {"key": b64(key), "prev_kv": True}}],
            "failure": [{"request_range": {"key": b64(key)}}],
        })

    def test_list_paging_shape(self):
        """A paged list sends key, range_end, limit; the next page pins the revision."""
        p = "/registry/pods/"
        self.gateway.answer({**header(10), "kvs": [kv(p + "a", {}, 3)], "more": True,
                             "count": "3"})
        page = self.result(self.store.get_list("/registry/pods", limit=1))
        self.assertEqual(self.gateway.requests[0][1],
                         {"key": b64(p), "range_end": b64("/registry/pods0"), "limit": "1"})
        self.assertEqual((page.resource_version, page.remaining_item_count), ("10", 2))
        self.gateway.answer({**header(12), "kvs": [kv(p + "b", {}, 4)], "more": True,
                             "count": "2"})
        self.result(self.store.get_list("/registry/pods", limit=1,
                                        continue_token=page.continue_token))
        self.assertEqual(self.gateway.requests[1][1], {
            "key": b64(p + "a\x00"), "range_end": b64("/registry/pods0"), "limit": "1",
            "revision": "10",
        })

    def test_count_absent_is_zero(self):
        """count_only answers omit C{count} when it is 0."""
        self.gateway.answer({**header(3)})
        self.assertEqual(self.result(self.store.count("/registry/pods")), 0)
        self.assertEqual(self.gateway.requests[0][1]["count_only"], True)

    def test_compacted_and_future_errors(self):
        """etcd's compacted and future-revision errors map to Expired and TooLarge."""
        self.gateway.answer({"error": "etcdserver: mvcc: required revision has been compacted",
                             "message": "etcdserver: mvcc: required revision has been compacted",
                             "code": 11}, code=400)
        self.failure(self.store.get_list("/registry/pods", resource_version="2",
                                         resource_version_match="Exact"),
                     ResourceVersionExpiredError)
        self.gateway.answer({"error": "x", "message":
                             "etcdserver: mvcc: required revision is a future revision",
                             "code": 11}, code=400)
        self.gateway.answer({**header(20)})
        e = self.failure(self.store.get_list("/registry/pods", resource_version="99",
                                             resource_version_match="Exact"),
                         TooLargeResourceVersionError)
        self.assertEqual(str(e), "Too large resource version: 99, current: 20")

    def test_watch_stream(self):
        """A watch posts a create_request and reads split newline-delimited results."""
        key = "/registry/pods/ns/a"
        watch = self.store.watch("/registry/pods", "5", recursive=True)
        events = []
        watch.subscribe(events.append)
        self.treq.flush()
        self.assertEqual(self.gateway.requests, [("/v3/watch", {"create_request": {
            "key": b64("/registry/pods/"), "range_end": b64("/registry/pods0"),
            "start_revision": "6", "prev_kv": True, "progress_notify": True}})])
        request = self.gateway.watches[0]
        created = orjson.dumps({"result": {**header(5), "created": True}}) + b"\n"
        put = orjson.dumps({"result": {**header(6), "events": [
            {"kv": kv(key, {"n": 1}, 6)}]}}) + b"\n"
        delete = orjson.dumps({"result": {**header(7), "events": [
            {"type": "DELETE", "kv": {"key": b64(key), "mod_revision": "7"},
             "prev_kv": kv(key, {"n": 1}, 6)}]}}) + b"\n"
        data = created + put + delete
        request.write(data[:30])
        self.treq.flush()
        request.write(data[30:100])
        self.treq.flush()
        self.assertEqual(events, [])
        request.write(data[100:])
        self.treq.flush()
        self.assertEqual([(e.type, e.object) for e in events], [
            ("ADDED", {"n": 1, "metadata": {"resourceVersion": "6"}}),
            ("DELETED", {"n": 1, "metadata": {"resourceVersion": "7"}}),
        ])
        watch.stop()
        self.treq.flush()
        self.assertEqual(len(self.gateway.finished), 1)
        self.assertTrue(watch.ended)

    def test_watch_compacted(self):
        """A result with compact_revision ends the watch with a 410 Expired ERROR."""
        watch = self.store.watch("/registry/pods", "3", recursive=True)
        events = []
        watch.subscribe(events.append)
        self.treq.flush()
        self.gateway.watches[0].write(orjson.dumps({"result": {
            **header(0), "canceled": True, "compact_revision": "9"}}) + b"\n")
        self.treq.flush()
        self.assertEqual([(e.type, e.object["code"], e.object["message"]) for e in events],
                         [("ERROR", 410, "too old resource version: 3 (9)")])
        self.assertTrue(watch.ended)

    def test_watch_from_zero_lists_first(self):
        """Watch at "0" ranges first (ADDED events), then watches from revision + 1."""
        self.gateway.answer({**header(11), "kvs": [kv("/registry/pods/x", {}, 4)], "count": "1"})
        watch = self.store.watch("/registry/pods/x", "0")
        events = []
        watch.subscribe(events.append)
        self.treq.flush()
        self.assertEqual(self.gateway.requests[0], ("/v3/kv/range", {
            "key": b64("/registry/pods/x"), "range_end": b64("/registry/pods/x\x00")}))
        self.assertEqual(self.gateway.requests[1], ("/v3/watch", {"create_request": {
            "key": b64("/registry/pods/x"), "start_revision": "12", "prev_kv": True,
            "progress_notify": True}}))
        self.assertEqual([(e.type, e.object) for e in events],
                         [("ADDED", {"metadata": {"resourceVersion": "4"}})])
        watch.stop()
        self.treq.flush()


class RefusingClient:
    """An HTTP client whose connections to C{refused} URLs are refused."""

    def __init__(self, refused: str, other=None) -> None:
        self.refused = refused
        self.other = other
        self.urls: list[str] = []

    def post(self, url, **kwargs):
        self.urls.append(url)
        if url.startswith(self.refused):
            return fail(ConnectionRefusedError())
        return self.other.post(url, **kwargs)


class EndpointTests(SynchronousTestCase):
    """Connection failures: next endpoint, then UnreachableError."""

    def test_unreachable(self):
        """A refused connection on the only endpoint is UnreachableError."""
        store = Etcd3Storage(Clock(), RefusingClient("http://a"), ["http://a:2379"])
        self.failureResultOf(store.get("/registry/pods/x"), UnreachableError)
        self.failureResultOf(store.check_health(), UnreachableError)

    def test_next_endpoint(self):
        """A refused endpoint is skipped; the one that answered is tried first next time."""
        gateway = FakeGateway()
        stub = StubTreq(gateway)
        client = RefusingClient("http://a", stub)
        store = Etcd3Storage(Clock(), client, ["http://a:2379", "http://b:2379"])
        gateway.answer({**header(3)})
        gateway.answer({**header(3)})
        d = store.get("/registry/pods/x", ignore_not_found=True)
        stub.flush()
        self.assertIsNone(self.successResultOf(d))
        d = store.get("/registry/pods/x", ignore_not_found=True)
        stub.flush()
        self.assertIsNone(self.successResultOf(d))
        self.assertEqual(client.urls, ["http://a:2379/v3/kv/range", "http://b:2379/v3/kv/range",
                                       "http://b:2379/v3/kv/range"])
