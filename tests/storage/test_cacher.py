# -*- test-case-name: tests.storage.test_cacher -*-
"""
The watch cache (L{kubetwist.storage.cacher}) on a fake clock over an inline SQLite store:
the event window, reads from the cache, fan-out and flow control, bookmarks, watch-list,
410 past the window, and the reflector's recovery.
"""

from __future__ import annotations

import json
from typing import Any

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from kubetwist.storage.cacher import Cacher, WatchCache
from kubetwist.storage.cacher.watch_cache import TooOldError
from kubetwist.storage.interfaces import (
    IStorage,
    IWatchCache,
    SelectionPredicate,
    Watch,
    WatchEvent,
)
from kubetwist.storage.sqlite import SQLiteStorage
from tests.storage.contract import decode_token
from tests.support import InlinePool


def cm(name: str, namespace: str = "ns", **data: Any) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace}, "data": dict(data)}


def rv(obj: dict) -> int:
    return int(obj["metadata"]["resourceVersion"])


class CountingStorage(SQLiteStorage):
    """An inline SQLite store that counts list and watch calls reaching it."""

    def __init__(self, clock: Any) -> None:
        super().__init__(clock, ":memory:", threadpool=InlinePool())
        self.lists: list[tuple] = []
        self.watches: list[tuple] = []

    def get_list(self, key, *args, **kwargs):
        self.lists.append((key, args, kwargs))
        return super().get_list(key, *args, **kwargs)

    def watch(self, key, resource_version="", recursive=False, predicate=None, **kwargs):
        self.watches.append((key, resource_version))
        return super().watch(key, resource_version, recursive,
                             predicate or SelectionPredicate())


class NoProgressStorage(CountingStorage):
    """A backend whose watches cannot answer progress requests (as etcd without
    RequestWatchProgress support)."""

    def watch(self, key, resource_version="", recursive=False, predicate=None, **kwargs):
        inner = super().watch(key, resource_version, recursive, predicate)
        outer = Watch(on_stop=inner.stop)
        inner.subscribe(outer.send)
        inner.done.addCallback(lambda _: outer.close())
        return outer


class SilentCompactionStorage(CountingStorage):
    """A store that does not tell the Cacher about its compactions (like etcd compacted by
    another API server)."""

    @property
    def compact_revision(self) -> int:
        return 0

    @compact_revision.setter
    def compact_revision(self, value: int) -> None:
        pass


class ProgressStorage(CountingStorage):
    """A backend whose watches answer progress requests (as etcd's RequestWatchProgress)."""

    def __init__(self, clock: Any) -> None:
        super().__init__(clock)
        self.progress_requests: list[Watch] = []
        self.answer = True

    def watch(self, key, resource_version="", recursive=False, predicate=None, **kwargs):
        inner = super().watch(key, resource_version, recursive, predicate)

        def on_progress() -> None:
            self.progress_requests.append(outer)
            if self.answer:
                current = self.successResultOf_current()
                outer.send(WatchEvent("BOOKMARK", {"metadata": {"resourceVersion": str(current)}}))

        outer = Watch(on_stop=inner.stop, on_progress=on_progress)
        inner.subscribe(outer.send)
        inner.done.addCallback(lambda _: outer.close())
        return outer

    def successResultOf_current(self) -> int:
        results: list = []
        self.current_revision().addCallback(results.append)
        return results[0]


class CacherTestCase(SynchronousTestCase):
    backend_class: Any = CountingStorage

    def setUp(self) -> None:
        self.clock = Clock()
        self.clock.advance(1000)
        self.backend = self.backend_class(self.clock)
        self.cacher = Cacher(self.backend, self.clock)

    def create(self, name: str, namespace: str = "ns", resource: str = "configmaps", **data):
        return self.successResultOf(self.cacher.create(
            f"/registry/{resource}/{namespace}/{name}", cm(name, namespace, **data)))

    def update(self, name: str, namespace: str = "ns", **data):
        return self.successResultOf(self.cacher.guaranteed_update(
            f"/registry/configmaps/{namespace}/{name}", lambda cur: cm(name, namespace, **data)))

    def collect(self, watch: Watch) -> list:
        events: list = []
        watch.subscribe(lambda e: events.append((e.type, e.object)))
        return events

    def names(self, events: list) -> list:
        return [(t, o["metadata"].get("name")) for t, o in events]


