# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/api/policy/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.policy.v1}).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.policy.v1"

GROUP = "policy"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "PodDisruptionBudget",
    "PodDisruptionBudgetList",
    "Eviction",
)

#: C{+enum} string types: name -> the values of their constants, sorted (OpenAPI
#: C{enum} on fields of that type).
ENUMS = {
    "UnhealthyPodEvictionPolicyType": ("AlwaysAllow", "IfHealthyBudget"),
}

TYPES = {
    "Eviction": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("deleteOptions", 2, "*meta.DeleteOptions", "o"),
    ),
    "PodDisruptionBudget": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "PodDisruptionBudgetSpec", "o"),
        ("status", 3, "PodDisruptionBudgetStatus", "o"),
    ),
    "PodDisruptionBudgetList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]PodDisruptionBudget", "r"),
    ),
    "PodDisruptionBudgetSpec": (
        ("minAvailable", 1, "*IntOrString", "o"),
        ("selector", 2, "*meta.LabelSelector", "o", {"patch_strategy": "replace"}),
        ("maxUnavailable", 3, "*IntOrString", "o"),
        ("unhealthyPodEvictionPolicy", 4, "*string", "o",
         {"enum": "UnhealthyPodEvictionPolicyType"}),
    ),
    "PodDisruptionBudgetStatus": (
        ("observedGeneration", 1, "int64", "o"),
        ("disruptedPods", 2, "map[string]Time", "o"),
        ("disruptionsAllowed", 3, "int32", "r"),
        ("currentHealthy", 4, "int32", "r"),
        ("desiredHealthy", 5, "int32", "r"),
        ("expectedPods", 6, "int32", "r"),
        ("conditions", 7, "[]meta.Condition", "o", {
            "patch_strategy": "merge",
            "patch_merge_key": "type",
            "list_type": "map",
            "list_map_keys": ("type",),
        }),
    ),
}
