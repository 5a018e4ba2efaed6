# -*- test-case-name: tests.storage.test_sqlite -*-
"""The L{IStorage} contract and kine-log specifics of L{kubetwist.storage.sqlite.SQLiteStorage}."""

from __future__ import annotations

import os
import sqlite3
import threading

from twisted.internet import reactor
from twisted.logger import formatEvent, globalLogPublisher
from twisted.trial.unittest import TestCase

from kubetwist.storage.interfaces import UnreachableError
from kubetwist.storage.sqlite import DataDirInUseError, SQLiteStorage, secure_directory
from tests.storage.contract import StorageContractMixin, pod


class SQLiteContractTests(StorageContractMixin, TestCase):
    """The contract against a fresh database file per test."""

    def _open(self, path: str) -> SQLiteStorage:
        store = SQLiteStorage(reactor, path)
        self.addCleanup(store.stop)
        return store

    async def make_store(self) -> SQLiteStorage:
        self.path = os.path.join(self.mktemp(), "state.db")
        os.makedirs(os.path.dirname(self.path))
        store = self._open(self.path)
        await store.ready
        return store

    async def reopen_store(self, store: SQLiteStorage) -> SQLiteStorage:
        await store.stop()
        reopened = self._open(self.path)
        await reopened.ready
        return reopened


class SQLiteSpecificTests(TestCase):
    """Behaviour of the embedded store beyond the shared contract."""

    async def make_store(self) -> SQLiteStorage:
        path = os.path.join(self.mktemp(), "state.db")
        os.makedirs(os.path.dirname(path))
        self.path = path
        store = SQLiteStorage(reactor, path)
        self.addCleanup(store.stop)
        await store.ready
        return store

    def rows(self) -> list[tuple]:
        conn = sqlite3.connect(self.path)
        try:
            return conn.execute(
                "SELECT id, name, created, deleted, create_revision, prev_revision FROM kine "
                "ORDER BY id"
            ).fetchall()
        finally:
            conn.close()

    async def test_log_rows(self):
        """Create, update and delete each append one row whose id is the revision."""
        store = await self.make_store()
        self.assertEqual(await store.current_revision(), 1)
        await store.create("/registry/pods/ns/a", pod("a"))
        await store.guaranteed_update("/registry/pods/ns/a", lambda c: pod("a", x=1))
        await store.delete("/registry/pods/ns/a")
        name = b"/registry/pods/ns/a"
        self.assertEqual(self.rows(), [
            (2, name, 1, 0, 2, 0), (3, name, 0, 0, 2, 2), (4, name, 0, 1, 2, 3),
        ])

    async def test_wal_mode(self):
        """The database runs in WAL journal mode."""
        await self.make_store()
        conn = sqlite3.connect(self.path)
        self.addCleanup(conn.close)
        self.assertEqual(conn.execute("PRAGMA journal_mode").fetchone()[0], "wal")

    async def test_compact_drops_history(self):
        """compact deletes superseded rows and old tombstones, keeps the latest state."""
        store = await self.make_store()
        await store.create("/registry/pods/ns/a", pod("a"))
        await store.guaranteed_update("/registry/pods/ns/a", lambda c: pod("a", x=1))
        await store.create("/registry/pods/ns/b", pod("b"))
        await store.delete("/registry/pods/ns/b")
        await store.create("/registry/pods/ns/c", pod("c"))
        self.assertEqual(await store.compact(6), 6)
        self.assertEqual(store.compact_revision, 6)
        self.assertEqual([r[0] for r in self.rows()], [3, 6])
        self.assertEqual(await store.current_revision(), 6)
        self.assertEqual(await store.count("/registry/pods"), 2)

    async def test_compact_revision_persists(self):
        """The compact revision survives a reopen."""
        store = await self.make_store()
        await store.create("/registry/pods/ns/a", pod("a"))
        await store.compact(2)
        await store.stop()
        reopened = SQLiteStorage(reactor, self.path)
        self.addCleanup(reopened.stop)
        self.assertEqual(await reopened.ready, 2)
        self.assertEqual(reopened.compact_revision, 2)

    async def test_sqlite_off_reactor_thread(self):
        """SQLite work runs on the store's own thread, never the reactor's."""
        store = await self.make_store()
        seen = []
        original = store._db_get

        def spy(key):
            seen.append(threading.current_thread().name)
            return original(key)

        store._db_get = spy
        await store.get("/registry/pods/ns/a", ignore_not_found=True)
        self.assertEqual(len(seen), 1)
        self.assertNotEqual(seen[0], threading.current_thread().name)

    async def test_stopped_store_unreachable(self):
        """After stop, calls fail with UnreachableError and check_health does too."""
        store = await self.make_store()
        await store.stop()
        with self.assertRaises(UnreachableError):
            await store.get("/registry/pods/ns/a")
        with self.assertRaises(UnreachableError):
            await store.check_health()

    async def test_stop_closes_watches(self):
        """stop closes open watches."""
        store = await self.make_store()
        watch = store.watch("/registry/pods", "", recursive=True)
        watch.subscribe(lambda e: None)
        await store.stop()
        self.assertTrue(watch.ended)


