# -*- test-case-name: tests.storage.test_cacher_encoded -*-
"""
The watch cache's serialization cache: L{Cacher.get_list_encoded} encodes each cached object
once per flavor, and watches asked for with C{share_objects} hand every watcher the cache's own
object and one memo per change (L{WatchEvent.memo}).
"""

from __future__ import annotations

from typing import Any

import orjson

from kubetwist.storage.interfaces import SelectionPredicate
from tests.storage.test_cacher import CacherTestCase


class EncodedListTests(CacherTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.calls: list[str] = []
        self.create("a", x="1")
        self.create("b", x="2")

    def encode(self, obj: dict) -> bytes:
        self.calls.append(obj["metadata"]["name"])
        return orjson.dumps(obj)

    def list_encoded(self, flavor: Any = "f", **kwargs: Any):
        return self.successResultOf(self.cacher.get_list_encoded(
            "/registry/configmaps/ns", flavor, self.encode, resource_version="0", **kwargs))

    def test_encoded_once_per_object_and_flavor(self) -> None:
        """A second list reuses the bytes; another flavor encodes again."""
        first = self.list_encoded()
        self.assertEqual([orjson.loads(b)["metadata"]["name"] for b in first.encoded],
                         ["a", "b"])
        self.assertEqual(self.calls, ["a", "b"])
        second = self.list_encoded()
        self.assertEqual(second.encoded, first.encoded)
        self.assertEqual(self.calls, ["a", "b"])
        self.list_encoded(flavor="g")
        self.assertEqual(self.calls, ["a", "b", "a", "b"])

    def test_change_encodes_again(self) -> None:
        """An update replaces the object: its next list encodes the new state only."""
        self.list_encoded()
        self.update("a", x="9")
        result = self.list_encoded()
        self.assertEqual(self.calls, ["a", "b", "a"])
        self.assertEqual(orjson.loads(result.encoded[0])["data"], {"x": "9"})

    def test_items_are_the_cache_objects(self) -> None:
        """No copies: the items are the cache's own; plain get_list still copies."""
        result = self.list_encoded()
        cache = self.cacher._caches["/registry/configmaps/"].cache
        self.assertIs(result.items[0], cache.objects["/registry/configmaps/ns/a"])
        plain = self.successResultOf(self.cacher.get_list("/registry/configmaps/ns",
                                                          resource_version="0"))
        self.assertIsNot(plain.items[0], cache.objects["/registry/configmaps/ns/a"])
        self.assertEqual(plain.items[0], cache.objects["/registry/configmaps/ns/a"])

    def test_selector_and_limit(self) -> None:
        """The encodings follow the selected page."""
        result = self.list_encoded(predicate=SelectionPredicate(
            lambda o: o["metadata"]["name"] == "b"))
        self.assertEqual([orjson.loads(b)["metadata"]["name"] for b in result.encoded], ["b"])
        page = self.successResultOf(self.cacher.get_list_encoded(
            "/registry/configmaps/ns", "f", self.encode, limit=1))
        self.assertEqual(len(page.encoded), 1)
        self.assertTrue(page.continue_token)

    def test_backend_answer_encoded(self) -> None:
        """A list the backend answers (a continue) is encoded as it comes."""
        page = self.successResultOf(self.cacher.get_list_encoded(
            "/registry/configmaps/ns", "f", self.encode, limit=1))
        rest = self.successResultOf(self.cacher.get_list_encoded(
            "/registry/configmaps/ns", "f", self.encode, limit=1,
            continue_token=page.continue_token))
        self.assertEqual([orjson.loads(b)["metadata"]["name"] for b in rest.encoded], ["b"])


class SharedWatchTests(CacherTestCase):
    def test_shared_objects_and_memo(self) -> None:
        """Two sharing watchers get the cache's object and the same memo; a plain watcher a
        copy and no memo."""
        self.create("a", x="1")
        events: list = []
        plain: list = []
        for _ in range(2):
            w = self.cacher.watch("/registry/configmaps/ns", str(self.current_rv()), True,
                                  share_objects=True)
            w.subscribe(events.append)
        self.cacher.watch("/registry/configmaps/ns", str(self.current_rv()),
                          True).subscribe(plain.append)
        self.update("a", x="2")
        self.assertEqual(len(events), 2)
        cache = self.cacher._caches["/registry/configmaps/"].cache
        current = cache.objects["/registry/configmaps/ns/a"]
        self.assertIs(events[0].object, current)
        self.assertIs(events[1].object, current)
        self.assertIsNotNone(events[0].memo)
        self.assertIs(events[0].memo, events[1].memo)
        self.assertEqual(len(plain), 1)
        self.assertIsNone(plain[0].memo)
        self.assertIsNot(plain[0].object, current)
        self.assertEqual(plain[0].object, current)

    def test_stops_matching_is_a_private_copy(self) -> None:
        """The DELETED of an object leaving a selector is the old state at the event's
        revision: a new object, not shared."""
        self.create("a", x="1")
        events: list = []
        w = self.cacher.watch("/registry/configmaps/ns", str(self.current_rv()), True,
                              SelectionPredicate(lambda o: o["data"].get("x") == "1"),
                              share_objects=True)
        w.subscribe(events.append)
        self.update("a", x="2")
        self.assertEqual([e.type for e in events], ["DELETED"])
        self.assertIsNone(events[0].memo)
        self.assertEqual(events[0].object["data"], {"x": "1"})

    def current_rv(self) -> int:
        return self.successResultOf(self.cacher.current_revision())


class SharedGetTests(CacherTestCase):
    def test_get_shared(self) -> None:
        """C{get_shared} at resourceVersion 0 gives the cache's own object; C{get} a copy; at
        C{""} both read the backend."""
        self.create("a", x="1")
        self.successResultOf(self.cacher.get_list("/registry/configmaps/ns",
                                                  resource_version="0"))
        cache = self.cacher._caches["/registry/configmaps/"].cache
        own = cache.objects["/registry/configmaps/ns/a"]
        shared = self.successResultOf(self.cacher.get_shared("/registry/configmaps/ns/a", "0"))
        self.assertIs(shared, own)
        copied = self.successResultOf(self.cacher.get("/registry/configmaps/ns/a", "0"))
        self.assertIsNot(copied, own)
        self.assertEqual(copied, own)
        live = self.successResultOf(self.cacher.get_shared("/registry/configmaps/ns/a", ""))
        self.assertIsNot(live, own)
        self.assertEqual(live["data"], {"x": "1"})


class PagedListTests(CacherTestCase):
    def test_initial_list_in_pages(self) -> None:
        """The cache reads a prefix in pages of LIST_PAGE_SIZE at one revision: every object,
        then live events from that revision."""
        from kubetwist.storage.cacher import cacher as cachermod

        self.patch(cachermod, "LIST_PAGE_SIZE", 2)
        for i in range(5):
            self.create(f"c{i}")
        revision = self.successResultOf(self.cacher.current_revision())
        result = self.successResultOf(self.cacher.get_list("/registry/configmaps/ns",
                                                           resource_version="0"))
        self.assertEqual([o["metadata"]["name"] for o in result.items],
                         [f"c{i}" for i in range(5)])
        self.assertEqual(result.resource_version, str(revision))
        pages = [call for call in self.backend.lists if call[0] == "/registry/configmaps/"]
        self.assertEqual(len(pages), 3)
        self.assertTrue(all(call[2].get("limit") == 2 for call in pages))
        self.create("c5")
        result = self.successResultOf(self.cacher.get_list("/registry/configmaps/ns",
                                                           resource_version="0"))
        self.assertEqual(len(result.items), 6)
