# -*- test-case-name: tests.apis.test_pods -*-
"""
Pods: defaulting, validation, QoS and registry strategies.

Mirrors upstream C{k8s.io/kubernetes/pkg/apis/core/v1} (C{SetDefaults_Pod}),
C{pkg/apis/core/validation} (C{ValidatePodCreate}, C{ValidatePodUpdate},
C{ValidatePodStatusUpdate}), C{pkg/apis/core/helper/qos} (C{ComputePodQOS}) and
C{pkg/registry/core/pod/strategy.go} (create/update/status strategies, selectable fields).
The PodSpec parts shared with every pod template live in
L{kubetwist.apis.core.podspec_defaults} and L{kubetwist.apis.core.podspec_validation}.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from kubetwist.apimachinery.validation import (
    inclusive_range_error,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.pod_warnings import pod_warnings
from kubetwist.apis.core.podspec_defaults import (
    default_pod_spec,
    default_pod_template_spec,
    default_resource_list,
)
from kubetwist.apis.core.podspec_validation import (
    validate_pod_spec,
    validate_pod_specific_annotations,
    validate_pod_template_spec,
    validate_tolerations,
)
from kubetwist.registry.rest import Strategy
from kubetwist.runtime import govalues
from kubetwist.runtime.field import (
    FieldError,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_found,
    required,
)
from kubetwist.runtime.quantity import QuantityError, parse_quantity

__all__ = [
    "default_pod_spec",
    "default_pod_template_spec",
    "default_pod",
    "validate_pod_spec",
    "validate_pod_template_spec",
    "validate_pod",
    "validate_pod_update",
    "validate_pod_status_update",
    "compute_pod_qos",
    "prepare_pod_for_create",
    "prepare_pod_for_update",
    "prepare_pod_status_for_update",
    "pod_field_attrs",
    "POD_STRATEGY",
    "POD_STATUS_STRATEGY",
    "POD_EPHEMERALCONTAINERS_STRATEGY",
    "POD_RESIZE_STRATEGY",
    "validate_ephemeral_containers",
    "validate_pod_ephemeral_containers_update",
    "prepare_pod_ephemeral_containers_for_update",
]

_MAX_INT32 = 2**31 - 1


# --------------------------------------------------------------------------------------------
# defaulting


def _requests_from_limits(containers: list | None) -> None:
    for c in containers or []:
        if not isinstance(c, dict):
            continue
        res = c.get("resources")
        if (not isinstance(res, dict) or not isinstance(res.get("limits"), dict)
                or not res["limits"]):
            continue
        requests = res.get("requests")
        if not isinstance(requests, dict):
            requests = res["requests"] = {}
        for k, v in res["limits"].items():
            requests.setdefault(k, v)
        default_resource_list(requests)


def _default_resize_policy(c: dict) -> None:
    """
    Upstream C{setDefaultResizePolicy} (InPlacePodVerticalScaling, on in the reference
    server): a container asking for cpu and/or memory gets C{resizePolicy} entries
    C{{"resourceName": <r>, "restartPolicy": "NotRequired"}} for those not already listed.
    """
    res = c.get("resources") or {}
    requests, limits = res.get("requests"), res.get("limits")
    if requests is None and limits is None:
        return
    specified = {(p or {}).get("resourceName") for p in c.get("resizePolicy") or []}
    for name in ("cpu", "memory"):
        if name in (requests or {}) or name in (limits or {}):
            if name not in specified:
                c.setdefault("resizePolicy", []).append(
                    {"resourceName": name, "restartPolicy": "NotRequired"})


def default_pod(obj: dict) -> None:
    """
    Upstream C{SetObjectDefaults_Pod} over a v1 Pod dict, in place: the PodSpec defaults of
    L{default_pod_spec} plus the pod-only ones of C{SetDefaults_Pod}: container (and init
    container) C{requests} default to their C{limits}, C{enableServiceLinks: true}, with
    C{hostNetwork} every C{hostPort} defaults to its C{containerPort}, and containers (and
    sidecar init containers) with cpu/memory resources get a default C{resizePolicy}.
    """
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    _requests_from_limits(spec.get("containers"))
    _requests_from_limits(spec.get("initContainers"))
    for c in spec.get("containers") or []:
        if isinstance(c, dict):
            _default_resize_policy(c)
    for c in spec.get("initContainers") or []:
        if isinstance(c, dict) and c.get("restartPolicy") == "Always":
            _default_resize_policy(c)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork"):
        for key in ("containers", "initContainers"):
            for c in spec.get(key) or []:
                for p in (c or {}).get("ports") or []:
                    if isinstance(p, dict) and not p.get("hostPort"):
                        p["hostPort"] = p.get("containerPort") or 0
    default_pod_spec(spec)


# --------------------------------------------------------------------------------------------
# QoS


def compute_pod_qos(pod: dict) -> str:
    """
    Upstream C{ComputePodQOS}: C{BestEffort} without any positive cpu/memory request or limit;
    C{Guaranteed} when every container limits both cpu and memory and the summed requests equal
    the summed limits; else C{Burstable}.
    """
    spec = pod.get("spec") or {}
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    guaranteed = True
    for c in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        res = (c or {}).get("resources") or {}
        for name, raw in (res.get("requests") or {}).items():
            if name not in ("cpu", "memory"):
                continue
            try:
                q = parse_quantity(raw).value
            except QuantityError:
                continue
            if q > 0:
                requests[name] = requests.get(name, 0) + q
        found = set()
        for name, raw in (res.get("limits") or {}).items():
            if name not in ("cpu", "memory"):
                continue
            try:
                q = parse_quantity(raw).value
            except QuantityError:
                continue
            if q > 0:
                found.add(name)
                limits[name] = limits.get(name, 0) + q
        if not {"cpu", "memory"} <= found:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed:
        for name, req in requests.items():
            if name not in limits or limits[name] != req:
                guaranteed = False
                break
    if guaranteed and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"


# --------------------------------------------------------------------------------------------
# validation


def _containers_only_for_pod(containers: list | None, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, c in enumerate(containers or []):
        image = (c or {}).get("image") or ""
        if len(image) != len(image.strip()):
            errs.append(invalid(path.index(i).child("image"), image,
                                "must not have leading or trailing whitespace"))
    return errs


def _validate_pod_metadata_and_spec(pod: dict) -> list[FieldError]:
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    mp = Path("metadata")
    errs = validate_object_meta(meta, True, name_is_dns_subdomain, mp)
    errs.extend(validate_pod_specific_annotations(meta.get("annotations"), spec,
                                                  mp.child("annotations")))
    sp = Path("spec")
    errs.extend(validate_pod_spec(spec, sp, meta))
    if not spec.get("serviceAccountName"):
        for vi, vol in enumerate(spec.get("volumes") or []):
            pj = (vol or {}).get("projected")
            if not isinstance(pj, dict):
                continue
            for si, src in enumerate(pj.get("sources") or []):
                if (src or {}).get("serviceAccountToken") is not None:
                    errs.append(forbidden(
                        sp.child("volumes").index(vi).child("projected").child("sources").index(si)
                        .child("serviceAccountToken"),
                        "must not be specified when serviceAccountName is not set"))
    errs.extend(_containers_only_for_pod(spec.get("containers"), sp.child("containers")))
    errs.extend(_containers_only_for_pod(spec.get("initContainers"), sp.child("initContainers")))
    return errs


def validate_pod(obj: dict) -> list[FieldError]:
    """Upstream C{ValidatePodCreate}: metadata, annotations, spec; no ephemeral containers."""
    errs = _validate_pod_metadata_and_spec(obj)
    if (obj.get("spec") or {}).get("ephemeralContainers"):
        errs.append(forbidden(Path("spec", "ephemeralContainers"), "cannot be set on create"))
    return errs


#: Upstream C{updatablePodSpecFields} (v1.32, in-place resize disabled).
_UPDATABLE_POD_SPEC_FIELDS = ",".join([
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
])


def _go_diff(type_name: str, old: dict, new: dict) -> str:
    """C{cmp.Diff(old, new)} of two versioned objects of C{type_name} as their internal Go
    values (L{govalues.cmp_diff}), as upstream's validation prints it."""
    t = govalues.internal_type(type_name)
    return govalues.cmp_diff(t, govalues.from_json(t, old), govalues.from_json(t, new))


