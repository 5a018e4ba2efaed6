# -*- test-case-name: tests.apis.test_core_services -*-
"""
Small validators shared by the core kinds: upstream C{k8s.io/kubernetes/pkg/apis/core/validation}
(C{ValidateDNS1123Label}, C{ValidateQualifiedName}, C{ValidatePortNumOrName},
C{ValidateNonSpecialIP}, the name functions of each kind) plus the printing of bad values that
upstream formats with Go's C{%#v} (typed slices, structs).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kubetwist.apimachinery.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_port_name,
    is_valid_port_num,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
)
from kubetwist.runtime import gofmt
from kubetwist.runtime.field import (
    FieldError,
    GoValueError,
    Path,
    internal,
    invalid,
    invalid_go,
)

__all__ = [
    "SUPPORTED_PORT_PROTOCOLS",
    "GoValueError",
    "go_quote",
    "go_string_slice",
    "invalid_go",
    "parse_ip",
    "validate_config_map_name",
    "validate_dns1123_label",
    "validate_dns1123_subdomain",
    "validate_endpoints_name",
    "validate_namespace_name",
    "validate_non_special_ip",
    "validate_port_num_or_name",
    "validate_qualified_name",
    "validate_secret_name",
    "validate_service_account_name",
    "validate_service_name",
]

#: Upstream C{supportedPortProtocols}, in the sorted order of C{sets.List}.
SUPPORTED_PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"]

#: Upstream name functions (C{ValidateServiceName} = DNS-1035 label, ...).
validate_service_name = name_is_dns1035_label
validate_secret_name = name_is_dns_subdomain
validate_config_map_name = name_is_dns_subdomain
validate_endpoints_name = name_is_dns_subdomain
validate_namespace_name = name_is_dns_label
validate_service_account_name = name_is_dns_subdomain


#: Go's C{%q} of a string and C{%#v} of a string slice (L{kubetwist.runtime.gofmt}).
go_quote = gofmt.quote
go_string_slice = gofmt.string_slice


def validate_dns1123_label(value: str, path: Path | str) -> list[FieldError]:
    """Upstream C{ValidateDNS1123Label}: one C{Invalid} per message."""
    return [invalid(path, value, m) for m in is_dns1123_label(value)]


def validate_dns1123_subdomain(value: str, path: Path | str) -> list[FieldError]:
    """Upstream C{ValidateDNS1123Subdomain}."""
    return [invalid(path, value, m) for m in is_dns1123_subdomain(value)]


def validate_qualified_name(value: str, path: Path | str) -> list[FieldError]:
    """Upstream C{ValidateQualifiedName}."""
    return [invalid(path, value, m) for m in is_qualified_name(value)]


def validate_port_num_or_name(port: Any, path: Path | str) -> list[FieldError]:
    """
    Upstream C{ValidatePortNumOrName} of an int-or-string: a number must be 1-65535, a string
    a valid port name (C{IsValidPortName}).
    """
    if isinstance(port, bool) or not isinstance(port, (int, str)):
        return [internal(path, f"unknown type: {port!r}")]
    if isinstance(port, int):
        return [invalid(path, port, m) for m in is_valid_port_num(port)]
    return [invalid(path, port, m) for m in is_valid_port_name(port)]


def parse_ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """C{netutils.ParseIPSloppy}: IPv4 (leading zeros allowed) or IPv6, else C{None}."""
    from kubetwist.apimachinery.validation import _parse_ip_sloppy

    return _parse_ip_sloppy(value or "")


def validate_non_special_ip(value: str, path: Path | str) -> list[FieldError]:
    """
    Upstream C{ValidateNonSpecialIP}: not unspecified, loopback, link-local unicast or
    link-local multicast (checked on the IPv4 form of IPv4-mapped addresses, as Go does).
    """
    ip = parse_ip(value)
    if ip is None:
        return [invalid(path, value, "must be a valid IP address")]
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    errs: list[FieldError] = []
    if ip.is_unspecified:
        errs.append(invalid(path, value, f"may not be unspecified ({value})"))
    if ip.is_loopback:
        errs.append(invalid(path, value, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
    if _is_link_local_unicast(ip):
        errs.append(
            invalid(path, value, "may not be in the link-local range (169.254.0.0/16, fe80::/10)")
        )
    if _is_link_local_multicast(ip):
        errs.append(
            invalid(
                path,
                value,
                "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
            )
        )
    return errs


def _is_link_local_unicast(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Go's C{IsLinkLocalUnicast}: 169.254.0.0/16 or fe80::/10."""
    if isinstance(ip, ipaddress.IPv4Address):
        return ip in ipaddress.IPv4Network("169.254.0.0/16")
    return ip in ipaddress.IPv6Network("fe80::/10")


def _is_link_local_multicast(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Go's C{IsLinkLocalMulticast}: 224.0.0.0/24, or ffX2::/16 (link-local scope)."""
    if isinstance(ip, ipaddress.IPv4Address):
        return ip in ipaddress.IPv4Network("224.0.0.0/24")
    packed = ip.packed
    return packed[0] == 0xFF and packed[1] & 0x0F == 0x02
