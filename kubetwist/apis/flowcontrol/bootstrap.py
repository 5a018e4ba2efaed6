# -*- test-case-name: tests.apis.test_flowcontrol -*-
"""
The API Priority and Fairness bootstrap configuration, as data: upstream
C{k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap/default.go} at Kubernetes v1.32 (the
mandatory C{exempt} and C{catch-all} objects of both kinds, the suggested priority levels and
flow schemas, each annotated C{apf.kubernetes.io/autoupdate-spec: "true"}).

The objects are v1 wire dicts, before defaulting, exactly as upstream's Go literals encode.
Every accessor returns fresh copies.
"""

from __future__ import annotations

import copy

__all__ = [
    "AUTO_UPDATE_ANNOTATION",
    "mandatory_flow_schemas",
    "mandatory_priority_levels",
    "suggested_flow_schemas",
    "suggested_priority_levels",
]

#: Upstream C{flowcontrol.AutoUpdateAnnotationKey}.
AUTO_UPDATE_ANNOTATION = "apf.kubernetes.io/autoupdate-spec"

_API_VERSION = "flowcontrol.apiserver.k8s.io/v1"

# well-known user and group names (upstream k8s.io/apiserver/pkg/authentication/user)
_PRIVILEGED = "system:masters"
_UNAUTHENTICATED = "system:unauthenticated"
_AUTHENTICATED = "system:authenticated"
_NODES = "system:nodes"
_KCM = "system:kube-controller-manager"
_SCHEDULER = "system:kube-scheduler"
_ALL_SERVICE_ACCOUNTS = "system:serviceaccounts"


def _meta(name: str) -> dict:
    return {"name": name, "annotations": {AUTO_UPDATE_ANNOTATION: "true"}}


def _pl(name: str, spec: dict) -> dict:
    return {"apiVersion": _API_VERSION, "kind": "PriorityLevelConfiguration",
            "metadata": _meta(name), "spec": spec}


def _limited(shares: int, lendable: int, queuing: tuple[int, int, int] | None) -> dict:
    """A C{Limited} spec; C{queuing} is C{(queues, handSize, queueLengthLimit)} or C{None}
    for C{Reject}."""
    if queuing is None:
        response: dict = {"type": "Reject"}
    else:
        queues, hand, limit = queuing
        response = {"type": "Queue",
                    "queuing": {"queues": queues, "handSize": hand, "queueLengthLimit": limit}}
    return {"type": "Limited",
            "limited": {"nominalConcurrencyShares": shares, "limitResponse": response,
                        "lendablePercent": lendable}}


def _fs(name: str, pl: str, precedence: int, method: str, rule: dict) -> dict:
    spec: dict = {"priorityLevelConfiguration": {"name": pl}, "matchingPrecedence": precedence}
    if method:
        spec["distinguisherMethod"] = {"type": method}
    spec["rules"] = [rule]
    return {"apiVersion": _API_VERSION, "kind": "FlowSchema", "metadata": _meta(name),
            "spec": spec}


def _groups(*names: str) -> list[dict]:
    return [{"kind": "Group", "group": {"name": n}} for n in names]


def _users(*names: str) -> list[dict]:
    return [{"kind": "User", "user": {"name": n}} for n in names]


def _kube_system_sas(*names: str) -> list[dict]:
    return [{"kind": "ServiceAccount",
             "serviceAccount": {"namespace": "kube-system", "name": n}} for n in names]


def _resource_rule(verbs: list[str], groups: list[str], resources: list[str],
                   cluster_scope: bool) -> dict:
    rule: dict = {"verbs": verbs, "apiGroups": groups, "resources": resources}
    if cluster_scope:
        rule["clusterScope"] = True
    rule["namespaces"] = ["*"]
    return rule


def _everything(subjects: list[dict]) -> dict:
    """Subjects with every resource (cluster scope too) and every non-resource URL."""
    return {"subjects": subjects,
            "resourceRules": [_resource_rule(["*"], ["*"], ["*"], True)],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}


