# -*- test-case-name: tests.apis.test_autoscaling_v1 -*-
"""
autoscaling/v1 HorizontalPodAutoscalers, served from the autoscaling/v2 storage: upstream
C{pkg/apis/autoscaling/v1/conversion.go} (v1 <-> internal, whose shape is v2's),
C{pkg/apis/autoscaling/v1/defaults.go} and C{pkg/apis/autoscaling/annotations.go}.

What v1 cannot say travels in annotations of the v1 object (and never reaches storage):

  - C{autoscaling.alpha.kubernetes.io/metrics}: the spec metrics other than a CPU utilization
    target, as a JSON list of v1 C{MetricSpec}s (v2beta1-like: C{targetAverageValue}, ...);
  - C{autoscaling.alpha.kubernetes.io/current-metrics}: every status metric, as v1
    C{MetricStatus}es;
  - C{autoscaling.alpha.kubernetes.io/conditions}: the status conditions;
  - C{autoscaling.alpha.kubernetes.io/behavior}: C{spec.behavior} as Go marshals the internal
    type (Go field names: C{{"ScaleUp":{"StabilizationWindowSeconds":0,...}}}).

A v1 object without metrics gets upstream's implicit CPU 80% target when converted.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kubetwist.apis.autoscaling import hpa as v2
from kubetwist.runtime.field import go_marshal
from kubetwist.runtime.quantity import canonical_quantity

__all__ = [
    "ANNOTATIONS",
    "BEHAVIOR_ANNOTATION",
    "CONDITIONS_ANNOTATION",
    "METRIC_SPECS_ANNOTATION",
    "METRIC_STATUSES_ANNOTATION",
    "default_hpa_v1",
    "hpa_v1_to_v2",
    "hpa_v2_to_v1",
]

V1 = "autoscaling/v1"
V2 = "autoscaling/v2"

#: Upstream C{MetricSpecsAnnotation}, C{MetricStatusesAnnotation},
#: C{HorizontalPodAutoscalerConditionsAnnotation}, C{BehaviorSpecsAnnotation}.
METRIC_SPECS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"
METRIC_STATUSES_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR_ANNOTATION = "autoscaling.alpha.kubernetes.io/behavior"
#: The round-trip annotations (upstream C{DropRoundTripHorizontalPodAutoscalerAnnotations}).
ANNOTATIONS = (METRIC_SPECS_ANNOTATION, BEHAVIOR_ANNOTATION, METRIC_STATUSES_ANNOTATION,
               CONDITIONS_ANNOTATION)

_ZERO = "0"


def _d(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _put(out: dict, key: str, value: Any) -> None:
    """Set C{key} unless C{value} is C{None} (Go's C{omitempty} on a pointer)."""
    if value is not None:
        out[key] = value


def default_hpa_v1(hpa: dict) -> None:
    """Upstream v1 C{SetDefaults_HorizontalPodAutoscaler}: C{spec.minReplicas} 1."""
    spec = hpa.get("spec")
    if not isinstance(spec, dict):
        spec = hpa["spec"] = {}
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not isinstance(spec.get("scaleTargetRef"), dict):
        spec["scaleTargetRef"] = {}


def _ref(ref: Any) -> dict:
    """A C{CrossVersionObjectReference} (C{apiVersion} omitted when empty)."""
    ref = _d(ref)
    out = {"kind": ref.get("kind") or "", "name": ref.get("name") or ""}
    if ref.get("apiVersion"):
        out["apiVersion"] = ref["apiVersion"]
    return out


def _q(value: Any) -> Any:
    return None if value is None else canonical_quantity(value)


# --- metrics: v2 -> v1 annotation shapes -------------------------------------------------------

def _metric_spec_to_v1(metric: dict) -> dict:
    """Upstream C{Convert_autoscaling_MetricSpec_To_v1_MetricSpec}."""
    out: dict[str, Any] = {"type": metric.get("type") or ""}
    src = metric.get("object")
    if isinstance(src, dict):
        target, ident = _d(src.get("target")), _d(src.get("metric"))
        o: dict[str, Any] = {"target": _ref(src.get("describedObject")),
                             "metricName": ident.get("name") or "",
                             "targetValue": _q(target.get("value")) or _ZERO}
        _put(o, "selector", ident.get("selector"))
        _put(o, "averageValue", _q(target.get("averageValue")))
        out["object"] = o
    src = metric.get("pods")
    if isinstance(src, dict):
        target, ident = _d(src.get("target")), _d(src.get("metric"))
        o = {"metricName": ident.get("name") or "",
             "targetAverageValue": _q(target.get("averageValue")) or _ZERO}
        _put(o, "selector", ident.get("selector"))
        out["pods"] = o
    for key in ("resource", "containerResource"):
        src = metric.get(key)
        if isinstance(src, dict):
            target = _d(src.get("target"))
            o = {"name": src.get("name") or ""}
            _put(o, "targetAverageUtilization", target.get("averageUtilization"))
            _put(o, "targetAverageValue", _q(target.get("averageValue")))
            if key == "containerResource":
                o["container"] = src.get("container") or ""
            out[key] = o
    src = metric.get("external")
    if isinstance(src, dict):
        target, ident = _d(src.get("target")), _d(src.get("metric"))
        o = {"metricName": ident.get("name") or ""}
        _put(o, "metricSelector", ident.get("selector"))
        _put(o, "targetValue", _q(target.get("value")))
        _put(o, "targetAverageValue", _q(target.get("averageValue")))
        out["external"] = o
    return out


def _metric_status_to_v1(metric: dict) -> dict:
    """Upstream C{Convert_autoscaling_MetricStatus_To_v1_MetricStatus}."""
    out: dict[str, Any] = {"type": metric.get("type") or ""}
    src = metric.get("object")
    if isinstance(src, dict):
        current, ident = _d(src.get("current")), _d(src.get("metric"))
        o: dict[str, Any] = {"target": _ref(src.get("describedObject")),
                             "metricName": ident.get("name") or "",
                             "currentValue": _q(current.get("value")) or _ZERO}
        _put(o, "selector", ident.get("selector"))
        _put(o, "averageValue", _q(current.get("averageValue")))
        out["object"] = o
    src = metric.get("pods")
    if isinstance(src, dict):
        current, ident = _d(src.get("current")), _d(src.get("metric"))
        o = {"metricName": ident.get("name") or "",
             "currentAverageValue": _q(current.get("averageValue")) or _ZERO}
        _put(o, "selector", ident.get("selector"))
        out["pods"] = o
    for key in ("resource", "containerResource"):
        src = metric.get(key)
        if isinstance(src, dict):
            current = _d(src.get("current"))
            o = {"name": src.get("name") or ""}
            _put(o, "currentAverageUtilization", current.get("averageUtilization"))
            o["currentAverageValue"] = _q(current.get("averageValue")) or _ZERO
            if key == "containerResource":
                o["container"] = src.get("container") or ""
            out[key] = o
    src = metric.get("external")
    if isinstance(src, dict):
        current, ident = _d(src.get("current")), _d(src.get("metric"))
        o = {"metricName": ident.get("name") or ""}
        _put(o, "metricSelector", ident.get("selector"))
        o["currentValue"] = _q(current.get("value")) or _ZERO
        _put(o, "currentAverageValue", _q(current.get("averageValue")))
        out["external"] = o
    return out


# --- metrics: v1 annotation shapes -> v2 -------------------------------------------------------

def _ident(name: Any, selector: Any) -> dict:
    out = {"name": name or ""}
    _put(out, "selector", selector)
    return out


def _target(type_: str, value: Any = None, average_value: Any = None,
            utilization: Any = None) -> dict:
    out = {"type": type_}
    _put(out, "value", _q(value))
    _put(out, "averageValue", _q(average_value))
    _put(out, "averageUtilization", utilization)
    return out


def _current(value: Any = None, average_value: Any = None, utilization: Any = None) -> dict:
    out: dict[str, Any] = {}
    _put(out, "value", _q(value))
    _put(out, "averageValue", _q(average_value))
    _put(out, "averageUtilization", utilization)
    return out


def _metric_spec_from_v1(metric: dict) -> dict:
    """Upstream C{Convert_v1_MetricSpec_To_autoscaling_MetricSpec}."""
    out: dict[str, Any] = {"type": metric.get("type") or ""}
    src = metric.get("object")
    if isinstance(src, dict):
        avg = src.get("averageValue")
        out["object"] = {
            "describedObject": _ref(src.get("target")),
            "target": _target("AverageValue" if avg is not None else "Value",
                              src.get("targetValue") or _ZERO, avg),
            "metric": _ident(src.get("metricName"), src.get("selector")),
        }
    src = metric.get("pods")
    if isinstance(src, dict):
        out["pods"] = {
            "metric": _ident(src.get("metricName"), src.get("selector")),
            "target": _target("AverageValue", average_value=src.get("targetAverageValue")
                              or _ZERO),
        }
    for key in ("resource", "containerResource"):
        src = metric.get(key)
        if isinstance(src, dict):
            util = src.get("targetAverageUtilization")
            o = {"name": src.get("name") or "",
                 "target": _target("Utilization" if util is not None else "AverageValue",
                                   average_value=src.get("targetAverageValue"),
                                   utilization=util)}
            if key == "containerResource":
                o["container"] = src.get("container") or ""
            out[key] = o
    src = metric.get("external")
    if isinstance(src, dict):
        value = src.get("targetValue")
        out["external"] = {
            "metric": _ident(src.get("metricName"), src.get("metricSelector")),
            "target": _target("Value" if value is not None else "AverageValue", value,
                              src.get("targetAverageValue")),
        }
    return out


def _metric_status_from_v1(metric: dict) -> dict:
    """Upstream C{Convert_v1_MetricStatus_To_autoscaling_MetricStatus}."""
    out: dict[str, Any] = {"type": metric.get("type") or ""}
    src = metric.get("object")
    if isinstance(src, dict):
        out["object"] = {
            "metric": _ident(src.get("metricName"), src.get("selector")),
            "current": _current(src.get("currentValue") or _ZERO, src.get("averageValue")),
            "describedObject": _ref(src.get("target")),
        }
    src = metric.get("pods")
    if isinstance(src, dict):
        out["pods"] = {
            "metric": _ident(src.get("metricName"), src.get("selector")),
            "current": _current(average_value=src.get("currentAverageValue") or _ZERO),
        }
    for key in ("resource", "containerResource"):
        src = metric.get(key)
        if isinstance(src, dict):
            o = {"name": src.get("name") or "",
                 "current": _current(average_value=src.get("currentAverageValue") or _ZERO,
                                     utilization=src.get("currentAverageUtilization"))}
            if key == "containerResource":
                o["container"] = src.get("container") or ""
            out[key] = o
    src = metric.get("external")
    if isinstance(src, dict):
        out["external"] = {
            "metric": _ident(src.get("metricName"), src.get("metricSelector")),
            "current": _current(src.get("currentValue") or _ZERO,
                                src.get("currentAverageValue")),
        }
    return out


# --- behavior: the internal type's Go JSON ------------------------------------------------------

def _behavior_to_go(behavior: dict) -> dict:
    def rules(r: Any) -> dict | None:
        if not isinstance(r, dict):
            return None
        policies = r.get("policies")
        return {"StabilizationWindowSeconds": r.get("stabilizationWindowSeconds"),
                "SelectPolicy": r.get("selectPolicy"),
                "Policies": None if policies is None else [
                    {"Type": _d(p).get("type") or "", "Value": _d(p).get("value") or 0,
                     "PeriodSeconds": _d(p).get("periodSeconds") or 0} for p in policies]}
    return {"ScaleUp": rules(behavior.get("scaleUp")),
            "ScaleDown": rules(behavior.get("scaleDown"))}


def _field(obj: dict, name: str) -> Any:
    """Go's C{json.Unmarshal} field match: exact name first, then case-insensitive."""
    if name in obj:
        return obj[name]
    lowered = name.lower()
    for key, value in obj.items():
        if key.lower() == lowered:
            return value
    return None


def _behavior_from_go(value: Any) -> dict | None:
    """The v2 C{behavior} of a decoded annotation, or C{None} when empty or malformed."""
    if not isinstance(value, dict):
        return None

    def rules(r: Any) -> dict | None:
        if not isinstance(r, dict):
            return None
        out: dict[str, Any] = {}
        _put(out, "stabilizationWindowSeconds", _field(r, "StabilizationWindowSeconds"))
        _put(out, "selectPolicy", _field(r, "SelectPolicy"))
        policies = _field(r, "Policies")
        if isinstance(policies, list):
            out["policies"] = [{"type": _field(_d(p), "Type") or "",
                                "value": _field(_d(p), "Value") or 0,
                                "periodSeconds": _field(_d(p), "PeriodSeconds") or 0}
                               for p in policies]
        return out
    out: dict[str, Any] = {}
    _put(out, "scaleUp", rules(_field(value, "ScaleUp")))
    _put(out, "scaleDown", rules(_field(value, "ScaleDown")))
    return out or None


def _condition_to_v1(cond: dict) -> dict:
    out = {"type": cond.get("type") or "", "status": cond.get("status") or "",
           "lastTransitionTime": cond.get("lastTransitionTime")}
    if cond.get("reason"):
        out["reason"] = cond["reason"]
    if cond.get("message"):
        out["message"] = cond["message"]
    return out


def _condition_from_v1(cond: dict) -> dict:
    out = {"type": cond.get("type") or "", "status": cond.get("status") or "",
           "lastTransitionTime": cond.get("lastTransitionTime")}
    if out["lastTransitionTime"] is None:
        del out["lastTransitionTime"]
    for key in ("reason", "message"):
        if cond.get(key):
            out[key] = cond[key]
    return out


def _is_cpu_utilization(metric: dict) -> bool:
    res = metric.get("resource")
    return (metric.get("type") == "Resource" and isinstance(res, dict)
            and res.get("name") == "cpu"
            and _d(res.get("target")).get("averageUtilization") is not None)


def _decoded_list(annotations: dict, key: str) -> list | None:
    """A JSON list annotation, or C{None} when absent or malformed (ignored, as upstream)."""
    raw = annotations.get(key)
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if value is None:
        return []
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else None


# --- whole objects ------------------------------------------------------------------------------

def hpa_v2_to_v1(obj: dict) -> dict:
    """
    Upstream C{Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler}:
    a new autoscaling/v1 object from an autoscaling/v2 one (not mutated).
    """
    meta = copy.deepcopy(_d(obj.get("metadata")))
    annotations = {k: v for k, v in _d(meta.get("annotations")).items() if k not in ANNOTATIONS}
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    metrics = [m for m in spec.get("metrics") or [] if isinstance(m, dict)]
    current = [m for m in status.get("currentMetrics") or [] if isinstance(m, dict)]
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    other = [_metric_spec_to_v1(m) for m in metrics if not _is_cpu_utilization(m)]
    if other:
        annotations[METRIC_SPECS_ANNOTATION] = go_marshal(other)
    if current:
        annotations[METRIC_STATUSES_ANNOTATION] = go_marshal(
            [_metric_status_to_v1(m) for m in current])
    if conditions:
        annotations[CONDITIONS_ANNOTATION] = go_marshal([_condition_to_v1(c) for c in conditions])
    if isinstance(spec.get("behavior"), dict):
        annotations[BEHAVIOR_ANNOTATION] = go_marshal(_behavior_to_go(spec["behavior"]))
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)

    v1_spec: dict[str, Any] = {"scaleTargetRef": _ref(spec.get("scaleTargetRef"))}
    _put(v1_spec, "minReplicas", spec.get("minReplicas"))
    v1_spec["maxReplicas"] = spec.get("maxReplicas") or 0
    for m in metrics:
        res = _d(m.get("resource"))
        if m.get("type") == "Resource" and res.get("name") == "cpu":
            _put(v1_spec, "targetCPUUtilizationPercentage",
                 _d(res.get("target")).get("averageUtilization"))
            break
    v1_status: dict[str, Any] = {}
    _put(v1_status, "observedGeneration", status.get("observedGeneration"))
    _put(v1_status, "lastScaleTime", status.get("lastScaleTime"))
    v1_status["currentReplicas"] = status.get("currentReplicas") or 0
    v1_status["desiredReplicas"] = status.get("desiredReplicas") or 0
    for m in current:
        res = _d(m.get("resource"))
        if m.get("type") == "Resource" and res.get("name") == "cpu":
            util = _d(res.get("current")).get("averageUtilization")
            if util is not None:
                v1_status["currentCPUUtilizationPercentage"] = util
    return {"apiVersion": V1, "kind": obj.get("kind") or "HorizontalPodAutoscaler",
            "metadata": meta, "spec": v1_spec, "status": v1_status}


