# -*- test-case-name: tests.apis.test_flowcontrol -*-
"""
Server-side printing of FlowSchemas and PriorityLevelConfigurations: upstream
C{pkg/printers/internalversion/printers.go} (C{flowSchemaColumnDefinitions},
C{printFlowSchema}, C{printFlowSchemaList}, C{priorityLevelColumnDefinitions},
C{printPriorityLevelConfiguration}).
"""

from __future__ import annotations

from typing import Any

from kubetwist.apis.printers import age_column, column, name_column, obj_age, obj_name
from kubetwist.registry.rest import TableConvertor

__all__ = ["FLOW_SCHEMA_TABLE", "PRIORITY_LEVEL_TABLE", "flow_schema_order"]

# SwaggerDoc texts of k8s.io/api/flowcontrol/v1 (v1.32) used as column descriptions.
_DOCS = {
    "plName": "`name` is the name of the priority level configuration being referenced "
              "Required.",
    "matchingPrecedence": (
        "`matchingPrecedence` is used to choose among the FlowSchemas that match a given "
        "request. The chosen FlowSchema is among those with the numerically lowest (which we "
        "take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must "
        "be ranged in [1,10000]. Note that if the precedence is not specified, it will be set "
        "to 1000 as default."),
    "distinguisherMethod": (
        "`distinguisherMethod` defines how to compute the flow distinguisher for requests that "
        "match this schema. `nil` specifies that the distinguisher is disabled and thus will "
        "always be the empty string."),
    "type": (
        "`type` indicates whether this priority level is subject to limitation on request "
        "execution.  A value of `\"Exempt\"` means that requests of this priority level are "
        "not subject to a limit (and thus are never queued) and do not detract from the "
        "capacity made available to other priority levels.  A value of `\"Limited\"` means "
        "that (a) requests of this priority level _are_ subject to limits and (b) some of the "
        "server's limited capacity is made available exclusively to this priority level. "
        "Required."),
    "nominalConcurrencyShares": (
        "`nominalConcurrencyShares` (NCS) contributes to the computation of the "
        "NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution "
        "seats available at this priority level. This is used both for requests dispatched "
        "from this priority level as well as requests dispatched from other priority levels "
        "borrowing seats from this level. The server's concurrency limit (ServerCL) is divided "
        "among the Limited priority levels in proportion to their NCS values:\n\n"
        "NominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] "
        "NCS(k)\n\nBigger numbers mean a larger nominal concurrency limit, at the expense of "
        "every other priority level.\n\nIf not specified, this field defaults to a value of "
        "30.\n\nSetting this field to zero supports the construction of a \"jail\" for this "
        "priority level that is used to hold some request(s)"),
    "queues": (
        "`queues` is the number of queues for this priority level. The queues exist "
        "independently at each apiserver. The value must be positive.  Setting it to 1 "
        "effectively precludes shufflesharding and thus makes the distinguisher method of "
        "associated flow schemas irrelevant.  This field has a default value of 64."),
    "handSize": (
        "`handSize` is a small positive number that configures the shuffle sharding of "
        "requests into queues.  When enqueuing a request at this priority level the request's "
        "flow identifier (a string pair) is hashed and the hash value is used to shuffle the "
        "list of queues and deal a hand of the size specified here.  The request is put into "
        "one of the shortest queues in that hand. `handSize` must be no larger than `queues`, "
        "and should be significantly smaller (so that a few heavy flows do not saturate most "
        "of the queues).  See the user-facing documentation for more extensive guidance on "
        "setting this field.  This field has a default value of 8."),
    "queueLengthLimit": (
        "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given "
        "queue of this priority level at a time; excess requests are rejected.  This value "
        "must be positive.  If not specified, it will be defaulted to 50."),
}


def _d(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _flow_schema_row(fs: dict) -> list:
    """Upstream C{printFlowSchema}: C{MissingPL} is the C{Dangling} condition's status, C{?}
    without one; C{<none>} without a distinguisher."""
    spec = _d(fs.get("spec"))
    method = spec.get("distinguisherMethod")
    distinguisher = (_d(method).get("type") or "") if method is not None else "<none>"
    missing = "?"
    for cond in _d(fs.get("status")).get("conditions") or []:
        if _d(cond).get("type") == "Dangling":
            missing = _d(cond).get("status") or ""
            break
    return [obj_name(fs), _d(spec.get("priorityLevelConfiguration")).get("name") or "",
            int(spec.get("matchingPrecedence") or 0), distinguisher, obj_age(fs), missing]


def flow_schema_order(items: list[dict]) -> list[dict]:
    """Upstream C{printFlowSchemaList} (C{FlowSchemaSequence}): rows by ascending
    C{matchingPrecedence}, then name."""
    return sorted(items, key=lambda fs: (int(_d(fs.get("spec")).get("matchingPrecedence") or 0),
                                         obj_name(fs)))


def _priority_level_row(pl: dict) -> list:
    """Upstream C{printPriorityLevelConfiguration}: C{<none>} cells for what an Exempt level
    (or a Reject response) lacks."""
    spec = _d(pl.get("spec"))
    shares: Any = "<none>"
    queues: Any = "<none>"
    hand: Any = "<none>"
    limit: Any = "<none>"
    limited = spec.get("limited")
    if isinstance(limited, dict):
        shares = int(limited.get("nominalConcurrencyShares") or 0)
        queuing = _d(limited.get("limitResponse")).get("queuing")
        if isinstance(queuing, dict):
            queues = int(queuing.get("queues") or 0)
            hand = int(queuing.get("handSize") or 0)
            limit = int(queuing.get("queueLengthLimit") or 0)
    return [obj_name(pl), spec.get("type") or "", shares, queues, hand, limit, obj_age(pl)]


#: Upstream C{flowSchemaColumnDefinitions}.
FLOW_SCHEMA_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("PriorityLevel", "string", _DOCS["plName"]),
        column("MatchingPrecedence", "string", _DOCS["matchingPrecedence"]),
        column("DistinguisherMethod", "string", _DOCS["distinguisherMethod"]),
        age_column(),
        column("MissingPL", "string",
               "references a broken or non-existent PriorityLevelConfiguration"),
    ],
    row=_flow_schema_row,
    order=flow_schema_order,
)

#: Upstream C{priorityLevelColumnDefinitions}.
PRIORITY_LEVEL_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Type", "string", _DOCS["type"]),
        column("NominalConcurrencyShares", "string", _DOCS["nominalConcurrencyShares"]),
        column("Queues", "string", _DOCS["queues"]),
        column("HandSize", "string", _DOCS["handSize"]),
        column("QueueLengthLimit", "string", _DOCS["queueLengthLimit"]),
        age_column(),
    ],
    row=_priority_level_row,
)
