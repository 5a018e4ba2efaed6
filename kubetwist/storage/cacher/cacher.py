# -*- test-case-name: tests.storage.test_cacher,tests.storage.test_cacher_contract -*-
"""
The watch cache in front of a storage backend: upstream C{k8s.io/apiserver/pkg/storage/cacher}
(C{cacher.go}, C{delegator.go}, C{ready.go}) with the resourceVersion semantics of the API
conventions.

L{Cacher} implements L{IStorage} itself.  Writes, C{count}, C{current_revision} and gets at
resourceVersion C{""} pass straight to the backend.  Reads at other resourceVersions and all
watches are served from one L{_ResourceCache} per resource prefix (C{/registry/configmaps/},
C{/registry/services/specs/}, C{/registry/<group>/<plural>/}), created on first use: it lists
the prefix consistently, then keeps one backend watch from that list's revision, and fans every
event out to its client watches (L{CacheWatcher}).

Reflector semantics (upstream C{Reflector.ListAndWatch}): when the backend watch ends (a lost
connection, an etcd restart) it is re-opened from the cache's revision, after a back-off, so
no event is lost or repeated; when it fails with 410 (compacted) the prefix is re-listed, the
window restarts at the new list and every client watch of the prefix is closed (clients
re-watch from their last revision; those older than the new window get 410).

List semantics (upstream C{shouldDelegateList}, 1.32): continues, C{Exact} matches and the
legacy exact match (C{limit} with a resourceVersion) go to the backend; C{"0"} is served from
the cache as it is (C{limit} ignored, as upstream); C{"N"} (NotOlderThan) and C{""}
(consistent, KEP-2340) from the cache once it has reached N, or the backend's current revision
(one cheap C{current_revision} call).  When the cache is behind and the backend watch can
answer a progress request (L{Watch.request_progress}) the request waits for it (3 s at most,
upstream's C{blockTimeout}); otherwise, or on time-out, the list goes to the backend, as
upstream does without C{RequestWatchProgress}.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from twisted.internet.defer import Deferred, succeed
from twisted.logger import Logger
from zope.interface import implementer

from kubetwist.runtime.errors import make_status, new_internal_error
from kubetwist.storage.cacher.cache_watcher import (
    BOOKMARK_INTERVAL,
    DEFAULT_WATCHER_BUFFER,
    CacheWatcher,
    copy_object,
)
from kubetwist.storage.cacher.watch_cache import (
    EVENT_FRESH_DURATION,
    TooOldError,
    WatchCache,
    range_end,
)
from kubetwist.storage.continuetoken import (
    encode_continue,
    normalize_prefix,
    parse_resource_version,
    prepare_key,
    validate_list_options,
)
from kubetwist.storage.interfaces import (
    EVERYTHING,
    IStorage,
    IWatchCache,
    KeyNotFoundError,
    ListResult,
    ResourceVersionExpiredError,
    SelectionPredicate,
    StorageError,
    TooLargeResourceVersionError,
    Watch,
    WatchEvent,
)
from kubetwist.storage.kv import bad_request_status, error_watch, expired_watch_status

_log = Logger()

#: Upstream C{blockTimeout} (seconds): how long a read waits for the cache to catch up.
FRESHNESS_TIMEOUT = 3.0

#: Objects per page of the cache's (re)list (upstream C{storageWatchListPageSize}): a large
#: prefix is read in several bounded backend calls, none of which can outlast its deadline.
LIST_PAGE_SIZE = 10000

#: Back-off of the backend watch / list retries (seconds): first, factor, cap.
RETRY_INITIAL, RETRY_FACTOR, RETRY_MAX = 0.25, 2.0, 8.0


def too_large_status(error: TooLargeResourceVersionError) -> dict:
    """The ERROR Status of a watch at a future resourceVersion (504, as the API maps it)."""
    return make_status(
        504, "Timeout", f"Timeout: {error}",
        {"causes": [{"reason": "ResourceVersionTooLarge",
                     "message": "Too large resource version"}],
         "retryAfterSeconds": 1},
    ).status


class _ResourceCache:
    """
    One prefix's cache, its reflector (list then watch the backend) and its client watchers.
    """

    def __init__(self, cacher: Cacher, prefix: str) -> None:
        self.cacher = cacher
        self.prefix = prefix
        self.clock = cacher.clock
        self.cache = WatchCache(prefix, cacher.clock, cacher.capacity,
                                cacher.event_fresh_duration)
        self.watchers: set[CacheWatcher] = set()
        self.ready = False
        self.listing = False
        self.stopped = False
        self._ready_waiters: list[Deferred] = []
        self._fresh_waiters: list[tuple[int, Deferred]] = []
        self._backend_watch: Watch | None = None
        self._expired = False
        self._retry_call: Any = None
        self._backoff = RETRY_INITIAL
        self._progress_supported: bool | None = None

    # -- reflector ------------------------------------------------------------------------------
    def start(self) -> None:
        if self.listing or self.stopped:
            return
        self.listing = True
        Deferred.fromCoroutine(self._list_and_watch())

    async def _list_pages(self) -> tuple[int, list[tuple[str, dict]]]:
        """The prefix's objects at one revision, read in pages of L{LIST_PAGE_SIZE} (each
        continue reads the first page's revision): C{(revision, [(key, object)])}."""
        entries: list[tuple[str, dict]] = []
        token = ""
        revision = 0
        while True:
            result = await self.cacher.backend.get_list(
                self.prefix, recursive=True, limit=LIST_PAGE_SIZE, continue_token=token)
            if not token:
                revision = int(result.resource_version)
            keys = result.keys
            if keys is None or len(keys) != len(result.items):
                keys = [self.cacher.key_of(self.prefix, obj) for obj in result.items]
            entries.extend(zip(keys, result.items, strict=True))
            token = result.continue_token
            if not token or self.stopped:
                return revision, entries

    async def _list_and_watch(self) -> None:
        try:
            revision, entries = await self._list_pages()
        except Exception as e:  # noqa: BLE001 - any failure: retry, requests delegate
            self.listing = False
            if self.stopped:
                return
            _log.info("watch cache list of {prefix} failed: {e}", prefix=self.prefix, e=e)
            self._fire_ready(False)
            self._retry(self.start)
            return
        self.listing = False
        if self.stopped:
            return
        self.cache.replace(entries, revision)
        # upstream terminateAllWatchers: a re-list restarts the window
        for watcher in list(self.watchers):
            watcher.close()
        self.ready = True
        self._backoff = RETRY_INITIAL
        self._fire_ready(True)
        self._notify_fresh()
        self._watch_backend()

    def _watch_backend(self) -> None:
        if self.stopped:
            return
        self._expired = False
        watch = self.cacher.backend.watch(self.prefix, str(self.cache.rv), True, EVERYTHING)
        self._backend_watch = watch
        watch.done.addCallback(lambda _: self._backend_ended(watch))
        watch.subscribe(lambda event: self._on_backend_event(watch, event))
        if self._fresh_waiters:
            self._request_progress()

    def _on_backend_event(self, watch: Watch, event: WatchEvent) -> None:
        if watch is not self._backend_watch or self.stopped:
            return
        if event.type == "ERROR":
            if (event.object or {}).get("code") == 410:
                self._expired = True
            else:
                _log.info("watch cache backend watch of {prefix}: {message}",
                          prefix=self.prefix, message=(event.object or {}).get("message"))
            return
        if event.type == "BOOKMARK":
            meta = (event.object or {}).get("metadata") or {}
            try:
                revision = int(meta.get("resourceVersion") or 0)
            except ValueError:
                return
            if self.cache.progress(revision):
                self._notify_fresh()
            return
        key = event.key or self.cacher.key_of(self.prefix, event.object)
        recorded = self.cache.apply(event.type, key, event.object)
        self._backoff = RETRY_INITIAL
        for watcher in list(self.watchers):
            watcher.add(recorded)
        self._notify_fresh()

    def _backend_ended(self, watch: Watch) -> None:
        if watch is not self._backend_watch or self.stopped:
            return
        self._backend_watch = None
        if self._expired:
            # upstream: a 410 makes the reflector re-list
            self.ready = False
            self.start()
            return
        self._retry(self._watch_backend)

    def _retry(self, f: Any) -> None:
        if self.stopped or self._retry_call is not None:
            return
        delay, self._backoff = self._backoff, min(self._backoff * RETRY_FACTOR, RETRY_MAX)

        def run() -> None:
            self._retry_call = None
            f()

        self._retry_call = self.clock.callLater(delay, run)

    def stop(self) -> None:
        self.stopped = True
        if self._retry_call is not None and self._retry_call.active():
            self._retry_call.cancel()
        self._retry_call = None
        watch, self._backend_watch = self._backend_watch, None
        if watch is not None:
            watch.stop()
        for watcher in list(self.watchers):
            watcher.close()
        self.watchers.clear()
        self._fire_ready(False)
        for _, d in self._fresh_waiters:
            d.callback(False)
        self._fresh_waiters = []

    # -- readiness (upstream ready.go) -------------------------------------------------------------
    def _fire_ready(self, ok: bool) -> None:
        waiters, self._ready_waiters = self._ready_waiters, []
        for d in waiters:
            d.callback(ok)

    def wait_ready(self) -> Deferred:
        """Fire with C{True} once listed, C{False} if the list failed (the caller delegates)."""
        if self.ready:
            return succeed(True)
        if not self.listing:
            if self.stopped or self._retry_call is not None:
                return succeed(False)
            self.start()
            if self.ready:
                return succeed(True)
            if not self.listing:
                return succeed(False)
        d: Deferred = Deferred()
        self._ready_waiters.append(d)
        return d

    # -- freshness (upstream waitUntilFreshAndBlock) -----------------------------------------------
    def wait_fresh(self, revision: int) -> Deferred:
        """
        Fire with C{True} once the cache has reached C{revision}, or C{False} when it cannot
        tell within L{FRESHNESS_TIMEOUT} (no progress support, or time-out).
        """
        if self.cache.rv >= revision:
            return succeed(True)
        if self._backend_watch is None or self._progress_supported is False:
            return succeed(False)
        d: Deferred = Deferred()
        entry = (revision, d)
        self._fresh_waiters.append(entry)
        if not self._request_progress():
            self._fresh_waiters.remove(entry)
            return succeed(False)

        def timed_out() -> None:
            if entry in self._fresh_waiters:
                self._fresh_waiters.remove(entry)
                d.callback(False)

        call = self.clock.callLater(self.cacher.freshness_timeout, timed_out)

        def cancel_timer(result: bool) -> bool:
            if call.active():
                call.cancel()
            return result

        return d.addCallback(cancel_timer)

    def _request_progress(self) -> bool:
        watch = self._backend_watch
        if watch is None:
            return self._progress_supported is not False
        self._progress_supported = watch.request_progress()
        return self._progress_supported

    def _notify_fresh(self) -> None:
        if not self._fresh_waiters:
            return
        rv = self.cache.rv
        done = [entry for entry in self._fresh_waiters if entry[0] <= rv]
        if not done:
            return
        self._fresh_waiters = [entry for entry in self._fresh_waiters if entry[0] > rv]
        for _, d in done:
            d.callback(True)


