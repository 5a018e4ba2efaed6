# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/api/autoscaling/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.autoscaling.v1}).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.autoscaling.v1"

GROUP = "autoscaling"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "Scale",
    "HorizontalPodAutoscaler",
    "HorizontalPodAutoscalerList",
)

#: Struct-level markers (C{+structType=atomic}): type name -> struct type.
STRUCT_TYPES = {
    "CrossVersionObjectReference": "atomic",
}

TYPES = {
    "CrossVersionObjectReference": (
        ("kind", 1, "string", "r"),
        ("name", 2, "string", "r"),
        ("apiVersion", 3, "string", "o"),
    ),
    "HorizontalPodAutoscaler": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "HorizontalPodAutoscalerSpec", "o"),
        ("status", 3, "HorizontalPodAutoscalerStatus", "o"),
    ),
    "HorizontalPodAutoscalerList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]HorizontalPodAutoscaler", "r"),
    ),
    "HorizontalPodAutoscalerSpec": (
        ("scaleTargetRef", 1, "CrossVersionObjectReference", "r"),
        ("minReplicas", 2, "*int32", "o"),
        ("maxReplicas", 3, "int32", "r"),
        ("targetCPUUtilizationPercentage", 4, "*int32", "o"),
    ),
    "HorizontalPodAutoscalerStatus": (
        ("observedGeneration", 1, "*int64", "o"),
        ("lastScaleTime", 2, "*Time", "o"),
        ("currentReplicas", 3, "int32", "r"),
        ("desiredReplicas", 4, "int32", "r"),
        ("currentCPUUtilizationPercentage", 5, "*int32", "o"),
    ),
    "Scale": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "ScaleSpec", "o"),
        ("status", 3, "ScaleStatus", "o"),
    ),
    "ScaleSpec": (
        ("replicas", 1, "int32", "o"),
    ),
    "ScaleStatus": (
        ("replicas", 1, "int32", "r"),
        ("selector", 2, "string", "o"),
    ),
}
