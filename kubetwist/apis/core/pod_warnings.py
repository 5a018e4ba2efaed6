# -*- test-case-name: tests.apis.test_pod_warnings -*-
"""
Warnings for pods and pod templates, and the workloads that carry them: upstream
C{k8s.io/kubernetes/pkg/api/pod/warnings.go} (C{GetWarningsForPod},
C{GetWarningsForPodTemplate}), C{pkg/api/node/util.go} (deprecated node labels),
C{pkg/api/persistentvolumeclaim/util.go} (PVC warnings), C{pkg/api/job} (C{WarningsForJobSpec})
and the C{WarningsOnCreate} of each workload strategy (v1.32).

Each function takes the wire-form object (a dict, after defaulting) and returns the warning
texts, in upstream's order, that kube-apiserver sends as C{Warning: 299 - "<text>"} headers.
A warning never refuses a request.
"""

from __future__ import annotations

from kubetwist.apimachinery.validation import is_dns1123_label
from kubetwist.runtime.field import Path
from kubetwist.runtime.quantity import QuantityError, parse_quantity

__all__ = [
    "DEPRECATED_NODE_LABELS",
    "cron_job_warnings",
    "daemon_set_warnings",
    "deployment_warnings",
    "job_spec_warnings",
    "pod_template_warnings",
    "pod_warnings",
    "pvc_spec_warnings",
    "pvc_warnings",
    "replica_set_warnings",
    "replication_controller_warnings",
    "runtime_class_warnings",
    "stateful_set_warnings",
    "workload_name_warning",
]

#: Upstream C{deprecatedNodeLabels}: label key -> message.
DEPRECATED_NODE_LABELS = {
    "beta.kubernetes.io/arch": 'deprecated since v1.14; use "kubernetes.io/arch" instead',
    "beta.kubernetes.io/os": 'deprecated since v1.14; use "kubernetes.io/os" instead',
    "failure-domain.beta.kubernetes.io/region":
        'deprecated since v1.17; use "topology.kubernetes.io/region" instead',
    "failure-domain.beta.kubernetes.io/zone":
        'deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
    "beta.kubernetes.io/instance-type":
        'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead',
    "app.kubernetes.io/created-by": "deprecated since v1.9",
    "scheduler.alpha.kubernetes.io/preferAvoidPods":
        "deprecated since v1.22; use Taints and Tolerations instead",
    "node-role.kubernetes.io/master": 'use "node-role.kubernetes.io/control-plane" instead',
}

_DEPRECATED_ANNOTATIONS = (
    ("scheduler.alpha.kubernetes.io/critical-pod",
     'non-functional in v1.16+; use the "priorityClassName" field instead'),
    ("security.alpha.kubernetes.io/sysctls",
     'non-functional in v1.11+; use the "sysctls" field instead'),
    ("security.alpha.kubernetes.io/unsafe-sysctls",
     'non-functional in v1.11+; use the "sysctls" field instead'),
)

