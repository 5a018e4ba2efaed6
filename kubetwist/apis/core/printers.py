# -*- test-case-name: tests.apis.test_printers -*-
"""
Server-side printing of core/v1 kinds: the column definitions and print functions of upstream
C{k8s.io/kubernetes/pkg/printers/internalversion/printers.go} for pods, namespaces,
configmaps, secrets, services, endpoints, serviceaccounts and events.

Rows are always the wide rows (the server prints with C{Wide: true}); ages come from
L{kubetwist.apis.printers.age} and its injectable clock.
"""

from __future__ import annotations

import datetime

from kubetwist.apis.printers import (
    DEFAULT_TABLE,
    DEFAULT_TABLE_COLUMNS,
    SWAGGER_DOCS,
    age,
    age_column,
    column,
    default_row,
    format_labels,
    layout_container_cells,
    meta,
    name_column,
    obj_age,
    obj_name,
)
from kubetwist.registry.rest import TableConvertor

__all__ = [
    "CONFIGMAP_TABLE",
    "DEFAULT_TABLE",
    "DEFAULT_TABLE_COLUMNS",
    "ENDPOINTS_TABLE",
    "EVENT_TABLE",
    "LIMITRANGE_TABLE",
    "NAMESPACE_TABLE",
    "NODE_TABLE",
    "PERSISTENTVOLUMECLAIM_TABLE",
    "PERSISTENTVOLUME_TABLE",
    "PODTEMPLATE_TABLE",
    "POD_TABLE",
    "REPLICATIONCONTROLLER_TABLE",
    "RESOURCEQUOTA_TABLE",
    "SECRET_TABLE",
    "SERVICEACCOUNT_TABLE",
    "SERVICE_TABLE",
    "access_modes_string",
    "find_node_roles",
    "format_endpoints",
    "pod_row_conditions",
    "service_external_ip",
    "service_port_string",
]

LOAD_BALANCER_WIDTH = 16
_D = SWAGGER_DOCS


# --------------------------------------------------------------------------------------------
# pods


def _parse_time(ts: str | None) -> datetime.datetime | None:
    if not ts:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(
            str(ts).replace("Z", "+00:00").replace("z", "+00:00")
        )
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return parsed


def _later(current: str | None, candidate: str | None) -> str | None:
    """C{if current.Before(candidate) { current = candidate }} on RFC 3339 texts."""
    cand = _parse_time(candidate)
    if cand is None:
        return current
    cur = _parse_time(current)
    if cur is None or cur < cand:
        return candidate
    return current


def _restartable(container: dict | None) -> bool:
    """Upstream C{IsRestartableInitContainer}: a sidecar (C{restartPolicy: Always})."""
    return bool(container) and container.get("restartPolicy") == "Always"


def _has_condition(status: dict, ctype: str) -> bool:
    return any(
        (c or {}).get("type") == ctype and (c or {}).get("status") == "True"
        for c in status.get("conditions") or []
    )