class WatchCacheWindowTests(SynchronousTestCase):
    """The event window (upstream watch_cache_history.go)."""

    def event(self, cache: WatchCache, name: str, revision: int) -> None:
        obj = cm(name)
        obj["metadata"]["resourceVersion"] = str(revision)
        cache.apply("ADDED", f"/registry/configmaps/ns/{name}", obj)

    def test_adaptive_capacity_grows_while_events_are_fresh(self):
        """A full window whose oldest event is younger than 75 s doubles (from 100)."""
        clock = Clock()
        cache = WatchCache("/registry/configmaps/", clock)
        cache.replace([], 1)
        for i in range(150):
            self.event(cache, f"o{i}", 2 + i)
        self.assertEqual(cache.capacity, 200)
        self.assertEqual(len(cache.history), 150)
        self.assertEqual(cache.oldest_start(), 1)

    def test_adaptive_capacity_keeps_size_when_events_are_old(self):
        """A full window whose oldest event is older than 75 s drops its oldest events."""
        clock = Clock()
        cache = WatchCache("/registry/configmaps/", clock)
        cache.replace([], 1)
        for i in range(100):
            self.event(cache, f"o{i}", 2 + i)
        clock.advance(76)
        self.event(cache, "late", 102)
        self.assertEqual(cache.capacity, 100)
        self.assertEqual(len(cache.history), 100)
        self.assertEqual(cache.oldest_start(), 2)

    def test_fixed_capacity_and_too_old(self):
        """A fixed window keeps its last N events; starts before it are TooOldError."""
        cache = WatchCache("/registry/configmaps/", Clock(), capacity=3)
        cache.replace([], 10)
        for i in range(5):
            self.event(cache, f"o{i}", 11 + i)
        self.assertEqual([e.rv for e in cache.events_after(12)], [13, 14, 15])
        self.assertEqual(cache.events_after(15), [])
        with self.assertRaises(TooOldError) as ctx:
            cache.events_after(11)
        self.assertEqual(str(ctx.exception), "too old resource version: 11 (12)")

    def test_window_after_relist(self):
        """Right after a (re)list the window starts at the list's revision."""
        cache = WatchCache("/registry/configmaps/", Clock(), capacity=3)
        cache.replace([], 10)
        self.assertEqual(cache.events_after(10), [])
        with self.assertRaises(TooOldError) as ctx:
            cache.events_after(9)
        self.assertEqual(str(ctx.exception), "too old resource version: 9 (10)")


