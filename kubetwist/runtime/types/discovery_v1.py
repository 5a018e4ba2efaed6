# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/api/discovery/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.discovery.v1}).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.discovery.v1"

GROUP = "discovery.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "EndpointSlice",
    "EndpointSliceList",
)

#: Struct-level markers (C{+structType=atomic}): type name -> struct type.
STRUCT_TYPES = {
    "EndpointPort": "atomic",
}

#: C{+enum} string types: name -> the values of their constants, sorted (OpenAPI
#: C{enum} on fields of that type).
ENUMS = {
    "AddressType": ("FQDN", "IPv4", "IPv6"),
}

TYPES = {
    "Endpoint": (
        ("addresses", 1, "[]string", "r", {"list_type": "set"}),
        ("conditions", 2, "EndpointConditions", "o"),
        ("hostname", 3, "*string", "o"),
        ("targetRef", 4, "*core.ObjectReference", "o"),
        ("deprecatedTopology", 5, "map[string]string", "o"),
        ("nodeName", 6, "*string", "o"),
        ("zone", 7, "*string", "o"),
        ("hints", 8, "*EndpointHints", "o"),
    ),
    "EndpointConditions": (
        ("ready", 1, "*bool", "o"),
        ("serving", 2, "*bool", "o"),
        ("terminating", 3, "*bool", "o"),
    ),
    "EndpointHints": (
        ("forZones", 1, "[]ForZone", "o", {"list_type": "atomic"}),
    ),
    "EndpointPort": (
        ("name", 1, "*string", "o"),
        ("protocol", 2, "*string", "o", {"enum": "core.Protocol"}),
        ("port", 3, "*int32", "o"),
        ("appProtocol", 4, "*string", "o"),
    ),
    "EndpointSlice": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("addressType", 4, "string", "r", {"enum": "AddressType"}),
        ("endpoints", 2, "[]Endpoint", "r", {"list_type": "atomic"}),
        ("ports", 3, "[]EndpointPort", "", {"list_type": "atomic"}),
    ),
    "EndpointSliceList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]EndpointSlice", "r"),
    ),
    "ForZone": (
        ("name", 1, "string", "r"),
    ),
}
