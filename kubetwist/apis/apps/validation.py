# -*- test-case-name: tests.apis.test_apps -*-
"""
Validation of the apps/v1 workloads: upstream C{k8s.io/kubernetes/pkg/apis/apps/validation}
(Deployments, ReplicaSets, StatefulSets, DaemonSets, ControllerRevisions; spec, update and
status rules) and the selector immutability the apps registry strategies add for apps/v1.

Bad values that are Go maps or structs are printed as Go's C{%#v} prints them
(C{map[string]string{"app":"web"}}), as kube-apiserver's messages show them.
"""

from __future__ import annotations

from typing import Any

from kubetwist.apimachinery.validation import (
    is_valid_percent,
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_annotations,
    validate_label_selector,
    validate_labels,
    validate_nonnegative,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.podspec_validation import (
    GoValueError,
    go_string_map,
    validate_pod_specific_annotations,
    validate_pod_template_spec,
)
from kubetwist.runtime import gofmt
from kubetwist.runtime.field import (
    FieldError,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)

__all__ = [
    "validate_deployment",
    "validate_deployment_update",
    "validate_deployment_status_update",
    "validate_replica_set",
    "validate_replica_set_update",
    "validate_replica_set_status_update",
    "validate_stateful_set",
    "validate_stateful_set_update",
    "validate_stateful_set_status_update",
    "validate_daemon_set",
    "validate_daemon_set_update",
    "validate_daemon_set_status_update",
    "validate_controller_revision",
    "validate_controller_revision_update",
    "selector_matches",
    "go_label_selector",
]

_SELECTOR_MISMATCH = "`selector` does not match template `labels`"


# --------------------------------------------------------------------------------------------
# label selectors (metav1.LabelSelectorAsSelector semantics)


class _SelectorError(ValueError):
    pass


def _compile_selector(sel: dict | None) -> list[tuple[str, str, list[str]]] | None:
    """
    The requirements of a C{metav1.LabelSelector}, or None for the C{Nothing} selector
    (a nil selector).  Raises L{_SelectorError} where upstream's conversion fails.
    """
    if sel is None:
        return None
    reqs: list[tuple[str, str, list[str]]] = []
    for k in sorted(sel.get("matchLabels") or {}):
        reqs.append((k, "In", [sel["matchLabels"][k]]))
    for e in sel.get("matchExpressions") or []:
        e = e or {}
        op, values = e.get("operator") or "", list(e.get("values") or [])
        if op in ("In", "NotIn"):
            if not values:
                raise _SelectorError("for 'in', 'notin' operators, values set can't be empty")
        elif op in ("Exists", "DoesNotExist"):
            if values:
                raise _SelectorError("values set must be empty for exists and does not exist")
        else:
            raise _SelectorError(f'"{op}" is not a valid label selector operator')
        reqs.append((e.get("key") or "", op, values))
    return reqs


def selector_matches(sel: dict | None, labels: dict | None) -> bool:
    """Whether the C{metav1.LabelSelector} dict C{sel} selects C{labels} (nil selects nothing)."""
    try:
        from kubetwist.apimachinery.selectors import label_selector_from_dict
    except ImportError:  # pragma: no cover - before the shared selector module lands
        label_selector_from_dict = None
    if label_selector_from_dict is not None and sel is not None:
        return label_selector_from_dict(sel).matches(labels or {})
    reqs = _compile_selector(sel)
    if reqs is None:
        return False
    labels = labels or {}
    for key, op, values in reqs:
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


_go_quote = gofmt.quote


def go_label_selector(sel: dict | None) -> str:
    """Go's C{%#v} of a C{v1.LabelSelector} (how ImmutableField errors print a selector)."""
    if sel is None:
        return "null"
    ml = sel.get("matchLabels")
    exprs = sel.get("matchExpressions")
    if exprs is None:
        me = "[]v1.LabelSelectorRequirement(nil)"
    else:
        items = []
        for e in exprs:
            vals = e.get("values")
            vs = ("[]string(nil)" if vals is None
                  else "[]string{" + ", ".join(_go_quote(v) for v in vals) + "}")
            items.append(f'v1.LabelSelectorRequirement{{Key:{_go_quote(e.get("key", ""))}, '
                         f'Operator:{_go_quote(e.get("operator", ""))}, Values:{vs}}}')
        me = "[]v1.LabelSelectorRequirement{" + ", ".join(items) + "}"
    return f"v1.LabelSelector{{MatchLabels:{go_string_map(ml)}, MatchExpressions:{me}}}"


def _immutable_selector(new: dict, old: dict) -> list[FieldError]:
    ns, os_ = (new.get("spec") or {}).get("selector"), (old.get("spec") or {}).get("selector")
    if ns == os_:
        return []
    return [GoValueError("Invalid", Path("spec", "selector"), go_label_selector(ns),
                         "field is immutable")]


def _validate_selector(spec: dict, path: Path, kind: str,
                       strict_required: bool = True) -> tuple[bool, list[FieldError]]:
    """Selector checks shared by the controllers; returns (selector usable, errors)."""
    errs: list[FieldError] = []
    sel = spec.get("selector")
    if sel is None:
        if strict_required:
            errs.append(required(path.child("selector")))
    else:
        errs.extend(validate_label_selector(sel, path.child("selector")))
        if len(sel.get("matchLabels") or {}) + len(sel.get("matchExpressions") or []) == 0:
            errs.append(GoValueError("Invalid", path.child("selector"), go_label_selector(sel),
                                     f"empty selector is invalid for {kind}"))
    return sel is not None, errs


def _template_labels_error(tpl_path: Path, labels: dict | None) -> FieldError:
    return GoValueError("Invalid", tpl_path.child("metadata", "labels"), go_string_map(labels),
                        _SELECTOR_MISMATCH)


# --------------------------------------------------------------------------------------------
# int-or-percent


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _validate_positive_int_or_percent(v: Any, path: Path) -> list[FieldError]:
    if isinstance(v, str):
        return [invalid(path, v, m) for m in is_valid_percent(v)]
    if _is_int(v):
        return validate_nonnegative(v, path)
    return [invalid(path, v, "must be an integer or percentage (e.g '5%%')")]


def _percent_value(v: Any) -> int | None:
    if isinstance(v, str) and not is_valid_percent(v):
        return int(v[:-1])
    return None


def _int_or_percent_value(v: Any) -> int:
    p = _percent_value(v)
    if p is not None:
        return p
    if _is_int(v):
        return v
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            return 0
    return 0


def _not_more_than_100_percent(v: Any, path: Path) -> list[FieldError]:
    p = _percent_value(v)
    if p is None or p <= 100:
        return []
    return [invalid(path, v, "must not be greater than 100%")]


# --------------------------------------------------------------------------------------------
# templates


def _validate_template_for_replica_set(tpl: dict | None, sel: dict, sel_ok: bool, path: Path,
                                       kind: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if tpl is None:
        return [required(path)]
    labels = (tpl.get("metadata") or {}).get("labels")
    reqs = _compile_selector(sel) if sel_ok else []
    if sel is None or (reqs and not selector_matches(sel, labels)):
        # a nil selector is labels.Nothing(): not Empty, matches no labels (upstream
        # ValidatePodTemplateSpecForReplicaSet; tests/vectors/apps.jsonl deploy-create-no-selector)
        errs.append(_template_labels_error(path, labels))
    errs.extend(validate_pod_template_spec(tpl, path))
    spec = tpl.get("spec") or {}
    rp = spec.get("restartPolicy") or ""
    if rp != "Always":
        errs.append(not_supported(path.child("spec", "restartPolicy"), rp, ["Always"]))
    if spec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden(path.child("spec", "activeDeadlineSeconds"),
                              f"activeDeadlineSeconds in {kind} is not Supported"))
    return errs


def _selector_and_template(spec: dict, path: Path, kind: str, empty_kind: str) -> list[FieldError]:
    sel_present, errs = _validate_selector(spec, path, empty_kind)
    sel = spec.get("selector")
    try:
        _compile_selector(sel)
    except _SelectorError:
        errs.append(GoValueError("Invalid", path.child("selector"), go_label_selector(sel),
                                 "invalid label selector"))
        return errs
    errs.extend(_validate_template_for_replica_set(spec.get("template"), sel, sel is not None,
                                                   path.child("template"), kind))
    return errs


# --------------------------------------------------------------------------------------------
# Deployment


def validate_deployment_spec(spec: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateDeploymentSpec}."""
    errs = validate_nonnegative(spec.get("replicas") or 0, path.child("replicas"))
    errs.extend(_selector_and_template(spec, path, "ReplicaSet", "deployment"))
    strategy = spec.get("strategy") or {}
    sp = path.child("strategy")
    st = strategy.get("type") or ""
    if st == "Recreate":
        if strategy.get("rollingUpdate") is not None:
            errs.append(forbidden(sp.child("rollingUpdate"),
                                  "may not be specified when strategy `type` is 'Recreate'"))
    elif st == "RollingUpdate":
        ru = strategy.get("rollingUpdate")
        if ru is None:
            errs.append(required(sp.child("rollingUpdate"),
                                 "this should be defaulted and never be nil"))
        else:
            rp = sp.child("rollingUpdate")
            mu, ms = ru.get("maxUnavailable", 0), ru.get("maxSurge", 0)
            errs.extend(_validate_positive_int_or_percent(mu, rp.child("maxUnavailable")))
            errs.extend(_validate_positive_int_or_percent(ms, rp.child("maxSurge")))
            if _int_or_percent_value(mu) == 0 and _int_or_percent_value(ms) == 0:
                errs.append(invalid(rp.child("maxUnavailable"), mu,
                                    "may not be 0 when `maxSurge` is 0"))
            errs.extend(_not_more_than_100_percent(mu, rp.child("maxUnavailable")))
    else:
        errs.append(GoValueError("NotSupported", sp, "apps.DeploymentStrategy{Type:"
                                 + _go_quote(st) + "}",
                                 'supported values: "Recreate", "RollingUpdate"'))
    errs.extend(validate_nonnegative(spec.get("minReadySeconds") or 0,
                                     path.child("minReadySeconds")))
    if spec.get("revisionHistoryLimit") is not None:
        errs.extend(validate_nonnegative(spec["revisionHistoryLimit"],
                                         path.child("revisionHistoryLimit")))
    pds = spec.get("progressDeadlineSeconds")
    if pds is not None:
        errs.extend(validate_nonnegative(pds, path.child("progressDeadlineSeconds")))
        if pds <= (spec.get("minReadySeconds") or 0):
            errs.append(invalid(path.child("progressDeadlineSeconds"), pds,
                                "must be greater than minReadySeconds"))
    return errs


def validate_deployment(obj: dict) -> list[FieldError]:
    """Upstream C{ValidateDeployment}: metadata (DNS-1123 subdomain name) and spec."""
    errs = validate_object_meta(obj.get("metadata") or {}, True, name_is_dns_subdomain,
                                Path("metadata"))
    errs.extend(validate_deployment_spec(obj.get("spec") or {}, Path("spec")))
    return errs


def validate_deployment_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateDeploymentUpdate} plus the apps/v1 immutable C{spec.selector}."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    errs.extend(validate_deployment_spec(new.get("spec") or {}, Path("spec")))
    errs.extend(_immutable_selector(new, old))
    return errs


def _status_counts(status: dict, path: Path, names: list[str],
                   gt: list[tuple[str, str, str]]) -> list[FieldError]:
    errs: list[FieldError] = []
    for n in names:
        if status.get(n) is not None:
            errs.extend(validate_nonnegative(status[n], path.child(n)))
    for small, big, msg in gt:
        if (status.get(small) or 0) > (status.get(big) or 0):
            errs.append(invalid(path.child(small), status.get(small) or 0, msg))
    return errs


def _collision_decremented(new: dict, old: dict) -> list[FieldError]:
    n = (new.get("status") or {}).get("collisionCount")
    o = (old.get("status") or {}).get("collisionCount")
    if o is not None and (n is None or n < o):
        return [invalid(Path("status", "collisionCount"), n or 0, "cannot be decremented")]
    return []


def validate_deployment_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateDeploymentStatusUpdate}."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    msg = "cannot be greater than status.replicas"
    errs.extend(_status_counts(new.get("status") or {}, Path("status"),
                               ["observedGeneration", "replicas", "updatedReplicas",
                                "readyReplicas",
                                "availableReplicas", "unavailableReplicas", "collisionCount"],
                               [("updatedReplicas", "replicas", msg),
                                ("readyReplicas", "replicas", msg),
                                ("availableReplicas", "replicas", msg),
                                ("availableReplicas", "readyReplicas",
                                 "cannot be greater than readyReplicas")]))
    errs.extend(_collision_decremented(new, old))
    return errs


# --------------------------------------------------------------------------------------------
# ReplicaSet


def validate_replica_set_spec(spec: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateReplicaSetSpec}."""
    errs = validate_nonnegative(spec.get("replicas") or 0, path.child("replicas"))
    errs.extend(validate_nonnegative(spec.get("minReadySeconds") or 0,
                                     path.child("minReadySeconds")))
    errs.extend(_selector_and_template(spec, path, "ReplicaSet", "deployment"))
    return errs


def validate_replica_set(obj: dict) -> list[FieldError]:
    """Upstream C{ValidateReplicaSet}."""
    errs = validate_object_meta(obj.get("metadata") or {}, True, name_is_dns_subdomain,
                                Path("metadata"))
    errs.extend(validate_replica_set_spec(obj.get("spec") or {}, Path("spec")))
    return errs


def validate_replica_set_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateReplicaSetUpdate} plus the apps/v1 immutable C{spec.selector}."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    errs.extend(validate_replica_set_spec(new.get("spec") or {}, Path("spec")))
    errs.extend(_immutable_selector(new, old))
    return errs


