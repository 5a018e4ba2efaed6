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

from kubetwist.admission import registry as admission_registry
from kubetwist.admission.chain import AdmissionChain
from kubetwist.admission.plugins.csrrequestor import CSRRequestor
from kubetwist.controlplane.namespace import NamespaceController
from kubetwist.egress.resolver import ServiceResolver
from kubetwist.registry.core.allocator import IPAllocator, PortAllocator
from kubetwist.registry.core.namespace import NamespaceStore
from kubetwist.registry.core.service import ServiceAllocations
from kubetwist.registry.generic.store import Store
from kubetwist.runtime import errors
from kubetwist.server.apigroup import APIGroupInfo, install_api_group
from kubetwist.server.genericapiserver import GenericAPIServer
from kubetwist.server.openid import install_openid_routes

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

#: Storage key roots that differ from C{/registry/<resource>} (upstream's etcd layout).
CORE_KEY_ROOTS = {
    "services": "/registry/services/specs",
    "endpoints": "/registry/services/endpoints",
    "namespaces": "/registry/namespaces",
    "replicationcontrollers": "/registry/controllers",
    "nodes": "/registry/minions",
}


#: Registries with upstream C{ReturnDeletedObject: true}: a delete answers with the object.
CORE_RETURN_DELETED = {"pods", "serviceaccounts", "services", "namespaces",
                       "persistentvolumes", "persistentvolumeclaims", "podtemplates",
                       "limitranges", "resourcequotas"}


@dataclass
class ControlPlaneConfig:
    """
    @ivar service_cidr: C{--service-cluster-ip-range}.
    @ivar node_port_range: C{--service-node-port-range} as C{(first, last)}.
    @ivar advertise_address: the IP written into the C{kubernetes} Endpoints.
    @ivar secure_port: the port written into the C{kubernetes} Endpoints.
    @ivar root_ca_pem: the CA clients should trust (C{kube-root-ca.crt}).
    @ivar admission_plugins: the enabled admission plugin names, in order (C{None}: upstream's
        default set, L{kubetwist.admission.registry.default_enabled_plugins}).
    @ivar enable_priority_and_fairness: C{--enable-priority-and-fairness} (off: no config
        consumer, so no FlowSchema status, as upstream).
    @ivar admission_configs: C{{plugin name: configuration dict}} read from
        C{--admission-control-config-file} (C{None}: no file).
    @ivar cluster_authentication: the L{ClusterAuthenticationInfo
        <kubetwist.controlplane.clusterauthenticationtrust.ClusterAuthenticationInfo>} published
        in C{kube-system/extension-apiserver-authentication} (C{None}: not published).
    """

    service_cidr: str = "10.0.0.0/24"
    node_port_range: tuple[int, int] = (30000, 32767)
    advertise_address: str = "127.0.0.1"
    secure_port: int = 6443
    root_ca_pem: str = ""
    min_request_timeout: int = 1800
    admission_plugins: Optional[list[str]] = None
    enable_priority_and_fairness: bool = True
    admission_configs: Optional[dict] = None
    cluster_authentication: Optional[Any] = None


async def _nothing() -> None:
    """A post-start hook with nothing to do in kubetwist."""


async def _list_items(store: Any, namespace: str = "") -> list[dict]:
    """Every object of C{store} (the admission plugins' lister), or of one C{namespace}."""
    from kubetwist.registry.generic.store import ListOptions

    listed = await store.list(namespace, ListOptions())
    return list(listed.get("items") or [])


