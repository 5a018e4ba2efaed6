# -*- test-case-name: tests.apis.test_core_replicationcontrollers -*-
"""
ReplicationControllers: upstream C{pkg/apis/core/v1/defaults.go}
(C{SetDefaults_ReplicationController}), C{pkg/apis/core/validation}
(C{ValidateReplicationController*}, C{ValidatePodTemplateSpecForRC}) and
C{pkg/registry/core/replicationcontroller/strategy.go}.

The selector of a ReplicationController is a plain label map (C{{"app": "web"}}), not a
C{LabelSelector}; the C{scale} subresource prints it as C{labels.SelectorFromSet(...).String()}.
"""

from __future__ import annotations

import copy

from kubetwist.apimachinery.validation import (
    name_is_dns_subdomain,
    validate_nonnegative,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core import pod_warnings
from kubetwist.apis.core.podspec_defaults import default_pod_template_spec
from kubetwist.apis.core.podspec_validation import (
    GoValueError,
    go_string_map,
    validate_pod_template_spec,
)
from kubetwist.apis.core.printers import REPLICATIONCONTROLLER_TABLE
from kubetwist.registry.rest import Strategy
from kubetwist.runtime.field import (
    FieldError,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)

__all__ = [
    "REPLICATIONCONTROLLER_STATUS_STRATEGY",
    "REPLICATIONCONTROLLER_STRATEGY",
    "default_replication_controller",
    "rc_field_attrs",
    "rc_scale_selector",
    "validate_replication_controller",
    "validate_replication_controller_status_update",
    "validate_replication_controller_update",
]


def _spec(obj: dict) -> dict:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


def default_replication_controller(obj: dict) -> None:
    """
    Upstream C{SetDefaults_ReplicationController} and the generated walk: when the template
    has labels, an empty C{spec.selector} and empty C{metadata.labels} take them;
    C{spec.replicas} defaults to 1 (declarative C{+default=1}); the template is defaulted as
    every pod template (L{default_pod_template_spec}).
    """
    spec = _spec(obj)
    tpl = spec.get("template")
    labels = (tpl.get("metadata") or {}).get("labels") if isinstance(tpl, dict) else None
    if labels is not None:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = obj["metadata"] = {}
        if not meta.get("labels"):
            meta["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if not spec.get("minReadySeconds"):
        spec.pop("minReadySeconds", None)
    if isinstance(tpl, dict):
        default_pod_template_spec(tpl)


def _selector_matches(selector: dict, labels: dict | None) -> bool:
    labels = labels or {}
    return all(k in labels and labels[k] == v for k, v in selector.items())


def _validate_template_for_rc(tpl: dict | None, selector: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidatePodTemplateSpecForRC}."""
    if not isinstance(tpl, dict):
        return [required(path)]
    errs: list[FieldError] = []
    labels = (tpl.get("metadata") or {}).get("labels")
    if selector and not _selector_matches(selector, labels):
        errs.append(GoValueError("Invalid", path.child("metadata", "labels"), go_string_map(labels),
                                 "`selector` does not match template `labels`"))
    errs.extend(validate_pod_template_spec(tpl, path))
    spec = tpl.get("spec") or {}
    policy = spec.get("restartPolicy") or ""
    if policy != "Always":
        errs.append(not_supported(path.child("spec", "restartPolicy"), policy, ["Always"]))
    if spec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden(path.child("spec", "activeDeadlineSeconds"),
                              "activeDeadlineSeconds in ReplicationController is not Supported"))
    return errs


def _validate_spec(spec: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateReplicationControllerSpec}."""
    errs = validate_nonnegative(spec.get("minReadySeconds") or 0, path.child("minReadySeconds"))
    selector = spec.get("selector") or {}
    if not selector:
        errs.append(required(path.child("selector")))
    errs.extend(validate_nonnegative(spec.get("replicas") or 0, path.child("replicas")))
    errs.extend(_validate_template_for_rc(spec.get("template"), selector, path.child("template")))
    return errs


def validate_replication_controller(obj: dict) -> list[FieldError]:
    """
    Upstream C{ValidateReplicationController}: ObjectMeta (namespaced, DNS subdomain name),
    C{minReadySeconds} and C{replicas} non-negative, a non-empty selector (C{spec.selector:
    Required value}), a template whose labels the selector matches, C{restartPolicy: Always}
    and no C{activeDeadlineSeconds}.
    """
    errs = validate_object_meta(obj.get("metadata") or {}, True, name_is_dns_subdomain,
                                Path("metadata"))
    errs.extend(_validate_spec(obj.get("spec") or {}, Path("spec")))
    return errs


def validate_replication_controller_update(new: dict, old: dict) -> list[FieldError]:
    """
    The RC strategy's C{ValidateUpdate}: upstream runs both C{ValidateReplicationController}
    and C{ValidateReplicationControllerUpdate} (ObjectMeta update rules, then the spec again).
    """
    errs = validate_replication_controller(new)
    errs.extend(validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                            Path("metadata")))
    errs.extend(_validate_spec(new.get("spec") or {}, Path("spec")))
    return errs


def validate_replication_controller_status_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateReplicationControllerStatusUpdate}: counters non-negative, none above
    C{status.replicas}, C{availableReplicas} at most C{readyReplicas}.
    """
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    status = new.get("status") or {}
    path = Path("status")
    for name in ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
                 "observedGeneration"):
        errs.extend(validate_nonnegative(status.get(name) or 0, path.child(name)))
    replicas = status.get("replicas") or 0
    msg = "cannot be greater than status.replicas"
    for name in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        if (status.get(name) or 0) > replicas:
            errs.append(invalid(path.child(name), status.get(name) or 0, msg))
    if (status.get("availableReplicas") or 0) > (status.get("readyReplicas") or 0):
        errs.append(invalid(path.child("availableReplicas"), status.get("availableReplicas") or 0,
                            "cannot be greater than readyReplicas"))
    return errs


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


def _status_wire_form(status: dict | None) -> dict:
    """C{status} as written back: C{replicas} has no C{omitempty}."""
    status = dict(status or {})
    out = {"replicas": status.pop("replicas", 0) or 0}
    out.update(status)
    return out


def prepare_rc_for_create(obj: dict) -> None:
    """Upstream C{rcStrategy.PrepareForCreate}: empty status, generation 1."""
    obj["status"] = _status_wire_form({})
    _meta(obj)["generation"] = 1


def prepare_rc_for_update(new: dict, old: dict) -> None:
    """Upstream C{rcStrategy.PrepareForUpdate}: keep the stored status; bump the generation
    when the spec changed."""
    new["status"] = copy.deepcopy(old.get("status") or _status_wire_form({}))
    gen = (old.get("metadata") or {}).get("generation") or 0
    if (new.get("spec") or {}) != (old.get("spec") or {}):
        gen += 1
    _meta(new)["generation"] = gen


def prepare_rc_status_for_update(new: dict, old: dict) -> None:
    """Upstream C{rcStatusStrategy.PrepareForUpdate}: keep the stored spec."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})
    new["status"] = _status_wire_form(new.get("status"))