def _pod_row(pod: dict) -> list:
    """Upstream C{printPod} (wide)."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    restarts = 0
    restartable_init_restarts = 0
    total = len(spec.get("containers") or [])
    ready = 0
    last_restart: str | None = None
    last_restartable_init_restart: str | None = None
    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    for cond in status.get("conditions") or []:
        cond = cond or {}
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    init_containers: dict[str, dict] = {}
    for c in spec.get("initContainers") or []:
        c = c or {}
        init_containers[c.get("name") or ""] = c
        if _restartable(c):
            total += 1

    initializing = False
    init_count = len(spec.get("initContainers") or [])
    for i, cs in enumerate(status.get("initContainerStatuses") or []):
        cs = cs or {}
        state = cs.get("state") or {}
        terminated = state.get("terminated")
        waiting = state.get("waiting")
        restarts += cs.get("restartCount") or 0
        last_terminated = (cs.get("lastState") or {}).get("terminated")
        if last_terminated is not None:
            last_restart = _later(last_restart, last_terminated.get("finishedAt"))
        sidecar = _restartable(init_containers.get(cs.get("name") or ""))
        if sidecar:
            restartable_init_restarts += cs.get("restartCount") or 0
            if last_terminated is not None:
                last_restartable_init_restart = _later(
                    last_restartable_init_restart, last_terminated.get("finishedAt")
                )
        if terminated is not None and (terminated.get("exitCode") or 0) == 0:
            continue
        if sidecar and cs.get("started") is True:
            if cs.get("ready"):
                ready += 1
            continue
        if terminated is not None:
            if not terminated.get("reason"):
                if terminated.get("signal"):
                    reason = f"Init:Signal:{terminated['signal']}"
                else:
                    reason = f"Init:ExitCode:{terminated.get('exitCode') or 0}"
            else:
                reason = "Init:" + terminated["reason"]
        elif (
            waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing"
        ):
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{init_count}"
        initializing = True
        break

    if not initializing or _has_condition(status, "Initialized"):
        restarts = restartable_init_restarts
        last_restart = last_restartable_init_restart
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            cs = cs or {}
            state = cs.get("state") or {}
            terminated = state.get("terminated")
            waiting = state.get("waiting")
            restarts += cs.get("restartCount") or 0
            last_terminated = (cs.get("lastState") or {}).get("terminated")
            if last_terminated is not None:
                last_restart = _later(last_restart, last_terminated.get("finishedAt"))
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated is not None and terminated.get("reason"):
                reason = terminated["reason"]
            elif terminated is not None:
                if terminated.get("signal"):
                    reason = f"Signal:{terminated['signal']}"
                else:
                    reason = f"ExitCode:{terminated.get('exitCode') or 0}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _has_condition(status, "Ready") else "NotReady"

    deleting = meta(pod).get("deletionTimestamp") is not None
    if deleting and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_cell = str(restarts)
    if restarts != 0 and last_restart is not None:
        restarts_cell = f"{restarts} ({age(last_restart)} ago)"

    pod_ips = status.get("podIPs") or []
    pod_ip = ((pod_ips[0] or {}).get("ip") if pod_ips else "") or "<none>"
    node_name = spec.get("nodeName") or "<none>"
    nominated = status.get("nominatedNodeName") or "<none>"
    gates = "<none>"
    readiness_gates = spec.get("readinessGates") or []
    if readiness_gates:
        true_count = 0
        for gate in readiness_gates:
            ctype = (gate or {}).get("conditionType")
            for cond in status.get("conditions") or []:
                if (cond or {}).get("type") == ctype:
                    if cond.get("status") == "True":
                        true_count += 1
                    break
        gates = f"{true_count}/{len(readiness_gates)}"
    return [
        obj_name(pod),
        f"{ready}/{total}",
        reason,
        restarts_cell,
        obj_age(pod),
        pod_ip,
        node_name,
        nominated,
        gates,
    ]


def pod_row_conditions(pod: dict) -> list[dict]:
    """
    Upstream C{podSuccessConditions}/C{podFailedConditions}: the C{conditions} of a pod's
    table row (C{[]} unless the pod has completed).
    """
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Succeeded":
        return [
            {
                "type": "Completed",
                "status": "True",
                "reason": "Succeeded",
                "message": "The pod has completed successfully.",
            }
        ]
    if phase == "Failed":
        return [
            {
                "type": "Completed",
                "status": "True",
                "reason": "Failed",
                "message": "The pod failed.",
            }
        ]
    return []


POD_TABLE = TableConvertor(
    columns=[
        name_column(),
        column(
            "Ready", "string", "The aggregate readiness state of this pod for accepting traffic."
        ),
        column("Status", "string", "The aggregate status of the containers in this pod."),
        column(
            "Restarts",
            "string",
            "The number of times the containers in this pod have been restarted and when the "
            "last container in this pod has restarted.",
        ),
        age_column(),
        column("IP", "string", _D["PodStatus.podIP"], priority=1),
        column("Node", "string", _D["PodSpec.nodeName"], priority=1),
        column("Nominated Node", "string", _D["PodStatus.nominatedNodeName"], priority=1),
        column("Readiness Gates", "string", _D["PodSpec.readinessGates"], priority=1),
    ],
    row=_pod_row,
)


# --------------------------------------------------------------------------------------------
# namespaces, configmaps, secrets, serviceaccounts

NAMESPACE_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Status", "string", "The status of the namespace"),
        age_column(),
    ],
    row=lambda ns: [obj_name(ns), (ns.get("status") or {}).get("phase") or "", obj_age(ns)],
)

CONFIGMAP_TABLE = TableConvertor(
    columns=[name_column(), column("Data", "string", _D["ConfigMap.data"]), age_column()],
    row=lambda cm: [
        obj_name(cm),
        len(cm.get("data") or {}) + len(cm.get("binaryData") or {}),
        obj_age(cm),
    ],
)

SECRET_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Type", "string", _D["Secret.type"]),
        column("Data", "string", _D["Secret.data"]),
        age_column(),
    ],
    row=lambda s: [obj_name(s), s.get("type") or "", len(s.get("data") or {}), obj_age(s)],
)

SERVICEACCOUNT_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Secrets", "string", _D["ServiceAccount.secrets"]),
        age_column(),
    ],
    row=lambda sa: [obj_name(sa), len(sa.get("secrets") or []), obj_age(sa)],
)


# --------------------------------------------------------------------------------------------
# services


def _load_balancer_status_string(status: dict, wide: bool) -> str:
    """Upstream C{loadBalancerStatusStringer}: sorted unique IPs/hostnames, clipped unless wide."""
    found = set()
    for ingress in status.get("ingress") or []:
        ingress = ingress or {}
        if ingress.get("ip"):
            found.add(ingress["ip"])
        elif ingress.get("hostname"):
            found.add(ingress["hostname"])
    text = ",".join(sorted(found))
    if not wide and len(text) > LOAD_BALANCER_WIDTH:
        text = text[: LOAD_BALANCER_WIDTH - 3] + "..."
    return text


def service_external_ip(svc: dict, wide: bool = True) -> str:
    """Upstream C{getServiceExternalIP}."""
    spec = svc.get("spec") or {}
    external_ips = spec.get("externalIPs") or []
    stype = spec.get("type")
    if stype in ("ClusterIP", "NodePort"):
        return ",".join(external_ips) if external_ips else "<none>"
    if stype == "LoadBalancer":
        lb = _load_balancer_status_string(
            ((svc.get("status") or {}).get("loadBalancer") or {}), wide
        )
        if external_ips:
            results = lb.split(",") if lb else []
            return ",".join(results + list(external_ips))
        return lb or "<pending>"
    if stype == "ExternalName":
        return spec.get("externalName") or ""
    return "<unknown>"


def service_port_string(ports: list | None) -> str:
    """Upstream C{makePortString}: C{80/TCP,443:30443/TCP}."""
    pieces = []
    for port in ports or []:
        port = port or {}
        number, protocol = port.get("port") or 0, port.get("protocol") or ""
        node_port = port.get("nodePort") or 0
        if node_port > 0:
            pieces.append(f"{number}:{node_port}/{protocol}")
        else:
            pieces.append(f"{number}/{protocol}")
    return ",".join(pieces)


def _service_row(svc: dict) -> list:
    spec = svc.get("spec") or {}
    cluster_ips = spec.get("clusterIPs") or []
    return [
        obj_name(svc),
        spec.get("type") or "",
        cluster_ips[0] if cluster_ips else "<none>",
        service_external_ip(svc, True),
        service_port_string(spec.get("ports")) or "<none>",
        obj_age(svc),
        format_labels(spec.get("selector")),
    ]


SERVICE_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Type", "string", _D["ServiceSpec.type"]),
        column("Cluster-IP", "string", _D["ServiceSpec.clusterIP"]),
        column("External-IP", "string", _D["ServiceSpec.externalIPs"]),
        column("Port(s)", "string", _D["ServiceSpec.ports"]),
        age_column(),
        column("Selector", "string", _D["ServiceSpec.selector"], priority=1),
    ],
    row=_service_row,
)


# --------------------------------------------------------------------------------------------
# endpoints


def _join_host_port(host: str, port: int) -> str:
    """Go's C{net.JoinHostPort}: brackets around hosts containing a colon."""
    if ":" in host:
        return f"[{host}]:{port}"
    return f"{host}:{port}"


