# -*- test-case-name: tests.storage.test_compaction -*-
"""
L{kubetwist.storage.compaction}: upstream's C{compact_rev_key} compaction loop on a fake
clock against a scripted backend, against the embedded store, and with two compactors
sharing one real etcd (only one compacts per interval).
"""

from __future__ import annotations

import os

from twisted.internet import reactor
from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.task import Clock
from twisted.logger import globalLogPublisher
from twisted.trial.unittest import SynchronousTestCase, TestCase
from zope.interface import implementer
from zope.interface.verify import verifyObject

from kubetwist.storage.compaction import (
    COMPACT_REV_KEY,
    DEFAULT_COMPACTION_INTERVAL,
    CompactorService,
    CompactTxnResult,
    ICompactable,
)
from kubetwist.storage.etcd3 import Etcd3Storage
from kubetwist.storage.interfaces import UnreachableError
from kubetwist.storage.sqlite import SQLiteStorage
from tests.storage.contract import pod
from tests.storage.test_etcd3 import EtcdTestMixin


@implementer(ICompactable)
class ScriptedBackend:
    """Answers C{compact_txn} from a queue of results (or exceptions); records every call."""

    name = "scripted"

    def __init__(self) -> None:
        self.answers: list = []
        self.calls: list[tuple] = []

    def compact_txn(self, expected_version: int, revision: int) -> Deferred:
        self.calls.append(("txn", expected_version, revision))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            return fail(answer)
        return succeed(answer)

    def compact(self, revision: int) -> Deferred:
        self.calls.append(("compact", revision))
        return succeed(revision)


class CompactorLoopTests(SynchronousTestCase):
    """The loop of upstream C{runCompactLoop} and the rounds of C{Compact}."""

    def setUp(self) -> None:
        self.clock = Clock()
        self.backend = ScriptedBackend()
        self.service = CompactorService(self.backend, self.clock, 300)

    def test_interfaces(self):
        """Both backends provide ICompactable."""
        verifyObject(ICompactable, self.backend)
        self.assertTrue(ICompactable.implementedBy(Etcd3Storage))
        self.assertTrue(ICompactable.implementedBy(SQLiteStorage))

    def test_rounds(self):
        """
        Round 1 (one interval after start) is the bootstrap: it wins the CAS and does not
        compact; round 2 compacts at the revision round 1 saw.
        """
        self.backend.answers = [CompactTxnResult(True, 1, 100), CompactTxnResult(True, 2, 180)]
        self.service.startService()
        self.clock.advance(299)
        self.assertEqual(self.backend.calls, [])
        self.clock.advance(1)
        self.assertEqual(self.backend.calls, [("txn", 0, 0)])
        self.clock.advance(300)
        self.assertEqual(self.backend.calls,
                         [("txn", 0, 0), ("txn", 1, 100), ("compact", 100)])
        self.assertEqual((self.service.version, self.service.revision,
                          self.service.compact_revision), (2, 180, 100))
        self.service.stopService()
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_lost_cas(self):
        """A failed CAS adopts the key's version and the current revision, compacts nothing."""
        self.backend.answers = [CompactTxnResult(False, 7, 500, 420),
                                CompactTxnResult(True, 8, 560)]
        self.service.startService()
        self.clock.advance(300)
        self.assertEqual((self.service.version, self.service.revision,
                          self.service.compact_revision), (7, 500, 420))
        self.clock.advance(300)
        self.assertEqual(self.backend.calls,
                         [("txn", 0, 0), ("txn", 7, 500), ("compact", 500)])
        self.service.stopService()

    def test_error_keeps_state_and_loop(self):
        """A failed round is logged; the next round repeats it one interval later."""
        logged: list = []
        globalLogPublisher.addObserver(logged.append)
        self.addCleanup(globalLogPublisher.removeObserver, logged.append)
        self.backend.answers = [UnreachableError(message="etcd: down"),
                                CompactTxnResult(True, 1, 40)]
        self.service.startService()
        self.clock.advance(300)
        self.assertEqual((self.service.version, self.service.revision), (0, 0))
        self.assertEqual(
            [e["reason"] for e in logged
             if e.get("activity") == "compaction" and e.get("name") == "scripted"],
            ["etcd: down"],
        )
        self.clock.advance(300)
        self.assertEqual(self.backend.calls, [("txn", 0, 0), ("txn", 0, 0)])
        self.assertEqual((self.service.version, self.service.revision), (1, 40))
        self.service.stopService()

    def test_disabled(self):
        """An interval of 0 schedules nothing (upstream: compaction disabled)."""
        service = CompactorService(self.backend, self.clock, 0)
        service.startService()
        self.assertEqual(self.clock.getDelayedCalls(), [])
        service.stopService()

    def test_stop_cancels_round_in_flight(self):
        """Stopping while a round waits on the backend cancels it and schedules nothing."""
        pending: Deferred = Deferred()
        self.backend.compact_txn = lambda v, r: pending
        self.service.startService()
        self.clock.advance(300)
        self.service.stopService()
        self.assertTrue(pending.called)
        self.assertEqual(self.clock.getDelayedCalls(), [])