def validate_replica_set_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateReplicaSetStatusUpdate}."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    msg = "cannot be greater than status.replicas"
    errs.extend(_status_counts(new.get("status") or {}, Path("status"),
                               ["replicas", "fullyLabeledReplicas", "readyReplicas",
                                "availableReplicas",
                                "observedGeneration"],
                               [("fullyLabeledReplicas", "replicas", msg),
                                ("readyReplicas", "replicas", msg),
                                ("availableReplicas", "replicas", msg),
                                ("availableReplicas", "readyReplicas",
                                 "cannot be greater than readyReplicas")]))
    return errs


# --------------------------------------------------------------------------------------------
# StatefulSet


def validate_stateful_set_spec(spec: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateStatefulSetSpec} (the pod spec itself is not validated, as upstream)."""
    errs: list[FieldError] = []
    pmp = spec.get("podManagementPolicy") or ""
    if not pmp:
        errs.append(required(path.child("podManagementPolicy")))
    elif pmp not in ("OrderedReady", "Parallel"):
        errs.append(invalid(path.child("podManagementPolicy"), pmp,
                            "must be 'OrderedReady' or 'Parallel'"))
    us = spec.get("updateStrategy") or {}
    ut = us.get("type") or ""
    up = path.child("updateStrategy")
    if not ut:
        errs.append(required(up))
    elif ut == "OnDelete":
        if us.get("rollingUpdate") is not None:
            errs.append(invalid(up.child("rollingUpdate"), us["rollingUpdate"],
                                "only allowed for updateStrategy 'RollingUpdate'"))
    elif ut == "RollingUpdate":
        ru = us.get("rollingUpdate")
        if isinstance(ru, dict):
            rp = up.child("rollingUpdate")
            errs.extend(validate_nonnegative(ru.get("partition") or 0, rp.child("partition")))
            mu = ru.get("maxUnavailable")
            if mu is not None:
                errs.extend(_validate_positive_int_or_percent(mu, rp.child("maxUnavailable")))
                if _int_or_percent_value(mu) == 0:
                    errs.append(invalid(rp.child("maxUnavailable"), mu, "cannot be 0"))
                errs.extend(_not_more_than_100_percent(mu, rp.child("maxUnavailable")))
    else:
        errs.append(invalid(up, us, "must be 'RollingUpdate' or 'OnDelete'"))
    policy = spec.get("persistentVolumeClaimRetentionPolicy")
    if isinstance(policy, dict):
        pp = path.child("persistentVolumeClaimRetentionPolicy")
        for key in ("whenDeleted", "whenScaled"):
            if policy.get(key) not in ("Retain", "Delete"):
                errs.append(not_supported(pp.child(key), policy.get(key) or "",
                                          ["Retain", "Delete"]))
    errs.extend(validate_nonnegative(spec.get("replicas") or 0, path.child("replicas")))
    errs.extend(validate_nonnegative(spec.get("minReadySeconds") or 0,
                                     path.child("minReadySeconds")))
    if isinstance(spec.get("ordinals"), dict):
        errs.extend(validate_nonnegative(spec["ordinals"].get("start") or 0,
                                         path.child("ordinals.start")))
    _, serrs = _validate_selector(spec, path, "statefulset")
    errs.extend(serrs)
    sel = spec.get("selector")
    tpl = spec.get("template") or {}
    try:
        reqs = _compile_selector(sel)
    except _SelectorError:
        errs.append(GoValueError("Invalid", path.child("selector"), go_label_selector(sel), ""))
    else:
        tp = path.child("template")
        meta = tpl.get("metadata") or {}
        if sel is None or (reqs and not selector_matches(sel, meta.get("labels"))):
            errs.append(_template_labels_error(tp, meta.get("labels")))
        errs.extend(validate_labels(meta.get("labels"), tp.child("labels")))
        errs.extend(validate_annotations(meta.get("annotations"), tp.child("annotations")))
        errs.extend(validate_pod_specific_annotations(meta.get("annotations"), tpl.get("spec")
                                                      or {},
                                                      tp.child("annotations")))
    tspec = tpl.get("spec") or {}
    rp = tspec.get("restartPolicy") or ""
    if rp != "Always":
        errs.append(not_supported(path.child("template", "spec", "restartPolicy"), rp, ["Always"]))
    if tspec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden(path.child("template", "spec", "activeDeadlineSeconds"),
                              "activeDeadlineSeconds in StatefulSet is not Supported"))
    return errs


def validate_stateful_set(obj: dict) -> list[FieldError]:
    """Upstream C{ValidateStatefulSet}: the name must be a DNS-1123 label."""
    errs = validate_object_meta(obj.get("metadata") or {}, True, name_is_dns_label,
                                Path("metadata"))
    errs.extend(validate_stateful_set_spec(obj.get("spec") or {}, Path("spec")))
    return errs


_STS_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy",
                "persistentVolumeClaimRetentionPolicy", "minReadySeconds")


def validate_stateful_set_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateStatefulSetUpdate}: only C{replicas}, C{ordinals}, C{template},
    C{updateStrategy}, C{persistentVolumeClaimRetentionPolicy} and C{minReadySeconds} may change.
    """
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    errs.extend(validate_stateful_set_spec(new.get("spec") or {}, Path("spec")))
    ns = {k: v for k, v in (new.get("spec") or {}).items() if k not in _STS_MUTABLE}
    os_ = {k: v for k, v in (old.get("spec") or {}).items() if k not in _STS_MUTABLE}
    if ns != os_:
        errs.append(forbidden(Path("spec"), "updates to statefulset spec for fields other than "
                                            "'replicas', "
                                            "'ordinals', 'template', 'updateStrategy', "
                                            "'persistentVolumeClaimRetentionPolicy' and "
                                            "'minReadySeconds' are forbidden"))
    return errs