def format_endpoints(ep: dict) -> str:
    """
    Upstream C{formatEndpoints} (all ports): up to three C{ip:port} entries, then
    C{ + N more...}; bare IPs for subsets without ports; C{<none>} without subsets.
    """
    subsets = ep.get("subsets") or []
    if not subsets:
        return "<none>"
    listed: list[str] = []
    limit = 3
    more = False
    count = 0
    for subset in subsets:
        subset = subset or {}
        addresses = subset.get("addresses") or []
        ports = subset.get("ports") or []
        if not ports:
            count += len(addresses)
            for address in addresses:
                if len(listed) == limit:
                    more = True
                    break
                listed.append((address or {}).get("ip") or "")
            continue
        for port in ports:
            count += len(addresses)
            for address in addresses:
                if len(listed) == limit:
                    more = True
                    break
                listed.append(
                    _join_host_port((address or {}).get("ip") or "", (port or {}).get("port") or 0)
                )
    text = ",".join(listed)
    if more:
        return f"{text} + {count - limit} more..."
    return text


ENDPOINTS_TABLE = TableConvertor(
    columns=[name_column(), column("Endpoints", "string", _D["Endpoints.subsets"]), age_column()],
    row=lambda ep: [obj_name(ep), format_endpoints(ep), obj_age(ep)],
)


