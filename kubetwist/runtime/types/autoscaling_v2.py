# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/api/autoscaling/v2} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.autoscaling.v2}).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.autoscaling.v2"

GROUP = "autoscaling"
VERSION = "v2"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "HorizontalPodAutoscaler",
    "HorizontalPodAutoscalerList",
)

TYPES = {
    "ContainerResourceMetricSource": (
        ("name", 1, "string", "r"),
        ("target", 2, "MetricTarget", "r"),
        ("container", 3, "string", "r"),
    ),
    "ContainerResourceMetricStatus": (
        ("name", 1, "string", "r"),
        ("current", 2, "MetricValueStatus", "r"),
        ("container", 3, "string", "r"),
    ),
    "CrossVersionObjectReference": (
        ("kind", 1, "string", "r"),
        ("name", 2, "string", "r"),
        ("apiVersion", 3, "string", "o"),
    ),
    "ExternalMetricSource": (
        ("metric", 1, "MetricIdentifier", "r"),
        ("target", 2, "MetricTarget", "r"),
    ),
    "ExternalMetricStatus": (
        ("metric", 1, "MetricIdentifier", "r"),
        ("current", 2, "MetricValueStatus", "r"),
    ),
    "HPAScalingPolicy": (
        ("type", 1, "string", "r"),
        ("value", 2, "int32", "r"),
        ("periodSeconds", 3, "int32", "r"),
    ),
    "HPAScalingRules": (
        ("stabilizationWindowSeconds", 3, "*int32", "o"),
        ("selectPolicy", 1, "*string", "o"),
        ("policies", 2, "[]HPAScalingPolicy", "o", {"list_type": "atomic"}),
    ),
    "HorizontalPodAutoscaler": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "HorizontalPodAutoscalerSpec", "o"),
        ("status", 3, "HorizontalPodAutoscalerStatus", "o"),
    ),
    "HorizontalPodAutoscalerBehavior": (
        ("scaleUp", 1, "*HPAScalingRules", "o"),
        ("scaleDown", 2, "*HPAScalingRules", "o"),
    ),
    "HorizontalPodAutoscalerCondition": (
        ("type", 1, "string", "r"),
        ("status", 2, "string", "r"),
        ("lastTransitionTime", 3, "Time", "o"),
        ("reason", 4, "string", "o"),
        ("message", 5, "string", "o"),
    ),
    "HorizontalPodAutoscalerList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]HorizontalPodAutoscaler", "r"),
    ),
    "HorizontalPodAutoscalerSpec": (
        ("scaleTargetRef", 1, "CrossVersionObjectReference", "r"),
        ("minReplicas", 2, "*int32", "o"),
        ("maxReplicas", 3, "int32", "r"),
        ("metrics", 4, "[]MetricSpec", "o", {"list_type": "atomic"}),
        ("behavior", 5, "*HorizontalPodAutoscalerBehavior", "o"),
    ),
    "HorizontalPodAutoscalerStatus": (
        ("observedGeneration", 1, "*int64", "o"),
        ("lastScaleTime", 2, "*Time", "o"),
        ("currentReplicas", 3, "int32", "o"),
        ("desiredReplicas", 4, "int32", "r"),
        ("currentMetrics", 5, "[]MetricStatus", "", {"list_type": "atomic"}),
        ("conditions", 6, "[]HorizontalPodAutoscalerCondition", "o", {
            "patch_strategy": "merge", "patch_merge_key": "type", "list_type": "map",
            "list_map_keys": ("type",)}),
    ),
    "MetricIdentifier": (
        ("name", 1, "string", "r"),
        ("selector", 2, "*meta.LabelSelector", "o"),
    ),
    "MetricSpec": (
        ("type", 1, "string", "r"),
        ("object", 2, "*ObjectMetricSource", "o"),
        ("pods", 3, "*PodsMetricSource", "o"),
        ("resource", 4, "*ResourceMetricSource", "o"),
        ("containerResource", 7, "*ContainerResourceMetricSource", "o"),
        ("external", 5, "*ExternalMetricSource", "o"),
    ),
    "MetricStatus": (
        ("type", 1, "string", "r"),
        ("object", 2, "*ObjectMetricStatus", "o"),
        ("pods", 3, "*PodsMetricStatus", "o"),
        ("resource", 4, "*ResourceMetricStatus", "o"),
        ("containerResource", 7, "*ContainerResourceMetricStatus", "o"),
        ("external", 5, "*ExternalMetricStatus", "o"),
    ),
    "MetricTarget": (
        ("type", 1, "string", "r"),
        ("value", 2, "*Quantity", "o"),
        ("averageValue", 3, "*Quantity", "o"),
        ("averageUtilization", 4, "*int32", "o"),
    ),
    "MetricValueStatus": (
        ("value", 1, "*Quantity", "o"),
        ("averageValue", 2, "*Quantity", "o"),
        ("averageUtilization", 3, "*int32", "o"),
    ),
    "ObjectMetricSource": (
        ("describedObject", 1, "CrossVersionObjectReference", "r"),
        ("target", 2, "MetricTarget", "r"),
        ("metric", 3, "MetricIdentifier", "r"),
    ),
    "ObjectMetricStatus": (
        ("metric", 1, "MetricIdentifier", "r"),
        ("current", 2, "MetricValueStatus", "r"),
        ("describedObject", 3, "CrossVersionObjectReference", "r"),
    ),
    "PodsMetricSource": (
        ("metric", 1, "MetricIdentifier", "r"),
        ("target", 2, "MetricTarget", "r"),
    ),
    "PodsMetricStatus": (
        ("metric", 1, "MetricIdentifier", "r"),
        ("current", 2, "MetricValueStatus", "r"),
    ),
    "ResourceMetricSource": (
        ("name", 1, "string", "r"),
        ("target", 2, "MetricTarget", "r"),
    ),
    "ResourceMetricStatus": (
        ("name", 1, "string", "r"),
        ("current", 2, "MetricValueStatus", "r"),
    ),
}
