# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/api/storage/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.storage.v1}).

Data only; the row format is described in L{kubetwist.runtime.types}.

"""

PACKAGE = "io.k8s.api.storage.v1"

GROUP = "storage.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "CSIDriver",
    "CSIDriverList",
    "CSINode",
    "CSINodeList",
    "CSIStorageCapacity",
    "CSIStorageCapacityList",
    "StorageClass",
    "StorageClassList",
    "VolumeAttachment",
    "VolumeAttachmentList",
)

#: C{+enum} string types: name -> the values of their constants, sorted (OpenAPI
#: C{enum} on fields of that type).
ENUMS = {
    "VolumeBindingMode": ("Immediate", "WaitForFirstConsumer"),
}

TYPES = {
    "CSIDriver": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "CSIDriverSpec", "r"),
    ),
    "CSIDriverList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]CSIDriver", "r"),
    ),
    "CSIDriverSpec": (
        ("attachRequired", 1, "*bool", "o"),
        ("podInfoOnMount", 2, "*bool", "o"),
        ("volumeLifecycleModes", 3, "[]string", "o", {"list_type": "set"}),
        ("storageCapacity", 4, "*bool", "o"),
        ("fsGroupPolicy", 5, "*string", "o"),
        ("tokenRequests", 6, "[]TokenRequest", "o", {"list_type": "atomic"}),
        ("requiresRepublish", 7, "*bool", "o"),
        ("seLinuxMount", 8, "*bool", "o"),
    ),
    "CSINode": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "CSINodeSpec", "r"),
    ),
    "CSINodeDriver": (
        ("name", 1, "string", "r"),
        ("nodeID", 2, "string", "r"),
        ("topologyKeys", 3, "[]string", "", {"list_type": "atomic"}),
        ("allocatable", 4, "*VolumeNodeResources", "o"),
    ),
    "CSINodeList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]CSINode", "r"),
    ),
    "CSINodeSpec": (
        ("drivers", 1, "[]CSINodeDriver", "r", {
            "patch_strategy": "merge", "patch_merge_key": "name",
            "list_type": "map", "list_map_keys": ("name",),
        }),
    ),
    "CSIStorageCapacity": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("nodeTopology", 2, "*meta.LabelSelector", "o"),
        ("storageClassName", 3, "string", "r"),
        ("capacity", 4, "*Quantity", "o"),
        ("maximumVolumeSize", 5, "*Quantity", "o"),
    ),
    "CSIStorageCapacityList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]CSIStorageCapacity", "r"),
    ),
    "StorageClass": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("provisioner", 2, "string", "r"),
        ("parameters", 3, "map[string]string", "o"),
        ("reclaimPolicy", 4, "*string", "o", {"enum": "core.PersistentVolumeReclaimPolicy"}),
        ("mountOptions", 5, "[]string", "o", {"list_type": "atomic"}),
        ("allowVolumeExpansion", 6, "*bool", "o"),
        ("volumeBindingMode", 7, "*string", "o", {"enum": "VolumeBindingMode"}),
        ("allowedTopologies", 8, "[]core.TopologySelectorTerm", "o", {"list_type": "atomic"}),
    ),
    "StorageClassList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]StorageClass", "r"),
    ),
    "TokenRequest": (
        ("audience", 1, "string", "r"),
        ("expirationSeconds", 2, "*int64", "o"),
    ),
    "VolumeAttachment": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "VolumeAttachmentSpec", "r"),
        ("status", 3, "VolumeAttachmentStatus", "o"),
    ),
    "VolumeAttachmentList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]VolumeAttachment", "r"),
    ),
    "VolumeAttachmentSource": (
        ("persistentVolumeName", 1, "*string", "o"),
        ("inlineVolumeSpec", 2, "*core.PersistentVolumeSpec", "o"),
    ),
    "VolumeAttachmentSpec": (
        ("attacher", 1, "string", "r"),
        ("source", 2, "VolumeAttachmentSource", "r"),
        ("nodeName", 3, "string", "r"),
    ),
    "VolumeAttachmentStatus": (
        ("attached", 1, "bool", "r"),
        ("attachmentMetadata", 2, "map[string]string", "o"),
        ("attachError", 3, "*VolumeError", "o"),
        ("detachError", 4, "*VolumeError", "o"),
    ),
    "VolumeError": (
        ("time", 1, "Time", "o"),
        ("message", 2, "string", "o"),
    ),
    "VolumeNodeResources": (
        ("count", 1, "*int32", "o"),
    ),
}
