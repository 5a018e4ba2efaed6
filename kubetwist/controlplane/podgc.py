# -*- test-case-name: tests.controlplane.test_podgc -*-
"""
Pod garbage collection: after upstream C{k8s.io/kubernetes/pkg/controller/podgc}
(kube-controller-manager), which force-deletes pods bound to nodes that do not exist
(C{gcOrphaned}), terminating pods on nodes that are out of service (C{gcTerminating}), and the
oldest terminated pods over a threshold (C{gcTerminated}).

A pod bound to a node is deleted gracefully: it keeps C{deletionTimestamp} until its kubelet
confirms it stopped.  kubetwist runs no controller manager and often no kubelet, so this service
finishes such deletions with a delete of grace 0 (uid precondition):

  - a terminating pod whose node does not exist: at once (no kubelet can ever confirm; upstream
    waits a 40 s quarantine and also collects pods that are not terminating: kubetwist leaves
    those alone, as pods bound to nodes nobody registered are common in tests and demos);
  - a terminating pod whose node is not Ready (no C{Ready} condition with status C{True}):
    once its grace has expired (C{deletionTimestamp} passed, a timer per pod; upstream also
    wants the C{node.kubernetes.io/out-of-service} taint);
  - a pod on a Ready node is left to that node's kubelet;
  - terminated pods (phase C{Succeeded} or C{Failed}) beyond C{terminated_threshold}
    (upstream C{--terminated-pod-gc-threshold}, 12500): the oldest by creation go.

The service reacts to pod and node events (two L{Informer}s over the storage backend, see
L{backend_of <kubetwist.controlplane.garbagecollector.backend_of>}), keeping only what it
reads of each pod and node; nothing runs while nothing changes.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from twisted.application.service import Service
from twisted.internet.defer import Deferred
from twisted.logger import Logger

from kubetwist.apimachinery.meta import parse_rfc3339
from kubetwist.authorization.rbac.informer import Informer
from kubetwist.controlplane.garbagecollector import backend_of
from kubetwist.registry.generic.store import Store
from kubetwist.runtime import errors

log = Logger()

#: upstream C{--terminated-pod-gc-threshold} default
TERMINATED_THRESHOLD = 12500


def node_ready(node: dict) -> bool:
    """Whether C{node} has a C{Ready} condition with status C{True}."""
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


class _Pod(NamedTuple):
    """What the collector keeps of a pod: C{uid}, C{deletion} (the C{deletionTimestamp}
    string, C{""} when not terminating), C{node} (C{spec.nodeName}), C{terminated} (phase
    C{Succeeded} or C{Failed}) and C{created} (C{creationTimestamp} string)."""

    uid: str
    deletion: str
    node: str
    terminated: bool
    created: str

    @classmethod
    def of(cls, pod: dict) -> _Pod:
        meta = pod.get("metadata") or {}
        return cls(meta.get("uid", ""), meta.get("deletionTimestamp") or "",
                   (pod.get("spec") or {}).get("nodeName", ""),
                   (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"),
                   meta.get("creationTimestamp") or "")


class PodGC(Service):
    """
    Force-deletes terminating pods no kubelet will finish and terminated pods over the
    threshold (see the module docstring).

    @param pods: the pods Store.
    @param nodes: the nodes Store, or C{None} (then no node exists).
    @param clock: C{IReactorTime} the timers run on; also "now" for grace expiry.
    @param terminated_threshold: terminated pods kept at most (0: no limit).
    @ivar deleted: C{namespace/name} of the pods this collector deleted, most recent last
        (the last 100).
    """

    name = "pod-garbage-collector"

    def __init__(self, pods: Store, nodes: Optional[Store], clock: Any,
                 terminated_threshold: int = TERMINATED_THRESHOLD) -> None:
        self.pods = pods
        self.nodes = nodes
        self.clock = clock
        self.terminated_threshold = terminated_threshold
        self.deleted: list[str] = []
        self.pod_informer: Optional[Informer] = None
        self.node_informer: Optional[Informer] = None
        #: node name -> keys of the terminating pods bound to it
        self._on_node: dict[str, set[tuple[str, str]]] = {}
        self._node_of: dict[tuple[str, str], str] = {}
        self._timers: dict[tuple[str, str], Any] = {}
        self._terminated: set[tuple[str, str]] = set()
        self._trim_call: Any = None

    # --- IService -----------------------------------------------------------------------------
    def startService(self) -> None:
        super().startService()
        self.pod_informer = Informer(backend_of(self.pods.storage), self.clock,
                                     self.pods.prefix(""), self._pod_changed,
                                     transform=_Pod.of)
        if self.nodes is not None:
            self.node_informer = Informer(backend_of(self.nodes.storage), self.clock,
                                          self.nodes.prefix(""), self._node_changed,
                                          transform=node_ready)
            self.node_informer.start()
        self.pod_informer.start()

    def stopService(self) -> Any:
        super().stopService()
        for informer in (self.pod_informer, self.node_informer):
            if informer is not None:
                informer.stop()
        self.pod_informer = self.node_informer = None
        for call in list(self._timers.values()) + [self._trim_call]:
            if call is not None and call.active():
                call.cancel()
        self._timers.clear()
        self._trim_call = None
        return None

    # --- events -------------------------------------------------------------------------------
    def _synced(self) -> bool:
        return self.pod_informer is not None and self.pod_informer.synced and (
            self.node_informer is None or self.node_informer.synced)

    def _pod_changed(self, key: Optional[tuple[str, str]]) -> None:
        if key is None:
            self._resync()
            return
        self._index(key)
        if self._synced():
            self._evaluate(key)
            self._check_terminated()

    def _node_changed(self, key: Optional[tuple[str, str]]) -> None:
        if key is None:
            self._resync()
            return
        if self._synced():
            for pod in list(self._on_node.get(key[1], ())):
                self._evaluate(pod)

    def _resync(self) -> None:
        """After a (re-)list of pods or nodes: index and evaluate every pod."""
        if self.pod_informer is None:
            return
        self._on_node.clear()
        self._node_of.clear()
        self._terminated.clear()
        for key in self.pod_informer.items:
            self._index(key)
        if self._synced():
            for keys in list(self._on_node.values()):
                for key in list(keys):
                    self._evaluate(key)
            self._check_terminated()

    def _index(self, key: tuple[str, str]) -> None:
        pod = self.pod_informer.items.get(key) if self.pod_informer is not None else None
        node = self._node_of.pop(key, None)
        if node is not None:
            keys = self._on_node[node]
            keys.discard(key)
            if not keys:
                del self._on_node[node]
        self._terminated.discard(key)
        if pod is not None and pod.deletion:
            self._on_node.setdefault(pod.node, set()).add(key)
            self._node_of[key] = pod.node
        elif pod is not None and pod.terminated:
            self._terminated.add(key)
        if pod is None or not pod.deletion:
            call = self._timers.pop(key, None)
            if call is not None and call.active():
                call.cancel()

    def _evaluate(self, key: tuple[str, str]) -> None:
        """Schedule the force-delete of terminating pod C{key} if no kubelet will finish it:
        now when its node is missing, at its C{deletionTimestamp} when the node is not
        Ready; cancel it when the node is Ready."""
        assert self.pod_informer is not None
        pod = self.pod_informer.items.get(key)
        old = self._timers.pop(key, None)
        if old is not None and old.active():
            old.cancel()
        if pod is None or not pod.deletion:
            return
        ready = None
        if self.node_informer is not None:
            ready = self.node_informer.items.get(("", pod.node))
        if ready is None:
            delay = 0.0
        elif ready:
            return
        else:
            delay = max(0.0, parse_rfc3339(pod.deletion) - self.clock.seconds())
        self._timers[key] = self.clock.callLater(delay, self._force_delete, key, pod.uid)

    def _force_delete(self, key: tuple[str, str], uid: str) -> Deferred:
        self._timers.pop(key, None)
        return Deferred.fromCoroutine(self._delete(key, uid, {
            "gracePeriodSeconds": 0, "preconditions": {"uid": uid}}))

    async def _delete(self, key: tuple[str, str], uid: str, options: dict) -> None:
        try:
            await self.pods.delete(key[0], key[1], options)
        except errors.StatusError as e:
            if e.code not in (404, 409):
                log.warn("pod garbage collector: {msg}", msg=e.message)  # noqa: G010
            return
        self.deleted = self.deleted[-99:] + [f"{key[0]}/{key[1]}"]

    # --- terminated pods (upstream gcTerminated) ----------------------------------------------
    def _check_terminated(self) -> None:
        if 0 < self.terminated_threshold < len(self._terminated) and self._trim_call is None:
            self._trim_call = self.clock.callLater(0, self._trim_terminated)

    def _trim_terminated(self) -> None:
        """Delete the oldest terminated pods over the threshold (upstream C{gcTerminated});
        runs only when the count is over it."""
        self._trim_call = None
        if self.pod_informer is None:
            return
        excess = len(self._terminated) - self.terminated_threshold
        if excess <= 0:
            return
        items = self.pod_informer.items
        oldest = sorted(self._terminated, key=lambda k: (items[k].created, k))[:excess]
        for key in oldest:
            self._terminated.discard(key)
            Deferred.fromCoroutine(self._delete(key, items[key].uid, {
                "gracePeriodSeconds": 0, "preconditions": {"uid": items[key].uid}}))
