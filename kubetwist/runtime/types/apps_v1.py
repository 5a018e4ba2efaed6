# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/api/apps/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.apps.v1}).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.apps.v1"

GROUP = "apps"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "Deployment",
    "DeploymentList",
    "ReplicaSet",
    "ReplicaSetList",
    "StatefulSet",
    "StatefulSetList",
    "DaemonSet",
    "DaemonSetList",
    "ControllerRevision",
    "ControllerRevisionList",
)

#: C{+enum} string types: name -> the values of their constants, sorted (OpenAPI
#: C{enum} on fields of that type).
ENUMS = {
    "DaemonSetUpdateStrategyType": ("OnDelete", "RollingUpdate"),
    "DeploymentStrategyType": ("Recreate", "RollingUpdate"),
    "PodManagementPolicyType": ("OrderedReady", "Parallel"),
    "StatefulSetUpdateStrategyType": ("OnDelete", "RollingUpdate"),
}

TYPES = {
    "ControllerRevision": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("data", 2, "RawExtension", "o"),
        ("revision", 3, "int64", "r"),
    ),
    "ControllerRevisionList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]ControllerRevision", "r"),
    ),
    "DaemonSet": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "DaemonSetSpec", "o"),
        ("status", 3, "DaemonSetStatus", "o"),
    ),
    "DaemonSetCondition": (
        ("type", 1, "string", "r"),
        ("status", 2, "string", "r"),
        ("lastTransitionTime", 3, "Time", "o"),
        ("reason", 4, "string", "o"),
        ("message", 5, "string", "o"),
    ),
    "DaemonSetList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]DaemonSet", "r"),
    ),
    "DaemonSetSpec": (
        ("selector", 1, "*meta.LabelSelector", "r"),
        ("template", 2, "core.PodTemplateSpec", "r"),
        ("updateStrategy", 3, "DaemonSetUpdateStrategy", "o"),
        ("minReadySeconds", 4, "int32", "o"),
        ("revisionHistoryLimit", 6, "*int32", "o"),
    ),
    "DaemonSetStatus": (
        ("currentNumberScheduled", 1, "int32", "r"),
        ("numberMisscheduled", 2, "int32", "r"),
        ("desiredNumberScheduled", 3, "int32", "r"),
        ("numberReady", 4, "int32", "r"),
        ("observedGeneration", 5, "int64", "o"),
        ("updatedNumberScheduled", 6, "int32", "o"),
        ("numberAvailable", 7, "int32", "o"),
        ("numberUnavailable", 8, "int32", "o"),
        ("collisionCount", 9, "*int32", "o"),
        ("conditions", 10, "[]DaemonSetCondition", "o", {
            "patch_strategy": "merge",
            "patch_merge_key": "type",
            "list_type": "map",
            "list_map_keys": ("type",),
        }),
    ),
    "DaemonSetUpdateStrategy": (
        ("type", 1, "string", "o", {"enum": "DaemonSetUpdateStrategyType"}),
        ("rollingUpdate", 2, "*RollingUpdateDaemonSet", "o"),
    ),
    "Deployment": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "DeploymentSpec", "o"),
        ("status", 3, "DeploymentStatus", "o"),
    ),
    "DeploymentCondition": (
        ("type", 1, "string", "r"),
        ("status", 2, "string", "r"),
        ("lastUpdateTime", 6, "Time", "o"),
        ("lastTransitionTime", 7, "Time", "o"),
        ("reason", 4, "string", "o"),
        ("message", 5, "string", "o"),
    ),
    "DeploymentList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]Deployment", "r"),
    ),
    "DeploymentSpec": (
        ("replicas", 1, "*int32", "o"),
        ("selector", 2, "*meta.LabelSelector", "r"),
        ("template", 3, "core.PodTemplateSpec", "r"),
        ("strategy", 4, "DeploymentStrategy", "o", {"patch_strategy": "retainKeys"}),
        ("minReadySeconds", 5, "int32", "o"),
        ("revisionHistoryLimit", 6, "*int32", "o"),
        ("paused", 7, "bool", "o"),
        ("progressDeadlineSeconds", 9, "*int32", "o"),
    ),
    "DeploymentStatus": (
        ("observedGeneration", 1, "int64", "o"),
        ("replicas", 2, "int32", "o"),
        ("updatedReplicas", 3, "int32", "o"),
        ("readyReplicas", 7, "int32", "o"),
        ("availableReplicas", 4, "int32", "o"),
        ("unavailableReplicas", 5, "int32", "o"),
        ("conditions", 6, "[]DeploymentCondition", "o", {
            "patch_strategy": "merge",
            "patch_merge_key": "type",
            "list_type": "map",
            "list_map_keys": ("type",),
        }),
        ("collisionCount", 8, "*int32", "o"),
    ),
    "DeploymentStrategy": (
        ("type", 1, "string", "o", {"enum": "DeploymentStrategyType"}),
        ("rollingUpdate", 2, "*RollingUpdateDeployment", "o"),
    ),
    "ReplicaSet": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "ReplicaSetSpec", "o"),
        ("status", 3, "ReplicaSetStatus", "o"),
    ),
    "ReplicaSetCondition": (
        ("type", 1, "string", "r"),
        ("status", 2, "string", "r"),
        ("lastTransitionTime", 3, "Time", "o"),
        ("reason", 4, "string", "o"),
        ("message", 5, "string", "o"),
    ),
    "ReplicaSetList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]ReplicaSet", "r"),
    ),
    "ReplicaSetSpec": (
        ("replicas", 1, "*int32", "o"),
        ("minReadySeconds", 4, "int32", "o"),
        ("selector", 2, "*meta.LabelSelector", "r"),
        ("template", 3, "core.PodTemplateSpec", "o"),
    ),
    "ReplicaSetStatus": (
        ("replicas", 1, "int32", "r"),
        ("fullyLabeledReplicas", 2, "int32", "o"),
        ("readyReplicas", 4, "int32", "o"),
        ("availableReplicas", 5, "int32", "o"),
        ("observedGeneration", 3, "int64", "o"),
        ("conditions", 6, "[]ReplicaSetCondition", "o", {
            "patch_strategy": "merge",
            "patch_merge_key": "type",
            "list_type": "map",
            "list_map_keys": ("type",),
        }),
    ),
    "RollingUpdateDaemonSet": (
        ("maxUnavailable", 1, "*IntOrString", "o"),
        ("maxSurge", 2, "*IntOrString", "o"),
    ),
    "RollingUpdateDeployment": (
        ("maxUnavailable", 1, "*IntOrString", "o"),
        ("maxSurge", 2, "*IntOrString", "o"),
    ),
    "RollingUpdateStatefulSetStrategy": (
        ("partition", 1, "*int32", "o"),
        ("maxUnavailable", 2, "*IntOrString", "o"),
    ),
    "StatefulSet": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "StatefulSetSpec", "o"),
        ("status", 3, "StatefulSetStatus", "o"),
    ),
    "StatefulSetCondition": (
        ("type", 1, "string", "r"),
        ("status", 2, "string", "r"),
        ("lastTransitionTime", 3, "Time", "o"),
        ("reason", 4, "string", "o"),
        ("message", 5, "string", "o"),
    ),
    "StatefulSetList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]StatefulSet", "r"),
    ),
    "StatefulSetOrdinals": (
        ("start", 1, "int32", ""),
    ),
    "StatefulSetPersistentVolumeClaimRetentionPolicy": (
        ("whenDeleted", 1, "string", "o"),
        ("whenScaled", 2, "string", "o"),
    ),
    "StatefulSetSpec": (
        ("replicas", 1, "*int32", "o"),
        ("selector", 2, "*meta.LabelSelector", "r"),
        ("template", 3, "core.PodTemplateSpec", "r"),
        ("volumeClaimTemplates", 4, "[]core.PersistentVolumeClaim", "o", {"list_type": "atomic"}),
        ("serviceName", 5, "string", "r"),
        ("podManagementPolicy", 6, "string", "o", {"enum": "PodManagementPolicyType"}),
        ("updateStrategy", 7, "StatefulSetUpdateStrategy", "o"),
        ("revisionHistoryLimit", 8, "*int32", "o"),
        ("minReadySeconds", 9, "int32", "o"),
        (
            "persistentVolumeClaimRetentionPolicy", 10,
            "*StatefulSetPersistentVolumeClaimRetentionPolicy", "o",
        ),
        ("ordinals", 11, "*StatefulSetOrdinals", "o"),
    ),
    "StatefulSetStatus": (
        ("observedGeneration", 1, "int64", "o"),
        ("replicas", 2, "int32", "r"),
        ("readyReplicas", 3, "int32", "o"),
        ("currentReplicas", 4, "int32", "o"),
        ("updatedReplicas", 5, "int32", "o"),
        ("currentRevision", 6, "string", "o"),
        ("updateRevision", 7, "string", "o"),
        ("collisionCount", 9, "*int32", "o"),
        ("conditions", 10, "[]StatefulSetCondition", "o", {
            "patch_strategy": "merge",
            "patch_merge_key": "type",
            "list_type": "map",
            "list_map_keys": ("type",),
        }),
        ("availableReplicas", 11, "int32", ""),
    ),
    "StatefulSetUpdateStrategy": (
        ("type", 1, "string", "o", {"enum": "StatefulSetUpdateStrategyType"}),
        ("rollingUpdate", 2, "*RollingUpdateStatefulSetStrategy", "o"),
    ),
}
