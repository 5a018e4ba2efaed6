# -*- test-case-name: tests.storage.test_sqlite -*-
"""
The embedded store: an MVCC log in SQLite, after k3s' kine (C{pkg/drivers/generic},
C{pkg/logstructured/sqllog}), serving upstream C{k8s.io/apiserver/pkg/storage.Interface}
semantics (see L{kubetwist.storage.interfaces}).

One table holds every write as a row whose autoincrement C{id} is the revision: create, update
and delete each append a row C{(name, created, deleted, create_revision, prev_revision, value,
old_value)}.  The latest state of a key is its newest row; the state at revision R is the newest
row with C{id <= R}, unless that row is a tombstone (C{deleted = 1}).  A fresh database starts at
revision 1, like etcd.

Concurrency: every SQLite call runs on one dedicated thread (a single-thread C{ThreadPool} the
store owns), so writes are serialised and each is one transaction doing its compare-and-swap
inside.  Results come back to the reactor in commit order, where each committed write is fanned
out to the watchers whose key range covers it.  A watch from revision N registers first (buffering
live events), then queries the log for rows after N on the same thread; the query answers with
the revision it read at, R, and buffered events with revision <= R are dropped, so the replay
and the live stream join without gaps or duplicates.

Compaction (L{kubetwist.storage.compaction}): the store keeps upstream's C{compact_rev_key}
(value and version) in C{kine_meta}, so the same compactor drives it as drives etcd.  After a
compaction the freed pages go back to the file system (the database runs with
C{auto_vacuum = INCREMENTAL}; C{PRAGMA incremental_vacuum}) and the WAL is checkpointed and
truncated, so under a steady update load the files stay bounded.

One process per database: the in-process watch fan-out cannot see another process's writes,
so a store opened with C{lock_path} takes an exclusive C{flock} on that file and refuses to
open (L{DataDirInUseError}) while another process holds it.

Privacy: the database holds every Secret, so its files are the owner's alone whatever the
umask: the data directory 0700 (L{secure_directory}), the database 0600 before SQLite opens it
(SQLite creates C{-wal} and C{-shm} with the database's mode), and files found readable by
others are made private, with a warning in the log.

Durability: the WAL runs with C{synchronous=NORMAL} by default: a committed write survives a
crash of the process, but the last transactions before a power loss or kernel crash may be
lost (never corrupting the database).  C{synchronous=FULL} (C{--embedded-sync=full}) syncs the
WAL at every commit, so a write acknowledged to a client survives power loss too, at the cost
of one C{fsync} per write (see C{docs/performance.md}).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.python.threadpool import ThreadPool
from zope.interface import implementer

from kubetwist.runtime.errors import new_internal_error
from kubetwist.storage.compaction import COMPACT_REV_KEY, CompactTxnResult, ICompactable
from kubetwist.storage.continuetoken import (
    CompactedError,
    FutureRevisionError,
    key_bytes,
    key_text,
    parse_resource_version,
)
from kubetwist.storage.interfaces import (
    EVERYTHING,
    IStorage,
    SelectionPredicate,
    StorageError,
    UnreachableError,
    Watch,
    WatchEvent,
)
from kubetwist.storage.kv import (
    KeyValue,
    KVStorageBase,
    RangeChunk,
    RawEvent,
    TxnResult,
    bad_request_status,
    error_watch,
    expired_watch_status,
    transform_event,
)

_log = Logger()

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS kine (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name BLOB NOT NULL,
        created INTEGER NOT NULL,
        deleted INTEGER NOT NULL,
        create_revision INTEGER NOT NULL,
        prev_revision INTEGER NOT NULL,
        value BLOB,
        old_value BLOB
    )""",
    "CREATE INDEX IF NOT EXISTS kine_name_id ON kine (name, id)",
    "CREATE TABLE IF NOT EXISTS kine_meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL)",
)

# newest row per key in [start, end) with id <= revision, tombstones excluded
_LATEST_IN_RANGE = """
    FROM kine k JOIN (
        SELECT MAX(id) AS mid FROM kine
        WHERE name >= ? AND name < ? AND id <= ? GROUP BY name
    ) m ON k.id = m.mid
    WHERE k.deleted = 0
"""


_COMPACT_VERSION_KEY = COMPACT_REV_KEY + ".version"

#: C{PRAGMA synchronous} of the embedded store, by C{--embedded-sync} value.
SYNC_MODES = {"normal": "NORMAL", "full": "FULL"}