def _spec_diff(old: dict, new: dict) -> str:
    return _go_diff("io.k8s.api.core.v1.PodSpec", old, new)


def _validate_only_added_tolerations(new: list, old: list, path: Path) -> list[FieldError]:
    for o in old:
        found = False
        for n in new:
            oc = dict(o)
            if "tolerationSeconds" in n:
                oc["tolerationSeconds"] = n["tolerationSeconds"]
            else:
                oc.pop("tolerationSeconds", None)
            if oc == n:
                found = True
                break
        if not found:
            return [forbidden(path, "existing toleration can not be modified except its "
                                    "tolerationSeconds")]
    return validate_tolerations(new, path)


def validate_pod_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidatePodUpdate}: the new pod must be valid, and its spec may change only in
    container images, C{activeDeadlineSeconds} (set, or lowered), added tolerations and a
    negative C{terminationGracePeriodSeconds} raised to 1; anything else is C{Forbidden} at
    C{spec} with upstream's message followed by a diff.
    """
    mp = Path("metadata")
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {}, mp)
    errs.extend(_validate_pod_metadata_and_spec(new))
    sp = Path("spec")
    nspec, ospec = new.get("spec") or {}, old.get("spec") or {}
    for key in ("containers", "initContainers"):
        nc, oc = nspec.get(key) or [], ospec.get(key) or []
        if len(nc) != len(oc):
            errs.append(forbidden(sp.child(key), "pod updates may not add or remove containers"))
            return errs
        for i, c in enumerate(nc):
            image = (c or {}).get("image") or ""
            if not image:
                errs.append(required(sp.child(key).index(i).child("image")))
            if len(image.strip()) != len(image):
                errs.append(invalid(sp.child(key).index(i).child("image"), image,
                                    "must not have leading or trailing whitespace"))
    nads, oads = nspec.get("activeDeadlineSeconds"), ospec.get("activeDeadlineSeconds")
    if nads is not None:
        if nads < 0 or nads > _MAX_INT32:
            errs.append(invalid(sp.child("activeDeadlineSeconds"), nads,
                                inclusive_range_error(0, _MAX_INT32)))
            return errs
        if oads is not None and oads < nads:
            errs.append(invalid(sp.child("activeDeadlineSeconds"), nads,
                                "must be less than or equal to previous value"))
            return errs
    elif oads is not None:
        errs.append(invalid(sp.child("activeDeadlineSeconds"), None,
                            "must not update from a positive integer to nil value"))
    errs.extend(_validate_only_added_tolerations(nspec.get("tolerations") or [],
                                                 ospec.get("tolerations") or [],
                                                 sp.child("tolerations")))
    if nspec == ospec:
        return errs
    munged = copy.deepcopy(nspec)
    for key in ("containers", "initContainers"):
        for i, c in enumerate(munged.get(key) or []):
            c["image"] = (ospec.get(key) or [])[i].get("image")
    munged.pop("activeDeadlineSeconds", None)
    if oads is not None:
        munged["activeDeadlineSeconds"] = oads
    for key in ("tolerations", "schedulingGates"):
        munged.pop(key, None)
        if key in ospec:
            munged[key] = ospec[key]
    ogp, ngp = (ospec.get("terminationGracePeriodSeconds"),
                munged.get("terminationGracePeriodSeconds"))
    if ogp is not None and ogp < 0 and ngp == 1:
        munged["terminationGracePeriodSeconds"] = ogp
    spec_type = govalues.internal_type("io.k8s.api.core.v1.PodSpec")
    if not govalues.semantic_equal(spec_type, govalues.from_json(spec_type, munged),
                                   govalues.from_json(spec_type, ospec)):
        errs.append(forbidden(sp, f"pod updates may not change fields other than "
                                  f"{_UPDATABLE_POD_SPEC_FIELDS}\n{_spec_diff(ospec, munged)}"))
    return errs


def validate_pod_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidatePodStatusUpdate} (metadata, node name, nominated node, pod IPs)."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    st = new.get("status") or {}
    sp = Path("status")
    for i, cond in enumerate(st.get("conditions") or []):
        t = (cond or {}).get("type") or ""
        if t not in ("PodScheduled", "Ready", "Initialized"):
            from kubetwist.apimachinery.validation import is_qualified_name
            errs.extend(invalid(Path("metadata", "conditions").index(i).child("Type"), t, m)
                        for m in is_qualified_name(t))
    if (new.get("spec") or {}).get("nodeName") != (old.get("spec") or {}).get("nodeName"):
        errs.append(forbidden(sp.child("nodeName"), "may not be changed directly"))
    nnn = st.get("nominatedNodeName") or ""
    if nnn and nnn != ((old.get("status") or {}).get("nominatedNodeName") or ""):
        errs.extend(invalid(sp.child("nominatedNodeName"), nnn, m)
                    for m in name_is_dns_subdomain(nnn, False))
    from kubetwist.apimachinery.validation import is_valid_ip

    for i, ip in enumerate(st.get("podIPs") or []):
        errs.extend(invalid(sp.child("podIPs").index(i), (ip or {}).get("ip") or "", m)
                    for m in is_valid_ip((ip or {}).get("ip") or ""))
    return errs



# --------------------------------------------------------------------------------------------
# ephemeral containers (the pods/ephemeralcontainers subresource)

#: Upstream C{allowedEphemeralContainerFields}: the C{EphemeralContainerCommon} fields in Go
#: struct order, with whether an ephemeral container may set them.
_EPHEMERAL_FIELDS = (
    ("name", True), ("image", True), ("command", True), ("args", True),
    ("workingDir", True), ("ports", False), ("envFrom", True), ("env", True),
    ("resources", False), ("resizePolicy", False), ("restartPolicy", False),
    ("volumeMounts", True), ("volumeDevices", True), ("livenessProbe", False),
    ("readinessProbe", False), ("startupProbe", False), ("lifecycle", False),
    ("terminationMessagePath", True), ("terminationMessagePolicy", True),
    ("imagePullPolicy", True), ("securityContext", True), ("stdin", True),
    ("stdinOnce", True), ("tty", True),
)
_EPHEMERAL_FORBIDDEN = "cannot be set for an Ephemeral Container"
_MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


def _is_zero(value: Any) -> bool:
    """Whether a decoded field equals its Go zero value (a struct with only empty fields)."""
    if value is None or value is False or value == 0 or value == "":
        return True
    if isinstance(value, dict):
        return all(v is None for v in value.values())
    return False


def validate_ephemeral_containers(spec: dict, path: Path) -> list[FieldError]:
    """
    Upstream C{validateEphemeralContainers} (C{pkg/apis/core/validation}): each container's
    common rules, a name unique across all containers (C{Duplicate}), a
    C{targetContainerName} naming an init or regular container (C{NotFound}), only the
    allowed fields (C{Forbidden} C{cannot be set for an Ephemeral Container} at e.g.
    C{spec.ephemeralContainers[0].ports}), and no C{subPath}/C{subPathExpr} mounts.

    @param spec: a defaulted v1 C{PodSpec} dict.
    @param path: C{spec.ephemeralContainers}.
    """
    from kubetwist.apis.core.podspec_validation import _validate_container_common
    from kubetwist.apis.core.podspec_volume_validation import validate_volumes

    ephemeral = spec.get("ephemeralContainers") or []
    if not ephemeral:
        return []
    others: set[str] = set()
    for key in ("containers", "initContainers"):
        others.update((c or {}).get("name") or "" for c in spec.get(key) or [])
    names = set(others)
    volumes, _ = validate_volumes(spec.get("volumes"), None, Path("spec", "volumes"))
    errs: list[FieldError] = []
    for i, ec in enumerate(ephemeral):
        ec = ec if isinstance(ec, dict) else {}
        ip = path.index(i)
        errs.extend(_validate_container_common(ec, volumes, ip))
        image = ec.get("image") or ""
        if len(image) != len(image.strip()):
            errs.append(invalid(ip.child("image"), image,
                                "must not have leading or trailing whitespace"))
        name = ec.get("name") or ""
        if name in names:
            errs.append(duplicate(ip.child("name"), name))
        else:
            names.add(name)
        target = ec.get("targetContainerName") or ""
        if target and target not in others:
            errs.append(not_found(ip.child("targetContainerName"), target))
        for fname, allowed in _EPHEMERAL_FIELDS:
            if not allowed and not _is_zero(ec.get(fname)):
                errs.append(forbidden(ip.child(fname), _EPHEMERAL_FORBIDDEN))
        for mi, vm in enumerate(ec.get("volumeMounts") or []):
            for key in ("subPath", "subPathExpr"):
                if (vm or {}).get(key):
                    errs.append(forbidden(ip.child("volumeMounts").index(mi).child(key),
                                          _EPHEMERAL_FORBIDDEN))
    return errs


def _ephemeral_diff(old: dict, new: dict) -> str:
    return _go_diff("io.k8s.api.core.v1.EphemeralContainer", old, new)


def validate_pod_ephemeral_containers_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidatePodEphemeralContainersUpdate}: metadata update rules, the new pod's
    metadata and spec (with its ephemeral containers), then: a static (mirror) pod refuses
    ephemeral containers (C{Forbidden} at the root: C{static pods do not support ephemeral
    containers}); an existing ephemeral container may be neither removed (C{Forbidden} at
    C{spec.ephemeralContainers}: C{existing ephemeral containers "x" may not be removed}) nor
    changed (C{... may not be changed} followed by a diff of the container).
    """
    mp = Path("metadata")
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {}, mp)
    errs.extend(_validate_pod_metadata_and_spec(new))
    sp = Path("spec", "ephemeralContainers")
    errs.extend(validate_ephemeral_containers(new.get("spec") or {}, sp))
    if _MIRROR_POD_ANNOTATION in ((old.get("metadata") or {}).get("annotations") or {}):
        return [forbidden(Path(""), "static pods do not support ephemeral containers")]
    current = {(c or {}).get("name"): c for c in (new.get("spec") or {}).get(
        "ephemeralContainers") or []}
    for oc in (old.get("spec") or {}).get("ephemeralContainers") or []:
        name = (oc or {}).get("name") or ""
        nc = current.get(name)
        if nc is None:
            errs.append(forbidden(sp, f'existing ephemeral containers "{name}" may not be '
                                      f"removed\n"))
        elif nc != oc:
            errs.append(forbidden(sp, f'existing ephemeral containers "{name}" may not be '
                                      f"changed\n{_ephemeral_diff(oc, nc)}"))
    return errs