def _policy_status_controller(server: Any, stores: dict, clock: Any) -> Any:
    """The ValidatingAdmissionPolicy status controller (kube-controller-manager's
    C{validatingadmissionpolicy-status-controller}) over the built-in kinds' schemas."""
    from kubetwist.admission.plugins.policy.typechecking import StatusController, TypeChecker
    from kubetwist.server.openapi_types import kind_schemas

    def kinds(group: str, version: str, resource: str) -> list:
        return [st.spec.kind for st in stores.values() if (st.spec.group, st.spec.version,
                                                             st.spec.resource) ==
                (group, version, resource)]

    def schemas(group: str, version: str, kind: str) -> Any:
        components = kind_schemas(group, version, kind)
        if components is None:
            return None
        return components, next(k for k, v in components.items()
                                if "x-kubernetes-group-version-kind" in v)

    policies = stores.get(("admissionregistration.k8s.io", "validatingadmissionpolicies"))
    if policies is None:
        return None
    controller = StatusController(policies, TypeChecker(kinds, schemas), clock)
    server.add_post_start_hook("validatingadmissionpolicy-status-controller", controller.start)
    return controller


def core_group_infos() -> list[APIGroupInfo]:
    """The built-in group-versions kube-apiserver installs (those kubetwist has so far)."""
    from kubetwist.apis.admissionregistration import register as admissionregistration
    from kubetwist.apis.apps import register as apps
    from kubetwist.apis.autoscaling import register as autoscaling
    from kubetwist.apis.batch import register as batch
    from kubetwist.apis.certificates import register as certificates
    from kubetwist.apis.coordination import register as coordination
    from kubetwist.apis.core import register as core
    from kubetwist.apis.discovery import register as discovery
    from kubetwist.apis.events import register as events
    from kubetwist.apis.flowcontrol import register as flowcontrol
    from kubetwist.apis.networking import register as networking
    from kubetwist.apis.node import register as node
    from kubetwist.apis.policy import register as policy
    from kubetwist.apis.rbac import register as rbac
    from kubetwist.apis.scheduling import register as scheduling
    from kubetwist.apis.storage import register as storage

    return [
        APIGroupInfo("", "v1", core.RESOURCES, core.STRATEGIES, CORE_KEY_ROOTS,
                     return_deleted=CORE_RETURN_DELETED,
                     store_classes={"namespaces": NamespaceStore}),
        APIGroupInfo(apps.GROUP, apps.VERSION, apps.RESOURCES, apps.STRATEGIES),
        APIGroupInfo(batch.GROUP, batch.VERSION, batch.RESOURCES, batch.STRATEGIES),
        APIGroupInfo(coordination.GROUP, coordination.VERSION, coordination.RESOURCES,
                     coordination.STRATEGIES),
        APIGroupInfo(rbac.GROUP, rbac.VERSION, rbac.RESOURCES, rbac.STRATEGIES),
        APIGroupInfo(storage.GROUP, storage.VERSION, storage.RESOURCES, storage.STRATEGIES,
                     return_deleted={"volumeattachments"}),
        APIGroupInfo(scheduling.GROUP, scheduling.VERSION, scheduling.RESOURCES,
                     scheduling.STRATEGIES),
        APIGroupInfo(node.GROUP, node.VERSION, node.RESOURCES, node.STRATEGIES),
        APIGroupInfo(networking.GROUP, networking.VERSION, networking.RESOURCES,
                     networking.STRATEGIES, {"ingresses": "/registry/ingress"}),
        # autoscaling/v1 first: the last installed version of a group is its preferred one
        APIGroupInfo(autoscaling.GROUP, "v1", autoscaling.V1_RESOURCES,
                     autoscaling.V1_STRATEGIES, converters=autoscaling.V1_CONVERTERS,
                     storage_versions={"horizontalpodautoscalers": (autoscaling.GROUP, "v2")}),
        APIGroupInfo(autoscaling.GROUP, autoscaling.VERSION, autoscaling.RESOURCES,
                     autoscaling.STRATEGIES),
        APIGroupInfo(events.GROUP, events.VERSION, events.RESOURCES, events.STRATEGIES,
                     {"events": "/registry/events"}, converters=events.CONVERTERS,
                     storage_versions={"events": ("", "v1")}),
        APIGroupInfo(policy.GROUP, policy.VERSION, policy.RESOURCES, policy.STRATEGIES),
        APIGroupInfo(discovery.GROUP, discovery.VERSION, discovery.RESOURCES,
                     discovery.STRATEGIES),
        APIGroupInfo(flowcontrol.GROUP, flowcontrol.VERSION, flowcontrol.RESOURCES,
                     flowcontrol.STRATEGIES),
        APIGroupInfo(certificates.GROUP, certificates.VERSION, certificates.RESOURCES,
                     certificates.STRATEGIES),
        APIGroupInfo(admissionregistration.GROUP, admissionregistration.VERSION,
                     admissionregistration.RESOURCES, admissionregistration.STRATEGIES),
    ]


