# -*- test-case-name: tests.storage.test_cacher_contract -*-
"""
The L{IStorage} contract (L{tests.storage.contract}) against the L{Cacher} in front of the
embedded SQLite store and in front of a real etcd: reads and watches come from the watch cache,
so the cache must be indistinguishable from its backend.
"""

from __future__ import annotations

import os

from twisted.internet import reactor
from twisted.trial.unittest import TestCase

from kubetwist.storage.cacher import Cacher
from kubetwist.storage.interfaces import TooLargeResourceVersionError
from kubetwist.storage.sqlite import SQLiteStorage
from tests.storage.contract import StorageContractMixin, sleep
from tests.storage.test_etcd3 import EtcdTestMixin


class _CacherMixin:
    """Wraps each store in a Cacher whose pods cache runs from the start, as in a server."""

    first_page_start_prefix = "/"

    async def wrap(self, backend) -> Cacher:
        cacher = Cacher(backend, reactor)
        self.addCleanup(cacher.stop)
        self.assertTrue(await cacher.start_caching("/registry/pods"))
        return cacher


class CacherOverSQLiteContractTests(_CacherMixin, StorageContractMixin, TestCase):
    """The contract against a Cacher over a fresh SQLite database per test."""

    def _open(self, path: str) -> SQLiteStorage:
        store = SQLiteStorage(reactor, path)
        self.addCleanup(store.stop)
        return store

    async def make_store(self) -> Cacher:
        self.path = os.path.join(self.mktemp(), "state.db")
        os.makedirs(os.path.dirname(self.path))
        backend = self._open(self.path)
        await backend.ready
        return await self.wrap(backend)

    async def reopen_store(self, store: Cacher) -> Cacher:
        await store.stop()
        backend = self._open(self.path)
        await backend.ready
        return await self.wrap(backend)


class CacherOverEtcd3ContractTests(_CacherMixin, EtcdTestMixin, StorageContractMixin, TestCase):
    """The contract against a Cacher over a real etcd (one per class, a prefix per test)."""

    #: a consistent list is served from the cache once it has caught up, else from etcd
    #: (Debian's etcd answers no progress requests), whose tokens carry the key without the
    #: cache's leading "/": both continue the same list
    first_page_start_prefix = ("/", "")

    async def make_store(self) -> Cacher:
        return await self.wrap(self.new_store(self.client()))

    async def reopen_store(self, store: Cacher) -> Cacher:
        await store.stop()
        return await self.wrap(self.new_store(self.client()))

    async def test_list_not_older_than(self):
        """
        NotOlderThan over etcd: a future revision fails at once; an old one may be served from
        the cache before the etcd watch has delivered the newest change (any state at least as
        new is allowed, as upstream), and is the latest once the cache has caught up.
        """
        store = await self.make_store()
        (a,) = await self.fill(store, ["a"])
        current = await store.current_revision()
        e = await self.failure_of(
            store.get_list("/registry/pods/ns", resource_version=str(current + 10),
                           resource_version_match="NotOlderThan"),
            TooLargeResourceVersionError,
        )
        self.assertEqual(str(e), f"Too large resource version: {current + 10}, current: {current}")
        cache = store._caches[store.resource_prefix(store._full("/registry/pods/", True))].cache
        waited = 0.0
        while cache.rv < current and waited < self.watch_timeout:
            await sleep(0.01)
            waited += 0.01
        result = await store.get_list("/registry/pods/ns", resource_version="1")
        self.assertEqual((result.items, result.resource_version), ([a], str(current)))
