# -*- test-case-name: tests.apis.test_pods -*-
"""
Validation of PodSpec and PodTemplateSpec: upstream C{k8s.io/kubernetes/pkg/apis/core/validation}
(C{ValidatePodSpec}, C{ValidatePodTemplateSpec}, volumes, containers, ports, env, mounts,
probes, resources, security contexts, tolerations, affinity), at v1.32 with its default
feature gates (sidecar init containers, relaxed environment variable names).

Inputs are defaulted v1 JSON-shaped dicts.  Where upstream walks a Go map the keys are visited
in sorted order so error lists are deterministic.  Field paths and messages are upstream's.
"""

from __future__ import annotations

import re
from typing import Any

from kubetwist.apimachinery.validation import (
    inclusive_range_error,
    is_config_map_key,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_http_header_name,
    is_qualified_name,
    is_relaxed_env_var_name,
    is_valid_group_id,
    is_valid_ip,
    is_valid_label_value,
    is_valid_port_name,
    is_valid_port_num,
    is_valid_user_id,
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_annotations,
    validate_label_name,
    validate_label_selector,
    validate_labels,
    validate_nonnegative,
)
from kubetwist.runtime import gofmt
from kubetwist.runtime.field import (
    FieldError,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_found,
    not_supported,
    required,
)
from kubetwist.runtime.quantity import QuantityError, parse_quantity

__all__ = [
    "validate_pod_spec",
    "validate_pod_template_spec",
    "validate_pod_specific_annotations",
    "validate_tolerations",
    "validate_dns1123_label",
    "GoValueError",
]

_MAX_INT32 = 2**31 - 1


class GoValueError(FieldError):
    """
    A field error whose bad value is printed the way Go's C{%#v} prints a struct or map
    (C{map[string]string{"app":"x"}}), given already formatted.
    """

    def body(self) -> str:
        text = {"Invalid": "Invalid value", "NotSupported": "Unsupported value",
                "Duplicate": "Duplicate value"}.get(self.type, self.type)
        text = f"{text}: {self.bad_value}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text


def go_string_map(m: dict | None) -> str:
    """Go's C{%#v} of a C{map[string]string}: sorted keys, C{(nil)} for an absent map."""
    return gofmt.string_map(m)


def validate_dns1123_label(value: str, path: Path) -> list[FieldError]:
    """Upstream C{ValidateDNS1123Label}."""
    return [invalid(path, value, m) for m in is_dns1123_label(value)]


def _validate_dns1123_subdomain(value: str, path: Path) -> list[FieldError]:
    return [invalid(path, value, m) for m in is_dns1123_subdomain(value)]


def _validate_qualified_name(value: str, path: Path) -> list[FieldError]:
    return [invalid(path, value, m) for m in is_qualified_name(value)]


def _qty(raw: Any):
    try:
        return parse_quantity(raw)
    except QuantityError:
        return None


from kubetwist.apis.core.podspec_volume_validation import (  # noqa: E402
    _ENV_DOWNWARD_API_FIELDS,
    _validate_local_descending_path,
    _validate_object_field_selector,
    _validate_path_no_backsteps,
    _validate_resource_field_selector,
    validate_volumes,
)

# --------------------------------------------------------------------------------------------
# containers

_PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"]


def _validate_container_ports(ports: list | None, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports or []):
        port = port or {}
        ip = path.index(i)
        name = port.get("name") or ""
        if name:
            msgs = is_valid_port_name(name)
            if msgs:
                errs.extend(invalid(ip.child("name"), name, m) for m in msgs)
            elif name in names:
                errs.append(duplicate(ip.child("name"), name))
            else:
                names.add(name)
        cp = port.get("containerPort") or 0
        if cp == 0:
            errs.append(required(ip.child("containerPort")))
        else:
            errs.extend(invalid(ip.child("containerPort"), cp, m) for m in is_valid_port_num(cp))
        hp = port.get("hostPort") or 0
        if hp != 0:
            errs.extend(invalid(ip.child("hostPort"), hp, m) for m in is_valid_port_num(hp))
        proto = port.get("protocol") or ""
        if not proto:
            errs.append(required(ip.child("protocol")))
        elif proto not in _PORT_PROTOCOLS:
            errs.append(not_supported(ip.child("protocol"), proto, _PORT_PROTOCOLS))
    return errs