#: The database's files, beside C{state.db}: SQLite's write-ahead log and shared memory index.
_DB_SUFFIXES = ("", "-wal", "-shm", "-journal")


def secure_directory(path: str) -> str | None:
    """
    Create directory C{path} (and its parents) as the owner's alone (0700), whatever the
    umask; an existing one that others may read, write or enter is changed to 0700.

    @return: a warning to log when an existing directory was changed, else C{None}.
    @raise OSError: it cannot be created or changed.
    """
    if not os.path.isdir(path):
        os.makedirs(path, mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)  # makedirs' mode is filtered by the umask
        return None
    return _make_private(path, 0o700, "data directory")


def secure_database_files(path: str) -> list[str]:
    """
    Create the database file C{path} 0600 if it is missing (so SQLite, which gives its
    C{-wal} and C{-shm} files the database's mode, creates them 0600 too), and make an existing
    database and its C{-wal}, C{-shm} and C{-journal} 0600 when others may read them.

    @return: warnings to log, one per file changed.
    @raise OSError: a file cannot be created or changed.
    """
    warnings = []
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(fd)
    for suffix in _DB_SUFFIXES:
        name = path + suffix
        if os.path.exists(name):
            warning = _make_private(name, 0o600, "database file")
            if warning:
                warnings.append(warning)
    return warnings


def _make_private(path: str, mode: int, what: str) -> str | None:
    current = os.stat(path).st_mode & 0o777
    if current == mode:
        return None
    os.chmod(path, mode)
    if not current & 0o077:
        return None  # only the owner's own bits differed (e.g. 0400): nothing was exposed
    return (f"the embedded store's {what} {path} was accessible to other users (mode "
            f"{current:04o}); changed it to {mode:04o}")


class DataDirInUseError(StorageError):
    """Another process holds the store's lock file (a second writer on one database)."""


