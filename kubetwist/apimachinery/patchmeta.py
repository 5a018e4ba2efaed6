# -*- test-case-name: tests.apimachinery.test_strategicpatch -*-
"""
Strategic-merge-patch metadata: the C{patchStrategy} / C{patchMergeKey} struct tags of
upstream C{k8s.io/api} (core/v1, apps/v1, batch/v1, policy/v1, autoscaling/v2,
coordination/v1) and C{metav1.ObjectMeta}, as data, plus the lookup that
C{k8s.io/apimachinery/pkg/util/strategicpatch} performs over Go structs
(C{PatchMetaFromStruct}).

Only the paths that lead to a tagged field are recorded: a field absent from the table has
no strategy (maps merge, lists are replaced whole), exactly what an untagged struct field
gives upstream.
"""

from __future__ import annotations

__all__ = ["PatchMeta", "patch_meta_for", "TYPES", "ROOTS"]

M = "merge"
MR = "merge,retainKeys"
R = "retainKeys"

#: type name -> {json field: (patchStrategy, patchMergeKey, element/field type or None)}
TYPES: dict[str, dict[str, tuple[str, str, str | None]]] = {
    # metav1
    "ObjectMeta": {
        "ownerReferences": (M, "uid", None),
        "finalizers": (M, "", None),
    },
    # core/v1
    "PodTemplateSpec": {"metadata": ("", "", "ObjectMeta"), "spec": ("", "", "PodSpec")},
    "PodSpec": {
        "volumes": (MR, "name", "Volume"),
        "initContainers": (M, "name", "Container"),
        "containers": (M, "name", "Container"),
        "ephemeralContainers": (M, "name", "Container"),
        "imagePullSecrets": (M, "name", None),
        "hostAliases": (M, "ip", None),
        "topologySpreadConstraints": (M, "topologyKey", None),
        "schedulingGates": (M, "name", None),
        "resourceClaims": (MR, "name", None),
    },
    "Volume": {"ephemeral": ("", "", "EphemeralVolumeSource")},
    "EphemeralVolumeSource": {"volumeClaimTemplate": ("", "", "PersistentVolumeClaimTemplate")},
    "PersistentVolumeClaimTemplate": {"metadata": ("", "", "ObjectMeta")},
    "Container": {
        "ports": (M, "containerPort", None),
        "env": (M, "name", None),
        "volumeMounts": (M, "mountPath", None),
        "volumeDevices": (M, "devicePath", None),
    },
    "ContainerStatus": {
        "volumeMounts": (M, "mountPath", None),
        "allocatedResourcesStatus": (M, "name", None),
    },
    "PodStatus": {
        "conditions": (M, "type", None),
        "hostIPs": (M, "ip", None),
        "podIPs": (M, "ip", None),
        "resourceClaimStatuses": (MR, "name", None),
    },
    "PersistentVolumeClaimStatus": {"conditions": (M, "type", None)},
    "ReplicationControllerSpec": {"template": ("", "", "PodTemplateSpec")},
    "ReplicationControllerStatus": {"conditions": (M, "type", None)},
    "ServiceSpec": {"ports": (M, "port", None)},
    "ServiceStatus": {"conditions": (M, "type", None)},
    "NodeSpec": {"podCIDRs": (M, "", None)},
    "NodeStatus": {"conditions": (M, "type", None), "addresses": (M, "type", None)},
    "NamespaceStatus": {"conditions": (M, "type", None)},
    # apps/v1
    "DeploymentSpec": {
        "template": ("", "", "PodTemplateSpec"),
        "strategy": (R, "", None),
    },
    "DeploymentStatus": {"conditions": (M, "type", None)},
    "ReplicaSetSpec": {"template": ("", "", "PodTemplateSpec")},
    "ReplicaSetStatus": {"conditions": (M, "type", None)},
    "StatefulSetSpec": {"template": ("", "", "PodTemplateSpec")},
    "StatefulSetStatus": {"conditions": (M, "type", None)},
    "DaemonSetSpec": {"template": ("", "", "PodTemplateSpec")},
    "DaemonSetStatus": {"conditions": (M, "type", None)},
    # batch/v1
    "JobSpec": {"template": ("", "", "PodTemplateSpec")},
    "JobStatus": {"conditions": (M, "type", None)},
    "CronJobSpec": {"jobTemplate": ("", "", "JobTemplateSpec")},
    "JobTemplateSpec": {"metadata": ("", "", "ObjectMeta"), "spec": ("", "", "JobSpec")},
    # policy/v1
    "PodDisruptionBudgetSpec": {"selector": ("replace", "", None)},
    "PodDisruptionBudgetStatus": {"conditions": (M, "type", None)},
    # autoscaling/v2
    "HorizontalPodAutoscalerStatus": {"conditions": (M, "type", None)},
}


