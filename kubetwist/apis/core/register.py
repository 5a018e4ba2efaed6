# -*- test-case-name: tests.apis.test_core_register -*-
"""
The core (C{""}) group, version v1: resource table and strategies, as upstream
C{pkg/registry/core/rest/storage_core.go} installs them (short names, categories and
subresources as kube-apiserver v1.32's discovery shows them).
"""

from __future__ import annotations

from typing import Any

from zope.interface import classImplements

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
from kubetwist.registry.core.pod_connect import (
    LogREST,
    NodeProxyREST,
    PodProxyREST,
    PodStreamREST,
    ServiceProxyREST,
)
from kubetwist.registry.core.pod_subresources import BindingREST, EvictionREST, LegacyBindingREST
from kubetwist.registry.generic.store import Store
from kubetwist.registry.rest import ICreater, ResourceSpec, Strategy

__all__ = ["GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = ""
VERSION = "v1"


def _r(resource: str, kind: str, singular: str, **kw) -> ResourceSpec:
    return ResourceSpec(GROUP, VERSION, resource, kind, singular, **kw)


RESOURCES: list[ResourceSpec] = [
    # served by kubetwist.apis.core.componentstatuses (no Store, no strategy entry)
    _r("componentstatuses", "ComponentStatus", "componentstatus", namespaced=False,
       short_names=["cs"]),
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

# --------------------------------------------------------------------------------------------
# the REST factories of the core group's table (see kubetwist.server.apigroup.APIGroupInfo)


def _eviction(pods: Store, lookup: Any) -> Any:
    from kubetwist.apis.policy import register as policy

    status = pods.for_subresource(POD_STATUS_STRATEGY)
    spec = next(r for r in policy.RESOURCES if r.resource == "poddisruptionbudgets")
    pdbs = Store(spec, policy.STRATEGIES["poddisruptionbudgets/status"], status.storage,
                 status.clock)
    return EvictionREST(status, pdbs)


def _binding(pods: Store, lookup: Any) -> Any:
    return BindingREST(pods)


def _bindings(_: Any, lookup: Any) -> Any:
    return LegacyBindingREST(lambda: BindingREST(lookup("pods")))


# the legacy bindings resource only creates (upstream LegacyBindingREST is a rest.Creater)
classImplements(LegacyBindingREST, ICreater)


#: C{{"pods/eviction": factory, ...}}: C{factory(parent Store or None, lookup)} returns the REST
#: object of a subresource (or of the C{bindings} resource); C{lookup(resource)} returns a
#: Store of the core group at request time.
REST_FACTORIES: dict[str, Any] = {
    "bindings": _bindings,
    "nodes/proxy": lambda nodes, lookup: NodeProxyREST(nodes),
    "pods/attach": lambda pods, lookup: PodStreamREST(pods, lambda: lookup("nodes"), "attach"),
    "pods/binding": _binding,
    "pods/eviction": _eviction,
    "pods/exec": lambda pods, lookup: PodStreamREST(pods, lambda: lookup("nodes"), "exec"),
    "pods/log": lambda pods, lookup: LogREST(pods, lambda: lookup("nodes")),
    "pods/portforward": lambda pods, lookup: PodStreamREST(pods, lambda: lookup("nodes"),
                                                           "portforward"),
    "pods/proxy": lambda pods, lookup: PodProxyREST(pods),
    "services/proxy": lambda services, lookup: ServiceProxyREST(
        services, lambda: lookup("endpoints")),
}


#: REST-object subresources (pods/binding, pods/eviction, pods/log, ...) and bindings
STRATEGIES.update(REST_FACTORIES)
