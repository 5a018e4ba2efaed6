# -*- test-case-name: tests.apis.test_storage -*-
"""
Server-side printing of storage.k8s.io/v1: upstream C{printStorageClass},
C{printVolumeAttachment}, C{printCSINode}, C{printCSIDriver}, C{printCSIStorageCapacity} and
their columns in C{k8s.io/kubernetes/pkg/printers/internalversion/printers.go} (v1.32).
"""

from __future__ import annotations

from kubetwist.apis.printers import age_column, column, name_column, obj_age, obj_name
from kubetwist.registry.rest import TableConvertor

__all__ = [
    "CSI_DRIVER_TABLE",
    "CSI_NODE_TABLE",
    "CSI_STORAGE_CAPACITY_TABLE",
    "STORAGE_CLASS_TABLE",
    "VOLUME_ATTACHMENT_TABLE",
    "is_default_class",
]

#: C{SwaggerDoc()} texts of C{k8s.io/api/storage/v1} (v0.32) cited by the columns.
DOCS: dict[str, str] = {
    'StorageClass.provisioner': 'provisioner indicates the type of the provisioner.',
    'StorageClass.reclaimPolicy': 'reclaimPolicy controls the reclaimPolicy for dynamically '
                                  'provisioned PersistentVolumes of this storage class. Defaults '
                                  'to Delete.',
    'StorageClass.volumeBindingMode': 'volumeBindingMode indicates how PersistentVolumeClaims '
                                      'should be provisioned and bound.  When unset, '
                                      'VolumeBindingImmediate is used. This field is only honored '
                                      'by servers that enable the VolumeScheduling feature.',
    'StorageClass.allowVolumeExpansion': 'allowVolumeExpansion shows whether the storage class '
                                         'allow volume expand.',
    'CSIDriverSpec.attachRequired': 'attachRequired indicates this CSI volume driver requires an '
                                    'attach operation (because it implements the CSI '
                                    'ControllerPublishVolume() method), and that the Kubernetes '
                                    'attach detach controller should call the attach volume '
                                    'interface which checks the volumeattachment status and waits '
                                    'until the volume is attached before proceeding to mounting. '
                                    'The CSI external-attacher coordinates with CSI volume driver '
                                    'and updates the volumeattachment status when the attach '
                                    'operation is complete. If the CSIDriverRegistry feature gate '
                                    'is enabled and the value is specified to false, the attach '
                                    'operation will be skipped. Otherwise the attach operation '
                                    'will be called.\n\nThis field is immutable.',
    'CSIDriverSpec.podInfoOnMount': 'podInfoOnMount indicates this CSI volume driver requires '
                                    'additional pod information (like podName, podUID, etc.) '
                                    'during mount operations, if set to true. If set to false, pod '
                                    'information will not be passed on mount. Default is '
                                    'false.\n\nThe CSI driver specifies podInfoOnMount as part of '
                                    'driver deployment. If true, Kubelet will pass pod information '
                                    'as VolumeContext in the CSI NodePublishVolume() calls. The '
                                    'CSI driver is responsible for parsing and validating the '
                                    'information passed in as VolumeContext.\n\nThe following '
                                    'VolumeContext will be passed if podInfoOnMount is set to '
                                    'true. This list might grow, but the prefix will be used. '
                                    '"csi.storage.k8s.io/pod.name": pod.Name '
                                    '"csi.storage.k8s.io/pod.namespace": pod.Namespace '
                                    '"csi.storage.k8s.io/pod.uid": string(pod.UID) '
                                    '"csi.storage.k8s.io/ephemeral": "true" if the volume is an '
                                    'ephemeral inline volume\n                                '
                                    'defined by a CSIVolumeSource, otherwise '
                                    '"false"\n\n"csi.storage.k8s.io/ephemeral" is a new feature in '
                                    'Kubernetes 1.16. It is only required for drivers which '
                                    'support both the "Persistent" and "Ephemeral" '
                                    'VolumeLifecycleMode. Other drivers can leave pod info '
                                    'disabled and/or ignore this field. As Kubernetes 1.15 '
                                    'doesn\'t support this field, drivers can only support one '
                                    'mode when deployed on such a cluster and the deployment '
                                    'determines which mode that is, for example via a command line '
                                    'parameter of the driver.\n\nThis field was immutable in '
                                    'Kubernetes < 1.29 and now is mutable.',
    'CSIDriverSpec.storageCapacity': 'storageCapacity indicates that the CSI volume driver wants '
                                     'pod scheduling to consider the storage capacity that the '
                                     'driver deployment will report by creating CSIStorageCapacity '
                                     'objects with capacity information, if set to true.\n\nThe '
                                     'check can be enabled immediately when deploying a driver. In '
                                     'that case, provisioning new volumes with late binding will '
                                     'pause until the driver deployment has published some '
                                     'suitable CSIStorageCapacity object.\n\nAlternatively, the '
                                     'driver can be deployed with the field unset or false and it '
                                     'can be flipped later when storage capacity information has '
                                     'been published.\n\nThis field was immutable in Kubernetes <= '
                                     '1.22 and now is mutable.',
    'CSIDriverSpec.tokenRequests': 'tokenRequests indicates the CSI driver needs pods\' service '
                                   'account tokens it is mounting volume for to do necessary '
                                   'authentication. Kubelet will pass the tokens in VolumeContext '
                                   'in the CSI NodePublishVolume calls. The CSI driver should '
                                   'parse and validate the following VolumeContext: '
                                   '"csi.storage.k8s.io/serviceAccount.tokens": {\n  "<audience>": '
                                   '{\n    "token": <token>,\n    "expirationTimestamp": '
                                   '<expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: '
                                   'Audience in each TokenRequest should be different and at most '
                                   'one token is empty string. To receive a new token after '
                                   'expiry, RequiresRepublish can be used to trigger '
                                   'NodePublishVolume periodically.',
    'CSIDriverSpec.requiresRepublish': 'requiresRepublish indicates the CSI driver wants '
                                       '`NodePublishVolume` being periodically called to reflect '
                                       'any possible change in the mounted volume. This field '
                                       'defaults to false.\n\nNote: After a successful initial '
                                       'NodePublishVolume call, subsequent calls to '
                                       'NodePublishVolume should only update the contents of the '
                                       'volume. New mount points will not be seen by a running '
                                       'container.',
    'CSIDriverSpec.volumeLifecycleModes': 'volumeLifecycleModes defines what kind of volumes this '
                                          'CSI volume driver supports. The default if the list is '
                                          'empty is "Persistent", which is the usage defined by '
                                          'the CSI specification and implemented in Kubernetes via '
                                          'the usual PV/PVC mechanism.\n\nThe other mode is '
                                          '"Ephemeral". In this mode, volumes are defined inline '
                                          'inside the pod spec with CSIVolumeSource and their '
                                          'lifecycle is tied to the lifecycle of that pod. A '
                                          'driver has to be aware of this because it is only going '
                                          'to get a NodePublishVolume call for such a '
                                          'volume.\n\nFor more information about implementing this '
                                          'mode, see '
                                          'https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html '  # noqa: E501
                                          'A driver can support one or more of these modes and '
                                          'more modes may be added in the future.\n\nThis field '
                                          'is beta. This field is immutable.',
    'CSINodeSpec.drivers': 'drivers is a list of information of all CSI Drivers existing on a '
                           'node. If all drivers in the list are uninstalled, this can become '
                           'empty.',
    'VolumeAttachmentSpec.attacher': 'attacher indicates the name of the volume driver that MUST '
                                     'handle this request. This is the name returned by '
                                     'GetPluginName().',
    'VolumeAttachmentSpec.nodeName': 'nodeName represents the node that the volume should be '
                                     'attached to.',
    'VolumeAttachmentSource.persistentVolumeName': 'persistentVolumeName represents the name of '
                                                   'the persistent volume to attach.',
    'VolumeAttachmentStatus.attached': 'attached indicates the volume is successfully attached. '
                                       'This field must only be set by the entity completing the '
                                       'attach operation, i.e. the external-attacher.',
    'CSIStorageCapacity.storageClassName': 'storageClassName represents the name of the '
                                           'StorageClass that the reported capacity applies to. It '
                                           'must meet the same requirements as the name of a '
                                           'StorageClass object (non-empty, DNS subdomain). If '
                                           'that object no longer exists, the CSIStorageCapacity '
                                           'object is obsolete and should be removed by its '
                                           'creator. This field is immutable.',
    'CSIStorageCapacity.capacity': 'capacity is the value reported by the CSI driver in its '
                                   'GetCapacityResponse for a GetCapacityRequest with topology and '
                                   'parameters that match the previous fields.\n\nThe semantic is '
                                   'currently (CSI spec 1.2) defined as: The available capacity, '
                                   'in bytes, of the storage that can be used to provision '
                                   'volumes. If not set, that information is currently '
                                   'unavailable.',
}