# --------------------------------------------------------------------------------------------
# events


def _event_source(event: dict) -> str:
    """Upstream C{formatEventSource}: C{component, host}, falling back to the reporting fields."""
    source = event.get("source") or {}
    component = source.get("component") or event.get("reportingComponent") or ""
    instance = source.get("host") or event.get("reportingInstance") or ""
    return f"{component}, {instance}" if instance else component


def _event_row(event: dict) -> list:
    """Upstream C{printEvent} (wide)."""
    first = (
        age(event.get("firstTimestamp"))
        if event.get("firstTimestamp")
        else age(event.get("eventTime"))
    )
    last = age(event.get("lastTimestamp")) if event.get("lastTimestamp") else first
    count = event.get("count") or 0
    series = event.get("series")
    if series is not None:
        last = age((series or {}).get("lastObservedTime"))
        count = (series or {}).get("count") or 0
    elif count == 0:
        count = 1
    involved = event.get("involvedObject") or {}
    kind = (involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    return [
        last,
        event.get("type") or "",
        event.get("reason") or "",
        target,
        involved.get("fieldPath") or "",
        _event_source(event),
        (event.get("message") or "").strip(),
        first,
        int(count),
        obj_name(event),
    ]


EVENT_TABLE = TableConvertor(
    columns=[
        column("Last Seen", "string", _D["Event.lastTimestamp"]),
        column("Type", "string", _D["Event.type"]),
        column("Reason", "string", _D["Event.reason"]),
        column("Object", "string", _D["Event.involvedObject"]),
        column("Subobject", "string", _D["ObjectReference.fieldPath"], priority=1),
        column("Source", "string", _D["Event.source"], priority=1),
        column("Message", "string", _D["Event.message"]),
        column("First Seen", "string", _D["Event.firstTimestamp"], priority=1),
        column("Count", "string", _D["Event.count"], priority=1),
        name_column(priority=1),
    ],
    row=_event_row,
)


# --------------------------------------------------------------------------------------------
# replicationcontrollers, persistentvolumes, persistentvolumeclaims


def _rc_row(rc: dict) -> list:
    """Upstream C{printReplicationController}."""
    from kubetwist.apis.printers import int_cell, layout_container_cells, pod_template_containers

    spec, status = rc.get("spec") or {}, rc.get("status") or {}
    names, images = layout_container_cells(pod_template_containers(rc))
    return [
        obj_name(rc),
        int_cell(spec.get("replicas")),
        int_cell(status.get("replicas")),
        int_cell(status.get("readyReplicas")),
        obj_age(rc),
        names,
        images,
        format_labels(spec.get("selector")),
    ]


REPLICATIONCONTROLLER_TABLE = TableConvertor(
    columns=[
        name_column(),
        column(
            "Desired", "integer",
            "Replicas is the number of desired replicas. This is a pointer to distinguish "
            "between explicit zero and unspecified. Defaults to 1. More info: "
            "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller"
            "#what-is-a-replicationcontroller",
        ),
        column(
            "Current", "integer",
            "Replicas is the most recently observed number of replicas. More info: "
            "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller"
            "#what-is-a-replicationcontroller",
        ),
        column("Ready", "integer",
               "The number of ready replicas for this replication controller."),
        age_column(),
        column("Containers", "string", "Names of each container in the template.", priority=1),
        column("Images", "string", "Images referenced by each container in the template.",
               priority=1),
        column(
            "Selector", "string",
            "Selector is a label query over pods that should match the Replicas count. If "
            "Selector is empty, it is defaulted to the labels present on the Pod template. "
            "Label keys and values that must match in order to be controlled by this "
            "replication controller, if empty defaulted to labels on Pod template. More info: "
            "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels"
            "/#label-selectors",
            priority=1,
        ),
    ],
    row=_rc_row,
)

_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"


def access_modes_string(modes: list | None) -> str:
    """Upstream C{GetAccessModesAsString}: C{RWO,ROX,RWX,RWOP} for the modes present."""
    modes = modes or []
    short = [("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
             ("ReadWriteOncePod", "RWOP")]
    return ",".join(s for m, s in short if m in modes)


def _storage_class(obj: dict) -> str:
    """Upstream C{GetPersistentVolume(Claim)Class}: the beta annotation, else the spec."""
    ann = meta(obj).get("annotations") or {}
    if _BETA_STORAGE_CLASS in ann:
        return ann[_BETA_STORAGE_CLASS]
    return (obj.get("spec") or {}).get("storageClassName") or ""


def _quantity_text(value: object) -> str:
    from kubetwist.runtime.quantity import QuantityError, canonical_quantity

    if value is None:
        return "0"
    try:
        return str(canonical_quantity(value))
    except (QuantityError, ValueError, TypeError):
        return str(value)


def _pv_row(pv: dict) -> list:
    """Upstream C{printPersistentVolume}."""
    spec, status = pv.get("spec") or {}, pv.get("status") or {}
    ref = spec.get("claimRef")
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if isinstance(ref, dict) else ""
    phase = status.get("phase") or ""
    if meta(pv).get("deletionTimestamp"):
        phase = "Terminating"
    return [
        obj_name(pv),
        _quantity_text((spec.get("capacity") or {}).get("storage")),
        access_modes_string(spec.get("accessModes")),
        spec.get("persistentVolumeReclaimPolicy") or "",
        phase,
        claim,
        _storage_class(pv),
        spec.get("volumeAttributesClassName") or "<unset>",
        status.get("reason") or "",
        obj_age(pv),
        spec.get("volumeMode") or "<unset>",
    ]


PERSISTENTVOLUME_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Capacity", "string",
               "capacity is the description of the persistent volume's resources and capacity. "
               "More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity"),
        column("Access Modes", "string",
               "accessModes contains all ways the volume can be mounted. More info: "
               "https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes"),
        column("Reclaim Policy", "string",
               "persistentVolumeReclaimPolicy defines what happens to a persistent volume when "
               "released from its claim. Valid options are Retain (default for manually created "
               "PersistentVolumes), Delete (default for dynamically provisioned "
               "PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the "
               "volume plugin underlying this PersistentVolume. More info: "
               "https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming"),
        column("Status", "string",
               "phase indicates if a volume is available, bound to a claim, or released by a "
               "claim. More info: "
               "https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase"),
        column("Claim", "string",
               "claimRef is part of a bi-directional binding between PersistentVolume and "
               "PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is "
               "the authoritative bind between PV and PVC. More info: "
               "https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding"),
        column("StorageClass", "string", "StorageClass of the pv"),
        column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
        column("Reason", "string",
               "reason is a brief CamelCase string that describes any failure and is meant for "
               "machine parsing and tidy display in the CLI."),
        age_column(),
        column("VolumeMode", "string",
               "volumeMode defines if a volume is intended to be used with a formatted "
               "filesystem or to remain in raw block state. Value of Filesystem is implied when "
               "not included in spec.", priority=1),
    ],
    row=_pv_row,
)


