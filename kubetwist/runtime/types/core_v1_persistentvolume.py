# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/api/core/v1} for PersistentVolume and the volume sources only it uses
(C{PersistentVolumeSource} and its C{*PersistentVolumeSource} types, C{SecretReference},
C{LocalVolumeSource}, C{VolumeNodeAffinity}) and C{TopologySelectorTerm} (of storage/v1
StorageClass), as of Kubernetes v1.32 (protobuf package
C{io.k8s.api.core.v1}); kept apart from L{kubetwist.runtime.types.core_v1} for size.

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.core.v1"

GROUP = ""
VERSION = "v1"

#: Kinds served from this module (each is also a type name below).
KINDS = (
    "PersistentVolume",
    "PersistentVolumeList",
)

#: Struct-level markers (C{+structType=atomic}): type name -> struct type.
STRUCT_TYPES = {
    "SecretReference": "atomic",
    "TopologySelectorTerm": "atomic",
}

#: C{+enum} string types: name -> the values of their constants, sorted (OpenAPI
#: C{enum} on fields of that type).
ENUMS = {
    "PersistentVolumePhase": ("Available", "Bound", "Failed", "Pending", "Released"),
    "PersistentVolumeReclaimPolicy": ("Delete", "Recycle", "Retain"),
}

TYPES = {
    "AzureFilePersistentVolumeSource": (
        ("secretName", 1, "string", "r"),
        ("shareName", 2, "string", "r"),
        ("readOnly", 3, "bool", "o"),
        ("secretNamespace", 4, "*string", ""),
    ),
    "CSIPersistentVolumeSource": (
        ("driver", 1, "string", "r"),
        ("volumeHandle", 2, "string", "r"),
        ("readOnly", 3, "bool", "o"),
        ("fsType", 4, "string", "o"),
        ("volumeAttributes", 5, "map[string]string", "o"),
        ("controllerPublishSecretRef", 6, "*SecretReference", "o"),
        ("nodeStageSecretRef", 7, "*SecretReference", "o"),
        ("nodePublishSecretRef", 8, "*SecretReference", "o"),
        ("controllerExpandSecretRef", 9, "*SecretReference", "o"),
        ("nodeExpandSecretRef", 10, "*SecretReference", "o"),
    ),
    "CephFSPersistentVolumeSource": (
        ("monitors", 1, "[]string", "r", {"list_type": "atomic"}),
        ("path", 2, "string", "o"),
        ("user", 3, "string", "o"),
        ("secretFile", 4, "string", "o"),
        ("secretRef", 5, "*SecretReference", "o"),
        ("readOnly", 6, "bool", "o"),
    ),
    "CinderPersistentVolumeSource": (
        ("volumeID", 1, "string", "r"),
        ("fsType", 2, "string", "o"),
        ("readOnly", 3, "bool", "o"),
        ("secretRef", 4, "*SecretReference", "o"),
    ),
    "FlexPersistentVolumeSource": (
        ("driver", 1, "string", "r"),
        ("fsType", 2, "string", "o"),
        ("secretRef", 3, "*SecretReference", "o"),
        ("readOnly", 4, "bool", "o"),
        ("options", 5, "map[string]string", "o"),
    ),
    "GlusterfsPersistentVolumeSource": (
        ("endpoints", 1, "string", "r"),
        ("path", 2, "string", "r"),
        ("readOnly", 3, "bool", "o"),
        ("endpointsNamespace", 4, "*string", "o"),
    ),
    "ISCSIPersistentVolumeSource": (
        ("targetPortal", 1, "string", "r"),
        ("iqn", 2, "string", "r"),
        ("lun", 3, "int32", "r"),
        ("iscsiInterface", 4, "string", "o", {"default": "default"}),
        ("fsType", 5, "string", "o"),
        ("readOnly", 6, "bool", "o"),
        ("portals", 7, "[]string", "o", {"list_type": "atomic"}),
        ("chapAuthDiscovery", 8, "bool", "o"),
        ("chapAuthSession", 11, "bool", "o"),
        ("secretRef", 10, "*SecretReference", "o"),
        ("initiatorName", 12, "*string", "o"),
    ),
    "LocalVolumeSource": (
        ("path", 1, "string", "r"),
        ("fsType", 2, "*string", "o"),
    ),
    "PersistentVolume": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "PersistentVolumeSpec", "o"),
        ("status", 3, "PersistentVolumeStatus", "o"),
    ),
    "PersistentVolumeList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]PersistentVolume", "r"),
    ),
    "PersistentVolumeSource": (
        ("gcePersistentDisk", 1, "*GCEPersistentDiskVolumeSource", "o"),
        ("awsElasticBlockStore", 2, "*AWSElasticBlockStoreVolumeSource", "o"),
        ("hostPath", 3, "*HostPathVolumeSource", "o"),
        ("glusterfs", 4, "*GlusterfsPersistentVolumeSource", "o"),
        ("nfs", 5, "*NFSVolumeSource", "o"),
        ("rbd", 6, "*RBDPersistentVolumeSource", "o"),
        ("iscsi", 7, "*ISCSIPersistentVolumeSource", "o"),
        ("cinder", 8, "*CinderPersistentVolumeSource", "o"),
        ("cephfs", 9, "*CephFSPersistentVolumeSource", "o"),
        ("fc", 10, "*FCVolumeSource", "o"),
        ("flocker", 11, "*FlockerVolumeSource", "o"),
        ("flexVolume", 12, "*FlexPersistentVolumeSource", "o"),
        ("azureFile", 13, "*AzureFilePersistentVolumeSource", "o"),
        ("vsphereVolume", 14, "*VsphereVirtualDiskVolumeSource", "o"),
        ("quobyte", 15, "*QuobyteVolumeSource", "o"),
        ("azureDisk", 16, "*AzureDiskVolumeSource", "o"),
        ("photonPersistentDisk", 17, "*PhotonPersistentDiskVolumeSource", "o"),
        ("portworxVolume", 18, "*PortworxVolumeSource", "o"),
        ("scaleIO", 19, "*ScaleIOPersistentVolumeSource", "o"),
        ("local", 20, "*LocalVolumeSource", "o"),
        ("storageos", 21, "*StorageOSPersistentVolumeSource", "o"),
        ("csi", 22, "*CSIPersistentVolumeSource", "o"),
    ),
    "PersistentVolumeSpec": (
        ("capacity", 1, "map[string]Quantity", "o"),
        ("", 2, "PersistentVolumeSource", "i"),
        ("accessModes", 3, "[]string", "o", {"list_type": "atomic"}),
        ("claimRef", 4, "*ObjectReference", "o"),
        ("persistentVolumeReclaimPolicy", 5, "string", "o",
         {"enum": "PersistentVolumeReclaimPolicy"}),
        ("storageClassName", 6, "string", "o"),
        ("mountOptions", 7, "[]string", "o", {"list_type": "atomic"}),
        ("volumeMode", 8, "*string", "o", {"enum": "PersistentVolumeMode"}),
        ("nodeAffinity", 9, "*VolumeNodeAffinity", "o"),
        ("volumeAttributesClassName", 10, "*string", "o"),
    ),
    "PersistentVolumeStatus": (
        ("phase", 1, "string", "o", {"enum": "PersistentVolumePhase"}),
        ("message", 2, "string", "o"),
        ("reason", 3, "string", "o"),
        ("lastPhaseTransitionTime", 4, "*Time", "o"),
    ),
    "RBDPersistentVolumeSource": (
        ("monitors", 1, "[]string", "r", {"list_type": "atomic"}),
        ("image", 2, "string", "r"),
        ("fsType", 3, "string", "o"),
        ("pool", 4, "string", "o", {"default": "rbd"}),
        ("user", 5, "string", "o", {"default": "admin"}),
        ("keyring", 6, "string", "o", {"default": "/etc/ceph/keyring"}),
        ("secretRef", 7, "*SecretReference", "o"),
        ("readOnly", 8, "bool", "o"),
    ),
    "ScaleIOPersistentVolumeSource": (
        ("gateway", 1, "string", "r"),
        ("system", 2, "string", "r"),
        ("secretRef", 3, "*SecretReference", "r"),
        ("sslEnabled", 4, "bool", "o"),
        ("protectionDomain", 5, "string", "o"),
        ("storagePool", 6, "string", "o"),
        ("storageMode", 7, "string", "o", {"default": "ThinProvisioned"}),
        ("volumeName", 8, "string", "o"),
        ("fsType", 9, "string", "o", {"default": "xfs"}),
        ("readOnly", 10, "bool", "o"),
    ),
    "SecretReference": (
        ("name", 1, "string", "o"),
        ("namespace", 2, "string", "o"),
    ),
    "StorageOSPersistentVolumeSource": (
        ("volumeName", 1, "string", "o"),
        ("volumeNamespace", 2, "string", "o"),
        ("fsType", 3, "string", "o"),
        ("readOnly", 4, "bool", "o"),
        ("secretRef", 5, "*ObjectReference", "o"),
    ),
    "VolumeNodeAffinity": (
        ("required", 1, "*NodeSelector", "o"),
    ),
    "TopologySelectorLabelRequirement": (
        ("key", 1, "string", "r"),
        ("values", 2, "[]string", "r", {"list_type": "atomic"}),
    ),
    "TopologySelectorTerm": (
        ("matchLabelExpressions", 1, "[]TopologySelectorLabelRequirement", "o", {
            "list_type": "atomic",
        }),
    ),
}
