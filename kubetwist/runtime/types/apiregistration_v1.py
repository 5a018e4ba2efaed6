# -*- test-case-name: tests.runtime.test_protobuf_kinds -*-
"""
Field tables of C{k8s.io/kube-aggregator/pkg/apis/apiregistration/v1} as of Kubernetes v1.32
(protobuf package C{k8s.io.kube_aggregator.pkg.apis.apiregistration.v1}; OpenAPI names
C{io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.*}).

Data only; the row format is described in L{kubetwist.runtime.types}.  Served in protobuf
only for now (see L{kubetwist.runtime.types.PROTOBUF_KINDS}).
"""

PACKAGE = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1"

GROUP = "apiregistration.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "APIService",
    "APIServiceList",
)

#: Served in protobuf only: the other readers of the tables do not see these kinds yet.
PROTOBUF_ONLY = True

TYPES = {
    "APIService": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "APIServiceSpec", "o"),
        ("status", 3, "APIServiceStatus", "o"),
    ),
    "APIServiceCondition": (
        ("type", 1, "string", "r"),
        ("status", 2, "string", "r"),
        ("lastTransitionTime", 3, "Time", "o"),
        ("reason", 4, "string", "o"),
        ("message", 5, "string", "o"),
    ),
    "APIServiceList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]APIService", "r"),
    ),
    "APIServiceSpec": (
        ("service", 1, "*ServiceReference", "o"),
        ("group", 2, "string", "o"),
        ("version", 3, "string", "o"),
        ("insecureSkipTLSVerify", 4, "bool", "o"),
        ("caBundle", 5, "bytes", "o", {"list_type": "atomic"}),
        ("groupPriorityMinimum", 7, "int32", "r"),
        ("versionPriority", 8, "int32", "r"),
    ),
    "APIServiceStatus": (
        ("conditions", 1, "[]APIServiceCondition", "o", {
            "patch_strategy": "merge",
            "patch_merge_key": "type",
            "list_type": "map",
            "list_map_keys": ("type",),
        }),
    ),
    "ServiceReference": (
        ("namespace", 1, "string", "o"),
        ("name", 2, "string", "o"),
        ("port", 3, "*int32", "o"),
    ),
}