class CacherReadTests(CacherTestCase):
    """Gets and lists: which are served from the cache, and what they return."""

    def test_provides_interfaces(self):
        """The Cacher is an IStorage and an IWatchCache, named after its backend."""
        self.assertTrue(verifyObject(IStorage, self.cacher))
        self.assertTrue(verifyObject(IWatchCache, self.cacher))
        self.assertEqual(self.cacher.name, "sqlite")

    def test_resource_prefixes(self):
        """The cache prefix is the key minus its namespace/name tail, by upstream's layout."""
        p = self.cacher.resource_prefix
        self.assertEqual(p("/registry/configmaps/ns/a"), "/registry/configmaps/")
        self.assertEqual(p("/registry/configmaps/"), "/registry/configmaps/")
        self.assertEqual(p("/registry/services/specs/ns/a"), "/registry/services/specs/")
        self.assertEqual(p("/registry/services/endpoints/ns/"), "/registry/services/endpoints/")
        self.assertEqual(p("/registry/example.com/widgets/ns/a"),
                         "/registry/example.com/widgets/")
        self.assertIsNone(p("/registry/configmaps"))
        self.assertIsNone(p("/elsewhere/configmaps/a"))
        self.cacher.add_resource_prefix("/registry/ranges/serviceips")
        self.assertEqual(p("/registry/ranges/serviceips/x"), "/registry/ranges/serviceips/")

    def test_list_at_zero_from_cache(self):
        """A list at "0" is answered from memory (limit ignored, as upstream)."""
        a = self.create("a")
        b = self.create("b")
        first = self.successResultOf(self.cacher.get_list("/registry/configmaps/ns/",
                                                          resource_version="0"))
        self.assertEqual((first.items, first.resource_version), ([a, b], str(rv(b))))
        calls = len(self.backend.lists)
        again = self.successResultOf(self.cacher.get_list(
            "/registry/configmaps/ns/", resource_version="0", limit=1))
        self.assertEqual((again.items, again.continue_token), ([a, b], ""))
        self.assertEqual(len(self.backend.lists), calls)

    def test_consistent_list_from_fresh_cache(self):
        """A consistent list is served from the cache once it has the backend's revision."""
        self.create("a")
        self.successResultOf(self.cacher.start_caching("/registry/configmaps"))
        b = self.create("b", namespace="other")
        calls = len(self.backend.lists)
        result = self.successResultOf(self.cacher.get_list("/registry/configmaps/"))
        self.assertEqual([o["metadata"]["name"] for o in result.items], ["a", "b"])
        self.assertEqual(result.resource_version, str(rv(b)))
        self.assertEqual(len(self.backend.lists), calls)

    def test_consistent_list_served_from_cache_after_progress(self):
        """Behind the backend's revision (writes elsewhere), a consistent list asks the
        embedded store's watch for progress and is then served from the cache."""
        self.successResultOf(self.cacher.start_caching("/registry/configmaps"))
        a = self.create("a")
        secret = self.create("s", resource="secrets")
        calls = len(self.backend.lists)
        result = self.successResultOf(self.cacher.get_list("/registry/configmaps/"))
        self.assertEqual((result.items, result.resource_version), ([a], str(rv(secret))))
        self.assertEqual(len(self.backend.lists), calls)


class CacherNoProgressTests(CacherTestCase):
    backend_class = NoProgressStorage

    def test_consistent_list_behind_without_progress_delegates(self):
        """Behind the backend with no way to learn progress, a consistent list reads it."""
        self.successResultOf(self.cacher.start_caching("/registry/configmaps"))
        a = self.create("a")
        secret = self.create("s", resource="secrets")
        calls = len(self.backend.lists)
        result = self.successResultOf(self.cacher.get_list("/registry/configmaps/"))
        self.assertEqual((result.items, result.resource_version), ([a], str(rv(secret))))
        self.assertEqual(len(self.backend.lists), calls + 1)

    def test_limit_pages_continue_at_the_snapshot(self):
        """A first page from the cache carries a token at the cache's revision (its start key
        begins with "/", as upstream's cacher writes it); the next page (from the backend)
        reads that same snapshot."""
        a, b, c = self.create("a"), self.create("b"), self.create("c")
        self.successResultOf(self.cacher.start_caching("/registry/configmaps"))
        page = self.successResultOf(self.cacher.get_list("/registry/configmaps/ns/", limit=2))
        self.assertEqual((page.items, page.remaining_item_count), ([a, b], 1))
        self.assertEqual(decode_token(page.continue_token),
                         {"v": "meta.k8s.io/v1", "rv": rv(c), "start": "/b\x00"})
        self.update("c", x="1")
        rest = self.successResultOf(self.cacher.get_list(
            "/registry/configmaps/ns/", limit=2, continue_token=page.continue_token))
        self.assertEqual((rest.items, rest.continue_token), ([c], ""))

    def test_get_at_zero_returns_a_copy(self):
        """A get from the cache returns a private copy: changing it changes nothing cached."""
        a = self.create("a", k="v")
        got = self.successResultOf(self.cacher.get("/registry/configmaps/ns/a", "0"))
        self.assertEqual(got, a)
        got["data"]["k"] = "changed"
        again = self.successResultOf(self.cacher.get("/registry/configmaps/ns/a", "0"))
        self.assertEqual(again["data"], {"k": "v"})

    def test_get_at_zero_missing(self):
        """A get from the cache of a missing key is KeyNotFound, or None when ignored."""
        self.create("a")
        self.assertIsNone(self.successResultOf(
            self.cacher.get("/registry/configmaps/ns/b", "0", ignore_not_found=True)))
        self.failureResultOf(self.cacher.get("/registry/configmaps/ns/b", "0"))


