# -*- test-case-name: tests.apis.test_printers -*-
"""
Shared pieces of server-side printing: upstream C{k8s.io/kubernetes/pkg/printers/internalversion}
(C{translateTimestampSince}, C{layoutContainerCells}, the C{Name}/C{Age} column definitions)
and C{k8s.io/apiserver/pkg/registry/rest/table.go} (the default C{Name}/C{Created At} table).

The server always prints with C{Wide: true} (upstream C{printerstorage.TableConvertor}), so
every row carries a cell for every column, priority-1 columns included.

Ages are measured against an injectable clock: L{set_clock} takes a zero-argument callable
returning POSIX seconds (the reactor's C{seconds}); by default it is C{time.time}.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kubetwist.apimachinery.meta import translate_timestamp_since
from kubetwist.registry.rest import TableConvertor

__all__ = [
    "DEFAULT_TABLE",
    "DEFAULT_TABLE_COLUMNS",
    "SWAGGER_DOCS",
    "age",
    "age_column",
    "column",
    "default_row",
    "format_labels",
    "layout_container_cells",
    "name_column",
    "now",
    "set_clock",
]

#: OpenAPI descriptions of the fields printer columns describe (upstream C{SwaggerDoc()} maps of
#: C{k8s.io/api} and C{k8s.io/apimachinery} v0.32), keyed C{<Type>.<field>}.
SWAGGER_DOCS: dict[str, str] = {
    "ObjectMeta.name": (
        "Name must be unique within a namespace. Is required when creating resources, "
        "although some resources may allow a client to request the generation of an "
        "appropriate name automatically. Name is primarily intended for creation "
        "idempotence and configuration definition. Cannot be updated. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
    ),
    "ObjectMeta.creationTimestamp": (
        "CreationTimestamp is a timestamp representing the server time when this object "
        "was created. It is not guaranteed to be set in happens-before order across "
        "separate operations. Clients may not set this value. It is represented in "
        "RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for "
        "lists. More info: https://git.k8s.io/community/contributors/devel/sig-architectu"
        "re/api-conventions.md#metadata"
    ),
    "PodStatus.podIP": (
        "podIP address allocated to the pod. Routable at least within the cluster. Empty "
        "if not yet allocated."
    ),
    "PodSpec.nodeName": (
        "NodeName indicates in which node this pod is scheduled. If empty, this pod is a "
        "candidate for scheduling by the scheduler defined in schedulerName. Once this "
        "field is set, the kubelet for this node becomes responsible for the lifecycle "
        "of this pod. This field should not be used to express a desire for the pod to "
        "be scheduled on a specific node. "
        "https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodenam"
        "e"
    ),
    "PodStatus.nominatedNodeName": (
        "nominatedNodeName is set only when this pod preempts other pods on the node, "
        "but it cannot be scheduled right away as preemption victims receive their "
        "graceful termination periods. This field does not guarantee that the pod will "
        "be scheduled on this node. Scheduler may decide to place the pod elsewhere if "
        "other nodes become available sooner. Scheduler may also decide to give the "
        "resources on this node to a higher priority pod that is created after "
        "preemption. As a result, this field may be different than PodSpec.nodeName when "
        "the pod is scheduled."
    ),
    "PodSpec.readinessGates": (
        "If specified, all readiness gates will be evaluated for pod readiness. A pod is "
        "ready when all its containers are ready AND all conditions specified in the "
        'readiness gates have status equal to "True" More info: '
        "https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates"
    ),
    "ServiceSpec.type": (
        "type determines how the Service is exposed. Defaults to ClusterIP. Valid "
        'options are ExternalName, ClusterIP, NodePort, and LoadBalancer. "ClusterIP" '
        "allocates a cluster-internal IP address for load-balancing to endpoints. "
        "Endpoints are determined by the selector or if that is not specified, by manual "
        "construction of an Endpoints object or EndpointSlice objects. If clusterIP is "
        '"None", no virtual IP is allocated and the endpoints are published as a set of '
        'endpoints rather than a virtual IP. "NodePort" builds on ClusterIP and '
        "allocates a port on every node which routes to the same endpoints as the "
        'clusterIP. "LoadBalancer" builds on NodePort and creates an external '
        "load-balancer (if supported in the current cloud) which routes to the same "
        'endpoints as the clusterIP. "ExternalName" aliases this service to the '
        "specified externalName. Several other fields do not apply to ExternalName "
        "services. More info: https://kubernetes.io/docs/concepts/services-networking/ser"
        "vice/#publishing-services-service-types"
    ),
    "ServiceSpec.clusterIP": (
        "clusterIP is the IP address of the service and is usually assigned randomly. If "
        "an address is specified manually, is in-range (as per system configuration), "
        "and is not in use, it will be allocated to the service; otherwise creation of "
        "the service will fail. This field may not be changed through updates unless the "
        "type field is also being changed to ExternalName (which requires this field to "
        "be blank) or the type field is being changed from ExternalName (in which case "
        "this field may optionally be specified, as describe above).  Valid values are "
        '"None", empty string (""), or a valid IP address. Setting this to "None" makes '
        'a "headless service" (no virtual IP), which is useful when direct endpoint '
        "connections are preferred and proxying is not required.  Only applies to types "
        "ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating "
        "a Service of type ExternalName, creation will fail. This field will be wiped "
        "when updating a Service to type ExternalName. More info: "
        "https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and"
        "-service-proxies"
    ),
    "ServiceSpec.externalIPs": (
        "externalIPs is a list of IP addresses for which nodes in the cluster will also "
        "accept traffic for this service.  These IPs are not managed by Kubernetes.  The "
        "user is responsible for ensuring that traffic arrives at a node with this IP.  "
        "A common example is external load-balancers that are not part of the Kubernetes "
        "system."
    ),
    "ServiceSpec.ports": (
        "The list of ports that are exposed by this service. More info: "
        "https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and"
        "-service-proxies"
    ),
    "ServiceSpec.selector": (
        "Route service traffic to pods with label keys and values matching this "
        "selector. If empty or not present, the service is assumed to have an external "
        "process managing its endpoints, which Kubernetes will not modify. Only applies "
        "to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is "
        "ExternalName. More info: "
        "https://kubernetes.io/docs/concepts/services-networking/service/"
    ),
    "Endpoints.subsets": (
        "The set of all endpoints is the union of all subsets. Addresses are placed into "
        "subsets according to the IPs they share. A single address with multiple ports, "
        "some of which are ready and some of which are not (because they come from "
        "different containers) will result in the address being displayed in different "
        "subsets for the different ports. No address will appear in both Addresses and "
        "NotReadyAddresses in the same subset. Sets of addresses and ports that comprise "
        "a service."
    ),
    "Event.lastTimestamp": (
        "The time at which the most recent occurrence of this event was recorded."
    ),
    "Event.type": ("Type of this event (Normal, Warning), new types could be added in the future"),
    "Event.reason": (
        "This should be a short, machine understandable string that gives the reason for "
        "the transition into the object's current status."
    ),
    "Event.involvedObject": ("The object that this event is about."),
    "ObjectReference.fieldPath": (
        "If referring to a piece of an object instead of an entire object, this string "
        "should contain a valid JSON/Go field access statement, such as "
        "desiredState.manifest.containers[2]. For example, if the object reference is to "
        "a container within a pod, this would take on a value like: "
        '"spec.containers{name}" (where "name" refers to the name of the container that '
        'triggered the event) or if no container name is specified "spec.containers[2]" '
        "(container with index 2 in this pod). This syntax is chosen only to have some "
        "well-defined way of referencing a part of an object."
    ),
    "Event.source": (
        "The component reporting this event. Should be a short machine understandable string."
    ),
    "Event.message": ("A human-readable description of the status of this operation."),
    "Event.firstTimestamp": (
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)"
    ),
    "Event.count": ("The number of times this event has occurred."),
    "Secret.type": (
        "Used to facilitate programmatic handling of secret data. More info: "
        "https://kubernetes.io/docs/concepts/configuration/secret/#secret-types"
    ),
    "Secret.data": (
        "Data contains the secret data. Each key must consist of alphanumeric "
        "characters, '-', '_' or '.'. The serialized form of the secret data is a base64 "
        "encoded string, representing the arbitrary (possibly non-string) data value "
        "here. Described in https://tools.ietf.org/html/rfc4648#section-4"
    ),
    "ServiceAccount.secrets": (
        "Secrets is a list of the secrets in the same namespace that pods running using "
        "this ServiceAccount are allowed to use. Pods are only limited to this list if "
        'this service account has a "kubernetes.io/enforce-mountable-secrets" annotation '
        'set to "true". The "kubernetes.io/enforce-mountable-secrets" annotation is '
        "deprecated since v1.32. Prefer separate namespaces to isolate access to mounted "
        "secrets. This field should not be used to find auto-generated service account "
        "token secrets for use outside of pods. Instead, tokens can be requested "
        "directly using the TokenRequest API, or service account token secrets can be "
        "manually created. More info: "
        "https://kubernetes.io/docs/concepts/configuration/secret"
    ),
    "ConfigMap.data": (
        "Data contains the configuration data. Each key must consist of alphanumeric "
        "characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the "
        "BinaryData field. The keys stored in Data must not overlap with the keys in the "
        "BinaryData field, this is enforced during validation process."
    ),
    "DeploymentStatus.updatedReplicas": (
        "Total number of non-terminated pods targeted by this deployment that have the "
        "desired template spec."
    ),
    "DeploymentStatus.availableReplicas": (
        "Total number of available pods (ready for at least minReadySeconds) targeted by "
        "this deployment."
    ),
    "DeploymentSpec.selector": (
        "Label selector for pods. Existing ReplicaSets whose pods are selected by this "
        "will be the ones affected by this deployment."
    ),
    "ReplicaSetSpec.replicas": (
        "Replicas is the number of desired replicas. This is a pointer to distinguish "
        "between explicit zero and unspecified. Defaults to 1. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/"
        "#what-is-a-replicationcontroller"
    ),
    "ReplicaSetStatus.replicas": (
        "Replicas is the most recently observed number of replicas. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/"
        "#what-is-a-replicationcontroller"
    ),
    "ReplicaSetStatus.readyReplicas": ("The number of ready replicas for this replica set."),
    "ReplicaSetSpec.selector": (
        "Selector is a label query over pods that should match the replica count. If the "
        "selector is empty, it is defaulted to the labels present on the pod template. "
        "Label keys and values that must match in order to be controlled by this replica "
        "set. More info: https://kubernetes.io/docs/concepts/overview/working-with-object"
        "s/labels/#label-selectors"
    ),
    "DaemonSetStatus.desiredNumberScheduled": (
        "The total number of nodes that should be running the daemon pod (including "
        "nodes correctly running the daemon pod). More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"
    ),
    "DaemonSetStatus.currentNumberScheduled": (
        "The number of nodes that are running at least 1 daemon pod and are supposed to "
        "run the daemon pod. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"
    ),
    "DaemonSetStatus.numberReady": (
        "The number of nodes that should be running the daemon pod and have one or more "
        "of the daemon pod running and ready."
    ),
    "DaemonSetStatus.updatedNumberScheduled": (
        "The total number of nodes that are running updated daemon pod"
    ),
    "DaemonSetStatus.numberAvailable": (
        "The number of nodes that should be running the daemon pod and have one or more "
        "of the daemon pod running and available (ready for at least "
        "spec.minReadySeconds)"
    ),
    "PodSpec.nodeSelector": (
        "NodeSelector is a selector which must be true for the pod to fit on a node. "
        "Selector which must match a node's labels for the pod to be scheduled on that "
        "node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-no"
        "de/"
    ),
    "DaemonSetSpec.selector": (
        "A label query over pods that are managed by the daemon set. Must match in order "
        "to be controlled. If empty, defaulted to labels on Pod template. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-"
        "selectors"
    ),
    "ControllerRevision.revision": (
        "revision indicates the revision of the state represented by Data."
    ),
    "LeaseSpec.holderIdentity": (
        "holderIdentity contains the identity of the holder of a current lease. If "
        "Coordinated Leader Election is used, the holder identity must be equal to the "
        "elected LeaseCandidate.metadata.name field."
    ),
}


_clock: Callable[[], float] = time.time


def set_clock(seconds: Callable[[], float]) -> Callable[[], float]:
    """
    Make L{age} measure against C{seconds()} (POSIX seconds, e.g. C{reactor.seconds}).

    @return: the previous clock, so that a caller (a test) can put it back.
    """
    global _clock
    previous, _clock = _clock, seconds
    return previous


def now() -> float:
    """The current time in POSIX seconds, from the clock given to L{set_clock}."""
    return _clock()


def age(timestamp: str | None) -> str:
    """
    Upstream C{translateTimestampSince}: C{HumanDuration(now - timestamp)} (C{5m}, C{3d4h}),
    or C{<unknown>} for a missing timestamp.

    @param timestamp: RFC 3339 text (C{metav1.Time} or C{metav1.MicroTime}), or C{None}.
    """
    return translate_timestamp_since(timestamp, now())


def column(name: str, type: str, description: str, format: str = "", priority: int = 0) -> dict:
    """
    One C{metav1.TableColumnDefinition}, as on the wire (all five keys always present).

    @param type: OpenAPI type: C{string}, C{integer}, C{number}, C{boolean}, C{date}.
    @param format: C{name} for the column holding the object name, else empty.
    @param priority: 0 for the default view, 1 for C{-o wide} only.
    """
    return {
        "name": name,
        "type": type,
        "format": format,
        "description": description,
        "priority": priority,
    }


def name_column(priority: int = 0) -> dict:
    """The C{Name} column every built-in printer starts with."""
    return column("Name", "string", SWAGGER_DOCS["ObjectMeta.name"], "name", priority)


def age_column() -> dict:
    """The C{Age} column (C{ObjectMeta.creationTimestamp}'s description)."""
    return column("Age", "string", SWAGGER_DOCS["ObjectMeta.creationTimestamp"])


def meta(obj: dict) -> dict:
    """C{obj["metadata"]}, or an empty dict."""
    return obj.get("metadata") or {}


def obj_name(obj: dict) -> str:
    """C{metadata.name}, or C{""}."""
    return meta(obj).get("name") or ""


def obj_age(obj: dict) -> str:
    """The C{Age} cell of C{obj}: L{age} of C{metadata.creationTimestamp}."""
    return age(meta(obj).get("creationTimestamp"))


def format_labels(labels: dict | None) -> str:
    """
    Upstream C{labels.FormatLabels}: C{a=b,c=d} with keys sorted, C{<none>} when empty.
    """
    if not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def layout_container_cells(containers: list | None) -> tuple[str, str]:
    """
    Upstream C{layoutContainerCells}: the comma-joined names and images of C{containers}.

    @return: C{(names, images)}, both C{""} for no containers.
    """
    containers = containers or []
    names = ",".join((c or {}).get("name") or "" for c in containers)
    images = ",".join((c or {}).get("image") or "" for c in containers)
    return names, images


def pod_template_containers(obj: dict) -> list:
    """C{spec.template.spec.containers} of a workload, or an empty list."""
    spec = obj.get("spec") or {}
    template = spec.get("template") or {}
    return (template.get("spec") or {}).get("containers") or []


def int_cell(value: Any) -> int:
    """An C{int64} cell: the integer, 0 when absent."""
    return int(value or 0)


#: Upstream C{rest.NewDefaultTableConvertor} columns: C{Name} and C{Created At}.
DEFAULT_TABLE_COLUMNS: list[dict] = [
    column("Name", "string", SWAGGER_DOCS["ObjectMeta.name"], "name"),
    column("Created At", "date", SWAGGER_DOCS["ObjectMeta.creationTimestamp"]),
]


def default_row(obj: dict) -> list:
    """
    Row of the default table: the name and C{creationTimestamp} as RFC 3339 UTC text
    (C{0001-01-01T00:00:00Z} when unset, as Go prints a zero C{time.Time}).
    """
    created = meta(obj).get("creationTimestamp") or "0001-01-01T00:00:00Z"
    return [obj_name(obj), _rfc3339_seconds(created)]


def _rfc3339_seconds(ts: str) -> str:
    """Re-print a timestamp the way C{t.UTC().Format(time.RFC3339)} does (whole seconds, Z)."""
    import datetime

    text = ts.strip()
    try:
        parsed = datetime.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return ts
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    parsed = parsed.astimezone(datetime.UTC)
    return f"{parsed.year:04d}-" + parsed.strftime("%m-%dT%H:%M:%SZ")


#: The table of resources without printer columns of their own.
DEFAULT_TABLE = TableConvertor(columns=DEFAULT_TABLE_COLUMNS, row=default_row)