def _pvc_row(pvc: dict) -> list:
    """Upstream C{printPersistentVolumeClaim}."""
    spec, status = pvc.get("spec") or {}, pvc.get("status") or {}
    phase = status.get("phase") or ""
    if meta(pvc).get("deletionTimestamp"):
        phase = "Terminating"
    capacity = modes = ""
    if spec.get("volumeName"):
        modes = access_modes_string(status.get("accessModes"))
        capacity = _quantity_text((status.get("capacity") or {}).get("storage"))
    return [
        obj_name(pvc),
        phase,
        spec.get("volumeName") or "",
        capacity,
        modes,
        _storage_class(pvc),
        spec.get("volumeAttributesClassName") or "<unset>",
        obj_age(pvc),
        spec.get("volumeMode") or "<unset>",
    ]


PERSISTENTVOLUMECLAIM_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Status", "string", "phase represents the current phase of PersistentVolumeClaim."),
        column("Volume", "string",
               "volumeName is the binding reference to the PersistentVolume backing this claim."),
        column("Capacity", "string",
               "capacity represents the actual resources of the underlying volume."),
        column("Access Modes", "string",
               "accessModes contains the actual access modes the volume backing the PVC has. "
               "More info: "
               "https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1"),
        column("StorageClass", "string", "StorageClass of the pvc"),
        column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
        age_column(),
        column("VolumeMode", "string",
               "volumeMode defines what type of volume is required by the claim. Value of "
               "Filesystem is implied when not included in claim spec.", priority=1),
    ],
    row=_pvc_row,
)


