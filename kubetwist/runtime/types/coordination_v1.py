# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/api/coordination/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.coordination.v1}).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.coordination.v1"

GROUP = "coordination.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "Lease",
    "LeaseList",
)

TYPES = {
    "Lease": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "LeaseSpec", "o"),
    ),
    "LeaseList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]Lease", "r"),
    ),
    "LeaseSpec": (
        ("holderIdentity", 1, "*string", "o"),
        ("leaseDurationSeconds", 2, "*int32", "o"),
        ("acquireTime", 3, "*MicroTime", "o"),
        ("renewTime", 4, "*MicroTime", "o"),
        ("leaseTransitions", 5, "*int32", "o"),
        ("strategy", 6, "*string", "o"),
        ("preferredHolder", 7, "*string", "o"),
    ),
}
