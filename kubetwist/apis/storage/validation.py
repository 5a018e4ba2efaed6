# -*- test-case-name: tests.apis.test_storage -*-
"""
storage.k8s.io/v1 defaulting and validation: upstream
C{k8s.io/kubernetes/pkg/apis/storage/v1/defaults.go} and
C{pkg/apis/storage/validation/validation.go} (StorageClass, VolumeAttachment, CSIDriver,
CSINode, CSIStorageCapacity), as of Kubernetes v1.32 with its default feature gates
(C{SELinuxMountReadWriteOncePod} on).
"""

from __future__ import annotations

import copy

from kubetwist.apimachinery.validation import (
    FIELD_IMMUTABLE_ERROR_MSG,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    name_is_dns_subdomain,
    validate_immutable_field,
    validate_label_name,
    validate_label_selector,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.runtime.field import (
    FieldError,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from kubetwist.runtime.quantity import QuantityError, canonical_quantity, parse_quantity

__all__ = [
    "default_csi_driver",
    "default_storage_class",
    "validate_csi_driver",
    "validate_csi_driver_name",
    "validate_csi_driver_update",
    "validate_csi_node",
    "validate_csi_node_update",
    "validate_csi_storage_capacity",
    "validate_csi_storage_capacity_update",
    "validate_storage_class",
    "validate_storage_class_update",
    "validate_volume_attachment",
    "validate_volume_attachment_update",
]

_MAX_PROVISIONER_PARAMETER_SIZE = 256 * 1024
_MAX_PROVISIONER_PARAMETER_LEN = 512
_MAX_ATTACHED_VOLUME_METADATA_SIZE = 256 * 1024
_MAX_VOLUME_ERROR_MESSAGE_SIZE = 1024
_CSI_NODE_ID_MAX_LENGTH = 192
_CSI_DRIVER_NAME_MAX_LENGTH = 63

_RECLAIM_POLICIES = ["Delete", "Retain"]
_BINDING_MODES = ["Immediate", "WaitForFirstConsumer"]
_FS_GROUP_POLICIES = ["File", "None", "ReadWriteOnceWithFSType"]
_LIFECYCLE_MODES = ["Persistent", "Ephemeral"]


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


# --------------------------------------------------------------------------------------------
# StorageClass


def default_storage_class(sc: dict) -> None:
    """Upstream C{SetDefaults_StorageClass}: C{reclaimPolicy: Delete}, C{volumeBindingMode:
    Immediate}; C{provisioner} has no omitempty and is always printed."""
    if sc.get("reclaimPolicy") is None:
        sc["reclaimPolicy"] = "Delete"
    if sc.get("volumeBindingMode") is None:
        sc["volumeBindingMode"] = "Immediate"
    sc.setdefault("provisioner", "")


def _validate_provisioner(provisioner: str, path: Path) -> list[FieldError]:
    """Upstream C{validateProvisioner}: required, a qualified name (checked lower-cased)."""
    if not provisioner:
        return [required(path, provisioner)]
    return [invalid(path, provisioner, m) for m in is_qualified_name(provisioner.lower())]


def _validate_parameters(params: dict | None, path: Path) -> list[FieldError]:
    """Upstream C{validateParameters}: at most 512 keys and 256 KiB of keys and values."""
    params = params or {}
    if len(params) > _MAX_PROVISIONER_PARAMETER_LEN:
        return [too_long(path, "Provisioner Parameters exceeded max allowed",
                         _MAX_PROVISIONER_PARAMETER_LEN)]
    errs: list[FieldError] = []
    total = 0
    for k, val in params.items():
        if not k:
            errs.append(invalid(path, k, "field can not be empty."))
        total += len(k.encode()) + len(str(val).encode())
    if total > _MAX_PROVISIONER_PARAMETER_SIZE:
        errs.append(too_long(path, "", _MAX_PROVISIONER_PARAMETER_SIZE))
    return errs


def _validate_topology_term(term: dict, path: Path) -> tuple[dict, list[FieldError]]:
    """Upstream C{ValidateTopologySelectorTerm}: C{({key: set(values)}, errors)}."""
    errs: list[FieldError] = []
    expr_map: dict[str, frozenset] = {}
    expr_path = path.child("matchLabelExpressions")
    for i, req in enumerate(term.get("matchLabelExpressions") or []):
        req = req or {}
        idx = expr_path.index(i)
        values_path = idx.child("values")
        values = req.get("values") or []
        if not values:
            errs.append(required(values_path))
        seen: set[str] = set()
        for j, value in enumerate(values):
            if value in seen:
                errs.append(duplicate(values_path.index(j), value))
            seen.add(value)
        key = req.get("key") or ""
        errs.extend(validate_label_name(key, idx.child("key")))
        if key in expr_map:
            errs.append(duplicate(idx.child("key"), key))
        expr_map[key] = frozenset(seen)
    return expr_map, errs


def _validate_allowed_topologies(terms: list | None, path: Path) -> list[FieldError]:
    """
    Upstream C{validateAllowedTopologies}.  Upstream compares each term with a list that starts
    with one empty entry per term (semantic equality: empty equals nil), so a term without
    expressions is reported as a duplicate once per term; that quirk is kept.
    """
    if not terms:
        return []
    errs: list[FieldError] = []
    raw: list[dict] = [{} for _ in terms]
    for i, term in enumerate(terms):
        idx = path.index(i)
        expr_map, term_errs = _validate_topology_term(term or {}, idx)
        errs.extend(term_errs)
        for seen in raw:
            if seen == expr_map:
                errs.append(duplicate(idx.child("matchLabelExpressions"), ""))
        raw.append(expr_map)
    return errs


def validate_storage_class(sc: dict) -> list[FieldError]:
    """
    Upstream C{ValidateStorageClass}: DNS-subdomain name, provisioner, parameters,
    C{reclaimPolicy} (C{Delete}/C{Retain}), C{volumeBindingMode} (required:
    C{Immediate}/C{WaitForFirstConsumer}) and C{allowedTopologies}.
    """
    errs = validate_object_meta(_meta(sc), False, name_is_dns_subdomain, Path("metadata"))
    errs.extend(_validate_provisioner(sc.get("provisioner") or "", Path("provisioner")))
    errs.extend(_validate_parameters(sc.get("parameters"), Path("parameters")))
    policy = sc.get("reclaimPolicy") or ""
    if policy and policy not in _RECLAIM_POLICIES:
        errs.append(not_supported(Path("reclaimPolicy"), policy, _RECLAIM_POLICIES))
    mode = sc.get("volumeBindingMode")
    if mode is None:
        errs.append(required(Path("volumeBindingMode")))
    elif mode not in _BINDING_MODES:
        errs.append(not_supported(Path("volumeBindingMode"), mode, _BINDING_MODES))
    errs.extend(_validate_allowed_topologies(sc.get("allowedTopologies"),
                                             Path("allowedTopologies")))
    return errs


def validate_storage_class_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{storageClassStrategy.ValidateUpdate}: L{validate_storage_class}, the ObjectMeta
    update rules, and C{parameters}, C{provisioner}, C{reclaimPolicy} (Forbidden) and
    C{volumeBindingMode} (immutable) unchanged.
    """
    errs = validate_storage_class(new)
    errs.extend(validate_object_meta_update(_meta(new), _meta(old), Path("metadata")))
    if new.get("parameters") != (old.get("parameters") or None):
        errs.append(forbidden(Path("parameters"), "updates to parameters are forbidden."))
    if (new.get("provisioner") or "") != (old.get("provisioner") or ""):
        errs.append(forbidden(Path("provisioner"), "updates to provisioner are forbidden."))
    if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
        errs.append(forbidden(Path("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
    errs.extend(validate_immutable_field(new.get("volumeBindingMode"),
                                         old.get("volumeBindingMode"),
                                         Path("volumeBindingMode")))
    return errs


# --------------------------------------------------------------------------------------------
# CSIDriver


def validate_csi_driver_name(name: str, path: Path) -> list[FieldError]:
    """Upstream C{ValidateCSIDriverName}: required, at most 63 characters, a DNS subdomain
    (checked lower-cased)."""
    errs: list[FieldError] = []
    if not name:
        errs.append(required(path))
    if len(name) > _CSI_DRIVER_NAME_MAX_LENGTH:
        errs.append(too_long(path, name, _CSI_DRIVER_NAME_MAX_LENGTH))
    errs.extend(invalid(path, name, m) for m in is_dns1123_subdomain(name.lower()))
    return errs


def default_csi_driver(driver: dict) -> None:
    """
    Upstream C{SetDefaults_CSIDriver}: C{attachRequired: true}, C{podInfoOnMount: false},
    C{storageCapacity: false}, C{fsGroupPolicy: ReadWriteOnceWithFSType},
    C{volumeLifecycleModes: [Persistent]}, C{requiresRepublish: false},
    C{seLinuxMount: false}.
    """
    spec = driver.get("spec")
    if not isinstance(spec, dict):
        spec = driver["spec"] = {}
    for key, value in (("attachRequired", True), ("podInfoOnMount", False),
                       ("storageCapacity", False), ("fsGroupPolicy", "ReadWriteOnceWithFSType")):
        if spec.get(key) is None:
            spec[key] = value
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]
    for key in ("requiresRepublish", "seLinuxMount"):
        if spec.get(key) is None:
            spec[key] = False


def _validate_token_requests(requests: list | None, path: Path) -> list[FieldError]:
    """Upstream C{validateTokenRequests}: unique audiences, 600 <= expirationSeconds <= 2^32."""
    errs: list[FieldError] = []
    audiences: set[str] = set()
    for i, req in enumerate(requests or []):
        req = req or {}
        idx = path.index(i)
        audience = req.get("audience") or ""
        if audience in audiences:
            errs.append(duplicate(idx.child("audience"), audience))
            continue
        audiences.add(audience)
        secs = req.get("expirationSeconds")
        if secs is None:
            continue
        if secs < 600:
            errs.append(invalid(idx.child("expirationSeconds"), secs,
                                "may not specify a duration less than 10 minutes"))
        if secs > 1 << 32:
            errs.append(invalid(idx.child("expirationSeconds"), secs,
                                "may not specify a duration larger than 2^32 seconds"))
    return errs


def _validate_csi_driver_spec(spec: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateCSIDriverSpec} (including its C{attachedRequired} path spelling)."""
    errs: list[FieldError] = []
    for key, child in (("attachRequired", "attachedRequired"),
                       ("podInfoOnMount", "podInfoOnMount"),
                       ("storageCapacity", "storageCapacity")):
        if spec.get(key) is None:
            errs.append(required(path.child(child)))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in _FS_GROUP_POLICIES:
        errs.append(not_supported(path.child("fsGroupPolicy"), policy, _FS_GROUP_POLICIES))
    errs.extend(_validate_token_requests(spec.get("tokenRequests"), path.child("tokenRequests")))
    for mode in spec.get("volumeLifecycleModes") or []:
        if mode not in _LIFECYCLE_MODES:
            errs.append(not_supported(path.child("volumeLifecycleModes"), mode, _LIFECYCLE_MODES))
    if spec.get("seLinuxMount") is None:
        errs.append(required(path.child("seLinuxMount")))
    return errs


def _path_segment_name(name: str, prefix: bool) -> list[str]:
    """C{path.ValidatePathSegmentName}, the generic Store's name rule."""
    msgs: list[str] = []
    if not prefix and name in (".", ".."):
        msgs.append(f"may not be '{name}'")
    msgs.extend(f"may not contain '{bad}'" for bad in ("/", "%") if bad in name)
    return msgs


def validate_csi_driver(driver: dict) -> list[FieldError]:
    """
    Upstream C{ValidateCSIDriver} (errors on C{name}, not C{metadata.name}) and C{spec}; when
    those pass, the generic ObjectMeta checks C{rest.BeforeCreate} runs afterwards.
    """
    errs = validate_csi_driver_name(_meta(driver).get("name") or "", Path("name"))
    errs.extend(_validate_csi_driver_spec(driver.get("spec") or {}, Path("spec")))
    if errs:
        return errs
    return validate_object_meta(_meta(driver), False, _path_segment_name, Path("metadata"))


def validate_csi_driver_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateCSIDriverUpdate}: L{validate_csi_driver}, then C{attachRequired} and
    C{volumeLifecycleModes} immutable.
    """
    errs = validate_csi_driver_name(_meta(new).get("name") or "", Path("name"))
    nspec, ospec = new.get("spec") or {}, old.get("spec") or {}
    errs.extend(_validate_csi_driver_spec(nspec, Path("spec")))
    errs.extend(validate_immutable_field(nspec.get("attachRequired"), ospec.get("attachRequired"),
                                         Path("spec").child("attachRequired")))
    errs.extend(validate_immutable_field(nspec.get("volumeLifecycleModes"),
                                         ospec.get("volumeLifecycleModes"),
                                         Path("spec").child("volumeLifecycleModes")))
    if errs:
        return errs
    return validate_object_meta_update(_meta(new), _meta(old), Path("metadata"))


def prepare_csi_driver_for_update(new: dict, old: dict) -> None:
    """Upstream C{csiDriverStrategy.PrepareForUpdate}: a spec change bumps the generation."""
    if (new.get("spec") or {}) != (old.get("spec") or {}):
        meta = new.setdefault("metadata", {})
        meta["generation"] = (_meta(old).get("generation") or 0) + 1


# --------------------------------------------------------------------------------------------
# CSINode


def default_csi_node(node: dict) -> None:
    """C{spec.drivers} has no omitempty: a Go round trip prints C{null} when empty."""
    spec = node.get("spec")
    if not isinstance(spec, dict):
        spec = node["spec"] = {}
    if not spec.get("drivers"):
        spec["drivers"] = None
    for d in spec.get("drivers") or []:
        if isinstance(d, dict):
            d.setdefault("name", "")
            d.setdefault("nodeID", "")
            if not d.get("topologyKeys"):
                d["topologyKeys"] = None


def _validate_csi_node_driver(driver: dict, names: set, path: Path) -> list[FieldError]:
    """Upstream C{validateCSINodeDriver}."""
    name = driver.get("name") or ""
    errs = validate_csi_driver_name(name, path.child("name"))
    node_id = driver.get("nodeID") or ""
    if not node_id:
        errs.append(required(path.child("nodeID"), node_id))
    if len(node_id) > _CSI_NODE_ID_MAX_LENGTH:
        errs.append(invalid(path.child("nodeID"), node_id,
                            f"must be {_CSI_NODE_ID_MAX_LENGTH} characters or less"))
    count = (driver.get("allocatable") or {}).get("count")
    if count is not None and count < 0:
        errs.append(invalid(path.child("allocatable").child("count"), count,
                            "must be greater than or equal to 0"))
    if name in names:
        errs.append(duplicate(path.child("name"), name))
    names.add(name)
    keys: set[str] = set()
    for key in driver.get("topologyKeys") or []:
        if not key:
            errs.append(required(path, key))
        if key in keys:
            errs.append(duplicate(path, key))
        keys.add(key)
        errs.extend(validate_label_name(key, path))
    return errs


def validate_csi_node(node: dict) -> list[FieldError]:
    """Upstream C{ValidateCSINode}: DNS-subdomain (node) name and each of C{spec.drivers}."""
    errs = validate_object_meta(_meta(node), False, name_is_dns_subdomain, Path("metadata"))
    names: set[str] = set()
    drivers_path = Path("spec").child("drivers")
    for i, d in enumerate((node.get("spec") or {}).get("drivers") or []):
        errs.extend(_validate_csi_node_driver(d or {}, names, drivers_path.index(i)))
    return errs


def validate_csi_node_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateCSINodeUpdate}: L{validate_csi_node}, the ObjectMeta update rules, and
    for every driver kept by name its C{nodeID}, C{topologyKeys} and C{allocatable} unchanged.
    """
    errs = validate_csi_node(new)
    errs.extend(validate_object_meta_update(_meta(new), _meta(old), Path("metadata")))
    new_drivers = (new.get("spec") or {}).get("drivers") or []
    drivers_path = Path("spec").child("drivers")
    for od in (old.get("spec") or {}).get("drivers") or []:
        for i, nd in enumerate(new_drivers):
            if (nd or {}).get("name") != (od or {}).get("name"):
                continue
            idx = drivers_path.index(i)
            if nd.get("nodeID") != od.get("nodeID"):
                errs.append(invalid(idx.child("nodeID"), nd.get("nodeID") or "",
                                    FIELD_IMMUTABLE_ERROR_MSG))
            if (nd.get("topologyKeys") or None) != (od.get("topologyKeys") or None):
                errs.append(invalid(idx.child("topologyKeys"), nd.get("topologyKeys"),
                                    FIELD_IMMUTABLE_ERROR_MSG))
            if nd.get("allocatable") != od.get("allocatable"):
                errs.append(invalid(idx.child("allocatable"), nd.get("allocatable"),
                                    FIELD_IMMUTABLE_ERROR_MSG))
    return errs


# --------------------------------------------------------------------------------------------
# VolumeAttachment


def default_volume_attachment(va: dict) -> None:
    """C{spec} fields and C{status.attached} have no omitempty: always printed."""
    spec = va.get("spec")
    if not isinstance(spec, dict):
        spec = va["spec"] = {}
    spec.setdefault("attacher", "")
    if not isinstance(spec.get("source"), dict):
        spec["source"] = {}
    spec.setdefault("nodeName", "")
    status = va.get("status")
    if not isinstance(status, dict):
        status = va["status"] = {}
    status.setdefault("attached", False)


def prepare_volume_attachment_for_create(va: dict) -> None:
    """Upstream C{volumeAttachmentStrategy.PrepareForCreate}: C{status} is reset."""
    va["status"] = {"attached": False}


def prepare_volume_attachment_for_update(new: dict, old: dict) -> None:
    """Upstream C{PrepareForUpdate}: the stored C{status} is kept."""
    new["status"] = copy.deepcopy(old.get("status") or {"attached": False})


def prepare_volume_attachment_status_for_update(new: dict, old: dict) -> None:
    """Upstream status C{PrepareForUpdate}: the stored C{spec} is kept."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})
    new.setdefault("status", {}).setdefault("attached", False)


def _validate_volume_error(err: dict | None, path: Path) -> list[FieldError]:
    message = (err or {}).get("message") or ""
    if len(message) > _MAX_VOLUME_ERROR_MESSAGE_SIZE:
        return [too_long(path.child("message"), message, _MAX_VOLUME_ERROR_MESSAGE_SIZE)]
    return []


def validate_volume_attachment(va: dict) -> list[FieldError]:
    """
    Upstream C{ValidateVolumeAttachment} and C{ValidateVolumeAttachmentV1}: DNS-subdomain name;
    C{spec.attacher} required (and a CSI driver name), exactly one of
    C{spec.source.persistentVolumeName} / C{inlineVolumeSpec}, a DNS-subdomain
    C{spec.nodeName}; bounded C{status.attachmentMetadata} and error messages.
    """
    errs = validate_object_meta(_meta(va), False, name_is_dns_subdomain, Path("metadata"))
    spec = va.get("spec") or {}
    sp = Path("spec")
    attacher = spec.get("attacher") or ""
    if not attacher:
        errs.append(required(sp.child("attacher"), attacher))
    source = spec.get("source") or {}
    src_path = sp.child("source")
    pv_name = source.get("persistentVolumeName")
    inline = source.get("inlineVolumeSpec")
    either = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
    if inline is None and pv_name is None:
        errs.append(required(src_path, either))
    elif inline is not None and pv_name is not None:
        errs.append(forbidden(src_path, either))
    elif pv_name is not None and not pv_name:
        errs.append(required(src_path.child("persistentVolumeName"),
                             "must specify non empty persistentVolumeName"))
    node_name = spec.get("nodeName") or ""
    errs.extend(invalid(sp.child("nodeName"), node_name, m)
                for m in name_is_dns_subdomain(node_name, False))
    status = va.get("status") or {}
    st_path = Path("status")
    total = sum(len(k.encode()) + len(str(v).encode())
                for k, v in (status.get("attachmentMetadata") or {}).items())
    if total > _MAX_ATTACHED_VOLUME_METADATA_SIZE:
        errs.append(too_long(st_path.child("attachmentMetadata"), "",
                             _MAX_ATTACHED_VOLUME_METADATA_SIZE))
    errs.extend(_validate_volume_error(status.get("attachError"), st_path.child("attachError")))
    errs.extend(_validate_volume_error(status.get("detachError"), st_path.child("detachError")))
    errs.extend(validate_csi_driver_name(attacher, Path("spec.attacher")))
    if pv_name:
        errs.extend(invalid(Path("spec.source.persistentVolumeName"), pv_name, m)
                    for m in name_is_dns_subdomain(pv_name, False))
    return errs


def validate_volume_attachment_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateVolumeAttachmentUpdate}: C{spec} is immutable."""
    errs = validate_volume_attachment(new)
    errs.extend(validate_object_meta_update(_meta(new), _meta(old), Path("metadata")))
    if (new.get("spec") or {}) != (old.get("spec") or {}):
        errs.append(invalid(Path("spec"), new.get("spec"), FIELD_IMMUTABLE_ERROR_MSG))
    return errs


# --------------------------------------------------------------------------------------------
# CSIStorageCapacity


def default_csi_storage_capacity(cap: dict) -> None:
    """C{storageClassName} has no omitempty; quantities take their canonical form."""
    cap.setdefault("storageClassName", "")
    for key in ("capacity", "maximumVolumeSize"):
        if cap.get(key) is not None:
            cap[key] = canonical_quantity(cap[key])


def _selector_has_invalid_label_value(sel: dict | None) -> bool:
    for expr in (sel or {}).get("matchExpressions") or []:
        if any(is_valid_label_value(v) for v in (expr or {}).get("values") or []):
            return True
    return False


def validate_csi_storage_capacity(cap: dict, allow_invalid_label_value: bool = False
                                  ) -> list[FieldError]:
    """
    Upstream C{ValidateCSIStorageCapacity}: namespaced DNS-subdomain name, a valid
    C{nodeTopology} selector, a DNS-subdomain C{storageClassName}, non-negative C{capacity}.
    """
    errs = validate_object_meta(_meta(cap), True, name_is_dns_subdomain, Path("metadata"))
    errs.extend(validate_label_selector(cap.get("nodeTopology"), Path("nodeTopology"),
                                        allow_invalid_label_value))
    sc_name = cap.get("storageClassName") or ""
    errs.extend(invalid(Path("storageClassName"), sc_name, m)
                for m in name_is_dns_subdomain(sc_name, False))
    raw = cap.get("capacity")
    if raw is not None:
        try:
            q = parse_quantity(raw)
        except QuantityError:
            q = None
        if q is not None and q.value < 0:
            errs.append(invalid(Path("capacity"), str(q), "must be greater than or equal to 0"))
    return errs


def validate_csi_storage_capacity_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateCSIStorageCapacityUpdate}: C{nodeTopology} and C{storageClassName} are
    immutable.
    """
    errs = validate_csi_storage_capacity(
        new, _selector_has_invalid_label_value(old.get("nodeTopology")))
    errs.extend(validate_object_meta_update(_meta(new), _meta(old), Path("metadata")))
    if new.get("nodeTopology") != old.get("nodeTopology"):
        errs.append(invalid(Path("nodeTopology"), new.get("nodeTopology"),
                            FIELD_IMMUTABLE_ERROR_MSG))
    if (new.get("storageClassName") or "") != (old.get("storageClassName") or ""):
        errs.append(invalid(Path("storageClassName"), new.get("storageClassName") or "",
                            FIELD_IMMUTABLE_ERROR_MSG))
    return errs
