# -*- test-case-name: tests.apis.test_certificates -*-
"""
Field tables of C{k8s.io/api/certificates/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.certificates.v1}): the GA kind only, CertificateSigningRequest
(ClusterTrustBundle is alpha/beta in v1.32 and not served).

Data only; the row format is described in L{kubetwist.runtime.types}.

C{CertificateSigningRequestSpec.extra} is C{map[string]ExtraValue}, the special type of
L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.certificates.v1"

GROUP = "certificates.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "CertificateSigningRequest",
    "CertificateSigningRequestList",
)

TYPES = {
    "CertificateSigningRequest": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "CertificateSigningRequestSpec", "r"),
        ("status", 3, "CertificateSigningRequestStatus", "o"),
    ),
    "CertificateSigningRequestCondition": (
        ("type", 1, "string", "r"),
        ("status", 6, "string", "r"),
        ("reason", 2, "string", "o"),
        ("message", 3, "string", "o"),
        ("lastUpdateTime", 4, "Time", "o"),
        ("lastTransitionTime", 5, "Time", "o"),
    ),
    "CertificateSigningRequestList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]CertificateSigningRequest", "r"),
    ),
    "CertificateSigningRequestSpec": (
        ("request", 1, "bytes", "r", {"list_type": "atomic"}),
        ("signerName", 7, "string", "r"),
        ("expirationSeconds", 8, "*int32", "o"),
        ("usages", 5, "[]string", "o", {"list_type": "atomic"}),
        ("username", 2, "string", "o"),
        ("uid", 3, "string", "o"),
        ("groups", 4, "[]string", "o", {"list_type": "atomic"}),
        ("extra", 6, "map[string]ExtraValue", "o"),
    ),
    "CertificateSigningRequestStatus": (
        ("conditions", 1, "[]CertificateSigningRequestCondition", "o", {
            "list_type": "map", "list_map_keys": ("type",),
        }),
        ("certificate", 2, "bytes", "o", {"list_type": "atomic"}),
    ),
}
