"""Tests for L{kubetwist.registry.generic.versioned}: a served version over another
version's storage (L{ConvertingStorage}), and L{HubConversion}'s memory of prepared objects."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from kubetwist.registry.generic.versioned import (
    ConvertingStorage,
    HubConversion,
    VersionConverter,
)
from kubetwist.storage import interfaces as st
from kubetwist.storage.cacher import Cacher
from kubetwist.storage.sqlite import SQLiteStorage
from tests.support import FakeReactorClock, InlinePool


def to_storage(obj: dict) -> dict:
    """Served C{{"b": n}} is stored as C{{"a": n}}."""
    out = {k: v for k, v in obj.items() if k != "b"}
    out.update(apiVersion="x/v2", a=obj.get("b"))
    return out


def from_storage(obj: dict) -> dict:
    out = {k: v for k, v in obj.items() if k != "a"}
    out.update(apiVersion="x/v1", b=obj.get("a"))
    return out


CONVERTER = VersionConverter(to_storage, from_storage)
KEY = "/registry/things/ns/one"


def obj(name: str, value: int) -> dict:
    return {"apiVersion": "x/v1", "kind": "Thing",
            "metadata": {"name": name, "namespace": "ns"}, "b": value}


class ConvertingStorageTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.clock = FakeReactorClock()
        self.backend = SQLiteStorage(self.clock, ":memory:", threadpool=InlinePool())
        self.cacher = Cacher(self.backend, self.clock)
        self.storage = ConvertingStorage(self.cacher, CONVERTER)

    def test_interfaces(self):
        """It is an IStorage, and an IWatchCache exactly when the inner storage is."""
        verifyObject(st.IStorage, self.storage)
        self.assertTrue(st.IWatchCache.providedBy(self.storage))
        self.assertFalse(st.IWatchCache.providedBy(ConvertingStorage(self.backend, CONVERTER)))

    def test_create_and_get(self):
        """Objects go in converted to the storage version and come out in the served one."""
        created = self.successResultOf(self.storage.create(KEY, obj("one", 1)))
        self.assertEqual((created["apiVersion"], created["b"]), ("x/v1", 1))
        self.assertNotIn("a", created)
        stored = self.successResultOf(self.backend.get(KEY))
        self.assertEqual((stored["apiVersion"], stored["a"]), ("x/v2", 1))
        got = self.successResultOf(self.storage.get(KEY))
        self.assertEqual(got, created)

    def test_list_predicate_on_served_form(self):
        """Predicates see the served form (its field names)."""
        self.successResultOf(self.storage.create(KEY, obj("one", 1)))
        self.successResultOf(self.storage.create("/registry/things/ns/two", obj("two", 2)))
        pred = st.SelectionPredicate(lambda o: o.get("b") == 2)
        result = self.successResultOf(self.storage.get_list("/registry/things/", predicate=pred))
        self.assertEqual([(i["metadata"]["name"], i["b"]) for i in result.items], [("two", 2)])

    def test_guaranteed_update(self):
        """try_update gets and returns the served form; the stored object is converted."""
        self.successResultOf(self.storage.create(KEY, obj("one", 1)))
        seen = []

        def bump(current: dict) -> dict:
            seen.append(current["b"])
            return dict(current, b=current["b"] + 10)
        out = self.successResultOf(self.storage.guaranteed_update(KEY, bump))
        self.assertEqual((seen, out["b"]), ([1], 11))
        self.assertEqual(self.successResultOf(self.backend.get(KEY))["a"], 11)

    def test_delete_returns_served(self):
        """delete answers with the served form of the last state."""
        self.successResultOf(self.storage.create(KEY, obj("one", 1)))
        out = self.successResultOf(self.storage.delete(KEY))
        self.assertEqual((out["apiVersion"], out["b"]), ("x/v1", 1))

    def test_watch_converts_events(self):
        """Watch events carry served objects, filtered by the served-form predicate."""
        pred = st.SelectionPredicate(lambda o: o.get("b", 0) > 1)
        watch = self.storage.watch("/registry/things/", "", True, pred)
        events: list = []
        watch.subscribe(events.append)
        self.successResultOf(self.backend.create(KEY, to_storage(obj("one", 1))))
        self.successResultOf(self.backend.create("/registry/things/ns/two",
                                                 to_storage(obj("two", 5))))
        self.clock.advance(0)
        self.assertEqual([(e.type, e.object["apiVersion"], e.object["b"]) for e in events],
                         [("ADDED", "x/v1", 5)])
        watch.stop()
        self.assertTrue(watch.ended)


class HubConversionTests(SynchronousTestCase):
    def test_prepared_hub_is_stored(self):
        """A served object prepared from a hub object stores that hub object, even when the
        served version cannot express all of it."""
        lossy = HubConversion(
            lambda o: {**o, "apiVersion": "x/v2"},
            lambda h: {k: v for k, v in h.items() if k != "extra"} | {"apiVersion": "x/v1"})
        served = {"apiVersion": "x/v1", "metadata": {"name": "n"}}
        lossy.remember(served, {"apiVersion": "x/v2", "metadata": {"name": "n"}, "extra": 1})
        self.assertEqual(served, {"apiVersion": "x/v1", "metadata": {"name": "n"}})
        served["metadata"]["resourceVersion"] = "7"
        self.assertEqual(lossy.hub_of(served)["extra"], 1)
        stored = lossy.to_storage(served)
        self.assertEqual(stored, {"apiVersion": "x/v2", "extra": 1,
                                  "metadata": {"name": "n", "resourceVersion": "7"}})
        self.assertNotIn("extra", lossy.to_storage(served))

    def test_changed_object_is_converted_afresh(self):
        """A served object changed after preparation is converted again."""
        conv = HubConversion(lambda o: {**o, "apiVersion": "x/v2"},
                             lambda h: {k: v for k, v in h.items() if k != "extra"})
        served: dict = {"metadata": {}}
        conv.remember(served, {"metadata": {}, "extra": 1})
        served["spec"] = 2
        self.assertEqual(conv.to_storage(served),
                         {"metadata": {}, "spec": 2, "apiVersion": "x/v2"})
