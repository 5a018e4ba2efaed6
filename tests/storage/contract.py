# -*- test-case-name: tests.storage.test_sqlite,tests.storage.test_etcd3 -*-
"""
The conformance suite of L{IStorage}: upstream C{k8s.io/apiserver/pkg/storage/testing}
(C{store_tests.go}, C{watcher_tests.go}), run against every backend (and later the Cacher).

A concrete test case mixes L{StorageContractMixin} into C{twisted.trial.unittest.TestCase} and
implements L{StorageContractMixin.make_store} (a fresh, empty store, cleaned up by the test) and
L{StorageContractMixin.reopen_store}.  Revisions are never assumed absolute: a backend may be
shared between tests (etcd), so every expectation is relative to revisions the test observed.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Optional

from twisted.internet import reactor
from twisted.internet.defer import Deferred, succeed
from twisted.internet.task import deferLater
from zope.interface.verify import verifyObject

from kubetwist.storage.interfaces import (
    InvalidContinueError,
    InvalidObjError,
    IStorage,
    KeyExistsError,
    KeyNotFoundError,
    Preconditions,
    ResourceVersionConflictError,
    ResourceVersionExpiredError,
    SelectionPredicate,
    TooLargeResourceVersionError,
    Watch,
)


def pod(name: str, **extra: Any) -> dict:
    """A small object; C{extra} goes into C{spec}."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": dict(extra),
    }


def at(obj: dict, revision: int) -> dict:
    """C{obj} with C{metadata.resourceVersion} set (a copy)."""
    out = json.loads(json.dumps(obj))
    out["metadata"]["resourceVersion"] = str(revision)
    return out


def rv(obj: dict) -> int:
    return int(obj["metadata"]["resourceVersion"])


def sleep(seconds: float) -> Deferred:
    return deferLater(reactor, seconds, lambda: None)


