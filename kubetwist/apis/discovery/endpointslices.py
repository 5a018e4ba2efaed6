# -*- test-case-name: tests.apis.test_discovery -*-
"""
discovery.k8s.io/v1 EndpointSlices: defaulting (upstream C{pkg/apis/discovery/v1/defaults.go}
C{SetDefaults_EndpointPort}), validation (C{pkg/apis/discovery/validation}:
C{ValidateEndpointSliceCreate}, C{ValidateEndpointSliceUpdate}) and the registry strategy
(C{pkg/registry/discovery/endpointslice/strategy.go}: generation, C{dropTopologyOnV1}).
"""

from __future__ import annotations

from typing import Any

from kubetwist.apimachinery.validation import (
    is_dns1123_label,
    is_fully_qualified_domain_name,
    is_valid_ipv4_address,
    is_valid_ipv6_address,
    is_valid_label_value,
    name_is_dns_subdomain,
    validate_immutable_field,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.common import validate_non_special_ip, validate_qualified_name
from kubetwist.runtime.field import (
    FieldError,
    Path,
    duplicate,
    invalid,
    not_supported,
    required,
    too_many,
)

__all__ = [
    "default_endpoint_slice",
    "prepare_endpoint_slice_for_create",
    "prepare_endpoint_slice_for_update",
    "validate_endpoint_slice",
    "validate_endpoint_slice_update",
]

_ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"]
_PROTOCOLS = ["SCTP", "TCP", "UDP"]
#: Upstream C{maxTopologyLabels}, C{maxAddresses}, C{maxPorts}, C{maxEndpoints},
#: C{maxZoneHints}.
_MAX_TOPOLOGY_LABELS = 16
_MAX_ADDRESSES = 100
_MAX_PORTS = 20000
_MAX_ENDPOINTS = 1000
_MAX_ZONE_HINTS = 8
_LABEL_HOSTNAME = "kubernetes.io/hostname"


def _d(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


def default_endpoint_slice(eps: dict) -> None:
    """
    Upstream C{SetDefaults_EndpointPort}: each port's C{name} C{""} and C{protocol} C{TCP}
    when unset.  C{endpoints} always prints (C{null} when absent), as Go writes it.
    """
    for port in eps.get("ports") or []:
        if isinstance(port, dict):
            if port.get("name") is None:
                port["name"] = ""
            if port.get("protocol") is None:
                port["protocol"] = "TCP"
    eps.setdefault("endpoints", None)


def _drop_topology(new: dict, old: dict | None) -> None:
    """
    Upstream C{dropTopologyOnV1}: v1 writes drop C{deprecatedTopology} (unless the endpoints
    are unchanged); a C{kubernetes.io/hostname} the stored slice already had becomes
    C{nodeName} when that is unset and valid.
    """
    if old is not None and new.get("endpoints") == old.get("endpoints"):
        return
    prev = set()
    for ep in (old or {}).get("endpoints") or []:
        host = _d(_d(ep).get("deprecatedTopology")).get(_LABEL_HOSTNAME)
        if host:
            prev.add(host)
    for ep in new.get("endpoints") or []:
        if not isinstance(ep, dict):
            continue
        topo = _d(ep.get("deprecatedTopology"))
        host = topo.get(_LABEL_HOSTNAME)
        if (ep.get("nodeName") is None and host is not None and host in prev
                and not name_is_dns_subdomain(host, False)):
            ep["nodeName"] = host
        ep.pop("deprecatedTopology", None)


def prepare_endpoint_slice_for_create(eps: dict) -> None:
    """Upstream C{endpointSliceStrategy.PrepareForCreate}: generation 1, v1 topology drop."""
    _meta(eps)["generation"] = 1
    _drop_topology(eps, None)


def prepare_endpoint_slice_for_update(new: dict, old: dict) -> None:
    """
    Upstream C{PrepareForUpdate}: generation + 1 when C{endpoints}, C{ports} or
    C{addressType} changed (anything but metadata), and the v1 topology drop.
    """
    gen = _d(old.get("metadata")).get("generation") or 0
    changed = any(new.get(k) != old.get(k) for k in ("endpoints", "ports", "addressType"))
    _meta(new)["generation"] = gen + 1 if changed else gen
    _drop_topology(new, old)


def _validate_hints(hints: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateHints}: at most 8 zones, unique, label values."""
    zones = hints.get("forZones") or []
    fz = path.child("forZones")
    if len(zones) > _MAX_ZONE_HINTS:
        return [too_many(fz, len(zones), _MAX_ZONE_HINTS)]
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, zone in enumerate(zones):
        name = _d(zone).get("name") or ""
        zpath = fz.index(i).child("name")
        if name in seen:
            errs.append(duplicate(zpath, name))
        else:
            seen.add(name)
        errs.extend(invalid(zpath, name, m) for m in is_valid_label_value(name))
    return errs


def _validate_endpoints(endpoints: list, addr_type: str, path: Path) -> list[FieldError]:
    """Upstream C{validateEndpoints}."""
    if len(endpoints) > _MAX_ENDPOINTS:
        return [too_many(path, len(endpoints), _MAX_ENDPOINTS)]
    errs: list[FieldError] = []
    for i, ep in enumerate(endpoints):
        ep = _d(ep)
        ipath = path.index(i)
        apath = ipath.child("addresses")
        addresses = ep.get("addresses") or []
        if not addresses:
            errs.append(required(apath, "must contain at least 1 address"))
        elif len(addresses) > _MAX_ADDRESSES:
            errs.append(too_many(apath, len(addresses), _MAX_ADDRESSES))
        for j, address in enumerate(addresses):
            a = apath.index(j)
            if addr_type == "IPv4":
                errs.extend(invalid(a, address, m) for m in is_valid_ipv4_address(address))
                errs.extend(validate_non_special_ip(address, a))
            elif addr_type == "IPv6":
                errs.extend(invalid(a, address, m) for m in is_valid_ipv6_address(address))
                errs.extend(validate_non_special_ip(address, a))
            elif addr_type == "FQDN":
                errs.extend(is_fully_qualified_domain_name(a, address))
        if ep.get("nodeName") is not None:
            errs.extend(invalid(ipath.child("nodeName"), ep["nodeName"], m)
                        for m in name_is_dns_subdomain(ep["nodeName"], False))
        topo = ep.get("deprecatedTopology")
        tpath = ipath.child("deprecatedTopology")
        if isinstance(topo, dict):
            if len(topo) > _MAX_TOPOLOGY_LABELS:
                errs.append(too_many(tpath, len(topo), _MAX_TOPOLOGY_LABELS))
            errs.extend(validate_labels(topo, tpath))
        if ep.get("hostname") is not None:
            errs.extend(invalid(ipath.child("hostname"), ep["hostname"], m)
                        for m in is_dns1123_label(ep["hostname"]))
        if ep.get("hints") is not None:
            errs.extend(_validate_hints(_d(ep["hints"]), ipath.child("hints")))
    return errs


def _validate_ports(ports: list, path: Path) -> list[FieldError]:
    """Upstream C{validatePorts}: DNS-1123 label names, unique; a protocol; appProtocol."""
    if len(ports) > _MAX_PORTS:
        return [too_many(path, len(ports), _MAX_PORTS)]
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        port = _d(port)
        ipath = path.index(i)
        name = port.get("name") or ""
        if name:
            errs.extend(invalid(ipath.child("name"), name, m) for m in is_dns1123_label(name))
        if name in names:
            errs.append(duplicate(ipath.child("name"), name))
        else:
            names.add(name)
        proto = port.get("protocol")
        if proto is None:
            errs.append(required(ipath.child("protocol")))
        elif proto not in _PROTOCOLS:
            errs.append(not_supported(ipath.child("protocol"), proto, _PROTOCOLS))
        if port.get("appProtocol") is not None:
            errs.extend(validate_qualified_name(port["appProtocol"], ipath.child("appProtocol")))
    return errs


def validate_endpoint_slice(eps: dict) -> list[FieldError]:
    """
    Upstream C{ValidateEndpointSlice}: ObjectMeta (DNS subdomain), C{addressType} required
    and known, the endpoints (addresses of that type, node name, topology, hostname, hints)
    and the ports.
    """
    errs = validate_object_meta(_d(eps.get("metadata")), True, name_is_dns_subdomain,
                                Path("metadata"))
    addr_type = eps.get("addressType") or ""
    if not addr_type:
        errs.append(required(Path("addressType")))
    elif addr_type not in _ADDRESS_TYPES:
        errs.append(not_supported(Path("addressType"), addr_type, _ADDRESS_TYPES))
    errs.extend(_validate_endpoints(eps.get("endpoints") or [], addr_type, Path("endpoints")))
    errs.extend(_validate_ports(eps.get("ports") or [], Path("ports")))
    return errs


def validate_endpoint_slice_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{endpointSliceStrategy.ValidateUpdate}: L{validate_endpoint_slice},
    C{addressType} immutable, then the metadata update rules.
    """
    errs = validate_endpoint_slice(new)
    errs.extend(validate_immutable_field(new.get("addressType") or "",
                                         old.get("addressType") or "", Path("addressType")))
    errs.extend(validate_object_meta_update(_d(new.get("metadata")), _d(old.get("metadata")),
                                            Path("metadata")))
    return errs
