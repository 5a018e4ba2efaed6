# -*- test-case-name: tests.apis.test_reviews -*-
"""
Field tables of C{k8s.io/api/authentication/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.authentication.v1}): the review kinds served by
C{authentication.k8s.io/v1} (TokenReview, SelfSubjectReview) and the C{UserInfo} they carry.

Data only; the row format is described in L{kubetwist.runtime.types}.

C{UserInfo.extra} is C{map[string]ExtraValue}, the special type of L{kubetwist.runtime.types}
(a JSON list of strings, a message C{{items}} on the protobuf wire).
"""

PACKAGE = "io.k8s.api.authentication.v1"

GROUP = "authentication.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "TokenReview",
    "SelfSubjectReview",
)

#: Kinds with protobuf tables only (the C{serviceaccounts/token} subresource decodes its own
#: bodies; the tables serve its protobuf answers).
PROTOBUF_KINDS = (
    "TokenRequest",
)

TYPES = {
    "BoundObjectReference": (
        ("kind", 1, "string", "o"),
        ("apiVersion", 2, "string", "o"),
        ("name", 3, "string", "o"),
        ("uid", 4, "string", "o"),
    ),
    "TokenRequest": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "TokenRequestSpec", "r"),
        ("status", 3, "TokenRequestStatus", "o"),
    ),
    "TokenRequestSpec": (
        ("audiences", 1, "[]string", "r", {"list_type": "atomic"}),
        ("expirationSeconds", 4, "*int64", ""),
        ("boundObjectRef", 3, "*BoundObjectReference", ""),
    ),
    "TokenRequestStatus": (
        ("token", 1, "string", "r"),
        ("expirationTimestamp", 2, "Time", "r"),
    ),
    "TokenReview": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "TokenReviewSpec", "r"),
        ("status", 3, "TokenReviewStatus", "o"),
    ),
    "TokenReviewSpec": (
        ("token", 1, "string", "o"),
        ("audiences", 2, "[]string", "o", {"list_type": "atomic"}),
    ),
    "TokenReviewStatus": (
        ("authenticated", 1, "bool", "o"),
        ("user", 2, "UserInfo", "o"),
        ("audiences", 4, "[]string", "o", {"list_type": "atomic"}),
        ("error", 3, "string", "o"),
    ),
    "UserInfo": (
        ("username", 1, "string", "o"),
        ("uid", 2, "string", "o"),
        ("groups", 3, "[]string", "o", {"list_type": "atomic"}),
        ("extra", 4, "map[string]ExtraValue", "o"),
    ),
    "SelfSubjectReview": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("status", 2, "SelfSubjectReviewStatus", "o"),
    ),
    "SelfSubjectReviewStatus": (
        ("userInfo", 1, "UserInfo", "o"),
    ),
}
