# -*- test-case-name: tests.apis.test_core_register -*-
"""
The core (C{""}) group, version v1: resource table and strategies, as upstream
C{pkg/registry/core/rest/storage_core.go} installs them (short names, categories and
subresources as kube-apiserver v1.32's discovery shows them).
"""

from __future__ import annotations

from kubetwist.apis.core.configmaps import CONFIGMAP_STRATEGY
from kubetwist.apis.core.endpoints import ENDPOINTS_STRATEGY
from kubetwist.apis.core.events import EVENT_STRATEGY
from kubetwist.apis.core.limitranges import LIMITRANGE_STRATEGY
from kubetwist.apis.core.namespaces import (
    NAMESPACE_FINALIZE_STRATEGY,
    NAMESPACE_STATUS_STRATEGY,
    NAMESPACE_STRATEGY,
)
from kubetwist.apis.core.nodes import NODE_STATUS_STRATEGY, NODE_STRATEGY
from kubetwist.apis.core.persistentvolumes import (
    PERSISTENTVOLUME_STATUS_STRATEGY,
    PERSISTENTVOLUME_STRATEGY,
    PERSISTENTVOLUMECLAIM_STATUS_STRATEGY,
    PERSISTENTVOLUMECLAIM_STRATEGY,
)
from kubetwist.apis.core.pods import (
    POD_EPHEMERALCONTAINERS_STRATEGY,
    POD_RESIZE_STRATEGY,
    POD_STATUS_STRATEGY,
    POD_STRATEGY,
)
from kubetwist.apis.core.podtemplates import PODTEMPLATE_STRATEGY
from kubetwist.apis.core.replicationcontrollers import (
    REPLICATIONCONTROLLER_STATUS_STRATEGY,
    REPLICATIONCONTROLLER_STRATEGY,
)
from kubetwist.apis.core.resourcequotas import (
    RESOURCEQUOTA_STATUS_STRATEGY,
    RESOURCEQUOTA_STRATEGY,
)
from kubetwist.apis.core.secrets import SECRET_STRATEGY
from kubetwist.apis.core.serviceaccounts import SERVICEACCOUNT_STRATEGY
from kubetwist.apis.core.services import SERVICE_STATUS_STRATEGY, SERVICE_STRATEGY
from kubetwist.registry.core.pod_connect import REST_FACTORIES
from kubetwist.registry.rest import ResourceSpec, Strategy

__all__ = ["GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = ""
VERSION = "v1"


def _r(resource: str, kind: str, singular: str, **kw) -> ResourceSpec:
    return ResourceSpec(GROUP, VERSION, resource, kind, singular, **kw)


RESOURCES: list[ResourceSpec] = [
    # served by kubetwist.apis.core.componentstatuses (no Store, no strategy entry)
    _r("componentstatuses", "ComponentStatus", "componentstatus", namespaced=False,
       short_names=["cs"], verbs=["get", "list"]),
    # served by a REST object (upstream LegacyBindingREST), no Store
    _r("bindings", "Binding", "binding", verbs=["create"]),
    _r("configmaps", "ConfigMap", "configmap", short_names=["cm"]),
    _r("endpoints", "Endpoints", "endpoints", short_names=["ep"]),
    _r("events", "Event", "event", short_names=["ev"]),
    _r("limitranges", "LimitRange", "limitrange", short_names=["limits"]),
    _r(
        "namespaces",
        "Namespace",
        "namespace",
        namespaced=False,
        short_names=["ns"],
        subresources=["finalize", "status"],
        verbs=["create", "delete", "get", "list", "patch", "update", "watch"],
    ),
    _r(
        "nodes",
        "Node",
        "node",
        namespaced=False,
        short_names=["no"],
        subresources=["proxy", "status"],
    ),
    _r(
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        "persistentvolumeclaim",
        short_names=["pvc"],
        subresources=["status"],
    ),
    _r(
        "persistentvolumes",
        "PersistentVolume",
        "persistentvolume",
        namespaced=False,
        short_names=["pv"],
        subresources=["status"],
    ),
    _r(
        "pods",
        "Pod",
        "pod",
        short_names=["po"],
        categories=["all"],
        subresources=["attach", "binding", "ephemeralcontainers", "eviction", "exec", "log",
                      "portforward", "proxy", "resize", "status"],
    ),
    _r("podtemplates", "PodTemplate", "podtemplate"),
    _r(
        "replicationcontrollers",
        "ReplicationController",
        "replicationcontroller",
        short_names=["rc"],
        categories=["all"],
        subresources=["status", "scale"],
    ),
    _r(
        "resourcequotas",
        "ResourceQuota",
        "resourcequota",
        short_names=["quota"],
        subresources=["status"],
    ),
    _r("secrets", "Secret", "secret"),
    _r("serviceaccounts", "ServiceAccount", "serviceaccount", short_names=["sa"]),
    _r(
        "services",
        "Service",
        "service",
        short_names=["svc"],
        categories=["all"],
        subresources=["proxy", "status"],
    ),
]

STRATEGIES: dict[str, Strategy] = {
    "configmaps": CONFIGMAP_STRATEGY,
    "endpoints": ENDPOINTS_STRATEGY,
    "events": EVENT_STRATEGY,
    "namespaces": NAMESPACE_STRATEGY,
    "namespaces/status": NAMESPACE_STATUS_STRATEGY,
    "namespaces/finalize": NAMESPACE_FINALIZE_STRATEGY,
    "limitranges": LIMITRANGE_STRATEGY,
    "nodes": NODE_STRATEGY,
    "nodes/status": NODE_STATUS_STRATEGY,
    "persistentvolumeclaims": PERSISTENTVOLUMECLAIM_STRATEGY,
    "persistentvolumeclaims/status": PERSISTENTVOLUMECLAIM_STATUS_STRATEGY,
    "persistentvolumes": PERSISTENTVOLUME_STRATEGY,
    "persistentvolumes/status": PERSISTENTVOLUME_STATUS_STRATEGY,
    "pods": POD_STRATEGY,
    "pods/status": POD_STATUS_STRATEGY,
    "pods/ephemeralcontainers": POD_EPHEMERALCONTAINERS_STRATEGY,
    "pods/resize": POD_RESIZE_STRATEGY,
    "podtemplates": PODTEMPLATE_STRATEGY,
    "replicationcontrollers": REPLICATIONCONTROLLER_STRATEGY,
    "replicationcontrollers/status": REPLICATIONCONTROLLER_STATUS_STRATEGY,
    "resourcequotas": RESOURCEQUOTA_STRATEGY,
    "resourcequotas/status": RESOURCEQUOTA_STATUS_STRATEGY,
    "secrets": SECRET_STRATEGY,
    "serviceaccounts": SERVICEACCOUNT_STRATEGY,
    "services": SERVICE_STRATEGY,
    "services/status": SERVICE_STATUS_STRATEGY,
}

#: REST-object subresources (pods/binding, pods/eviction, pods/log, ...) and bindings
STRATEGIES.update(REST_FACTORIES)
