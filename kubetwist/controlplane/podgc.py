# -*- test-case-name: tests.controlplane.test_podgc -*-
"""
Pod garbage collection for terminating pods: after upstream C{k8s.io/kubernetes/pkg/controller/
podgc} (kube-controller-manager), which force-deletes pods bound to nodes that do not exist
(C{gcOrphaned}) and terminating pods on nodes that are out of service (C{gcTerminating}).

A pod bound to a node is deleted gracefully: it keeps C{deletionTimestamp} until its kubelet
confirms it stopped.  kubetwist runs no controller manager and often no kubelet, so this service
finishes such deletions with a delete of grace 0 (uid precondition):

  - a terminating pod whose node does not exist: at once (no kubelet can ever confirm; upstream
    waits a 40 s quarantine and also collects pods that are not terminating: kubetwist leaves
    those alone, as pods bound to nodes nobody registered are common in tests and demos);
  - a terminating pod whose node is not Ready (no C{Ready} condition with status C{True}):
    once its grace has expired (C{deletionTimestamp} passed; upstream also wants the
    C{node.kubernetes.io/out-of-service} taint);
  - a pod on a Ready node is left to that node's kubelet.

The service reacts to events (as upstream's informers): one L{Informer
<kubetwist.authorization.rbac.informer.Informer>} of pods and one of nodes; a pod that turns
terminating is looked at when its event arrives, the terminating pods of a node when that
node changes or goes (an index node -> terminating pods), and a pod waiting for its grace
when the grace ends (a timer).  An idle server does no storage reads; every C{interval}
seconds (5 minutes) the terminating pods are looked at again from memory (a safety net).
"""

from __future__ import annotations

from typing import Any, Optional

from twisted.logger import Logger

from kubetwist.apimachinery.meta import parse_rfc3339
from kubetwist.authorization.rbac.informer import Informer
from kubetwist.controlplane.sweeper import SweepService
from kubetwist.registry.generic.store import Store
from kubetwist.runtime import errors

log = Logger()

#: seconds between two passes over every terminating pod (in memory; events start the others)
DEFAULT_INTERVAL = 300.0


def node_ready(node: dict) -> bool:
    """Whether C{node} has a C{Ready} condition with status C{True}."""
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


class PodGC(SweepService):
    """
    Force-deletes terminating pods no kubelet will finish (see the module docstring).

    @param pods: the pods Store.
    @param nodes: the nodes Store, or C{None} (then no node exists).
    @param clock: C{IReactorTime} the passes run on; also "now" for grace expiry.
    @param interval: seconds between passes over every terminating pod (from memory).
    @ivar terminating: C{{(namespace, name): node name}} of the pods being deleted.
    @ivar dirty: C{(namespace, name)} of the pods to look at in the next pass.
    """

    name = "pod-garbage-collector"

    def __init__(self, pods: Store, nodes: Store | None, clock: Any,
                 interval: float = DEFAULT_INTERVAL) -> None:
        super().__init__(clock, interval)
        self.pods = pods
        self.nodes = nodes
        self.terminating: dict[tuple[str, str], str] = {}
        self.by_node: dict[str, set[tuple[str, str]]] = {}
        self.dirty: set[tuple[str, str]] = set()
        self._timers: dict[tuple[str, str], Any] = {}
        self._last_full = -1.0
        self.pod_informer: Optional[Informer] = None
        self.node_informer: Optional[Informer] = None

    def startService(self) -> None:
        super().startService()
        self.pod_informer = Informer(self.pods.storage, self.clock, self.pods.prefix(""),
                                     self._pod_changed)
        if self.nodes is not None:
            self.node_informer = Informer(self.nodes.storage, self.clock,
                                          self.nodes.prefix(""), self._node_changed)
            self.node_informer.start()
        self.pod_informer.start()

    def stopService(self) -> Any:
        for informer in (self.pod_informer, self.node_informer):
            if informer is not None:
                informer.stop()
        self.pod_informer = self.node_informer = None
        for call in self._timers.values():
            if call.active():
                call.cancel()
        self._timers.clear()
        return super().stopService()

    # --- events -------------------------------------------------------------------------------
    def _pod_changed(self, key: Optional[tuple[str, str]]) -> None:
        items = self.pod_informer.items if self.pod_informer is not None else {}
        keys = set(self.terminating) | set(items) if key is None else {key}
        for k in keys:
            self._index(k, items.get(k))
        if self.dirty:
            self.trigger()

    def _index(self, key: tuple[str, str], pod: Optional[dict]) -> None:
        old = self.terminating.pop(key, None)
        if old is not None:
            self.by_node.get(old, set()).discard(key)
            if not self.by_node.get(old):
                self.by_node.pop(old, None)
        if pod is None or not (pod.get("metadata") or {}).get("deletionTimestamp"):
            self.dirty.discard(key)
            return
        node = (pod.get("spec") or {}).get("nodeName", "")
        self.terminating[key] = node
        self.by_node.setdefault(node, set()).add(key)
        self.dirty.add(key)

    def _node_changed(self, key: Optional[tuple[str, str]]) -> None:
        if key is None:
            self.dirty.update(self.terminating)
        else:
            self.dirty.update(self.by_node.get(key[1], ()))
        if self.dirty:
            self.trigger()

    def _wake_at(self, key: tuple[str, str], delay: float) -> None:
        """Look at C{key} again in C{delay} seconds (its grace ends)."""
        call = self._timers.get(key)
        if call is not None and call.active():
            call.cancel()

        def wake() -> None:
            self._timers.pop(key, None)
            if key in self.terminating:
                self.dirty.add(key)
                self.trigger()

        self._timers[key] = self.clock.callLater(delay, wake)

    # --- one pass -----------------------------------------------------------------------------
    async def sweep(self) -> list[str]:
        """
        One pass over the pods marked by events (every terminating pod once per
        C{interval}); fire with the C{namespace/name} of the pods deleted.
        """
        for informer in (self.pod_informer, self.node_informer):
            if informer is not None:
                await informer.wait_synced()
        now = self.clock.seconds()
        if self._last_full < 0 or now - self._last_full >= self.interval:
            self._last_full = now
            self.dirty.update(self.terminating)
        dirty, self.dirty = self.dirty, set()
        pods = self.pod_informer.items if self.pod_informer is not None else {}
        nodes = self.node_informer.items if self.node_informer is not None else {}
        deleted = []
        for key in sorted(dirty):
            pod = pods.get(key)
            meta = (pod or {}).get("metadata") or {}
            if not meta.get("deletionTimestamp"):
                continue
            node = (pod.get("spec") or {}).get("nodeName", "")  # type: ignore[union-attr]
            node_obj = nodes.get(("", node))
            if node_obj is not None:
                if node_ready(node_obj):
                    continue  # left to the kubelet; a node change looks again
                expiry = parse_rfc3339(meta["deletionTimestamp"])
                if expiry > now:
                    self._wake_at(key, expiry - now)
                    continue
            try:
                await self.pods.delete(meta.get("namespace", ""), meta["name"], {
                    "gracePeriodSeconds": 0, "preconditions": {"uid": meta.get("uid", "")}})
            except errors.StatusError as e:
                if e.code not in (404, 409):
                    log.warn("pod garbage collector: {msg}", msg=e.message)  # noqa: G010
                continue
            deleted.append(f"{meta.get('namespace', '')}/{meta['name']}")
        return deleted
