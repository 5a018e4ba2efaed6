# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/api/networking/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.networking.v1}).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.networking.v1"

GROUP = "networking.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "Ingress",
    "IngressList",
    "IngressClass",
    "IngressClassList",
    "NetworkPolicy",
    "NetworkPolicyList",
)

#: Struct-level markers (C{+structType=atomic}): type name -> struct type.
STRUCT_TYPES = {
    "ServiceBackendPort": "atomic",
}

#: C{+enum} string types: name -> the values of their constants, sorted (OpenAPI
#: C{enum} on fields of that type).
ENUMS = {
    "PathType": ("Exact", "ImplementationSpecific", "Prefix"),
}

TYPES = {
    "HTTPIngressPath": (
        ("path", 1, "string", "o"),
        ("pathType", 3, "*string", "r", {"enum": "PathType"}),
        ("backend", 2, "IngressBackend", "r"),
    ),
    "HTTPIngressRuleValue": (
        ("paths", 1, "[]HTTPIngressPath", "r", {"list_type": "atomic"}),
    ),
    "IPBlock": (
        ("cidr", 1, "string", "r"),
        ("except", 2, "[]string", "o", {"list_type": "atomic"}),
    ),
    "Ingress": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "IngressSpec", "o"),
        ("status", 3, "IngressStatus", "o"),
    ),
    "IngressBackend": (
        ("service", 4, "*IngressServiceBackend", "o"),
        ("resource", 3, "*core.TypedLocalObjectReference", "o"),
    ),
    "IngressClass": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "IngressClassSpec", "o"),
    ),
    "IngressClassList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]IngressClass", "r"),
    ),
    "IngressClassParametersReference": (
        ("apiGroup", 1, "*string", "o"),
        ("kind", 2, "string", "r"),
        ("name", 3, "string", "r"),
        ("scope", 4, "*string", ""),
        ("namespace", 5, "*string", "o"),
    ),
    "IngressClassSpec": (
        ("controller", 1, "string", "o"),
        ("parameters", 2, "*IngressClassParametersReference", "o"),
    ),
    "IngressList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]Ingress", "r"),
    ),
    "IngressLoadBalancerIngress": (
        ("ip", 1, "string", "o"),
        ("hostname", 2, "string", "o"),
        ("ports", 4, "[]IngressPortStatus", "o", {"list_type": "atomic"}),
    ),
    "IngressLoadBalancerStatus": (
        ("ingress", 1, "[]IngressLoadBalancerIngress", "o", {"list_type": "atomic"}),
    ),
    "IngressPortStatus": (
        ("port", 1, "int32", "r"),
        ("protocol", 2, "string", "r", {"enum": "core.Protocol"}),
        ("error", 3, "*string", "o"),
    ),
    "IngressRule": (
        ("host", 1, "string", "o"),
        ("", 2, "IngressRuleValue", "i"),
    ),
    "IngressRuleValue": (
        ("http", 1, "*HTTPIngressRuleValue", "o"),
    ),
    "IngressServiceBackend": (
        ("name", 1, "string", "r"),
        ("port", 2, "ServiceBackendPort", "o"),
    ),
    "IngressSpec": (
        ("ingressClassName", 4, "*string", "o"),
        ("defaultBackend", 1, "*IngressBackend", "o"),
        ("tls", 2, "[]IngressTLS", "o", {"list_type": "atomic"}),
        ("rules", 3, "[]IngressRule", "o", {"list_type": "atomic"}),
    ),
    "IngressStatus": (
        ("loadBalancer", 1, "IngressLoadBalancerStatus", "o"),
    ),
    "IngressTLS": (
        ("hosts", 1, "[]string", "o", {"list_type": "atomic"}),
        ("secretName", 2, "string", "o"),
    ),
    "NetworkPolicy": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "NetworkPolicySpec", "o"),
    ),
    "NetworkPolicyEgressRule": (
        ("ports", 1, "[]NetworkPolicyPort", "o", {"list_type": "atomic"}),
        ("to", 2, "[]NetworkPolicyPeer", "o", {"list_type": "atomic"}),
    ),
    "NetworkPolicyIngressRule": (
        ("ports", 1, "[]NetworkPolicyPort", "o", {"list_type": "atomic"}),
        ("from", 2, "[]NetworkPolicyPeer", "o", {"list_type": "atomic"}),
    ),
    "NetworkPolicyList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]NetworkPolicy", "r"),
    ),
    "NetworkPolicyPeer": (
        ("podSelector", 1, "*meta.LabelSelector", "o"),
        ("namespaceSelector", 2, "*meta.LabelSelector", "o"),
        ("ipBlock", 3, "*IPBlock", "o"),
    ),
    "NetworkPolicyPort": (
        ("protocol", 1, "*string", "o", {"enum": "core.Protocol"}),
        ("port", 2, "*IntOrString", "o"),
        ("endPort", 3, "*int32", "o"),
    ),
    "NetworkPolicySpec": (
        ("podSelector", 1, "meta.LabelSelector", "r"),
        ("ingress", 2, "[]NetworkPolicyIngressRule", "o", {"list_type": "atomic"}),
        ("egress", 3, "[]NetworkPolicyEgressRule", "o", {"list_type": "atomic"}),
        ("policyTypes", 4, "[]string", "o", {"list_type": "atomic"}),
    ),
    "ServiceBackendPort": (
        ("name", 1, "string", "o"),
        ("number", 2, "int32", "o"),
    ),
}
