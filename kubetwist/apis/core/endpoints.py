# -*- test-case-name: tests.apis.test_core_events -*-
"""
Endpoints: upstream C{pkg/apis/core/v1/defaults.go} (C{SetDefaults_Endpoints}),
C{pkg/apis/core/validation} (C{ValidateEndpoints*}) and
C{pkg/registry/core/endpoint/strategy.go}.  Subsets are stored as sent (no repacking).
"""

from __future__ import annotations

from kubetwist.apimachinery.validation import (
    is_valid_port_num,
    name_is_dns_subdomain,
    validate_ip,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.common import (
    SUPPORTED_PORT_PROTOCOLS,
    validate_dns1123_label,
    validate_endpoints_name,
    validate_non_special_ip,
    validate_qualified_name,
)
from kubetwist.apis.core.printers import ENDPOINTS_TABLE
from kubetwist.registry.rest import Strategy
from kubetwist.runtime.field import FieldError, Path, invalid, not_supported, required

__all__ = [
    "ENDPOINTS_STRATEGY",
    "default_endpoints",
    "validate_endpoints",
    "validate_endpoints_update",
]


def default_endpoints(ep: dict) -> None:
    """Upstream C{SetDefaults_Endpoints}: each port's C{protocol} defaults to C{TCP}."""
    for subset in ep.get("subsets") or []:
        for port in (subset or {}).get("ports") or []:
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"


def _validate_address(address: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateEndpointAddress}."""
    ip = address.get("ip") or ""
    errs = validate_ip(path.child("ip"), ip)
    hostname = address.get("hostname") or ""
    if hostname:
        errs.extend(validate_dns1123_label(hostname, path.child("hostname")))
    node_name = address.get("nodeName")
    if node_name is not None:
        errs.extend(
            invalid(path.child("nodeName"), node_name, m)
            for m in name_is_dns_subdomain(node_name, False)
        )
    errs.extend(validate_non_special_ip(ip, path.child("ip")))
    return errs


def _validate_port(port: dict, require_name: bool, path: Path) -> list[FieldError]:
    """Upstream C{validateEndpointPort}."""
    errs: list[FieldError] = []
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(required(path.child("name")))
    elif name:
        errs.extend(validate_dns1123_label(name, path.child("name")))
    number = port.get("port") or 0
    errs.extend(invalid(path.child("port"), number, m) for m in is_valid_port_num(number))
    protocol = port.get("protocol") or ""
    if not protocol:
        errs.append(required(path.child("protocol")))
    elif protocol not in SUPPORTED_PORT_PROTOCOLS:
        errs.append(not_supported(path.child("protocol"), protocol, SUPPORTED_PORT_PROTOCOLS))
    if port.get("appProtocol") is not None:
        errs.extend(validate_qualified_name(port["appProtocol"], path.child("appProtocol")))
    return errs


def _validate_subsets(subsets: list, path: Path) -> list[FieldError]:
    """Upstream C{validateEndpointSubsets}."""
    errs: list[FieldError] = []
    for i, subset in enumerate(subsets):
        subset = subset or {}
        idx = path.index(i)
        addresses = subset.get("addresses") or []
        not_ready = subset.get("notReadyAddresses") or []
        if not addresses and not not_ready:
            errs.append(required(idx, "must specify `addresses` or `notReadyAddresses`"))
        for j, address in enumerate(addresses):
            errs.extend(_validate_address(address or {}, idx.child("addresses").index(j)))
        for j, address in enumerate(not_ready):
            errs.extend(_validate_address(address or {}, idx.child("notReadyAddresses").index(j)))
        ports = subset.get("ports") or []
        for j, port in enumerate(ports):
            errs.extend(_validate_port(port or {}, len(ports) > 1, idx.child("ports").index(j)))
    return errs


def validate_endpoints(ep: dict) -> list[FieldError]:
    """Upstream C{ValidateEndpoints}: ObjectMeta (DNS subdomain name), then every subset."""
    errs = validate_object_meta(
        ep.get("metadata") or {}, True, validate_endpoints_name, Path("metadata")
    )
    errs.extend(_validate_subsets(ep.get("subsets") or [], Path("subsets")))
    return errs


def validate_endpoints_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateEndpointsUpdate}: ObjectMeta update rules, then L{validate_endpoints}."""
    errs = validate_object_meta_update(
        new.get("metadata") or {}, old.get("metadata") or {}, Path("metadata")
    )
    errs.extend(validate_endpoints(new))
    return errs


ENDPOINTS_STRATEGY = Strategy(
    kind="Endpoints",
    default=default_endpoints,
    validate=validate_endpoints,
    validate_update=validate_endpoints_update,
    table=ENDPOINTS_TABLE,
    allow_create_on_update=True,
    allow_unconditional_update=True,
)