def _root(spec: str | None = None, status: str | None = None, **extra: str) -> dict:
    fields: dict[str, tuple[str, str, str | None]] = {"metadata": ("", "", "ObjectMeta")}
    if spec:
        fields["spec"] = ("", "", spec)
    if status:
        fields["status"] = ("", "", status)
    for k, v in extra.items():
        fields[k] = v  # type: ignore[assignment]
    return fields


#: (group, kind) -> root type fields.
ROOTS: dict[tuple[str, str], dict[str, tuple[str, str, str | None]]] = {
    ("", "Pod"): _root("PodSpec", "PodStatus"),
    ("", "PodTemplate"): _root(template=("", "", "PodTemplateSpec")),
    ("", "ReplicationController"): _root("ReplicationControllerSpec", "ReplicationControllerStatus"),
    ("", "Service"): _root("ServiceSpec", "ServiceStatus"),
    ("", "Node"): _root("NodeSpec", "NodeStatus"),
    ("", "Namespace"): _root(None, "NamespaceStatus"),
    ("", "PersistentVolumeClaim"): _root(None, "PersistentVolumeClaimStatus"),
    ("", "ServiceAccount"): _root(secrets=(M, "name", None)),
    ("", "ConfigMap"): _root(),
    ("", "Secret"): _root(),
    ("", "Endpoints"): _root(),
    ("", "Event"): _root(),
    ("", "LimitRange"): _root(),
    ("", "ResourceQuota"): _root(),
    ("", "PersistentVolume"): _root(),
    ("", "Binding"): _root(),
    ("", "ComponentStatus"): _root(conditions=(M, "type", None)),
    ("apps", "Deployment"): _root("DeploymentSpec", "DeploymentStatus"),
    ("apps", "ReplicaSet"): _root("ReplicaSetSpec", "ReplicaSetStatus"),
    ("apps", "StatefulSet"): _root("StatefulSetSpec", "StatefulSetStatus"),
    ("apps", "DaemonSet"): _root("DaemonSetSpec", "DaemonSetStatus"),
    ("apps", "ControllerRevision"): _root(),
    ("batch", "Job"): _root("JobSpec", "JobStatus"),
    ("batch", "CronJob"): _root("CronJobSpec"),
    ("policy", "PodDisruptionBudget"): _root("PodDisruptionBudgetSpec", "PodDisruptionBudgetStatus"),
    ("autoscaling", "HorizontalPodAutoscaler"): _root(None, "HorizontalPodAutoscalerStatus"),
    ("autoscaling", "Scale"): _root(),
    ("coordination.k8s.io", "Lease"): _root(),
}


class PatchMeta:
    """
    The strategic-merge metadata of one struct type (upstream C{LookupPatchMeta}).

    @ivar name: the type's name (used in error messages).
    """

    __slots__ = ("name", "_fields")

    def __init__(self, name: str, fields: dict[str, tuple[str, str, str | None]] | None) -> None:
        self.name = name
        self._fields = fields or {}

    def _lookup(self, key: str) -> tuple["PatchMeta", list[str], str]:
        strategy, merge_key, child = self._fields.get(key, ("", "", None))
        sub = PatchMeta(child or "", TYPES.get(child) if child else None)
        strategies = strategy.split(",") if strategy else []
        return sub, strategies, merge_key

    def lookup_struct(self, key: str) -> tuple["PatchMeta", list[str], str]:
        """C{LookupPatchMetadataForStruct}: C{(subschema, strategies, merge key)}."""
        return self._lookup(key)

    def lookup_slice(self, key: str) -> tuple["PatchMeta", list[str], str]:
        """C{LookupPatchMetadataForSlice}: C{(element schema, strategies, merge key)}."""
        return self._lookup(key)

    def __repr__(self) -> str:
        return f"PatchMeta({self.name!r})"


def patch_meta_for(group: str, kind: str) -> PatchMeta | None:
    """
    The root metadata for a built-in kind, or None for kinds without Go types (custom
    resources, for which kube-apiserver refuses strategic merge patch with 415).
    """
    fields = ROOTS.get((group, kind))
    if fields is None:
        return None
    return PatchMeta(kind, fields)