_MANDATORY_PLS = (
    _pl("catch-all", _limited(5, 0, None)),
    _pl("exempt", {"type": "Exempt",
                   "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}),
)

_MANDATORY_FSS = (
    _fs("exempt", "exempt", 1, "", _everything(_groups(_PRIVILEGED))),
    _fs("catch-all", "catch-all", 10000, "ByUser",
        _everything(_groups(_UNAUTHENTICATED, _AUTHENTICATED))),
)

_SUGGESTED_PLS = (
    _pl("system", _limited(30, 33, (64, 6, 50))),
    _pl("node-high", _limited(40, 25, (64, 6, 50))),
    _pl("leader-election", _limited(10, 0, (16, 4, 50))),
    _pl("workload-high", _limited(40, 50, (128, 6, 50))),
    _pl("workload-low", _limited(100, 90, (128, 6, 50))),
    _pl("global-default", _limited(20, 50, (128, 6, 50))),
)

_SUGGESTED_FSS = (
    _fs("system-nodes", "system", 500, "ByUser", _everything(_groups(_NODES))),
    _fs("system-node-high", "node-high", 400, "ByUser", {
        "subjects": _groups(_NODES),
        "resourceRules": [
            _resource_rule(["*"], [""], ["nodes", "nodes/status"], True),
            _resource_rule(["*"], ["coordination.k8s.io"], ["leases"], False),
        ]}),
    _fs("probes", "exempt", 2, "", {
        "subjects": _groups(_UNAUTHENTICATED, _AUTHENTICATED),
        "nonResourceRules": [{"verbs": ["get"],
                              "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}),
    _fs("system-leader-election", "leader-election", 100, "ByUser", {
        "subjects": _users(_KCM, _SCHEDULER) + _kube_system_sas("*"),
        "resourceRules": [_resource_rule(["get", "create", "update"], ["coordination.k8s.io"],
                                         ["leases"], False)]}),
    _fs("workload-leader-election", "leader-election", 200, "ByUser", {
        "subjects": _kube_system_sas("*"),
        "resourceRules": [
            _resource_rule(["get", "create", "update"], [""], ["endpoints", "configmaps"],
                           False),
            _resource_rule(["get", "create", "update"], ["coordination.k8s.io"], ["leases"],
                           False),
        ]}),
    _fs("endpoint-controller", "workload-high", 150, "ByUser", {
        "subjects": _users(_KCM) + _kube_system_sas(
            "endpoint-controller", "endpointslicemirroring-controller"),
        "resourceRules": [_resource_rule(["get", "create", "update"], [""], ["endpoints"],
                                         False)]}),
    _fs("kube-controller-manager", "workload-high", 800, "ByNamespace",
        _everything(_users(_KCM))),
    _fs("kube-scheduler", "workload-high", 800, "ByNamespace", _everything(_users(_SCHEDULER))),
    _fs("kube-system-service-accounts", "workload-high", 900, "ByNamespace",
        _everything(_kube_system_sas("*"))),
    _fs("service-accounts", "workload-low", 9000, "ByUser",
        _everything(_groups(_ALL_SERVICE_ACCOUNTS))),
    _fs("global-default", "global-default", 9900, "ByUser",
        _everything(_groups(_UNAUTHENTICATED, _AUTHENTICATED))),
)


def mandatory_priority_levels() -> list[dict]:
    """Upstream C{MandatoryPriorityLevelConfigurations}: C{catch-all} (Limited, 5 shares,
    Reject) and C{exempt} (Exempt, 0 shares, 0% lendable)."""
    return copy.deepcopy(list(_MANDATORY_PLS))


def mandatory_flow_schemas() -> list[dict]:
    """Upstream C{MandatoryFlowSchemas}: C{exempt} (precedence 1, C{system:masters}) and
    C{catch-all} (precedence 10000, everyone, ByUser)."""
    return copy.deepcopy(list(_MANDATORY_FSS))


def suggested_priority_levels() -> list[dict]:
    """Upstream C{SuggestedPriorityLevelConfigurations}, in upstream order."""
    return copy.deepcopy(list(_SUGGESTED_PLS))


def suggested_flow_schemas() -> list[dict]:
    """Upstream C{SuggestedFlowSchemas} of v1.32, in upstream order (including the
    C{workload-leader-election} and C{endpoint-controller} schemas, removed after v1.32)."""
    return copy.deepcopy(list(_SUGGESTED_FSS))
