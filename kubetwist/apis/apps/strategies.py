# -*- test-case-name: tests.apis.test_apps -*-
"""
Registry strategies of the apps/v1 resources: upstream C{k8s.io/kubernetes/pkg/registry/apps}
(C{deployment}, C{replicaset}, C{statefulset}, C{daemonset}, C{controllerrevision}
C{strategy.go}): create resets C{status} and sets C{metadata.generation: 1}, update keeps the
stored status and bumps the generation when the spec changes, the C{/status} strategies keep
the stored spec.

Status dicts are written in their wire form: the non-C{omitempty} counters of
ReplicaSetStatus, StatefulSetStatus and DaemonSetStatus are always present.
"""

from __future__ import annotations

import copy

from kubetwist.apis.apps import defaults, validation
from kubetwist.apis.apps.defaults import DAEMONSET_TEMPLATE_GENERATION_ANNOTATION
from kubetwist.apis.core import pod_warnings
from kubetwist.registry.rest import Strategy

__all__ = ["STRATEGIES", "replica_set_field_attrs", "status_wire_form"]

#: Status fields without C{omitempty} in apps/v1, per kind (always written, 0 when unset).
_STATUS_REQUIRED = {
    "Deployment": (),
    "ReplicaSet": ("replicas",),
    "StatefulSet": ("replicas", "availableReplicas"),
    "DaemonSet": ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled",
                  "numberReady"),
}


def status_wire_form(kind: str, status: dict | None) -> dict:
    """C{status} as kube-apiserver writes it back: the non-omitempty counters filled with 0."""
    status = dict(status or {})
    out = {}
    for k in _STATUS_REQUIRED.get(kind, ()):
        out[k] = status.pop(k, 0) or 0
    out.update(status)
    return out


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


def _old_generation(old: dict) -> int:
    return (old.get("metadata") or {}).get("generation") or 0


