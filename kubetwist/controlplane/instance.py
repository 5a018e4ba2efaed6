# -*- test-case-name: tests.controlplane.test_instance -*-
"""
The kube-apiserver of the chain: upstream C{pkg/controlplane/instance.go} and
C{pkg/controlplane/controller} (the bootstrap controller: system namespaces, the
C{kubernetes} Service and its Endpoints).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Optional

from kubetwist.admission.chain import AdmissionChain
from kubetwist.admission.plugins.namespacelifecycle import NamespaceLifecycle
from kubetwist.controlplane.admission import PodMutations
from kubetwist.controlplane.namespace import NamespaceController
from kubetwist.registry.core.allocator import IPAllocator, PortAllocator
from kubetwist.registry.core.service import ServiceAllocations
from kubetwist.registry.generic.store import Store
from kubetwist.runtime import errors
from kubetwist.server.apigroup import APIGroupInfo, install_api_group
from kubetwist.server.genericapiserver import GenericAPIServer

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

#: Storage key roots that differ from C{/registry/<resource>} (upstream's etcd layout).
CORE_KEY_ROOTS = {
    "services": "/registry/services/specs",
    "endpoints": "/registry/services/endpoints",
    "namespaces": "/registry/namespaces",
}


#: Registries with upstream C{ReturnDeletedObject: true}: a delete answers with the object.
CORE_RETURN_DELETED = {"pods", "serviceaccounts", "services", "namespaces"}


@dataclass
class ControlPlaneConfig:
    """
    @ivar service_cidr: C{--service-cluster-ip-range}.
    @ivar node_port_range: C{--service-node-port-range} as C{(first, last)}.
    @ivar advertise_address: the IP written into the C{kubernetes} Endpoints.
    @ivar secure_port: the port written into the C{kubernetes} Endpoints.
    @ivar root_ca_pem: the CA clients should trust (C{kube-root-ca.crt}).
    """

    service_cidr: str = "10.0.0.0/24"
    node_port_range: tuple[int, int] = (30000, 32767)
    advertise_address: str = "127.0.0.1"
    secure_port: int = 6443
    root_ca_pem: str = ""
    min_request_timeout: int = 1800


def core_group_infos() -> list[APIGroupInfo]:
    """The built-in group-versions kube-apiserver installs (those kubetwist has so far)."""
    from kubetwist.apis.apps import register as apps
    from kubetwist.apis.coordination import register as coordination
    from kubetwist.apis.core import register as core

    return [
        APIGroupInfo("", "v1", core.RESOURCES, core.STRATEGIES, CORE_KEY_ROOTS,
                     return_deleted=CORE_RETURN_DELETED),
        APIGroupInfo(apps.GROUP, apps.VERSION, apps.RESOURCES, apps.STRATEGIES),
        APIGroupInfo(coordination.GROUP, coordination.VERSION, coordination.RESOURCES,
                     coordination.STRATEGIES),
    ]


class KubeAPIServer:
    """
    Builds the kube-apiserver L{GenericAPIServer} over C{storage}.

    @ivar stores: C{{(group, resource): Store}} of every installed resource.
    @ivar admission: the admission chain shared with the other servers.
    """

    def __init__(self, storage: Any, clock: Any, config: ControlPlaneConfig,
                 delegate: Optional[GenericAPIServer] = None,
                 extra_namespaced_stores: Any = None) -> None:
        self.storage = storage
        self.clock = clock
        self.config = config
        self.server = GenericAPIServer("kube-apiserver", clock, delegate)
        self.admission = AdmissionChain([])
        self.stores: dict[tuple[str, str], Store] = {}
        for info in core_group_infos():
            stores = install_api_group(self.server, info, storage, clock, self.admission,
                                       config.min_request_timeout)
            for resource, store in stores.items():
                self.stores[(info.group, resource)] = store
        namespaces = self.stores[("", "namespaces")]
        serviceaccounts = self.stores.get(("", "serviceaccounts"))
        self.admission.plugins.extend([
            NamespaceLifecycle(namespaces),
            PodMutations(serviceaccounts),
        ])
        self.ips = IPAllocator(storage, config.service_cidr)
        self.ports = PortAllocator(storage, config.node_port_range)
        from kubetwist.apis.core.services import (
            default_service_on_read, default_service_registry_fields,
        )

        services = self.stores[("", "services")]
        services.decorator = lambda svc: default_service_on_read(svc, self.ips.family)
        ServiceAllocations(services, self.ips, self.ports, default_service_registry_fields)
        self.extra_namespaced_stores = extra_namespaced_stores or (lambda: [])
        self.namespace_controller = NamespaceController(
            namespaces, self.namespaced_stores, clock, serviceaccounts,
            self.stores.get(("", "configmaps")), config.root_ca_pem,
        )
        self.server.add_post_start_hook("bootstrap-controller", self.bootstrap)
        self.server.add_post_start_hook("start-system-namespaces-controller",
                                        self.namespace_controller.resume)

    def namespaced_stores(self) -> list[Store]:
        """Every namespaced Store of the chain, events last (as upstream deletes them last)."""
        own = [s for (g, r), s in self.stores.items() if s.spec.namespaced]
        own.sort(key=lambda s: (s.spec.resource == "events", s.spec.resource))
        return own + list(self.extra_namespaced_stores())

    async def bootstrap(self) -> None:
        """System namespaces, then the C{kubernetes} Service and Endpoints in C{default}."""
        namespaces = self.stores[("", "namespaces")]
        for name in SYSTEM_NAMESPACES:
            try:
                await namespaces.create("", {"apiVersion": "v1", "kind": "Namespace",
                                             "metadata": {"name": name}})
            except errors.StatusError as e:
                if e.code != 409:
                    raise
        services = self.stores[("", "services")]
        first_ip = self.ips.first_ip()
        svc = {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "kubernetes", "namespace": "default",
                         "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {
                "type": "ClusterIP", "clusterIP": first_ip, "sessionAffinity": "None",
                "ports": [{"name": "https", "port": 443, "protocol": "TCP",
                           "targetPort": self.config.secure_port}],
            },
        }
        services.strategy.default(svc)
        try:
            await services.create("default", svc)
        except errors.StatusError as e:
            if e.code not in (409, 422):
                raise
        endpoints = self.stores[("", "endpoints")]
        if self.config.advertise_address.startswith("127.") or self.config.advertise_address == "::1":
            # Endpoints may not name a loopback address (upstream validation); with no other
            # address on this host there is nothing valid to publish.
            return
        ep = {
            "apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": "kubernetes", "namespace": "default",
                         "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
            "subsets": [{
                "addresses": [{"ip": self.config.advertise_address}],
                "ports": [{"name": "https", "port": self.config.secure_port, "protocol": "TCP"}],
            }],
        }

        async def reconcile(current: Optional[dict]) -> dict:
            if current is None:
                return copy.deepcopy(ep)
            current["subsets"] = copy.deepcopy(ep["subsets"])
            return current

        await endpoints.update("default", "kubernetes", reconcile, force_allow_create=True)
