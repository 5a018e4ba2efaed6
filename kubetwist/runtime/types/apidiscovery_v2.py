# -*- test-case-name: tests.runtime.test_protobuf_kinds -*-
"""
Field tables of C{k8s.io/api/apidiscovery/v2} as of Kubernetes v1.32 (protobuf package
C{io.k8s.api.apidiscovery.v2}): the aggregated discovery documents of C{/api} and C{/apis}
(C{Accept: ...;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList}).

Data only; the row format is described in L{kubetwist.runtime.types}.  C{v2beta1} has the
same shape (L{kubetwist.runtime.types.apidiscovery_v2beta1}).
"""

PACKAGE = "io.k8s.api.apidiscovery.v2"

GROUP = "apidiscovery.k8s.io"
VERSION = "v2"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "APIGroupDiscovery",
    "APIGroupDiscoveryList",
)

#: Served in protobuf only: the other readers of the tables do not see these kinds.
PROTOBUF_ONLY = True

TYPES = {
    "APIGroupDiscovery": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("versions", 2, "[]APIVersionDiscovery", "o", {"list_type": "atomic"}),
    ),
    "APIGroupDiscoveryList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]APIGroupDiscovery", "r", {"list_type": "atomic"}),
    ),
    "APIResourceDiscovery": (
        ("resource", 1, "string", "r"),
        ("responseKind", 2, "*meta.GroupVersionKind", "o"),
        ("scope", 3, "string", "r"),
        ("singularResource", 4, "string", "r"),
        ("verbs", 5, "[]string", "r", {"list_type": "set"}),
        ("shortNames", 6, "[]string", "o", {"list_type": "atomic"}),
        ("categories", 7, "[]string", "o", {"list_type": "atomic"}),
        ("subresources", 8, "[]APISubresourceDiscovery", "o", {"list_type": "atomic"}),
    ),
    "APISubresourceDiscovery": (
        ("subresource", 1, "string", "r"),
        ("responseKind", 2, "*meta.GroupVersionKind", "o"),
        ("acceptedTypes", 3, "[]meta.GroupVersionKind", "o", {"list_type": "atomic"}),
        ("verbs", 4, "[]string", "r", {"list_type": "set"}),
    ),
    "APIVersionDiscovery": (
        ("version", 1, "string", "r"),
        ("resources", 2, "[]APIResourceDiscovery", "o", {"list_type": "atomic"}),
        ("freshness", 3, "string", "o"),
    ),
}