def _make_create(kind: str):
    def prepare_for_create(obj: dict) -> None:
        obj["status"] = status_wire_form(kind, {})
        _meta(obj)["generation"] = 1
        if kind == "StatefulSet":
            ru = ((obj.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate")
            if isinstance(ru, dict):
                ru.pop("maxUnavailable", None)  # MaxUnavailableStatefulSet is off in v1.32
        if kind == "DaemonSet":
            ann = _meta(obj).setdefault("annotations", {})
            try:
                tg = int(ann.get(DAEMONSET_TEMPLATE_GENERATION_ANNOTATION, "0"))
            except ValueError:
                tg = 0
            if tg < 1:
                ann[DAEMONSET_TEMPLATE_GENERATION_ANNOTATION] = "1"
    prepare_for_create.__doc__ = (f"Upstream C{{{kind} PrepareForCreate}}: status reset, "
                                  "generation "
                                  "1.")
    return prepare_for_create


def _make_update(kind: str):
    def prepare_for_update(new: dict, old: dict) -> None:
        new["status"] = copy.deepcopy(old.get("status") or status_wire_form(kind, {}))
        nmeta, ometa = _meta(new), old.get("metadata") or {}
        nspec, ospec = new.get("spec") or {}, old.get("spec") or {}
        gen = _old_generation(old)
        nmeta["generation"] = gen
        if kind == "StatefulSet":
            ru = (nspec.get("updateStrategy") or {}).get("rollingUpdate")
            oru = (ospec.get("updateStrategy") or {}).get("rollingUpdate") or {}
            if isinstance(ru, dict) and oru.get("maxUnavailable") is None:
                ru.pop("maxUnavailable", None)
        if kind == "DaemonSet":
            ann = nmeta.setdefault("annotations", {})
            otg = (ometa.get("annotations") or {}).get(DAEMONSET_TEMPLATE_GENERATION_ANNOTATION,
                                                       "0")
            if nspec.get("template") != ospec.get("template"):
                ann[DAEMONSET_TEMPLATE_GENERATION_ANNOTATION] = str(int(otg or 0) + 1)
                nmeta["generation"] = gen + 1
                return
            ann.setdefault(DAEMONSET_TEMPLATE_GENERATION_ANNOTATION, otg)
        changed = nspec != ospec
        if kind == "Deployment":
            changed = changed or nmeta.get("annotations") != ometa.get("annotations")
        if changed:
            nmeta["generation"] = gen + 1
    prepare_for_update.__doc__ = (f"Upstream C{{{kind} PrepareForUpdate}}: keep status, bump the "
                                  "generation on spec changes.")
    return prepare_for_update


def _make_status_update(kind: str):
    def prepare_for_update(new: dict, old: dict) -> None:
        new["spec"] = copy.deepcopy(old.get("spec") or {})
        new["status"] = status_wire_form(kind, new.get("status"))
        nmeta, ometa = _meta(new), old.get("metadata") or {}
        if kind == "Deployment":
            if "labels" in ometa:
                nmeta["labels"] = copy.deepcopy(ometa["labels"])
            else:
                nmeta.pop("labels", None)
        if kind == "DaemonSet":
            otg = (ometa.get("annotations") or {}).get(DAEMONSET_TEMPLATE_GENERATION_ANNOTATION)
            if otg is not None:
                nmeta.setdefault("annotations", {})[DAEMONSET_TEMPLATE_GENERATION_ANNOTATION] = otg
    prepare_for_update.__doc__ = (f"Upstream C{{{kind} status PrepareForUpdate}}: keep the stored "
                                  "spec.")
    return prepare_for_update


def replica_set_field_attrs(obj: dict) -> dict[str, str]:
    """Upstream C{ReplicaSetToSelectableFields}: C{status.replicas}."""
    return {"status.replicas": str((obj.get("status") or {}).get("replicas") or 0)}


def _table(name: str):
    try:
        from kubetwist.apis.apps import printers
    except ImportError:
        return None
    return getattr(printers, name, None)


def _pair(kind: str, resource: str, default, validate, validate_update, validate_status,
          table: str, field_attrs=None, warnings=None) -> dict[str, Strategy]:
    main = Strategy(
        kind=kind, group="apps", namespaced=True, default=default,
        prepare_for_create=_make_create(kind), prepare_for_update=_make_update(kind),
        validate=validate, validate_update=validate_update,
        field_attrs=field_attrs, table=_table(table), warnings=warnings,
    )
    status = Strategy(
        kind=kind, group="apps", namespaced=True, default=default,
        prepare_for_create=_make_create(kind), prepare_for_update=_make_status_update(kind),
        validate=validate, validate_update=validate_status,
        field_attrs=field_attrs, table=_table(table),
    )
    return {resource: main, resource + "/status": status}


def _revision_create(obj: dict) -> None:
    """ControllerRevisions have no status and no generation handling."""


STRATEGIES: dict[str, Strategy] = {}
STRATEGIES.update(_pair("Deployment", "deployments", defaults.default_deployment,
                        validation.validate_deployment, validation.validate_deployment_update,
                        validation.validate_deployment_status_update, "DEPLOYMENT_TABLE",
                        warnings=pod_warnings.deployment_warnings))
STRATEGIES.update(_pair("ReplicaSet", "replicasets", defaults.default_replica_set,
                        validation.validate_replica_set, validation.validate_replica_set_update,
                        validation.validate_replica_set_status_update, "REPLICASET_TABLE",
                        replica_set_field_attrs, pod_warnings.replica_set_warnings))
STRATEGIES.update(_pair("StatefulSet", "statefulsets", defaults.default_stateful_set,
                        validation.validate_stateful_set, validation.validate_stateful_set_update,
                        validation.validate_stateful_set_status_update, "STATEFULSET_TABLE",
                        warnings=pod_warnings.stateful_set_warnings))
STRATEGIES.update(_pair("DaemonSet", "daemonsets", defaults.default_daemon_set,
                        validation.validate_daemon_set, validation.validate_daemon_set_update,
                        validation.validate_daemon_set_status_update, "DAEMONSET_TABLE",
                        warnings=pod_warnings.daemon_set_warnings))
STRATEGIES["controllerrevisions"] = Strategy(
    kind="ControllerRevision", group="apps", namespaced=True,
    default=defaults.default_controller_revision,
    prepare_for_create=_revision_create,
    validate=validation.validate_controller_revision,
    validate_update=validation.validate_controller_revision_update,
    table=_table("CONTROLLERREVISION_TABLE"),
)
