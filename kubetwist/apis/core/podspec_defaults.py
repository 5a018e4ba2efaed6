# -*- test-case-name: tests.apis.test_pods -*-
"""
Defaulting of PodSpec and PodTemplateSpec: upstream C{k8s.io/kubernetes/pkg/apis/core/v1}
(C{defaults.go} and the generated C{SetObjectDefaults_Pod}/C{SetObjectDefaults_PodTemplate}
walk of C{zz_generated.defaults.go}, with the C{+default=} markers of C{k8s.io/api/core/v1}).

Besides the defaulters themselves, this module reproduces the visible effect of kube-apiserver
decoding a request into Go structs and encoding it back: non-pointer C{omitempty} fields holding
their zero value disappear (C{readOnly: false}), quantities come back in canonical form
(C{".5"} -> C{"500m"}), and the C{metadata} of an embedded template gets
C{creationTimestamp: null}.  Everything works in place on JSON-shaped dicts.
"""

from __future__ import annotations

import re
from typing import Any

from kubetwist.runtime.quantity import canonical_quantity, round_up_milli

__all__ = [
    "default_pod_spec",
    "default_pod_template_spec",
    "default_container",
    "default_volume",
    "default_resource_list",
    "default_pvc_template",
    "image_pull_policy_for",
    "TERMINATION_MESSAGE_PATH_DEFAULT",
]

#: Upstream C{TerminationMessagePathDefault}.
TERMINATION_MESSAGE_PATH_DEFAULT = "/dev/termination-log"
#: Upstream C{DefaultSchedulerName}.
DEFAULT_SCHEDULER_NAME = "default-scheduler"
#: Upstream C{DefaultTerminationGracePeriodSeconds}.
DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30
#: File mode 0644 of secret/configMap/downwardAPI/projected volumes.
DEFAULT_VOLUME_MODE = 420

# --------------------------------------------------------------------------------------------
# image references (upstream pkg/util/parsers.ParseImageName over docker/distribution reference)

_NAME_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = (
    r"(?:" + _DOMAIN_COMPONENT + r"(?:\." + _DOMAIN_COMPONENT + r")*"
    r"|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?"
)
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_REFERENCE_RE = re.compile(
    r"(?:(" + _DOMAIN + r")/)?(" + _NAME_COMPONENT + r"(?:/" + _NAME_COMPONENT + r")*)"
    r"(?::(" + _TAG + r"))?(?:@(" + _DIGEST + r"))?"
)


def _image_tag(image: str) -> str | None:
    """The tag C{ParseImageName} finds (C{latest} when neither tag nor digest), or None."""
    m = _REFERENCE_RE.fullmatch(image or "")
    if m is None:
        # a bare "host:port" style first component is a domain only when followed by "/"
        return None
    tag, digest = m.group(3), m.group(4)
    if not tag and not digest:
        return "latest"
    return tag or ""


def image_pull_policy_for(image: str) -> str:
    """
    Upstream C{SetDefaults_Container}'s rule: C{Always} for a C{:latest} (or missing) tag,
    else C{IfNotPresent} (also when the reference does not parse).
    """
    return "Always" if _image_tag(image) == "latest" else "IfNotPresent"


# --------------------------------------------------------------------------------------------
# wire round-trip helpers


def _drop_zero(d: dict, *keys: str) -> None:
    """Remove C{omitempty} non-pointer fields that hold their zero value."""
    for k in keys:
        if k in d:
            v = d[k]
            if v is None or v is False or v == "" or (type(v) is int and v == 0):
                del d[k]


def default_resource_list(rl: Any) -> Any:
    """Upstream C{SetDefaults_ResourceList}: every value rounded up to milli, canonical."""
    if isinstance(rl, dict):
        for k in list(rl):
            rl[k] = round_up_milli(rl[k])
    return rl


def _default_resources(res: dict) -> None:
    for key in ("limits", "requests"):
        if key in res:
            if res[key] is None or res[key] == {}:
                del res[key]
            else:
                default_resource_list(res[key])
    if res.get("claims") in (None, []):
        res.pop("claims", None)


def _default_http_get(h: dict) -> None:
    if not h.get("path"):
        h["path"] = "/"
    if not h.get("scheme"):
        h["scheme"] = "HTTP"
    _drop_zero(h, "host")


def _default_handler(h: Any) -> None:
    if not isinstance(h, dict):
        return
    if isinstance(h.get("httpGet"), dict):
        _default_http_get(h["httpGet"])
    if isinstance(h.get("grpc"), dict) and h["grpc"].get("service") is None:
        h["grpc"]["service"] = ""


def _default_probe(p: Any) -> None:
    if not isinstance(p, dict):
        return
    _default_handler(p)
    for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10),
                       ("successThreshold", 1), ("failureThreshold", 3)):
        if not p.get(key):
            p[key] = value
    _drop_zero(p, "initialDelaySeconds")


