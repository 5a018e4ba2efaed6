# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/api/rbac/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.rbac.v1}).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.rbac.v1"

GROUP = "rbac.authorization.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
)

#: Struct-level markers (C{+structType=atomic}): type name -> struct type.
STRUCT_TYPES = {
    "RoleRef": "atomic",
    "Subject": "atomic",
}

TYPES = {
    "AggregationRule": (
        ("clusterRoleSelectors", 1, "[]meta.LabelSelector", "o", {"list_type": "atomic"}),
    ),
    "ClusterRole": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("rules", 2, "[]PolicyRule", "", {"list_type": "atomic"}),
        ("aggregationRule", 3, "*AggregationRule", "o"),
    ),
    "ClusterRoleBinding": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("subjects", 2, "[]Subject", "o", {"list_type": "atomic"}),
        ("roleRef", 3, "RoleRef", "r"),
    ),
    "ClusterRoleBindingList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]ClusterRoleBinding", "r"),
    ),
    "ClusterRoleList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]ClusterRole", "r"),
    ),
    "PolicyRule": (
        ("verbs", 1, "[]string", "r", {"list_type": "atomic"}),
        ("apiGroups", 2, "[]string", "o", {"list_type": "atomic"}),
        ("resources", 3, "[]string", "o", {"list_type": "atomic"}),
        ("resourceNames", 4, "[]string", "o", {"list_type": "atomic"}),
        ("nonResourceURLs", 5, "[]string", "o", {"list_type": "atomic"}),
    ),
    "Role": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("rules", 2, "[]PolicyRule", "", {"list_type": "atomic"}),
    ),
    "RoleBinding": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("subjects", 2, "[]Subject", "o", {"list_type": "atomic"}),
        ("roleRef", 3, "RoleRef", "r"),
    ),
    "RoleBindingList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]RoleBinding", "r"),
    ),
    "RoleList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]Role", "r"),
    ),
    "RoleRef": (
        ("apiGroup", 1, "string", "r"),
        ("kind", 2, "string", "r"),
        ("name", 3, "string", "r"),
    ),
    "Subject": (
        ("kind", 1, "string", "r"),
        ("apiGroup", 2, "string", "o"),
        ("name", 3, "string", "r"),
        ("namespace", 4, "string", "o"),
    ),
}
