# -*- test-case-name: tests.apis.test_flowcontrol -*-
"""
The field managers of API Priority and Fairness's own writes, so that the objects carry the
C{managedFields} entries upstream's do: the config producer (upstream
C{pkg/registry/flowcontrol/ensurer}, C{Update} as
C{api-priority-and-fairness-config-producer-v1}) and the config consumer (upstream
C{apf_controller.go}, a forced server-side C{Apply} of the C{Dangling} condition on the
C{status} subresource as C{api-priority-and-fairness-config-consumer-v1}).
"""

from __future__ import annotations

from typing import Any

from kubetwist.apimachinery import fieldmanager as fmlib
from kubetwist.apimachinery.fieldmanager import typed as fmtyped

__all__ = ["CONSUMER_MANAGER", "PRODUCER_MANAGER", "field_manager"]

#: Upstream C{ConfigConsumerAsFieldManager}.
CONSUMER_MANAGER = "api-priority-and-fairness-config-consumer-v1"
#: Upstream C{ensurer}'s field manager.
PRODUCER_MANAGER = "api-priority-and-fairness-config-producer-v1"

_GROUP, _VERSION = "flowcontrol.apiserver.k8s.io", "v1"


def field_manager(kind: str, clock: Any, subresource: str = "") -> fmlib.FieldManager:
    """
    The L{FieldManager <kubetwist.apimachinery.fieldmanager.manager.FieldManager>} of
    C{kind} (C{FlowSchema} or C{PriorityLevelConfiguration}) at v1, as the REST handlers build
    it (C{status} reset on the main resource, C{spec} on C{status}).

    @param clock: C{IReactorTime} (entry times).
    """
    gv = f"{_GROUP}/{_VERSION}"
    node = fmtyped.for_kind(_GROUP, _VERSION, kind)
    if node is None:
        node = fmtyped.for_structural(None)
    zero = fmtyped.zero_value(_GROUP, _VERSION, kind) or {"apiVersion": gv, "kind": kind}
    reset = fmlib.Set.of((("f", "spec"),)) if subresource == "status" else \
        fmlib.Set.of((("f", "status"),))
    return fmlib.FieldManager(node, gv, clock, subresource, reset, zero, kind)
