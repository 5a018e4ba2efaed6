# -*- test-case-name: tests.apis.test_apps -*-
"""
Defaulting of the apps/v1 workloads: upstream C{k8s.io/kubernetes/pkg/apis/apps/v1}
(C{defaults.go}: C{SetDefaults_Deployment}, C{SetDefaults_StatefulSet},
C{SetDefaults_DaemonSet}, C{SetDefaults_ReplicaSet}) plus the generated walk into each pod
template (L{kubetwist.apis.core.podspec_defaults.default_pod_template_spec}) and a
StatefulSet's claim templates.  All functions work in place on v1 JSON-shaped dicts.
"""

from __future__ import annotations

from kubetwist.apis.core.podspec_defaults import default_pod_template_spec, default_pvc_template

__all__ = [
    "default_deployment",
    "default_replica_set",
    "default_stateful_set",
    "default_daemon_set",
    "default_controller_revision",
    "DAEMONSET_TEMPLATE_GENERATION_ANNOTATION",
]

#: Upstream C{appsv1.DeprecatedTemplateGeneration}: where v1 keeps a DaemonSet's
#: C{spec.templateGeneration}.
DAEMONSET_TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"


def _spec(obj: dict) -> dict:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


def _template(spec: dict) -> None:
    tpl = spec.get("template")
    if not isinstance(tpl, dict):
        tpl = spec["template"] = {}
    default_pod_template_spec(tpl)


def default_deployment(obj: dict) -> None:
    """
    C{replicas: 1}; C{strategy} C{RollingUpdate} with C{maxUnavailable}/C{maxSurge} C{"25%"};
    C{revisionHistoryLimit: 10}; C{progressDeadlineSeconds: 600}; the pod template.
    """
    spec = _spec(obj)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    strategy = spec.get("strategy")
    if not isinstance(strategy, dict):
        strategy = spec["strategy"] = {}
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        ru = strategy.get("rollingUpdate")
        if not isinstance(ru, dict):
            ru = strategy["rollingUpdate"] = {}
        if ru.get("maxUnavailable") is None:
            ru["maxUnavailable"] = "25%"
        if ru.get("maxSurge") is None:
            ru["maxSurge"] = "25%"
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if spec.get("progressDeadlineSeconds") is None:
        spec["progressDeadlineSeconds"] = 600
    if not spec.get("minReadySeconds"):
        spec.pop("minReadySeconds", None)
    if not spec.get("paused"):
        spec.pop("paused", None)
    _template(spec)


def default_replica_set(obj: dict) -> None:
    """C{replicas: 1} and the pod template."""
    spec = _spec(obj)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if not spec.get("minReadySeconds"):
        spec.pop("minReadySeconds", None)
    _template(spec)


def default_stateful_set(obj: dict) -> None:
    """
    C{podManagementPolicy: OrderedReady}; C{updateStrategy} C{RollingUpdate} with
    C{partition: 0}; C{persistentVolumeClaimRetentionPolicy} C{Retain}/C{Retain};
    C{replicas: 1}; C{revisionHistoryLimit: 10}; the pod template and every
    C{volumeClaimTemplates} item (written with C{apiVersion: v1}, C{kind: PersistentVolumeClaim},
    C{volumeMode: Filesystem}, C{status.phase: Pending}).
    """
    spec = _spec(obj)
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    us = spec.get("updateStrategy")
    if not isinstance(us, dict):
        us = spec["updateStrategy"] = {}
    if not us.get("type"):
        us["type"] = "RollingUpdate"
        if us.get("rollingUpdate") is None:
            us["rollingUpdate"] = {}
    if us["type"] == "RollingUpdate" and isinstance(us.get("rollingUpdate"), dict):
        if us["rollingUpdate"].get("partition") is None:
            us["rollingUpdate"]["partition"] = 0
        # MaxUnavailableStatefulSet is off in v1.32: the field is dropped on create
    policy = spec.get("persistentVolumeClaimRetentionPolicy")
    if not isinstance(policy, dict):
        policy = spec["persistentVolumeClaimRetentionPolicy"] = {}
    if not policy.get("whenDeleted"):
        policy["whenDeleted"] = "Retain"
    if not policy.get("whenScaled"):
        policy["whenScaled"] = "Retain"
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if not spec.get("minReadySeconds"):
        spec.pop("minReadySeconds", None)
    if not spec.get("serviceName"):
        spec.pop("serviceName", None)
    _template(spec)
    vcts = spec.get("volumeClaimTemplates")
    if vcts in (None, []):
        spec.pop("volumeClaimTemplates", None)
    for pvc in vcts or []:
        default_pvc_template(pvc)


def default_daemon_set(obj: dict) -> None:
    """
    C{updateStrategy} C{RollingUpdate} with C{maxUnavailable: 1} and C{maxSurge: 0};
    C{revisionHistoryLimit: 10}; the pod template.
    """
    spec = _spec(obj)
    us = spec.get("updateStrategy")
    if not isinstance(us, dict):
        us = spec["updateStrategy"] = {}
    if not us.get("type"):
        us["type"] = "RollingUpdate"
    if us["type"] == "RollingUpdate":
        ru = us.get("rollingUpdate")
        if not isinstance(ru, dict):
            ru = us["rollingUpdate"] = {}
        if ru.get("maxUnavailable") is None:
            ru["maxUnavailable"] = 1
        if ru.get("maxSurge") is None:
            ru["maxSurge"] = 0
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if not spec.get("minReadySeconds"):
        spec.pop("minReadySeconds", None)
    spec.pop("templateGeneration", None)
    _template(spec)


def default_controller_revision(obj: dict) -> None:
    """ControllerRevisions have no defaults; C{revision} is always written (not omitempty)."""
    if obj.get("revision") is None:
        obj["revision"] = 0