def prepare_pod_ephemeral_containers_for_update(new: dict, old: dict) -> None:
    """
    Upstream C{podEphemeralContainersStrategy.PrepareForUpdate}
    (C{dropNonEphemeralContainerUpdates}): the result is the old pod with only the name,
    namespace, resourceVersion, uid and C{spec.ephemeralContainers} of the new one.
    """
    nmeta = new.get("metadata") or {}
    ephemeral = (new.get("spec") or {}).get("ephemeralContainers")
    result = copy.deepcopy(old)
    meta = result.setdefault("metadata", {})
    for key in ("name", "namespace", "resourceVersion", "uid"):
        if nmeta.get(key):
            meta[key] = nmeta[key]
        else:
            meta.pop(key, None)
    spec = result.setdefault("spec", {})
    if ephemeral:
        spec["ephemeralContainers"] = ephemeral
    else:
        spec.pop("ephemeralContainers", None)
    new.clear()
    new.update(result)

# --------------------------------------------------------------------------------------------
# in-place resize (the pods/resize subresource)


def prepare_pod_resize_for_update(new: dict, old: dict) -> None:
    """
    Upstream C{podResizeStrategy.PrepareForUpdate}: the result is the old pod with the name,
    namespace, resourceVersion and uid of the new one and, per container matched by name, the
    new C{resources} and C{resizePolicy} (C{dropNonResizeUpdates}); when a container's
    resources changed (and it has requests), C{status.resize} becomes C{Proposed}
    (C{MarkPodProposedForResize}).
    """
    nmeta = new.get("metadata") or {}
    result = copy.deepcopy(old)
    meta = result.setdefault("metadata", {})
    for key in ("name", "namespace", "resourceVersion", "uid"):
        if nmeta.get(key):
            meta[key] = nmeta[key]
        else:
            meta.pop(key, None)
    containers = (result.get("spec") or {}).get("containers") or []
    index = {(c or {}).get("name"): i for i, c in enumerate(containers)}
    new_containers = (new.get("spec") or {}).get("containers") or []
    for c in new_containers:
        i = index.get((c or {}).get("name"))
        if i is None:
            continue
        for key in ("resources", "resizePolicy"):
            if (c or {}).get(key) is not None:
                containers[i][key] = copy.deepcopy(c[key])
            else:
                containers[i].pop(key, None)
    old_containers = (old.get("spec") or {}).get("containers") or []
    if len(containers) == len(old_containers):
        for c, oc in zip(containers, old_containers, strict=False):
            if (c or {}).get("name") != (oc or {}).get("name"):
                break
            res = (c or {}).get("resources") or {}
            if not res.get("requests"):
                continue
            if _semantic(res) == _semantic((oc or {}).get("resources") or {}):
                continue
            result.setdefault("status", {})["resize"] = "Proposed"
            break
    new.clear()
    new.update(result)


