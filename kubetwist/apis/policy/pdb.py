# -*- test-case-name: tests.apis.test_policy -*-
"""
policy/v1 PodDisruptionBudgets: validation (upstream C{pkg/apis/policy/validation}:
C{ValidatePodDisruptionBudget}, C{ValidatePodDisruptionBudgetSpec},
C{ValidatePodDisruptionBudgetStatusUpdate}), the registry strategy
(C{pkg/registry/policy/poddisruptionbudget/strategy.go}: status reset, generation) and the
generic ObjectMeta checks C{rest.BeforeCreate}/C{BeforeUpdate} run after the strategy's.

policy/v1 has no defaulting: C{unhealthyPodEvictionPolicy} stays unset unless given (the
C{PDBUnhealthyPodEvictionPolicy} feature is GA in v1.31, so the field is kept).
"""

from __future__ import annotations

import copy
from typing import Any

from kubetwist.apimachinery.validation import (
    validate_conditions,
    validate_label_selector,
    validate_nonnegative,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.apps.validation import (
    _not_more_than_100_percent,
    _validate_positive_int_or_percent,
)
from kubetwist.apis.core.podspec_validation import GoValueError
from kubetwist.runtime.field import FieldError, Path, not_supported

__all__ = [
    "default_pdb",
    "prepare_pdb_for_create",
    "prepare_pdb_for_update",
    "prepare_pdb_status_for_update",
    "validate_pdb",
    "validate_pdb_status_update",
    "validate_pdb_update",
]

_EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]
#: The four C{PodDisruptionBudgetStatus} counters Go always prints.
_STATUS_COUNTERS = ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")


def _d(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


def _path_segment_name(name: str, prefix: bool) -> list[str]:
    """Upstream C{path.ValidatePathSegmentName}, the generic Store's name rule."""
    msgs: list[str] = []
    if not prefix and name in (".", ".."):
        msgs.append(f"may not be '{name}'")
    msgs.extend(f"may not contain '{bad}'" for bad in ("/", "%") if bad in name)
    return msgs


def default_pdb(pdb: dict) -> None:
    """No upstream defaults; a Go round trip prints C{spec} and the four status counters."""
    if not isinstance(pdb.get("spec"), dict):
        pdb["spec"] = {}
    status = pdb.get("status")
    if not isinstance(status, dict):
        status = pdb["status"] = {}
    for key in _STATUS_COUNTERS:
        status.setdefault(key, 0)


def prepare_pdb_for_create(pdb: dict) -> None:
    """Upstream C{podDisruptionBudgetStrategy.PrepareForCreate}: empty status, generation 1."""
    pdb["status"] = {key: 0 for key in _STATUS_COUNTERS}
    _meta(pdb)["generation"] = 1


def prepare_pdb_for_update(new: dict, old: dict) -> None:
    """Upstream C{PrepareForUpdate}: keep the status; generation + 1 on a spec change."""
    new["status"] = copy.deepcopy(old.get("status") or {k: 0 for k in _STATUS_COUNTERS})
    gen = _d(old.get("metadata")).get("generation") or 0
    _meta(new)["generation"] = gen + 1 if new.get("spec") != old.get("spec") else gen


def prepare_pdb_status_for_update(new: dict, old: dict) -> None:
    """Upstream C{podDisruptionBudgetStatusStrategy.PrepareForUpdate}: keep the stored spec."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})


def _go_spec(spec: dict) -> str:
    """The C{%#v} text of a PDB spec (pointer fields print as their Go type and C{nil}/set)."""
    def ptr(key: str, typ: str) -> str:
        return f"({typ})(nil)" if spec.get(key) is None else f"({typ})({spec[key]!r})"
    return ("policy.PodDisruptionBudgetSpec{MinAvailable:"
            + ptr("minAvailable", "*intstr.IntOrString")
            + ", Selector:" + ptr("selector", "*v1.LabelSelector")
            + ", MaxUnavailable:" + ptr("maxUnavailable", "*intstr.IntOrString")
            + ", UnhealthyPodEvictionPolicy:"
            + ptr("unhealthyPodEvictionPolicy", "*policy.UnhealthyPodEvictionPolicyType") + "}")


def _validate_spec(spec: dict, path: Path, allow_invalid: bool) -> list[FieldError]:
    """Upstream C{ValidatePodDisruptionBudgetSpec}."""
    errs: list[FieldError] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(GoValueError("Invalid", path, _go_spec(spec),
                                 "minAvailable and maxUnavailable cannot be both set"))
    for key in ("minAvailable", "maxUnavailable"):
        if spec.get(key) is not None:
            errs.extend(_validate_positive_int_or_percent(spec[key], path.child(key)))
            errs.extend(_not_more_than_100_percent(spec[key], path.child(key)))
    if spec.get("selector") is not None:
        errs.extend(validate_label_selector(spec["selector"], path.child("selector"),
                                            allow_invalid))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in _EVICTION_POLICIES:
        errs.append(not_supported(path.child("unhealthyPodEvictionPolicy"), policy,
                                  _EVICTION_POLICIES))
    return errs


def validate_pdb(pdb: dict) -> list[FieldError]:
    """
    Upstream C{ValidatePodDisruptionBudget} (the spec only), then, when it passes, the generic
    ObjectMeta checks (names as path segments).
    """
    errs = _validate_spec(_d(pdb.get("spec")), Path("spec"), False)
    if errs:
        return errs
    return validate_object_meta(_d(pdb.get("metadata")), True, _path_segment_name,
                                Path("metadata"))


def validate_pdb_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{podDisruptionBudgetStrategy.ValidateUpdate}: the spec (tolerating invalid
    selector label values the stored object already had), then the metadata update rules.
    """
    osel = _d(old.get("spec")).get("selector")
    allow = osel is not None and bool(validate_label_selector(osel, Path("x")))
    errs = _validate_spec(_d(new.get("spec")), Path("spec"), allow)
    if errs:
        return errs
    return validate_object_meta_update(_d(new.get("metadata")), _d(old.get("metadata")),
                                       Path("metadata"))


def validate_pdb_status_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidatePodDisruptionBudgetStatusUpdate} (v1): conditions, the four counters
    non-negative; then the metadata update rules.
    """
    status = _d(new.get("status"))
    path = Path("status")
    errs = validate_conditions(status.get("conditions"), path.child("conditions"))
    for key in _STATUS_COUNTERS:
        errs.extend(validate_nonnegative(status.get(key) or 0, path.child(key)))
    if errs:
        return errs
    return validate_object_meta_update(_d(new.get("metadata")), _d(old.get("metadata")),
                                       Path("metadata"))
