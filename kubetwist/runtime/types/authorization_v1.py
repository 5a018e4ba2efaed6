# -*- test-case-name: tests.apis.test_reviews -*-
"""
Field tables of C{k8s.io/api/authorization/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.authorization.v1}): SubjectAccessReview,
SelfSubjectAccessReview, LocalSubjectAccessReview and SelfSubjectRulesReview.

Data only; the row format is described in L{kubetwist.runtime.types}.

C{SubjectAccessReviewSpec.extra} is C{map[string]ExtraValue}, the special type of
L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.authorization.v1"

GROUP = "authorization.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "SubjectAccessReview",
    "SelfSubjectAccessReview",
    "LocalSubjectAccessReview",
    "SelfSubjectRulesReview",
)

TYPES = {
    "SubjectAccessReview": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "SubjectAccessReviewSpec", "r"),
        ("status", 3, "SubjectAccessReviewStatus", "o"),
    ),
    "SelfSubjectAccessReview": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "SelfSubjectAccessReviewSpec", "r"),
        ("status", 3, "SubjectAccessReviewStatus", "o"),
    ),
    "LocalSubjectAccessReview": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "SubjectAccessReviewSpec", "r"),
        ("status", 3, "SubjectAccessReviewStatus", "o"),
    ),
    "ResourceAttributes": (
        ("namespace", 1, "string", "o"),
        ("verb", 2, "string", "o"),
        ("group", 3, "string", "o"),
        ("version", 4, "string", "o"),
        ("resource", 5, "string", "o"),
        ("subresource", 6, "string", "o"),
        ("name", 7, "string", "o"),
        ("fieldSelector", 8, "*FieldSelectorAttributes", "o"),
        ("labelSelector", 9, "*LabelSelectorAttributes", "o"),
    ),
    "LabelSelectorAttributes": (
        ("rawSelector", 1, "string", "o"),
        ("requirements", 2, "[]meta.LabelSelectorRequirement", "o", {"list_type": "atomic"}),
    ),
    "FieldSelectorAttributes": (
        ("rawSelector", 1, "string", "o"),
        ("requirements", 2, "[]meta.FieldSelectorRequirement", "o", {"list_type": "atomic"}),
    ),
    "NonResourceAttributes": (
        ("path", 1, "string", "o"),
        ("verb", 2, "string", "o"),
    ),
    "SubjectAccessReviewSpec": (
        ("resourceAttributes", 1, "*ResourceAttributes", "o"),
        ("nonResourceAttributes", 2, "*NonResourceAttributes", "o"),
        ("user", 3, "string", "o"),
        ("groups", 4, "[]string", "o", {"list_type": "atomic"}),
        ("extra", 5, "map[string]ExtraValue", "o"),
        ("uid", 6, "string", "o"),
    ),
    "SelfSubjectAccessReviewSpec": (
        ("resourceAttributes", 1, "*ResourceAttributes", "o"),
        ("nonResourceAttributes", 2, "*NonResourceAttributes", "o"),
    ),
    "SubjectAccessReviewStatus": (
        ("allowed", 1, "bool", "r"),
        ("denied", 4, "bool", "o"),
        ("reason", 2, "string", "o"),
        ("evaluationError", 3, "string", "o"),
    ),
    "SelfSubjectRulesReview": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "SelfSubjectRulesReviewSpec", "r"),
        ("status", 3, "SubjectRulesReviewStatus", "o"),
    ),
    "SelfSubjectRulesReviewSpec": (
        ("namespace", 1, "string", "o"),
    ),
    "ResourceRule": (
        ("verbs", 1, "[]string", "r", {"list_type": "atomic"}),
        ("apiGroups", 2, "[]string", "o", {"list_type": "atomic"}),
        ("resources", 3, "[]string", "o", {"list_type": "atomic"}),
        ("resourceNames", 4, "[]string", "o", {"list_type": "atomic"}),
    ),
    "NonResourceRule": (
        ("verbs", 1, "[]string", "r", {"list_type": "atomic"}),
        ("nonResourceURLs", 2, "[]string", "o", {"list_type": "atomic"}),
    ),
    "SubjectRulesReviewStatus": (
        ("resourceRules", 1, "[]ResourceRule", "r", {"list_type": "atomic"}),
        ("nonResourceRules", 2, "[]NonResourceRule", "r", {"list_type": "atomic"}),
        ("incomplete", 3, "bool", "r"),
        ("evaluationError", 4, "string", "o"),
    ),
}
