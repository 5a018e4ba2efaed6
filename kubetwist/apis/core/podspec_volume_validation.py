# -*- test-case-name: tests.apis.test_pods -*-
"""
Validation of pod volumes and the path, downward API and projection rules they share with
containers: upstream C{k8s.io/kubernetes/pkg/apis/core/validation} (C{ValidateVolumes},
C{validateVolumeSource} and the per-source validators, C{validateKeyToPath},
C{validateDownwardAPIVolumeFile}, C{validateProjectionSources}) at v1.32.
"""

from __future__ import annotations

import re
from typing import Any

from kubetwist.apimachinery.validation import (
    inclusive_range_error,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    name_is_dns_subdomain,
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
from kubetwist.runtime.quantity import QuantityError, parse_quantity

__all__ = ["validate_volumes", "validate_dns1123_label"]

_FILE_MODE_ERROR_MSG = "must be a number between 0 and 0777 (octal), both inclusive"


def validate_dns1123_label(value: str, path: Path) -> list[FieldError]:
    """Upstream C{ValidateDNS1123Label}."""
    return [invalid(path, value, m) for m in is_dns1123_label(value)]


def _validate_qualified_name(value: str, path: Path) -> list[FieldError]:
    return [invalid(path, value, m) for m in is_qualified_name(value)]


def _mode_errors(value: Any, path: Path) -> list[FieldError]:
    if isinstance(value, int) and not isinstance(value, bool) and (value > 0o777 or value < 0):
        return [invalid(path, value, _FILE_MODE_ERROR_MSG)]
    return []


def _qty(raw: Any):
    try:
        return parse_quantity(raw)
    except QuantityError:
        return None


# --------------------------------------------------------------------------------------------
# paths


def _validate_path_no_backsteps(target: str, path: Path) -> list[FieldError]:
    if ".." in target.replace("\\", "/").split("/"):
        return [invalid(path, target, "must not contain '..'")]
    return []


def _validate_local_descending_path(target: str, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if target.startswith("/"):
        errs.append(invalid(path, target, "must be a relative path"))
    errs.extend(_validate_path_no_backsteps(target, path))
    return errs


def _validate_local_non_reserved_path(target: str, path: Path) -> list[FieldError]:
    errs = _validate_local_descending_path(target, path)
    if target.startswith("..") and not target.startswith("../"):
        errs.append(invalid(path, target, "must not start with '..'"))
    return errs


def _validate_key_to_path(kp: dict, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if not kp.get("key"):
        errs.append(required(path.child("key")))
    if not kp.get("path"):
        errs.append(required(path.child("path")))
    errs.extend(_validate_local_non_reserved_path(kp.get("path") or "", path.child("path")))
    errs.extend(_mode_errors(kp.get("mode"), path.child("mode")))
    return errs


# --------------------------------------------------------------------------------------------
# volumes

_VOLUME_DOWNWARD_API_FIELDS = ["metadata.annotations", "metadata.labels", "metadata.name",
                               "metadata.namespace", "metadata.uid"]
_ENV_DOWNWARD_API_FIELDS = ["metadata.name", "metadata.namespace", "metadata.uid",
                            "spec.nodeName", "spec.serviceAccountName", "status.hostIP",
                            "status.hostIPs", "status.podIP", "status.podIPs"]
_CONTAINER_RESOURCE_FIELDS = ["limits.cpu", "limits.ephemeral-storage", "limits.memory",
                              "requests.cpu", "requests.ephemeral-storage", "requests.memory"]
_HOST_PATH_TYPES = ["", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File",
                    "FileOrCreate", "Socket"]
_LABEL_ANNOTATION_SUBSCRIPT_RE = re.compile(r"^(metadata\.(?:labels|annotations))\['(.*)'\]$")


def _validate_object_field_selector(fs: dict, expressions: list[str],
                                    path: Path) -> list[FieldError]:
    if not fs.get("apiVersion"):
        return [required(path.child("apiVersion"))]
    fp = fs.get("fieldPath") or ""
    if not fp:
        return [required(path.child("fieldPath"))]
    if fs["apiVersion"] != "v1":
        return [invalid(path.child("fieldPath"), fp,
                        f'error converting fieldPath: field label not supported: {fp}')]
    m = _LABEL_ANNOTATION_SUBSCRIPT_RE.match(fp)
    if m:
        sub = m.group(2)
        if m.group(1) == "metadata.annotations":
            sub = sub.lower()
        return _validate_qualified_name(sub, path)
    if fp not in expressions:
        return [not_supported(path.child("fieldPath"), fp, expressions)]
    return []


def _validate_resource_field_selector(fs: dict, path: Path, volume: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    resource = fs.get("resource") or ""
    if volume and not fs.get("containerName"):
        errs.append(required(path.child("containerName")))
    elif not resource:
        errs.append(required(path.child("resource")))
    elif resource not in _CONTAINER_RESOURCE_FIELDS and not resource.startswith(
            ("requests.hugepages-", "limits.hugepages-")):
        errs.append(not_supported(path.child("resource"), resource, _CONTAINER_RESOURCE_FIELDS))
    divisor = fs.get("divisor")
    q = _qty(divisor) if divisor not in (None, "", "0") else None
    if q is not None and q.value != 0:
        text = str(q)
        if resource in ("limits.cpu", "requests.cpu"):
            if text not in ("1m", "1"):
                errs.append(invalid(path.child("divisor"), resource,
                                    "only divisor's values 1m and 1 are supported with the cpu "
                                    "resource"))
        elif resource in ("limits.memory", "requests.memory", "limits.ephemeral-storage",
                          "requests.ephemeral-storage") or "hugepages-" in resource:
            allowed = ["1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi",
                       "1Ei"]
            if text not in allowed:
                what = ("memory" if "memory" in resource else
                        "local ephemeral storage" if "ephemeral" in resource else "hugepages")
                errs.append(invalid(path.child("divisor"), resource,
                                    "only divisor's values " + ", ".join(allowed)
                                    + f" are supported with the {what} resource"))
    return errs


def _validate_downward_api_file(f: dict, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if not f.get("path"):
        errs.append(required(path.child("path")))
    errs.extend(_validate_local_non_reserved_path(f.get("path") or "", path.child("path")))
    if isinstance(f.get("fieldRef"), dict):
        errs.extend(_validate_object_field_selector(f["fieldRef"], _VOLUME_DOWNWARD_API_FIELDS,
                                                    path.child("fieldRef")))
        if f.get("resourceFieldRef") is not None:
            errs.append(invalid(path, "resource",
                                "fieldRef and resourceFieldRef can not be specified "
                                "simultaneously"))
    elif isinstance(f.get("resourceFieldRef"), dict):
        errs.extend(_validate_resource_field_selector(f["resourceFieldRef"],
                                                      path.child("resourceFieldRef"), True))
    else:
        errs.append(required(path, "one of fieldRef and resourceFieldRef is required"))
    errs.extend(_mode_errors(f.get("mode"), path.child("mode")))
    return errs


def _validate_projection(pj: dict, path: Path) -> list[FieldError]:
    errs = _mode_errors(pj.get("defaultMode"), path.child("defaultMode"))
    all_paths: set[str] = set()
    for i, src in enumerate(pj.get("sources") or []):
        src = src or {}
        n = 0
        sp = path.child("sources").index(i)
        for kind in ("secret", "configMap"):
            s = src.get(kind)
            if s is None:
                continue
            n += 1
            pp = sp.child(kind)
            if not s.get("name"):
                errs.append(required(pp.child("name")))
            for j, kp in enumerate(s.get("items") or []):
                errs.extend(_validate_key_to_path(kp, pp.child("items").index(j)))
                if kp.get("path"):
                    if kp["path"] in all_paths:
                        errs.append(invalid(path, s.get("name", ""), "conflicting duplicate paths"))
                    all_paths.add(kp["path"])
        da = src.get("downwardAPI")
        if da is not None:
            n += 1
            for f in da.get("items") or []:
                errs.extend(_validate_downward_api_file(f, sp.child("downwardAPI")))
                if f.get("path"):
                    if f["path"] in all_paths:
                        errs.append(invalid(path, f["path"], "conflicting duplicate paths"))
                    all_paths.add(f["path"])
        sat = src.get("serviceAccountToken")
        if sat is not None:
            n += 1
            pp = sp.child("serviceAccountToken")
            exp = sat.get("expirationSeconds") or 0
            if exp < 600:
                errs.append(invalid(pp.child("expirationSeconds"), exp,
                                    "may not specify a duration less than 10 minutes"))
            if exp > 1 << 32:
                errs.append(invalid(pp.child("expirationSeconds"), exp,
                                    "may not specify a duration larger than 2^32 seconds"))
            if not sat.get("path"):
                errs.append(required(path.child("path")))
        if src.get("clusterTrustBundle") is not None:
            n += 1
        if n > 1:
            errs.append(forbidden(sp, "may not specify more than 1 volume type"))
    return errs


def _required_fields(src: dict, path: Path, *names: str) -> list[FieldError]:
    return [required(path.child(n)) for n in names if not src.get(n)]


def _validate_source(kind: str, src: dict, path: Path, vol_name: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if kind == "emptyDir":
        q = _qty(src.get("sizeLimit")) if src.get("sizeLimit") is not None else None
        if q is not None and q.value < 0:
            errs.append(forbidden(path.child("sizeLimit"),
                                  "SizeLimit field must be a valid resource quantity"))
    elif kind == "hostPath":
        if not src.get("path"):
            return [required(path.child("path"))]
        errs.extend(_validate_path_no_backsteps(src["path"], path.child("path")))
        t = src.get("type")
        if t is not None and t not in _HOST_PATH_TYPES:
            errs.append(not_supported(path.child("type"), t, _HOST_PATH_TYPES))
    elif kind == "gitRepo":
        errs.extend(_required_fields(src, path, "repository"))
        errs.extend(_validate_local_descending_path(src.get("directory") or "",
                                                    path.child("directory")))
    elif kind in ("gcePersistentDisk", "awsElasticBlockStore"):
        if kind == "gcePersistentDisk":
            errs.extend(_required_fields(src, path, "pdName"))
        else:
            errs.extend(_required_fields(src, path, "volumeID"))
        part = src.get("partition") or 0
        if part < 0 or part > 255:
            errs.append(invalid(path.child("partition"), part, inclusive_range_error(1, 255)))
    elif kind == "secret":
        errs.extend(_required_fields(src, path, "secretName"))
        errs.extend(_mode_errors(src.get("defaultMode"), path.child("defaultMode")))
        for i, kp in enumerate(src.get("items") or []):
            errs.extend(_validate_key_to_path(kp, path.child("items").index(i)))
    elif kind == "configMap":
        errs.extend(_required_fields(src, path, "name"))
        errs.extend(_mode_errors(src.get("defaultMode"), path.child("defaultMode")))
        for i, kp in enumerate(src.get("items") or []):
            errs.extend(_validate_key_to_path(kp, path.child("items").index(i)))
    elif kind == "nfs":
        errs.extend(_required_fields(src, path, "server", "path"))
        if not (src.get("path") or "").startswith("/"):
            errs.append(invalid(path.child("path"), src.get("path") or "",
                                "must be an absolute path"))
    elif kind == "iscsi":
        errs.extend(_required_fields(src, path, "targetPortal"))
        iqn = src.get("iqn") or ""
        if not iqn:
            errs.append(required(path.child("iqn")))
        elif not iqn.startswith(("iqn", "eui", "naa")):
            errs.append(invalid(path.child("iqn"), iqn,
                                "must be valid format starting with iqn, eui, or naa"))
        elif iqn.startswith("iqn") and not re.match(
                r"iqn\.\d{4}-\d{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\s]+)$", iqn):
            errs.append(invalid(path.child("iqn"), iqn, "must be valid format"))
        elif iqn.startswith("eui") and not re.match(r"^eui.[A-Za-z0-9]{16}$", iqn):
            errs.append(invalid(path.child("iqn"), iqn, "must be valid format"))
        elif iqn.startswith("naa") and not re.match(r"^naa.[A-Za-z0-9]{32}$", iqn):
            errs.append(invalid(path.child("iqn"), iqn, "must be valid format"))
        lun = src.get("lun") or 0
        if lun < 0 or lun > 255:
            errs.append(invalid(path.child("lun"), lun, inclusive_range_error(0, 255)))
        if ((src.get("chapAuthDiscovery") or src.get("chapAuthSession"))
                and src.get("secretRef") is None):
            errs.append(required(path.child("secretRef")))
    elif kind == "glusterfs":
        errs.extend(_required_fields(src, path, "endpoints", "path"))
    elif kind == "flocker":
        name, uuid = src.get("datasetName") or "", src.get("datasetUUID") or ""
        if not name and not uuid:
            errs.append(required(path, "one of datasetName and datasetUUID is required"))
        if name and uuid:
            errs.append(invalid(path, "resource", "datasetName and datasetUUID can not be "
                                                  "specified simultaneously"))
        if "/" in name:
            errs.append(invalid(path.child("datasetName"), name, "must not contain '/'"))
    elif kind == "persistentVolumeClaim":
        errs.extend(_required_fields(src, path, "claimName"))
    elif kind == "rbd":
        errs.extend(_required_fields(src, path, "monitors", "image"))
    elif kind == "cinder":
        errs.extend(_required_fields(src, path, "volumeID"))
        if isinstance(src.get("secretRef"), dict) and not src["secretRef"].get("name"):
            errs.append(required(path.child("secretRef", "name")))
    elif kind == "cephfs":
        errs.extend(_required_fields(src, path, "monitors"))
    elif kind == "quobyte":
        reg = src.get("registry") or ""
        if not reg:
            errs.append(required(path.child("registry"),
                                 "must be a host:port pair or multiple pairs separated by commas"))
        elif len(src.get("tenant") or "") >= 65:
            errs.append(required(path.child("tenant"),
                                 "must be a UUID and may not exceed a length of 64 characters"))
        else:
            for pair in reg.split(","):
                if not re.fullmatch(r"(\[[^\]]*\]|[^:\[\]]*):[^:]*", pair):
                    errs.append(invalid(path.child("registry"), reg,
                                        "must be a host:port pair or multiple pairs separated by "
                                        "commas"))
        errs.extend(_required_fields(src, path, "volume"))
    elif kind == "downwardAPI":
        errs.extend(_mode_errors(src.get("defaultMode"), path.child("defaultMode")))
        for f in src.get("items") or []:
            errs.extend(_validate_downward_api_file(f, path))
    elif kind == "fc":
        wwns, wwids = src.get("targetWWNs") or [], src.get("wwids") or []
        if not wwns and not wwids:
            errs.append(required(path.child("targetWWNs"),
                                 "must specify either targetWWNs or wwids, but not both"))
        if wwns and wwids:
            errs.append(invalid(path.child("targetWWNs"), wwns,
                                "targetWWNs and wwids can not be specified simultaneously"))
        if wwns:
            if src.get("lun") is None:
                errs.append(required(path.child("lun"),
                                     "lun is required if targetWWNs is specified"))
            elif not 0 <= src["lun"] <= 255:
                errs.append(invalid(path.child("lun"), src["lun"], inclusive_range_error(0, 255)))
    elif kind == "flexVolume":
        errs.extend(_required_fields(src, path, "driver"))
        for k in sorted(src.get("options") or {}):
            ns = k.split("/", 1)[0] if "/" in k else k
            norm = "." + ns.lower()
            if norm.endswith(".kubernetes.io") or norm.endswith(".k8s.io"):
                errs.append(invalid(path.child("options").key(k), k,
                                    "kubernetes.io and k8s.io namespaces are reserved"))
    elif kind == "azureFile":
        errs.extend(_required_fields(src, path, "secretName", "shareName"))
    elif kind == "vsphereVolume":
        errs.extend(_required_fields(src, path, "volumePath"))
    elif kind == "photonPersistentDisk":
        errs.extend(_required_fields(src, path, "pdID"))
    elif kind == "portworxVolume":
        errs.extend(_required_fields(src, path, "volumeID"))
    elif kind == "azureDisk":
        errs.extend(_required_fields(src, path, "diskName", "diskURI"))
        modes = ["None", "ReadOnly", "ReadWrite"]
        kinds = ["Dedicated", "Managed", "Shared"]
        if src.get("cachingMode") is not None and src["cachingMode"] not in modes:
            errs.append(not_supported(path.child("cachingMode"), src["cachingMode"], modes))
        if src.get("kind") is not None and src["kind"] not in kinds:
            errs.append(not_supported(path.child("kind"), src["kind"], kinds))
        uri = src.get("diskURI") or ""
        if src.get("kind") == "Managed" and not uri.startswith("/subscriptions/"):
            errs.append(not_supported(path.child("diskURI"), uri, [
                "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"]))
        if src.get("kind") is not None and src["kind"] != "Managed" and not uri.startswith("https://"):
            errs.append(not_supported(path.child("diskURI"), uri, [
                "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"]))
    elif kind == "storageos":
        if not src.get("volumeName"):
            errs.append(required(path.child("volumeName")))
        else:
            errs.extend(validate_dns1123_label(src["volumeName"], path.child("volumeName")))
        if src.get("volumeNamespace"):
            errs.extend(validate_dns1123_label(src["volumeNamespace"],
                                               path.child("volumeNamespace")))
        if isinstance(src.get("secretRef"), dict) and not src["secretRef"].get("name"):
            errs.append(required(path.child("secretRef", "name")))
    elif kind == "projected":
        errs.extend(_validate_projection(src, path))
    elif kind == "scaleIO":
        errs.extend(_required_fields(src, path, "gateway", "system", "volumeName"))
    elif kind == "csi":
        driver = src.get("driver") or ""
        dp = path.child("driver")
        if not driver:
            errs.append(required(dp))
        if len(driver) > 63:
            errs.append(too_long(dp, driver, 63))
        errs.extend(invalid(dp, driver, m) for m in is_dns1123_subdomain(driver.lower()))
        ref = src.get("nodePublishSecretRef")
        if isinstance(ref, dict):
            if not ref.get("name"):
                errs.append(required(path.child("nodePublishSecretRef", "name")))
            else:
                errs.extend(invalid(path.child("name"), ref["name"], m)
                            for m in name_is_dns_subdomain(ref["name"], False))
    elif kind == "ephemeral":
        if src.get("volumeClaimTemplate") is None:
            errs.append(required(path.child("volumeClaimTemplate")))
    elif kind == "image":
        ref = src.get("reference") or ""
        if not ref:
            errs.append(required(path.child("reference")))
    return errs


#: VolumeSource members in upstream's checking order, with the path name used for the
#: "more than 1 volume type" error (upstream's own spelling, typo included).
_VOLUME_KINDS = [
    ("emptyDir", "emptyDir"), ("hostPath", "hostPath"), ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"), ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"), ("nfs", "nfs"), ("iscsi", "iscsi"), ("glusterfs", "glusterfs"),
    ("flocker", "flocker"), ("persistentVolumeClaim", "persistentVolumeClaim"), ("rbd", "rbd"),
    ("cinder", "cinder"), ("cephfs", "cephFS"), ("quobyte", "quobyte"),
    ("downwardAPI", "downwarAPI"), ("fc", "fc"), ("flexVolume", "flexVolume"),
    ("configMap", "configMap"), ("azureFile", "azureFile"), ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"), ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"), ("storageos", "storageos"), ("projected", "projected"),
    ("scaleIO", "scaleIO"), ("csi", "csi"), ("ephemeral", "ephemeral"), ("image", "image"),
]
#: Path names used by the per-source validators where they differ from the JSON name.
_SOURCE_PATH = {"gcePersistentDisk": "persistentDisk", "cephfs": "cephfs"}


def _validate_volume_source(vol: dict, path: Path, pod_meta: dict | None) -> list[FieldError]:
    errs: list[FieldError] = []
    n = 0
    for key, more_name in _VOLUME_KINDS:
        src = vol.get(key)
        if src is None:
            continue
        if n > 0:
            errs.append(forbidden(path.child(more_name), "may not specify more than 1 volume type"))
            continue
        n += 1
        errs.extend(_validate_source(key, src if isinstance(src, dict) else {},
                                     path.child(_SOURCE_PATH.get(key, key)), vol.get("name") or ""))
        if key == "iscsi" and src.get("initiatorName") is not None and \
                len((vol.get("name") or "") + ":" + (src.get("targetPortal") or "")) > 64:
            errs.append(invalid(path.child("name"), vol.get("name") or "",
                                "Total length of <volume name>:<iscsi.targetPortal> must be under "
                                "64 characters if iscsi.initiatorName is specified."))
        if key == "ephemeral" and pod_meta and pod_meta.get("name") and vol.get("name"):
            pvc = f"{pod_meta['name']}-{vol['name']}"
            for m in name_is_dns_subdomain(pvc, False):
                errs.append(invalid(path.child("name"), vol["name"], f'PVC name "{pvc}": {m}'))
    if n == 0:
        errs.append(required(path, "must specify a volume type"))
    return errs


def validate_volumes(volumes: list | None, pod_meta: dict | None,
                     path: Path) -> tuple[dict, list[FieldError]]:
    """
    Upstream C{ValidateVolumes}: each volume's source, its name (a DNS-1123 label, unique).
    Returns C{({name: volume}, errors)}; only volumes without errors are in the dict.
    """
    errs: list[FieldError] = []
    vols: dict[str, dict] = {}
    created_pvcs = set()
    if pod_meta and pod_meta.get("name"):
        for v in volumes or []:
            if isinstance(v, dict) and v.get("ephemeral") is not None:
                created_pvcs.add(f"{pod_meta['name']}-{v.get('name', '')}")
    for i, vol in enumerate(volumes or []):
        vol = vol if isinstance(vol, dict) else {}
        ip = path.index(i)
        el = _validate_volume_source(vol, ip, pod_meta)
        name = vol.get("name") or ""
        if not name:
            el.append(required(ip.child("name")))
        else:
            el.extend(validate_dns1123_label(name, ip.child("name")))
        if name in vols:
            el.append(duplicate(ip.child("name"), name))
        if not el:
            vols[name] = vol
        else:
            errs.extend(el)
        pvc = vol.get("persistentVolumeClaim")
        if isinstance(pvc, dict) and pvc.get("claimName") in created_pvcs:
            errs.append(invalid(ip.child("persistentVolumeClaim").child("claimName"),
                                pvc["claimName"],
                                "must not reference a PVC that gets created for an ephemeral "
                                "volume"))
    return vols, errs