_DEFAULT_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                        "storageclass.beta.kubernetes.io/is-default-class")


def is_default_class(sc: dict) -> bool:
    """Upstream C{storageutil.IsDefaultAnnotation}: either annotation set to C{"true"}."""
    annotations = (sc.get("metadata") or {}).get("annotations") or {}
    return any(annotations.get(a) == "true" for a in _DEFAULT_ANNOTATIONS)


def _storage_class_row(sc: dict) -> list:
    name = obj_name(sc)
    if is_default_class(sc):
        name += " (default)"
    return [
        name,
        sc.get("provisioner") or "",
        sc.get("reclaimPolicy") or "Delete",
        sc.get("volumeBindingMode") or "Immediate",
        bool(sc.get("allowVolumeExpansion")),
        obj_age(sc),
    ]


STORAGE_CLASS_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Provisioner", "string", DOCS["StorageClass.provisioner"]),
        column("ReclaimPolicy", "string", DOCS["StorageClass.reclaimPolicy"]),
        column("VolumeBindingMode", "string", DOCS["StorageClass.volumeBindingMode"]),
        column("AllowVolumeExpansion", "string", DOCS["StorageClass.allowVolumeExpansion"]),
        age_column(),
    ],
    row=_storage_class_row,
)


def _volume_attachment_row(va: dict) -> list:
    spec = va.get("spec") or {}
    return [
        obj_name(va),
        spec.get("attacher") or "",
        (spec.get("source") or {}).get("persistentVolumeName") or "",
        spec.get("nodeName") or "",
        bool((va.get("status") or {}).get("attached")),
        obj_age(va),
    ]