class SQLiteLockTests(TestCase):
    """One writer per database: the store's exclusive lock file."""

    def lock_path(self) -> str:
        directory = self.mktemp()
        os.makedirs(directory)
        self.directory = directory
        return os.path.join(directory, "state.db.lock")

    async def test_second_writer_refused(self):
        """A second store on the same lock file raises DataDirInUseError naming the holder."""
        lock = self.lock_path()
        first = SQLiteStorage(reactor, os.path.join(self.directory, "state.db"), lock_path=lock)
        self.addCleanup(first.stop)
        await first.ready
        with self.assertRaises(DataDirInUseError) as caught:
            SQLiteStorage(reactor, os.path.join(self.directory, "state.db"), lock_path=lock)
        self.assertEqual(
            str(caught.exception),
            f"the embedded store in {self.directory} is in use by process {os.getpid()} "
            "(lock state.db.lock); run one kubetwist per --data-dir, or several on one etcd "
            "(--etcd-servers)",
        )
        with open(lock) as f:
            self.assertEqual(f.read(), f"{os.getpid()}\n")

    async def test_lock_released_on_stop(self):
        """After stop the next store takes the lock."""
        lock = self.lock_path()
        first = SQLiteStorage(reactor, os.path.join(self.directory, "state.db"), lock_path=lock)
        await first.ready
        await first.stop()
        second = SQLiteStorage(reactor, os.path.join(self.directory, "state.db"), lock_path=lock)
        self.addCleanup(second.stop)
        await second.ready
        self.assertEqual(await second.current_revision(), 1)

    async def test_incremental_auto_vacuum(self):
        """New databases run with auto_vacuum = INCREMENTAL (2), existing ones are converted."""
        directory = self.mktemp()
        os.makedirs(directory)
        path = os.path.join(directory, "old.db")
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE unrelated (x)")
        conn.commit()
        conn.close()
        store = SQLiteStorage(reactor, path)
        self.addCleanup(store.stop)
        await store.ready
        conn = sqlite3.connect(path)
        self.addCleanup(conn.close)
        self.assertEqual(conn.execute("PRAGMA auto_vacuum").fetchone()[0], 2)