def hpa_v1_to_v2(obj: dict) -> dict:
    """
    Upstream C{Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler}
    followed by the v2 defaults (what reading the stored v2 object gives): a new
    autoscaling/v2 object from an autoscaling/v1 one (not mutated).
    """
    meta = copy.deepcopy(_d(obj.get("metadata")))
    given = _d(meta.get("annotations"))
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))

    v2_spec: dict[str, Any] = {"scaleTargetRef": _ref(spec.get("scaleTargetRef"))}
    _put(v2_spec, "minReplicas", spec.get("minReplicas"))
    v2_spec["maxReplicas"] = spec.get("maxReplicas") or 0
    metrics: list = []
    other = _decoded_list(given, METRIC_SPECS_ANNOTATION)
    if other is not None:
        metrics = [_metric_spec_from_v1(m) for m in other]
    cpu = spec.get("targetCPUUtilizationPercentage")
    if cpu is not None:
        metrics.append({"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}}})
    if not metrics:
        metrics = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization",
                                      "averageUtilization": v2.DEFAULT_CPU_UTILIZATION}}}]
    v2_spec["metrics"] = metrics
    raw_behavior = given.get(BEHAVIOR_ANNOTATION)
    if raw_behavior is not None:
        try:
            behavior = _behavior_from_go(json.loads(raw_behavior))
        except ValueError:
            behavior = None
        if behavior is not None:
            v2_spec["behavior"] = behavior

    v2_status: dict[str, Any] = {}
    _put(v2_status, "observedGeneration", status.get("observedGeneration"))
    _put(v2_status, "lastScaleTime", status.get("lastScaleTime"))
    if status.get("currentReplicas"):
        v2_status["currentReplicas"] = status["currentReplicas"]
    v2_status["desiredReplicas"] = status.get("desiredReplicas") or 0
    current = _decoded_list(given, METRIC_STATUSES_ANNOTATION)
    if current is not None:
        v2_status["currentMetrics"] = [_metric_status_from_v1(m) for m in current]
    elif status.get("currentCPUUtilizationPercentage") is not None:
        v2_status["currentMetrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "current": {
                "averageUtilization": status["currentCPUUtilizationPercentage"]}}}]
    else:
        v2_status["currentMetrics"] = None
    conditions = _decoded_list(given, CONDITIONS_ANNOTATION)
    if conditions:
        v2_status["conditions"] = [_condition_from_v1(c) for c in conditions]

    annotations = {k: v for k, v in given.items() if k not in ANNOTATIONS}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    out = {"apiVersion": V2, "kind": obj.get("kind") or "HorizontalPodAutoscaler",
           "metadata": meta, "spec": v2_spec, "status": v2_status}
    v2.default_hpa(out)
    return out
