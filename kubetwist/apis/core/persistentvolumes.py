# -*- test-case-name: tests.apis.test_core_persistentvolumes -*-
"""
PersistentVolumes and PersistentVolumeClaims: upstream C{pkg/apis/core/v1/defaults.go}
(C{SetDefaults_PersistentVolume}, C{SetDefaults_PersistentVolumeClaim(Spec)}),
C{pkg/apis/core/validation} (C{ValidatePersistentVolume*}, C{ValidatePersistentVolumeClaim*}),
C{pkg/registry/core/persistentvolume/strategy.go} and
C{pkg/registry/core/persistentvolumeclaim/strategy.go}, plus the finalizers the
C{StorageObjectInUseProtection} admission plugin adds on create
(C{kubernetes.io/pv-protection}, C{kubernetes.io/pvc-protection}).

Not covered yet: the per-source field rules of each volume plugin (only one source, and
C{local} needing node affinity, are checked), C{nodeAffinity} rules, the C{cmp.Diff} text
upstream appends to its immutable-spec messages.
"""

from __future__ import annotations

import copy
import posixpath
from typing import Any

from kubetwist.apimachinery.validation import (
    name_is_dns_subdomain,
    validate_immutable_field,
    validate_label_selector,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.pod_warnings import pvc_warnings
from kubetwist.apis.core.podspec_defaults import (
    _default_pvc_spec,
    default_resource_list,
    default_volume,
)
from kubetwist.apis.core.printers import PERSISTENTVOLUME_TABLE, PERSISTENTVOLUMECLAIM_TABLE
from kubetwist.registry.rest import Strategy
from kubetwist.runtime import govalues
from kubetwist.runtime.field import (
    FieldError,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kubetwist.runtime.quantity import QuantityError, parse_quantity

__all__ = [
    "PERSISTENTVOLUMECLAIM_STATUS_STRATEGY",
    "PERSISTENTVOLUMECLAIM_STRATEGY",
    "PERSISTENTVOLUME_STATUS_STRATEGY",
    "PERSISTENTVOLUME_STRATEGY",
    "PV_PROTECTION_FINALIZER",
    "PVC_PROTECTION_FINALIZER",
    "default_persistent_volume",
    "default_persistent_volume_claim",
    "validate_persistent_volume",
    "validate_persistent_volume_claim",
    "validate_persistent_volume_claim_update",
    "validate_persistent_volume_update",
]

PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"
PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"

_ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
_VOLUME_MODES = ["Block", "Filesystem"]
_RECLAIM_POLICIES = ["Delete", "Recycle", "Retain"]

#: The sources of a C{PersistentVolumeSource}, in the order upstream validates them.
PV_SOURCES = (
    "hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "nfs", "rbd",
    "quobyte", "cinder", "cephfs", "iscsi", "fc", "flexVolume", "azureFile", "vsphereVolume",
    "photonPersistentDisk", "portworxVolume", "azureDisk", "scaleIO", "local", "storageos", "csi",
)


def _dict(obj: dict, key: str) -> dict:
    value = obj.get(key)
    if not isinstance(value, dict):
        value = obj[key] = {}
    return value


# --------------------------------------------------------------------------------------------
# defaults


def default_persistent_volume(pv: dict) -> None:
    """
    Upstream C{SetDefaults_PersistentVolume} and the generated walk: C{status.phase: Pending},
    C{persistentVolumeReclaimPolicy: Retain}, C{volumeMode: Filesystem}, C{capacity} rounded
    up to milli units, and the source defaults shared with pod volumes (C{hostPath.type: ""},
    the RBD/iSCSI/AzureDisk/ScaleIO markers); C{azureFile.secretNamespace} is a pointer
    without C{omitempty}, written C{null} when unset.
    """
    spec = _dict(pv, "spec")
    status = _dict(pv, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"
    if not spec.get("persistentVolumeReclaimPolicy"):
        spec["persistentVolumeReclaimPolicy"] = "Retain"
    if spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    if isinstance(spec.get("capacity"), dict):
        default_resource_list(spec["capacity"])
    sources = {k: spec[k] for k in PV_SOURCES if isinstance(spec.get(k), dict)}
    if sources:
        default_volume(sources)
        spec.update(sources)
    az = spec.get("azureFile")
    if isinstance(az, dict):
        az.setdefault("secretNamespace", None)


def default_persistent_volume_claim(pvc: dict) -> None:
    """
    Upstream C{SetDefaults_PersistentVolumeClaim} and C{SetDefaults_PersistentVolumeClaimSpec}:
    C{status.phase: Pending}, C{spec.volumeMode: Filesystem}, resource lists rounded up.
    """
    _default_pvc_spec(_dict(pvc, "spec"))
    status = _dict(pvc, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"


# --------------------------------------------------------------------------------------------
# validation


def _quantity(raw: Any):
    try:
        return parse_quantity(raw)
    except (QuantityError, ValueError, TypeError):
        return None


def _positive_quantity(raw: Any, path: Path) -> list[FieldError]:
    """Upstream C{ValidatePositiveQuantityValue}."""
    q = _quantity(raw)
    if q is not None and q.value <= 0:
        return [invalid(path, str(q), "must be greater than zero")]
    return []


def _access_modes(modes: list, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    rwop = other = False
    for mode in modes:
        if mode not in _ACCESS_MODES:
            errs.append(not_supported(path, mode, _ACCESS_MODES))
        elif mode == "ReadWriteOncePod":
            rwop = True
        else:
            other = True
    if rwop and other:
        errs.append(forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def _class_name(value: str, path: Path) -> list[FieldError]:
    return [invalid(path, value, m) for m in name_is_dns_subdomain(value, False)]


def validate_persistent_volume_spec(spec: dict, path: Path) -> list[FieldError]:
    """
    Upstream C{ValidatePersistentVolumeSpec} (not inline): access modes, C{capacity} holding
    exactly C{storage} and positive, a known reclaim policy, exactly one volume source, no
    C{Recycle} for a hostPath of C{/}, the storage class name and the volume mode.
    """
    errs: list[FieldError] = []
    modes = spec.get("accessModes") or []
    if not modes:
        errs.append(required(path.child("accessModes")))
    errs.extend(_access_modes(modes, path.child("accessModes")))
    capacity = spec.get("capacity") or {}
    if not capacity:
        errs.append(required(path.child("capacity")))
    if "storage" not in capacity or len(capacity) > 1:
        errs.append(not_supported(path.child("capacity"), capacity, ["storage"]))
    for name in sorted(capacity):
        errs.extend(_positive_quantity(capacity[name], path.child("capacity").key(name)))
    policy = spec.get("persistentVolumeReclaimPolicy") or ""
    if policy and policy not in _RECLAIM_POLICIES:
        errs.append(not_supported(path.child("persistentVolumeReclaimPolicy"), policy,
                                  _RECLAIM_POLICIES))
    count = 0
    for source in PV_SOURCES:
        if spec.get(source) is None:
            continue
        if count > 0:
            errs.append(forbidden(path.child(source), "may not specify more than 1 volume type"))
            continue
        count += 1
        if source == "local" and spec.get("nodeAffinity") is None:
            errs.append(required(path.child("nodeAffinity"), "Local volume requires node affinity"))
    if count == 0:
        errs.append(required(path, "must specify a volume type"))
    host = spec.get("hostPath")
    if isinstance(host, dict) and posixpath.normpath(host.get("path") or ".") == "/" \
            and policy == "Recycle":
        errs.append(forbidden(path.child("persistentVolumeReclaimPolicy"),
                              "may not be 'recycle' for a hostPath mount of '/'"))
    if spec.get("storageClassName"):
        errs.extend(_class_name(spec["storageClassName"], path.child("storageClassName")))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in _VOLUME_MODES:
        errs.append(not_supported(path.child("volumeMode"), mode, _VOLUME_MODES))
    return errs


def validate_persistent_volume(pv: dict) -> list[FieldError]:
    """Upstream C{ValidatePersistentVolume}: cluster-scoped ObjectMeta and the spec."""
    errs = validate_object_meta(pv.get("metadata") or {}, False, name_is_dns_subdomain,
                                Path("metadata"))
    errs.extend(validate_persistent_volume_spec(pv.get("spec") or {}, Path("spec")))
    return errs


def _pv_source(spec: dict) -> dict:
    return {k: spec[k] for k in PV_SOURCES if spec.get(k) is not None}


def validate_persistent_volume_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidatePersistentVolumeUpdate} (with the ObjectMeta update rules the strategy
    adds): the volume source and C{volumeMode} are immutable (the latter reported at the
    path C{volumeMode}, as upstream).
    """
    errs = validate_persistent_volume(new)
    nspec, ospec = new.get("spec") or {}, old.get("spec") or {}
    nsrc, osrc = _pv_source(nspec), _pv_source(ospec)
    ncsi, ocsi = nsrc.get("csi"), osrc.get("csi")
    if isinstance(ncsi, dict) and isinstance(ocsi, dict) \
            and ocsi.get("controllerExpandSecretRef") is None:
        nsrc = dict(nsrc, csi={k: v for k, v in ncsi.items() if k != "controllerExpandSecretRef"})
    src_type = govalues.internal_type("io.k8s.api.core.v1.PersistentVolumeSource")
    ngo, ogo = govalues.from_json(src_type, nsrc), govalues.from_json(src_type, osrc)
    if not govalues.semantic_equal(src_type, ngo, ogo):
        errs.append(forbidden(Path("spec", "persistentvolumesource"),
                              "spec.persistentvolumesource is immutable after creation\n"
                              + govalues.cmp_diff(src_type, ogo, ngo)))
    errs.extend(validate_immutable_field(nspec.get("volumeMode"), ospec.get("volumeMode"),
                                         Path("volumeMode")))
    errs.extend(validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                            Path("metadata")))
    return errs


def validate_persistent_volume_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidatePersistentVolumeStatusUpdate}."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    if not (new.get("metadata") or {}).get("resourceVersion"):
        errs.append(required(Path("resourceVersion")))
    return errs


def _validate_data_source(ref: dict, path: Path, namespaced: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    if not ref.get("name"):
        errs.append(required(path.child("name")))
    if not ref.get("kind"):
        errs.append(required(path.child("kind")))
    group = ref.get("apiGroup") or ""
    if not group and ref.get("kind") != "PersistentVolumeClaim":
        errs.append(invalid(path, ref.get("kind") or "",
                            "must be 'PersistentVolumeClaim' when referencing the default "
                            "apiGroup"))
    if group:
        from kubetwist.apimachinery.validation import is_dns1123_subdomain

        errs.extend(invalid(path.child("apiGroup"), group, m) for m in is_dns1123_subdomain(group))
    if namespaced and ref.get("namespace"):
        from kubetwist.apimachinery.validation import is_dns1123_label

        errs.extend(invalid(path.child("namespace"), ref["namespace"], m)
                    for m in is_dns1123_label(ref["namespace"]))
    return errs


def validate_persistent_volume_claim_spec(spec: dict, path: Path) -> list[FieldError]:
    """
    Upstream C{ValidatePersistentVolumeClaimSpec}: at least one known access mode, the
    selector, a positive C{resources.requests.storage} (path C{spec.resources[storage]}, as
    upstream), storage class and volume mode, data source and data source reference.
    """
    errs: list[FieldError] = []
    modes = spec.get("accessModes") or []
    if not modes:
        errs.append(required(path.child("accessModes"), "at least 1 access mode is required"))
    if spec.get("selector") is not None:
        errs.extend(validate_label_selector(spec["selector"], path.child("selector")))
    errs.extend(_access_modes(modes, path.child("accessModes")))
    requests = (spec.get("resources") or {}).get("requests") or {}
    storage_path = path.child("resources").key("storage")
    if "storage" not in requests:
        errs.append(required(storage_path))
    else:
        errs.extend(_positive_quantity(requests["storage"], storage_path))
    if spec.get("storageClassName"):
        errs.extend(_class_name(spec["storageClassName"], path.child("storageClassName")))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in _VOLUME_MODES:
        errs.append(not_supported(path.child("volumeMode"), mode, _VOLUME_MODES))
    ds, dsr = spec.get("dataSource"), spec.get("dataSourceRef")
    if isinstance(ds, dict):
        errs.extend(_validate_data_source(ds, path.child("dataSource"), False))
    if isinstance(dsr, dict):
        errs.extend(_validate_data_source(dsr, path.child("dataSourceRef"), True))
    if isinstance(dsr, dict) and dsr.get("namespace"):
        if isinstance(ds, dict):
            errs.append(invalid(path, str(path.child("dataSource")),
                                "may not be specified when dataSourceRef.namespace is specified"))
    elif isinstance(ds, dict) and isinstance(dsr, dict):
        if (ds.get("apiGroup"), ds.get("kind"), ds.get("name")) != \
                (dsr.get("apiGroup"), dsr.get("kind"), dsr.get("name")):
            errs.append(invalid(path, str(path.child("dataSource")), "must match dataSourceRef"))
    return errs


def validate_persistent_volume_claim(pvc: dict) -> list[FieldError]:
    """Upstream C{ValidatePersistentVolumeClaim}: namespaced ObjectMeta and the spec."""
    errs = validate_object_meta(pvc.get("metadata") or {}, True, name_is_dns_subdomain,
                                Path("metadata"))
    errs.extend(validate_persistent_volume_claim_spec(pvc.get("spec") or {}, Path("spec")))
    return errs


_BETA_CLASS = "volume.beta.kubernetes.io/storage-class"


def validate_persistent_volume_claim_update(new: dict, old: dict) -> list[FieldError]:
    """
    The PVC strategy's C{ValidateUpdate}: L{validate_persistent_volume_claim} then upstream
    C{ValidatePersistentVolumeClaimUpdate}: the spec is immutable except C{volumeName} (once),
    a bound claim's storage request and C{volumeAttributesClassName}, and the storage class set
    from the beta annotation (C{Forbidden} at C{spec}, with C{cmp.Diff} of the specs); the beta
    annotation is immutable; storage may not shrink; C{volumeMode} immutable (path
    C{volumeMode}, as upstream).
    """
    errs = validate_persistent_volume_claim(new)
    nmeta, ometa = new.get("metadata") or {}, old.get("metadata") or {}
    errs.extend(validate_object_meta_update(nmeta, ometa, Path("metadata")))
    nspec = copy.deepcopy(new.get("spec") or {})
    ospec = copy.deepcopy(old.get("spec") or {})
    if not ospec.get("volumeName"):
        if nspec.get("volumeName") is not None:
            ospec["volumeName"] = nspec["volumeName"]
        else:
            ospec.pop("volumeName", None)
    nann, oann = nmeta.get("annotations") or {}, ometa.get("annotations") or {}
    upgrade = (_BETA_CLASS in oann and ospec.get("storageClassName") is None
               and nspec.get("storageClassName") == oann[_BETA_CLASS]
               and nann.get(_BETA_CLASS) == oann[_BETA_CLASS])
    if upgrade:
        nspec.pop("storageClassName", None)
    elif nann.get(_BETA_CLASS, "") != oann.get(_BETA_CLASS, ""):
        errs.append(invalid(Path("metadata", "annotations", _BETA_CLASS),
                            nann.get(_BETA_CLASS, ""), "field is immutable"))
    if (new.get("status") or {}).get("phase") == "Bound":
        # a bound claim may change its storage request and volume attributes class
        requests = (nspec.get("resources") or {}).get("requests")
        if requests is not None:
            requests["storage"] = ((ospec.get("resources") or {}).get("requests")
                                   or {}).get("storage")
        if nspec.get("volumeAttributesClassName") is not None:
            nspec["volumeAttributesClassName"] = ospec.get("volumeAttributesClassName")
    spec_type = govalues.internal_type("io.k8s.api.core.v1.PersistentVolumeClaimSpec")
    ngo, ogo = govalues.from_json(spec_type, nspec), govalues.from_json(spec_type, ospec)
    if not govalues.semantic_equal(spec_type, ngo, ogo):
        errs.append(forbidden(Path("spec"), "spec is immutable after creation except "
                              "resources.requests and volumeAttributesClassName for bound claims"
                              "\n" + govalues.cmp_diff(spec_type, ogo, ngo)))
    new_size = _quantity(((new.get("spec") or {}).get("resources") or {}).get("requests", {}).get(
        "storage"))
    old_size = _quantity(((old.get("spec") or {}).get("resources") or {}).get("requests", {}).get(
        "storage"))
    if new_size is not None and old_size is not None and new_size.value < old_size.value:
        errs.append(forbidden(Path("spec", "resources", "requests", "storage"),
                              "field can not be less than previous value"))
    errs.extend(validate_immutable_field((new.get("spec") or {}).get("volumeMode"),
                                         (old.get("spec") or {}).get("volumeMode"),
                                         Path("volumeMode")))
    return errs


def validate_persistent_volume_claim_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidatePersistentVolumeClaimStatusUpdate}: ObjectMeta update rules, a
    C{resourceVersion}, non-negative capacities."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    if not (new.get("metadata") or {}).get("resourceVersion"):
        errs.append(required(Path("resourceVersion")))
    capacity = (new.get("status") or {}).get("capacity") or {}
    for name in sorted(capacity):
        q = _quantity(capacity[name])
        if q is not None and q.value < 0:
            errs.append(invalid(Path("status", "capacity").key(name), str(q),
                                "must be greater than or equal to 0"))
    return errs


# --------------------------------------------------------------------------------------------
# strategies


def _add_finalizer(obj: dict, name: str) -> None:
    meta = _dict(obj, "metadata")
    finalizers = meta.get("finalizers") or []
    if name not in finalizers:
        meta["finalizers"] = list(finalizers) + [name]


def prepare_pv_for_create(pv: dict) -> None:
    """
    Upstream C{persistentvolumeStrategy.PrepareForCreate}: the status is reset to
    C{phase: Pending} with C{lastPhaseTransitionTime} now (the object's creation time); the
    C{kubernetes.io/pv-protection} finalizer is added (upstream's admission plugin).
    """
    now = (pv.get("metadata") or {}).get("creationTimestamp")
    pv["status"] = {"phase": "Pending"}
    if now:
        pv["status"]["lastPhaseTransitionTime"] = now
    _add_finalizer(pv, PV_PROTECTION_FINALIZER)


def prepare_pv_for_update(new: dict, old: dict) -> None:
    """Upstream C{PrepareForUpdate}: the stored status is kept."""
    new["status"] = copy.deepcopy(old.get("status") or {})


def prepare_pv_status_for_update(new: dict, old: dict) -> None:
    """
    Upstream C{persistentvolumeStatusStrategy.PrepareForUpdate}: the stored spec is kept; a
    phase change stamps C{lastPhaseTransitionTime} unless the writer set a new one.
    """
    from kubetwist.apis.printers import now

    new["spec"] = copy.deepcopy(old.get("spec") or {})
    nstatus, ostatus = _dict(new, "status"), old.get("status") or {}
    if nstatus.get("phase") != ostatus.get("phase") and \
            nstatus.get("lastPhaseTransitionTime") in (None,
                                                       ostatus.get("lastPhaseTransitionTime")):
        import datetime

        stamp = datetime.datetime.fromtimestamp(int(now()), datetime.timezone.utc)
        nstatus["lastPhaseTransitionTime"] = stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def _normalize_data_sources(pvc: dict) -> None:
    """Upstream C{NormalizeDataSources}: C{dataSource} and C{dataSourceRef} mirror each other
    (when the reference names no other namespace)."""
    spec = pvc.get("spec") or {}
    ds, dsr = spec.get("dataSource"), spec.get("dataSourceRef")
    if isinstance(ds, dict) and dsr is None:
        spec["dataSourceRef"] = {k: ds[k] for k in ("apiGroup", "kind", "name") if k in ds}
    elif isinstance(dsr, dict) and ds is None and not dsr.get("namespace"):
        spec["dataSource"] = {k: dsr[k] for k in ("apiGroup", "kind", "name") if k in dsr}


def prepare_pvc_for_create(pvc: dict) -> None:
    """
    Upstream C{persistentvolumeclaimStrategy.PrepareForCreate}: the status is reset (and
    defaulted again to C{phase: Pending}, as the stored object is), data sources normalised;
    the C{kubernetes.io/pvc-protection} finalizer is added (upstream's admission plugin).
    """
    pvc["status"] = {"phase": "Pending"}
    _normalize_data_sources(pvc)
    _add_finalizer(pvc, PVC_PROTECTION_FINALIZER)


def prepare_pvc_for_update(new: dict, old: dict) -> None:
    """Upstream C{PrepareForUpdate}: the stored status is kept; data sources normalised."""
    new["status"] = copy.deepcopy(old.get("status") or {"phase": "Pending"})
    _normalize_data_sources(new)


def prepare_pvc_status_for_update(new: dict, old: dict) -> None:
    """Upstream C{persistentvolumeclaimStatusStrategy.PrepareForUpdate}: the stored spec is
    kept."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})


def name_field_attrs(obj: dict) -> dict[str, str]:
    """Upstream's legacy C{name} field label of PVs and PVCs (kept for compatibility)."""
    return {"name": (obj.get("metadata") or {}).get("name", "")}


PERSISTENTVOLUME_STRATEGY = Strategy(
    kind="PersistentVolume",
    namespaced=False,
    default=default_persistent_volume,
    prepare_for_create=prepare_pv_for_create,
    prepare_for_update=prepare_pv_for_update,
    validate=validate_persistent_volume,
    validate_update=validate_persistent_volume_update,
    field_attrs=name_field_attrs,
    table=PERSISTENTVOLUME_TABLE,
)

PERSISTENTVOLUME_STATUS_STRATEGY = Strategy(
    kind="PersistentVolume",
    namespaced=False,
    default=default_persistent_volume,
    prepare_for_create=prepare_pv_for_create,
    prepare_for_update=prepare_pv_status_for_update,
    validate=validate_persistent_volume,
    validate_update=validate_persistent_volume_status_update,
    field_attrs=name_field_attrs,
    table=PERSISTENTVOLUME_TABLE,
)

PERSISTENTVOLUMECLAIM_STRATEGY = Strategy(
    kind="PersistentVolumeClaim",
    default=default_persistent_volume_claim,
    prepare_for_create=prepare_pvc_for_create,
    prepare_for_update=prepare_pvc_for_update,
    validate=validate_persistent_volume_claim,
    validate_update=validate_persistent_volume_claim_update,
    field_attrs=name_field_attrs,
    table=PERSISTENTVOLUMECLAIM_TABLE,
    warnings=pvc_warnings,
)

PERSISTENTVOLUMECLAIM_STATUS_STRATEGY = Strategy(
    kind="PersistentVolumeClaim",
    default=default_persistent_volume_claim,
    prepare_for_create=prepare_pvc_for_create,
    prepare_for_update=prepare_pvc_status_for_update,
    validate=validate_persistent_volume_claim,
    validate_update=validate_persistent_volume_claim_status_update,
    field_attrs=name_field_attrs,
    table=PERSISTENTVOLUMECLAIM_TABLE,
)