VOLUME_ATTACHMENT_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Attacher", "string", DOCS["VolumeAttachmentSpec.attacher"], "name"),
        column("PV", "string", DOCS["VolumeAttachmentSource.persistentVolumeName"]),
        column("Node", "string", DOCS["VolumeAttachmentSpec.nodeName"]),
        column("Attached", "boolean", DOCS["VolumeAttachmentStatus.attached"]),
        age_column(),
    ],
    row=_volume_attachment_row,
)

CSI_NODE_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Drivers", "integer",
               "Drivers indicates the number of CSI drivers registered on the node"),
        age_column(),
    ],
    row=lambda node: [obj_name(node), len((node.get("spec") or {}).get("drivers") or []),
                      obj_age(node)],
)


def _csi_driver_row(driver: dict) -> list:
    spec = driver.get("spec") or {}
    attach = spec.get("attachRequired")
    modes = ",".join(spec.get("volumeLifecycleModes") or []) or "<none>"
    tokens = spec.get("tokenRequests")
    token_text = "<unset>" if tokens is None else ",".join(
        (t or {}).get("audience") or "" for t in tokens)
    return [
        obj_name(driver),
        True if attach is None else bool(attach),
        bool(spec.get("podInfoOnMount")),
        bool(spec.get("storageCapacity")),
        token_text,
        bool(spec.get("requiresRepublish")),
        modes,
        obj_age(driver),
    ]


CSI_DRIVER_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("AttachRequired", "boolean", DOCS["CSIDriverSpec.attachRequired"]),
        column("PodInfoOnMount", "boolean", DOCS["CSIDriverSpec.podInfoOnMount"]),
        column("StorageCapacity", "boolean", DOCS["CSIDriverSpec.storageCapacity"]),
        column("TokenRequests", "string", DOCS["CSIDriverSpec.tokenRequests"]),
        column("RequiresRepublish", "boolean", DOCS["CSIDriverSpec.requiresRepublish"]),
        column("Modes", "string", DOCS["CSIDriverSpec.volumeLifecycleModes"]),
        age_column(),
    ],
    row=_csi_driver_row,
)

CSI_STORAGE_CAPACITY_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("StorageClassName", "string", DOCS["CSIStorageCapacity.storageClassName"]),
        column("Capacity", "string", DOCS["CSIStorageCapacity.capacity"]),
    ],
    row=lambda cap: [obj_name(cap), cap.get("storageClassName") or "",
                     "<unset>" if cap.get("capacity") is None else str(cap["capacity"])],
)