class SQLiteCompactionTests(TestCase):
    """The embedded store's C{compact_rev_key}, compaction and file size."""

    async def open(self, path: str | None = None) -> SQLiteStorage:
        if path is None:
            directory = self.mktemp()
            os.makedirs(directory)
            path = os.path.join(directory, "state.db")
        self.path = path
        store = SQLiteStorage(reactor, path)
        self.addCleanup(store.stop)
        await store.ready
        return store

    async def test_compact_txn(self):
        """The CAS on the key's version, its value and version surviving a reopen."""
        store = await self.open()
        await store.create("/registry/pods/ns/a", pod("a"))
        # a successful put takes a revision, as etcd's; a lost compare does not
        self.assertEqual(await store.compact_txn(0, 0), CompactTxnResult(True, 1, 3, 0))
        self.assertEqual(await store.compact_txn(0, 9), CompactTxnResult(False, 1, 3, 0))
        self.assertEqual(await store.compact_txn(1, 3), CompactTxnResult(True, 2, 4, 3))
        self.assertEqual(await store.current_revision(), 4)
        created = await store.create("/registry/pods/ns/b", pod("b"))
        self.assertEqual(created["metadata"]["resourceVersion"], "5")
        await store.stop()
        reopened = await self.open(self.path)
        self.assertEqual(await reopened.compact_txn(1, 5), CompactTxnResult(False, 2, 5, 3))
        self.assertEqual(COMPACT_REV_KEY, "compact_rev_key")

    async def test_service_compacts_store(self):
        """Two rounds of the service on a store compact at the revision of the first round."""
        store = await self.open()
        await store.create("/registry/pods/ns/a", pod("a"))
        await store.guaranteed_update("/registry/pods/ns/a", lambda c: pod("a", x=1))
        service = CompactorService(store, Clock(), 60)
        self.assertEqual(await service.compact_once(), 0)
        seen = service.revision
        await store.guaranteed_update("/registry/pods/ns/a", lambda c: pod("a", x=2))
        self.assertEqual(await service.compact_once(), seen)
        self.assertEqual(store.compact_revision, seen)
        with self.assertRaises(Exception) as caught:
            await store.get_list("/registry/pods", resource_version="2",
                                 resource_version_match="Exact")
        self.assertEqual(type(caught.exception).__name__, "ResourceVersionExpiredError")

    async def test_file_stays_bounded(self):
        """
        Under a steady update load with a compaction after every 400 writes, the database
        and its WAL stop growing: after the 3rd and the 10th round they take the same pages.
        """
        store = await self.open()
        for i in range(20):
            await store.create(f"/registry/configmaps/ns/c{i}", pod(f"c{i}", blob="x" * 2000))
        service = CompactorService(store, Clock(), 60)
        sizes = []
        n = 0
        for _ in range(10):
            for _ in range(400):
                i = n % 20
                n += 1
                await store.guaranteed_update(f"/registry/configmaps/ns/c{i}",
                                              lambda c, n=n, i=i: pod(
                                                  f"c{i}", blob="y" * 2000, n=n))
            await service.compact_once()
            sizes.append(os.path.getsize(self.path) + os.path.getsize(self.path + "-wal"))
        self.assertEqual(os.path.getsize(self.path + "-wal"), 0)
        self.assertLessEqual(sizes[-1], sizes[2])


class EtcdTwoCompactorsTests(EtcdTestMixin, TestCase):
    """Two API servers' compactors on one etcd: one compaction per interval."""

    async def test_one_compaction_per_interval(self):
        """
        A bootstraps (version 0 -> 1); B's CAS fails and adopts version 1; A compacts at its
        first round's revision (version 2); B's next CAS fails again: only A compacts.
        """
        a_store = self.new_store(self.client())
        b_store = self.new_store(self.client())
        a = CompactorService(a_store, Clock(), 60)
        b = CompactorService(b_store, Clock(), 60)
        await a_store.create("/registry/pods/ns/a", pod("a"))
        self.assertEqual(await a.compact_once(), 0)
        self.assertEqual(a.version, 1)
        self.assertEqual(await b.compact_once(), 0)
        self.assertEqual(b.version, 1)
        first = a.revision
        await a_store.guaranteed_update("/registry/pods/ns/a", lambda c: pod("a", x=1))
        self.assertEqual(await a.compact_once(), first)
        self.assertEqual(await b.compact_once(), 0)
        self.assertEqual((a.version, b.version), (2, 2))
        self.assertEqual(b.compact_revision, first)
        watch = a_store.watch("/registry/pods", str(first - 2), recursive=True)
        events: list = []
        watch.subscribe(events.append)
        await watch.done
        self.assertEqual([(e.type, e.object["code"]) for e in events], [("ERROR", 410)])


class DefaultScheduleTests(TestCase):
    """C{twistd kubeapi} compacts by default, every 5 minutes, as kube-apiserver."""

    def test_default_flag(self):
        """C{--etcd-compaction-interval} defaults to upstream's 5m0s."""
        from kubetwist.tap import Options

        options = Options()
        options.parseOptions([])
        self.assertEqual(options["etcd-compaction-interval"], DEFAULT_COMPACTION_INTERVAL)
        self.assertEqual(DEFAULT_COMPACTION_INTERVAL, 300.0)

    async def test_server_runs_compactor(self):
        """The server's storage gets a running compactor child on the same backend, whose
        first round is one interval after start."""
        from kubetwist.app import KubeAPIService
        from kubetwist.tap import Options

        options = Options()
        options.parseOptions([f"--data-dir={self.mktemp()}"])
        service = KubeAPIService(reactor, dict(options), "v1.32.0")
        storage = service.build_storage()
        self.addCleanup(storage.stop)
        await storage.ready
        compactor = service.compactor
        self.assertIs(compactor.parent, service)
        self.assertIs(compactor.storage, storage)
        self.assertEqual(compactor.interval, 300.0)
        compactor.startService()
        self.addCleanup(compactor.stopService)
        [call] = [c for c in reactor.getDelayedCalls() if c.func == compactor._tick]
        delay = call.getTime() - reactor.seconds()
        self.assertTrue(295 < delay <= 300, delay)
