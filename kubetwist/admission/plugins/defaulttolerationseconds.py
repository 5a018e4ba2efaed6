# -*- test-case-name: tests.admission.test_plugins -*-
"""
The C{DefaultTolerationSeconds} admission mutation: upstream
C{k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds}.

Every pod (create and update, not subresources) that does not already tolerate the
C{node.kubernetes.io/not-ready} and C{node.kubernetes.io/unreachable} C{NoExecute} taints gets
a toleration for each, for 300 seconds (kube-apiserver's C{--default-not-ready-toleration-seconds}
and C{--default-unreachable-toleration-seconds}).
"""

from __future__ import annotations

from typing import Any

from zope.interface import implementer

from kubetwist.admission.interfaces import IMutationInterface

__all__ = ["DefaultTolerationSeconds", "mutate_pod", "TAINT_NODE_NOT_READY",
           "TAINT_NODE_UNREACHABLE"]

#: Upstream C{v1.TaintNodeNotReady}.
TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready"
#: Upstream C{v1.TaintNodeUnreachable}.
TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable"


def _tolerates(tolerations: list, key: str) -> bool:
    for t in tolerations:
        t = t or {}
        if (t.get("key") == key or not t.get("key")) and t.get("effect") in ("NoExecute", "", None):
            return True
    return False


def _add_or_update(tolerations: list, toleration: dict) -> list:
    """Upstream C{helper.AddOrUpdateTolerationInPod}: replace a same-key/operator/value/effect
    one."""
    out = []
    updated = False
    for t in tolerations:
        if (t or {}).get("key") == toleration["key"] \
                and t.get("operator") == toleration["operator"] \
                and (t.get("value") or "") == "" and t.get("effect") == toleration["effect"]:
            if t == toleration:
                return tolerations
            out.append(toleration)
            updated = True
        else:
            out.append(t)
    if not updated:
        out.append(toleration)
    return out


def mutate_pod(pod: dict, not_ready_seconds: int = 300, unreachable_seconds: int = 300) -> None:
    """
    Add the two default C{NoExecute} tolerations to C{pod} (a v1 Pod dict) in place, each unless
    an existing toleration (same key, or empty key; C{NoExecute} or empty effect) covers it.
    """
    spec = pod.setdefault("spec", {})
    tolerations = list(spec.get("tolerations") or [])
    not_ready = _tolerates(tolerations, TAINT_NODE_NOT_READY)
    unreachable = _tolerates(tolerations, TAINT_NODE_UNREACHABLE)
    if not_ready and unreachable:
        return
    if not not_ready:
        tolerations = _add_or_update(tolerations, {
            "effect": "NoExecute", "key": TAINT_NODE_NOT_READY, "operator": "Exists",
            "tolerationSeconds": not_ready_seconds})
    if not unreachable:
        tolerations = _add_or_update(tolerations, {
            "effect": "NoExecute", "key": TAINT_NODE_UNREACHABLE, "operator": "Exists",
            "tolerationSeconds": unreachable_seconds})
    spec["tolerations"] = tolerations


@implementer(IMutationInterface)
class DefaultTolerationSeconds:
    """The C{DefaultTolerationSeconds} plugin: L{mutate_pod} on pod creates."""

    name = "DefaultTolerationSeconds"

    def handles(self, operation: str) -> bool:
        """Pod creates only."""
        return operation == "CREATE"

    async def admit(self, a: Any) -> None:
        if a.resource.resource == "pods" and not a.resource.group and not a.subresource \
                and a.object is not None:
            mutate_pod(a.object)