def rc_field_attrs(obj: dict) -> dict[str, str]:
    """Upstream C{ControllerToSelectableFields}: C{status.replicas}."""
    return {"status.replicas": str((obj.get("status") or {}).get("replicas") or 0)}


def rc_scale_selector(obj: dict) -> str:
    """C{labels.SelectorFromSet(spec.selector).String()}: C{a=b,c=d}, keys sorted."""
    selector = (obj.get("spec") or {}).get("selector") or {}
    return ",".join(f"{k}={selector[k]}" for k in sorted(selector))


REPLICATIONCONTROLLER_STRATEGY = Strategy(
    kind="ReplicationController",
    default=default_replication_controller,
    prepare_for_create=prepare_rc_for_create,
    prepare_for_update=prepare_rc_for_update,
    validate=validate_replication_controller,
    validate_update=validate_replication_controller_update,
    field_attrs=rc_field_attrs,
    table=REPLICATIONCONTROLLER_TABLE,
    scale_selector=rc_scale_selector,
    warnings=pod_warnings.replication_controller_warnings,
)

REPLICATIONCONTROLLER_STATUS_STRATEGY = Strategy(
    kind="ReplicationController",
    default=default_replication_controller,
    prepare_for_create=prepare_rc_for_create,
    prepare_for_update=prepare_rc_status_for_update,
    validate=validate_replication_controller,
    validate_update=validate_replication_controller_status_update,
    field_attrs=rc_field_attrs,
    table=REPLICATIONCONTROLLER_TABLE,
    scale_selector=rc_scale_selector,
)
