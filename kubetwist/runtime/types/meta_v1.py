# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/apimachinery/pkg/apis/meta/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.apimachinery.pkg.apis.meta.v1}).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.apimachinery.pkg.apis.meta.v1"

#: Struct-level markers (C{+structType=atomic}): type name -> struct type.
STRUCT_TYPES = {
    "LabelSelector": "atomic",
    "OwnerReference": "atomic",
}

#: Kinds of this package served with protobuf tables only (discovery documents, under
#: C{v1} as upstream writes them).
PROTOBUF_KINDS = (
    "APIGroup",
    "APIGroupList",
    "APIResourceList",
    "APIVersions",
)

GROUP = ""
VERSION = "v1"

TYPES = {
    "APIGroup": (
        ("name", 1, "string", "r"),
        ("versions", 2, "[]GroupVersionForDiscovery", "r", {"list_type": "atomic"}),
        ("preferredVersion", 3, "GroupVersionForDiscovery", "o"),
        ("serverAddressByClientCIDRs", 4, "[]ServerAddressByClientCIDR", "o",
         {"list_type": "atomic"}),
    ),
    "APIGroupList": (
        ("groups", 1, "[]APIGroup", "r", {"list_type": "atomic"}),
    ),
    "APIResource": (
        ("name", 1, "string", "r"),
        ("singularName", 6, "string", "r"),
        ("namespaced", 2, "bool", "r"),
        ("group", 8, "string", "o"),
        ("version", 9, "string", "o"),
        ("kind", 3, "string", "r"),
        ("verbs", 4, "ExtraValue", "r"),
        ("shortNames", 5, "[]string", "o", {"list_type": "atomic"}),
        ("categories", 7, "[]string", "o", {"list_type": "atomic"}),
        ("storageVersionHash", 10, "string", "o"),
    ),
    "APIResourceList": (
        ("groupVersion", 1, "string", "r"),
        ("resources", 2, "[]APIResource", "r", {"list_type": "atomic"}),
    ),
    "APIVersions": (
        ("versions", 1, "[]string", "r", {"list_type": "atomic"}),
        ("serverAddressByClientCIDRs", 2, "[]ServerAddressByClientCIDR", "r",
         {"list_type": "atomic"}),
    ),
    "GroupVersionForDiscovery": (
        ("groupVersion", 1, "string", "r"),
        ("version", 2, "string", "r"),
    ),
    "GroupVersionKind": (
        ("group", 1, "string", "r"),
        ("version", 2, "string", "r"),
        ("kind", 3, "string", "r"),
    ),
    "ServerAddressByClientCIDR": (
        ("clientCIDR", 1, "string", "r"),
        ("serverAddress", 2, "string", "r"),
    ),
    "Condition": (
        ("type", 1, "string", "r"),
        ("status", 2, "string", "r"),
        ("observedGeneration", 3, "int64", "o"),
        ("lastTransitionTime", 4, "Time", "r"),
        ("reason", 5, "string", "r"),
        ("message", 6, "string", "r"),
    ),
    "CreateOptions": (
        ("dryRun", 1, "[]string", "o", {"list_type": "atomic"}),
        ("fieldManager", 3, "string", "o"),
        ("fieldValidation", 4, "string", "o"),
    ),
    "DeleteOptions": (
        ("gracePeriodSeconds", 1, "*int64", "o"),
        ("preconditions", 2, "*Preconditions", "o"),
        ("orphanDependents", 3, "*bool", "o"),
        ("propagationPolicy", 4, "*string", "o"),
        ("dryRun", 5, "[]string", "o", {"list_type": "atomic"}),
        ("ignoreStoreReadErrorWithClusterBreakingPotential", 6, "*bool", "o"),
    ),
    "FieldSelectorRequirement": (
        ("key", 1, "string", "r"),
        ("operator", 2, "string", "r"),
        ("values", 3, "[]string", "o", {"list_type": "atomic"}),
    ),
    "LabelSelector": (
        ("matchLabels", 1, "map[string]string", "o"),
        ("matchExpressions", 2, "[]LabelSelectorRequirement", "o", {"list_type": "atomic"}),
    ),
    "LabelSelectorRequirement": (
        ("key", 1, "string", "r"),
        ("operator", 2, "string", "r"),
        ("values", 3, "[]string", "o", {"list_type": "atomic"}),
    ),
    "List": (
        ("metadata", 1, "ListMeta", "o"),
        ("items", 2, "[]RawExtension", "r"),
    ),
    "ListMeta": (
        ("selfLink", 1, "string", "o"),
        ("resourceVersion", 2, "string", "o"),
        ("continue", 3, "string", "o"),
        ("remainingItemCount", 4, "*int64", "o"),
    ),
    "ManagedFieldsEntry": (
        ("manager", 1, "string", "o"),
        ("operation", 2, "string", "o"),
        ("apiVersion", 3, "string", "o"),
        ("time", 4, "*Time", "o"),
        ("fieldsType", 6, "string", "o"),
        ("fieldsV1", 7, "*FieldsV1", "o"),
        ("subresource", 8, "string", "o"),
    ),
    "ObjectMeta": (
        ("name", 1, "string", "o"),
        ("generateName", 2, "string", "o"),
        ("namespace", 3, "string", "o"),
        ("selfLink", 4, "string", "o"),
        ("uid", 5, "string", "o"),
        ("resourceVersion", 6, "string", "o"),
        ("generation", 7, "int64", "o"),
        ("creationTimestamp", 8, "Time", "o"),
        ("deletionTimestamp", 9, "*Time", "o"),
        ("deletionGracePeriodSeconds", 10, "*int64", "o"),
        ("labels", 11, "map[string]string", "o"),
        ("annotations", 12, "map[string]string", "o"),
        ("ownerReferences", 13, "[]OwnerReference", "o", {
            "patch_strategy": "merge",
            "patch_merge_key": "uid",
            "list_type": "map",
            "list_map_keys": ("uid",),
        }),
        ("finalizers", 14, "[]string", "o", {"patch_strategy": "merge", "list_type": "set"}),
        ("managedFields", 17, "[]ManagedFieldsEntry", "o", {"list_type": "atomic"}),
    ),
    "OwnerReference": (
        ("apiVersion", 5, "string", "r"),
        ("kind", 1, "string", "r"),
        ("name", 3, "string", "r"),
        ("uid", 4, "string", "r"),
        ("controller", 6, "*bool", "o"),
        ("blockOwnerDeletion", 7, "*bool", "o"),
    ),
    "PartialObjectMetadata": (
        ("metadata", 1, "ObjectMeta", "o"),
    ),
    "PartialObjectMetadataList": (
        ("metadata", 1, "ListMeta", "o"),
        ("items", 2, "[]PartialObjectMetadata", "r", {"list_type": "atomic"}),
    ),
    "PatchOptions": (
        ("dryRun", 1, "[]string", "o", {"list_type": "atomic"}),
        ("force", 2, "*bool", "o"),
        ("fieldManager", 3, "string", "o"),
        ("fieldValidation", 4, "string", "o"),
    ),
    "Preconditions": (
        ("uid", 1, "*string", "o"),
        ("resourceVersion", 2, "*string", "o"),
    ),
    "Status": (
        ("metadata", 1, "ListMeta", "o"),
        ("status", 2, "string", "o"),
        ("message", 3, "string", "o"),
        ("reason", 4, "string", "o"),
        ("details", 5, "*StatusDetails", "o", {"list_type": "atomic"}),
        ("code", 6, "int32", "o"),
    ),
    "StatusCause": (
        ("reason", 1, "string", "o"),
        ("message", 2, "string", "o"),
        ("field", 3, "string", "o"),
    ),
    "StatusDetails": (
        ("name", 1, "string", "o"),
        ("group", 2, "string", "o"),
        ("kind", 3, "string", "o"),
        ("uid", 6, "string", "o"),
        ("causes", 4, "[]StatusCause", "o", {"list_type": "atomic"}),
        ("retryAfterSeconds", 5, "int32", "o"),
    ),
    "UpdateOptions": (
        ("dryRun", 1, "[]string", "o", {"list_type": "atomic"}),
        ("fieldManager", 2, "string", "o"),
        ("fieldValidation", 3, "string", "o"),
    ),
    "WatchEvent": (
        ("type", 1, "string", "r"),
        ("object", 2, "RawExtension", "r"),
    ),
}
