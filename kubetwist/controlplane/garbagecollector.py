# -*- test-case-name: tests.controlplane.test_garbagecollector -*-
"""
The garbage collector: upstream C{k8s.io/kubernetes/pkg/controller/garbagecollector}
(kube-controller-manager), which finishes the deletions the API server only records.

As upstream, the collector keeps a dependency graph fed by watches (upstream C{GraphBuilder}):
a node per object (L{_Node}: uid, backend key, owner references, deletion state), indexed by
uid (C{uidToNode}) and from each owner uid to its dependents.  Upstream feeds it with one
metadata informer per deletable resource; kubetwist feeds it with one L{Informer} over the
whole C{/registry} prefix of the storage backend (below the watch cache), so a resource that
appears later (a CRD established at runtime) is covered without a new monitor: its objects are
nodes from their first event, and the Store that serves them is looked up by key when the
collector acts on them.  The cost of the graph grows with the objects (a few hundred bytes
each); its work grows with the changes (each event touches the changed node, its owners and
its dependents), never with time.

Each change puts uids on one work queue (upstream C{attemptToDelete} and C{attemptToOrphan}),
processed one at a time on the reactor:

  - an owner being deleted with the C{orphan} finalizer: its reference is removed from every
    dependent, then the finalizer (upstream C{orphanDependents}, C{removeFinalizer});
  - an owner being deleted with C{foregroundDeletion}: its dependents are deleted (C{Foreground}
    when they have dependents themselves, else C{Background}), and the finalizer goes once no
    dependent's reference has C{blockOwnerDeletion} (upstream C{processDeletingDependentsItem},
    C{attemptToDeleteItem});
  - a dependent none of whose owners exists any more is deleted in the background (C{Orphan} /
    C{Foreground} if its own finalizers say so); one that still has an owner loses the
    references to the missing ones and its C{blockOwnerDeletion} on owners waiting for it
    (upstream C{classifyReferences}).  An owner that is not in the graph (upstream's virtual
    node) is verified with a fresh read of its Store by uid; one verified absent is remembered
    (uids are never reused).

Retries: a reference whose kind no Store serves is left alone and retried at each resync
(every L{DEFAULT_RESYNC} seconds, upstream retries until discovery knows the kind); an
unexpected error retries the object after L{RETRY_DELAY} seconds; 404 and 409 answers need no
retry (the object is gone, or changed and its event re-queues it).  A re-list of the watch (a
lost watch) re-queues every object with owners or being deleted.

Limits: events are ignored (upstream C{DefaultIgnoredResources}); references across namespaces
are resolved by uid, a missing owner in the dependent's namespace (as upstream); no admission
runs on the collector's writes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any, Optional

from twisted.application.service import Service
from twisted.internet.defer import CancelledError, Deferred
from twisted.logger import Logger

from kubetwist.authorization.rbac.informer import Informer
from kubetwist.registry.deletion import FINALIZER_FOREGROUND, FINALIZER_ORPHAN
from kubetwist.registry.generic.store import Store
from kubetwist.runtime import errors
from kubetwist.server.hooks import PostStartHookService
from kubetwist.storage.continuetoken import normalize_prefix, prepare_key

log = Logger()

#: seconds between resyncs (objects whose owner kind no Store served are retried)
DEFAULT_RESYNC = 300.0

#: objects per page of the collector's (re-)list (upstream's reflector pages with 500)
LIST_PAGE_SIZE = 500

#: seconds before an object whose processing failed unexpectedly is processed again
RETRY_DELAY = 5.0

#: resources the collector ignores (upstream C{DefaultIgnoredResources}: events)
IGNORED = {("", "events"), ("events.k8s.io", "events")}


def _group_of(api_version: str) -> str:
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def backend_of(storage: Any) -> Any:
    """The storage backend below the watch cache (C{Cacher.backend}), or C{storage} itself.
    The controllers watch it so that they neither start nor share the watch cache's
    per-resource caches (which start lazily, on a client's first watch or list)."""
    return getattr(storage, "backend", storage)


class _Node:
    """
    One object of the graph (upstream C{node}): its backend C{key}, C{uid}, C{name},
    C{namespace}, C{refs} (its C{ownerReferences}, a tuple of dicts), C{deleting} (has a
    C{deletionTimestamp}) and C{finalizers} (a tuple of strings); a few hundred bytes.
    """

    __slots__ = ("key", "uid", "name", "namespace", "refs", "deleting", "finalizers")

    def __init__(self, key: str, obj: dict) -> None:
        meta = obj.get("metadata") or {}
        self.key = key
        self.uid: str = meta.get("uid", "")
        self.name: str = meta.get("name", "")
        self.namespace: str = sys.intern(meta.get("namespace", ""))
        self.refs: tuple[dict, ...] = tuple(meta.get("ownerReferences") or ())
        self.deleting = bool(meta.get("deletionTimestamp"))
        self.finalizers: tuple[str, ...] = tuple(meta.get("finalizers") or ())

    @classmethod
    def of(cls, obj: dict) -> _Node:
        """The node of C{obj}, its key not set yet (the informer's transform)."""
        return cls("", obj)

    @property
    def waiting_for_dependents(self) -> bool:
        """Upstream C{isDeletingDependents}: deleting with the C{foregroundDeletion} finalizer."""
        return self.deleting and FINALIZER_FOREGROUND in self.finalizers

    def owner_uids(self) -> set[str]:
        return {ref.get("uid", "") for ref in self.refs}


class StoreIndex:
    """
    The Stores of C{stores()} by backend key prefix and by C{(group, kind)}, rebuilt when a
    lookup misses and the set of Stores has changed (custom resources added later).

    @param stores: C{() -> iterable of Store}.
    @param storage_prefix: the backend's key prefix (C{--etcd-prefix}, e.g. C{/registry}).
    """

    def __init__(self, stores: Callable[[], Iterable[Store]], storage_prefix: str) -> None:
        self.stores = stores
        self.prefix = normalize_prefix(storage_prefix)
        self._by_root: dict[str, Store] = {}
        self._by_kind: dict[tuple[str, str], Store] = {}
        self._seen: Optional[int] = None

    def _refresh(self) -> bool:
        current = list(self.stores())
        if len(current) == self._seen:
            return False
        self._seen = len(current)
        self._by_root, self._by_kind = {}, {}
        for store in current:
            self._by_root.setdefault(prepare_key(self.prefix, store.key_root, True), store)
            self._by_kind.setdefault((store.spec.group, store.spec.kind), store)
        return True

    def by_key(self, key: str) -> Optional[Store]:
        """The Store whose objects live at backend key C{key}, or C{None}."""
        for _ in range(2):
            cluster = key.rsplit("/", 1)[0] + "/"
            store = self._by_root.get(cluster)
            if store is not None and not store.spec.namespaced:
                return store
            store = self._by_root.get(key.rsplit("/", 2)[0] + "/")
            if store is not None and store.spec.namespaced:
                return store
            if not self._refresh():
                return None
        return None

    def by_kind(self, group: str, kind: str) -> Optional[Store]:
        """The Store serving C{kind} of C{group}, or C{None}."""
        store = self._by_kind.get((group, kind))
        if store is None and self._refresh():
            store = self._by_kind.get((group, kind))
        return store


class GarbageCollector(Service):
    """
    Finishes C{Orphan} and C{Foreground} deletions and collects dependents of deleted owners
    (see the module docstring).

    @param storage: the server's L{IStorage <kubetwist.storage.interfaces.IStorage>} (the
        Cacher; the collector watches its backend, see L{backend_of}).
    @param stores: C{() -> iterable of Store}: every resource, evaluated again when a key or
        kind is not known (so custom resources added later count).
    @param clock: C{IReactorTime} the work runs on.
    @param resync: seconds between resyncs (0: none).
    @ivar nodes: C{{uid: _Node}} (upstream C{uidToNode}).
    @ivar dependents: C{{owner uid: set of dependent uids}}.
    """

    name = "garbage-collector"

    def __init__(self, storage: Any, stores: Callable[[], Iterable[Store]], clock: Any,
                 resync: float = DEFAULT_RESYNC) -> None:
        self.backend = backend_of(storage)
        self.clock = clock
        self.resync = resync
        self.index = StoreIndex(stores, getattr(self.backend, "_prefix", "/registry"))
        self.nodes: dict[str, _Node] = {}
        self.dependents: dict[str, set[str]] = {}
        self._by_key: dict[str, _Node] = {}
        self._absent: set[str] = set()
        self._unresolved: set[str] = set()
        self._queue: dict[str, None] = {}
        self._retry: set[str] = set()
        self._retry_call: Any = None
        self._resync_call: Any = None
        self._kick: Any = None
        self._working: Optional[Deferred] = None
        self.informer: Optional[Informer] = None

    # --- IService -----------------------------------------------------------------------------
    def startService(self) -> None:
        super().startService()
        self.informer = Informer(self.backend, self.clock, "/registry", self._changed,
                                 key=lambda _obj, key: key, transform=_Node.of,
                                 page_size=LIST_PAGE_SIZE)
        self.informer.start()
        if self.resync > 0:
            self._resync_call = self.clock.callLater(self.resync, self._resync)

    def stopService(self) -> Any:
        super().stopService()
        if self.informer is not None:
            self.informer.stop()
            self.informer = None
        for name in ("_retry_call", "_resync_call", "_kick"):
            call = getattr(self, name)
            setattr(self, name, None)
            if call is not None and call.active():
                call.cancel()
        working, self._working = self._working, None
        if working is not None:
            working.cancel()
        return None

    # --- the graph (upstream GraphBuilder.processGraphChanges) --------------------------------
    def _changed(self, key: Any) -> None:
        informer = self.informer
        if informer is None:
            return
        if key is None:
            self._rebuild(informer)
            return
        new = informer.items.pop(key, None)  # the informer keeps nothing: the graph does
        if not isinstance(key, str):
            return
        old = self._by_key.get(key)
        if new is not None:
            new.key = key
            if not new.uid or self._ignored(key):
                new = None
        if old is not None:
            self._remove(old)
        if new is not None:
            self._add(new)
        touched: set[str] = set()
        if new is not None and (new.refs or new.deleting):
            touched.add(new.uid)
        for node in (old, new):
            if node is None:
                continue
            for uid in node.owner_uids():
                owner = self.nodes.get(uid)
                if owner is not None and owner.deleting:
                    touched.add(uid)
        if new is None or new.deleting:
            gone = old if new is None else new
            if gone is not None:
                touched.update(self.dependents.get(gone.uid, ()))
        for uid in touched:
            self._enqueue(uid)

    def _ignored(self, key: str) -> bool:
        store = self.index.by_key(key)
        return store is not None and (store.spec.group, store.spec.resource) in IGNORED

    def _add(self, node: _Node) -> None:
        self.nodes[node.uid] = node
        self._by_key[node.key] = node
        for uid in node.owner_uids():
            self.dependents.setdefault(uid, set()).add(node.uid)

    def _remove(self, node: _Node) -> None:
        if self.nodes.get(node.uid) is node:
            del self.nodes[node.uid]
        if self._by_key.get(node.key) is node:
            del self._by_key[node.key]
        for uid in node.owner_uids():
            deps = self.dependents.get(uid)
            if deps is not None:
                deps.discard(node.uid)
                if not deps:
                    del self.dependents[uid]

    def _rebuild(self, informer: Informer) -> None:
        """After a (re-)list: the graph from the listed objects; every object with owners or
        being deleted is queued."""
        items, informer.items = informer.items, {}
        self.nodes, self.dependents, self._by_key = {}, {}, {}
        for key, node in items.items():
            if not isinstance(key, str) or node is None:
                continue
            node.key = key
            if node.uid and not self._ignored(key):
                self._add(node)
        for node in list(self.nodes.values()):
            if node.refs or node.deleting:
                self._enqueue(node.uid)

    # --- the work queue -----------------------------------------------------------------------
    def _enqueue(self, uid: str) -> None:
        self._queue[uid] = None
        if self.running and self._working is None and self._kick is None:
            self._kick = self.clock.callLater(0, self._start_work)

    def _start_work(self) -> None:
        self._kick = None
        if self._working is not None or not self.running:
            return
        d = self._working = Deferred.fromCoroutine(self._work())

        def done(_: Any) -> None:
            if self._working is d:
                self._working = None
                if self._queue and self.running:
                    self._kick = self.clock.callLater(0, self._start_work)
        d.addBoth(done)

    async def _work(self) -> None:
        while self._queue and self.running:
            uid = next(iter(self._queue))
            del self._queue[uid]
            await self._guard(uid, self._process(uid))

    async def _guard(self, uid: str, work: Any) -> None:
        try:
            await work
        except errors.StatusError as e:
            if e.code not in (404, 409):
                log.warn("garbage collector: {msg}", msg=e.message)  # noqa: G010
                self._retry_later(uid)
        except CancelledError:
            raise
        except Exception:  # noqa: BLE001 -- one object's failure must not stop the queue
            log.failure("garbage collector: unexpected error")
            self._retry_later(uid)

    def _retry_later(self, uid: str) -> None:
        self._retry.add(uid)
        if self._retry_call is None or not self._retry_call.active():
            self._retry_call = self.clock.callLater(RETRY_DELAY, self._retry_now)

    def _retry_now(self) -> None:
        self._retry_call = None
        retry, self._retry = self._retry, set()
        for uid in retry:
            self._enqueue(uid)

    def _resync(self) -> None:
        self._resync_call = self.clock.callLater(self.resync, self._resync)
        unresolved, self._unresolved = self._unresolved, set()
        self._absent.clear()
        for uid in unresolved:
            self._enqueue(uid)

    # --- one object (upstream attemptToDeleteItem, orphanDependents) ---------------------------
    async def _process(self, uid: str) -> None:
        node = self.nodes.get(uid)
        if node is None:
            return
        if node.deleting:
            if FINALIZER_ORPHAN in node.finalizers:
                await self._orphan(node)
            elif FINALIZER_FOREGROUND in node.finalizers:
                blocking = [dep for dep in self._dependents_of(node)
                            if any(r.get("uid") == node.uid and r.get("blockOwnerDeletion")
                                   for r in dep.refs)]
                if not blocking:
                    await self._remove_finalizer(node, FINALIZER_FOREGROUND)
                else:
                    for dep in self._dependents_of(node):
                        if not dep.deleting:
                            self._enqueue(dep.uid)
            return
        if node.refs:
            await self._attempt_to_delete(node)

    def _dependents_of(self, node: _Node) -> list[_Node]:
        return [self.nodes[u] for u in self.dependents.get(node.uid, ()) if u in self.nodes]

    def _store(self, node: _Node) -> Store:
        store = self.index.by_key(node.key)
        if store is None:
            raise errors.new_not_found("", "", node.name)  # no Store serves it (yet): skip
        return store

    async def _orphan(self, owner: _Node) -> None:
        for dep in self._dependents_of(owner):
            store = self._store(dep)

            def drop(current: dict | None, dep: _Node = dep, store: Store = store) -> dict:
                return _edit_refs(current, dep, store,
                                  lambda ref: None if ref.get("uid") == owner.uid else ref)
            await store.update(dep.namespace, dep.name, _async(drop))
        await self._remove_finalizer(owner, FINALIZER_ORPHAN)

    async def _remove_finalizer(self, node: _Node, finalizer: str) -> None:
        store = self._store(node)

        def drop(current: dict | None) -> dict:
            meta = _same_object(current, node, store)
            fins = [f for f in meta.get("finalizers") or [] if f != finalizer]
            if fins:
                meta["finalizers"] = fins
            else:
                meta.pop("finalizers", None)
            return current  # type: ignore[return-value]
        await store.update(node.namespace, node.name, _async(drop))

    async def _owner_exists(self, node: _Node, ref: dict) -> Optional[bool]:
        """Whether the owner C{ref} names exists (a fresh read of its Store by uid; upstream's
        virtual node lookup); C{None} when no Store serves its kind."""
        uid = ref.get("uid", "")
        if uid in self._absent:
            return False
        store = self.index.by_kind(_group_of(ref.get("apiVersion", "")), ref.get("kind", ""))
        if store is None:
            return None
        if await _exists(store, node.namespace if store.spec.namespaced else "", ref):
            return True
        self._absent.add(uid)
        return False

    async def _attempt_to_delete(self, node: _Node) -> None:
        solid, dangling, waiting = [], [], []
        for ref in node.refs:
            owner = self.nodes.get(ref.get("uid", ""))
            if owner is not None:
                (waiting if owner.waiting_for_dependents else solid).append(ref)
                continue
            exists = await self._owner_exists(node, ref)
            if exists is None:
                self._unresolved.add(node.uid)
                solid.append(ref)  # a kind nobody serves (yet): leave it alone
            elif exists:
                solid.append(ref)
            else:
                dangling.append(ref)
        store = self._store(node)
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

            await store.update(node.namespace, node.name,
                               _async(lambda cur: _edit_refs(cur, node, store, fix)))
            return
        if waiting and self.dependents.get(node.uid):
            policy = "Foreground"
        elif FINALIZER_ORPHAN in node.finalizers:
            policy = "Orphan"
        elif FINALIZER_FOREGROUND in node.finalizers:
            policy = "Foreground"
        else:
            policy = "Background"
        await store.delete(node.namespace, node.name, {
            "propagationPolicy": policy, "preconditions": {"uid": node.uid}})


async def _exists(store: Store, namespace: str, ref: dict) -> bool:
    """Whether the owner C{ref} names exists with its uid (a fresh read)."""
    try:
        obj = await store.get(namespace, ref.get("name", ""))
    except errors.StatusError as e:
        if e.code == 404:
            return False
        raise
    return (obj.get("metadata") or {}).get("uid") == ref.get("uid")


def _same_object(current: dict | None, node: _Node, store: Store) -> dict:
    """The metadata of C{current}; 404 when it is gone or was replaced (another uid)."""
    meta = (current or {}).get("metadata") or {}
    if current is None or meta.get("uid") != node.uid:
        raise errors.new_not_found(store.spec.group, store.spec.resource, node.name)
    return meta


def _edit_refs(current: dict | None, node: _Node, store: Store,
               fix: Callable[[dict], dict | None]) -> dict:
    meta = _same_object(current, node, store)
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


def install_collectors(server: Any, storage: Any, stores: dict[tuple[str, str], Store],
                       extra_stores: Callable[[], Iterable[Store]], clock: Any) -> tuple[Any, Any]:
    """
    Build the L{GarbageCollector} (over C{storage}'s backend; its Stores are C{stores},
    C{{(group, resource): Store}}, and C{extra_stores()}, e.g. custom resources) and the
    L{PodGC <kubetwist.controlplane.podgc.PodGC>}, each started by a post-start hook of
    C{server} (C{start-garbage-collector}, C{start-pod-garbage-collector}, L{ServiceHook}s)
    and stopped with the server's hooks.

    @return: C{(garbage_collector, pod_gc)}.
    """
    from kubetwist.controlplane.podgc import PodGC

    collector = GarbageCollector(
        storage, lambda: list(stores.values()) + list(extra_stores()), clock)
    pod_gc = PodGC(stores[("", "pods")], stores.get(("", "nodes")), clock)
    ServiceHook("start-garbage-collector", collector, clock).setServiceParent(server.hooks)
    ServiceHook("start-pod-garbage-collector", pod_gc, clock).setServiceParent(server.hooks)
    return collector, pod_gc