class SQLitePrivacyTests(TestCase):
    """The embedded store's files are the owner's alone, whatever the umask (every Secret is
    in them)."""

    def setUp(self) -> None:
        self.base = self.mktemp()
        os.makedirs(self.base)
        old = os.umask(0)  # the most permissive umask: nothing is filtered out
        self.addCleanup(os.umask, old)
        self.logged: list[str] = []

        def observe(event: dict) -> None:
            if event.get("log_namespace", "").startswith("kubetwist.storage.sqlite"):
                self.logged.append(formatEvent(event))

        globalLogPublisher.addObserver(observe)
        self.addCleanup(globalLogPublisher.removeObserver, observe)

    async def open(self, directory: str, **kwargs) -> SQLiteStorage:
        os.makedirs(directory, exist_ok=True)
        store = SQLiteStorage(reactor, os.path.join(directory, "state.db"),
                              lock_path=os.path.join(directory, "state.db.lock"), **kwargs)
        self.addCleanup(store.stop)
        await store.ready
        name = f"p{len(os.listdir(directory))}-{id(store)}"
        await store.create(f"/pods/default/{name}", pod(name))
        return store

    def modes(self, directory: str) -> dict:
        return {name: os.stat(os.path.join(directory, name)).st_mode & 0o777
                for name in [".", *sorted(os.listdir(directory))]}

    async def test_fresh(self):
        """A fresh data directory is 0700, the database, its WAL, shared memory and lock
        0600."""
        directory = os.path.join(self.base, "a", "data")
        self.assertIsNone(secure_directory(directory))
        await self.open(directory)
        self.assertEqual(self.modes(directory), {
            ".": 0o700, "state.db": 0o600, "state.db-shm": 0o600, "state.db-wal": 0o600,
            "state.db.lock": 0o600})
        self.assertEqual(self.logged, [])

    async def test_existing_readable(self):
        """An existing directory and database others may read are made private, and the
        log says so."""
        directory = os.path.join(self.base, "data")
        store = await self.open(directory)  # no secure_directory: as an older kubetwist left it
        await store.stop()
        os.chmod(directory, 0o755)
        for name in ("state.db", "state.db-wal", "state.db-shm"):
            if os.path.exists(os.path.join(directory, name)):
                os.chmod(os.path.join(directory, name), 0o644)
        warning = secure_directory(directory)
        self.assertEqual(warning, f"the embedded store's data directory {directory} was "
                                  "accessible to other users (mode 0755); changed it to 0700")
        await self.open(directory)
        self.assertEqual({m for m in self.modes(directory).values()}, {0o700, 0o600})
        self.assertIn(f"the embedded store's database file {directory}/state.db was accessible "
                      "to other users (mode 0644); changed it to 0600", self.logged)
        self.assertIsNone(secure_directory(directory))

    async def test_sync(self):
        """synchronous is NORMAL (1) by default and FULL (2) with sync="full"."""
        store = await self.open(os.path.join(self.base, "n"))
        self.assertEqual(store._conn.execute("PRAGMA synchronous").fetchone()[0], 1)
        store = await self.open(os.path.join(self.base, "f"), sync="full")
        self.assertEqual(store._conn.execute("PRAGMA synchronous").fetchone()[0], 2)
        self.assertRaises(ValueError, SQLiteStorage, reactor, ":memory:", sync="off")


from twisted.trial.unittest import SynchronousTestCase  # noqa: E402


class WatchProgressTests(SynchronousTestCase):
    """Watch progress requests (upstream RequestWatchProgress) on the embedded store."""

    def test_progress_bookmark_covers_every_earlier_write(self):
        """A progress request answers a BOOKMARK at the current revision, after the events
        of every write committed before it, even writes under other prefixes."""
        from kubetwist.storage.sqlite import SQLiteStorage
        from tests.support import FakeReactorClock, InlinePool

        store = SQLiteStorage(FakeReactorClock(), ":memory:", threadpool=InlinePool())
        self.successResultOf(store.create("/registry/configmaps/ns/a", {"metadata": {"name": "a"}}))
        events = []
        w = store.watch("/registry/configmaps/", "0", recursive=True)
        w.subscribe(events.append)
        other = self.successResultOf(store.create("/registry/secrets/ns/s",
                                                  {"metadata": {"name": "s"}}))
        self.assertTrue(w.request_progress())
        self.assertEqual([e.type for e in events], ["ADDED", "BOOKMARK"])
        self.assertEqual(events[-1].object["metadata"]["resourceVersion"],
                         other["metadata"]["resourceVersion"])
        w.stop()