def _default_field_ref(holder: Any) -> None:
    if isinstance(holder, dict) and isinstance(holder.get("fieldRef"), dict):
        if not holder["fieldRef"].get("apiVersion"):
            holder["fieldRef"]["apiVersion"] = "v1"
    if isinstance(holder, dict) and isinstance(holder.get("resourceFieldRef"), dict):
        rf = holder["resourceFieldRef"]
        rf["divisor"] = (canonical_quantity(rf["divisor"])
                         if rf.get("divisor") not in (None, "") else "0")


def default_container(c: dict) -> None:
    """
    Upstream C{SetDefaults_Container} plus the generated walk over one container: pull policy,
    termination message path and policy, port protocols, env C{fieldRef.apiVersion},
    C{resources} (always present, quantities rounded), probe and lifecycle handler defaults.
    """
    if not isinstance(c, dict):
        return
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = image_pull_policy_for(c.get("image") or "")
    if not c.get("terminationMessagePath"):
        c["terminationMessagePath"] = TERMINATION_MESSAGE_PATH_DEFAULT
    if not c.get("terminationMessagePolicy"):
        c["terminationMessagePolicy"] = "File"
    for port in c.get("ports") or []:
        if isinstance(port, dict):
            if not port.get("protocol"):
                port["protocol"] = "TCP"
            _drop_zero(port, "hostPort", "hostIP", "name")
    for ev in c.get("env") or []:
        if isinstance(ev, dict):
            _drop_zero(ev, "value")
            if isinstance(ev.get("valueFrom"), dict):
                _default_field_ref(ev["valueFrom"])
    res = c.get("resources")
    if not isinstance(res, dict):
        res = c["resources"] = {}
    _default_resources(res)
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        _default_probe(c.get(probe))
    lc = c.get("lifecycle")
    if isinstance(lc, dict):
        _default_handler(lc.get("postStart"))
        _default_handler(lc.get("preStop"))
    for vm in c.get("volumeMounts") or []:
        if isinstance(vm, dict):
            _drop_zero(vm, "readOnly", "subPath", "subPathExpr")
    _drop_zero(c, "stdin", "stdinOnce", "tty", "workingDir", "image")
    for key in ("command", "args", "env", "ports", "volumeMounts", "envFrom", "volumeDevices"):
        if key in c and c[key] in (None, []):
            del c[key]


def _default_pvc_spec(spec: Any) -> None:
    """Upstream C{SetDefaults_PersistentVolumeClaimSpec} and its resource lists."""
    if not isinstance(spec, dict):
        return
    if not spec.get("volumeMode"):
        spec["volumeMode"] = "Filesystem"
    res = spec.get("resources")
    if isinstance(res, dict):
        _default_resources(res)


def default_pvc_template(pvc: dict) -> None:
    """
    Defaults of a full embedded C{PersistentVolumeClaim} (a StatefulSet's
    C{volumeClaimTemplates} item): C{apiVersion}/C{kind} written as kube-apiserver writes them,
    C{metadata.creationTimestamp: null}, C{spec.volumeMode: Filesystem},
    C{status.phase: Pending}.
    """
    if not isinstance(pvc, dict):
        return
    pvc["apiVersion"] = "v1"
    pvc["kind"] = "PersistentVolumeClaim"
    meta = pvc.get("metadata")
    if not isinstance(meta, dict):
        meta = pvc["metadata"] = {}
    meta.setdefault("creationTimestamp", None)
    if not isinstance(pvc.get("spec"), dict):
        pvc["spec"] = {}
    _default_pvc_spec(pvc["spec"])
    status = pvc.get("status")
    if not isinstance(status, dict):
        status = pvc["status"] = {}
    if not status.get("phase"):
        status["phase"] = "Pending"


def _default_key_to_paths(items: Any) -> None:
    for it in items or []:
        if isinstance(it, dict):
            _drop_zero(it, "path")