def validate_stateful_set_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateStatefulSetStatusUpdate}."""
    msg = "cannot be greater than status.replicas"
    errs = _status_counts(new.get("status") or {}, Path("status"),
                          ["replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
                           "availableReplicas", "observedGeneration", "collisionCount"],
                          [("readyReplicas", "replicas", msg), ("currentReplicas", "replicas", msg),
                           ("updatedReplicas", "replicas", msg),
                           ("availableReplicas", "replicas", msg),
                           ("availableReplicas", "readyReplicas",
                            "cannot be greater than status.readyReplicas")])
    errs.extend(validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                            Path("metadata")))
    errs.extend(_collision_decremented(new, old))
    return errs


# --------------------------------------------------------------------------------------------
# DaemonSet


def _template_generation(obj: dict) -> int:
    from kubetwist.apis.apps.defaults import DAEMONSET_TEMPLATE_GENERATION_ANNOTATION

    value = ((obj.get("metadata") or {}).get("annotations")
             or {}).get(DAEMONSET_TEMPLATE_GENERATION_ANNOTATION)
    try:
        return int(value) if value is not None else 0
    except ValueError:
        return 0


def validate_daemon_set_spec(spec: dict, path: Path,
                             template_generation: int = 0) -> list[FieldError]:
    """Upstream C{ValidateDaemonSetSpec}."""
    sel = spec.get("selector")
    errs = validate_label_selector(sel, path.child("selector"))
    tpl = spec.get("template") or {}
    labels = (tpl.get("metadata") or {}).get("labels")
    try:
        _compile_selector(sel)
    except _SelectorError:
        pass
    else:
        if sel is None or not selector_matches(sel, labels):
            errs.append(_template_labels_error(path.child("template"), labels))
    if sel is not None and len(sel.get("matchLabels")
                               or {}) + len(sel.get("matchExpressions") or []) == 0:
        errs.append(GoValueError("Invalid", path.child("selector"), go_label_selector(sel),
                                 "empty selector is invalid for daemonset"))
    errs.extend(validate_pod_template_spec(tpl, path.child("template")))
    tspec = tpl.get("spec") or {}
    rp = tspec.get("restartPolicy") or ""
    if rp != "Always":
        errs.append(not_supported(path.child("template", "spec", "restartPolicy"), rp, ["Always"]))
    if tspec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden(path.child("template", "spec", "activeDeadlineSeconds"),
                              "activeDeadlineSeconds in DaemonSet is not Supported"))
    errs.extend(validate_nonnegative(spec.get("minReadySeconds") or 0,
                                     path.child("minReadySeconds")))
    errs.extend(validate_nonnegative(template_generation, path.child("templateGeneration")))
    us = spec.get("updateStrategy") or {}
    up = path.child("updateStrategy")
    ut = us.get("type") or ""
    if ut == "RollingUpdate":
        ru = us.get("rollingUpdate")
        if ru is None:
            errs.append(required(up.child("rollingUpdate")))
        else:
            rp2 = up.child("rollingUpdate")
            mu, ms = ru.get("maxUnavailable", 0), ru.get("maxSurge", 0)
            errs.extend(_validate_positive_int_or_percent(mu, rp2.child("maxUnavailable")))
            errs.extend(_validate_positive_int_or_percent(ms, rp2.child("maxSurge")))
            errs.extend(_not_more_than_100_percent(mu, rp2.child("maxUnavailable")))
            errs.extend(_not_more_than_100_percent(ms, rp2.child("maxSurge")))
            hu, hs = _int_or_percent_value(mu) != 0, _int_or_percent_value(ms) != 0
            if hu and hs:
                errs.append(invalid(rp2.child("maxSurge"), ms,
                                    "may not be set when maxUnavailable is non-zero"))
            elif not hu and not hs:
                errs.append(required(rp2.child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
    elif ut != "OnDelete":
        errs.append(GoValueError("NotSupported", up, "apps.DaemonSetUpdateStrategy{Type:"
                                 + _go_quote(ut) + "}",
                                 'supported values: "RollingUpdate", "OnDelete"'))
    if spec.get("revisionHistoryLimit") is not None:
        errs.extend(validate_nonnegative(spec["revisionHistoryLimit"],
                                         path.child("revisionHistoryLimit")))
    return errs


def validate_daemon_set(obj: dict) -> list[FieldError]:
    """Upstream C{ValidateDaemonSet}."""
    errs = validate_object_meta(obj.get("metadata") or {}, True, name_is_dns_subdomain,
                                Path("metadata"))
    errs.extend(validate_daemon_set_spec(obj.get("spec") or {}, Path("spec"),
                                         _template_generation(obj)))
    return errs


def validate_daemon_set_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateDaemonSetUpdate} plus the apps/v1 immutable C{spec.selector}."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    ntg, otg = _template_generation(new), _template_generation(old)
    tp = Path("spec", "templateGeneration")
    if ntg < otg:
        errs.append(invalid(tp, ntg, "must not be decremented"))
    changed = (new.get("spec") or {}).get("template") != (old.get("spec") or {}).get("template")
    if ntg == otg and changed:
        errs.append(invalid(tp, ntg, "must be incremented upon template update"))
    elif ntg > otg and not changed:
        errs.append(invalid(tp, ntg, "must not be incremented without template update"))
    errs.extend(validate_daemon_set_spec(new.get("spec") or {}, Path("spec"), ntg))
    errs.extend(_immutable_selector(new, old))
    return errs


def validate_daemon_set_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateDaemonSetStatusUpdate}."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    errs.extend(_status_counts(new.get("status") or {}, Path("status"),
                               ["currentNumberScheduled", "numberMisscheduled",
                                "desiredNumberScheduled",
                                "numberReady", "observedGeneration", "updatedNumberScheduled",
                                "numberAvailable", "numberUnavailable", "collisionCount"], []))
    errs.extend(_collision_decremented(new, old))
    return errs


# --------------------------------------------------------------------------------------------
# ControllerRevision


def validate_controller_revision(obj: dict) -> list[FieldError]:
    """Upstream C{ValidateControllerRevision}: C{data} is mandatory, C{revision} >= 0."""
    errs = validate_object_meta(obj.get("metadata") or {}, True, name_is_dns_subdomain,
                                Path("metadata"))
    if obj.get("data") is None:
        errs.append(required(Path("data"), "data is mandatory"))
    errs.extend(validate_nonnegative(obj.get("revision") or 0, Path("revision")))
    return errs


def validate_controller_revision_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateControllerRevisionUpdate}: C{data} is immutable."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    errs.extend(validate_controller_revision(new))
    if new.get("data") != old.get("data"):
        errs.append(invalid(Path("data"), new.get("data"), "field is immutable"))
    return errs

