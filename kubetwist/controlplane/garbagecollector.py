# -*- test-case-name: tests.controlplane.test_garbagecollector -*-
"""
The garbage collector: upstream C{k8s.io/kubernetes/pkg/controller/garbagecollector}
(kube-controller-manager), which finishes the deletions the API server only records.

Upstream's collector keeps a graph of every object's owners fed by watches.  kubetwist runs no
controller manager, so this service does the same work with periodic and triggered sweeps
over the registry L{Store}s (each sweep lists every resource afresh from storage):

  - an owner being deleted with the C{orphan} finalizer: its reference is removed from every
    dependent, then the finalizer (upstream C{orphanDependents}, C{removeFinalizer});
  - an owner being deleted with C{foregroundDeletion}: its dependents are deleted (those whose
    reference has C{blockOwnerDeletion} first; C{Foreground} when they have dependents
    themselves, else C{Background}), and the finalizer goes once no dependent blocks it
    (upstream C{processDeletingDependentsItem}, C{attemptToDeleteItem});
  - a dependent none of whose owners exists any more (checked by uid with a fresh read) is
    deleted in the background (C{Orphan} / C{Foreground} if its own finalizers say so);
    one that still has an owner loses the references to the missing ones and its
    C{blockOwnerDeletion} on owners waiting for it (upstream C{classifyReferences}).

Limits: events are ignored (as upstream); an owner reference whose kind no store serves is left
alone (upstream would retry it until the kind appears); references across namespaces are
resolved in the dependent's namespace (as upstream); a sweep reads every object, so its cost
grows with the store (upstream's graph is incremental); no admission runs on the collector's
writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from twisted.application.service import Service
from twisted.internet.defer import CancelledError
from twisted.logger import Logger

from kubetwist.controlplane.sweeper import SweepService
from kubetwist.registry.deletion import FINALIZER_FOREGROUND, FINALIZER_ORPHAN
from kubetwist.registry.generic.store import ListOptions, Store
from kubetwist.runtime import errors
from kubetwist.server.hooks import PostStartHookService

log = Logger()

#: seconds between full sweeps (deletions also trigger one at once)
DEFAULT_INTERVAL = 5.0

#: resources the collector ignores (upstream C{DefaultIgnoredResources}: events)
IGNORED = {("", "events"), ("events.k8s.io", "events")}


def _group_of(api_version: str) -> str:
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


class _Item:
    """One object seen by a sweep, with the store serving it."""

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


class GarbageCollector(SweepService):
    """
    Finishes C{Orphan} and C{Foreground} deletions and collects dependents of deleted owners.

    @param stores: C{() -> iterable of Store}: every resource to collect over, evaluated at
        each sweep (so custom resources added later count).
    @param clock: C{IReactorTime} the sweeps are scheduled on.
    @param interval: seconds between periodic sweeps.
    """

    name = "garbage-collector"

    def __init__(self, stores: Callable[[], Iterable[Store]], clock: Any,
                 interval: float = DEFAULT_INTERVAL) -> None:
        super().__init__(clock, interval)
        self.stores = stores

    def watch_stores(self, stores: Iterable[Store]) -> None:
        """Sweep soon after any of C{stores} marks or removes an object."""
        for store in stores:
            store.on_marked_for_deletion.append(self.trigger)
            store.after_delete.append(self.trigger)

    # --- one sweep ----------------------------------------------------------------------------
    async def sweep(self) -> None:
        """One pass over every store (see the module docstring); errors on one object are
        logged and the pass goes on."""
        items: list[_Item] = []
        seen: set[str] = set()
        kinds: dict[tuple[str, str], Store] = {}
        for store in self.stores():
            if (store.spec.group, store.spec.resource) in IGNORED:
                continue
            kinds.setdefault((store.spec.group, store.spec.kind), store)
            try:
                listed = await store.list("", ListOptions())
            except errors.StatusError as e:
                log.warn("garbage collector: cannot list {r}: {e}",  # noqa: G010
                         r=store.spec.resource, e=e.message)
                continue
            for obj in listed["items"]:
                item = _Item(store, obj)
                if item.uid and item.uid not in seen:
                    seen.add(item.uid)
                    items.append(item)
        by_uid = {item.uid: item for item in items}
        dependents: dict[str, list[tuple[_Item, dict]]] = {}
        for item in items:
            for ref in item.refs:
                dependents.setdefault(ref.get("uid", ""), []).append((item, ref))

        for owner in items:
            if not owner.deleting:
                continue
            deps = dependents.get(owner.uid, [])
            if FINALIZER_ORPHAN in owner.finalizers:
                await self._guard(self._orphan(owner, deps))
            elif FINALIZER_FOREGROUND in owner.finalizers and \
                    not any(ref.get("blockOwnerDeletion") for _, ref in deps):
                await self._guard(self._remove_finalizer(owner, FINALIZER_FOREGROUND))

        candidates = [i for i in items if i.refs and not i.deleting]
        candidates.sort(key=lambda i: not any(r.get("blockOwnerDeletion") for r in i.refs))
        for item in candidates:
            await self._guard(self._attempt_to_delete(item, by_uid, kinds, dependents))

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
                                 dependents: dict[str, list[tuple[_Item, dict]]]) -> None:
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
        if waiting and dependents.get(item.uid):
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
    collector.watch_stores(stores.values())
    pod_gc = PodGC(stores[("", "pods")], stores.get(("", "nodes")), clock)
    ServiceHook("start-garbage-collector", collector, clock).setServiceParent(server.hooks)
    ServiceHook("start-pod-garbage-collector", pod_gc, clock).setServiceParent(server.hooks)
    return collector, pod_gc
