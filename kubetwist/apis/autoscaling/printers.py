# -*- test-case-name: tests.apis.test_autoscaling -*-
"""
Server-side printing of autoscaling/v2 HorizontalPodAutoscalers: upstream
C{printHorizontalPodAutoscaler}, C{formatHPAMetrics} and their column definitions in
C{k8s.io/kubernetes/pkg/printers/internalversion/printers.go}.
"""

from __future__ import annotations

from typing import Any

from kubetwist.apis.printers import age_column, column, name_column, obj_age, obj_name
from kubetwist.registry.rest import TableConvertor

__all__ = ["HPA_TABLE", "format_hpa_metrics"]

#: C{SwaggerDoc()} texts of k8s.io/api autoscaling/v2 v0.32.
_DOCS = {
    "scaleTargetRef": "scaleTargetRef points to the target resource to scale, and is used to "
    "the pods for which metrics should be collected, as well as to actually change the "
    "replica count.",
    "metrics": "metrics contains the specifications for which to use to calculate the desired "
    "replica count (the maximum replica count across all metrics will be used).  The desired "
    "replica count is calculated multiplying the ratio between the target value and the "
    "current value by the current number of pods.  Ergo, metrics used must decrease as the pod "
    "count is increased, and vice-versa.  See the individual metric source types for more "
    "information about how each type of metric must respond. If not set, the default metric "
    "will be set to 80% average CPU utilization.",
    "minReplicas": "minReplicas is the lower limit for the number of replicas to which the "
    "autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the "
    "alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric "
    "is configured.  Scaling is active as long as at least one metric value is available.",
    "maxReplicas": "maxReplicas is the upper limit for the number of replicas to which the "
    "autoscaler can scale up. It cannot be less that minReplicas.",
    "currentReplicas": "currentReplicas is current number of replicas of pods managed by this "
    "autoscaler, as last seen by the autoscaler.",
}


def _d(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _status_leaf(statuses: list, i: int, source: str) -> dict | None:
    if len(statuses) > i and isinstance(_d(statuses[i]).get(source), dict):
        return _d(statuses[i][source].get("current"))
    return None


def _q(value: Any) -> str:
    return "<unknown>" if value is None else str(value)


def _one_metric(spec: dict, statuses: list, i: int) -> str:
    mtype = spec.get("type")
    if mtype in ("External", "Object"):
        source = mtype.lower()
        target = _d(_d(spec.get(source)).get("target"))
        cur = _status_leaf(statuses, i, source)
        if target.get("averageValue") is not None:
            current = _q((cur or {}).get("averageValue"))
            return f"{current}/{target['averageValue']} (avg)"
        current = _q((cur or {}).get("value"))
        return f"{current}/{_q(target.get('value'))}"
    if mtype == "Pods":
        target = _d(_d(spec.get("pods")).get("target"))
        cur = _status_leaf(statuses, i, "pods")
        current = _q((cur or {}).get("averageValue")) if cur is not None else "<unknown>"
        return f"{current}/{_q(target.get('averageValue'))}"
    if mtype in ("Resource", "ContainerResource"):
        source = "resource" if mtype == "Resource" else "containerResource"
        src = _d(spec.get(source))
        target = _d(src.get("target"))
        cur = _status_leaf(statuses, i, source)
        name = src.get("name") or ""
        if target.get("averageValue") is not None:
            current = _q((cur or {}).get("averageValue")) if cur is not None else "<unknown>"
            return f"{name}: {current}/{target['averageValue']}"
        current = "<unknown>"
        if cur is not None and cur.get("averageUtilization") is not None:
            current = f"{cur['averageUtilization']}%"
        util = target.get("averageUtilization")
        return f"{name}: {current}/{'<auto>' if util is None else f'{util}%'}"
    return "<unknown type>"


def format_hpa_metrics(specs: list | None, statuses: list | None) -> str:
    """
    Upstream C{formatHPAMetrics}: C{current/target} per metric (C{cpu: 40%/80%},
    C{4/20}, C{1/5 (avg)}), the first two then C{+ N more...}; C{<none>} without metrics.
    """
    specs, statuses = specs or [], statuses or []
    if not specs:
        return "<none>"
    items = [_one_metric(_d(s), statuses, i) for i, s in enumerate(specs)]
    text = ", ".join(items[:2])
    if len(items) > 2:
        text += f" + {len(items) - 2} more..."
    return text


def _hpa_row(hpa: dict) -> list:
    spec, status = _d(hpa.get("spec")), _d(hpa.get("status"))
    ref = _d(spec.get("scaleTargetRef"))
    min_pods = spec.get("minReplicas")
    return [obj_name(hpa), f"{ref.get('kind') or ''}/{ref.get('name') or ''}",
            format_hpa_metrics(spec.get("metrics"), status.get("currentMetrics")),
            "<unset>" if min_pods is None else min_pods, spec.get("maxReplicas") or 0,
            status.get("currentReplicas") or 0, obj_age(hpa)]


HPA_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Reference", "string", _DOCS["scaleTargetRef"]),
        column("Targets", "string", _DOCS["metrics"]),
        column("MinPods", "string", _DOCS["minReplicas"]),
        column("MaxPods", "string", _DOCS["maxReplicas"]),
        column("Replicas", "string", _DOCS["currentReplicas"]),
        age_column(),
    ],
    row=_hpa_row,
)