class KubeAPIServer:
    """
    Builds the kube-apiserver L{GenericAPIServer} over C{storage}.

    @ivar stores: C{{(group, resource): Store}} of every installed resource.
    @ivar admission: the admission chain shared with the other servers.
    """

    def __init__(self, storage: Any, clock: Any, config: ControlPlaneConfig,
                 delegate: Optional[GenericAPIServer] = None,
                 extra_namespaced_stores: Any = None,
                 service_account_tokens: Any = None) -> None:
        """
        @param service_account_tokens: a L{ServiceAccountTokenConfig
            <kubetwist.registry.core.serviceaccount_token.ServiceAccountTokenConfig>}: serve
            C{serviceaccounts/<name>/token} and the OIDC discovery documents.
        """
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
        from kubetwist.apis.core.register import RESOURCES as core_resources
        from kubetwist.controlplane.componentstatuses import install_component_statuses

        for spec in core_resources:
            if spec.resource == "componentstatuses":
                install_component_statuses(self.server, spec, storage, self.admission, clock)
        self.token_rest = None
        if service_account_tokens is not None:
            from kubetwist.registry.core.serviceaccount_token import (
                install_service_account_tokens,
            )

            host = config.advertise_address
            external = f"[{host}]:{config.secure_port}" if ":" in host else \
                f"{host}:{config.secure_port}"
            self.token_rest = install_service_account_tokens(
                self.server, self.stores, service_account_tokens, clock)
            install_openid_routes(
                self.server, service_account_tokens.issuer,
                lambda: service_account_tokens.jwks_uri or
                f"https://{external}/openid/v1/jwks",
                service_account_tokens.verification_keys())
        namespaces = self.stores[("", "namespaces")]
        serviceaccounts = self.stores.get(("", "serviceaccounts"))
        names = config.admission_plugins
        if names is None:
            names = admission_registry.default_enabled_plugins()
        self.admission_context = admission_registry.PluginContext(
            self.stores, _list_items, configs=config.admission_configs or {}, storage=storage,
            clock=clock, add_post_start_hook=self.server.add_post_start_hook,
            resolver=ServiceResolver.from_stores(self.stores, _list_items),
            group_versions=self.server.all_group_versions)
        self.admission.plugins.extend(admission_registry.new_plugins(
            names, self.admission_context))
        self.policy_status = _policy_status_controller(self.server, self.stores, clock)
        # not a plugin: hands the requesting user to the CSR strategy's PrepareForCreate
        self.admission.internal.append(CSRRequestor())
        self.ips = IPAllocator(storage, config.service_cidr)
        self.ports = PortAllocator(storage, config.node_port_range)
        from kubetwist.apis.core.services import (
            default_service_on_read,
            default_service_registry_fields,
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
        from kubetwist.controlplane.garbagecollector import ServiceHook
        from kubetwist.storage.metrics import ObjectCounter

        self.object_counter = ObjectCounter(storage.count, clock)
        ServiceHook("storage-object-count-tracker-hook", self.object_counter,
                    clock).setServiceParent(self.server.hooks)
        self.server.add_post_start_hook("start-system-namespaces-controller",
                                        self.namespace_controller.resume)
        from kubetwist.registry.rbac.bootstrap import ensure_rbac_policy

        self.server.add_post_start_hook("rbac/bootstrap-roles",
                                        lambda: ensure_rbac_policy(self.stores))
        if config.cluster_authentication is not None:
            from kubetwist.controlplane import clusterauthenticationtrust as trust

            self.server.add_post_start_hook(trust.HOOK_NAME, lambda: trust.sync_configmap(
                self.stores[("", "configmaps")], namespaces, config.cluster_authentication))
        from kubetwist.controlplane.clusterroleaggregation import install_aggregation

        self.clusterrole_aggregation = install_aggregation(self.server, storage, self.stores,
                                                           clock)
        self.server.add_post_start_hook("scheduling/bootstrap-system-priority-classes",
                                        self.bootstrap_priority_classes)
        from kubetwist.controlplane.garbagecollector import install_collectors

        self.garbage_collector, self.pod_gc = install_collectors(
            self.server, storage, self.stores, self.extra_namespaced_stores, clock)
        from kubetwist.controlplane.garbagecollector import ServiceHook
        from kubetwist.controlplane.storageprotection import StorageProtection

        # the controllers that release StorageObjectInUseProtection's finalizers
        self.storage_protection = StorageProtection(
            self.stores[("", "persistentvolumeclaims")],
            self.stores.get(("", "persistentvolumes")), self.stores[("", "pods")], clock)
        ServiceHook("start-storage-protection-controller", self.storage_protection,
                    clock).setServiceParent(self.server.hooks)
        from kubetwist.controlplane.resourcequota import install_resource_quota_controller

        self.resource_quota_controller = install_resource_quota_controller(
            self.server, self.stores, self.extra_namespaced_stores, clock,
            admission_plugins=self.admission.plugins)
        self.server.add_post_start_hook("priority-and-fairness-config-producer",
                                        self.bootstrap_flowcontrol)
        self.apf_status = None
        flow_schemas = self.stores.get(("flowcontrol.apiserver.k8s.io", "flowschemas"))
        if flow_schemas is not None and config.enable_priority_and_fairness:
            from kubetwist.apis.flowcontrol.controller import FlowSchemaStatusController
            from kubetwist.apis.flowcontrol.register import STRATEGIES as fc_strategies

            self.apf_status = FlowSchemaStatusController(
                flow_schemas, flow_schemas.for_subresource(fc_strategies["flowschemas/status"]),
                self.stores[("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations")],
                clock)
            self.server.add_post_start_hook("priority-and-fairness-config-consumer",
                                            self.apf_status.start)
            # upstream's starts the watermark maintenance (metrics kubetwist does not keep)
            self.server.add_post_start_hook("priority-and-fairness-filter", _nothing)

    def namespaced_stores(self) -> list[Store]:
        """Every namespaced Store of the chain, events last (as upstream deletes them last)."""
        own = [s for (g, r), s in self.stores.items() if s.spec.namespaced]
        own.sort(key=lambda s: (s.spec.resource == "events", s.spec.resource))
        return own + list(self.extra_namespaced_stores())

    async def bootstrap_priority_classes(self) -> None:
        """
        Upstream C{AddSystemPriorityClasses} (post-start hook
        C{scheduling/bootstrap-system-priority-classes}): create C{system-node-critical} and
        C{system-cluster-critical} unless they exist; existing ones are left as they are.
        """
        from kubetwist.apis.scheduling.priorityclasses import system_priority_classes

        store = self.stores.get(("scheduling.k8s.io", "priorityclasses"))
        if store is None:
            return
        for pc in system_priority_classes():
            try:
                await store.create("", pc)
            except errors.StatusError as e:
                if e.code != 409:
                    raise

    async def bootstrap_flowcontrol(self) -> None:
        """
        Upstream C{ensureAPFBootstrapConfiguration} (post-start hook
        C{priority-and-fairness-config-producer}): one pass of
        L{kubetwist.apis.flowcontrol.ensurer.ensure} (retried by the hook on failure).
        """
        from kubetwist.apis.flowcontrol.ensurer import ensure

        group = "flowcontrol.apiserver.k8s.io"
        flow_schemas = self.stores.get((group, "flowschemas"))
        priority_levels = self.stores.get((group, "prioritylevelconfigurations"))
        if flow_schemas is None or priority_levels is None:
            return
        await ensure(flow_schemas, priority_levels)

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
        if (self.config.advertise_address.startswith("127.")
                or self.config.advertise_address == "::1"):
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
