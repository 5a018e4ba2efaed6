# -*- test-case-name: tests.apis.test_printers -*-
"""
Server-side printing of apps/v1 kinds: the column definitions and print functions of upstream
C{k8s.io/kubernetes/pkg/printers/internalversion/printers.go} for deployments, replicasets,
statefulsets, daemonsets and controllerrevisions (wide rows, as the server prints them).
"""

from __future__ import annotations

from kubetwist.apimachinery.selectors import format_label_selector, label_selector_to_string
from kubetwist.apis.printers import (
    SWAGGER_DOCS,
    age_column,
    column,
    format_labels,
    int_cell,
    layout_container_cells,
    meta,
    name_column,
    obj_age,
    obj_name,
    pod_template_containers,
)
from kubetwist.registry.rest import TableConvertor
from kubetwist.runtime.errors import StatusError

__all__ = [
    "CONTROLLERREVISION_TABLE",
    "DAEMONSET_TABLE",
    "DEPLOYMENT_TABLE",
    "REPLICASET_TABLE",
    "STATEFULSET_TABLE",
    "controller_of",
]

_D = SWAGGER_DOCS
_CONTAINERS = "Names of each container in the template."
_IMAGES = "Images referenced by each container in the template."
_READY = "Number of the pod with ready state"


def _spec(obj: dict) -> dict:
    return obj.get("spec") or {}


def _status(obj: dict) -> dict:
    return obj.get("status") or {}


def _deployment_row(d: dict) -> list:
    """Upstream C{printDeployment}: the selector prints C{<invalid>} when it does not parse."""
    try:
        selector = label_selector_to_string(_spec(d).get("selector"))
    except StatusError:
        selector = "<invalid>"
    names, images = layout_container_cells(pod_template_containers(d))
    status = _status(d)
    return [
        obj_name(d),
        f"{int_cell(status.get('readyReplicas'))}/{int_cell(_spec(d).get('replicas'))}",
        int_cell(status.get("updatedReplicas")),
        int_cell(status.get("availableReplicas")),
        obj_age(d),
        names,
        images,
        selector,
    ]


DEPLOYMENT_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Ready", "string", _READY),
        column("Up-to-date", "string", _D["DeploymentStatus.updatedReplicas"]),
        column("Available", "string", _D["DeploymentStatus.availableReplicas"]),
        age_column(),
        column("Containers", "string", _CONTAINERS, priority=1),
        column("Images", "string", _IMAGES, priority=1),
        column("Selector", "string", _D["DeploymentSpec.selector"], priority=1),
    ],
    row=_deployment_row,
)


def _replicaset_row(rs: dict) -> list:
    """Upstream C{printReplicaSet}."""
    names, images = layout_container_cells(pod_template_containers(rs))
    status = _status(rs)
    return [
        obj_name(rs),
        int_cell(_spec(rs).get("replicas")),
        int_cell(status.get("replicas")),
        int_cell(status.get("readyReplicas")),
        obj_age(rs),
        names,
        images,
        format_label_selector(_spec(rs).get("selector")),
    ]


REPLICASET_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Desired", "integer", _D["ReplicaSetSpec.replicas"]),
        column("Current", "integer", _D["ReplicaSetStatus.replicas"]),
        column("Ready", "integer", _D["ReplicaSetStatus.readyReplicas"]),
        age_column(),
        column("Containers", "string", _CONTAINERS, priority=1),
        column("Images", "string", _IMAGES, priority=1),
        column("Selector", "string", _D["ReplicaSetSpec.selector"], priority=1),
    ],
    row=_replicaset_row,
)


def _statefulset_row(ss: dict) -> list:
    """Upstream C{printStatefulSet}."""
    names, images = layout_container_cells(pod_template_containers(ss))
    return [
        obj_name(ss),
        f"{int_cell(_status(ss).get('readyReplicas'))}/{int_cell(_spec(ss).get('replicas'))}",
        obj_age(ss),
        names,
        images,
    ]


STATEFULSET_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Ready", "string", _READY),
        age_column(),
        column("Containers", "string", _CONTAINERS, priority=1),
        column("Images", "string", _IMAGES, priority=1),
    ],
    row=_statefulset_row,
)


def _daemonset_row(ds: dict) -> list:
    """Upstream C{printDaemonSet}."""
    names, images = layout_container_cells(pod_template_containers(ds))
    status = _status(ds)
    template_spec = ((_spec(ds).get("template") or {}).get("spec")) or {}
    return [
        obj_name(ds),
        int_cell(status.get("desiredNumberScheduled")),
        int_cell(status.get("currentNumberScheduled")),
        int_cell(status.get("numberReady")),
        int_cell(status.get("updatedNumberScheduled")),
        int_cell(status.get("numberAvailable")),
        format_labels(template_spec.get("nodeSelector")),
        obj_age(ds),
        names,
        images,
        format_label_selector(_spec(ds).get("selector")),
    ]


DAEMONSET_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Desired", "integer", _D["DaemonSetStatus.desiredNumberScheduled"]),
        column("Current", "integer", _D["DaemonSetStatus.currentNumberScheduled"]),
        column("Ready", "integer", _D["DaemonSetStatus.numberReady"]),
        column("Up-to-date", "integer", _D["DaemonSetStatus.updatedNumberScheduled"]),
        column("Available", "integer", _D["DaemonSetStatus.numberAvailable"]),
        column("Node Selector", "string", _D["PodSpec.nodeSelector"]),
        age_column(),
        column("Containers", "string", _CONTAINERS, priority=1),
        column("Images", "string", _IMAGES, priority=1),
        column("Selector", "string", _D["DaemonSetSpec.selector"], priority=1),
    ],
    row=_daemonset_row,
)


def controller_of(obj: dict) -> str:
    """
    The C{Controller} cell of a ControllerRevision: C{<none>} without a controller owner
    reference, else C{<kind>.<group>/<name>} lower-cased (C{daemonset.apps/web}), the group
    omitted for the core group (upstream C{formatResourceName}).
    """
    for ref in meta(obj).get("ownerReferences") or []:
        ref = ref or {}
        if ref.get("controller") is True:
            api_version = ref.get("apiVersion") or ""
            group = api_version.split("/", 1)[0] if "/" in api_version else ""
            kind = ref.get("kind") or ""
            name = ref.get("name") or ""
            if not group and not kind:
                return name
            group_kind = f"{kind}.{group}" if group else kind
            return group_kind.lower() + "/" + name
    return "<none>"


CONTROLLERREVISION_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Controller", "string", "Controller of the object"),
        column("Revision", "string", _D["ControllerRevision.revision"]),
        age_column(),
    ],
    row=lambda cr: [obj_name(cr), controller_of(cr), int_cell(cr.get("revision")), obj_age(cr)],
)
