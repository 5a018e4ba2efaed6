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
        ("name", 1, "string", ""),
        ("target", 2, "MetricTarget", ""),
        ("container", 3, "string", ""),
    ),
    "ContainerResourceMetricStatus": (
        ("name", 1, "string", ""),
        ("current", 2, "MetricValueStatus", ""),
        ("container", 3, "string", ""),
    ),
    "CrossVersionObjectReference": (
        ("kind", 1, "string", ""),
        ("name", 2, "string", ""),
        ("apiVersion", 3, "string", "o"),
    ),
    "ExternalMetricSource": (
        ("metric", 1, "MetricIdentifier", ""),
        ("target", 2, "MetricTarget", ""),
    ),
    "ExternalMetricStatus": (
        ("metric", 1, "MetricIdentifier", ""),
        ("current", 2, "MetricValueStatus", ""),
    ),
    "HPAScalingPolicy": (
        ("type", 1, "string", ""),
        ("value", 2, "int32", ""),
        ("periodSeconds", 3, "int32", ""),
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
        ("type", 1, "string", ""),
        ("status", 2, "string", ""),
        ("lastTransitionTime", 3, "Time", "o"),
        ("reason", 4, "string", "o"),
        ("message", 5, "string", "o"),
    ),
    "HorizontalPodAutoscalerList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]HorizontalPodAutoscaler", ""),
    ),
    "HorizontalPodAutoscalerSpec": (
        ("scaleTargetRef", 1, "CrossVersionObjectReference", ""),
        ("minReplicas", 2, "*int32", "o"),
        ("maxReplicas", 3, "int32", ""),
        ("metrics", 4, "[]MetricSpec", "o", {"list_type": "atomic"}),
        ("behavior", 5, "*HorizontalPodAutoscalerBehavior", "o"),
    ),
    "HorizontalPodAutoscalerStatus": (
        ("observedGeneration", 1, "*int64", "o"),
        ("lastScaleTime", 2, "*Time", "o"),
        ("currentReplicas", 3, "int32", "o"),
        ("desiredReplicas", 4, "int32", ""),
        ("currentMetrics", 5, "[]MetricStatus", "", {"list_type": "atomic"}),
        ("conditions", 6, "[]HorizontalPodAutoscalerCondition", "o", {"patch_strategy": "merge", "patch_merge_key": "type", "list_type": "map", "list_map_keys": ("type",)}),
    ),
    "MetricIdentifier": (
        ("name", 1, "string", ""),
        ("selector", 2, "*meta.LabelSelector", "o"),
    ),
    "MetricSpec": (
        ("type", 1, "string", ""),
        ("object", 2, "*ObjectMetricSource", "o"),
        ("pods", 3, "*PodsMetricSource", "o"),
        ("resource", 4, "*ResourceMetricSource", "o"),
        ("containerResource", 7, "*ContainerResourceMetricSource", "o"),
        ("external", 5, "*ExternalMetricSource", "o"),
    ),
    "MetricStatus": (
        ("type", 1, "string", ""),
        ("object", 2, "*ObjectMetricStatus", "o"),
        ("pods", 3, "*PodsMetricStatus", "o"),
        ("resource", 4, "*ResourceMetricStatus", "o"),
        ("containerResource", 7, "*ContainerResourceMetricStatus", "o"),
        ("external", 5, "*ExternalMetricStatus", "o"),
    ),
    "MetricTarget": (
        ("type", 1, "string", ""),
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
        ("describedObject", 1, "CrossVersionObjectReference", ""),
        ("target", 2, "MetricTarget", ""),
        ("metric", 3, "MetricIdentifier", ""),
    ),
    "ObjectMetricStatus": (
        ("metric", 1, "MetricIdentifier", ""),
        ("current", 2, "MetricValueStatus", ""),
        ("describedObject", 3, "CrossVersionObjectReference", ""),
    ),
    "PodsMetricSource": (
        ("metric", 1, "MetricIdentifier", ""),
        ("target", 2, "MetricTarget", ""),
    ),
    "PodsMetricStatus": (
        ("metric", 1, "MetricIdentifier", ""),
        ("current", 2, "MetricValueStatus", ""),
    ),
    "ResourceMetricSource": (
        ("name", 1, "string", ""),
        ("target", 2, "MetricTarget", ""),
    ),
    "ResourceMetricStatus": (
        ("name", 1, "string", ""),
        ("current", 2, "MetricValueStatus", ""),
    ),
}
