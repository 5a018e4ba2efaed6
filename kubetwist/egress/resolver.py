# -*- test-case-name: tests.egress.test_resolver -*-
"""
Service references to addresses: upstream C{k8s.io/apiserver/pkg/util/proxy}
(C{ResolveEndpoint}, C{ResolveCluster}, C{findServicePort}) and the webhook
C{ServiceResolver}.

A reference is C{(namespace, name, port)}, C{port} being the Service's port number (upstream
C{ServiceReference.port}, default 443).  L{ServiceResolver.resolve} answers an
L{Address}, or fails with the L{StatusError <kubetwist.runtime.errors.StatusError>} upstream
returns: 404 NotFound (C{services "x" not found}) for a missing Service, 503
ServiceUnavailable (C{no service port 443 found for service "x"},
C{no endpoints available for service "x"}) when nothing can serve it, 500 for an unsupported
service type.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Optional

from kubetwist.runtime import errors

__all__ = ["Address", "ServiceResolver"]

#: C{(namespace, name) -> awaitable of object or None}.
Getter = Callable[[str, str], Awaitable[Optional[dict]]]
#: C{(namespace, service name) -> awaitable of [EndpointSlice]}.
SliceLister = Callable[[str, str], Awaitable[list]]

SERVICE_NAME_LABEL = "kubernetes.io/service-name"


@dataclass(frozen=True)
class Address:
    """
    Where to send traffic for a service reference.

    @ivar host: an IP address (or, for an C{ExternalName} service, a DNS name).
    @ivar port: the TCP port.
    @ivar server_name: the name the server's certificate must carry
        (C{<name>.<namespace>.svc}, as upstream's webhook and aggregator clients verify).
    """

    host: str
    port: int
    server_name: str

    @property
    def netloc(self) -> str:
        """C{host:port}, an IPv6 host in brackets."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def find_service_port(service: dict, port: int) -> dict:
    """
    Upstream C{findServicePort}: the C{spec.ports} entry whose C{port} is C{port}.

    @raise StatusError: 503 ServiceUnavailable, C{no service port P found for service "x"}.
    """
    for p in (service.get("spec") or {}).get("ports") or []:
        if p.get("port") == port:
            return p
    name = (service.get("metadata") or {}).get("name", "")
    raise errors.new_service_unavailable(f'no service port {port} found for service "{name}"')


def _ready(endpoint: dict) -> bool:
    ready = (endpoint.get("conditions") or {}).get("ready")
    return ready is None or bool(ready)


def endpoint_from_slices(service_name: str, slices: list, port_name: str,
                         preferred_family: str = "", rng: Any = random) -> tuple[str, int]:
    """
    Upstream C{RandomEndpoint}: a ready endpoint's first address and the slice's port of
    C{port_name}, picked at random, slices of the C{preferred_family} address type first.

    @raise StatusError: 503, C{no endpoints available for service "x"}.
    """
    order = list(slices)
    rng.shuffle(order)
    order.sort(key=lambda s: s.get("addressType") != preferred_family)
    for s in order:
        for p in s.get("ports") or []:
            if (p.get("name") or "") != port_name or p.get("port") is None:
                continue
            endpoints = [e for e in s.get("endpoints") or [] if _ready(e) and e.get("addresses")]
            if endpoints:
                return rng.choice(endpoints)["addresses"][0], int(p["port"])
    raise errors.new_service_unavailable(
        f'no endpoints available for service "{service_name}"')


def endpoint_from_endpoints(service_name: str, endpoints: Optional[dict], port_name: str,
                            rng: Any = random) -> tuple[str, int]:
    """
    v1.32's C{ResolveEndpoint} over a v1 C{Endpoints} object: a random ready address of a
    subset that has the port named C{port_name}.

    @raise StatusError: 503, C{no endpoints available for service "x"}.
    """
    for subset in (endpoints or {}).get("subsets") or []:
        for p in subset.get("ports") or []:
            if (p.get("name") or "") == port_name and subset.get("addresses"):
                return rng.choice(subset["addresses"])["ip"], int(p["port"])
    raise errors.new_service_unavailable(
        f'no endpoints available for service "{service_name}"')


class ServiceResolver:
    """
    Resolves C{service} references from the API server's own stored Services, EndpointSlices
    and Endpoints.

    @param get_service: C{(namespace, name) -> awaitable of Service dict} (failing with a
        404 StatusError, or answering C{None}, when there is none).
    @param list_slices: C{(namespace, service name) -> awaitable of [EndpointSlice dict]}
        labelled C{kubernetes.io/service-name=<name>}.
    @param get_endpoints: C{(namespace, name) -> awaitable of Endpoints dict or None}: read
        when the Service has no EndpointSlice (Endpoints written by hand or by a client that
        writes only those, as v1.32's resolver reads).
    @param routing: upstream C{--enable-aggregator-routing}: resolve to an endpoint
        (C{True}, kubetwist's default) or to the Service's ClusterIP.
    """

    def __init__(self, get_service: Getter, list_slices: Optional[SliceLister] = None,
                 get_endpoints: Optional[Getter] = None, routing: bool = True,
                 rng: Any = random) -> None:
        self.get_service = get_service
        self.list_slices = list_slices
        self.get_endpoints = get_endpoints
        self.routing = routing
        self.rng = rng

    @classmethod
    def from_stores(cls, stores: Any, list_items: Callable[[Any, str], Awaitable[list]],
                    routing: bool = True) -> "ServiceResolver":
        """
        A resolver over the registry's stores: C{stores} maps C{(group, resource)} to objects
        with C{async get(namespace, name)}; C{list_items(store, namespace)} lists a store's
        objects in one namespace (each resolution reads the Service's namespace only).
        """
        services = stores[("", "services")]
        slices = stores.get(("discovery.k8s.io", "endpointslices"))
        endpoints = stores.get(("", "endpoints"))

        async def get_service(namespace: str, name: str) -> Optional[dict]:
            return await services.get(namespace, name)

        async def list_slices(namespace: str, name: str) -> list:
            if slices is None:
                return []
            return [s for s in await list_items(slices, namespace)
                    if ((s.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL)
                    == name]

        async def get_endpoints(namespace: str, name: str) -> Optional[dict]:
            if endpoints is None:
                return None
            try:
                return await endpoints.get(namespace, name)
            except errors.StatusError as e:
                if e.code == 404:
                    return None
                raise

        return cls(get_service, list_slices, get_endpoints, routing)

    async def _service(self, namespace: str, name: str) -> dict:
        svc = await self.get_service(namespace, name)
        if svc is None:
            raise errors.new_not_found("", "services", name)
        return svc

    async def resolve(self, namespace: str, name: str, port: int = 443) -> Address:
        """
        The address for the reference (see the module docstring for the failures).

        @raise StatusError: 404 (no Service), 503 (no such port, no ready endpoint), 500
            (an unsupported service type, or ClusterIP C{None} without routing).
        """
        svc = await self._service(namespace, name)
        spec = svc.get("spec") or {}
        kind = spec.get("type") or "ClusterIP"
        server_name = f"{name}.{namespace}.svc"
        if not self.routing:
            return self._cluster(svc, kind, port, server_name)
        if kind not in ("ClusterIP", "LoadBalancer", "NodePort"):
            raise errors.new_internal_error(f'unsupported service type "{kind}"')
        svc_port = find_service_port(svc, port)
        port_name = svc_port.get("name") or ""
        families = spec.get("ipFamilies") or []
        slices = await self.list_slices(namespace, name) if self.list_slices else []
        if slices:
            host, p = endpoint_from_slices(name, slices, port_name,
                                           families[0] if families else "", self.rng)
        else:
            eps = await self.get_endpoints(namespace, name) if self.get_endpoints else None
            host, p = endpoint_from_endpoints(name, eps, port_name, self.rng)
        return Address(host, p, server_name)

    def _cluster(self, svc: dict, kind: str, port: int, server_name: str) -> Address:
        """Upstream C{ResolveCluster}."""
        spec = svc.get("spec") or {}
        if kind == "ClusterIP" and spec.get("clusterIP") == "None":
            raise errors.new_internal_error('cannot route to service with ClusterIP "None"')
        if kind in ("ClusterIP", "LoadBalancer", "NodePort"):
            p = find_service_port(svc, port)
            return Address(spec.get("clusterIP", ""), int(p["port"]), server_name)
        if kind == "ExternalName":
            return Address(spec.get("externalName", ""), port, server_name)
        raise errors.new_internal_error(f'unsupported service type "{kind}"')
