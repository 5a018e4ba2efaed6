# -*- test-case-name: tests.controlplane.test_garbagecollector -*-
"""
The garbage collector: upstream C{k8s.io/kubernetes/pkg/controller/garbagecollector}
(kube-controller-manager), which finishes the deletions the API server only records.

As upstream's C{GraphBuilder}, the collector keeps an incremental dependency graph (every
object's uid, owner references and deletion state; owner uid -> dependents) fed by one
L{Informer <kubetwist.authorization.rbac.informer.Informer>} (list, then watch) per resource,
and processes only the objects an event makes interesting (its C{attemptToDelete} and
C{attemptToOrphan} queues):

  - an owner being deleted with the C{orphan} finalizer: its reference is removed from every
    dependent, then the finalizer (upstream C{orphanDependents}, C{removeFinalizer});
  - an owner being deleted with C{foregroundDeletion}: its dependents are deleted (those whose
    reference has C{blockOwnerDeletion} first; C{Foreground} when they have dependents
    themselves, else C{Background}), and the finalizer goes once no dependent blocks it
    (upstream C{processDeletingDependentsItem}, C{attemptToDeleteItem}); a change or deletion
    of one of its dependents looks at the owner again;
  - a dependent none of whose owners exists any more (the graph, else a fresh read by name
    and uid) is deleted in the background (C{Orphan} / C{Foreground} if its own finalizers
    say so); one that still has an owner loses the references to the missing ones and its
    C{blockOwnerDeletion} on owners waiting for it (upstream C{classifyReferences}).  The
    dependents of a deleted object, and an object whose owners are absent from the graph or
    waiting for their dependents, are looked at when the event arrives.

So an idle server does no work and no storage reads: the cost follows the events.  Every
C{resync} seconds (5 minutes) every node of the graph is looked at again from memory (a safety
net, no listing); the set of stores (custom resources come and go) is checked every
C{DISCOVERY_INTERVAL} seconds, and a new store gets its informer.

Limits: events are ignored (as upstream); an owner reference whose kind no store serves is left
alone (upstream would retry it until the kind appears); references across namespaces are
resolved in the dependent's namespace (as upstream); no admission runs on the collector's
writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Optional

from twisted.application.service import Service
from twisted.internet.defer import CancelledError
from twisted.logger import Logger

from kubetwist.authorization.rbac.informer import Informer
from kubetwist.controlplane.sweeper import SweepService
from kubetwist.registry.deletion import FINALIZER_FOREGROUND, FINALIZER_ORPHAN
from kubetwist.registry.generic.store import Store
from kubetwist.runtime import errors
from kubetwist.server.hooks import PostStartHookService

log = Logger()

#: seconds between two full passes over the in-memory graph (upstream's informer resync)
DEFAULT_INTERVAL = 300.0

#: seconds between two looks at the set of stores (a new custom resource gets an informer)
DISCOVERY_INTERVAL = 5.0

#: resources the collector ignores (upstream C{DefaultIgnoredResources}: events)
IGNORED = {("", "events"), ("events.k8s.io", "events")}


def _group_of(api_version: str) -> str:
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


class _Item:
    """One node of the graph: an object seen by an informer, with the store serving it."""

    def __init__(self, store: Store, obj: dict) -> None:
        self.store = store
        self.obj = obj
        meta = obj.get("metadata") or {}
        self.uid: str = meta.get("uid", "")
        self.name: str = meta.get("name", "")
        self.namespace: str = meta.get("namespace", "")
        self.refs: list[dict] = list(meta.get("ownerReferences") or [])
        self.deleting = bool(meta.get("deletionTimestamp"))
        self.finalizers: list[str] = list(meta.get("finalizers") or [])

    @property
    def waiting_for_dependents(self) -> bool:
        return self.deleting and FINALIZER_FOREGROUND in self.finalizers

    @property
    def owner_uids(self) -> set[str]:
        return {ref.get("uid", "") for ref in self.refs}


class GarbageCollector(SweepService):
    """
    Finishes C{Orphan} and C{Foreground} deletions and collects dependents of deleted owners,
    from a dependency graph kept by watches (see the module docstring).

    @param stores: C{() -> iterable of Store}: every resource to collect over, evaluated at
        start and every C{DISCOVERY_INTERVAL} seconds (so custom resources added later count).
    @param clock: C{IReactorTime} the passes are scheduled on.
    @param interval: seconds between full passes over the graph (in memory, no listing).
    @ivar nodes: C{{uid: _Item}}, the graph's objects.
    @ivar dependents: C{{owner uid: {dependent uid}}}; an owner need not be in L{nodes}.
    @ivar dirty: uids to look at in the next pass.
    """

    name = "garbage-collector"

    def __init__(self, stores: Callable[[], Iterable[Store]], clock: Any,
                 interval: float = DEFAULT_INTERVAL) -> None:
        super().__init__(clock, interval)
        self.stores = stores
        self.informers: dict[tuple[str, str], tuple[Store, Informer]] = {}
        self.nodes: dict[str, _Item] = {}
        self.dependents: dict[str, set[str]] = {}
        self.dirty: set[str] = set()
        self._uids: dict[tuple[tuple[str, str], tuple[str, str]], str] = {}
        self._discovery: Any = None
        self._last_full = -1.0

    def watch_stores(self, stores: Iterable[Store]) -> None:
        """Kept for callers of the sweeping collector: the informers see every change."""

    # --- informers ----------------------------------------------------------------------------
    def startService(self) -> None:
        super().startService()
        self._discover()

    def stopService(self) -> Any:
        if self._discovery is not None and self._discovery.active():
            self._discovery.cancel()
        self._discovery = None
        for _, informer in self.informers.values():
            informer.stop()
        self.informers.clear()
        return super().stopService()

    def _discover(self) -> None:
        """Start an informer for each store not watched yet; look again later."""
        self._discovery = None
        for store in self.stores():
            key = (store.spec.group, store.spec.resource)
            if key in IGNORED or key in self.informers:
                continue
            informer = Informer(store.storage, self.clock, store.prefix(""),
                                lambda k, key=key: self._changed(key, k))
            self.informers[key] = (store, informer)
            informer.start()
        if self.running:
            self._discovery = self.clock.callLater(DISCOVERY_INTERVAL, self._discover)

    def _changed(self, skey: tuple[str, str], key: Optional[tuple[str, str]]) -> None:
        store, informer = self.informers[skey]
        if key is None:  # a (re)list: compare with what the graph had
            keys = {k for (s, k) in self._uids if s == skey} | set(informer.items)
            for k in keys:
                self._update(store, skey, k, informer.items.get(k))
        else:
            self._update(store, skey, key, informer.items.get(key))
        if self.dirty:
            self.trigger()

    def _update(self, store: Store, skey: tuple[str, str], key: tuple[str, str],
                obj: Optional[dict]) -> None:
        """Bring one object's node up to date and mark what the change makes interesting."""
        old_uid = self._uids.get((skey, key))
        item = _Item(store, obj) if obj is not None else None
        if old_uid is not None and (item is None or item.uid != old_uid):
            self._remove(old_uid)
            self._uids.pop((skey, key), None)
        if item is None or not item.uid:
            return
        old = self.nodes.get(item.uid)
        if old is not None:
            for owner in old.owner_uids - item.owner_uids:
                self._unlink(owner, item.uid)
        self.nodes[item.uid] = item
        self._uids[(skey, key)] = item.uid
        for owner in item.owner_uids:
            self.dependents.setdefault(owner, set()).add(item.uid)
        if item.deleting and (FINALIZER_ORPHAN in item.finalizers
                              or FINALIZER_FOREGROUND in item.finalizers):
            self.dirty.add(item.uid)
            if FINALIZER_FOREGROUND in item.finalizers:
                self.dirty.update(self.dependents.get(item.uid, ()))
        if item.refs and not item.deleting:
            for ref in item.refs:
                owner_node = self.nodes.get(ref.get("uid", ""))
                if owner_node is None or owner_node.waiting_for_dependents:
                    self.dirty.add(item.uid)
        self._owners_waiting(old)
        self._owners_waiting(item)

    def _owners_waiting(self, item: Optional[_Item]) -> None:
        """Mark the owners of C{item} that wait for their dependents (the change may let
        them go)."""
        for owner in item.owner_uids if item is not None else ():
            node = self.nodes.get(owner)
            if node is not None and node.waiting_for_dependents:
                self.dirty.add(owner)

    def _remove(self, uid: str) -> None:
        item = self.nodes.pop(uid, None)
        if item is None:
            return
        for owner in item.owner_uids:
            self._unlink(owner, uid)
        # its dependents may be orphans now; its owners may wait for it no more
        self.dirty.update(self.dependents.get(uid, ()))
        self._owners_waiting(item)

    def _unlink(self, owner: str, dependent: str) -> None:
        deps = self.dependents.get(owner)
        if deps is not None:
            deps.discard(dependent)
            if not deps:
                del self.dependents[owner]

    def _deps_of(self, owner: _Item) -> list[tuple[_Item, dict]]:
        out = []
        for uid in sorted(self.dependents.get(owner.uid, ())):
            dep = self.nodes.get(uid)
            if dep is None:
                continue
            out.extend((dep, ref) for ref in dep.refs if ref.get("uid") == owner.uid)
        return out

    # --- one pass -----------------------------------------------------------------------------
    async def sweep(self) -> None:
        """
        One pass over the marked nodes (every node once per C{interval}), from memory; errors
        on one object are logged and the pass goes on.
        """
        for _, informer in list(self.informers.values()):
            await informer.wait_synced()
        now = self.clock.seconds()
        if self._last_full < 0 or now - self._last_full >= self.interval:
            self._last_full = now
            self.dirty.update(self.nodes)
        dirty, self.dirty = self.dirty, set()
        items = [self.nodes[uid] for uid in sorted(dirty) if uid in self.nodes]
        kinds: dict[tuple[str, str], Store] = {}
        for store, _ in self.informers.values():
            kinds.setdefault((store.spec.group, store.spec.kind), store)

        for owner in items:
            if not owner.deleting:
                continue
            deps = self._deps_of(owner)
            if FINALIZER_ORPHAN in owner.finalizers:
                await self._guard(self._orphan(owner, deps))
            elif FINALIZER_FOREGROUND in owner.finalizers and \
                    not any(ref.get("blockOwnerDeletion") for _, ref in deps):
                await self._guard(self._remove_finalizer(owner, FINALIZER_FOREGROUND))

        candidates = [i for i in items if i.refs and not i.deleting]
        candidates.sort(key=lambda i: not any(r.get("blockOwnerDeletion") for r in i.refs))
        for item in candidates:
            await self._guard(self._attempt_to_delete(
                item, self.nodes, kinds, bool(self.dependents.get(item.uid))))

    async def _guard(self, work: Any) -> None:
        try:
            await work
        except errors.StatusError as e:
            if e.code not in (404, 409):
                log.warn("garbage collector: {msg}", msg=e.message)  # noqa: G010
        except CancelledError:
            raise
        except Exception:  # noqa: BLE001 -- one object's failure must not stop the sweep
            log.failure("garbage collector: unexpected error")

    async def _orphan(self, owner: _Item, deps: list[tuple[_Item, dict]]) -> None:
        for dep, _ in deps:
            def drop(current: dict | None, dep: _Item = dep) -> dict:
                return _edit_refs(current, dep, lambda ref: None if ref.get("uid") == owner.uid
                                  else ref)
            await dep.store.update(dep.namespace, dep.name, _async(drop))
        await self._remove_finalizer(owner, FINALIZER_ORPHAN)

    async def _remove_finalizer(self, item: _Item, finalizer: str) -> None:
        def drop(current: dict | None) -> dict:
            meta = _same_object(current, item)
            fins = [f for f in meta.get("finalizers") or [] if f != finalizer]
            if fins:
                meta["finalizers"] = fins
            else:
                meta.pop("finalizers", None)
            return current  # type: ignore[return-value]
        await item.store.update(item.namespace, item.name, _async(drop))

    async def _attempt_to_delete(self, item: _Item, by_uid: dict[str, _Item],
                                 kinds: dict[tuple[str, str], Store],
                                 has_dependents: bool) -> None:
        # the graph may lag behind (informers of different resources are not ordered): decide
        # on the object as stored now (upstream C{attemptToDeleteItem} reads it afresh too)
        try:
            latest = await item.store.get(item.namespace, item.name)
        except errors.StatusError as e:
            if e.code == 404:
                return
            raise
        fresh = _Item(item.store, latest)
        if fresh.uid != item.uid or fresh.deleting or not fresh.refs:
            return
        item = fresh
        solid, dangling, waiting = [], [], []
        for ref in item.refs:
            owner = by_uid.get(ref.get("uid", ""))
            if owner is not None:
                (waiting if owner.waiting_for_dependents else solid).append(ref)
                continue
            store = kinds.get((_group_of(ref.get("apiVersion", "")), ref.get("kind", "")))
            if store is None:
                solid.append(ref)  # a kind nobody serves: leave it alone
                continue
            if await _exists(store, item.namespace if store.spec.namespaced else "", ref):
                solid.append(ref)
            else:
                dangling.append(ref)
        if solid:
            if not dangling and not any(r.get("blockOwnerDeletion") for r in waiting):
                return
            gone = {r.get("uid") for r in dangling}
            unblock = {r.get("uid") for r in waiting}

            def fix(ref: dict) -> dict | None:
                if ref.get("uid") in gone:
                    return None
                if ref.get("uid") in unblock and ref.get("blockOwnerDeletion"):
                    return dict(ref, blockOwnerDeletion=False)
                return ref

            await item.store.update(item.namespace, item.name,
                                    _async(lambda cur: _edit_refs(cur, item, fix)))
            return
        if waiting and has_dependents:
            policy = "Foreground"
        elif FINALIZER_ORPHAN in item.finalizers:
            policy = "Orphan"
        elif FINALIZER_FOREGROUND in item.finalizers:
            policy = "Foreground"
        else:
            policy = "Background"
        await item.store.delete(item.namespace, item.name, {
            "propagationPolicy": policy, "preconditions": {"uid": item.uid}})