# --------------------------------------------------------------------------------------------
# nodes, pod templates, limit ranges, resource quotas

_NODE_ROLE_PREFIX = "node-role.kubernetes.io/"
_NODE_ROLE_LABEL = "kubernetes.io/role"


def find_node_roles(node: dict) -> list[str]:
    """
    Upstream C{findNodeRoles}: the sorted, distinct roles of a node, from the suffixes of its
    C{node-role.kubernetes.io/<role>} labels and the value of a C{kubernetes.io/role} label.
    """
    roles: set[str] = set()
    for key, value in (meta(node).get("labels") or {}).items():
        if key.startswith(_NODE_ROLE_PREFIX):
            role = key[len(_NODE_ROLE_PREFIX):]
            if role:
                roles.add(role)
        elif key == _NODE_ROLE_LABEL and value:
            roles.add(value)
    return sorted(roles)


def _node_address(node: dict, kind: str) -> str:
    for address in (node.get("status") or {}).get("addresses") or []:
        if isinstance(address, dict) and address.get("type") == kind:
            return address.get("address") or ""
    return "<none>"


def _node_row(node: dict) -> list:
    """Upstream C{printNode} (wide): the C{Ready} condition, C{SchedulingDisabled}, roles."""
    spec, status = node.get("spec") or {}, node.get("status") or {}
    states: list[str] = []
    ready = [c for c in status.get("conditions") or []
             if isinstance(c, dict) and c.get("type") == "Ready"]
    if ready:
        states.append("Ready" if ready[-1].get("status") == "True" else "NotReady")
    else:
        states.append("Unknown")
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    info = status.get("nodeInfo") or {}
    return [
        obj_name(node),
        ",".join(states),
        ",".join(find_node_roles(node)) or "<none>",
        obj_age(node),
        info.get("kubeletVersion") or "",
        _node_address(node, "InternalIP"),
        _node_address(node, "ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


_ADDRESSES_DOC = (
    "List of addresses reachable to the node. Queried from cloud provider, if available. More "
    "info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is "
    "declared as mergeable, but the merge key is not sufficiently unique, which can cause data "
    "corruption when it is merged. Callers should instead use a full-replacement patch. See "
    "https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change "
    "during the lifetime of a Node. However, there are some exceptions where this may not be "
    "possible, such as Pods that inherit a Node's address in its own status or consumers of the "
    "downward API (status.hostIP)."
)

NODE_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Status", "string", "The status of the node"),
        column("Roles", "string", "The roles of the node"),
        age_column(),
        column("Version", "string", "Kubelet Version reported by the node."),
        column("Internal-IP", "string", _ADDRESSES_DOC, priority=1),
        column("External-IP", "string", _ADDRESSES_DOC, priority=1),
        column("OS-Image", "string",
               "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 "
               "(wheezy)).", priority=1),
        column("Kernel-Version", "string",
               "Kernel Version reported by the node from 'uname -r' (e.g. "
               "3.16.0-0.bpo.4-amd64).", priority=1),
        column("Container-Runtime", "string",
               "ContainerRuntime Version reported by the node through runtime remote API (e.g. "
               "containerd://1.4.2).", priority=1),
    ],
    row=_node_row,
)


