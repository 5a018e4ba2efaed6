# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/api/node/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.node.v1}).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.node.v1"

GROUP = "node.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "RuntimeClass",
    "RuntimeClassList",
)

TYPES = {
    "Overhead": (
        ("podFixed", 1, "map[string]Quantity", "o"),
    ),
    "RuntimeClass": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("handler", 2, "string", "r"),
        ("overhead", 3, "*Overhead", "o"),
        ("scheduling", 4, "*Scheduling", "o"),
    ),
    "RuntimeClassList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]RuntimeClass", "r"),
    ),
    "Scheduling": (
        ("nodeSelector", 1, "map[string]string", "o", {"map_type": "atomic"}),
        ("tolerations", 2, "[]core.Toleration", "o", {"list_type": "atomic"}),
    ),
}