def default_volume(v: dict) -> None:
    """
    Upstream C{SetDefaults_Volume} and the per-source defaulters: an empty source becomes
    C{emptyDir: {}}; C{defaultMode: 420} for secret/configMap/downwardAPI/projected;
    C{hostPath.type: ""}; the C{+default} markers of iSCSI, RBD, AzureDisk and ScaleIO;
    projected service account tokens expire after 3600 s; ephemeral claim templates get
    C{volumeMode: Filesystem}.
    """
    if not isinstance(v, dict):
        return
    sources = [k for k in v if k != "name" and v[k] is not None]
    if not sources:
        v["emptyDir"] = {}
    for k in [k for k in v if v[k] is None]:
        del v[k]
    ed = v.get("emptyDir")
    if isinstance(ed, dict):
        _drop_zero(ed, "medium")
        if ed.get("sizeLimit") is not None:
            ed["sizeLimit"] = canonical_quantity(ed["sizeLimit"])
    hp = v.get("hostPath")
    if isinstance(hp, dict) and hp.get("type") is None:
        hp["type"] = ""
    for key in ("secret", "configMap"):
        src = v.get(key)
        if isinstance(src, dict):
            if src.get("defaultMode") is None:
                src["defaultMode"] = DEFAULT_VOLUME_MODE
            _drop_zero(src, "secretName", "name")
    da = v.get("downwardAPI")
    if isinstance(da, dict):
        if da.get("defaultMode") is None:
            da["defaultMode"] = DEFAULT_VOLUME_MODE
        for item in da.get("items") or []:
            _default_field_ref(item)
    pj = v.get("projected")
    if isinstance(pj, dict):
        if pj.get("defaultMode") is None:
            pj["defaultMode"] = DEFAULT_VOLUME_MODE
        for src in pj.get("sources") or []:
            if not isinstance(src, dict):
                continue
            if isinstance(src.get("downwardAPI"), dict):
                for item in src["downwardAPI"].get("items") or []:
                    _default_field_ref(item)
            sat = src.get("serviceAccountToken")
            if isinstance(sat, dict) and sat.get("expirationSeconds") is None:
                sat["expirationSeconds"] = 3600
    iscsi = v.get("iscsi")
    if isinstance(iscsi, dict) and not iscsi.get("iscsiInterface"):
        iscsi["iscsiInterface"] = "default"
    rbd = v.get("rbd")
    if isinstance(rbd, dict):
        for key, value in (("pool", "rbd"), ("user", "admin"), ("keyring", "/etc/ceph/keyring")):
            if not rbd.get(key):
                rbd[key] = value
    az = v.get("azureDisk")
    if isinstance(az, dict):
        for key, value in (("cachingMode", "ReadWrite"), ("fsType", "ext4"),
                           ("readOnly", False), ("kind", "Shared")):
            if az.get(key) is None:
                az[key] = value
    sio = v.get("scaleIO")
    if isinstance(sio, dict):
        if not sio.get("storageMode"):
            sio["storageMode"] = "ThinProvisioned"
        if not sio.get("fsType"):
            sio["fsType"] = "xfs"
    eph = v.get("ephemeral")
    if isinstance(eph, dict) and isinstance(eph.get("volumeClaimTemplate"), dict):
        tpl = eph["volumeClaimTemplate"]
        meta = tpl.get("metadata")
        if isinstance(meta, dict):
            meta.setdefault("creationTimestamp", None)
        _default_pvc_spec(tpl.get("spec"))
    # non-pointer readOnly flags (csi and azureDisk use *bool and keep false)
    for key, src in v.items():
        if key in ("name", "csi", "azureDisk") or not isinstance(src, dict):
            continue
        _drop_zero(src, "readOnly", "fsType", "chapAuthDiscovery", "chapAuthSession", "partition")


def default_pod_spec(spec: dict) -> None:
    """
    Upstream C{SetDefaults_PodSpec} and the generated walk over a PodSpec (shared by pods and
    every pod template): C{dnsPolicy: ClusterFirst}, C{restartPolicy: Always},
    C{securityContext: {}}, C{terminationGracePeriodSeconds: 30},
    C{schedulerName: default-scheduler}, then volumes and (init, ephemeral) containers.

    Also the v1 conversion of the deprecated C{serviceAccount}: an empty
    C{serviceAccountName} is taken from it, and it always mirrors C{serviceAccountName}.
    """
    if not isinstance(spec, dict):
        return
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if not isinstance(spec.get("securityContext"), dict):
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER_NAME
    for v in spec.get("volumes") or []:
        default_volume(v)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            default_container(c)
    if isinstance(spec.get("overhead"), dict):
        default_resource_list(spec["overhead"])
    # deprecated serviceAccount <-> serviceAccountName (v1 conversion)
    if not spec.get("serviceAccountName") and spec.get("serviceAccount"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]
    else:
        spec.pop("serviceAccountName", None)
        spec.pop("serviceAccount", None)
    _drop_zero(spec, "hostNetwork", "hostPID", "hostIPC", "nodeName", "hostname", "subdomain",
               "priorityClassName")
    for key in ("volumes", "initContainers", "tolerations", "imagePullSecrets", "hostAliases"):
        if key in spec and spec[key] in (None, []):
            del spec[key]


def default_pod_template_spec(tpl: dict) -> None:
    """
    Defaults of an embedded C{PodTemplateSpec}: its C{metadata} gains C{creationTimestamp: null}
    (as kube-apiserver writes an embedded zero time) and its C{spec} is defaulted by
    L{default_pod_spec}.  Pod-only defaults (C{enableServiceLinks}, requests from limits,
    host-network ports) are not applied, as upstream.
    """
    if not isinstance(tpl, dict):
        return
    meta = tpl.get("metadata")
    if not isinstance(meta, dict):
        meta = tpl["metadata"] = {}
    meta.setdefault("creationTimestamp", None)
    spec = tpl.get("spec")
    if not isinstance(spec, dict):
        spec = tpl["spec"] = {}
    default_pod_spec(spec)