@implementer(IStorage, IWatchCache)
class Cacher:
    """
    L{IStorage} with a watch cache in front of C{backend} (upstream C{Cacher} +
    C{CacheDelegator}).

    @param backend: the L{IStorage} to cache (etcd3, SQLite).
    @param clock: C{IReactorTime} for bookmarks, time-outs, retries and window sizing.
    @param capacity: a fixed event window per prefix, or C{None} for upstream's adaptive
        window (100 events, doubling up to 102400 while the oldest is younger than
        C{event_fresh_duration} seconds).
    @param bookmark_interval: seconds between BOOKMARK events (upstream: 1 minute).
    @param watcher_buffer: live events that may wait for a paused client before its watch is
        closed.
    @param resource_prefixes: keys (as L{Store.key_root}, e.g. C{/registry/services/specs}) to
        treat as resource prefixes; others are found by rule (L{resource_prefix}).
    @param storage_prefix: the backend's key prefix (C{--etcd-prefix}); defaults to the
        backend's own.
    @param freshness_timeout: seconds a read waits for the cache to catch up.
    """

    #: C{watch(share_objects=True)} and C{get_list_encoded} are served (the registry's
    #: L{kubetwist.registry.generic.store.Store} looks for it).
    shares_objects = True

    def __init__(self, backend: Any, clock: Any, *, capacity: int | None = None,
                 bookmark_interval: float = BOOKMARK_INTERVAL,
                 event_fresh_duration: float = EVENT_FRESH_DURATION,
                 watcher_buffer: int = DEFAULT_WATCHER_BUFFER,
                 resource_prefixes: Iterable[str] = (),
                 storage_prefix: str | None = None,
                 freshness_timeout: float = FRESHNESS_TIMEOUT) -> None:
        self.backend = backend
        self.clock = clock
        self.capacity = capacity
        self.bookmark_interval = bookmark_interval
        self.event_fresh_duration = event_fresh_duration
        self.watcher_buffer = watcher_buffer
        self.freshness_timeout = freshness_timeout
        self._prefix = normalize_prefix(
            storage_prefix if storage_prefix is not None
            else getattr(backend, "_prefix", "/registry")
        )
        self._explicit: list[str] = []
        for root in resource_prefixes:
            self.add_resource_prefix(root)
        self._caches: dict[str, _ResourceCache] = {}
        #: revisions below it were compacted through this Cacher (upstream compactor)
        self._compacted = 0
        self._stopped = False

    @property
    def name(self) -> str:
        return self.backend.name

    @property
    def transformer(self) -> Any:
        """The backend's encryption-at-rest transformer (set through to the backend)."""
        return getattr(self.backend, "transformer", None)

    @transformer.setter
    def transformer(self, value: Any) -> None:
        self.backend.transformer = value

    def __getattr__(self, name: str) -> Any:
        # backend extras (compact_revision, ready, ...) pass through
        if name.startswith("__") or name == "backend":
            raise AttributeError(name)
        return getattr(self.backend, name)

    # -- prefixes ---------------------------------------------------------------------------------
    def add_resource_prefix(self, root: str) -> None:
        """Register C{root} (e.g. C{/registry/services/specs}) as one resource's prefix."""
        full = prepare_key(self._prefix, root, recursive=True)
        if full not in self._explicit:
            self._explicit.append(full)
            self._explicit.sort(key=len, reverse=True)

    def resource_prefix(self, full_key: str) -> str | None:
        """
        The cache prefix of backend key C{full_key}: a registered prefix containing it, else
        the key minus its namespace/name tail by upstream's layout: C{<root>/<resource>/},
        C{<root>/<group>/<resource>/} when the first segment is a group (has a dot), and
        C{<root>/services/specs|endpoints/}.  C{None} when the key is not below one.
        """
        for prefix in self._explicit:
            if full_key.startswith(prefix):
                return prefix
        rest = full_key[len(self._prefix):] if full_key.startswith(self._prefix + "/") else None
        if rest is None:
            return None
        segments = rest.strip("/").split("/")
        depth = 2 if segments and ("." in segments[0] or segments[0] == "services") else 1
        if len(segments) < depth:
            return None
        prefix = self._prefix + "/" + "/".join(segments[:depth]) + "/"
        if not full_key.startswith(prefix):
            return None
        return prefix

    def key_of(self, prefix: str, obj: dict) -> str:
        """The key of C{obj} under C{prefix} from its metadata (when the backend gave none)."""
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace")
        name = meta.get("name", "")
        return f"{prefix}{namespace}/{name}" if namespace else f"{prefix}{name}"

    def _full(self, key: str, recursive: bool = False) -> str:
        try:
            return prepare_key(self._prefix, key, recursive)
        except ValueError as e:
            raise StorageError(key, message=str(e)) from None

    def _cache(self, full_key: str) -> _ResourceCache | None:
        if self._stopped:
            return None
        prefix = self.resource_prefix(full_key)
        if prefix is None:
            return None
        rc = self._caches.get(prefix)
        if rc is None:
            rc = self._caches[prefix] = _ResourceCache(self, prefix)
            rc.start()
        return rc

    def start_caching(self, root: str) -> Deferred:
        """
        Register C{root} as a resource prefix and start its cache now; fires with whether it
        is ready (lists and watches of a prefix start its cache on first use anyway).
        """
        self.add_resource_prefix(root)
        rc = self._cache(prepare_key(self._prefix, root, recursive=True))
        return rc.wait_ready() if rc is not None else succeed(False)

    # -- writes and plain reads: the backend -------------------------------------------------------
    def create(self, key: str, obj: dict) -> Deferred:
        return self.backend.create(key, obj)

    def delete(self, key: str, preconditions: Any = None,
               validate_deletion: Any = None) -> Deferred:
        return self.backend.delete(key, preconditions, validate_deletion)

    def guaranteed_update(self, key: str, try_update: Any, preconditions: Any = None,
                          ignore_not_found: bool = False) -> Deferred:
        return self.backend.guaranteed_update(key, try_update, preconditions, ignore_not_found)

    def count(self, key: str) -> Deferred:
        return self.backend.count(key)

    def current_revision(self) -> Deferred:
        return self.backend.current_revision()

    def compact(self, revision: int) -> Deferred:
        """The backend's C{compact}; later watches below the compacted revision get 410."""
        d = self.backend.compact(revision)

        def record(result: Any) -> Any:
            if isinstance(result, int):
                self._compacted = max(self._compacted, result)
            return result

        return d.addCallback(record)

    def _compact_revision(self) -> int:
        backend = getattr(self.backend, "compact_revision", 0)
        return max(self._compacted, backend if isinstance(backend, int) else 0)

    # -- get ---------------------------------------------------------------------------------------
    def get(self, key: str, resource_version: str = "", ignore_not_found: bool = False) -> Deferred:
        """
        Upstream C{Cacher.Get}: C{""} reads the backend; C{"0"} the cache as it is; C{"N"} the
        cache once it has reached N (else the backend).
        """
        if not resource_version:
            return self.backend.get(key, resource_version, ignore_not_found)
        return Deferred.fromCoroutine(self._get(key, resource_version, ignore_not_found))

    def get_shared(self, key: str, resource_version: str = "",
                   ignore_not_found: bool = False) -> Deferred:
        """L{get} for a reader that does not change the object: from the cache it is the
        cache's own, not a copy."""
        if not resource_version:
            return self.backend.get(key, resource_version, ignore_not_found)
        return Deferred.fromCoroutine(self._get(key, resource_version, ignore_not_found,
                                                copy=False))

    async def _get(self, key: str, resource_version: str, ignore_not_found: bool,
                   copy: bool = True) -> Any:
        minimum = parse_resource_version(resource_version)
        full = self._full(key)
        rc = self._cache(full)
        if rc is None or not await rc.wait_ready() or not await rc.wait_fresh(minimum):
            return await self.backend.get(key, resource_version, ignore_not_found)
        obj = rc.cache.objects.get(full)
        if obj is None:
            if ignore_not_found:
                return None
            raise KeyNotFoundError(full)
        return copy_object(obj) if copy else obj

    # -- list --------------------------------------------------------------------------------------
    def get_list(self, key: str, recursive: bool = True, resource_version: str = "",
                 resource_version_match: str = "", limit: int = 0, continue_token: str = "",
                 predicate: SelectionPredicate = EVERYTHING) -> Deferred:
        """L{IStorage.get_list}, from the cache where upstream serves it (module docstring)."""
        async def run() -> ListResult:
            result, cache = await self._get_list(
                key, recursive, resource_version, resource_version_match, limit,
                continue_token, predicate,
            )
            if cache is not None:
                result.items = [copy_object(obj) for obj in result.items]
            return result

        return Deferred.fromCoroutine(run())

    def get_list_shared(self, key: str, recursive: bool = True, resource_version: str = "",
                        resource_version_match: str = "", limit: int = 0,
                        continue_token: str = "",
                        predicate: SelectionPredicate = EVERYTHING) -> Deferred:
        """
        L{get_list} for a consumer that only reads the items (a Table, metadata-only lists):
        the cache's own objects, not copies; they must not be changed.
        """
        return Deferred.fromCoroutine(self._get_list(
            key, recursive, resource_version, resource_version_match, limit, continue_token,
            predicate,
        )).addCallback(lambda found: found[0])

    def get_list_encoded(self, key: str, flavor: Any, encode: Any, recursive: bool = True,
                         resource_version: str = "", resource_version_match: str = "",
                         limit: int = 0, continue_token: str = "",
                         predicate: SelectionPredicate = EVERYTHING) -> Deferred:
        """
        L{get_list} for a consumer that writes the items out: fires with a L{ListResult}
        whose C{encoded} holds C{encode(item)} (bytes) per item, computed once per cached
        object and C{flavor} (any hashable naming the output format; L{WatchCache.encoded_items})
        and reused by every later list of the same object, and whose C{items} are the cache's
        own objects (read-only: no copies are made).  Lists the backend answers are encoded
        as they come.  C{encode} must not change its argument.
        """
        async def run() -> ListResult:
            result, cache = await self._get_list(
                key, recursive, resource_version, resource_version_match, limit,
                continue_token, predicate,
            )
            if cache is None:
                result.encoded = [encode(obj) for obj in result.items]
            else:
                result.encoded = cache.encoded_items(result.keys, result.items, flavor, encode)
            return result

        return Deferred.fromCoroutine(run())

    async def _get_list(self, key, recursive, resource_version, resource_version_match, limit,
                        continue_token, predicate) -> tuple[ListResult, WatchCache | None]:
        """The list and the L{WatchCache} its items (the cache's own, with C{keys}) came
        from, or C{None} when the backend answered."""
        limit = max(0, int(limit or 0))

        async def delegate() -> tuple[ListResult, None]:
            return await self.backend.get_list(key, recursive, resource_version,
                                               resource_version_match, limit, continue_token,
                                               predicate), None

        full = self._full(key, recursive)
        _, _, from_continue = validate_list_options(
            full, recursive, resource_version, resource_version_match, limit, continue_token,
        )
        legacy_exact = (limit > 0 and not resource_version_match
                        and resource_version not in ("", "0"))
        if from_continue or resource_version_match == "Exact" or legacy_exact:
            return await delegate()
        rc = self._cache(full)
        if rc is None or not await rc.wait_ready():
            return await delegate()
        if resource_version == "":
            minimum = await self.backend.current_revision()
        else:
            minimum = parse_resource_version(resource_version)
        if not await rc.wait_fresh(minimum):
            return await delegate()
        cache = rc.cache
        read_rv = cache.rv
        keys = cache.range(full, range_end(full) if recursive else None)
        if resource_version == "0" or not recursive:
            limit = 0
        items: list[dict] = []
        item_keys: list[str] = []
        last_key = ""
        has_more = False
        objects = cache.objects
        if predicate.empty():
            item_keys = keys[:limit] if limit else keys
            items = [objects[k] for k in item_keys]
            has_more = bool(limit) and len(keys) > limit
            last_key = item_keys[-1] if item_keys else ""
        else:
            for i, k in enumerate(keys):
                obj = objects[k]
                if predicate.matches(obj):
                    items.append(obj)
                    item_keys.append(k)
                    last_key = k
                if limit and len(items) >= limit:
                    has_more = i < len(keys) - 1
                    break
        token = ""
        remaining: int | None = None
        if has_more:
            # upstream's cacher encodes against the Store's key root, which has no trailing
            # slash: its tokens' start keys begin with "/" (etcd's do not); both decode alike
            token = encode_continue(last_key + "\x00", full.rstrip("/") if recursive else full,
                                    read_rv)
            if predicate.empty():
                remaining = len(keys) - limit
        return ListResult(items, str(read_rv), token, remaining, item_keys), cache

    # -- watch -------------------------------------------------------------------------------------
    def watch(self, key: str, resource_version: str = "", recursive: bool = False,
              predicate: SelectionPredicate = EVERYTHING, allow_watch_bookmarks: bool = False,
              send_initial_events: bool | None = None,
              timeout: float | None = None, share_objects: bool = False) -> Watch:
        """
        L{IWatchCache.watch} from the cache (upstream C{Cacher.Watch}).

        Start point: C{send_initial_events} true: the state as ADDED events at the cache's
        revision (C{""}: once it has reached the backend's current revision; C{"N"}: N), then
        the annotated BOOKMARK; C{""}/C{"0"} without it: the cache's state as ADDED events;
        C{"N"}: the window's events after N, or one ERROR (410 C{Expired}, C{too old resource
        version: N (M)}) when N is older than the window or compacted.

        C{share_objects}: the events hold the cache's own objects, read-only, with a memo
        shared by every watcher (L{WatchEvent.memo}), for consumers that only encode them.
        """
        try:
            revision = parse_resource_version(resource_version)
            full = self._full(key, recursive)
        except StorageError as e:
            return error_watch(bad_request_status(str(e)))
        rc = self._cache(full)
        if rc is None:
            return self.backend.watch(key, resource_version, recursive, predicate)
        deadline = None if timeout is None else self.clock.seconds() + timeout
        watcher = CacheWatcher(
            self.clock, full, range_end(full) if recursive else None, predicate,
            bookmarks=allow_watch_bookmarks, bookmark_interval=self.bookmark_interval,
            deadline=deadline, max_buffer=self.watcher_buffer,
            progress=lambda: rc.cache.rv, on_stop=lambda w: rc.watchers.discard(w),
            share=share_objects,
        )
        d = Deferred.fromCoroutine(self._start_watch(
            rc, watcher, key, resource_version, revision, recursive, predicate,
            send_initial_events,
        ))

        def failed(failure: Any) -> None:
            if failure.check(TooLargeResourceVersionError):
                watcher.error(too_large_status(failure.value))
                return
            _log.failure("watch cache watch of {key} failed", failure, key=full)
            watcher.error(new_internal_error(str(failure.value)).status)

        d.addErrback(failed)
        return watcher.watch

    async def _start_watch(self, rc: _ResourceCache, watcher: CacheWatcher, key: str,
                           resource_version: str, revision: int, recursive: bool,
                           predicate: SelectionPredicate,
                           send_initial_events: bool | None) -> None:
        if not await rc.wait_ready():
            status = new_internal_error(f"the watch cache of {rc.prefix} is not ready").status
            watcher.error(make_status(503, "ServiceUnavailable", status["message"]).status)
            return
        if watcher.watch.ended:
            return
        compacted = self._compact_revision()
        if revision and revision + 1 < compacted:
            watcher.error(expired_watch_status(revision, compacted))
            return
        if revision and not send_initial_events and revision < rc.cache.rv:
            if await self._compacted_at(key, revision + 1, recursive):
                # the backend's own watch answers with its compact revision (410) and ends
                self._forward(watcher, self.backend.watch(key, resource_version, recursive,
                                                          predicate))
                return
            if watcher.watch.ended:
                return
        initial: list[tuple[str, dict]] | None = None
        snapshot_rv = 0
        if send_initial_events:
            minimum = revision
            if resource_version == "":
                minimum = await self.backend.current_revision()
            if not await rc.wait_fresh(minimum):
                # the cache cannot show it has caught up: the initial state from the backend
                result = await self.backend.get_list(
                    key, recursive, str(minimum) if minimum else "",
                    "NotOlderThan" if minimum else "", predicate=predicate,
                )
                snapshot_rv = int(result.resource_version)
                keys = result.keys or [rc.cacher.key_of(rc.prefix, o) for o in result.items]
                initial = list(zip(keys, result.items, strict=False))
            if watcher.watch.ended:
                return
        elif send_initial_events is False and resource_version == "":
            revision = await self.backend.current_revision()
            if watcher.watch.ended:
                return
        # from here on no await: the snapshot/window and the registration are atomic
        cache = rc.cache
        if send_initial_events or (send_initial_events is None and revision == 0):
            if initial is None:
                snapshot_rv = cache.rv
                initial = [(k, cache.objects[k]) for k in
                           cache.range(watcher.start, watcher.end)]
            # upstream ends the initial events with the annotated bookmark for a watch-list and
            # for a legacy watch from "" or "0" that allows bookmarks
            events = watcher.initial_events(initial, snapshot_rv,
                                            bool(send_initial_events) or watcher.bookmarks)
            rc.watchers.add(watcher)
            watcher.begin(snapshot_rv, events)
            return
        start_rv = revision if revision else cache.rv
        try:
            backlog = cache.events_after(start_rv) if start_rv <= cache.rv else []
        except TooOldError as e:
            watcher.error(expired_watch_status(e.resource_version, e.oldest))
            return
        rc.watchers.add(watcher)
        watcher.begin(start_rv)
        for event in backlog:
            watcher.add(event)

    async def _compacted_at(self, key: str, revision: int, recursive: bool) -> bool:
        """
        Whether the backend has compacted C{revision} (a one-item C{Exact} read there): a watch
        cache cannot see another server's compaction, and a replay must not outlive it.
        """
        try:
            await self.backend.get_list(key, recursive, str(revision), "Exact", 1)
        except ResourceVersionExpiredError:
            return True
        except StorageError:
            return False
        return False

    @staticmethod
    def _forward(watcher: CacheWatcher, source: Watch) -> None:
        """Feed C{source}'s events to C{watcher}'s client and end both together."""
        watcher.watch.done.addCallback(lambda _: source.stop())
        source.done.addCallback(lambda _: watcher.close())
        source.subscribe(watcher.watch.send)

    # -- lifecycle ---------------------------------------------------------------------------------
    def stop(self) -> Deferred:
        """Stop every cache (closing client watches) and the backend."""
        self._stopped = True
        caches, self._caches = list(self._caches.values()), {}
        for rc in caches:
            rc.stop()
        return self.backend.stop()