def acquire_lock(path: str) -> int:
    """
    Take an exclusive, non-blocking C{flock} on C{path} (created if missing) and write this
    process's id into it.

    @return: the open file descriptor holding the lock (closing it releases the lock).
    @raise DataDirInUseError: another process holds it; the message names that process.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        except OSError:
            holder = ""
        os.close(fd)
        who = f"process {holder}" if holder.isdigit() else "another process"
        raise DataDirInUseError(
            path,
            message=f"the embedded store in {os.path.dirname(path) or '.'} is in use by {who} "
            f"(lock {os.path.basename(path)}); run one kubetwist per --data-dir, or several on "
            "one etcd (--etcd-servers)",
        ) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    return fd


class _Watcher:
    """One registered watch: its key range, predicate, and replay/live state."""

    def __init__(self, start: bytes, end: bytes | None, predicate: SelectionPredicate,
                 watch: Watch, convert: Callable[[RawEvent], RawEvent] = lambda e: e) -> None:
        self.convert = convert
        self.start = start
        self.end = end
        self.predicate = predicate
        self.watch = watch
        self.live = False
        self.pending: list[RawEvent] = []

    def covers(self, key: bytes) -> bool:
        if self.end is None:
            return key == self.start
        return self.start <= key < self.end

    def deliver(self, event: RawEvent) -> None:
        try:
            out = transform_event(self.convert(event), self.predicate)
        except Exception as e:  # noqa: BLE001 -- undecryptable value, raising predicate
            self.watch.send(WatchEvent("ERROR", new_internal_error(str(e)).status))
            self.watch.close()
            return
        if out is not None:
            self.watch.send(out)


@implementer(IStorage, ICompactable)
class SQLiteStorage(KVStorageBase):
    """
    L{IStorage} on a SQLite file (kine-like MVCC log).

    @param reactor: the reactor results are delivered on (C{IReactorFromThreads}).
    @param path: the database file (C{":memory:"} works for one store instance).
    @param prefix: prepended to caller keys (upstream C{--etcd-prefix}).
    @param threadpool: the pool SQLite runs on (default: a dedicated one-thread pool); a pool
        with C{synchronous = True} runs each call inline (unit tests on a fake reactor).
    @param lock_path: a file to hold an exclusive C{flock} on while the store is open.
    @param sync: C{PRAGMA synchronous}: C{"normal"} (a crash of the process loses nothing; a
        power loss may lose the last commits) or C{"full"} (every commit is synced); see
        L{SYNC_MODES}.
    @raise DataDirInUseError: C{lock_path} is locked by another process (or store).
    @raise ValueError: C{sync} is not a key of L{SYNC_MODES}.
    @ivar compact_revision: revisions below it may be gone (0: never compacted).
    """

    name = "sqlite"

    def __init__(self, reactor: Any, path: str, prefix: str = "/registry",
                 threadpool: Any = None, lock_path: str | None = None,
                 sync: str = "normal") -> None:
        super().__init__(prefix)
        if sync not in SYNC_MODES:
            raise ValueError(f"unknown synchronous mode {sync!r}: want one of "
                             f"{', '.join(SYNC_MODES)}")
        self._sync = SYNC_MODES[sync]
        self._lock_fd = acquire_lock(lock_path) if lock_path else None
        if path != ":memory:" and not path.startswith("file:"):
            for warning in secure_database_files(path):
                _log.warn("{problem}", problem=warning)
        self._reactor = reactor
        self._path = path
        self._conn: sqlite3.Connection | None = None
        self._db_compact_rev = 0  # thread-side copy
        self.compact_revision = 0
        self._watchers: set[_Watcher] = set()
        self._stopped = False
        self._synchronous = bool(getattr(threadpool, "synchronous", False))
        if threadpool is None:
            threadpool = ThreadPool(minthreads=1, maxthreads=1, name="kubetwist-sqlite")
            threadpool.start()
        self._pool = threadpool
        self._shutdown_trigger = None
        if hasattr(reactor, "addSystemEventTrigger"):
            self._shutdown_trigger = reactor.addSystemEventTrigger(
                "during", "shutdown", self.stop
            )
        #: fires with the compact revision once the database is open (calls may be made
        #: before: they queue behind the open on the store's thread)
        self.ready: Deferred = self._run(self._db_open)
        self.ready.addCallback(self._set_compact_revision)

    # -- plumbing ---------------------------------------------------------------------------
    def _run(self, f: Callable, *args: Any) -> Deferred:
        if self._stopped:
            return Deferred.fromCoroutine(_raise(UnreachableError(message="sqlite: store stopped")))
        if self._synchronous:
            return maybeDeferred(f, *args)
        return deferToThreadPool(self._reactor, self._pool, f, *args)

    def _set_compact_revision(self, revision: int) -> int:
        self.compact_revision = revision
        return revision

    def _begin(self, immediate: bool = False) -> sqlite3.Cursor:
        assert self._conn is not None, "database not open"
        cur = self._conn.cursor()
        cur.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        return cur

    # -- thread side (never called on the reactor thread) -----------------------------------
    def _connect(self) -> sqlite3.Connection:
        """The database connection (autocommit: transactions are explicit)."""
        return sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)

    def _db_open(self) -> int:
        conn = self._connect()
        conn.execute("PRAGMA busy_timeout=5000")
        # before WAL: a new database takes the mode at once, an existing one at its VACUUM
        convert = conn.execute("PRAGMA auto_vacuum").fetchone()[0] != 2
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={self._sync}")
        if convert and conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]:
            conn.execute("VACUUM")
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'kine'").fetchone()
        if row is None:
            # start at revision 1 as etcd does, so no list ever reports resourceVersion "0"
            conn.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('kine', 1)")
        row = conn.execute("SELECT v FROM kine_meta WHERE k = 'compact_rev'").fetchone()
        conn.execute("COMMIT")
        self._conn = conn
        self._db_compact_rev = row[0] if row else 0
        return self._db_compact_rev

    def _db_close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @staticmethod
    def _db_revision(cur: sqlite3.Cursor) -> int:
        row = cur.execute("SELECT seq FROM sqlite_sequence WHERE name = 'kine'").fetchone()
        return row[0] if row else 0

    @staticmethod
    def _db_latest(cur: sqlite3.Cursor, name: bytes) -> tuple | None:
        return cur.execute(
            "SELECT id, deleted, create_revision, value FROM kine WHERE name = ? "
            "ORDER BY id DESC LIMIT 1",
            (name,),
        ).fetchone()

    def _db_get(self, key: str) -> tuple[KeyValue | None, int]:
        cur = self._begin()
        try:
            row = self._db_latest(cur, key_bytes(key))
            revision = self._db_revision(cur)
        finally:
            cur.execute("COMMIT")
        if row is None or row[1]:
            return None, revision
        return KeyValue(key, row[3], row[0], row[2]), revision

    def _db_range(self, start: str, end: str, revision: int, limit: int) -> RangeChunk:
        cur = self._begin()
        try:
            current = self._db_revision(cur)
            if revision > current:
                raise FutureRevisionError(start, current)
            if revision and revision < self._db_compact_rev:
                raise CompactedError(start, self._db_compact_rev)
            at = revision or current
            params = (key_bytes(start), key_bytes(end), at)
            rows = cur.execute(
                "SELECT k.name, k.value, k.id, k.create_revision " + _LATEST_IN_RANGE
                + " ORDER BY k.name LIMIT ?",
                params + (limit if limit > 0 else -1,),
            ).fetchall()
            if limit > 0 and len(rows) == limit:
                count = cur.execute("SELECT COUNT(*) " + _LATEST_IN_RANGE, params).fetchone()[0]
            else:
                count = len(rows)
        finally:
            cur.execute("COMMIT")
        kvs = [KeyValue(key_text(r[0]), r[1], r[2], r[3]) for r in rows]
        return RangeChunk(kvs, count, at)

    def _db_count(self, start: str, end: str) -> int:
        cur = self._begin()
        try:
            at = self._db_revision(cur)
            return cur.execute(
                "SELECT COUNT(*) " + _LATEST_IN_RANGE, (key_bytes(start), key_bytes(end), at)
            ).fetchone()[0]
        finally:
            cur.execute("COMMIT")

    def _db_current(self) -> int:
        cur = self._begin()
        try:
            return self._db_revision(cur)
        finally:
            cur.execute("COMMIT")

    def _db_write(self, key: str, value: bytes | None, expected: int,
                  get_on_failure: bool) -> tuple[TxnResult, RawEvent | None]:
        """Put (C{value} bytes) or delete (C{value} C{None}) if the mod revision is C{expected}."""
        name = key_bytes(key)
        cur = self._begin(immediate=True)
        try:
            row = self._db_latest(cur, name)
            live = row is not None and not row[1]
            current = row[0] if live else 0
            if current != expected or (value is None and not live):
                revision = self._db_revision(cur)
                cur.execute("ROLLBACK")
                kv = KeyValue(key, row[3], row[0], row[2]) if live and get_on_failure else None
                return TxnResult(False, revision, kv), None
            old_value = row[3] if live else None
            created = value is not None and not live
            deleted = value is None
            cur.execute(
                "INSERT INTO kine (name, created, deleted, create_revision, prev_revision, "
                "value, old_value) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (name, int(created), int(deleted), row[2] if live else 0,
                 row[0] if row else 0, old_value if deleted else value, old_value),
            )
            revision = cur.lastrowid
            if created:
                cur.execute("UPDATE kine SET create_revision = id WHERE id = ?", (revision,))
            cur.execute("COMMIT")
        except BaseException:
            if self._conn is not None and self._conn.in_transaction:
                cur.execute("ROLLBACK")
            raise
        event = RawEvent(key, revision, value, old_value, is_created=created, is_deleted=deleted)
        return TxnResult(True, revision), event

    def _db_events(self, start: str, end: str | None, after: int) -> tuple[list[RawEvent], int]:
        cur = self._begin()
        try:
            if after + 1 < self._db_compact_rev:
                raise CompactedError(start, self._db_compact_rev)
            current = self._db_revision(cur)
            if end is None:
                rows = cur.execute(
                    "SELECT id, name, created, deleted, value, old_value FROM kine "
                    "WHERE name = ? AND id > ? ORDER BY id", (key_bytes(start), after),
                ).fetchall()
            else:
                rows = cur.execute(
                    "SELECT id, name, created, deleted, value, old_value FROM kine "
                    "WHERE name >= ? AND name < ? AND id > ? ORDER BY id",
                    (key_bytes(start), key_bytes(end), after),
                ).fetchall()
        finally:
            cur.execute("COMMIT")
        events = [
            RawEvent(key_text(r[1]), r[0], None if r[3] else r[4], r[5],
                     is_created=bool(r[2]), is_deleted=bool(r[3]))
            for r in rows
        ]
        return events, current

    def _db_initial(self, start: str, end: str | None) -> tuple[list[RawEvent], int]:
        chunk = self._db_range(start, end if end is not None else start + "\x00", 0, 0)
        events = [RawEvent(kv.key, kv.mod_revision, kv.value, None, is_created=True)
                  for kv in chunk.kvs]
        return events, chunk.revision

    def _db_compact(self, revision: int) -> int:
        cur = self._begin(immediate=True)
        try:
            revision = min(revision, self._db_revision(cur))
            if revision <= self._db_compact_rev:
                cur.execute("COMMIT")
                return self._db_compact_rev
            cur.execute(
                "DELETE FROM kine WHERE id < ? AND id NOT IN "
                "(SELECT MAX(id) FROM kine WHERE id <= ? GROUP BY name)",
                (revision, revision),
            )
            cur.execute("DELETE FROM kine WHERE id < ? AND deleted = 1", (revision,))
            self._db_set_meta(cur, "compact_rev", revision)
            cur.execute("COMMIT")
        except BaseException:
            if self._conn is not None and self._conn.in_transaction:
                cur.execute("ROLLBACK")
            raise
        self._db_compact_rev = revision
        self._db_shrink()
        return revision

    def _db_shrink(self) -> None:
        """Give freed pages back to the file system and truncate the WAL."""
        assert self._conn is not None, "database not open"
        self._conn.execute("PRAGMA incremental_vacuum").fetchall()
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    @staticmethod
    def _db_set_meta(cur: sqlite3.Cursor, key: str, value: int) -> None:
        cur.execute(
            "INSERT INTO kine_meta (k, v) VALUES (?, ?) "
            "ON CONFLICT (k) DO UPDATE SET v = excluded.v",
            (key, value),
        )

    def _db_compact_txn(self, expected_version: int, revision: int) -> CompactTxnResult:
        cur = self._begin(immediate=True)
        try:
            meta = dict(cur.execute(
                "SELECT k, v FROM kine_meta WHERE k IN (?, ?)",
                (COMPACT_REV_KEY, _COMPACT_VERSION_KEY),
            ).fetchall())
            version = meta.get(_COMPACT_VERSION_KEY, 0)
            current = self._db_revision(cur)
            if version != expected_version:
                cur.execute("COMMIT")
                return CompactTxnResult(False, version, current, meta.get(COMPACT_REV_KEY, 0))
            self._db_set_meta(cur, COMPACT_REV_KEY, revision)
            self._db_set_meta(cur, _COMPACT_VERSION_KEY, version + 1)
            # the put of compact_rev_key takes a revision of the log, as in etcd (no event: the
            # key is outside every watched prefix), so an idle store still moves on and a list
            # at the revision of one round ago is compacted at the next
            current += 1
            if cur.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'kine'",
                           (current,)).rowcount == 0:
                cur.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('kine', ?)",
                            (current,))
            cur.execute("COMMIT")
        except BaseException:
            if self._conn is not None and self._conn.in_transaction:
                cur.execute("ROLLBACK")
            raise
        return CompactTxnResult(True, version + 1, current, revision)

    def _db_ping(self) -> None:
        assert self._conn is not None, "database not open"
        self._conn.execute("SELECT 1").fetchone()

    # -- primitives (reactor side) -----------------------------------------------------------
    async def _get_kv(self, key: str) -> tuple[KeyValue | None, int]:
        return await self._run(self._db_get, key)

    async def _range(self, start: str, end: str, revision: int, limit: int) -> RangeChunk:
        return await self._run(self._db_range, start, end, revision, limit)

    async def _write(self, key: str, value: bytes | None, expected: int,
                     get_on_failure: bool) -> TxnResult:
        result, event = await self._run(self._db_write, key, value, expected, get_on_failure)
        # results arrive on the reactor in commit order: fan out before anything else runs
        if event is not None:
            self._dispatch(event)
        return result

    async def _put(self, key: str, value: bytes, expected_mod_revision: int,
                   get_on_failure: bool) -> TxnResult:
        return await self._write(key, value, expected_mod_revision, get_on_failure)

    async def _delete_kv(self, key: str, expected_mod_revision: int) -> TxnResult:
        return await self._write(key, None, expected_mod_revision, True)

    async def _count(self, start: str, end: str) -> int:
        return await self._run(self._db_count, start, end)

    async def _current_revision(self) -> int:
        return await self._run(self._db_current)

    # -- watch -------------------------------------------------------------------------------
    def _dispatch(self, event: RawEvent) -> None:
        name = key_bytes(event.key)
        for watcher in list(self._watchers):
            if not watcher.covers(name):
                continue
            if watcher.live:
                watcher.deliver(event)
            else:
                watcher.pending.append(event)

    def watch(self, key: str, resource_version: str = "", recursive: bool = False,
              predicate: SelectionPredicate = EVERYTHING) -> Watch:
        """
        L{IStorage.watch}: C{""}/C{"0"} sends ADDED for the current objects then live changes;
        C{"N"} replays the log after N then goes live; N older than the compact revision
        (N + 1 < compact, as etcd) sends one ERROR (410 Expired) and closes.
        """
        try:
            revision = parse_resource_version(resource_version)
            start, end = self._watch_range(key, recursive)
        except StorageError as e:
            return error_watch(bad_request_status(str(e)))
        watcher: _Watcher | None = None

        def on_stop() -> None:
            self._watchers.discard(watcher)  # type: ignore[arg-type]

        def on_progress() -> None:
            # upstream RequestWatchProgress: the current revision, read on the store's one
            # thread after every earlier write; write results reach the reactor (and are fanned
            # out) in commit order, so when this answer arrives every change up to it has been
            # sent to this watch
            def answer(current: int) -> None:
                if not w.ended and watcher is not None and watcher.live:
                    w.send(WatchEvent("BOOKMARK", {"metadata": {"resourceVersion": str(current)}}))

            self._run(self._db_current).addCallbacks(answer, lambda failure: None)

        w = Watch(on_stop=on_stop, on_progress=on_progress)
        watcher = _Watcher(key_bytes(start), None if end is None else key_bytes(end),
                           predicate, w, self.event_from_storage)
        self._watchers.add(watcher)
        if revision == 0:
            d = self._run(self._db_initial, start, end)
        else:
            d = self._run(self._db_events, start, end, revision)

        def synced(result: tuple[list[RawEvent], int]) -> None:
            events, read_at = result
            if w.ended:
                return
            for event in events:
                watcher.deliver(event)
            pending, watcher.pending = watcher.pending, []
            for event in pending:
                if event.revision > read_at:
                    watcher.deliver(event)
            watcher.live = True

        def failed(failure: Any) -> None:
            self._watchers.discard(watcher)  # type: ignore[arg-type]
            if failure.check(CompactedError):
                w.send(WatchEvent("ERROR", expired_watch_status(revision, failure.value.revision)))
            else:
                _log.failure("sqlite watch of {key} failed", failure, key=start)
                w.send(WatchEvent("ERROR", new_internal_error(str(failure.value)).status))
            w.close()

        d.addCallbacks(synced, failed)
        return w

    # -- extras -----------------------------------------------------------------------------
    def compact(self, revision: int) -> Deferred:
        """
        Drop history before C{revision} (clamped to the current revision): superseded rows and
        tombstones older than it.  Fires with the new compact revision.
        """
        d = self._run(self._db_compact, revision)
        d.addCallback(self._set_compact_revision)
        return d

    def compact_txn(self, expected_version: int, revision: int) -> Deferred:
        """
        L{ICompactable.compact_txn} on C{kine_meta}: the compare-and-put of upstream's
        C{compact_rev_key} (its value and version are two rows); a successful put takes one
        revision of the log, as etcd's does (the revision has no row and no event).
        """
        return self._run(self._db_compact_txn, expected_version, revision)

    def check_health(self) -> Deferred:
        """Fire with C{None} if the database answers, else fail with L{UnreachableError}."""

        def unreachable(failure: Any) -> None:
            raise UnreachableError(message=f"sqlite: {failure.value}")

        return self._run(self._db_ping).addErrback(unreachable)

    def stop(self) -> Deferred:
        """Close every watch, the database and the thread; idempotent."""
        if self._stopped:
            return Deferred.fromCoroutine(_none())
        if self._shutdown_trigger is not None:
            try:
                self._reactor.removeSystemEventTrigger(self._shutdown_trigger)
            except (ValueError, KeyError, TypeError):
                pass
        for watcher in list(self._watchers):
            watcher.watch.close()
        self._watchers.clear()
        d = self._run(self._db_close)
        self._stopped = True

        def stop_pool(result: Any) -> Any:
            self._pool.stop()
            lock_fd, self._lock_fd = self._lock_fd, None
            if lock_fd is not None:
                os.close(lock_fd)
            return None

        return d.addBoth(stop_pool)


async def _raise(error: Exception) -> Any:
    raise error


async def _none() -> None:
    return None