class CacherProgressTests(CacherTestCase):
    """Consistent reads with a backend that answers progress requests (KEP-2340)."""

    backend_class = ProgressStorage

    def test_consistent_list_waits_for_progress(self):
        """Behind the backend, the cache asks for progress and then serves the list itself."""
        self.successResultOf(self.cacher.start_caching("/registry/configmaps"))
        a = self.create("a")
        secret = self.create("s", resource="secrets")
        calls = len(self.backend.lists)
        result = self.successResultOf(self.cacher.get_list("/registry/configmaps/"))
        self.assertEqual((result.items, result.resource_version), ([a], str(rv(secret))))
        self.assertEqual(len(self.backend.lists), calls)
        self.assertEqual(len(self.backend.progress_requests), 1)

    def test_consistent_list_times_out_to_backend(self):
        """Without an answer within 3 s the list falls back to the backend (upstream)."""
        self.successResultOf(self.cacher.start_caching("/registry/configmaps"))
        self.backend.answer = False
        a = self.create("a")
        self.create("s", resource="secrets")
        d = self.cacher.get_list("/registry/configmaps/")
        self.assertNoResult(d)
        calls = len(self.backend.lists)
        self.clock.advance(3)
        self.assertEqual(self.successResultOf(d).items, [a])
        self.assertEqual(len(self.backend.lists), calls + 1)