def _validate_env(env: list | None, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, ev in enumerate(env or []):
        ev = ev or {}
        ip = path.index(i)
        name = ev.get("name") or ""
        if not name:
            errs.append(required(ip.child("name")))
        else:
            errs.extend(invalid(ip.child("name"), name, m) for m in is_relaxed_env_var_name(name))
        vf = ev.get("valueFrom")
        if vf is None:
            continue
        vp = ip.child("valueFrom")
        n = 0
        if vf.get("fieldRef") is not None:
            n += 1
            errs.extend(_validate_object_field_selector(vf["fieldRef"], _ENV_DOWNWARD_API_FIELDS,
                                                        vp.child("fieldRef")))
        if vf.get("resourceFieldRef") is not None:
            n += 1
            errs.extend(_validate_resource_field_selector(vf["resourceFieldRef"],
                                                          vp.child("resourceFieldRef"), False))
        for key in ("configMapKeyRef", "secretKeyRef"):
            if vf.get(key) is not None:
                n += 1
                s = vf[key]
                kp = vp.child(key)
                errs.extend(invalid(kp.child("name"), s.get("name") or "", m)
                            for m in name_is_dns_subdomain(s.get("name") or "", False))
                if not s.get("key"):
                    errs.append(required(kp.child("key")))
                else:
                    errs.extend(invalid(kp.child("key"), s["key"], m)
                                for m in is_config_map_key(s["key"]))
        if n == 0:
            errs.append(invalid(vp, "", "must specify one of: `fieldRef`, `resourceFieldRef`, "
                                        "`configMapKeyRef` or `secretKeyRef`"))
        elif ev.get("value"):
            errs.append(invalid(vp, "", "may not be specified when `value` is not empty"))
        elif n > 1:
            errs.append(invalid(vp, "", "may not have more than one field specified at a time"))
    return errs


def _validate_env_from(env_from: list | None, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, ef in enumerate(env_from or []):
        ef = ef or {}
        ip = path.index(i)
        if ef.get("prefix"):
            errs.extend(invalid(ip.child("prefix"), ef["prefix"], m)
                        for m in is_relaxed_env_var_name(ef["prefix"]))
        n = 0
        for key in ("configMapRef", "secretRef"):
            if ef.get(key) is not None:
                n += 1
                name = ef[key].get("name") or ""
                if not name:
                    errs.append(required(ip.child(key, "name")))
                else:
                    errs.extend(invalid(ip.child(key, "name"), name, m)
                                for m in name_is_dns_subdomain(name, True))
        if n == 0:
            errs.append(invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif n > 1:
            errs.append(invalid(path, "", "may not have more than one field specified at a time"))
    return errs


def _validate_volume_mounts(mounts: list | None, devices: dict, volumes: dict, container: dict,
                            path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, mnt in enumerate(mounts or []):
        mnt = mnt or {}
        ip = path.index(i)
        name = mnt.get("name") or ""
        mp = mnt.get("mountPath") or ""
        if not name:
            errs.append(required(ip.child("name")))
        if name not in volumes:
            errs.append(not_found(ip.child("name"), name))
        if not mp:
            errs.append(required(ip.child("mountPath")))
        if mp in seen:
            errs.append(invalid(ip.child("mountPath"), mp, "must be unique"))
        seen.add(mp)
        if name in devices:
            errs.append(invalid(ip.child("name"), name, "must not already exist in volumeDevices"))
        if mp in devices.values():
            errs.append(invalid(ip.child("mountPath"), mp,
                                "must not already exist as a path in volumeDevices"))
        if mnt.get("subPath"):
            errs.extend(_validate_local_descending_path(mnt["subPath"], path.child("subPath")))
        if mnt.get("subPathExpr"):
            if mnt.get("subPath"):
                errs.append(invalid(ip.child("subPathExpr"), mnt["subPathExpr"],
                                    "subPathExpr and subPath are mutually exclusive"))
            errs.extend(_validate_local_descending_path(mnt["subPathExpr"],
                                                        path.child("subPathExpr")))
        prop = mnt.get("mountPropagation")
        if prop is not None:
            supported = ["Bidirectional", "HostToContainer", "None"]
            pp = path.child("mountPropagation")
            if prop not in supported:
                errs.append(not_supported(pp, prop, supported))
            privileged = bool((container.get("securityContext") or {}).get("privileged"))
            if prop == "Bidirectional" and not privileged:
                errs.append(forbidden(pp, "Bidirectional mount propagation is available only to "
                                          "privileged containers"))
        rro = mnt.get("recursiveReadOnly")
        if rro is not None:
            rp = ip.child("recursiveReadOnly")
            if rro not in ("Disabled", "IfPossible", "Enabled"):
                errs.append(not_supported(rp, rro, ["Disabled", "Enabled", "IfPossible"]))
            elif rro != "Disabled":
                if not mnt.get("readOnly"):
                    errs.append(forbidden(rp, "may only be specified when readOnly is true"))
                if prop not in (None, "None"):
                    errs.append(forbidden(rp, "may only be specified when mountPropagation is None "
                                              "or not specified"))
    return errs


def _validate_volume_devices(devices: list | None, mounts: dict, volumes: dict,
                             path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    paths: set[str] = set()
    names: set[str] = set()
    for i, dev in enumerate(devices or []):
        dev = dev or {}
        ip = path.index(i)
        name, dpath = dev.get("name") or "", dev.get("devicePath") or ""
        vol = volumes.get(name)
        if not name:
            errs.append(required(ip.child("name")))
        if name in names:
            errs.append(invalid(ip.child("name"), name, "must be unique"))
        if (vol is not None and vol.get("persistentVolumeClaim") is None
                and vol.get("ephemeral") is None):
            errs.append(invalid(ip.child("name"), name, "can only use volume source type of "
                                                        "PersistentVolumeClaim or Ephemeral for "
                                                        "block mode"))
        if vol is None:
            errs.append(not_found(ip.child("name"), name))
        if not dpath:
            errs.append(required(ip.child("devicePath")))
        if dpath in paths:
            errs.append(invalid(ip.child("devicePath"), dpath, "must be unique"))
        if dpath and _validate_path_no_backsteps(dpath, path):
            errs.append(invalid(ip.child("devicePath"), dpath, "can not contain backsteps ('..')"))
        else:
            paths.add(dpath)
        if name in mounts:
            errs.append(invalid(ip.child("name"), name, "must not already exist in volumeMounts"))
        if dpath in mounts.values():
            errs.append(invalid(ip.child("devicePath"), dpath,
                                "must not already exist as a path in volumeMounts"))
        if name:
            names.add(name)
    return errs


def _validate_port_num_or_name(port: Any, path: Path) -> list[FieldError]:
    if isinstance(port, int) and not isinstance(port, bool):
        return [invalid(path, port, m) for m in is_valid_port_num(port)]
    if isinstance(port, str):
        return [invalid(path, port, m) for m in is_valid_port_name(port)]
    return [invalid(path, port, m) for m in is_valid_port_num(0)]


def _validate_handler(h: dict, path: Path, grace: Any, allow_grpc: bool,
                      allow_sleep: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    n = 0
    kinds = ["exec", "httpGet", "tcpSocket"] + (["grpc"] if allow_grpc
                                                else []) + (["sleep"] if allow_sleep else [])
    for kind in kinds:
        a = h.get(kind)
        if a is None:
            continue
        if n > 0:
            errs.append(forbidden(path.child(kind), "may not specify more than 1 handler type"))
            continue
        n += 1
        kp = path.child(kind)
        if kind == "exec":
            if not a.get("command"):
                errs.append(required(kp.child("command")))
        elif kind == "httpGet":
            if not a.get("path"):
                errs.append(required(kp.child("path")))
            errs.extend(_validate_port_num_or_name(a.get("port", 0), kp.child("port")))
            if a.get("scheme") not in ("HTTP", "HTTPS"):
                errs.append(not_supported(kp.child("scheme"), a.get("scheme") or "",
                                          ["HTTP", "HTTPS"]))
            for hdr in a.get("httpHeaders") or []:
                errs.extend(invalid(kp.child("httpHeaders"), hdr.get("name") or "", m)
                            for m in is_http_header_name(hdr.get("name") or ""))
        elif kind == "tcpSocket":
            errs.extend(_validate_port_num_or_name(a.get("port", 0), kp.child("port")))
        elif kind == "grpc":
            errs.extend(_validate_port_num_or_name(a.get("port") or 0, kp.child("port")))
        elif kind == "sleep":
            secs = a.get("seconds") or 0
            g = grace if isinstance(grace, int) else 30
            if secs <= 0 or secs > g:
                errs.append(invalid(kp.child("seconds"), secs,
                                    "must be greater than 0 and less than "
                                    f"terminationGracePeriodSeconds ({g})"))
    if n == 0:
        errs.append(required(path, "must specify a handler type"))
    return errs


def _validate_probe(probe: Any, grace: Any, path: Path) -> list[FieldError]:
    if not isinstance(probe, dict):
        return []
    errs = _validate_handler(probe, path, grace, True, False)
    for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                "failureThreshold"):
        errs.extend(validate_nonnegative(probe.get(key) or 0, path.child(key)))
    tgps = probe.get("terminationGracePeriodSeconds")
    if tgps is not None and tgps <= 0:
        errs.append(invalid(path.child("terminationGracePeriodSeconds"), tgps,
                            "must be greater than 0"))
    return errs


def _validate_probes(c: dict, grace: Any, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    lp = c.get("livenessProbe")
    errs.extend(_validate_probe(lp, grace, path.child("livenessProbe")))
    if isinstance(lp, dict) and lp.get("successThreshold") != 1:
        errs.append(invalid(path.child("livenessProbe", "successThreshold"),
                            lp.get("successThreshold") or 0, "must be 1"))
    rp = c.get("readinessProbe")
    errs.extend(_validate_probe(rp, grace, path.child("readinessProbe")))
    if isinstance(rp, dict) and rp.get("terminationGracePeriodSeconds") is not None:
        errs.append(invalid(path.child("readinessProbe", "terminationGracePeriodSeconds"),
                            rp["terminationGracePeriodSeconds"],
                            "must not be set for readinessProbes"))
    sp = c.get("startupProbe")
    errs.extend(_validate_probe(sp, grace, path.child("startupProbe")))
    if isinstance(sp, dict) and sp.get("successThreshold") != 1:
        errs.append(invalid(path.child("startupProbe", "successThreshold"),
                            sp.get("successThreshold") or 0, "must be 1"))
    return errs


def _validate_lifecycle(lc: dict, grace: Any, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("postStart", "preStop"):
        if lc.get(key) is not None:
            errs.extend(_validate_handler(lc[key], path.child(key), grace, False, True))
    return errs


_STANDARD_CONTAINER_RESOURCES = {"cpu", "memory", "ephemeral-storage"}
_STANDARD_RESOURCES = {
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
    "persistentvolumeclaims", "storage", "requests.storage", "services.nodeports",
    "services.loadbalancers", "configmaps",
}


def _is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    if _is_native(name) or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def _overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not _is_hugepages(name)


def _validate_container_resource_name(name: str, path: Path) -> list[FieldError]:
    errs = [invalid(path, name, m) for m in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name:
        if name not in _STANDARD_RESOURCES and not _is_hugepages(name) \
                and not name.startswith("requests.hugepages-"):
            return [invalid(path, name, "must be a standard resource type or fully qualified")]
        if name not in _STANDARD_CONTAINER_RESOURCES and not _is_hugepages(name):
            return [invalid(path, name, "must be a standard resource for containers")]
    elif not _is_native(name) and not _is_extended(name):
        return [invalid(path, name, "doesn't follow extended resource name standard")]
    return []


def _validate_quantity_value(name: str, raw: Any, path: Path) -> list[FieldError]:
    q = _qty(raw)
    if q is None:
        return []
    errs: list[FieldError] = []
    if q.value < 0:
        errs.append(invalid(path, str(q), "must be greater than or equal to 0"))
    if _is_extended(name) or name in ("pods", "services", "replicationcontrollers",
                                      "resourcequotas", "secrets", "configmaps",
                                      "persistentvolumeclaims", "services.nodeports",
                                      "services.loadbalancers"):
        if q.milli_value() % 1000 != 0:
            errs.append(GoValueError("Invalid", path, str(q), "must be an integer"))
    return errs


def validate_resource_requirements(res: dict | None, path: Path) -> list[FieldError]:
    """Upstream C{ValidateContainerResourceRequirements} (limits, requests, request <= limit)."""
    res = res or {}
    errs: list[FieldError] = []
    lim_path, req_path = path.child("limits"), path.child("requests")
    limits, requests = res.get("limits") or {}, res.get("requests") or {}
    lim_cpu_mem = req_cpu_mem = lim_huge = req_huge = False
    for name in sorted(limits):
        fp = lim_path.key(name)
        errs.extend(_validate_container_resource_name(name, fp))
        errs.extend(_validate_quantity_value(name, limits[name], fp))
        if _is_hugepages(name):
            lim_huge = True
        if name in ("cpu", "memory"):
            lim_cpu_mem = True
    for name in sorted(requests):
        fp = req_path.key(name)
        errs.extend(_validate_container_resource_name(name, fp))
        errs.extend(_validate_quantity_value(name, requests[name], fp))
        q = _qty(requests[name])
        if name in limits:
            lq = _qty(limits[name])
            if q is not None and lq is not None:
                if q.cmp(lq) != 0 and not _overcommit_allowed(name):
                    errs.append(invalid(req_path, str(q), f"must be equal to {name} limit of {lq}"))
                elif q.cmp(lq) > 0:
                    errs.append(invalid(req_path, str(q),
                                        f"must be less than or equal to {name} limit of {lq}"))
        elif not _overcommit_allowed(name):
            errs.append(required(lim_path, "Limit must be set for non overcommitable resources"))
        if _is_hugepages(name):
            req_huge = True
        if name in ("cpu", "memory"):
            req_cpu_mem = True
    if not lim_cpu_mem and not req_cpu_mem and (req_huge or lim_huge):
        errs.append(forbidden(path, "HugePages require cpu or memory"))
    return errs


def _validate_seccomp_profile(sp: Any, path: Path) -> list[FieldError]:
    if not isinstance(sp, dict):
        return []
    errs: list[FieldError] = []
    t = sp.get("type") or ""
    types = ["Localhost", "RuntimeDefault", "Unconfined"]
    if not t:
        errs.append(required(path.child("type"), "type is required when seccompProfile is set"))
    elif t not in types:
        errs.append(not_supported(path.child("type"), t, types))
    if t == "Localhost":
        if sp.get("localhostProfile") is None:
            errs.append(required(path.child("localhostProfile"),
                                 "must be set when seccomp type is Localhost"))
        else:
            errs.extend(_validate_local_descending_path(sp["localhostProfile"],
                                                        path.child("localhostProfile")))
    elif sp.get("localhostProfile") is not None:
        errs.append(invalid(path.child("localhostProfile"), sp,
                            "can only be set when seccomp type is Localhost"))
    return errs


def _validate_apparmor_profile(ap: Any, path: Path) -> list[FieldError]:
    if not isinstance(ap, dict):
        return []
    errs: list[FieldError] = []
    t = ap.get("type") or ""
    types = ["Localhost", "RuntimeDefault", "Unconfined"]
    if not t:
        errs.append(required(path.child("type"), "type is required when appArmorProfile is set"))
    elif t not in types:
        errs.append(not_supported(path.child("type"), t, types))
    if t == "Localhost":
        lp = ap.get("localhostProfile")
        if lp is None:
            errs.append(required(path.child("localhostProfile"),
                                 "must be set when AppArmor type is Localhost"))
        elif not lp.strip():
            errs.append(invalid(path.child("localhostProfile"), lp,
                                "must be a non-whitespace string"))
    elif ap.get("localhostProfile") is not None:
        errs.append(invalid(path.child("localhostProfile"), ap.get("localhostProfile"),
                            "can only be set when AppArmor type is Localhost"))
    return errs


def _validate_security_context(sc: Any, path: Path) -> list[FieldError]:
    if not isinstance(sc, dict):
        return []
    errs: list[FieldError] = []
    if sc.get("runAsUser") is not None:
        errs.extend(invalid(path.child("runAsUser"), sc["runAsUser"], m)
                    for m in is_valid_user_id(sc["runAsUser"]))
    if sc.get("runAsGroup") is not None:
        errs.extend(invalid(path.child("runAsGroup"), sc["runAsGroup"], m)
                    for m in is_valid_group_id(sc["runAsGroup"]))
    pm = sc.get("procMount")
    if pm is not None and pm not in ("Default", "Unmasked"):
        errs.append(not_supported(path.child("procMount"), pm, ["Default", "Unmasked"]))
    errs.extend(_validate_seccomp_profile(sc.get("seccompProfile"), path.child("seccompProfile")))
    errs.extend(_validate_apparmor_profile(sc.get("appArmorProfile"),
                                           path.child("appArmorProfile")))
    if sc.get("allowPrivilegeEscalation") is False:
        if sc.get("privileged"):
            errs.append(invalid(path, sc, "cannot set `allowPrivilegeEscalation` to false and "
                                          "`privileged` to true"))
        for cap in ((sc.get("capabilities") or {}).get("add") or []):
            if cap == "CAP_SYS_ADMIN":
                errs.append(invalid(path, sc, "cannot set `allowPrivilegeEscalation` to false and "
                                              "`capabilities.Add` CAP_SYS_ADMIN"))
    return errs


def _validate_pull_policy(policy: str, path: Path) -> list[FieldError]:
    if policy in ("Always", "IfNotPresent", "Never"):
        return []
    if not policy:
        return [required(path)]
    return [not_supported(path, policy, ["Always", "IfNotPresent", "Never"])]


def _validate_container_common(c: dict, volumes: dict, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    name = c.get("name") or ""
    if not name:
        errs.append(required(path.child("name")))
    else:
        errs.extend(validate_dns1123_label(name, path.child("name")))
    if not c.get("image"):
        errs.append(required(path.child("image")))
    tmp = c.get("terminationMessagePolicy") or ""
    if not tmp:
        errs.append(required(path.child("terminationMessagePolicy")))
    elif tmp not in ("File", "FallbackToLogsOnError"):
        errs.append(not_supported(path.child("terminationMessagePolicy"), tmp,
                                  ["File", "FallbackToLogsOnError"]))
    mounts = {m.get("name") or "": m.get("mountPath") or "" for m in c.get("volumeMounts") or []
              if isinstance(m, dict)}
    devices = {d.get("name") or "": d.get("devicePath") or "" for d in c.get("volumeDevices") or []
               if isinstance(d, dict)}
    errs.extend(_validate_container_ports(c.get("ports"), path.child("ports")))
    errs.extend(_validate_env(c.get("env"), path.child("env")))
    errs.extend(_validate_env_from(c.get("envFrom"), path.child("envFrom")))
    errs.extend(_validate_volume_mounts(c.get("volumeMounts"), devices, volumes, c,
                                        path.child("volumeMounts")))
    errs.extend(_validate_volume_devices(c.get("volumeDevices"), mounts, volumes,
                                         path.child("volumeDevices")))
    errs.extend(_validate_pull_policy(c.get("imagePullPolicy") or "",
                                      path.child("imagePullPolicy")))
    errs.extend(validate_resource_requirements(c.get("resources"), path.child("resources")))
    rpp = path.child("resizePolicy")
    seen_resize: set[str] = set()
    for i, rp in enumerate(c.get("resizePolicy") or []):
        rp = rp or {}
        rn, pol = rp.get("resourceName") or "", rp.get("restartPolicy") or ""
        if rn in seen_resize:
            errs.append(duplicate(rpp.index(i), rn))
        seen_resize.add(rn)
        if not rn:
            errs.append(required(rpp))
        elif rn not in ("cpu", "memory"):
            errs.append(not_supported(rpp, rn, ["cpu", "memory"]))
        if not pol:
            errs.append(required(rpp))
        elif pol not in ("NotRequired", "RestartContainer"):
            errs.append(not_supported(rpp, pol, ["NotRequired", "RestartContainer"]))
    errs.extend(_validate_security_context(c.get("securityContext"), path.child("securityContext")))
    return errs


def _host_port_conflicts(containers: list, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for ci, c in enumerate(containers):
        for pi, p in enumerate((c or {}).get("ports") or []):
            hp = (p or {}).get("hostPort") or 0
            if hp == 0:
                continue
            key = f"{p.get('protocol') or ''}/{p.get('hostIP') or ''}/{hp}"
            if key in seen:
                errs.append(duplicate(path.index(ci).child("ports").index(pi).child("hostPort"),
                                      key))
            seen.add(key)
    return errs


def _validate_containers(containers: list | None, volumes: dict, grace: Any,
                         path: Path) -> list[FieldError]:
    if not containers:
        return [required(path)]
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, c in enumerate(containers):
        c = c if isinstance(c, dict) else {}
        ip = path.index(i)
        errs.extend(_validate_container_common(c, volumes, ip))
        name = c.get("name") or ""
        if name in names:
            errs.append(duplicate(ip.child("name"), name))
        else:
            names.add(name)
        if c.get("lifecycle") is not None:
            errs.extend(_validate_lifecycle(c["lifecycle"], grace, ip.child("lifecycle")))
        errs.extend(_validate_probes(c, grace, ip))
        if c.get("restartPolicy") is not None:
            errs.append(forbidden(ip.child("restartPolicy"),
                                  "may not be set for non-init containers"))
    errs.extend(_host_port_conflicts(containers, path))
    return errs


def _validate_init_containers(inits: list | None, regular: list | None, volumes: dict, grace: Any,
                              path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    names = {(c or {}).get("name") for c in regular or []}
    for i, c in enumerate(inits or []):
        c = c if isinstance(c, dict) else {}
        ip = path.index(i)
        errs.extend(_validate_container_common(c, volumes, ip))
        name = c.get("name") or ""
        if name in names:
            errs.append(duplicate(ip.child("name"), name))
        if name:
            names.add(name)
        rp = c.get("restartPolicy")
        if rp is None:
            msg = "may not be set for init containers without restartPolicy=Always"
            for key in ("lifecycle", "livenessProbe", "readinessProbe"):
                if c.get(key) is not None:
                    errs.append(forbidden(ip.child(key), msg))
            if c.get("startupProbe") is not None:
                errs.append(forbidden(ip.child("startupProbe"), msg))
        elif rp == "Always":
            if c.get("lifecycle") is not None:
                errs.extend(_validate_lifecycle(c["lifecycle"], grace, ip.child("lifecycle")))
            errs.extend(_validate_probes(c, grace, ip))
        else:
            errs.append(not_supported(ip.child("restartPolicy"), rp, ["Always"]))
    for c in inits or []:
        errs.extend(_host_port_conflicts([c], path))
    return errs


# --------------------------------------------------------------------------------------------
# pod-level fields


def validate_tolerations(tolerations: list | None, path: Path) -> list[FieldError]:
    """Upstream C{ValidateTolerations}."""
    errs: list[FieldError] = []
    effects = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
    for i, t in enumerate(tolerations or []):
        t = t or {}
        ip = path.index(i)
        key, op, value, effect = (t.get("key") or "", t.get("operator") or "",
                                  t.get("value") or "", t.get("effect") or "")
        if key:
            errs.extend(validate_label_name(key, ip.child("key")))
        if not key and op != "Exists":
            errs.append(invalid(ip.child("operator"), op,
                                'operator must be Exists when `key` is empty, which means "match '
                                'all values and all keys"'))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(invalid(ip.child("effect"), effect,
                                "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if op in ("Equal", ""):
            msgs = is_valid_label_value(value)
            if msgs:
                errs.append(invalid(ip.child("operator"), value, ";".join(msgs)))
        elif op == "Exists":
            if value:
                errs.append(invalid(ip.child("operator"), t,
                                    "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(ip.child("operator"), op, ["Equal", "Exists"]))
        if effect and effect not in effects:
            errs.append(not_supported(ip.child("effect"), effect, effects))
    return errs


def _validate_node_selector_requirement(rq: dict, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    op, values = rq.get("operator") or "", rq.get("values") or []
    if op in ("In", "NotIn"):
        if not values:
            errs.append(required(path.child("values"),
                                 "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(forbidden(path.child("values"),
                                  "may not be specified when `operator` is 'Exists' or "
                                  "'DoesNotExist'"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(required(path.child("values"),
                                 "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        errs.append(invalid(path.child("operator"), op, "not a valid selector operator"))
    errs.extend(validate_label_name(rq.get("key") or "", path.child("key")))
    return errs


def _validate_node_selector_term(term: dict, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for j, rq in enumerate(term.get("matchExpressions") or []):
        errs.extend(_validate_node_selector_requirement(rq or {},
                                                        path.child("matchExpressions").index(j)))
    for j, rq in enumerate(term.get("matchFields") or []):
        rq = rq or {}
        fp = path.child("matchFields").index(j)
        if rq.get("operator") in ("In", "NotIn"):
            if len(rq.get("values") or []) != 1:
                errs.append(required(fp.child("values"),
                                     "must be only one value when `operator` is 'In' or 'NotIn' "
                                     "for node field selector"))
        else:
            errs.append(invalid(fp.child("operator"), rq.get("operator") or "",
                                "not a valid selector operator"))
        if rq.get("key") != "metadata.name":
            errs.append(invalid(fp.child("key"), rq.get("key") or "",
                                "not a valid field selector key"))
        else:
            for k, v in enumerate(rq.get("values") or []):
                errs.extend(invalid(fp.child("values").index(k), v, m)
                            for m in name_is_dns_subdomain(v, False))
    return errs


def _validate_pod_affinity_term(term: dict, path: Path) -> list[FieldError]:
    errs = validate_label_selector(term.get("labelSelector"), path.child("labelSelector"))
    errs.extend(validate_label_selector(term.get("namespaceSelector"),
                                        path.child("namespaceSelector")))
    for ns in term.get("namespaces") or []:
        errs.extend(invalid(path.child("namespace"), ns, m) for m in name_is_dns_label(ns, False))
    if not term.get("topologyKey"):
        errs.append(required(path.child("topologyKey"), "can not be empty"))
    errs.extend(validate_label_name(term.get("topologyKey") or "", path.child("topologyKey")))
    return errs


def _validate_affinity(aff: Any, path: Path) -> list[FieldError]:
    if not isinstance(aff, dict):
        return []
    errs: list[FieldError] = []
    na = aff.get("nodeAffinity")
    if isinstance(na, dict):
        np_ = path.child("nodeAffinity")
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(req, dict):
            rp = np_.child("requiredDuringSchedulingIgnoredDuringExecution").child(
                "nodeSelectorTerms")
            terms = req.get("nodeSelectorTerms") or []
            if not terms:
                errs.append(required(rp, "must have at least one node selector term"))
            for i, term in enumerate(terms):
                errs.extend(_validate_node_selector_term(term or {}, rp.index(i)))
        for i, t in enumerate(na.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            pp = np_.child("preferredDuringSchedulingIgnoredDuringExecution").index(i)
            w = t.get("weight") or 0
            if w <= 0 or w > 100:
                errs.append(invalid(pp.child("weight"), w, "must be in the range 1-100"))
            errs.extend(_validate_node_selector_term(t.get("preference") or {},
                                                     pp.child("preference")))
    for key in ("podAffinity", "podAntiAffinity"):
        pa = aff.get(key)
        if not isinstance(pa, dict):
            continue
        kp = path.child(key)
        for i, term in enumerate(pa.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
            errs.extend(_validate_pod_affinity_term(
                term or {},
                kp.child("requiredDuringSchedulingIgnoredDuringExecution").index(i)))
        for i, wt in enumerate(pa.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            wp = kp.child("preferredDuringSchedulingIgnoredDuringExecution").index(i)
            w = (wt or {}).get("weight") or 0
            if w <= 0 or w > 100:
                errs.append(invalid(wp.child("weight"), w, "must be in the range 1-100"))
            errs.extend(_validate_pod_affinity_term((wt or {}).get("podAffinityTerm") or {},
                                                    wp.child("podAffinityTerm")))
    return errs


def _validate_topology_spread(constraints: list | None, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[tuple] = set()
    for i, c in enumerate(constraints or []):
        c = c or {}
        ip = path.index(i)
        skew = c.get("maxSkew") or 0
        if skew <= 0:
            errs.append(invalid(ip.child("maxSkew"), skew, "must be greater than zero"))
        key = c.get("topologyKey") or ""
        if not key:
            errs.append(required(ip.child("topologyKey"), "can not be empty"))
        else:
            errs.extend(validate_label_name(key, ip.child("topologyKey")))
        wu = c.get("whenUnsatisfiable") or ""
        if wu not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(not_supported(ip.child("whenUnsatisfiable"), wu,
                                      ["DoNotSchedule", "ScheduleAnyway"]))
        if (key, wu) in seen:
            errs.append(duplicate(ip, f"{{{key}, {wu}}}"))
        seen.add((key, wu))
        md = c.get("minDomains")
        if md is not None:
            if md <= 0:
                errs.append(invalid(ip.child("minDomains"), md, "must be greater than 0"))
            elif wu != "DoNotSchedule":
                errs.append(invalid(ip.child("minDomains"), md,
                                    "can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                                    "not ScheduleAnyway"))
        errs.extend(validate_label_selector(c.get("labelSelector"), ip.child("labelSelector")))
    return errs


def _validate_pod_security_context(spec: dict, path: Path) -> list[FieldError]:
    sc = spec.get("securityContext")
    errs: list[FieldError] = []
    if spec.get("hostNetwork"):
        for key in ("containers", "initContainers"):
            for i, c in enumerate(spec.get(key) or []):
                for j, p in enumerate((c or {}).get("ports") or []):
                    if (p or {}).get("hostPort") != p.get("containerPort"):
                        cp = path.child(key).index(i).child("ports").index(j).child("containerPort")
                        errs.append(invalid(cp, p.get("containerPort") or 0,
                                            "must match `hostPort` when `hostNetwork` is true"))
    if not isinstance(sc, dict):
        return errs
    sp = path.child("securityContext")
    if sc.get("fsGroup") is not None:
        errs.extend(invalid(sp.child("fsGroup"), sc["fsGroup"], m)
                    for m in is_valid_group_id(sc["fsGroup"]))
    if sc.get("runAsUser") is not None:
        errs.extend(invalid(sp.child("runAsUser"), sc["runAsUser"], m)
                    for m in is_valid_user_id(sc["runAsUser"]))
    if sc.get("runAsGroup") is not None:
        errs.extend(invalid(sp.child("runAsGroup"), sc["runAsGroup"], m)
                    for m in is_valid_group_id(sc["runAsGroup"]))
    for g, gid in enumerate(sc.get("supplementalGroups") or []):
        errs.extend(invalid(sp.child("supplementalGroups").index(g), gid, m)
                    for m in is_valid_group_id(gid))
    if spec.get("shareProcessNamespace") and spec.get("hostPID"):
        errs.append(invalid(sp.child("shareProcessNamespace"), True,
                            "ShareProcessNamespace and HostPID cannot both be enabled"))
    names: set[str] = set()
    for i, s in enumerate(sc.get("sysctls") or []):
        name = (s or {}).get("name") or ""
        np_ = sp.child("sysctls").index(i).child("name")
        pattern = r"([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
        if not name:
            errs.append(required(np_))
        elif len(name) > 253 or not re.fullmatch(pattern, name):
            errs.append(invalid(np_, name, "must have at most 253 characters and match regex "
                                           f"^{pattern}$"))
        elif name in names:
            errs.append(duplicate(np_, name))
        names.add(name)
    fcp = sc.get("fsGroupChangePolicy")
    if fcp is not None and fcp not in ("Always", "OnRootMismatch"):
        errs.append(not_supported(sp.child("fsGroupChangePolicy"), fcp,
                                  ["Always", "OnRootMismatch"]))
    errs.extend(_validate_seccomp_profile(sc.get("seccompProfile"), sp.child("seccompProfile")))
    errs.extend(_validate_apparmor_profile(sc.get("appArmorProfile"), sp.child("appArmorProfile")))
    return errs


def _validate_dns_config(spec: dict, path: Path) -> list[FieldError]:
    cfg = spec.get("dnsConfig")
    errs: list[FieldError] = []
    if spec.get("dnsPolicy") == "None":
        if cfg is None:
            return [required(path, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not cfg.get("nameservers"):
            return [required(path.child("nameservers"),
                             "must provide at least one DNS nameserver when `dnsPolicy` is None")]
    if not isinstance(cfg, dict):
        return errs
    ns = cfg.get("nameservers") or []
    if len(ns) > 3:
        errs.append(invalid(path.child("nameservers"), ns, "must not have more than 3 nameservers"))
    for i, n in enumerate(ns):
        if is_valid_ip(n):
            errs.append(invalid(path.child("nameservers").index(i), n, "must be valid IP address"))
    searches = cfg.get("searches") or []
    if len(searches) > 32:
        errs.append(invalid(path.child("searches"), searches,
                            "must not have more than 32 search paths"))
    if len(" ".join(searches)) > 2048:
        errs.append(invalid(path.child("searches"), searches,
                            "must not have more than 2048 characters (including spaces) in the "
                            "search list"))
    for i, s in enumerate(searches):
        if s == ".":
            continue
        errs.extend(_validate_dns1123_subdomain(s[:-1] if s.endswith(".") else s,
                                                path.child("searches").index(i)))
    for i, o in enumerate(cfg.get("options") or []):
        if not (o or {}).get("name"):
            errs.append(required(path.child("options").index(i), "must not be empty"))
    return errs


def validate_pod_spec(spec: dict, path: Path, pod_meta: dict | None = None) -> list[FieldError]:
    """
    Upstream C{ValidatePodSpec} over a defaulted v1 PodSpec dict.

    @param pod_meta: the pod's C{metadata} (only for real pods: ephemeral volume claim names).
    @return: field errors in upstream order.
    """
    spec = spec if isinstance(spec, dict) else {}
    errs: list[FieldError] = []
    grace = spec.get("terminationGracePeriodSeconds")
    vols, verrs = validate_volumes(spec.get("volumes"), pod_meta, path.child("volumes"))
    errs.extend(verrs)
    errs.extend(_validate_containers(spec.get("containers"), vols, grace, path.child("containers")))
    errs.extend(_validate_init_containers(spec.get("initContainers"), spec.get("containers"), vols,
                                          grace, path.child("initContainers")))
    rp = spec.get("restartPolicy") or ""
    if not rp:
        errs.append(required(path.child("restartPolicy")))
    elif rp not in ("Always", "OnFailure", "Never"):
        errs.append(not_supported(path.child("restartPolicy"), rp,
                                  ["Always", "OnFailure", "Never"]))
    dp = spec.get("dnsPolicy") or ""
    dns_policies = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
    if not dp:
        errs.append(required(path.child("dnsPolicy")))
    elif dp not in dns_policies:
        errs.append(not_supported(path.child("dnsPolicy"), dp, dns_policies))
    errs.extend(validate_labels(spec.get("nodeSelector"), path.child("nodeSelector")))
    errs.extend(_validate_pod_security_context(spec, path))
    for i, s in enumerate(spec.get("imagePullSecrets") or []):
        if isinstance(s, dict) and set(s) - {"name"}:
            errs.append(invalid(path.child("imagePullSecrets").index(i), s, "only name may be set"))
    errs.extend(_validate_affinity(spec.get("affinity"), path.child("affinity")))
    errs.extend(_validate_dns_config(spec, path.child("dnsConfig")))
    for i, g in enumerate(spec.get("readinessGates") or []):
        errs.extend(_validate_qualified_name(
            (g or {}).get("conditionType") or "",
            path.child("readinessGates").index(i).child("conditionType")))
    gates: set[str] = set()
    for i, g in enumerate(spec.get("schedulingGates") or []):
        gp = path.child("schedulingGates").index(i)
        name = (g or {}).get("name") or ""
        errs.extend(_validate_qualified_name(name, gp))
        if name in gates:
            errs.append(duplicate(gp, name))
        gates.add(name)
    errs.extend(_validate_topology_spread(spec.get("topologySpreadConstraints"),
                                          path.child("topologySpreadConstraints")))
    if spec.get("serviceAccountName"):
        errs.extend(invalid(path.child("serviceAccountName"), spec["serviceAccountName"], m)
                    for m in name_is_dns_subdomain(spec["serviceAccountName"], False))
    if spec.get("nodeName"):
        errs.extend(invalid(path.child("nodeName"), spec["nodeName"], m)
                    for m in name_is_dns_subdomain(spec["nodeName"], False))
    ads = spec.get("activeDeadlineSeconds")
    if ads is not None and (ads < 1 or ads > _MAX_INT32):
        errs.append(invalid(path.child("activeDeadlineSeconds"), ads,
                            inclusive_range_error(1, _MAX_INT32)))
    if spec.get("hostname"):
        errs.extend(validate_dns1123_label(spec["hostname"], path.child("hostname")))
    if spec.get("subdomain"):
        errs.extend(validate_dns1123_label(spec["subdomain"], path.child("subdomain")))
    if spec.get("tolerations"):
        errs.extend(validate_tolerations(spec["tolerations"], path.child("tolerations")))
    for ha in spec.get("hostAliases") or []:
        ha = ha or {}
        if is_valid_ip(ha.get("ip") or ""):
            errs.append(invalid(path.child("hostAliases").child("ip"), ha.get("ip") or "",
                                "must be valid IP address"))
        for h in ha.get("hostnames") or []:
            errs.extend(_validate_dns1123_subdomain(h,
                                                    path.child("hostAliases").child("hostnames")))
    if spec.get("priorityClassName"):
        errs.extend(invalid(path.child("priorityClassName"), spec["priorityClassName"], m)
                    for m in name_is_dns_subdomain(spec["priorityClassName"], False))
    if spec.get("runtimeClassName") is not None:
        errs.extend(invalid(path.child("runtimeClassName"), spec["runtimeClassName"], m)
                    for m in name_is_dns_subdomain(spec["runtimeClassName"], False))
    pp = spec.get("preemptionPolicy")
    if pp is not None and pp not in ("PreemptLowerPriority", "Never"):
        if not pp:
            errs.append(required(path.child("preemptionPolicy")))
        else:
            errs.append(not_supported(path.child("preemptionPolicy"), pp,
                                      ["PreemptLowerPriority", "Never"]))
    if spec.get("overhead") is not None:
        errs.extend(validate_resource_requirements({"limits": spec["overhead"]},
                                                   path.child("overhead")))
    os_ = spec.get("os")
    if isinstance(os_, dict):
        name = os_.get("name") or ""
        if not name:
            errs.append(required(path.child("os").child("name")))
        elif name not in ("linux", "windows"):
            errs.append(not_supported(path.child("os").child("name"), name, ["linux", "windows"]))
    return errs


# --------------------------------------------------------------------------------------------
# annotations and templates

_APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
_SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"


def _all_container_names(spec: dict) -> set[str]:
    names = set()
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                names.add(c.get("name") or "")
    return names


def _validate_seccomp_annotation(value: str, path: Path) -> list[FieldError]:
    if value in ("runtime/default", "docker/default", "unconfined"):
        return []
    if value.startswith("localhost/"):
        return _validate_local_descending_path(value[len("localhost/"):], path)
    return [invalid(path, value, "must be a valid seccomp profile")]


def validate_pod_specific_annotations(annotations: dict | None, spec: dict,
                                      path: Path) -> list[FieldError]:
    """Upstream C{ValidatePodSpecificAnnotations} (mirror pod, deletion cost, seccomp, AppArmor)."""
    annotations = annotations or {}
    errs: list[FieldError] = []
    mirror = "kubernetes.io/config.mirror"
    if mirror in annotations and not spec.get("nodeName"):
        errs.append(invalid(path.key(mirror), annotations[mirror],
                            "must set spec.nodeName if mirror pod annotation is set"))
    cost = "controller.kubernetes.io/pod-deletion-cost"
    if cost in annotations:
        v = annotations[cost]
        ok = re.fullmatch(r"[+-]?\d+", v or "") is not None and -(2**31) <= int(v) <= 2**31 - 1
        if not ok:
            errs.append(invalid(path.key(cost), v, "must be a 32bit integer"))
    if _SECCOMP_POD in annotations:
        errs.extend(_validate_seccomp_annotation(annotations[_SECCOMP_POD],
                                                 path.child(_SECCOMP_POD)))
    for k in sorted(annotations):
        if k.startswith(_SECCOMP_CONTAINER_PREFIX):
            errs.extend(_validate_seccomp_annotation(annotations[k], path.child(k)))
    names = _all_container_names(spec)
    for k in sorted(annotations):
        if not k.startswith(_APPARMOR_PREFIX):
            continue
        cname = k[len(_APPARMOR_PREFIX):]
        if cname not in names:
            errs.append(invalid(path.key(k), cname, "container not found"))
        p = annotations[k]
        if p not in ("", "runtime/default", "unconfined") and not p.startswith("localhost/"):
            errs.append(invalid(path.key(k), p, f'invalid AppArmor profile name: "{p}"'))
    return errs


def validate_pod_template_spec(tpl: dict | None, path: Path) -> list[FieldError]:
    """
    Upstream C{ValidatePodTemplateSpec}: template labels and annotations, pod-specific
    annotations, the PodSpec, and no ephemeral containers.
    """
    tpl = tpl if isinstance(tpl, dict) else {}
    meta = tpl.get("metadata") or {}
    spec = tpl.get("spec") or {}
    errs = validate_labels(meta.get("labels"), path.child("labels"))
    errs.extend(validate_annotations(meta.get("annotations"), path.child("annotations")))
    errs.extend(validate_pod_specific_annotations(meta.get("annotations"), spec,
                                                  path.child("annotations")))
    errs.extend(validate_pod_spec(spec, path.child("spec")))
    if spec.get("ephemeralContainers"):
        errs.append(forbidden(path.child("spec", "ephemeralContainers"),
                              "ephemeral containers not allowed in pod template"))
    return errs