async def _exists(store: Store, namespace: str, ref: dict) -> bool:
    """Whether the owner C{ref} names exists with its uid (a fresh read)."""
    try:
        obj = await store.get(namespace, ref.get("name", ""))
    except errors.StatusError as e:
        if e.code == 404:
            return False
        raise
    return (obj.get("metadata") or {}).get("uid") == ref.get("uid")


def _same_object(current: dict | None, item: _Item) -> dict:
    """The metadata of C{current}; 404 when it is gone or was replaced (another uid)."""
    meta = (current or {}).get("metadata") or {}
    if current is None or meta.get("uid") != item.uid:
        raise errors.new_not_found(item.store.spec.group, item.store.spec.resource, item.name)
    return meta


def _edit_refs(current: dict | None, item: _Item,
               fix: Callable[[dict], dict | None]) -> dict:
    meta = _same_object(current, item)
    refs = [r for r in (fix(ref) for ref in meta.get("ownerReferences") or []) if r is not None]
    if refs:
        meta["ownerReferences"] = refs
    else:
        meta.pop("ownerReferences", None)
    return current  # type: ignore[return-value]


def _async(fn: Callable[[dict | None], dict]) -> Callable[[dict | None], Any]:
    async def transform(current: dict | None) -> dict:
        return fn(current)
    return transform


