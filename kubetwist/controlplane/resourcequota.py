# -*- test-case-name: tests.controlplane.test_resourcequota -*-
"""
The resource quota controller, which upstream runs in kube-controller-manager
(C{k8s.io/kubernetes/pkg/controller/resourcequota}: C{syncResourceQuota}, the replenishment
monitors of C{resource_quota_monitor.go}).  kubetwist runs it in the server, as it runs the
namespace and garbage-collector controllers: nobody runs a controller manager beside it, and
without it C{status.used} would never be known, so the C{ResourceQuota} admission plugin
would refuse every charged request (C{status unknown for quota}).

What it does:
  - a quota that is new, whose C{spec.hard} changed, or whose C{status.hard} differs from
    C{spec.hard} or has no C{status.used} gets C{status.hard} = C{spec.hard} and
    C{status.used} computed from the namespace's objects (upstream C{CalculateUsage});
  - replenishment: one watch per resource that some quota charges (started when the first
    such quota appears); a deletion, or an update that can lower usage (a pod turning
    terminal or being deleted, a service or claim changing), in a namespace that has quotas
    recomputes that namespace's quotas (one pass for a burst of changes), so the cost follows
    those changes and the size of the namespaces they touch, never the whole store; creations
    were charged by admission and start nothing (as upstream);
  - every C{resync} seconds (upstream C{--resource-quota-sync-period}, 5 minutes) every
    quota is recomputed.

Status writes go through the C{resourcequotas/status} store (validation, rounding) with the
C{resourceVersion} read, so a write racing the admission plugin's is refused (409) and
retried shortly after.  Differences from upstream: a status-only change that leaves
C{status.hard} different from C{spec.hard} is repaired at once rather than at the next full
resync; service and claim updates recompute whatever changed (upstream compares the old and
new type, ports or size first).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Optional

from twisted.application.service import Service
from twisted.internet.defer import Deferred, ensureDeferred
from twisted.logger import Logger

from kubetwist.admission.plugins.resourcequota import resources as rq
from kubetwist.admission.plugins.resourcequota.evaluators import (
    Evaluator,
    Registry,
    calculate_usage,
)
from kubetwist.authorization.rbac.informer import Informer
from kubetwist.registry.generic.store import ListOptions, Store
from kubetwist.runtime import errors

__all__ = ["DEFAULT_RESYNC", "ResourceQuotaController", "install_resource_quota_controller"]

log = Logger()

#: Upstream C{--resource-quota-sync-period} default, seconds.
DEFAULT_RESYNC = 300.0
#: Seconds before the quotas of a namespace are recomputed after a write conflict.
CONFLICT_DELAY = 0.1
#: Seconds before a monitor whose watch ended lists and watches again.
RELIST_DELAY = 1.0


def _pod_released(pod: dict) -> bool:
    """A pod update that may give compute quota back (upstream: the old pod was charged and
    the new one is not, C{QuotaV1Pod}): the pod is terminal or being deleted."""
    return ((pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
            or bool(_meta(pod).get("deletionTimestamp")))


#: C{(group, resource) -> (new object) -> bool}: the updates that replenish (upstream's
#: evaluators' replenishment filters: pods turning terminal, any service or claim change,
#: since its type, ports or size may change); object counts replenish on deletion only.
UPDATE_MATTERS: dict[tuple[str, str], Callable[[dict], bool]] = {
    ("", "pods"): _pod_released,
    ("", "services"): lambda obj: True,
    ("", "persistentvolumeclaims"): lambda obj: True,
}


def _meta(obj: Optional[dict]) -> dict:
    return (obj or {}).get("metadata") or {}


def needs_status(quota: dict) -> bool:
    """Whether C{quota}'s status is not derived from its spec yet: no C{status.hard} or
    C{status.used}, or C{status.hard} other than C{spec.hard}."""
    status = quota.get("status") or {}
    if status.get("hard") is None or status.get("used") is None:
        return True
    return not rq.equals(rq.parse_list(status["hard"]),
                         rq.parse_list((quota.get("spec") or {}).get("hard")))


class _Monitor:
    """
    A watch of one resource's objects (none kept in memory): C{on_namespace(ns)} for every
    change, C{on_namespace(None)} after a (re)start, when changes may have been missed.
    """

    def __init__(self, storage: Any, clock: Any, prefix: str,
                 on_namespace: Callable[[Optional[str]], Any], namespace_of: Callable,
                 update_matters: Callable[[dict], bool] = lambda obj: False) -> None:
        self.update_matters = update_matters
        self.storage = storage
        self.clock = clock
        self.prefix = prefix
        self.on_namespace = on_namespace
        self.namespace_of = namespace_of
        self._watch: Any = None
        self._call: Any = None
        self._stopped = False

    def start(self) -> None:
        self._call = None
        if self._stopped:
            return
        ensureDeferred(self._run()).addErrback(self._failed)

    def stop(self) -> None:
        self._stopped = True
        if self._call is not None and self._call.active():
            self._call.cancel()
        if self._watch is not None:
            self._watch.stop()

    def _failed(self, failure: Any) -> None:
        log.failure("quota monitor of {prefix} failed; restarting", failure, prefix=self.prefix)
        self._later()

    def _later(self) -> None:
        if not self._stopped and (self._call is None or not self._call.active()):
            self._call = self.clock.callLater(RELIST_DELAY, self.start)

    async def _run(self) -> None:
        # the current revision of the prefix, to watch from (served by the watch cache)
        listed = await self.storage.get_list(self.prefix, recursive=True, resource_version="0",
                                             limit=1)
        if self._stopped:
            return
        watch = self.storage.watch(self.prefix, listed.resource_version, recursive=True)
        self._watch = watch
        watch.subscribe(lambda event: self._event(watch, event))
        watch.done.addBoth(lambda _: self._ended(watch))
        self.on_namespace(None)

    def _event(self, watch: Any, event: Any) -> None:
        if event.type == "ERROR":
            watch.stop()
            return
        if not isinstance(event.object, dict):
            return
        # additions were charged by admission; deletions and the updates that can change
        # usage replenish (upstream's replenishment UpdateFunc/DeleteFunc)
        if event.type == "DELETED" or (event.type == "MODIFIED"
                                       and self.update_matters(event.object)):
            self.on_namespace(self.namespace_of(event.object))

    def _ended(self, watch: Any) -> None:
        if self._watch is watch:
            self._watch = None
            self._later()


class ResourceQuotaController(Service):
    """
    @param quotas: the ResourceQuota L{Store}.
    @param status: its C{status} subresource store.
    @param stores: C{() -> {(group, resource): Store}}: the stores usage is counted in
        (custom resources included), read at each pass.
    @param clock: C{IReactorTime}.
    @param resync: seconds between full recomputations.
    """

    def __init__(self, quotas: Store, status: Store,
                 stores: Callable[[], Mapping[tuple[str, str], Store]], clock: Any,
                 resync: float = DEFAULT_RESYNC, registry: Optional[Registry] = None) -> None:
        self.quotas = quotas
        self.status = status
        self.stores = stores
        self.clock = clock
        self.resync = resync
        self.registry = registry or Registry()
        #: the quotas as last seen (started with the service; shared with the admission
        #: plugin by L{install_resource_quota_controller})
        self.informer = Informer(quotas.storage, clock, quotas.key_root, self._quota_changed)
        self.monitors: dict[tuple[str, str], _Monitor] = {}
        self._seen: dict[tuple[str, str], dict] = {}
        self._by_namespace: dict[str, dict[str, dict]] = {}
        self._dirty: set[str] = set()
        self._scheduled: Any = None
        self._resync_call: Any = None
        self._running: Optional[Deferred] = None
        #: passes run (tests read it)
        self.passes = 0

    # --- lifecycle -------------------------------------------------------------------------
    def startService(self) -> None:
        super().startService()
        if self.informer._stopped:
            self.informer = Informer(self.quotas.storage, self.clock, self.quotas.key_root,
                                     self._quota_changed)
        self.informer.start()
        self._resync_call = self.clock.callLater(self.resync, self._full_resync)

    def stopService(self) -> Any:
        super().stopService()
        self.informer.stop()
        for monitor in self.monitors.values():
            monitor.stop()
        self.monitors = {}
        for call in (self._scheduled, self._resync_call):
            if call is not None and call.active():
                call.cancel()
        return None

    def _full_resync(self) -> None:
        self._resync_call = self.clock.callLater(self.resync, self._full_resync)
        self._enqueue_all()

    # --- events ----------------------------------------------------------------------------
    def _namespaces(self) -> set[str]:
        return set(self._by_namespace)

    def quotas_in(self, namespace: str) -> list[dict]:
        """The quotas of C{namespace} as last seen (an index over the informer's items)."""
        return list(self._by_namespace.get(namespace, {}).values())

    def _enqueue_all(self) -> None:
        for ns in self._namespaces():
            self.enqueue(ns)

    def _quota_changed(self, key: Optional[tuple[str, str]]) -> None:
        if key is None:
            self._seen = {k: ((q.get("spec") or {}).get("hard") or {})
                          for k, q in self.informer.items.items()}
            self._by_namespace = {}
            for (ns, name), q in self.informer.items.items():
                self._by_namespace.setdefault(ns, {})[name] = q
            for quota in self.informer.items.values():
                self._monitor(quota)
            self._enqueue_all()
            return
        quota = self.informer.items.get(key)
        previous = self._seen.get(key)
        if quota is None:
            self._seen.pop(key, None)
            in_ns = self._by_namespace.get(key[0], {})
            in_ns.pop(key[1], None)
            if not in_ns:
                self._by_namespace.pop(key[0], None)
            self.enqueue(key[0])  # the namespace's resourcequotas count
            return
        hard = (quota.get("spec") or {}).get("hard") or {}
        self._seen[key] = hard
        self._by_namespace.setdefault(key[0], {})[key[1]] = quota
        self._monitor(quota)
        if previous is None or previous != hard or needs_status(quota):
            self.enqueue(key[0])

    def _monitor(self, quota: dict) -> None:
        """Watch every resource C{quota} charges (once each)."""
        hard = list(((quota.get("spec") or {}).get("hard") or {}).keys())
        stores = self.stores()
        for ev in self.registry.for_names(hard):
            gr = ev.group_resource
            if gr in self.monitors or gr == ("", "resourcequotas"):
                continue
            store = stores.get(gr)
            if store is None:
                continue
            monitor = _Monitor(store.storage, self.clock, store.key_root,
                               self._object_changed,
                               lambda obj: _meta(obj).get("namespace") or "",
                               UPDATE_MATTERS.get(gr, lambda obj: False))
            self.monitors[gr] = monitor
            monitor.start()

    def _object_changed(self, namespace: Optional[str]) -> None:
        if namespace is None:
            self._enqueue_all()
        elif namespace in self._by_namespace:
            self.enqueue(namespace)

    # --- passes ----------------------------------------------------------------------------
    def enqueue(self, namespace: str) -> None:
        """Recompute the quotas of C{namespace} soon (one pass for a burst of changes)."""
        self._dirty.add(namespace)
        if not self.running or self._running is not None:
            return
        if self._scheduled is None or not self._scheduled.active():
            self._scheduled = self.clock.callLater(0, self._pass)

    def _pass(self) -> None:
        self._scheduled = None

        def done(_: Any) -> None:
            self._running = None
            if self._dirty and self.running:
                self._scheduled = self.clock.callLater(0, self._pass)

        self._running = ensureDeferred(self._work())
        self._running.addErrback(
            lambda f: log.failure("resource quota pass failed", f))
        self._running.addBoth(done)

    async def _work(self) -> None:
        self.passes += 1
        dirty, self._dirty = self._dirty, set()
        for ns in sorted(dirty):
            for quota in sorted(self.quotas_in(ns), key=lambda q: _meta(q).get("name") or ""):
                try:
                    await self.sync(quota)
                except errors.StatusError as e:
                    if e.code == 409:
                        # a newer version is on its way to the informer: try again shortly
                        self.clock.callLater(CONFLICT_DELAY, self.enqueue, ns)
                    elif e.code != 404:
                        log.warn("resource quota {ns}/{name}: {msg}",  # noqa: G010
                                 ns=ns, name=_meta(quota).get("name"), msg=e.message)

    async def _list(self, namespace: str, ev: Evaluator) -> list[dict]:
        store = self.stores().get(ev.group_resource)
        if store is None:
            return []
        listed = await store.list(namespace, ListOptions())
        return listed["items"]

    async def sync(self, quota: dict) -> bool:
        """
        Upstream C{syncResourceQuota}: recompute C{quota}'s usage and write C{status} when it
        changed (or was never derived from the spec).

        @return: whether a status was written.
        @raise StatusError: 409 Conflict when C{quota} is not the stored version.
        """
        meta = _meta(quota)
        namespace, name = meta.get("namespace") or "", meta.get("name") or ""
        status = quota.get("status") or {}
        hard = rq.parse_list((quota.get("spec") or {}).get("hard"))
        old_used = rq.parse_list(status.get("used"))
        usage, errs = await calculate_usage(
            quota, self.registry, lambda ev: self._list(namespace, ev), self.clock.seconds())
        for err in errs:
            log.warn("resource quota {ns}/{name}: {err}",  # noqa: G010
                     ns=namespace, name=name, err=err)
        used = dict(old_used)
        used.update(usage)
        used = rq.mask(used, list(hard))
        if not needs_status(quota) and rq.equals(used, old_used):
            return False
        expected = meta.get("resourceVersion") or ""
        new_status = {"hard": rq.wire_list(hard), "used": rq.wire_list(used)}

        async def transform(current: Optional[dict]) -> dict:
            assert current is not None
            current["status"] = new_status
            current.setdefault("metadata", {})["resourceVersion"] = expected
            return current

        await self.status.update(namespace, name, transform)
        return True


def install_resource_quota_controller(server: Any, stores: Mapping[tuple[str, str], Store],
                                      extra_stores: Callable[[], Any], clock: Any,
                                      resync: float = DEFAULT_RESYNC,
                                      admission_plugins: Iterable[Any] = ()
                                      ) -> ResourceQuotaController:
    """
    Build the controller over C{stores} (C{{(group, resource): Store}}) and C{extra_stores()}
    (custom resource stores, by their C{spec}), started by the post-start hook
    C{start-resource-quota-controller} of C{server} and stopped with its hooks.  A
    C{ResourceQuota} plugin among C{admission_plugins} reads its quotas from the controller's
    informer (one watch of the quotas, stopped at shutdown).
    """
    from kubetwist.apis.core.register import STRATEGIES
    from kubetwist.controlplane.garbagecollector import ServiceHook

    quotas = stores[("", "resourcequotas")]

    def all_stores() -> dict[tuple[str, str], Store]:
        out = dict(stores)
        for store in extra_stores():
            out.setdefault((store.spec.group, store.spec.resource), store)
        return out

    controller = ResourceQuotaController(
        quotas, quotas.for_subresource(STRATEGIES["resourcequotas/status"]), all_stores, clock,
        resync)
    ServiceHook("start-resource-quota-controller", controller, clock).setServiceParent(
        server.hooks)
    for plugin in admission_plugins:
        accessor = getattr(plugin, "accessor", None)
        if getattr(plugin, "name", "") == "ResourceQuota" and accessor is not None \
                and accessor.store is quotas:
            accessor.informer = controller.informer
            accessor.index = controller.quotas_in
    return controller