class CacherWatchTests(CacherTestCase):
    """Watches from the cache."""

    def test_one_backend_watch_per_prefix(self):
        """Client watches of one resource share one backend watch."""
        events = [self.collect(self.cacher.watch(f"/registry/configmaps/{ns}/", "0", True))
                  for ns in ("a", "b", "c")]
        self.create("x", namespace="b")
        self.assertEqual([key for key, _ in self.backend.watches], ["/registry/configmaps/"])
        self.assertEqual([len(e) for e in events], [0, 1, 0])

    def test_watch_from_revision_replays_window(self):
        """A watch at N gets the window's events after N, then live ones, once each."""
        self.successResultOf(self.cacher.start_caching("/registry/configmaps"))
        a = self.create("a")
        a2 = self.update("a", x="1")
        events = self.collect(self.cacher.watch("/registry/configmaps/", str(rv(a)), True))
        b = self.create("b")
        self.assertEqual(events, [("MODIFIED", a2), ("ADDED", b)])

    def test_watch_older_than_window_is_gone(self):
        """A watch before the window gets one ERROR: 410 Expired, upstream's message."""
        cacher = Cacher(self.backend, self.clock, capacity=2)
        self.successResultOf(cacher.start_caching("/registry/configmaps"))
        first = self.create("a")
        for i in range(3):
            self.update("a", n=str(i))
        watch = cacher.watch("/registry/configmaps/", str(rv(first)), True)
        events = self.collect(watch)
        self.assertEqual(events, [("ERROR", {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"too old resource version: {rv(first)} ({rv(first) + 1})",
            "reason": "Expired", "code": 410,
        })])
        self.assertTrue(watch.ended)

    def test_predicate_and_namespace_filtering(self):
        """A watcher sees only its range and selection; leaving the selection is DELETED."""
        hot = SelectionPredicate(lambda o: o["data"].get("hot") == "1")
        self.successResultOf(self.cacher.start_caching("/registry/configmaps"))
        start = self.create("z", namespace="other")
        events = self.collect(self.cacher.watch("/registry/configmaps/ns/", str(rv(start)),
                                                True, hot))
        self.create("a")
        a1 = self.update("a", hot="1")
        self.create("b", namespace="other", hot="1")
        a2 = self.update("a", hot="0")
        gone = json.loads(json.dumps(a1))
        gone["metadata"]["resourceVersion"] = str(rv(a2))
        self.assertEqual(events, [("ADDED", a1), ("DELETED", gone)])

    def test_bookmarks_every_minute_and_before_timeout(self):
        """Bookmarks carry the cache's revision, every minute and 2 s before the timeout
        (after the initial-events-end bookmark that kube-apiserver v1.32 also sends to a
        watch from "0" that allows bookmarks)."""
        self.successResultOf(self.cacher.start_caching("/registry/configmaps"))
        watch = self.cacher.watch("/registry/configmaps/ns/", "0", True,
                                  allow_watch_bookmarks=True, timeout=90)
        events = self.collect(watch)
        self.assertEqual([(t, o["metadata"].get("annotations")) for t, o in events],
                         [("BOOKMARK", {"k8s.io/initial-events-end": "true"})])
        del events[:]
        other = self.create("x", namespace="other")
        self.clock.advance(59)
        self.assertEqual(events, [])
        self.clock.advance(1)
        self.assertEqual(events, [("BOOKMARK", {"metadata": {"resourceVersion": str(rv(other))}})])
        later = self.create("y", namespace="other")
        self.clock.advance(27)
        self.assertEqual(len(events), 1)
        self.clock.advance(1)
        self.assertEqual(events[1:],
                         [("BOOKMARK", {"metadata": {"resourceVersion": str(rv(later))}})])
        self.clock.advance(100)
        self.assertEqual(len(events), 2)

    def test_no_bookmarks_unless_asked(self):
        """Without allowWatchBookmarks no BOOKMARK is sent."""
        events = self.collect(self.cacher.watch("/registry/configmaps/", "0", True))
        self.clock.advance(600)
        self.assertEqual(events, [])

    def test_watch_list(self):
        """sendInitialEvents: ADDED per object, the annotated BOOKMARK, then changes."""
        a = self.create("a")
        b = self.create("b")
        self.create("c", namespace="other")
        events = self.collect(self.cacher.watch(
            "/registry/configmaps/ns/", "", True, allow_watch_bookmarks=True,
            send_initial_events=True))
        c = self.create("c")
        self.assertEqual(events[:2], [("ADDED", a), ("ADDED", b)])
        self.assertEqual(events[2], ("BOOKMARK", {"metadata": {
            "resourceVersion": str(rv(b) + 1),
            "annotations": {"k8s.io/initial-events-end": "true"}}}))
        self.assertEqual(events[3:], [("ADDED", c)])

    def test_watch_list_behind_uses_backend_snapshot(self):
        """A consistent watch-list on a cache that cannot prove freshness takes its initial
        state from the backend and continues from the cache after it, without repeats."""
        self.successResultOf(self.cacher.start_caching("/registry/configmaps"))
        a = self.create("a")
        secret = self.create("s", resource="secrets")
        events = self.collect(self.cacher.watch(
            "/registry/configmaps/", "", True, allow_watch_bookmarks=True,
            send_initial_events=True))
        b = self.create("b")
        self.assertEqual(events, [
            ("ADDED", a),
            ("BOOKMARK", {"metadata": {"resourceVersion": str(rv(secret)),
                                       "annotations": {"k8s.io/initial-events-end": "true"}}}),
            ("ADDED", b),
        ])

    def test_slow_watcher_closed_others_unaffected(self):
        """A paused watcher whose backlog overflows is closed; other watchers get every event."""
        cacher = Cacher(self.backend, self.clock, watcher_buffer=3)
        slow = cacher.watch("/registry/configmaps/", "0", True)
        slow_events = self.collect(slow)
        fast_events = self.collect(cacher.watch("/registry/configmaps/", "0", True))
        slow.pauseProducing()
        for i in range(3):
            self.create(f"o{i}")
        self.assertFalse(slow.ended)
        self.assertEqual(slow_events, [])
        self.create("o3")
        self.assertTrue(slow.ended)
        self.assertEqual(slow_events, [])
        for i in range(4, 6):
            self.create(f"o{i}")
        self.assertEqual([n for _, n in self.names(fast_events)], [f"o{i}" for i in range(6)])

    def test_paused_watcher_catches_up_on_resume(self):
        """A watcher paused within its buffer gets the waiting events, in order, on resume."""
        cacher = Cacher(self.backend, self.clock, watcher_buffer=3)
        watch = cacher.watch("/registry/configmaps/", "0", True)
        events = self.collect(watch)
        watch.pauseProducing()
        self.create("a")
        self.create("b")
        self.assertEqual(events, [])
        watch.resumeProducing()
        self.assertEqual(self.names(events), [("ADDED", "a"), ("ADDED", "b")])

    def test_initial_events_delivered_lazily(self):
        """Initial events wait while paused (they never overflow the buffer)."""
        for i in range(10):
            self.create(f"o{i}")
        cacher = Cacher(self.backend, self.clock, watcher_buffer=2)
        watch = cacher.watch("/registry/configmaps/", "0", True)
        events: list = []

        def consumer(event):
            events.append(event)
            if len(events) == 4:
                watch.pauseProducing()

        watch.subscribe(consumer)
        self.assertEqual(len(events), 4)
        watch.resumeProducing()
        self.assertEqual(len(events), 10)
        self.assertFalse(watch.ended)

    def test_backend_watch_lost_resumes_without_loss(self):
        """When the backend watch ends, the cache re-watches from its revision: the changes
        made meanwhile arrive once each."""
        events = self.collect(self.cacher.watch("/registry/configmaps/", "0", True))
        self.create("a")
        rc = self.cacher._caches["/registry/configmaps/"]
        rc._backend_watch.close()
        b = self.create("b")
        self.assertEqual(self.names(events), [("ADDED", "a")])
        self.clock.advance(0.25)
        c = self.create("c")
        self.assertEqual(events[1:], [("ADDED", b), ("ADDED", c)])
        self.assertEqual(self.backend.watches[-1], ("/registry/configmaps/", str(rv(b) - 1)))

    def test_backend_compaction_relists_and_closes_watchers(self):
        """A 410 from the backend watch re-lists; client watches close and a re-watch from
        before the new list is 410."""
        watch = self.cacher.watch("/registry/configmaps/", "0", True)
        self.collect(watch)
        a = self.create("a")
        rc = self.cacher._caches["/registry/configmaps/"]
        rc._backend_watch.close()
        for i in range(3):
            self.update("a", n=str(i))
        self.successResultOf(self.cacher.compact(
            self.successResultOf(self.cacher.current_revision())))
        self.clock.advance(0.25)
        self.assertTrue(watch.ended)
        current = self.successResultOf(self.cacher.current_revision())
        self.assertEqual(rc.cache.list_rv, current)
        again = self.collect(self.cacher.watch("/registry/configmaps/", str(rv(a)), True))
        self.assertEqual(again[0][1]["code"], 410)
        self.assertEqual(again[0][1]["message"],
                         f"too old resource version: {rv(a)} ({current})")

    def test_watch_in_window_but_compacted_by_others(self):
        """A watch inside the cache's window at a revision the backend has compacted (behind
        the Cacher's back) gets the backend's 410, not a replay."""
        backend = SilentCompactionStorage(self.clock)
        cacher = Cacher(backend, self.clock)
        self.successResultOf(cacher.start_caching("/registry/configmaps"))
        a = self.successResultOf(cacher.create("/registry/configmaps/ns/a", cm("a")))
        for i in range(3):
            self.successResultOf(cacher.guaranteed_update(
                "/registry/configmaps/ns/a", lambda cur, i=i: cm("a", n=str(i))))
        current = self.successResultOf(backend.current_revision())
        self.successResultOf(backend.compact(current))
        watch = cacher.watch("/registry/configmaps/", str(rv(a)), True)
        events = self.collect(watch)
        self.assertEqual([(t, o["code"], o["message"]) for t, o in events], [
            ("ERROR", 410, f"too old resource version: {rv(a)} ({current})")])
        self.assertTrue(watch.ended)
        fresh = self.collect(cacher.watch("/registry/configmaps/", str(current - 1), True))
        self.assertEqual([t for t, _ in fresh], ["MODIFIED"])

    def test_stop_closes_watches(self):
        """stop closes every client watch and the backend."""
        watch = self.cacher.watch("/registry/configmaps/", "0", True)
        self.collect(watch)
        self.successResultOf(self.cacher.stop())
        self.assertTrue(watch.ended)