class StorageContractMixin:
    """
    The L{IStorage} contract.  Subclasses implement L{make_store} and L{reopen_store}; tests
    are coroutines run on the real reactor.
    """

    #: what a first page's continue token puts before the next key: C{""} for a backend (as
    #: etcd3's store), C{"/"} for the Cacher (upstream's cacher encodes against a key root
    #: without its trailing slash)
    first_page_start_prefix = ""
    #: seconds to wait for asynchronous watch events before failing
    watch_timeout = 5.0
    #: seconds to wait to be sure an event does I{not} come
    quiet_period = 0.2

    async def make_store(self) -> Any:
        """Fire with a fresh, empty store; the test case cleans it up."""
        raise NotImplementedError

    async def reopen_store(self, store: Any) -> Any:
        """Stop C{store} and open a new one on the same data."""
        raise NotImplementedError

    # -- helpers ------------------------------------------------------------------------------
    def collect(self, watch: Watch) -> list:
        events: list = []
        watch.subscribe(lambda e: events.append((e.type, e.object)))
        self.addCleanup(watch.stop)  # type: ignore[attr-defined]
        return events

    async def wait_for(self, events: list, count: int) -> list:
        waited = 0.0
        while len(events) < count and waited < self.watch_timeout:
            await sleep(0.01)
            waited += 0.01
        self.assertEqual(len(events), count, events)  # type: ignore[attr-defined]
        return events

    async def quiet(self, events: list, count: int) -> None:
        """Wait L{quiet_period} and assert exactly C{count} events came."""
        await sleep(self.quiet_period)
        self.assertEqual(len(events), count, events)  # type: ignore[attr-defined]

    async def failure_of(self, d: Deferred, *types: type) -> Exception:
        try:
            result = await d
        except types as e:
            return e
        self.fail(f"expected {types}, got result {result!r}")  # type: ignore[attr-defined]

    # -- interface -----------------------------------------------------------------------------
    async def test_provides_interface(self):
        """The store provides L{IStorage} and a short C{name}."""
        store = await self.make_store()
        self.assertTrue(verifyObject(IStorage, store))
        self.assertIn(store.name, ("sqlite", "etcd"))

    # -- create / get -------------------------------------------------------------------------
    async def test_create_and_get(self):
        """create stores the object at a new revision and get returns it with that revision."""
        store = await self.make_store()
        before = await store.current_revision()
        created = await store.create("/registry/pods/ns/a", pod("a"))
        self.assertEqual(created, at(pod("a"), before + 1))
        self.assertEqual(await store.get("/registry/pods/ns/a"), at(pod("a"), before + 1))

    async def test_create_ignores_resource_version(self):
        """The resourceVersion of the input is not stored; the write's revision replaces it."""
        store = await self.make_store()
        created = await store.create("/registry/pods/ns/a", at(pod("a"), 999999))
        got = await store.get("/registry/pods/ns/a")
        self.assertEqual(got, created)
        self.assertNotEqual(rv(got), 999999)

    async def test_create_existing(self):
        """create of an existing key fails with KeyExistsError and writes nothing."""
        store = await self.make_store()
        await store.create("/registry/pods/ns/a", pod("a"))
        before = await store.current_revision()
        await self.failure_of(store.create("/registry/pods/ns/a", pod("a", x=1)), KeyExistsError)
        self.assertEqual(await store.current_revision(), before)
        self.assertEqual((await store.get("/registry/pods/ns/a"))["spec"], {})

    async def test_get_missing(self):
        """get of a missing key fails with KeyNotFoundError, or fires None if ignored."""
        store = await self.make_store()
        await self.failure_of(store.get("/registry/pods/ns/nope"), KeyNotFoundError)
        self.assertIsNone(await store.get("/registry/pods/ns/nope", ignore_not_found=True))

    async def test_get_too_large_resource_version(self):
        """get with a resourceVersion newer than the store fails with upstream's message."""
        store = await self.make_store()
        current = await store.current_revision()
        e = await self.failure_of(
            store.get("/registry/pods/ns/a", resource_version=str(current + 100)),
            TooLargeResourceVersionError,
        )
        self.assertEqual(str(e), f"Too large resource version: {current + 100}, current: {current}")

    async def test_get_invalid_resource_version(self):
        """A non-numeric resourceVersion is an InvalidContinueError (400) naming the value."""
        store = await self.make_store()
        e = await self.failure_of(
            store.get("/registry/pods/ns/a", resource_version="abc"), InvalidContinueError
        )
        self.assertEqual(
            str(e),
            'invalid resource version: resourceVersion: Invalid value: "abc": '
            'strconv.ParseUint: parsing "abc": invalid syntax',
        )

    async def test_keys_with_and_without_prefix(self):
        """A key with the store prefix and the same key without it name one object."""
        store = await self.make_store()
        created = await store.create("/registry/pods/ns/a", pod("a"))
        key = "/pods/ns/a" if store._prefix == "/registry" else "/registry/pods/ns/a"
        self.assertEqual(await store.get(key), created)

    # -- guaranteed_update ------------------------------------------------------------------
    async def test_guaranteed_update(self):
        """try_update gets the current object (with resourceVersion); the result is stored."""
        store = await self.make_store()
        created = await store.create("/registry/pods/ns/a", pod("a"))
        seen = []

        def update(current):
            seen.append(json.loads(json.dumps(current)))
            current["spec"]["x"] = 1
            return current

        updated = await store.guaranteed_update("/registry/pods/ns/a", update)
        self.assertEqual(seen, [created])
        self.assertEqual(updated, at(pod("a", x=1), rv(created) + 1))
        self.assertEqual(await store.get("/registry/pods/ns/a"), updated)

    async def test_guaranteed_update_deferred(self):
        """try_update may return a Deferred of the new object."""
        store = await self.make_store()
        created = await store.create("/registry/pods/ns/a", pod("a"))
        updated = await store.guaranteed_update(
            "/registry/pods/ns/a", lambda cur: succeed(pod("a", y=2))
        )
        self.assertEqual(updated, at(pod("a", y=2), rv(created) + 1))

    async def test_guaranteed_update_noop(self):
        """An update that serialises identically writes nothing and returns the current object."""
        store = await self.make_store()
        created = await store.create("/registry/pods/ns/a", pod("a"))
        before = await store.current_revision()
        result = await store.guaranteed_update("/registry/pods/ns/a", lambda cur: cur)
        self.assertEqual(result, created)
        self.assertEqual(await store.current_revision(), before)

    async def test_guaranteed_update_conflict_retry(self):
        """A concurrent write between read and swap makes the update retry on the new state."""
        store = await self.make_store()
        await store.create("/registry/pods/ns/a", pod("a"))
        calls = []

        async def concurrent():
            return await store.guaranteed_update(
                "/registry/pods/ns/a", lambda cur: {**cur, "spec": {**cur["spec"], "other": 1}}
            )

        def update(current):
            calls.append(json.loads(json.dumps(current)))
            d = Deferred.fromCoroutine(concurrent()) if len(calls) == 1 else succeed(None)

            def then(_):
                current["spec"]["mine"] = 1
                return current

            return d.addCallback(then)

        result = await store.guaranteed_update("/registry/pods/ns/a", update)
        self.assertEqual(len(calls), 2)
        self.assertEqual(calls[1]["spec"], {"other": 1})
        self.assertEqual(result["spec"], {"other": 1, "mine": 1})
        self.assertEqual(rv(result), rv(calls[1]) + 1)
        self.assertEqual(await store.get("/registry/pods/ns/a"), result)

    async def test_guaranteed_update_missing(self):
        """A missing key fails with KeyNotFoundError unless ignore_not_found (then None in)."""
        store = await self.make_store()
        await self.failure_of(
            store.guaranteed_update("/registry/pods/ns/a", lambda cur: pod("a")), KeyNotFoundError
        )
        seen = []

        def update(current):
            seen.append(current)
            return pod("a")

        result = await store.guaranteed_update("/registry/pods/ns/a", update, ignore_not_found=True)
        self.assertEqual(seen, [None])
        self.assertEqual(await store.get("/registry/pods/ns/a"), result)

    async def test_guaranteed_update_preconditions(self):
        """A uid precondition mismatch is InvalidObjError, an rv mismatch a conflict."""
        store = await self.make_store()
        created = await store.create("/registry/pods/ns/a", pod("a"))
        e = await self.failure_of(
            store.guaranteed_update("/registry/pods/ns/a", lambda c: c, Preconditions(uid="zzz")),
            InvalidObjError,
        )
        self.assertEqual(
            str(e), "Precondition failed: UID in precondition: zzz, UID in object meta: uid-a"
        )
        e = await self.failure_of(
            store.guaranteed_update(
                "/registry/pods/ns/a", lambda c: c, Preconditions(resource_version="1")
            ),
            ResourceVersionConflictError,
        )
        self.assertEqual(
            str(e),
            "Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in "
            f"object meta: {rv(created)}",
        )
        ok = await store.guaranteed_update(
            "/registry/pods/ns/a", lambda c: pod("a", z=1),
            Preconditions(uid="uid-a", resource_version=str(rv(created))),
        )
        self.assertEqual(ok["spec"], {"z": 1})

    async def test_guaranteed_update_abort(self):
        """An exception from try_update propagates and nothing is written."""
        store = await self.make_store()
        await store.create("/registry/pods/ns/a", pod("a"))
        before = await store.current_revision()

        def update(current):
            raise ValueError("no")

        await self.failure_of(store.guaranteed_update("/registry/pods/ns/a", update), ValueError)
        self.assertEqual(await store.current_revision(), before)

    # -- delete ----------------------------------------------------------------------------
    async def test_delete(self):
        """delete removes the key and returns its last state at the delete's revision."""
        store = await self.make_store()
        created = await store.create("/registry/pods/ns/a", pod("a", x=1))
        deleted = await store.delete("/registry/pods/ns/a")
        self.assertEqual(deleted, at(pod("a", x=1), rv(created) + 1))
        self.assertEqual(await store.current_revision(), rv(created) + 1)
        await self.failure_of(store.get("/registry/pods/ns/a"), KeyNotFoundError)

    async def test_delete_missing(self):
        """delete of a missing key fails with KeyNotFoundError."""
        store = await self.make_store()
        await self.failure_of(store.delete("/registry/pods/ns/a"), KeyNotFoundError)

    async def test_delete_preconditions(self):
        """delete with a mismatching uid fails with InvalidObjError and keeps the object."""
        store = await self.make_store()
        created = await store.create("/registry/pods/ns/a", pod("a"))
        await self.failure_of(
            store.delete("/registry/pods/ns/a", Preconditions(uid="other")), InvalidObjError
        )
        await self.failure_of(
            store.delete("/registry/pods/ns/a", Preconditions(resource_version="1")),
            ResourceVersionConflictError,
        )
        self.assertEqual(await store.get("/registry/pods/ns/a"), created)
        deleted = await store.delete("/registry/pods/ns/a", Preconditions(uid="uid-a"))
        self.assertEqual(deleted["metadata"]["uid"], "uid-a")

    async def test_delete_validate_deletion(self):
        """validate_deletion sees the current object; its exception aborts the delete."""
        store = await self.make_store()
        created = await store.create("/registry/pods/ns/a", pod("a"))
        seen = []

        def refuse(obj):
            seen.append(obj)
            raise ValueError("refused")

        await self.failure_of(store.delete("/registry/pods/ns/a", None, refuse), ValueError)
        self.assertEqual(seen, [created])
        self.assertEqual(await store.get("/registry/pods/ns/a"), created)
        deleted = await store.delete("/registry/pods/ns/a", None, lambda obj: succeed(None))
        self.assertEqual(rv(deleted), rv(created) + 1)

    async def test_delete_conflict_retry(self):
        """A concurrent update during validate_deletion makes delete retry on the new state."""
        store = await self.make_store()
        await store.create("/registry/pods/ns/a", pod("a"))
        seen = []

        def validate(obj):
            seen.append(obj)
            if len(seen) == 1:
                return store.guaranteed_update("/registry/pods/ns/a", lambda c: pod("a", v=2))
            return None

        deleted = await store.delete("/registry/pods/ns/a", None, validate)
        self.assertEqual(len(seen), 2)
        self.assertEqual(seen[1]["spec"], {"v": 2})
        self.assertEqual(deleted, at(pod("a", v=2), rv(seen[1]) + 1))

    # -- lists --------------------------------------------------------------------------------
    async def fill(self, store, names, prefix="/registry/pods/ns/"):
        out = []
        for name in names:
            out.append(await store.create(prefix + name, pod(name)))
        return out

    async def test_list_prefix_boundary(self):
        """A recursive list of C{/pods/a} does not include C{/pods/ab/x}; items in key order."""
        store = await self.make_store()
        ax = await store.create("/registry/pods/a/x", pod("ax"))
        ay = await store.create("/registry/pods/a/y", pod("ay"))
        await store.create("/registry/pods/ab/x", pod("abx"))
        await store.create("/registry/pods/a", pod("a-itself"))
        result = await store.get_list("/registry/pods/a")
        self.assertEqual(result.items, [ax, ay])
        self.assertEqual(result.resource_version, str(await store.current_revision()))
        self.assertEqual(result.continue_token, "")
        self.assertIsNone(result.remaining_item_count)

    async def test_list_empty(self):
        """An empty prefix lists nothing at the current revision."""
        store = await self.make_store()
        result = await store.get_list("/registry/pods/")
        self.assertEqual(result.items, [])
        self.assertEqual(result.resource_version, str(await store.current_revision()))

    async def test_list_non_recursive(self):
        """A non-recursive list reads exactly one key."""
        store = await self.make_store()
        a = await store.create("/registry/pods/ns/a", pod("a"))
        await store.create("/registry/pods/ns/a/b", pod("b"))
        self.assertEqual((await store.get_list("/registry/pods/ns/a", recursive=False)).items, [a])
        self.assertEqual(
            (await store.get_list("/registry/pods/ns/zz", recursive=False)).items, []
        )

    async def test_list_exact_revision(self):
        """resourceVersionMatch=Exact reads the state at that revision."""
        store = await self.make_store()
        a, b = await self.fill(store, ["a", "b"])
        await store.guaranteed_update("/registry/pods/ns/a", lambda c: pod("a", x=1))
        await store.delete("/registry/pods/ns/b")
        await self.fill(store, ["c"])
        old = await store.get_list(
            "/registry/pods/ns", resource_version=str(rv(b)), resource_version_match="Exact"
        )
        self.assertEqual(old.items, [a, b])
        self.assertEqual(old.resource_version, str(rv(b)))
        now = await store.get_list("/registry/pods/ns")
        self.assertEqual([i["metadata"]["name"] for i in now.items], ["a", "c"])

    async def test_list_not_older_than(self):
        """A NotOlderThan list at a future revision fails; at an old one reads the latest."""
        store = await self.make_store()
        (a,) = await self.fill(store, ["a"])
        current = await store.current_revision()
        e = await self.failure_of(
            store.get_list("/registry/pods/ns", resource_version=str(current + 10),
                           resource_version_match="NotOlderThan"),
            TooLargeResourceVersionError,
        )
        self.assertEqual(str(e), f"Too large resource version: {current + 10}, current: {current}")
        result = await store.get_list("/registry/pods/ns", resource_version="1")
        self.assertEqual((result.items, result.resource_version), ([a], str(current)))

    async def test_list_exact_future(self):
        """An Exact list at a revision the store has not reached is TooLargeResourceVersion."""
        store = await self.make_store()
        current = await store.current_revision()
        await self.failure_of(
            store.get_list("/registry/pods/ns", resource_version=str(current + 5),
                           resource_version_match="Exact"),
            TooLargeResourceVersionError,
        )

    async def test_list_paging(self):
        """limit/continue page through a consistent snapshot with remaining_item_count."""
        store = await self.make_store()
        objs = await self.fill(store, ["a", "b", "c", "d", "e"])
        snapshot = await store.current_revision()
        page1 = await store.get_list("/registry/pods/ns", limit=2)
        self.assertEqual(page1.items, objs[:2])
        self.assertEqual(page1.resource_version, str(snapshot))
        self.assertEqual(page1.remaining_item_count, 3)
        token = json.loads(base64.urlsafe_b64decode(page1.continue_token + "=="))
        prefixes = self.first_page_start_prefix
        if isinstance(prefixes, str):
            prefixes = (prefixes,)
        self.assertIn(token.pop("start"), [p + "b\x00" for p in prefixes])
        self.assertEqual(token, {"v": "meta.k8s.io/v1", "rv": snapshot})
        # changes after the first page do not show in later pages
        await store.delete("/registry/pods/ns/c")
        await store.create("/registry/pods/ns/bb", pod("bb"))
        page2 = await store.get_list("/registry/pods/ns", limit=2,
                                     continue_token=page1.continue_token)
        self.assertEqual(page2.items, objs[2:4])
        self.assertEqual(page2.resource_version, str(snapshot))
        self.assertEqual(page2.remaining_item_count, 1)
        page3 = await store.get_list("/registry/pods/ns", limit=2,
                                     continue_token=page2.continue_token)
        self.assertEqual(page3.items, objs[4:])
        self.assertEqual(page3.continue_token, "")
        self.assertIsNone(page3.remaining_item_count)

    async def test_list_limit_exact_fit(self):
        """A limit equal to the number of items gives no continue token."""
        store = await self.make_store()
        objs = await self.fill(store, ["a", "b"])
        result = await store.get_list("/registry/pods/ns", limit=2)
        self.assertEqual((result.items, result.continue_token), (objs, ""))

    async def test_list_predicate_paging_fills_limit(self):
        """With a predicate, a page keeps reading until it has C{limit} matches."""
        store = await self.make_store()
        names = [f"p{i:02d}" for i in range(12)]
        objs = await self.fill(store, names)
        wanted = SelectionPredicate(lambda o: int(o["metadata"]["name"][1:]) % 3 == 0)
        page = await store.get_list("/registry/pods/ns", limit=2, predicate=wanted)
        self.assertEqual(page.items, [objs[0], objs[3]])
        self.assertIsNone(page.remaining_item_count)
        self.assertNotEqual(page.continue_token, "")
        got = list(page.items)
        while page.continue_token:
            page = await store.get_list("/registry/pods/ns", limit=2, predicate=wanted,
                                        continue_token=page.continue_token)
            got.extend(page.items)
        self.assertEqual(got, [objs[0], objs[3], objs[6], objs[9]])

    async def test_list_predicate_without_limit(self):
        """Without a limit a predicate just filters."""
        store = await self.make_store()
        objs = await self.fill(store, ["a", "b", "c"])
        result = await store.get_list(
            "/registry/pods/ns", predicate=SelectionPredicate(
                lambda o: o["metadata"]["name"] != "b")
        )
        self.assertEqual(result.items, [objs[0], objs[2]])

    async def test_list_bad_continue(self):
        """A garbage continue token or one combined with a resourceVersion is rejected."""
        store = await self.make_store()
        objs = await self.fill(store, ["a", "b"])
        e = await self.failure_of(
            store.get_list("/registry/pods/ns", limit=1, continue_token="%%%"),
            InvalidContinueError,
        )
        self.assertTrue(str(e).startswith("invalid continue token: continue key is not valid"))
        page = await store.get_list("/registry/pods/ns", limit=1)
        self.assertEqual(page.items, objs[:1])
        e = await self.failure_of(
            store.get_list("/registry/pods/ns", limit=1, continue_token=page.continue_token,
                           resource_version="5"),
            InvalidContinueError,
        )
        self.assertEqual(str(e), "specifying resource version is not allowed when using continue")

    async def test_list_compacted(self):
        """An Exact list or a continue below the compact revision is ResourceVersionExpired."""
        store = await self.make_store()
        await self.fill(store, ["a", "b", "c"])
        page = await store.get_list("/registry/pods/ns", limit=1)
        old = int(page.resource_version)
        await store.guaranteed_update("/registry/pods/ns/a", lambda c: pod("a", x=1))
        await store.guaranteed_update("/registry/pods/ns/a", lambda c: pod("a", x=2))
        await store.compact(await store.current_revision())
        e = await self.failure_of(
            store.get_list("/registry/pods/ns", resource_version=str(old),
                           resource_version_match="Exact"),
            ResourceVersionExpiredError,
        )
        self.assertEqual(str(e), "The resourceVersion for the provided list is too old.")
        e = await self.failure_of(
            store.get_list("/registry/pods/ns", limit=1, continue_token=page.continue_token),
            ResourceVersionExpiredError,
        )
        self.assertTrue(str(e).startswith("The provided continue parameter is too old"))
        rest = json.loads(base64.urlsafe_b64decode(e.continue_token + "=="))
        self.assertEqual(rest, {"v": "meta.k8s.io/v1", "rv": -1, "start": "a\x00"})
        latest = await store.get_list("/registry/pods/ns", limit=1, continue_token=e.continue_token)
        self.assertEqual([i["metadata"]["name"] for i in latest.items], ["b"])

    async def test_compactor_expires_idle_continue(self):
        """
        The compactor's rounds expire a continue token even when nothing else writes (each
        successful round's put of C{compact_rev_key} takes a revision, as in etcd): one round
        (the bootstrap) keeps it, the round after it compacts the revision the first one saw;
        the expired answer's token lists the rest at a newer revision.  A backend that
        another compactor already used may need one more round to take the lead.
        """
        from twisted.internet.task import Clock

        from kubetwist.storage.compaction import CompactorService

        store = await self.make_store()
        await self.fill(store, ["a", "b", "c"])
        page = await store.get_list("/registry/pods/ns", limit=1)
        compactor = CompactorService(getattr(store, "backend", store), Clock(), 300)
        await compactor.compact_once()
        still = await store.get_list("/registry/pods/ns", limit=1,
                                     continue_token=page.continue_token)
        self.assertEqual(still.resource_version, page.resource_version)
        expired = None
        for _ in range(3):
            await compactor.compact_once()
            try:
                await store.get_list("/registry/pods/ns", limit=1,
                                     continue_token=page.continue_token)
            except ResourceVersionExpiredError as e:
                expired = e
                break
        self.assertIsNotNone(expired, "the continue token never expired")
        self.assertTrue(str(expired).startswith("The provided continue parameter is too old"))
        rest = await store.get_list("/registry/pods/ns", limit=1,
                                    continue_token=expired.continue_token)
        self.assertEqual([i["metadata"]["name"] for i in rest.items], ["b"])
        self.assertGreater(int(rest.resource_version), int(page.resource_version))

    async def test_count(self):
        """count is the number of live keys under the prefix."""
        store = await self.make_store()
        await self.fill(store, ["a", "b", "c"])
        await store.create("/registry/pods/other/x", pod("x"))
        await store.delete("/registry/pods/ns/b")
        self.assertEqual(await store.count("/registry/pods/ns"), 2)
        self.assertEqual(await store.count("/registry/pods"), 3)
        self.assertEqual(await store.count("/registry/nothing"), 0)

    async def test_current_revision(self):
        """Each write advances the revision by one; reads do not."""
        store = await self.make_store()
        start = await store.current_revision()
        self.assertIsInstance(start, int)
        await store.create("/registry/pods/ns/a", pod("a"))
        await store.get("/registry/pods/ns/a")
        await store.guaranteed_update("/registry/pods/ns/a", lambda c: pod("a", x=1))
        await store.delete("/registry/pods/ns/a")
        self.assertEqual(await store.current_revision(), start + 3)

    # -- watch --------------------------------------------------------------------------------
    async def test_watch_from_empty_resource_version(self):
        """Watch at C{""}: ADDED per existing object, then live changes."""
        store = await self.make_store()
        a, b = await self.fill(store, ["a", "b"])
        events = self.collect(store.watch("/registry/pods/ns", "", recursive=True))
        await self.wait_for(events, 2)
        c = await store.create("/registry/pods/ns/c", pod("c"))
        a2 = await store.guaranteed_update("/registry/pods/ns/a", lambda cur: pod("a", x=1))
        await self.wait_for(events, 4)
        self.assertEqual(events, [("ADDED", a), ("ADDED", b), ("ADDED", c), ("MODIFIED", a2)])

    async def test_watch_from_zero(self):
        """Watch at C{"0"} behaves as C{""}; a single-key watch sees only that key."""
        store = await self.make_store()
        a, b = await self.fill(store, ["a", "b"])
        events = self.collect(store.watch("/registry/pods/ns/a", "0"))
        await self.wait_for(events, 1)
        await store.guaranteed_update("/registry/pods/ns/b", lambda cur: pod("b", x=1))
        deleted = await store.delete("/registry/pods/ns/a")
        await self.wait_for(events, 2)
        self.assertEqual(events, [("ADDED", a), ("DELETED", deleted)])

    async def test_watch_from_revision(self):
        """Watch at N replays every change after N (DELETED with the delete's revision)."""
        store = await self.make_store()
        a, b = await self.fill(store, ["a", "b"])
        a2 = await store.guaranteed_update("/registry/pods/ns/a", lambda cur: pod("a", x=1))
        gone = await store.delete("/registry/pods/ns/b")
        events = self.collect(store.watch("/registry/pods/ns", str(rv(a)), recursive=True))
        await self.wait_for(events, 3)
        c = await store.create("/registry/pods/ns/c", pod("c"))
        await self.wait_for(events, 4)
        self.assertEqual(events, [("ADDED", b), ("MODIFIED", a2), ("DELETED", gone),
                                  ("ADDED", c)])
        self.assertEqual(gone, at(pod("b"), rv(a2) + 1))
        await self.quiet(events, 4)

    async def test_watch_recursive_boundary(self):
        """A recursive watch of C{/pods/a} ignores C{/pods/ab/x} and C{/pods/a} itself."""
        store = await self.make_store()
        events = self.collect(store.watch("/registry/pods/a", "", recursive=True))
        await sleep(0.05)
        await store.create("/registry/pods/ab/x", pod("abx"))
        await store.create("/registry/pods/a", pod("a"))
        ax = await store.create("/registry/pods/a/x", pod("ax"))
        await self.wait_for(events, 1)
        self.assertEqual(events, [("ADDED", ax)])
        await self.quiet(events, 1)

    async def test_watch_predicate_transitions(self):
        """An object that starts matching is ADDED, stops matching DELETED (old state)."""
        store = await self.make_store()
        hot = SelectionPredicate(lambda o: o["spec"].get("hot") is True)
        start = await store.current_revision()
        await store.create("/registry/pods/ns/a", pod("a"))
        a1 = await store.guaranteed_update("/registry/pods/ns/a", lambda c: pod("a", hot=True))
        a2 = await store.guaranteed_update("/registry/pods/ns/a", lambda c: pod("a", hot=True, n=1))
        a3 = await store.guaranteed_update("/registry/pods/ns/a", lambda c: pod("a", hot=False))
        await store.delete("/registry/pods/ns/a")
        events = self.collect(store.watch("/registry/pods/ns", str(start), recursive=True,
                                          predicate=hot))
        await self.wait_for(events, 3)
        self.assertEqual(events, [
            ("ADDED", a1), ("MODIFIED", a2), ("DELETED", at(pod("a", hot=True, n=1), rv(a3))),
        ])
        await self.quiet(events, 3)

    async def test_watch_stop(self):
        """After stop no events arrive and C{done} has fired."""
        store = await self.make_store()
        watch = store.watch("/registry/pods/ns", "", recursive=True)
        events = self.collect(watch)
        await sleep(0.05)
        await store.create("/registry/pods/ns/a", pod("a"))
        await self.wait_for(events, 1)
        watch.stop()
        fired = []
        watch.done.addCallback(fired.append)
        self.assertEqual(fired, [None])
        await store.create("/registry/pods/ns/b", pod("b"))
        await self.quiet(events, 1)

    async def test_watch_compacted(self):
        """A watch from a compacted revision gets one ERROR (410 Expired) and closes."""
        store = await self.make_store()
        start = await store.current_revision()
        await self.fill(store, ["a", "b"])
        await store.guaranteed_update("/registry/pods/ns/a", lambda c: pod("a", x=1))
        compacted = await store.current_revision()
        await store.compact(compacted)
        watch = store.watch("/registry/pods/ns", str(start), recursive=True)
        events = self.collect(watch)
        await self.wait_for(events, 1)
        self.assertEqual(events, [("ERROR", {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"too old resource version: {start} ({compacted})",
            "reason": "Expired", "code": 410,
        })])
        await watch.done
        self.assertTrue(watch.ended)

    async def test_watch_many_writes_in_order(self):
        """A watch started amid writes gets every later revision exactly once, in order."""
        store = await self.make_store()
        await self.fill(store, ["a"])
        start = await store.current_revision()
        writes = [store.guaranteed_update("/registry/pods/ns/a",
                                          lambda c, i=i: pod("a", i=i)) for i in range(3)]
        events = self.collect(store.watch("/registry/pods/ns", str(start), recursive=True))
        for i in range(3, 6):
            writes.append(store.create(f"/registry/pods/ns/n{i}", pod(f"n{i}")))
        for d in writes:
            await d
        total = await store.current_revision() - start
        await self.wait_for(events, total)
        revisions = [rv(obj) for _, obj in events]
        self.assertEqual(revisions, list(range(start + 1, start + total + 1)))
        await self.quiet(events, total)

    # -- lifecycle ----------------------------------------------------------------------------
    async def test_persistence_across_reopen(self):
        """Objects and revisions survive closing and reopening the store."""
        store = await self.make_store()
        objs = await self.fill(store, ["a", "b"])
        revision = await store.current_revision()
        store = await self.reopen_store(store)
        self.assertEqual(await store.get("/registry/pods/ns/a"), objs[0])
        self.assertEqual((await store.get_list("/registry/pods/ns")).items, objs)
        self.assertEqual(await store.current_revision(), revision)
        c = await store.create("/registry/pods/ns/c", pod("c"))
        self.assertEqual(rv(c), revision + 1)

    async def test_check_health(self):
        """check_health fires with None while the backend is up."""
        store = await self.make_store()
        self.assertIsNone(await store.check_health())


def decode_token(token: str) -> Optional[dict]:
    """The JSON inside a continue token (for tests)."""
    return json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