def _podtemplate_row(obj: dict) -> list:
    """Upstream C{printPodTemplate}: containers, images and the template's labels."""
    tpl = obj.get("template") or {}
    names, images = layout_container_cells((tpl.get("spec") or {}).get("containers"))
    return [obj_name(obj), names, images, format_labels((tpl.get("metadata") or {}).get("labels"))]


PODTEMPLATE_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Containers", "string", "Names of each container in the template."),
        column("Images", "string", "Images referenced by each container in the template."),
        column("Pod Labels", "string", "The labels for the pod template."),
    ],
    row=_podtemplate_row,
)

#: Upstream C{printLimitRange}: the name and C{creationTimestamp} (C{Created At}, a date).
LIMITRANGE_TABLE = TableConvertor(columns=list(DEFAULT_TABLE_COLUMNS), row=default_row)


def _quota_row(quota: dict) -> list:
    """
    Upstream C{printResourceQuota}: C{<resource>: <used>/<hard>} for every resource of
    C{status.hard}, sorted; C{limits.*} resources in the C{Limit} cell, the rest in C{Request}.
    """
    status = quota.get("status") or {}
    hard, used = status.get("hard") or {}, status.get("used") or {}
    request: list[str] = []
    limit: list[str] = []
    for name in sorted(hard):
        cell = limit if name.split(".")[0] == "limits" and "." in name else request
        cell.append(f"{name}: {_quantity_text(used.get(name))}/{_quantity_text(hard[name])}")
    return [obj_name(quota), obj_age(quota), ", ".join(request), ", ".join(limit)]


RESOURCEQUOTA_TABLE = TableConvertor(
    columns=[
        name_column(),
        age_column(),
        column("Request", "string",
               "Request represents a minimum amount of cpu/memory that a container may consume."),
        column("Limit", "string",
               "Limits control the maximum amount of cpu/memory that a container may use "
               "independent of contention on the node."),
    ],
    row=_quota_row,
)
