# -*- test-case-name: tests.apis.test_discovery -*-
"""
The discovery.k8s.io/v1 group-version: upstream C{pkg/registry/discovery/rest}
(endpointslices) and C{printEndpointSlice} of
C{pkg/printers/internalversion/printers.go} (column texts from discovery/v1beta1's
C{SwaggerDoc()}, as upstream uses).
"""

from __future__ import annotations

from kubetwist.apis.discovery import endpointslices as eps
from kubetwist.apis.printers import age_column, column, name_column, obj_age, obj_name
from kubetwist.registry.rest import ResourceSpec, Strategy, TableConvertor

__all__ = ["ENDPOINT_SLICE_TABLE", "GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = "discovery.k8s.io"
VERSION = "v1"

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "endpointslices", "EndpointSlice", "endpointslice"),
]

_DOCS = {
    "addressType": "addressType specifies the type of address carried by this EndpointSlice. "
    "All addresses in this slice must be the same type. This field is immutable after "
    "creation. The following address types are currently supported: * IPv4: Represents an "
    "IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified "
    "Domain Name.",
    "ports": "ports specifies the list of network ports exposed by each endpoint in this "
    "slice. Each port must have a unique name. When ports is empty, it indicates that there "
    "are no defined ports. When a port is defined with a nil port value, it indicates \"all "
    "ports\". Each slice may include a maximum of 100 ports.",
    "endpoints": "endpoints is a list of unique endpoints in this slice. Each slice may "
    "include a maximum of 1000 endpoints.",
}


def _list_with_more(items: list[str], count: int, limit: int = 3) -> str:
    """Upstream C{listWithMoreString}: C{a,b,c + N more...}, or C{<unset>} when empty."""
    text = ",".join(items[:limit])
    if count > limit:
        return f"{text} + {count - limit} more..."
    return text or "<unset>"


def format_ports(ports: list | None) -> str:
    """Upstream C{formatDiscoveryPorts}: port numbers (the name, or C{*}, when unset)."""
    cells = []
    for port in ports or []:
        port = port or {}
        if port.get("port") is not None:
            cells.append(str(port["port"]))
        elif port.get("name") is not None:
            cells.append(port["name"])
        else:
            cells.append("*")
    return _list_with_more(cells, len(cells))


def format_endpoints(endpoints: list | None) -> str:
    """Upstream C{formatDiscoveryEndpoints}: every endpoint's addresses, in order."""
    addresses = [a for ep in endpoints or [] for a in (ep or {}).get("addresses") or []]
    return _list_with_more(addresses, len(addresses))


ENDPOINT_SLICE_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("AddressType", "string", _DOCS["addressType"]),
        column("Ports", "string", _DOCS["ports"]),
        column("Endpoints", "string", _DOCS["endpoints"]),
        age_column(),
    ],
    row=lambda obj: [obj_name(obj), obj.get("addressType") or "", format_ports(obj.get("ports")),
                     format_endpoints(obj.get("endpoints")), obj_age(obj)],
)

STRATEGIES: dict[str, Strategy] = {
    "endpointslices": Strategy(kind="EndpointSlice", group=GROUP,
                               default=eps.default_endpoint_slice,
                               prepare_for_create=eps.prepare_endpoint_slice_for_create,
                               prepare_for_update=eps.prepare_endpoint_slice_for_update,
                               validate=eps.validate_endpoint_slice,
                               validate_update=eps.validate_endpoint_slice_update,
                               table=ENDPOINT_SLICE_TABLE),
}
