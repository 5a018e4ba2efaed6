# -*- test-case-name: tests.storage.test_contract -*-
"""
Tests for L{kubetwist.storage.interfaces}, the storage seam (upstream C{storage.Interface}):
every backend declares and implements L{IStorage} (the Cacher also L{IWatchCache}), and the
shared pieces behave as the contract says: preconditions with upstream's messages, selection
predicates, the L{Watch} stream (buffering, flow control, progress, ending) and the
resourceVersion helpers.  The behaviour every backend shares is the contract mixin of
L{tests.storage.contract}, run by each backend's test module.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from kubetwist.storage import interfaces as st
from kubetwist.storage.cacher import Cacher
from kubetwist.storage.etcd3.store import Etcd3Storage
from kubetwist.storage.sqlite import SQLiteStorage
from tests.support import FakeReactorClock, InlinePool


class BackendInterfaceTests(SynchronousTestCase):
    """Each backend provides the interfaces it claims, with their methods' signatures."""

    def setUp(self) -> None:
        self.clock = FakeReactorClock()
        self.sqlite = SQLiteStorage(self.clock, ":memory:", threadpool=InlinePool())

    def test_sqlite(self) -> None:
        self.assertTrue(verifyObject(st.IStorage, self.sqlite))
        self.assertFalse(st.IWatchCache.providedBy(self.sqlite))

    def test_cacher(self) -> None:
        cacher = Cacher(self.sqlite, self.clock)
        self.assertTrue(verifyObject(st.IStorage, cacher))
        self.assertTrue(verifyObject(st.IWatchCache, cacher))

    def test_etcd3(self) -> None:
        """The etcd3 backend provides IStorage (built without connecting; its behaviour needs
        a real etcd: see L{tests.storage.test_etcd3})."""
        etcd = Etcd3Storage(self.clock, None, ["http://127.0.0.1:2379"])
        self.assertTrue(verifyObject(st.IStorage, etcd))
        self.assertFalse(st.IWatchCache.providedBy(etcd))


class PreconditionsTests(SynchronousTestCase):
    """L{st.Preconditions.check}: upstream C{Preconditions.Check}."""

    OBJ = {"metadata": {"uid": "u1", "resourceVersion": "5"}}

    def test_matching(self) -> None:
        st.Preconditions().check("/k", self.OBJ)
        st.Preconditions(uid="u1", resource_version="5").check("/k", self.OBJ)

    def test_uid(self) -> None:
        with self.assertRaises(st.InvalidObjError) as caught:
            st.Preconditions(uid="u2").check("/k", self.OBJ)
        self.assertEqual(caught.exception.key, "/k")
        self.assertIn("Precondition failed: UID in precondition: u2, UID in object meta: u1",
                      str(caught.exception))

    def test_resource_version(self) -> None:
        with self.assertRaises(st.ResourceVersionConflictError) as caught:
            st.Preconditions(resource_version="4").check("/k", self.OBJ)
        self.assertIn("Precondition failed: ResourceVersion in precondition: 4, "
                      "ResourceVersion in object meta: 5", str(caught.exception))


class PredicateTests(SynchronousTestCase):
    def test_everything(self) -> None:
        """The empty predicate matches every object."""
        self.assertTrue(st.EVERYTHING.empty())
        self.assertTrue(st.EVERYTHING.matches({}))

    def test_matcher(self) -> None:
        pred = st.SelectionPredicate(lambda o: o.get("a") == 1)
        self.assertFalse(pred.empty())
        self.assertEqual((pred.matches({"a": 1}), pred.matches({"a": 2})), (True, False))


class WatchTests(SynchronousTestCase):
    """L{st.Watch}: the producer-to-consumer stream."""

    def test_buffers_until_subscribed(self) -> None:
        """Events and the end sent before subscribe are delivered, in order, on subscribe."""
        watch = st.Watch()
        watch.send(st.WatchEvent("ADDED", {"n": 1}))
        watch.close()
        got: list = []
        done = watch.subscribe(got.append)
        self.assertEqual(got, [st.WatchEvent("ADDED", {"n": 1})])
        self.assertIsNone(self.successResultOf(done))
        self.assertTrue(watch.ended)

    def test_stop_once(self) -> None:
        """stop ends the stream, calls the producer's on_stop once, and drops later events."""
        stops: list = []
        watch = st.Watch(on_stop=lambda: stops.append(1))
        got: list = []
        watch.subscribe(got.append)
        watch.stop()
        watch.stop()
        watch.send(st.WatchEvent("ADDED", {}))
        self.assertEqual((stops, got, watch.ended), ([1], [], True))

    def test_flow_control(self) -> None:
        """pause/resume reach the producer; accepting follows them; resume runs once
        subscribed."""
        calls: list = []
        watch = st.Watch(on_pause=lambda: calls.append("pause"),
                         on_resume=lambda: calls.append("resume"))
        self.assertFalse(watch.accepting)
        watch.subscribe(lambda ev: None)
        self.assertTrue(watch.accepting)
        watch.pauseProducing()
        watch.pauseProducing()
        self.assertFalse(watch.accepting)
        watch.resumeProducing()
        self.assertEqual(calls, ["resume", "pause", "resume"])

    def test_progress(self) -> None:
        """request_progress asks the producer, or answers False without support."""
        asked: list = []
        self.assertTrue(st.Watch(on_progress=lambda: asked.append(1)).request_progress())
        self.assertEqual(asked, [1])
        self.assertFalse(st.Watch().request_progress())

    def test_event_key_not_compared(self) -> None:
        """An event's key is informative: it is not part of equality."""
        self.assertEqual(st.WatchEvent("ADDED", {}, "/a"), st.WatchEvent("ADDED", {}, "/b"))


class ResourceVersionHelperTests(SynchronousTestCase):
    def test_strip(self) -> None:
        """strip_resource_version copies only when there is something to strip."""
        obj = {"metadata": {"name": "a", "resourceVersion": "3"}}
        out = st.strip_resource_version(obj)
        self.assertEqual(out, {"metadata": {"name": "a"}})
        self.assertEqual(obj["metadata"]["resourceVersion"], "3")
        plain = {"metadata": {"name": "a"}}
        self.assertIs(st.strip_resource_version(plain), plain)

    def test_with(self) -> None:
        """with_resource_version sets the revision as a string, in place."""
        obj: dict = {}
        self.assertIs(st.with_resource_version(obj, 7), obj)
        self.assertEqual(obj, {"metadata": {"resourceVersion": "7"}})
