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
"""

from __future__ import annotations

from typing import Any

from twisted.logger import Logger

from kubetwist.apimachinery.meta import parse_rfc3339
from kubetwist.controlplane.sweeper import SweepService
from kubetwist.registry.generic.store import ListOptions, Store
from kubetwist.runtime import errors

log = Logger()

#: seconds between sweeps (a pod marked for deletion also triggers one at once)
DEFAULT_INTERVAL = 1.0


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
    @param clock: C{IReactorTime} the sweeps run on; also "now" for grace expiry.
    @param interval: seconds between sweeps.
    """

    name = "pod-garbage-collector"

    def __init__(self, pods: Store, nodes: Store | None, clock: Any,
                 interval: float = DEFAULT_INTERVAL) -> None:
        super().__init__(clock, interval)
        self.pods = pods
        self.nodes = nodes
        pods.on_marked_for_deletion.append(self.trigger)

    async def sweep(self) -> list[str]:
        """
        One pass; fire with the C{namespace/name} of the pods deleted.
        """
        pods = await self.pods.list("", ListOptions())
        terminating = [p for p in pods["items"]
                       if (p.get("metadata") or {}).get("deletionTimestamp")]
        if not terminating:
            return []
        ready: dict[str, bool] = {}
        if self.nodes is not None:
            nodes = await self.nodes.list("", ListOptions())
            ready = {n["metadata"]["name"]: node_ready(n) for n in nodes["items"]}
        now = self.clock.seconds()
        deleted = []
        for pod in terminating:
            meta = pod["metadata"]
            node = (pod.get("spec") or {}).get("nodeName", "")
            if node in ready and (
                    ready[node] or parse_rfc3339(meta["deletionTimestamp"]) > now):
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
