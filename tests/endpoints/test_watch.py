"""
Watch streams over HTTP: events as JSON lines, resourceVersion replay, timeouts; and the same
with the watch cache (L{kubetwist.storage.cacher.Cacher}) in front of the store: bookmarks,
watch-list, 410 past the window, slow watchers, and 410 for a compacted continue token.
"""

import json
from typing import ClassVar

from treq.testing import StubTreq

from kubetwist.apis import printers
from kubetwist.storage.cacher import Cacher
from kubetwist.storage.sqlite import SQLiteStorage
from tests.support import ADMIN, FakeReactorClock, InlinePool, KubeTestCase, build_chain

#: base64 of C{{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":null}}
#: and a newline, as kube-apiserver v1.32 annotates the initial-events-end bookmark.
BLUEPRINT = (
    "eyJraW5kIjoiQ29uZmlnTWFwTGlzdCIsImFwaVZlcnNpb24iOiJ2MSIsIm1ldGFkYXRh"
    "Ijp7fSwiaXRlbXMiOm51bGx9Cg=="
)


class WatchTests(KubeTestCase):
    def open_watch(self, path):
        d = self.treq.get("https://kubetwist.test" + path,
                          headers={k: [v] for k, v in ADMIN.items()})
        self.treq.flush()
        response = self.successResultOf(d)
        chunks = []
        response.deliverBody(_Collector(chunks))
        self.treq.flush()
        return response, chunks

    def events(self, chunks):
        return [json.loads(line) for line in b"".join(chunks).splitlines() if line]

    def cm(self, name):
        return self.request("POST", "/api/v1/namespaces/default/configmaps",
                            {"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": name}})[1]

    def test_events_stream(self):
        """ADDED, MODIFIED and DELETED arrive as they happen, as JSON lines."""
        _, first = self.request("GET", "/api/v1/namespaces/default/configmaps")[:2]
        rv = first["metadata"]["resourceVersion"]
        response, chunks = self.open_watch(
            f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}")
        self.assertEqual(response.code, 200)
        self.cm("w")
        self.request("PATCH", "/api/v1/namespaces/default/configmaps/w",
                     {"data": {"a": "b"}}, content_type="application/merge-patch+json")
        self.request("DELETE", "/api/v1/namespaces/default/configmaps/w")
        self.treq.flush()
        evs = self.events(chunks)
        self.assertEqual([e["type"] for e in evs], ["ADDED", "MODIFIED", "DELETED"])
        self.assertEqual(evs[0]["object"]["kind"], "ConfigMap")
        self.assertEqual(evs[0]["object"]["apiVersion"], "v1")

    def test_replay_from_old_resource_version(self):
        """A watch from an older resourceVersion replays the changes since then."""
        _, first = self.request("GET", "/api/v1/namespaces/default/configmaps")[:2]
        rv = first["metadata"]["resourceVersion"]
        self.cm("a")
        self.cm("b")
        _, chunks = self.open_watch(
            f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}")
        evs = self.events(chunks)
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in evs],
                         [("ADDED", "a"), ("ADDED", "b")])

    def test_timeout_seconds_ends_stream(self):
        """timeoutSeconds closes the stream on the clock."""
        response, chunks = self.open_watch(
            "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=5")
        self.assertEqual(len(self.chain.long_running), 1)
        self.clock.advance(5)
        self.treq.flush()
        self.assertEqual(len(self.chain.long_running), 0)

    def test_invalid_list_options(self):
        """Invalid list/watch options are 422 ListOptions.meta.k8s.io with upstream's details:
        group, kind and one cause."""
        code, body, _ = self.request(
            "GET", "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true")
        self.assertEqual((code, body), (422, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
                       "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            "reason": "Invalid",
            "details": {"group": "meta.k8s.io", "kind": "ListOptions", "causes": [{
                "reason": "FieldValueForbidden",
                "message": "Forbidden: sendInitialEvents requires setting resourceVersionMatch "
                           "to NotOlderThan",
                "field": "resourceVersionMatch"}]},
            "code": 422}))
        code, body, _ = self.request(
            "GET", "/api/v1/namespaces/default/configmaps?resourceVersion=1"
                   "&resourceVersionMatch=Foo")
        self.assertEqual(body["details"]["causes"], [{
            "reason": "FieldValueNotSupported",
            "message": 'Unsupported value: "Foo": supported values: "Exact", "NotOlderThan", ""',
            "field": "resourceVersionMatch"}])

    def test_send_initial_events_bookmark(self):
        """sendInitialEvents: ADDED for existing objects, then the annotated BOOKMARK."""
        self.cm("a")
        _, chunks = self.open_watch(
            "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true"
            "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
        evs = self.events(chunks)
        self.assertEqual(evs[-1]["type"], "BOOKMARK")
        self.assertEqual(evs[-1]["object"]["metadata"]["annotations"],
                         {"k8s.io/initial-events-end": "true",
                          "kubernetes.io/initial-events-list-blueprint": BLUEPRINT})
        self.assertIn("a", [e["object"]["metadata"]["name"] for e in evs[:-1]])


class CachedChainMixin:
    """Builds the chain over C{Cacher(SQLiteStorage)}, as the server wires it."""

    cacher_options: ClassVar[dict] = {}

    def setUp(self) -> None:
        self.clock = FakeReactorClock()
        self.clock.advance(1_700_000_000)
        old = printers.set_clock(self.clock.seconds)
        self.addCleanup(printers.set_clock, old)
        self.shutting_down = False
        self.backend = SQLiteStorage(self.clock, ":memory:", threadpool=InlinePool())
        self.cacher = Cacher(self.backend, self.clock, **self.cacher_options)
        parts = build_chain(self.clock, self.modes, shutdown_check=self._shutdown_check,
                            storage=self.cacher)
        self.__dict__.update(parts)
        for server in self.front.chain():
            server.hooks.startService()
            self.addCleanup(server.hooks.stopService)
        self.treq = StubTreq(self.chain)


class CachedWatchTests(CachedChainMixin, WatchTests):
    """Every watch test above, with the watch cache in front of the store."""

    cacher_options: ClassVar[dict] = {"watcher_buffer": 5}

    def list_rv(self) -> str:
        return self.request("GET", "/api/v1/namespaces/default/configmaps")[1][
            "metadata"]["resourceVersion"]

    def test_bookmarks_from_cache(self):
        """allowWatchBookmarks: a BOOKMARK each minute carrying the cache's resourceVersion,
        which counts changes the watch does not select (another namespace)."""
        rv = self.list_rv()
        _, chunks = self.open_watch(
            f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}"
            "&allowWatchBookmarks=true&timeoutSeconds=600")
        _, other = self.request("POST", "/api/v1/namespaces/kube-system/configmaps",
                                {"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": "elsewhere"}})[:2]
        self.clock.advance(60)
        self.treq.flush()
        self.assertEqual(self.events(chunks), [{"type": "BOOKMARK", "object": {
            "kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"resourceVersion": other["metadata"]["resourceVersion"],
                         "creationTimestamp": None}}}])

    def test_legacy_watch_ends_initial_events_with_bookmark(self):
        """A watch from "" or "0" that allows bookmarks gets the existing objects as ADDED,
        then the annotated initial-events-end BOOKMARK (kube-apiserver v1.32 does so without
        sendInitialEvents); from a given resourceVersion it gets none."""
        a = self.cm("a")
        for rv in ("", "&resourceVersion=0"):
            _, chunks = self.open_watch("/api/v1/namespaces/default/configmaps?watch=1"
                                        "&allowWatchBookmarks=true" + rv)
            evs = self.events(chunks)
            self.assertEqual([e["type"] for e in evs], ["ADDED"] * (len(evs) - 1) + ["BOOKMARK"],
                             rv)
            self.assertIn("a", [e["object"]["metadata"]["name"] for e in evs[:-1]])
            self.assertEqual(evs[-1]["object"]["metadata"]["annotations"], {
                "k8s.io/initial-events-end": "true",
                "kubernetes.io/initial-events-list-blueprint": BLUEPRINT})
        _, chunks = self.open_watch(
            "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true"
            f"&resourceVersion={a['metadata']['resourceVersion']}")
        self.assertEqual(self.events(chunks), [])

    def test_watch_list_from_cache(self):
        """Watch-list from the cache: ADDED per object, then the annotated BOOKMARK at the
        list's resourceVersion, then live changes."""
        a = self.cm("a")
        _, chunks = self.open_watch(
            "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true"
            "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
        b = self.cm("b")
        self.treq.flush()
        evs = self.events(chunks)
        self.assertIn({"type": "ADDED", "object": a}, evs)
        end = [i for i, e in enumerate(evs) if e["type"] == "BOOKMARK"]
        self.assertEqual(len(end), 1)
        self.assertEqual(evs[end[0]]["object"], {
            "kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"resourceVersion": str(int(b["metadata"]["resourceVersion"]) - 1),
                         "creationTimestamp": None,
                         "annotations": {"k8s.io/initial-events-end": "true",
                                         "kubernetes.io/initial-events-list-blueprint":
                                             BLUEPRINT}}})
        self.assertEqual(evs[end[0] + 1:], [{"type": "ADDED", "object": b}])

    def test_too_old_resource_version_gone(self):
        """A watch from before the cache's window gets one ERROR: 410 Expired, then ends."""
        rv = int(self.list_rv())
        _, chunks = self.open_watch(
            f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv - 1}")
        self.assertEqual(self.events(chunks), [{"type": "ERROR", "object": {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"too old resource version: {rv - 1} ({rv})",
            "reason": "Expired", "code": 410}}])
        self.assertEqual(self.chain.long_running, set())

    def test_slow_watcher_closed(self):
        """A client that stops reading has its stream ended once its backlog overflows; a
        client that keeps reading gets every event."""
        rv = self.list_rv()
        _, slow = self.open_watch(
            f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}")
        _, fast = self.open_watch(
            f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}")
        watchers = list(self.cacher._caches["/registry/configmaps/"].watchers)
        self.assertEqual(len(watchers), 2)
        watchers[0].watch.pauseProducing()
        for i in range(7):
            self.cm(f"c{i}")
        self.treq.flush()
        self.assertEqual(len(self.chain.long_running), 1)
        self.assertTrue(watchers[0].watch.ended)
        self.assertTrue(watchers[0].overflowed)
        self.assertEqual(sorted(len(self.events(c)) for c in (slow, fast)), [0, 7])

    def test_compacted_continue_token_gone_with_fresh_token(self):
        """A continue token whose snapshot was compacted: 410 Expired with upstream's
        message and a token for the rest at the latest revision in the Status."""
        for name in ("a", "b", "c"):
            self.cm(name)
        _, page = self.request("GET", "/api/v1/namespaces/default/configmaps?limit=1")[:2]
        self.request("PATCH", "/api/v1/namespaces/default/configmaps/a", {"data": {"x": "1"}},
                     content_type="application/merge-patch+json")
        self.successResultOf(self.cacher.compact(
            self.successResultOf(self.cacher.current_revision())))
        code, status, _ = self.request(
            "GET", "/api/v1/namespaces/default/configmaps?limit=1&continue="
            + page["metadata"]["continue"])
        self.assertEqual(code, 410)
        self.assertEqual((status["reason"], status["code"]), ("Expired", 410))
        self.assertTrue(status["message"].startswith(
            "The provided continue parameter is too old to display a consistent list result."))
        code, rest, _ = self.request(
            "GET", "/api/v1/namespaces/default/configmaps?limit=5&continue="
            + status["metadata"]["continue"])
        self.assertEqual(code, 200)
        self.assertEqual([i["metadata"]["name"] for i in page["items"]], ["a"])
        self.assertEqual([i["metadata"]["name"] for i in rest["items"]],
                         ["b", "c", "kube-root-ca.crt"])


class _Collector:
    def __init__(self, chunks):
        self.chunks = chunks

    def makeConnection(self, transport):
        pass

    def dataReceived(self, data):
        self.chunks.append(data)

    def connectionLost(self, reason):
        pass