def _semantic(value: Any) -> Any:
    """A resources value with its quantities in canonical form (Go's semantic equality)."""
    from kubetwist.runtime.quantity import canonical_quantity

    if isinstance(value, dict):
        return {k: (_semantic(v) if isinstance(v, dict) else canonical_quantity(v))
                if k not in ("claims",) else v for k, v in value.items()}
    return value


def _canonical_resources(spec: dict) -> dict:
    """A pod spec whose containers' resources are in canonical form, for comparing."""
    out = copy.deepcopy(spec)
    for c in out.get("containers") or []:
        if isinstance(c, dict):
            c["resources"] = _semantic(c.get("resources") or {})
    return out


def _drop_cpu_memory_updates(new_list: dict | None, old_list: dict | None) -> dict | None:
    """Upstream C{dropCPUMemoryUpdates}: the new list with cpu and memory as in the old one
    (C{None} when the old list is)."""
    if old_list is None:
        return None
    out = {k: v for k, v in (new_list or {}).items() if k not in ("cpu", "memory")}
    for k in ("cpu", "memory"):
        if k in old_list:
            out[k] = old_list[k]
    return out


def validate_pod_resize(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidatePodResize}: metadata update rules and the new pod's metadata and spec;
    a static (mirror) pod or a Windows pod cannot be resized (C{Forbidden} at the root); the
    QoS class may not change (C{Invalid} at C{spec}: C{Pod QOS Class may not change as a
    result of resizing}); only cpu and memory requests and limits (and the resize policy)
    may change (C{Forbidden} at C{spec}:
    C{only cpu and memory resources are mutable} followed by a diff, which approximates Go's
    C{cmp.Diff}).
    """
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    errs.extend(_validate_pod_metadata_and_spec(new))
    if _MIRROR_POD_ANNOTATION in ((old.get("metadata") or {}).get("annotations") or {}):
        return [forbidden(Path(""), "static pods cannot be resized")]
    if ((old.get("spec") or {}).get("os") or {}).get("name") == "windows":
        return [forbidden(Path(""), "windows pods cannot be resized")]
    sp = Path("spec")
    old_qos = (old.get("status") or {}).get("qosClass") or compute_pod_qos(old)
    if old_qos != compute_pod_qos(new):
        errs.append(invalid(sp, (new.get("status") or {}).get("qosClass") or "",
                            "Pod QOS Class may not change as a result of resizing"))
    nspec = copy.deepcopy(new.get("spec") or {})
    ospec = old.get("spec") or {}
    old_containers = ospec.get("containers") or []
    for i, c in enumerate(nspec.get("containers") or []):
        if i >= len(old_containers) or not isinstance(c, dict):
            continue
        ores = (old_containers[i] or {}).get("resources") or {}
        res: dict[str, Any] = {}
        for key in ("limits", "requests"):
            kept = _drop_cpu_memory_updates((c.get("resources") or {}).get(key), ores.get(key))
            if kept is not None:
                res[key] = kept
        if "claims" in ores:
            res["claims"] = ores["claims"]
        c["resources"] = res
        if "resizePolicy" in (old_containers[i] or {}):
            c["resizePolicy"] = old_containers[i]["resizePolicy"]
        else:
            c.pop("resizePolicy", None)
    if _canonical_resources(nspec) != _canonical_resources(ospec):
        diff = _spec_diff(ospec, nspec)
        errs.append(forbidden(sp, "only cpu and memory resources are mutable\n" + diff))
    return errs


# --------------------------------------------------------------------------------------------
# strategies

_APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"


def _apparmor_field_to_annotation(profile: dict) -> str | None:
    t = profile.get("type")
    if t == "RuntimeDefault":
        return "runtime/default"
    if t == "Unconfined":
        return "unconfined"
    if t == "Localhost" and profile.get("localhostProfile"):
        return "localhost/" + profile["localhostProfile"]
    return None


def _apparmor_annotation_to_field(value: str) -> dict | None:
    if value == "runtime/default":
        return {"type": "RuntimeDefault"}
    if value == "unconfined":
        return {"type": "Unconfined"}
    if value.startswith("localhost/"):
        return {"type": "Localhost", "localhostProfile": value[len("localhost/"):]}
    return None


def _apply_apparmor_version_skew(pod: dict) -> None:
    """Upstream C{applyAppArmorVersionSkew}: keep AppArmor fields and annotations in sync."""
    meta = pod.setdefault("metadata", {})
    spec = pod.get("spec") or {}
    if (meta.get("annotations") or {}).get("kubernetes.io/config.mirror") is not None:
        return
    pod_profile = (spec.get("securityContext") or {}).get("appArmorProfile")
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            if not isinstance(c, dict):
                continue
            ann_key = _APPARMOR_PREFIX + (c.get("name") or "")
            annotations = meta.get("annotations") or {}
            sc = c.get("securityContext") if isinstance(c.get("securityContext"), dict) else None
            profile = (sc or {}).get("appArmorProfile")
            if ann_key in annotations:
                if profile is None and pod_profile is None:
                    field = _apparmor_annotation_to_field(annotations[ann_key])
                    if field is not None:
                        if sc is None:
                            sc = c["securityContext"] = {}
                        sc["appArmorProfile"] = field
                continue
            effective = profile if profile is not None else pod_profile
            if effective is not None:
                value = _apparmor_field_to_annotation(effective)
                if value is not None:
                    meta.setdefault("annotations", {})[ann_key] = value


def _mutate_pod_affinity(pod: dict) -> None:
    """
    Upstream C{mutatePodAffinity}: C{matchLabelKeys}/C{mismatchLabelKeys} become selector
    terms.
    """
    labels = (pod.get("metadata") or {}).get("labels") or {}
    aff = (pod.get("spec") or {}).get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = aff.get(kind)
        if not isinstance(pa, dict):
            continue
        terms = list(pa.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        terms += [(w or {}).get("podAffinityTerm")
                  for w in pa.get("preferredDuringSchedulingIgnoredDuringExecution") or []]
        for term in terms:
            if not isinstance(term, dict) or term.get("labelSelector") is None:
                continue
            for keys, op in ((term.get("matchLabelKeys"), "In"),
                             (term.get("mismatchLabelKeys"), "NotIn")):
                for k in keys or []:
                    if k in labels:
                        term["labelSelector"].setdefault("matchExpressions", []).append(
                            {"key": k, "operator": op, "values": [labels[k]]})


def prepare_pod_for_create(pod: dict) -> None:
    """
    Upstream C{podStrategy.PrepareForCreate}: C{status} becomes
    C{{"phase": "Pending", "qosClass": <computed>}} (plus the C{SchedulingGated} condition when
    scheduling gates are set); affinity label keys and AppArmor fields/annotations are applied.
    """
    pod["status"] = {"phase": "Pending", "qosClass": compute_pod_qos(pod)}
    spec = pod.get("spec") or {}
    if spec.get("schedulingGates"):
        pod["status"]["conditions"] = [{
            "type": "PodScheduled", "status": "False", "lastProbeTime": None,
            "lastTransitionTime": None, "reason": "SchedulingGated",
            "message": "Scheduling is blocked due to non-empty scheduling gates",
        }]
    _mutate_pod_affinity(pod)
    _apply_apparmor_version_skew(pod)


def prepare_pod_for_update(new: dict, old: dict) -> None:
    """Upstream C{podStrategy.PrepareForUpdate}: the status cannot be changed through the pod."""
    if "status" in old:
        new["status"] = copy.deepcopy(old["status"])
    else:
        new.pop("status", None)


def prepare_pod_status_for_update(new: dict, old: dict) -> None:
    """
    Upstream C{podStatusStrategy.PrepareForUpdate}: keep the old spec and owner references,
    never touch C{deletionTimestamp}, backfill C{qosClass}.
    """
    new["spec"] = copy.deepcopy(old.get("spec") or {})
    nmeta, ometa = new.setdefault("metadata", {}), old.get("metadata") or {}
    for key in ("ownerReferences", "deletionTimestamp"):
        if key in ometa:
            nmeta[key] = copy.deepcopy(ometa[key])
        else:
            nmeta.pop(key, None)
    status = new.setdefault("status", {})
    if not status.get("qosClass") and (old.get("status") or {}).get("qosClass"):
        status["qosClass"] = old["status"]["qosClass"]


def pod_field_attrs(obj: dict) -> dict[str, str]:
    """
    Upstream C{pod.ToSelectableFields} (beyond C{metadata.name}/C{metadata.namespace}):
    C{spec.nodeName}, C{spec.restartPolicy}, C{spec.schedulerName},
    C{spec.serviceAccountName}, C{spec.hostNetwork} (C{"true"}/C{"false"}), C{status.phase},
    C{status.podIP} (the first of C{status.podIPs}), C{status.nominatedNodeName}.
    """
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    ips = status.get("podIPs") or []
    pod_ip = (ips[0] or {}).get("ip", "") if ips else ""
    return {
        "spec.nodeName": spec.get("nodeName") or "",
        "spec.restartPolicy": spec.get("restartPolicy") or "",
        "spec.schedulerName": spec.get("schedulerName") or "",
        "spec.serviceAccountName": spec.get("serviceAccountName") or "",
        "spec.hostNetwork": "true" if spec.get("hostNetwork") else "false",
        "status.phase": status.get("phase") or "",
        "status.podIP": pod_ip,
        "status.nominatedNodeName": status.get("nominatedNodeName") or "",
    }


def _pod_table():
    try:
        from kubetwist.apis.core.printers import POD_TABLE
    except ImportError:
        return None
    return POD_TABLE


POD_STRATEGY = Strategy(
    kind="Pod",
    group="",
    namespaced=True,
    default=default_pod,
    prepare_for_create=prepare_pod_for_create,
    prepare_for_update=prepare_pod_for_update,
    validate=validate_pod,
    validate_update=validate_pod_update,
    field_attrs=pod_field_attrs,
    table=_pod_table(),
    warnings=pod_warnings,
)

POD_STATUS_STRATEGY = Strategy(
    kind="Pod",
    group="",
    namespaced=True,
    default=default_pod,
    prepare_for_create=prepare_pod_for_create,
    prepare_for_update=prepare_pod_status_for_update,
    validate=validate_pod,
    validate_update=validate_pod_status_update,
    field_attrs=pod_field_attrs,
    table=_pod_table(),
)

# the pod subresources' strategies differ from the status strategy only in their update
# preparation and validation (upstream podResizeStrategy, podEphemeralContainersStrategy)
POD_RESIZE_STRATEGY = dataclasses.replace(
    POD_STATUS_STRATEGY,
    prepare_for_update=prepare_pod_resize_for_update,
    validate_update=validate_pod_resize,
)

POD_EPHEMERALCONTAINERS_STRATEGY = dataclasses.replace(
    POD_STATUS_STRATEGY,
    prepare_for_update=prepare_pod_ephemeral_containers_for_update,
    validate_update=validate_pod_ephemeral_containers_update,
)
