# -*- test-case-name: tests.authorization.test_rbac -*-
"""
A list+watch of one storage prefix kept in memory, as a client-go informer keeps it for
upstream's RBAC authorizer (C{rbaclisters} over shared informers): one C{get_list} at
resourceVersion C{"0"} (served by the watch cache), then one recursive C{watch} from the list's
revision; a watch that ends is followed by a fresh list after C{RELIST_DELAY} seconds.

Nothing here blocks: callers read L{Informer.items} (the current objects) at any time, and
L{Informer.wait_synced} gives a Deferred of the first complete list.

Two options serve controllers that watch many objects (the garbage collector over the whole
C{/registry} prefix): C{key} names an item by its backend key too (so objects of several
resources do not collide), and C{transform} keeps a reduced form of each object (client-go's
C{SharedInformer.SetTransform}, used upstream to strip objects to what a controller reads).
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Optional

from twisted.internet.defer import Deferred, ensureDeferred, succeed
from twisted.logger import Logger

__all__ = ["Informer", "RELIST_DELAY"]

log = Logger()

#: Seconds between a lost watch (or a failed list) and the next list.
RELIST_DELAY = 1.0


def object_key(obj: dict) -> tuple[str, str]:
    """C{(namespace, name)} of a stored object (namespace C{""} when cluster-scoped)."""
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "", meta.get("name") or ""


class Informer:
    """
    @param storage: an L{IStorage <kubetwist.storage.interfaces.IStorage>} (the Cacher).
    @param clock: C{IReactorTime}, for relists.
    @param prefix: the key prefix, e.g. C{/registry/clusterroles}.
    @param on_change: called after every change of L{items}: C{on_change(None)} after a
        list, C{on_change((namespace, name))} after an added, modified or deleted object.
    @param key: C{(object, backend key or None) -> hashable}, the name of an item in
        L{items} and in C{on_change}; L{object_key} (C{(namespace, name)}) by default.  The
        backend key is known for lists and events of the key-value backends (not the Cacher).
    @param transform: C{object -> item}, what L{items} keeps of each listed or watched object
        (the object itself by default); DELETED events pass it the object's last state.
    @param page_size: list in pages of this many objects (consistent, at the first page's
        revision; upstream's reflector pages with 500 when the watch cache does not serve the
        list), so that only one page of decoded objects is alive before C{transform}; 0 (the
        default): one list at resourceVersion C{"0"}.
    @ivar items: C{{key: item}}, the last state seen.
    @ivar synced: whether a first list has completed.
    """

    def __init__(self, storage: Any, clock: Any, prefix: str,
                 on_change: Callable[[Optional[Any]], Any],
                 key: Optional[Callable[[dict, Optional[str]], Hashable]] = None,
                 transform: Optional[Callable[[dict], Any]] = None,
                 page_size: int = 0) -> None:
        self.storage = storage
        self.clock = clock
        self.prefix = prefix
        self.on_change = on_change
        self.key = key or (lambda obj, _key: object_key(obj))
        self.transform = transform or (lambda obj: obj)
        self.page_size = page_size
        self.items: dict[tuple[str, str], dict] = {}
        self.synced = False
        self.started = False
        self._stopped = False
        self._watch: Any = None
        self._waiters: list[Deferred] = []
        self._call: Any = None

    def start(self) -> None:
        """Begin listing and watching (idempotent)."""
        if self.started:
            return
        self.started = True
        self._run()

    def stop(self) -> None:
        """Stop watching; no further relists."""
        self._stopped = True
        if self._call is not None and self._call.active():
            self._call.cancel()
        if self._watch is not None:
            self._watch.stop()

    def wait_synced(self) -> Deferred:
        """A Deferred fired (with C{None}) once the first list has completed."""
        if self.synced:
            return succeed(None)
        d: Deferred = Deferred()
        self._waiters.append(d)
        return d

    def _run(self) -> None:
        self._call = None
        if self._stopped:
            return
        ensureDeferred(self._list_and_watch()).addErrback(self._failed)

    def _failed(self, failure: Any) -> None:
        log.failure("RBAC informer of {prefix} failed; relisting", failure, prefix=self.prefix)
        self._relist_later()

    def _relist_later(self) -> None:
        if not self._stopped and (self._call is None or not self._call.active()):
            self._call = self.clock.callLater(RELIST_DELAY, self._run)

    async def _list_and_watch(self) -> None:
        items: dict[Hashable, Any] = {}

        def add(result: Any) -> None:
            keys = result.keys or [None] * len(result.items)
            for o, k in zip(result.items, keys, strict=True):
                items[self.key(o, k)] = self.transform(o)

        if self.page_size:
            result = await self.storage.get_list(self.prefix, recursive=True,
                                                 limit=self.page_size)
            revision = result.resource_version
            add(result)
            while result.continue_token and not self._stopped:
                result = await self.storage.get_list(
                    self.prefix, recursive=True, limit=self.page_size,
                    continue_token=result.continue_token)
                add(result)
        else:
            result = await self.storage.get_list(self.prefix, recursive=True,
                                                 resource_version="0")
            revision = result.resource_version
            add(result)
        if self._stopped:
            return
        self.items = items
        self.synced = True
        self.on_change(None)
        waiters, self._waiters = self._waiters, []
        for d in waiters:
            d.callback(None)
        watch = self.storage.watch(self.prefix, revision, recursive=True)
        self._watch = watch
        watch.subscribe(lambda event: self._event(watch, event))
        watch.done.addBoth(lambda _: self._ended(watch))

    def _event(self, watch: Any, event: Any) -> None:
        if event.type in ("ADDED", "MODIFIED"):
            key = self.key(event.object, event.key)
            self.items[key] = self.transform(event.object)
        elif event.type == "DELETED":
            key = self.key(event.object, event.key)
            self.items.pop(key, None)
        elif event.type == "ERROR":
            watch.stop()
            return
        else:
            return
        self.on_change(key)

    def _ended(self, watch: Any) -> Optional[None]:
        if self._watch is watch:
            self._watch = None
            self._relist_later()
        return None
