# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/api/scheduling/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.scheduling.v1}).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.scheduling.v1"

GROUP = "scheduling.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "PriorityClass",
    "PriorityClassList",
)

TYPES = {
    "PriorityClass": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("value", 2, "int32", "r"),
        ("globalDefault", 3, "bool", "o"),
        ("description", 4, "string", "o"),
        ("preemptionPolicy", 5, "*string", "o", {"enum": "core.PreemptionPolicy"}),
    ),
    "PriorityClassList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]PriorityClass", "r"),
    ),
}
