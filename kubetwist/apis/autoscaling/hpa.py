# -*- test-case-name: tests.apis.test_autoscaling -*-
"""
autoscaling/v2 HorizontalPodAutoscalers: defaulting (upstream
C{pkg/apis/autoscaling/v2/defaults.go}: C{SetDefaults_HorizontalPodAutoscaler},
C{SetDefaults_HorizontalPodAutoscalerBehavior}), validation
(C{pkg/apis/autoscaling/validation}: C{ValidateHorizontalPodAutoscaler},
C{ValidateHorizontalPodAutoscalerUpdate}, C{ValidateHorizontalPodAutoscalerStatusUpdate}) and
the registry strategy (C{pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go}: status
reset on create, no generation).

Feature gates at their v1.32 defaults: HPAScaleToZero off (C{minReplicas} >= 1 unless the
stored object already had 0), HPAContainerMetrics on.
"""

from __future__ import annotations

import copy
from typing import Any

from kubetwist.apimachinery.validation import (
    is_dns1123_label,
    name_is_dns_subdomain,
    validate_nonnegative,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.podspec_validation import GoValueError
from kubetwist.runtime.field import (
    FieldError,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kubetwist.runtime.quantity import QuantityError, canonical_quantity, parse_quantity

__all__ = [
    "default_hpa",
    "prepare_hpa_for_create",
    "prepare_hpa_for_update",
    "prepare_hpa_status_for_update",
    "validate_hpa",
    "validate_hpa_status_update",
    "validate_hpa_update",
]

#: Upstream C{MaxPeriodSeconds}, C{MaxStabilizationWindowSeconds}.
MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600
#: Upstream C{autoscaling.DefaultCPUUtilization}.
DEFAULT_CPU_UTILIZATION = 80

_SOURCE_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"]
_SOURCE_FIELDS = [("Object", "object"), ("External", "external"), ("Pods", "pods"),
                  ("Resource", "resource"), ("ContainerResource", "containerResource")]
_SELECT_POLICIES = ["Disabled", "Max", "Min"]
_POLICY_TYPES = ["Percent", "Pods"]


def _d(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _scale_up_defaults() -> dict:
    return {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
            "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                         {"type": "Percent", "value": 100, "periodSeconds": 15}]}


def _scale_down_defaults() -> dict:
    # No stabilizationWindowSeconds: upstream leaves it to the controller's flag.
    return {"selectPolicy": "Max",
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def _merge_rules(given: Any, defaults: dict) -> dict:
    """Upstream C{copyHPAScalingRules}: the given non-nil fields over the defaults."""
    if not isinstance(given, dict):
        return defaults
    out = dict(given)
    for key, value in defaults.items():
        if out.get(key) is None:
            out[key] = value
    return out


def _canonical_target(target: Any) -> None:
    if isinstance(target, dict):
        for key in ("value", "averageValue"):
            if target.get(key) is not None:
                target[key] = canonical_quantity(target[key])


def _canonical_metrics(metrics: Any, leaf: str) -> None:
    """Quantities of C{spec.metrics[].*.target} / C{status.currentMetrics[].*.current}."""
    for metric in metrics or []:
        for _, name in _SOURCE_FIELDS:
            _canonical_target(_d(_d(metric).get(name)).get(leaf))


def default_hpa(hpa: dict) -> None:
    """
    Upstream C{SetDefaults_HorizontalPodAutoscaler}: C{minReplicas} 1; metrics CPU 80%
    average utilization when none; when C{behavior} is set, each of C{scaleUp}/C{scaleDown}
    filled from upstream's defaults (scale up: 0s window, C{Max}, 4 pods or 100% per 15s;
    scale down: C{Max}, 100% per 15s, window left unset).  Metric quantities are written back
    canonical (C{20}, C{500m}); the status always prints C{currentMetrics} and
    C{desiredReplicas}, as Go's encoding of the v2 status does.
    """
    spec = hpa.get("spec")
    if not isinstance(spec, dict):
        spec = hpa["spec"] = {}
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
    if isinstance(spec.get("behavior"), dict):
        behavior = spec["behavior"]
        behavior["scaleUp"] = _merge_rules(behavior.get("scaleUp"), _scale_up_defaults())
        behavior["scaleDown"] = _merge_rules(behavior.get("scaleDown"), _scale_down_defaults())
    if not isinstance(spec.get("scaleTargetRef"), dict):
        spec["scaleTargetRef"] = {}
    _canonical_metrics(spec.get("metrics"), "target")
    status = hpa.get("status")
    if not isinstance(status, dict):
        status = hpa["status"] = {}
    status.setdefault("currentMetrics", None)
    status.setdefault("desiredReplicas", 0)
    _canonical_metrics(status.get("currentMetrics"), "current")


def prepare_hpa_for_create(hpa: dict) -> None:
    """Upstream C{autoscalerStrategy.PrepareForCreate}: an empty status (no generation)."""
    hpa["status"] = {"currentMetrics": None, "desiredReplicas": 0}


def prepare_hpa_for_update(new: dict, old: dict) -> None:
    """Upstream C{autoscalerStrategy.PrepareForUpdate}: keep the stored status."""
    new["status"] = copy.deepcopy(old.get("status") or {"currentMetrics": None,
                                                         "desiredReplicas": 0})


def prepare_hpa_status_for_update(new: dict, old: dict) -> None:
    """Upstream C{autoscalerStatusStrategy.PrepareForUpdate}: keep the stored spec."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})


# --- validation -------------------------------------------------------------------------------


def _path_segment_name(name: str) -> list[str]:
    """Upstream C{path.IsValidPathSegmentName}."""
    msgs: list[str] = []
    if name in (".", ".."):
        msgs.append(f"may not be '{name}'")
    msgs.extend(f"may not contain '{bad}'" for bad in ("/", "%") if bad in name)
    return msgs


def _validate_ref(ref: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateCrossVersionObjectReference}: C{kind} and C{name} path segments."""
    errs: list[FieldError] = []
    for key in ("kind", "name"):
        value = ref.get(key) or ""
        if not value:
            errs.append(required(path.child(key)))
        else:
            errs.extend(invalid(path.child(key), value, m) for m in _path_segment_name(value))
    return errs


def _positive(raw: Any) -> bool:
    try:
        return parse_quantity(raw).value > 0
    except QuantityError:
        return False


def _validate_target(target: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateMetricTarget}."""
    errs: list[FieldError] = []
    ttype = target.get("type") or ""
    if not ttype:
        errs.append(required(path.child("type"), "must specify a metric target type"))
    if ttype not in ("Utilization", "Value", "AverageValue"):
        errs.append(invalid(path.child("type"), ttype,
                            "must be either Utilization, Value, or AverageValue"))
    for key in ("value", "averageValue"):
        if target.get(key) is not None and not _positive(target[key]):
            errs.append(GoValueError("Invalid", path.child(key), str(target[key]),
                                     "must be positive"))
    util = target.get("averageUtilization")
    if util is not None and util < 1:
        errs.append(invalid(path.child("averageUtilization"), util, "must be greater than 0"))
    return errs


def _validate_identifier(ident: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateMetricIdentifier}."""
    name = ident.get("name") or ""
    if not name:
        return [required(path.child("name"), "must specify a metric name")]
    return [invalid(path.child("name"), name, m) for m in _path_segment_name(name)]


def _validate_source(kind: str, src: dict, path: Path) -> list[FieldError]:
    """Upstream C{validate{Object,External,Pods,Resource,ContainerResource}Source}."""
    errs: list[FieldError] = []
    target = _d(src.get("target"))
    tpath = path.child("target")
    if kind == "Object":
        errs.extend(_validate_ref(_d(src.get("describedObject")), path.child("describedObject")))
    if kind in ("Object", "External", "Pods"):
        errs.extend(_validate_identifier(_d(src.get("metric")), path.child("metric")))
    if kind in ("Resource", "ContainerResource"):
        name = src.get("name") or ""
        if not name:
            errs.append(required(path.child("name"), "must specify a resource name"))
        elif kind == "ContainerResource":
            errs.extend(_validate_container_resource_name(name, path.child("name")))
        if kind == "ContainerResource":
            container = src.get("container") or ""
            if not container:
                errs.append(required(path.child("container"), "must specify a container"))
            else:
                errs.extend(invalid(path.child("container"), container, m)
                            for m in is_dns1123_label(container))
    errs.extend(_validate_target(target, tpath))
    value, avg, util = target.get("value"), target.get("averageValue"), \
        target.get("averageUtilization")
    if kind == "Object" and value is None and avg is None:
        errs.append(required(tpath.child("averageValue"),
                             "must set either a target value or averageValue"))
    elif kind == "External":
        if value is None and avg is None:
            errs.append(required(tpath.child("averageValue"),
                                 "must set either a target value for metric or a per-pod target"))
        if value is not None and avg is not None:
            errs.append(forbidden(tpath.child("value"),
                                  "may not set both a target value for metric and a per-pod "
                                  "target"))
    elif kind == "Pods" and avg is None:
        errs.append(required(tpath.child("averageValue"),
                             "must specify a positive target averageValue"))
    elif kind in ("Resource", "ContainerResource"):
        if util is None and avg is None:
            errs.append(required(tpath.child("averageUtilization"),
                                 "must set either a target raw value or a target utilization"))
        if util is not None and avg is not None:
            errs.append(forbidden(tpath.child("averageValue"),
                                  "may not set both a target raw value and a target "
                                  "utilization"))
    return errs


def _validate_container_resource_name(name: str, path: Path) -> list[FieldError]:
    """Upstream C{ValidateContainerResourceName} (v1): a standard container resource name."""
    from kubetwist.apis.core.podspec_validation import _validate_container_resource_name

    return _validate_container_resource_name(name, path)


def _validate_metric(metric: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateMetricSpec}: a known type whose own source is set, and only it."""
    errs: list[FieldError] = []
    mtype = metric.get("type") or ""
    if not mtype:
        errs.append(required(path.child("type"), "must specify a metric source type"))
    if mtype not in _SOURCE_TYPES:
        errs.append(not_supported(path.child("type"), mtype, _SOURCE_TYPES))
    present: list[str] = []
    for kind, name in _SOURCE_FIELDS:
        if metric.get(name) is not None:
            present.append(name)
            if len(present) == 1:
                errs.extend(_validate_source(kind, _d(metric[name]), path.child(name)))
    expected = dict(_SOURCE_FIELDS).get(mtype)
    if expected is None:
        errs.append(not_supported(path.child("type"), mtype, _SOURCE_TYPES))
    elif metric.get(expected) is None:
        errs.append(required(path.child(expected),
                             "must populate information for the given metric source"))
    if len(present) != 1:
        errs.extend(forbidden(path.child(name), "must populate the given metric source only")
                    for name in sorted(present) if name != expected)
    return errs


def _validate_rules(rules: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateScalingRules} and C{validateScalingPolicy}."""
    errs: list[FieldError] = []
    window = rules.get("stabilizationWindowSeconds")
    if window is not None and window < 0:
        errs.append(invalid(path.child("stabilizationWindowSeconds"), window,
                            "must be greater than or equal to zero"))
    if window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        errs.append(invalid(path.child("stabilizationWindowSeconds"), window,
                            f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in _SELECT_POLICIES:
        errs.append(not_supported(path.child("selectPolicy"), select, _SELECT_POLICIES))
    policies = rules.get("policies") or []
    if not policies:
        errs.append(required(path.child("policies"), "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        policy = _d(policy)
        ppath = path.child("policies").index(i)
        ptype = policy.get("type") or ""
        if ptype not in _POLICY_TYPES:
            errs.append(not_supported(ppath.child("type"), ptype, _POLICY_TYPES))
        value = policy.get("value") or 0
        if value <= 0:
            errs.append(invalid(ppath.child("value"), value, "must be greater than zero"))
        period = policy.get("periodSeconds") or 0
        if period <= 0:
            errs.append(invalid(ppath.child("periodSeconds"), period,
                                "must be greater than zero"))
        if period > MAX_PERIOD_SECONDS:
            errs.append(invalid(ppath.child("periodSeconds"), period,
                                f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    return errs


def _validate_spec(spec: dict, path: Path, min_lower: int) -> list[FieldError]:
    """Upstream C{validateHorizontalPodAutoscalerSpec}."""
    errs: list[FieldError] = []
    min_r, max_r = spec.get("minReplicas"), spec.get("maxReplicas") or 0
    if min_r is not None and min_r < min_lower:
        errs.append(invalid(path.child("minReplicas"), min_r,
                            f"must be greater than or equal to {min_lower}"))
    if max_r < 1:
        errs.append(invalid(path.child("maxReplicas"), max_r, "must be greater than 0"))
    if min_r is not None and max_r < min_r:
        errs.append(invalid(path.child("maxReplicas"), max_r,
                            "must be greater than or equal to `minReplicas`"))
    errs.extend(_validate_ref(_d(spec.get("scaleTargetRef")), path.child("scaleTargetRef")))
    metrics = spec.get("metrics") or []
    for i, metric in enumerate(metrics):
        errs.extend(_validate_metric(_d(metric), path.child("metrics").index(i)))
    if min_r == 0 and not any(_d(m).get("type") in ("Object", "External") for m in metrics):
        errs.append(forbidden(path.child("metrics"), "must specify at least one Object or "
                                                     "External metric to support scaling to "
                                                     "zero replicas"))
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        for key in ("scaleUp", "scaleDown"):
            if isinstance(behavior.get(key), dict):
                errs.extend(_validate_rules(behavior[key], path.child("behavior", key)))
    return errs


def validate_hpa(hpa: dict) -> list[FieldError]:
    """Upstream C{ValidateHorizontalPodAutoscaler}: ObjectMeta (DNS subdomain) and the spec."""
    errs = validate_object_meta(_d(hpa.get("metadata")), True, name_is_dns_subdomain,
                                Path("metadata"))
    errs.extend(_validate_spec(_d(hpa.get("spec")), Path("spec"), 1))
    return errs


def validate_hpa_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateHorizontalPodAutoscalerUpdate}: metadata update rules and the spec
    (C{minReplicas} 0 allowed only when the stored object already had it).
    """
    errs = validate_object_meta_update(_d(new.get("metadata")), _d(old.get("metadata")),
                                       Path("metadata"))
    lower = 0 if _d(old.get("spec")).get("minReplicas") == 0 else 1
    errs.extend(_validate_spec(_d(new.get("spec")), Path("spec"), lower))
    return errs


def validate_hpa_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateHorizontalPodAutoscalerStatusUpdate}: replica counts non-negative."""
    errs = validate_object_meta_update(_d(new.get("metadata")), _d(old.get("metadata")),
                                       Path("metadata"))
    status = _d(new.get("status"))
    for key in ("currentReplicas", "desiredReplicas"):
        errs.extend(validate_nonnegative(status.get(key) or 0, Path("status", key)))
    return errs
