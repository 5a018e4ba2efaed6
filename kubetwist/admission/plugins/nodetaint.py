# -*- test-case-name: tests.admission.test_builtin -*-
"""
The C{TaintNodesByCondition} plugin: upstream C{plugin/pkg/admission/nodetaint}.  A Node is
created with the C{node.kubernetes.io/not-ready:NoSchedule} taint (unless it has one of that
key and effect); kube-controller-manager's node lifecycle controller, which kubetwist does
not run, would remove it once the node reports Ready.
"""

from __future__ import annotations

from typing import Any

from zope.interface import implementer

from kubetwist.admission.interfaces import IMutationInterface
from kubetwist.admission.plugins.common import is_core

__all__ = ["TaintNodesByCondition"]

NOT_READY_TAINT = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}


@implementer(IMutationInterface)
class TaintNodesByCondition:
    name = "TaintNodesByCondition"

    def handles(self, operation: str) -> bool:
        return operation == "CREATE"

    async def admit(self, a: Any) -> None:
        if not is_core(a, "nodes") or not isinstance(a.object, dict):
            return
        spec = a.object.setdefault("spec", {})
        taints = spec.get("taints") or []
        for t in taints:
            if (t or {}).get("key") == NOT_READY_TAINT["key"] \
                    and t.get("effect") == NOT_READY_TAINT["effect"]:
                return
        spec["taints"] = [*taints, dict(NOT_READY_TAINT)]