class ServiceHook(PostStartHookService):
    """
    A post-start hook that starts C{service} and stops it with the server's hooks (so a
    controller runs only once the server serves, and its C{/readyz/poststarthook/<name>}
    check passes once it runs).
    """

    def __init__(self, name: str, service: Service, clock: Any) -> None:
        super().__init__(name, self._start, clock)
        self.service = service

    async def _start(self) -> None:
        if not self.service.running:
            self.service.startService()

    def stopService(self) -> Any:
        super().stopService()
        if self.service.running:
            return self.service.stopService()
        return None


def install_collectors(server: Any, stores: dict[tuple[str, str], Store],
                       extra_stores: Callable[[], Iterable[Store]], clock: Any) -> tuple[Any, Any]:
    """
    Build the L{GarbageCollector} (over C{stores}, C{{(group, resource): Store}}, and
    C{extra_stores()}, e.g. custom resources) and the L{PodGC
    <kubetwist.controlplane.podgc.PodGC>}, each started by a post-start hook of C{server}
    (C{start-garbage-collector}, C{start-pod-garbage-collector}, L{ServiceHook}s) and stopped
    with the server's hooks.

    @return: C{(garbage_collector, pod_gc)}.
    """
    from kubetwist.controlplane.podgc import PodGC

    collector = GarbageCollector(lambda: list(stores.values()) + list(extra_stores()), clock)
    pod_gc = PodGC(stores[("", "pods")], stores.get(("", "nodes")), clock)
    ServiceHook("start-garbage-collector", collector, clock).setServiceParent(server.hooks)
    ServiceHook("start-pod-garbage-collector", pod_gc, clock).setServiceParent(server.hooks)
    return collector, pod_gc