_DEPRECATED_VOLUMES = (
    ("photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"),
    ("gitRepo", "deprecated in v1.11"),
    ("scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
    ("flocker", "deprecated in v1.22, non-functional in v1.25+"),
    ("storageos", "deprecated in v1.22, non-functional in v1.25+"),
    ("quobyte", "deprecated in v1.22, non-functional in v1.25+"),
    ("glusterfs", "deprecated in v1.25, non-functional in v1.26+"),
    (None, None),  # the ephemeral volume claim template's PVC warnings come here
    ("cephfs", "deprecated in v1.28, non-functional in v1.31+"),
    ("rbd", "deprecated in v1.28, non-functional in v1.31+"),
)

_SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER = "container.seccomp.security.alpha.kubernetes.io/"
_APPARMOR_CONTAINER = "container.apparmor.security.beta.kubernetes.io/"
_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
_NULL_SELECTOR = "a null labelSelector results in matching no pod"
_FRACTIONAL = 'fractional byte value "{}" is invalid, must be an integer'


def _child(base: Path | None, *names: str) -> Path:
    """C{fieldPath.Child(...)} where a nil C{fieldPath} starts a new path."""
    return base.child(*names) if base is not None else Path(*names)


def _fractional(raw: object) -> str | None:
    """The canonical text of a byte quantity that is not a whole number, else None."""
    if raw is None:
        return None
    try:
        q = parse_quantity(raw)
    except QuantityError:
        return None
    return None if q.milli_value() % 1000 == 0 else str(q)


def _go_port(port: dict) -> str:
    """An internal C{api.ContainerPort} as Go's C{%+v} prints it."""
    return (f"{{Name:{port.get('name') or ''} HostPort:{port.get('hostPort') or 0} "
            f"ContainerPort:{port.get('containerPort') or 0} "
            f"Protocol:{port.get('protocol') or ''} HostIP:{port.get('hostIP') or ''}}}")


def _node_selector_term(term: dict, path: Path) -> list[str]:
    out = []
    for i, expr in enumerate((term or {}).get("matchExpressions") or []):
        key = (expr or {}).get("key") or ""
        msg = DEPRECATED_NODE_LABELS.get(key)
        if msg:
            out.append(f"{path.child('matchExpressions').index(i).child('key')}: {key} is {msg}")
    return out


def _containers(spec: dict, spec_path: Path):
    """Upstream C{VisitContainersWithPath}: init, regular, then ephemeral containers."""
    for field_name in ("initContainers", "containers", "ephemeralContainers"):
        for i, c in enumerate(spec.get(field_name) or []):
            yield (c or {}), spec_path.child(field_name).index(i)


def _spec_and_meta(base: Path | None, spec: dict, meta: dict) -> list[str]:
    """Upstream C{warningsForPodSpecAndMeta}."""
    warnings: list[str] = []
    annotations = meta.get("annotations") or {}
    for key in spec.get("nodeSelector") or {}:
        msg = DEPRECATED_NODE_LABELS.get(key)
        if msg:
            warnings.append(f"{_child(base, 'spec', 'nodeSelector').key(key)}: {msg}")
    affinity = spec.get("affinity") or {}
    node_affinity = affinity.get("nodeAffinity") or {}
    if node_affinity:
        required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if required is not None:
            terms_path = _child(base, "spec", "affinity", "nodeAffinity",
                                "requiredDuringSchedulingIgnoredDuringExecution",
                                "nodeSelectorTerms")
            for i, term in enumerate((required or {}).get("nodeSelectorTerms") or []):
                warnings.extend(_node_selector_term(term, terms_path.index(i)))
        preferred_path = _child(base, "spec", "affinity", "nodeAffinity",
                                "preferredDuringSchedulingIgnoredDuringExecution")
        for i, term in enumerate(
                node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            warnings.extend(_node_selector_term((term or {}).get("preference") or {},
                                                preferred_path.index(i).child("preference")))
    for i, t in enumerate(spec.get("topologySpreadConstraints") or []):
        t = t or {}
        key = t.get("topologyKey") or ""
        tsc = _child(base, "spec", "topologySpreadConstraints").index(i)
        msg = DEPRECATED_NODE_LABELS.get(key)
        if msg:
            warnings.append(f"{tsc.child('topologyKey')}: {key} is {msg}")
        if t.get("labelSelector") is None:
            warnings.append(f"{tsc.child('labelSelector')}: {_NULL_SELECTOR}")
    for key, msg in _DEPRECATED_ANNOTATIONS:
        if key in annotations:
            warnings.append(f"{_child(base, 'metadata', 'annotations').key(key)}: {msg}")
    volumes = spec.get("volumes") or []
    for i, v in enumerate(volumes):
        v = v or {}
        vpath = _child(base, "spec", "volumes").index(i)
        for source, msg in _DEPRECATED_VOLUMES:
            if source is None:
                template = (v.get("ephemeral") or {}).get("volumeClaimTemplate")
                if v.get("ephemeral") is not None and template is not None:
                    warnings.extend(pvc_spec_warnings(
                        vpath.child("ephemeral", "volumeClaimTemplate", "spec"),
                        (template or {}).get("spec") or {}))
            elif v.get(source) is not None:
                warnings.append(f"{vpath.child(source)}: {msg}")
    warnings.extend(_projected_token_paths(base, volumes))
    warnings.extend(_duplicates(spec.get("hostAliases"), "ip",
                                _child(base, "spec", "hostAliases"), "ip"))
    pull_secrets = spec.get("imagePullSecrets") or []
    warnings.extend(_duplicates(pull_secrets, "name",
                                _child(base, "spec", "imagePullSecrets"), "name"))
    for i, item in enumerate(pull_secrets):
        if not (item or {}).get("name"):
            warnings.append(f'{_child(base, "spec", "imagePullSecrets").index(i).child("name")}: '
                            f'invalid empty name ""')
    overhead = spec.get("overhead") or {}
    for resource in ("memory", "ephemeral-storage"):
        text = _fractional(overhead.get(resource))
        if text is not None:
            warnings.append(f"{_child(base, 'spec', 'overhead').key(resource)}: "
                            + _FRACTIONAL.format(text))
    security = spec.get("securityContext") or {}
    if security.get("seccompProfile") is None and _SECCOMP_POD in annotations:
        warnings.append(f"{_child(base, 'metadata', 'annotations').key(_SECCOMP_POD)}: "
                        'non-functional in v1.27+; use the "seccompProfile" field instead')
    pod_apparmor = security.get("appArmorProfile") is not None
    spec_path = _child(base, "spec")
    for c, cpath in _containers(spec, spec_path):
        warnings.extend(_container_warnings(base, c, cpath, annotations, pod_apparmor))
    warnings.extend(_port_warnings(spec, spec_path))
    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and not isinstance(grace, bool) and grace < 0:
        warnings.append(f"{_child(base, 'spec', 'terminationGracePeriodSeconds')}: must be >= 0; "
                        "negative values are invalid and will be treated as 1")
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind)
        if not isinstance(terms, dict):
            continue
        req = _child(base, "spec", "affinity", kind,
                     "requiredDuringSchedulingIgnoredDuringExecution")
        for i, t in enumerate(terms.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
            if (t or {}).get("labelSelector") is None:
                warnings.append(f"{req.index(i).child('labelSelector')}: {_NULL_SELECTOR}")
        pref = _child(base, "spec", "affinity", kind,
                      "preferredDuringSchedulingIgnoredDuringExecution")
        for i, t in enumerate(terms.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            if ((t or {}).get("podAffinityTerm") or {}).get("labelSelector") is None:
                warnings.append(
                    f"{pref.index(i).child('podAffinityTerm', 'labelSelector')}: {_NULL_SELECTOR}")
    return warnings


def _duplicates(items: list | None, key: str, path: Path, child: str) -> list[str]:
    out = []
    if items and len(items) > 1:
        seen = set()
        for i, item in enumerate(items):
            value = (item or {}).get(key) or ""
            if value in seen:
                out.append(f'{path.index(i).child(child)}: duplicate {key} "{value}"')
            else:
                seen.add(value)
    return out


def _projected_token_paths(base: Path | None, volumes: list) -> list[str]:
    """Projected sources whose paths collide with a service account token's path."""
    token_paths = set()
    for v in volumes:
        for source in ((v or {}).get("projected") or {}).get("sources") or []:
            token = (source or {}).get("serviceAccountToken")
            if token is not None:
                token_paths.add((token or {}).get("path") or "")
    out: list[str] = []
    if not token_paths:
        return out
    for i, v in enumerate(volumes):
        projected = (v or {}).get("projected")
        if projected is None:
            continue
        sources_path = _child(base, "spec", "volumes").index(i).child("projected", "sources")
        for source in (projected or {}).get("sources") or []:
            source = source or {}
            for name, label in (("configMap", "configMap"), ("secret", "secrets"),
                                ("downwardAPI", "downwardAPI")):
                if source.get(name) is None:
                    continue
                for j, item in enumerate((source.get(name) or {}).get("items") or []):
                    item_path = (item or {}).get("path") or ""
                    if item_path in token_paths:
                        out.append(f"{sources_path.child(label).index(j)}: has duplicated path "
                                   f'with ServiceAccountToken "{item_path}"')
            bundle = source.get("clusterTrustBundle")
            if bundle is not None and ((bundle or {}).get("path") or "") in token_paths:
                out.append(f"{sources_path.child('ClusterTrustBundle')}: has duplicated path "
                           f'with ServiceAccountToken "{(bundle or {}).get("path") or ""}"')
    return out


def _container_warnings(base: Path | None, c: dict, cpath: Path, annotations: dict,
                        pod_apparmor: bool) -> list[str]:
    out: list[str] = []
    security = c.get("securityContext") or {}
    name = c.get("name") or ""
    annotations_path = _child(base, "metadata", "annotations")
    if security.get("seccompProfile") is None and _SECCOMP_CONTAINER + name in annotations:
        out.append(f"{annotations_path.key(_SECCOMP_CONTAINER + name)}: non-functional in "
                   'v1.27+; use the "seccompProfile" field instead')
    if base is not None and not pod_apparmor and security.get("appArmorProfile") is None:
        key = _APPARMOR_CONTAINER + name
        if key in annotations:
            out.append(f"{annotations_path.key(key)}: deprecated since v1.30; use the "
                       '"appArmorProfile" field instead')
    resources = c.get("resources") or {}
    for resource in ("memory", "ephemeral-storage"):
        for kind in ("limits", "requests"):
            text = _fractional((resources.get(kind) or {}).get(resource))
            if text is not None:
                out.append(f"{cpath.child('resources', kind).key(resource)}: "
                           + _FRACTIONAL.format(text))
    env = c.get("env") or []
    if len(env) > 1:
        seen = set()
        for i, item in enumerate(env):
            item = item or {}
            var = item.get("name") or ""
            if var not in seen:
                seen.add(var)
                continue
            ref = f"$({var})"
            value = item.get("value") or ""
            if item.get("valueFrom") is not None or value == ref or ref not in value:
                out.append(f'{cpath.child("env").index(i)}: hides previous definition of '
                           f'"{var}", which may be dropped when using apply')
    return out


def _port_warnings(spec: dict, spec_path: Path) -> list[str]:
    out: list[str] = []
    seen: dict[str, list[tuple[Path, dict]]] = {}
    for c, cpath in _containers(spec, spec_path):
        for i, port in enumerate(c.get("ports") or []):
            port = port or {}
            ppath = cpath.child("ports").index(i)
            host_ip = port.get("hostIP") or ""
            host_port = port.get("hostPort") or 0
            if host_ip and not host_port:
                out.append(f"{ppath}: hostIP set without hostPort: {_go_port(port)}")
            k = f"{port.get('containerPort') or 0}/{port.get('protocol') or ''}"
            for other_path, other in seen.get(k, []):
                other_ip = other.get("hostIP") or ""
                other_port = other.get("hostPort") or 0
                if host_ip == other_ip and host_port == other_port:
                    out.append(f"{ppath}: duplicate port definition with {other_path}")
                elif not host_port or not other_port:
                    out.append(f"{ppath}: overlapping port definition with {other_path}")
                elif host_port == other_port and (not host_ip) != (not other_ip):
                    out.append(f"{ppath}: dangerously ambiguous port definition with "
                               f"{other_path}")
            seen.setdefault(k, []).append((ppath, port))
    return out


def pod_warnings(pod: dict) -> list[str]:
    """Upstream C{podStrategy.WarningsOnCreate}: the name as a hostname, then the spec."""
    meta = pod.get("metadata") or {}
    warnings = []
    msgs = is_dns1123_label(meta.get("name") or "")
    if msgs:
        warnings.append("metadata.name: this is used in the Pod's hostname, which can result "
                        "in surprising behavior; a DNS label is recommended: ["
                        + " ".join(msgs) + "]")
    warnings.extend(_spec_and_meta(None, pod.get("spec") or {}, meta))
    return warnings


def pod_template_warnings(path: Path, template: dict | None) -> list[str]:
    """Upstream C{GetWarningsForPodTemplate}: C{template} is a PodTemplateSpec at C{path}."""
    if template is None:
        return []
    return _spec_and_meta(path, template.get("spec") or {}, template.get("metadata") or {})


def workload_name_warning(obj: dict) -> list[str]:
    """The C{WarningsOnCreate} line of workloads whose name goes into pod names (Deployment,
    ReplicaSet, ReplicationController, Job, CronJob): a name that is not a DNS label."""
    msgs = is_dns1123_label((obj.get("metadata") or {}).get("name") or "")
    if not msgs:
        return []
    return ["metadata.name: this is used in Pod names and hostnames, which can result in "
            "surprising behavior; a DNS label is recommended: [" + " ".join(msgs) + "]"]


def _template(obj: dict) -> dict | None:
    return (obj.get("spec") or {}).get("template")


def deployment_warnings(obj: dict) -> list[str]:
    """Upstream C{deploymentStrategy.WarningsOnCreate} (ReplicaSets and ReplicationControllers
    warn the same way)."""
    return (workload_name_warning(obj)
            + pod_template_warnings(Path("spec", "template"), _template(obj)))


#: Upstream C{rsStrategy.WarningsOnCreate} and C{rcStrategy.WarningsOnCreate} are the
#: Deployment's: the name, then the template at C{spec.template}.
replica_set_warnings = replication_controller_warnings = deployment_warnings


def daemon_set_warnings(obj: dict) -> list[str]:
    """Upstream C{daemonSetStrategy.WarningsOnCreate}: the pod template only."""
    return pod_template_warnings(Path("spec", "template"), _template(obj))


def stateful_set_warnings(obj: dict) -> list[str]:
    """Upstream C{statefulSetStrategy.WarningsOnCreate}."""
    spec = obj.get("spec") or {}
    warnings = pod_template_warnings(Path("spec", "template"), spec.get("template"))
    for i, pvc in enumerate(spec.get("volumeClaimTemplates") or []):
        warnings.extend(pvc_spec_warnings(Path("spec", "volumeClaimTemplates").index(i),
                                          (pvc or {}).get("spec") or {}))
    limit = spec.get("revisionHistoryLimit")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit < 0:
        warnings.append("spec.revisionHistoryLimit: a negative value retains all historical "
                        "revisions; a value >= 0 is recommended")
    return warnings


def job_spec_warnings(path: Path, spec: dict) -> list[str]:
    """Upstream C{job.WarningsForJobSpec}: Indexed Jobs past the soft limits, the template."""
    warnings = []
    if spec.get("completionMode") == "Indexed":
        completions = spec.get("completions") or 0
        parallelism = spec.get("parallelism") or 0
        if completions > 100_000 and parallelism > 10_000:
            warnings.append(
                f"{path}: In Indexed Jobs with a number of completions higher than 10^5 and a "
                "parallelism higher than 10^4, Kubernetes might not be able to track "
                "completedIndexes when a big number of indexes fail")
    warnings.extend(pod_template_warnings(path.child("template"), spec.get("template")))
    return warnings


def cron_job_warnings(obj: dict) -> list[str]:
    """Upstream C{cronJobStrategy.WarningsOnCreate}."""
    job_spec = ((obj.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}
    return (workload_name_warning(obj)
            + job_spec_warnings(Path("spec", "jobTemplate", "spec"), job_spec))


def pvc_spec_warnings(path: Path, spec: dict) -> list[str]:
    """Upstream C{GetWarningsForPersistentVolumeClaimSpec}: fractional storage sizes."""
    out = []
    resources = spec.get("resources") or {}
    for kind in ("requests", "limits"):
        text = _fractional((resources.get(kind) or {}).get("storage"))
        if text is not None:
            out.append(f"{path.child('resources').child(kind).key('storage')}: "
                       + _FRACTIONAL.format(text))
    return out


def pvc_warnings(pvc: dict) -> list[str]:
    """Upstream C{GetWarningsForPersistentVolumeClaim}."""
    out = []
    if _BETA_STORAGE_CLASS in ((pvc.get("metadata") or {}).get("annotations") or {}):
        out.append(f"metadata.annotations[{_BETA_STORAGE_CLASS}]: deprecated since v1.8; use "
                   '"storageClassName" attribute instead')
    return out + pvc_spec_warnings(Path("spec"), pvc.get("spec") or {})


def runtime_class_warnings(rc: dict) -> list[str]:
    """Upstream C{GetWarningsForRuntimeClass}: deprecated node labels in scheduling."""
    out = []
    for key in ((rc.get("scheduling") or {}).get("nodeSelector") or {}):
        msg = DEPRECATED_NODE_LABELS.get(key)
        if msg:
            out.append(f"scheduling.nodeSelector: {msg}")
    return out
