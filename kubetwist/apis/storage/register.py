# -*- test-case-name: tests.apis.test_storage -*-
"""
The storage.k8s.io/v1 resource table and strategies: upstream
C{pkg/registry/storage/rest/storage_storage.go} and the C{strategy.go} of
C{pkg/registry/storage/{storageclass,volumeattachment,csinode,csidriver,csistoragecapacity}}.
"""

from __future__ import annotations

from kubetwist.apis.storage import printers as p
from kubetwist.apis.storage import validation as v
from kubetwist.registry.rest import ResourceSpec, Strategy

__all__ = ["GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = "storage.k8s.io"
VERSION = "v1"

#: Discovery rows of storage.k8s.io/v1 (upstream v1.32 serves no VolumeAttributesClass in v1).
RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "csidrivers", "CSIDriver", "csidriver", namespaced=False),
    ResourceSpec(GROUP, VERSION, "csinodes", "CSINode", "csinode", namespaced=False),
    ResourceSpec(GROUP, VERSION, "csistoragecapacities", "CSIStorageCapacity",
                 "csistoragecapacity"),
    ResourceSpec(GROUP, VERSION, "storageclasses", "StorageClass", "storageclass",
                 namespaced=False, short_names=["sc"]),
    ResourceSpec(GROUP, VERSION, "volumeattachments", "VolumeAttachment", "volumeattachment",
                 namespaced=False, subresources=["status"]),
]

STRATEGIES: dict[str, Strategy] = {
    "storageclasses": Strategy(
        kind="StorageClass", group=GROUP, namespaced=False, default=v.default_storage_class,
        validate=v.validate_storage_class, validate_update=v.validate_storage_class_update,
        table=p.STORAGE_CLASS_TABLE,
    ),
    "csidrivers": Strategy(
        kind="CSIDriver", group=GROUP, namespaced=False, default=v.default_csi_driver,
        prepare_for_update=v.prepare_csi_driver_for_update,
        validate=v.validate_csi_driver, validate_update=v.validate_csi_driver_update,
        table=p.CSI_DRIVER_TABLE,
        allow_unconditional_update=False,  # upstream AllowUnconditionalUpdate() false
    ),
    "csinodes": Strategy(
        kind="CSINode", group=GROUP, namespaced=False, default=v.default_csi_node,
        validate=v.validate_csi_node, validate_update=v.validate_csi_node_update,
        table=p.CSI_NODE_TABLE,
        allow_unconditional_update=False,  # upstream AllowUnconditionalUpdate() false
    ),
    "csistoragecapacities": Strategy(
        kind="CSIStorageCapacity", group=GROUP, default=v.default_csi_storage_capacity,
        validate=v.validate_csi_storage_capacity,
        validate_update=v.validate_csi_storage_capacity_update,
        table=p.CSI_STORAGE_CAPACITY_TABLE,
        allow_unconditional_update=False,  # upstream AllowUnconditionalUpdate() false
    ),
    "volumeattachments": Strategy(
        kind="VolumeAttachment", group=GROUP, namespaced=False,
        default=v.default_volume_attachment,
        prepare_for_create=v.prepare_volume_attachment_for_create,
        prepare_for_update=v.prepare_volume_attachment_for_update,
        validate=v.validate_volume_attachment,
        validate_update=v.validate_volume_attachment_update,
        table=p.VOLUME_ATTACHMENT_TABLE,
        allow_unconditional_update=False,  # upstream AllowUnconditionalUpdate() false
    ),
    "volumeattachments/status": Strategy(
        kind="VolumeAttachment", group=GROUP, namespaced=False,
        default=v.default_volume_attachment,
        prepare_for_update=v.prepare_volume_attachment_status_for_update,
        validate=v.validate_volume_attachment,
        validate_update=v.validate_volume_attachment_update,
        table=p.VOLUME_ATTACHMENT_TABLE,
        allow_unconditional_update=False,  # upstream AllowUnconditionalUpdate() false
    ),
}
