# -*- test-case-name: tests.apis.test_core_services -*-
"""
Services: upstream C{pkg/apis/core/v1/defaults.go} (C{SetDefaults_Service}),
C{pkg/apis/core/validation} (C{ValidateService*}, C{ValidateServiceClusterIPsRelatedFields},
C{ValidateLoadBalancerStatus}), C{pkg/api/service/warnings.go},
C{pkg/registry/core/service/strategy.go} (C{patchAllocatedValues}, C{NormalizeClusterIPs},
C{dropTypeDependentFields}, status strategy) and the IP-family part of
C{pkg/registry/core/service/storage/alloc.go} (C{initIPFamilyFields}).

ClusterIP and NodePort allocation are not here: the service registry does them after
L{default_service_registry_fields}.
"""

from __future__ import annotations

import copy
import ipaddress
from collections.abc import Sequence
from typing import Any

from kubetwist.apimachinery.validation import (
    is_dns1123_subdomain,
    is_valid_port_num,
    validate_cidr,
    validate_ip,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.common import (
    SUPPORTED_PORT_PROTOCOLS,
    GoValueError,
    go_quote,
    go_string_slice,
    invalid_go,
    parse_ip,
    validate_dns1123_label,
    validate_dns1123_subdomain,
    validate_non_special_ip,
    validate_port_num_or_name,
    validate_qualified_name,
    validate_service_name,
)
from kubetwist.apis.core.printers import SERVICE_TABLE
from kubetwist.registry.rest import Strategy
from kubetwist.runtime.field import (
    FieldError,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)

__all__ = [
    "SERVICE_STATUS_STRATEGY",
    "SERVICE_STRATEGY",
    "default_service",
    "default_service_on_read",
    "default_service_registry_fields",
    "drop_type_dependent_fields",
    "externally_accessible",
    "init_ip_family_fields",
    "needs_health_check",
    "normalize_cluster_ips",
    "patch_allocated_values",
    "prepare_service_for_create",
    "prepare_service_for_update",
    "service_warnings",
    "validate_service",
    "validate_service_cluster_ips_related_fields",
    "validate_service_status_update",
    "validate_service_update",
]

CLUSTER_IP = "ClusterIP"
NODE_PORT = "NodePort"
LOAD_BALANCER = "LoadBalancer"
EXTERNAL_NAME = "ExternalName"
#: Upstream C{sets.List(supportedServiceType)} (sorted).
SUPPORTED_SERVICE_TYPES = [CLUSTER_IP, EXTERNAL_NAME, LOAD_BALANCER, NODE_PORT]
SUPPORTED_SESSION_AFFINITY = ["ClientIP", "None"]
SUPPORTED_INTERNAL_TRAFFIC_POLICY = ["Cluster", "Local"]
SUPPORTED_EXTERNAL_TRAFFIC_POLICY = ["Cluster", "Local"]
SUPPORTED_IP_FAMILIES = ["IPv4", "IPv6"]
SUPPORTED_IP_FAMILY_POLICIES = ["PreferDualStack", "RequireDualStack", "SingleStack"]
SUPPORTED_LB_IP_MODES = ["Proxy", "VIP"]
CLUSTER_IP_NONE = "None"
#: Upstream C{v1.DefaultClientIPServiceAffinitySeconds} (3 hours) and the maximum (1 day).
DEFAULT_CLIENT_IP_AFFINITY_SECONDS = 10800
MAX_CLIENT_IP_AFFINITY_SECONDS = 86400
KUBELET_PORT = 10250
ANNOTATION_TOPOLOGY_AWARE_HINTS = "service.kubernetes.io/topology-aware-hints"
ANNOTATION_TOPOLOGY_MODE = "service.kubernetes.io/topology-mode"
ANNOTATION_LB_SOURCE_RANGES = "service.beta.kubernetes.io/load-balancer-source-ranges"

# ServiceSpec / ServicePort fields tagged omitempty whose zero value never reaches the wire.
_SPEC_OMIT_ZERO = {
    "clusterIP": "",
    "type": "",
    "externalName": "",
    "loadBalancerIP": "",
    "sessionAffinity": "",
    "externalTrafficPolicy": "",
    "healthCheckNodePort": 0,
    "publishNotReadyAddresses": False,
}
_SPEC_OMIT_EMPTY = (
    "ports",
    "selector",
    "clusterIPs",
    "externalIPs",
    "ipFamilies",
    "loadBalancerSourceRanges",
)
_PORT_OMIT_ZERO = {"name": "", "protocol": "", "nodePort": 0}


def _spec(svc: dict) -> dict:
    spec = svc.get("spec")
    if not isinstance(spec, dict):
        spec = svc["spec"] = {}
    return spec


def _prune_zero_values(spec: dict) -> None:
    """Drop what a Go round trip would not print: nulls and zero omitempty values."""
    for key in [k for k, v in spec.items() if v is None]:
        del spec[key]
    for key, zero in _SPEC_OMIT_ZERO.items():
        if key in spec and spec[key] == zero and type(spec[key]) is type(zero):
            del spec[key]
    for key in _SPEC_OMIT_EMPTY:
        if key in spec and not spec[key]:
            del spec[key]
    for port in spec.get("ports") or []:
        if not isinstance(port, dict):
            continue
        for key in [k for k, v in port.items() if v is None]:
            del port[key]
        for key, zero in _PORT_OMIT_ZERO.items():
            if key in port and port[key] == zero and type(port[key]) is type(zero):
                del port[key]


def externally_accessible(svc: dict) -> bool:
    """Upstream C{ExternallyAccessible}: LoadBalancer, NodePort, or ClusterIP with externalIPs."""
    spec = svc.get("spec") or {}
    stype = spec.get("type")
    return stype in (LOAD_BALANCER, NODE_PORT) or (
        stype == CLUSTER_IP and bool(spec.get("externalIPs"))
    )


def _requests_only_local_traffic(svc: dict) -> bool:
    spec = svc.get("spec") or {}
    if spec.get("type") not in (LOAD_BALANCER, NODE_PORT):
        return False
    return spec.get("externalTrafficPolicy") == "Local"


def needs_health_check(svc: dict) -> bool:
    """Upstream C{NeedsHealthCheck}: a LoadBalancer with C{externalTrafficPolicy: Local}."""
    return (svc.get("spec") or {}).get("type") == LOAD_BALANCER and _requests_only_local_traffic(
        svc
    )


def default_service(svc: dict) -> None:
    """
    Upstream C{SetObjectDefaults_Service}: C{sessionAffinity} C{None} (its config dropped) or,
    for C{ClientIP}, a 10800 s timeout; C{type} C{ClusterIP}; each port's C{protocol} C{TCP} and
    C{targetPort} the C{port}; C{externalTrafficPolicy} C{Cluster} when externally accessible;
    C{internalTrafficPolicy} C{Cluster} for ClusterIP/NodePort/LoadBalancer;
    C{allocateLoadBalancerNodePorts} true and ingress C{ipMode} C{VIP} for LoadBalancer.
    Zero values that a Go round trip drops (C{nodePort: 0}, nulls) are removed first.
    """
    spec = _spec(svc)
    _prune_zero_values(spec)
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    if spec["sessionAffinity"] == "ClientIP":
        config = spec.get("sessionAffinityConfig") or {}
        client_ip = config.get("clientIP") if isinstance(config, dict) else None
        if not isinstance(client_ip, dict) or client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {
                "clientIP": {"timeoutSeconds": DEFAULT_CLIENT_IP_AFFINITY_SECONDS}
            }
    if not spec.get("type"):
        spec["type"] = CLUSTER_IP
    for port in spec.get("ports") or []:
        if not isinstance(port, dict):
            continue
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        target = port.get("targetPort")
        if target is None or target == 0 or target == "":
            port["targetPort"] = port.get("port") or 0
    if externally_accessible(svc) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and spec["type"] in (
        NODE_PORT,
        LOAD_BALANCER,
        CLUSTER_IP,
    ):
        spec["internalTrafficPolicy"] = "Cluster"
    if spec["type"] == LOAD_BALANCER:
        if spec.get("allocateLoadBalancerNodePorts") is None:
            spec["allocateLoadBalancerNodePorts"] = True
        status = svc.get("status") or {}
        for ingress in (status.get("loadBalancer") or {}).get("ingress") or []:
            if isinstance(ingress, dict) and ingress.get("ip") and ingress.get("ipMode") is None:
                ingress["ipMode"] = "VIP"


# --------------------------------------------------------------------------------------------
# registry-level helpers (strategy.go, alloc.go)


def _same_cluster_ips(old: dict, new: dict) -> bool:
    o, n = old.get("spec") or {}, new.get("spec") or {}
    return (o.get("clusterIP") or "") == (n.get("clusterIP") or "") and list(
        o.get("clusterIPs") or []
    ) == list(n.get("clusterIPs") or [])


def _same_cluster_ips_plural(old: dict, new: dict) -> bool:
    """The service storage's C{sameClusterIPs}: C{clusterIPs} only (the strategy's also
    compares C{clusterIP})."""
    return list((old.get("spec") or {}).get("clusterIPs") or []) == list(
        (new.get("spec") or {}).get("clusterIPs") or []
    )


def _same_ip_families(old: dict, new: dict) -> bool:
    return (old.get("spec") or {}).get("ipFamilies") == (new.get("spec") or {}).get("ipFamilies")


def _ip_family_policy(svc: dict) -> str:
    return (svc.get("spec") or {}).get("ipFamilyPolicy") or ""


def _needs_cluster_ip(svc: dict) -> bool:
    return (svc.get("spec") or {}).get("type") != EXTERNAL_NAME


def _needs_node_port(svc: dict) -> bool:
    return (svc.get("spec") or {}).get("type") in (NODE_PORT, LOAD_BALANCER)


def _needs_hc_node_port(svc: dict) -> bool:
    spec = svc.get("spec") or {}
    return spec.get("type") == LOAD_BALANCER and spec.get("externalTrafficPolicy") == "Local"


def _node_ports(svc: dict) -> set:
    return {
        p.get("nodePort")
        for p in (svc.get("spec") or {}).get("ports") or []
        if isinstance(p, dict) and p.get("nodePort")
    }


def normalize_cluster_ips(new: dict, old: dict | None = None) -> None:
    """
    Upstream C{NormalizeClusterIPs}: keep C{clusterIP} and C{clusterIPs} in step.  On create, a
    C{clusterIP} alone becomes C{clusterIPs: [clusterIP]}.  On update, C{clusterIPs} dropped by
    an old client is restored, clearing C{clusterIP} clears unchanged C{clusterIPs}, and a new
    C{clusterIP} with unchanged C{clusterIPs} replaces them.
    """
    spec = _spec(new)
    cluster_ip = spec.get("clusterIP") or ""
    if old is None:
        if cluster_ip and not spec.get("clusterIPs"):
            spec["clusterIPs"] = [cluster_ip]
        return
    ospec = old.get("spec") or {}
    old_ip = ospec.get("clusterIP") or ""
    if ospec.get("clusterIPs") and not spec.get("clusterIPs"):
        if old_ip == cluster_ip:
            spec["clusterIPs"] = list(ospec["clusterIPs"])
    if old_ip != cluster_ip:
        if old_ip and not cluster_ip:
            if _same_cluster_ips_plural(old, new):
                spec.pop("clusterIPs", None)
        elif _same_cluster_ips_plural(old, new):
            spec["clusterIPs"] = [cluster_ip]


def patch_allocated_values(new: dict, old: dict) -> None:
    """
    Upstream C{patchAllocatedValues}: an update that omits allocated values (C{clusterIP(s)},
    node ports matched by port name, C{healthCheckNodePort}) keeps the old ones.
    """
    spec, ospec = _spec(new), old.get("spec") or {}
    if _needs_cluster_ip(old) and _needs_cluster_ip(new):
        if not spec.get("clusterIP") and ospec.get("clusterIP"):
            spec["clusterIP"] = ospec["clusterIP"]
        if not spec.get("clusterIPs") and ospec.get("clusterIPs"):
            spec["clusterIPs"] = list(ospec["clusterIPs"])
    if _needs_node_port(old) and _needs_node_port(new):
        used = _node_ports(old) & _node_ports(new)
        by_name = {}
        for p in ospec.get("ports") or []:
            if isinstance(p, dict):
                by_name[p.get("name") or ""] = p.get("nodePort") or 0
        for p in spec.get("ports") or []:
            if isinstance(p, dict) and not p.get("nodePort"):
                value = by_name.get(p.get("name") or "", 0)
                if value and value not in used:
                    p["nodePort"] = value
    if _needs_hc_node_port(old) and _needs_hc_node_port(new):
        if not spec.get("healthCheckNodePort") and ospec.get("healthCheckNodePort"):
            spec["healthCheckNodePort"] = ospec["healthCheckNodePort"]


def drop_type_dependent_fields(new: dict, old: dict) -> None:
    """
    Upstream C{dropTypeDependentFields}: on a type change, wipe what the old type allocated or
    defaulted and the user did not touch (cluster IPs and families, node ports, health-check
    port, C{allocateLoadBalancerNodePorts}, C{loadBalancerClass}, C{externalTrafficPolicy}),
    and clear the load-balancer status unless the new type is LoadBalancer.
    """
    spec, ospec = _spec(new), old.get("spec") or {}
    if _needs_cluster_ip(old) and not _needs_cluster_ip(new):
        if _same_cluster_ips(old, new):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        if _same_ip_families(old, new):
            spec.pop("ipFamilies", None)
        if _ip_family_policy(old) == _ip_family_policy(new):
            spec.pop("ipFamilyPolicy", None)
    if _needs_node_port(old) and not _needs_node_port(new):
        if _node_ports(new) <= _node_ports(old):
            for p in spec.get("ports") or []:
                if isinstance(p, dict):
                    p.pop("nodePort", None)
    if _needs_hc_node_port(old) and not _needs_hc_node_port(new):
        if (ospec.get("healthCheckNodePort") or 0) == (spec.get("healthCheckNodePort") or 0):
            spec.pop("healthCheckNodePort", None)
    if ospec.get("type") == LOAD_BALANCER and spec.get("type") != LOAD_BALANCER:
        new_alloc, old_alloc = (
            spec.get("allocateLoadBalancerNodePorts"),
            ospec.get("allocateLoadBalancerNodePorts"),
        )
        if new_alloc is not None and old_alloc is not None and new_alloc == old_alloc:
            spec.pop("allocateLoadBalancerNodePorts", None)
        if spec.get("loadBalancerClass") == ospec.get("loadBalancerClass"):
            spec.pop("loadBalancerClass", None)
    if externally_accessible(old) and not externally_accessible(new):
        if (ospec.get("externalTrafficPolicy") or "") == (spec.get("externalTrafficPolicy") or ""):
            spec.pop("externalTrafficPolicy", None)
    if spec.get("type") != LOAD_BALANCER:
        status = new.get("status")
        if not isinstance(status, dict):
            status = new["status"] = {}
        status["loadBalancer"] = {}


def _family_of(ip: str) -> str:
    parsed = parse_ip(ip)
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is None:
        return "IPv6"
    return "IPv4"


def _is_matching_prefer_dual_stack(new: dict, old: dict | None) -> bool:
    if old is None:
        return False
    spec, ospec = new.get("spec") or {}, old.get("spec") or {}
    if spec.get("ipFamilyPolicy") is None or ospec.get("type") != spec.get("type"):
        return False
    if spec.get("type") not in (CLUSTER_IP, NODE_PORT, LOAD_BALANCER):
        return False
    if spec.get("ipFamilyPolicy") != "PreferDualStack":
        return False
    if ospec.get("ipFamilyPolicy") is not None and ospec["ipFamilyPolicy"] != "PreferDualStack":
        return False
    return _same_cluster_ips_plural(old, new) and _same_ip_families(old, new)


def init_ip_family_fields(
    svc: dict, old: dict | None = None, families: Sequence[str] = ("IPv4",)
) -> list[FieldError]:
    """
    Upstream C{initIPFamilyFields}: default C{ipFamilyPolicy} (the old one on update,
    C{RequireDualStack} for headless selectorless services, else C{SingleStack}) and
    C{ipFamilies} (from C{clusterIPs}, else the cluster's primary family), checking that the
    requested families are configured.

    @param families: the service IP families this cluster serves, primary first
        (C{--service-cluster-ip-range}); C{("IPv4",)} for a single-stack IPv4 cluster.
    @return: field errors; the caller answers 422 C{Service "x" is invalid} with them.
    """
    spec = _spec(svc)
    if spec.get("type") == EXTERNAL_NAME:
        return []
    if _is_matching_prefer_dual_stack(svc, old):
        return []
    selectorless_headless = spec.get("clusterIP") == CLUSTER_IP_NONE and not spec.get("selector")
    if spec.get("ipFamilyPolicy") is None:
        if old is not None and (old.get("spec") or {}).get("ipFamilyPolicy") is not None:
            spec["ipFamilyPolicy"] = old["spec"]["ipFamilyPolicy"]
        elif selectorless_headless:
            spec["ipFamilyPolicy"] = "RequireDualStack"
        else:
            spec["ipFamilyPolicy"] = "SingleStack"
    errs = validate_service_cluster_ips_related_fields(svc)
    if errs:
        return errs
    policy = spec["ipFamilyPolicy"]
    policy_path = Path("spec", "ipFamilyPolicy")
    if old is not None:
        if policy == "SingleStack":
            if _same_cluster_ips_plural(old, svc) and len(spec.get("clusterIPs") or []) > 1:
                spec["clusterIPs"] = spec["clusterIPs"][:1]
            if _same_ip_families(old, svc) and len(spec.get("ipFamilies") or []) > 1:
                spec["ipFamilies"] = spec["ipFamilies"][:1]
        else:
            ospec = old.get("spec") or {}
            if spec.get("clusterIPs") and len(spec["clusterIPs"]) < len(
                ospec.get("clusterIPs") or []
            ):
                errs.append(
                    invalid(
                        policy_path,
                        policy,
                        "must be 'SingleStack' to release the secondary cluster IP",
                    )
                )
            if spec.get("ipFamilies") and len(spec["ipFamilies"]) < len(
                ospec.get("ipFamilies") or []
            ):
                errs.append(
                    invalid(
                        policy_path,
                        policy,
                        "must be 'SingleStack' to release the secondary IP family",
                    )
                )
    if policy == "SingleStack":
        if len(spec.get("clusterIPs") or []) == 2:
            errs.append(
                invalid(
                    policy_path,
                    policy,
                    "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are "
                    "specified",
                )
            )
        if len(spec.get("ipFamilies") or []) == 2:
            errs.append(
                invalid(
                    policy_path,
                    policy,
                    "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are "
                    "specified",
                )
            )
    for i, ip in enumerate(spec.get("clusterIPs") or []):
        if ip == CLUSTER_IP_NONE:
            break
        family = _family_of(ip)
        if i >= len(spec.get("ipFamilies") or []):
            if family not in families:
                errs.append(
                    invalid_go(
                        Path("spec", "clusterIPs").index(i),
                        go_string_slice(spec["clusterIPs"]),
                        f"{family} is not configured on this cluster",
                    )
                )
            else:
                spec.setdefault("ipFamilies", []).append(family)
    if errs:
        return errs
    if selectorless_headless:
        if not spec.get("ipFamilies"):
            spec["ipFamilies"] = [families[0]]
        if len(spec["ipFamilies"]) < 2 and policy != "SingleStack":
            spec["ipFamilies"].append("IPv6" if spec["ipFamilies"][0] == "IPv4" else "IPv4")
        return []
    if policy == "RequireDualStack" and len(families) < 2:
        errs.append(
            invalid(policy_path, policy, "this cluster is not configured for dual-stack services")
        )
    for i, family in enumerate(spec.get("ipFamilies") or []):
        if family not in families:
            errs.append(
                invalid(
                    Path("spec", "ipFamilies").index(i), family, "not configured on this cluster"
                )
            )
    if errs:
        return errs
    if not spec.get("ipFamilies"):
        spec["ipFamilies"] = [families[0]]
    if policy != "SingleStack" and len(spec["ipFamilies"]) == 1 and len(families) == 2:
        spec["ipFamilies"].append("IPv6" if spec["ipFamilies"][0] == "IPv4" else "IPv4")
    return []


def default_service_registry_fields(
    svc: dict, old: dict | None = None, families: Sequence[str] = ("IPv4",)
) -> list[FieldError]:
    """
    What the service registry does before allocating (upstream C{beginCreate} /
    C{beginUpdate}, which run before the strategy): on update L{default_service_on_read} of
    C{old} and L{patch_allocated_values}; then L{normalize_cluster_ips} and
    L{init_ip_family_fields}.  After this the caller allocates C{clusterIP(s)} (unless
    C{None} or ExternalName) for each of C{spec.ipFamilies}, node ports and the health-check
    port.

    @return: field errors (422 C{Invalid} for kind C{Service}); empty when all is well.
    """
    if old is not None:
        default_service_on_read(old, families[0])
        patch_allocated_values(svc, old)
    normalize_cluster_ips(svc, old)
    return init_ip_family_fields(svc, old, families)


def default_service_on_read(svc: dict, primary_family: str = "IPv4") -> None:
    """
    Upstream service storage C{defaultOnRead} (the Store's decorator, run on every object read
    and on the old object of an update): sync C{clusterIPs} with C{clusterIP}, fill
    C{ipFamilies}/C{ipFamilyPolicy} of objects stored without them, and drop
    C{internalTrafficPolicy} from ExternalName services.
    """
    spec = _spec(svc)
    normalize_cluster_ips(svc, None)
    if spec.get("type") == EXTERNAL_NAME:
        spec.pop("internalTrafficPolicy", None)
        return
    if spec.get("ipFamilies"):
        return
    other = "IPv6" if primary_family == "IPv4" else "IPv4"
    if spec.get("clusterIP") == CLUSTER_IP_NONE:
        if not spec.get("selector"):
            spec["ipFamilyPolicy"] = "RequireDualStack"
            spec["ipFamilies"] = [primary_family, other]
        else:
            spec["ipFamilyPolicy"] = "SingleStack"
            spec["ipFamilies"] = [primary_family]
        return
    families = [_family_of(ip) for ip in spec.get("clusterIPs") or []]
    if families:
        spec["ipFamilies"] = families
    if len(families) == 1:
        spec["ipFamilyPolicy"] = "SingleStack"
    elif len(families) == 2:
        spec["ipFamilyPolicy"] = "RequireDualStack"


def prepare_service_for_create(svc: dict) -> None:
    """Upstream C{PrepareForCreate}: the status is reset to C{{"loadBalancer": {}}}."""
    svc["status"] = {"loadBalancer": {}}


def prepare_service_for_update(new: dict, old: dict) -> None:
    """
    Upstream C{PrepareForUpdate}: keep the old status and L{drop_type_dependent_fields}.
    L{patch_allocated_values} and L{normalize_cluster_ips} (upstream's C{beginUpdate}) run
    first here too, so that the strategy alone accepts a re-applied manifest without its
    allocated values; both are idempotent.
    """
    new["status"] = copy.deepcopy(old.get("status") or {"loadBalancer": {}})
    patch_allocated_values(new, old)
    normalize_cluster_ips(new, old)
    drop_type_dependent_fields(new, old)


def _prepare_status_update(new: dict, old: dict) -> None:
    """Status strategy: the spec is kept from C{old}."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})


# --------------------------------------------------------------------------------------------
# validation


def _is_headless(spec: dict) -> bool:
    ips = spec.get("clusterIPs") or []
    return len(ips) == 1 and ips[0] == CLUSTER_IP_NONE


def _go_service_port(port: dict) -> str:
    """C{%#v} of the C{core.ServicePort{Protocol, Port}} key of a duplicate-port error."""
    return (
        f'core.ServicePort{{Name:"", Protocol:{go_quote(port.get("protocol") or "")}, '
        f"AppProtocol:(*string)(nil), Port:{port.get('port') or 0}, "
        'TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}'
    )


def _validate_service_port(
    port: dict, require_name: bool, names: set, path: Path
) -> list[FieldError]:
    """Upstream C{validateServicePort}."""
    errs: list[FieldError] = []
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(required(path.child("name")))
    elif name:
        errs.extend(validate_dns1123_label(name, path.child("name")))
        if name in names:
            errs.append(duplicate(path.child("name"), name))
        else:
            names.add(name)
    number = port.get("port") or 0
    errs.extend(invalid(path.child("port"), number, m) for m in is_valid_port_num(number))
    protocol = port.get("protocol") or ""
    if not protocol:
        errs.append(required(path.child("protocol")))
    elif protocol not in SUPPORTED_PORT_PROTOCOLS:
        errs.append(not_supported(path.child("protocol"), protocol, SUPPORTED_PORT_PROTOCOLS))
    target = port.get("targetPort")
    errs.extend(
        validate_port_num_or_name(0 if target is None else target, path.child("targetPort"))
    )
    if port.get("appProtocol") is not None:
        errs.extend(validate_qualified_name(port["appProtocol"], path.child("appProtocol")))
    return errs


def validate_service_cluster_ips_related_fields(svc: dict) -> list[FieldError]:
    """
    Upstream C{ValidateServiceClusterIPsRelatedFields}: C{clusterIP} equals C{clusterIPs[0]},
    supported and distinct families, a supported policy, valid IPs (C{None} only alone), at
    most two of them, one per family, each matching its C{ipFamilies} entry.
    """
    spec = svc.get("spec") or {}
    if spec.get("type") == EXTERNAL_NAME:
        return []
    errs: list[FieldError] = []
    ips_path = Path("spec", "clusterIPs")
    fam_path = Path("spec", "ipFamilies")
    cluster_ip = spec.get("clusterIP") or ""
    cluster_ips = list(spec.get("clusterIPs") or [])
    printed_ips = go_string_slice(cluster_ips)
    if cluster_ip:
        if not cluster_ips:
            errs.append(required(ips_path))
        elif cluster_ips[0] != cluster_ip:
            errs.append(invalid_go(ips_path, printed_ips, "first value must match `clusterIP`"))
    elif cluster_ips:
        errs.append(
            invalid_go(ips_path, printed_ips, "must be empty when `clusterIP` is not specified")
        )
    seen: set = set()
    for i, family in enumerate(spec.get("ipFamilies") or []):
        if family not in SUPPORTED_IP_FAMILIES:
            errs.append(not_supported(fam_path.index(i), family, SUPPORTED_IP_FAMILIES))
        if family in seen:
            errs.append(duplicate(fam_path.index(i), family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in SUPPORTED_IP_FAMILY_POLICIES:
        errs.append(
            not_supported(Path("spec", "ipFamilyPolicy"), policy, SUPPORTED_IP_FAMILY_POLICIES)
        )
    has_invalid = False
    for i, ip in enumerate(cluster_ips):
        if i == 0 and ip == CLUSTER_IP_NONE:
            if len(cluster_ips) > 1:
                has_invalid = True
                errs.append(
                    invalid_go(ips_path, printed_ips, "'None' must be the first and only value")
                )
            continue
        ip_errs = validate_ip(ips_path.index(i), ip)
        has_invalid = has_invalid or bool(ip_errs)
        errs.extend(ip_errs)
    if len(cluster_ips) > 2:
        errs.append(invalid_go(ips_path, printed_ips, "may only hold up to 2 values"))
    if has_invalid:
        return errs
    if len(cluster_ips) > 1:
        if {_family_of(ip) for ip in cluster_ips} != {"IPv4", "IPv6"}:
            errs.append(
                invalid_go(
                    ips_path, printed_ips, "may specify no more than one IP for each IP family"
                )
            )
    families = spec.get("ipFamilies") or []
    if not _is_headless(spec) and cluster_ips and families:
        for i, ip in enumerate(cluster_ips):
            if i > len(families) - 1:
                break
            is_v6 = _family_of(ip) == "IPv6"
            if families[i] == "IPv4" and is_v6:
                errs.append(
                    invalid(
                        ips_path.index(i),
                        ip,
                        f"expected an IPv4 value as indicated by `ipFamilies[{i}]`",
                    )
                )
            if families[i] == "IPv6" and not is_v6:
                errs.append(
                    invalid(
                        ips_path.index(i),
                        ip,
                        f"expected an IPv6 value as indicated by `ipFamilies[{i}]`",
                    )
                )
    return errs


def _validate_client_ip_affinity_config(config: Any, path: Path) -> list[FieldError]:
    detail = "when session affinity type is ClientIP"
    if not isinstance(config, dict):
        return [required(path, detail)]
    client_ip = config.get("clientIP")
    if not isinstance(client_ip, dict):
        return [required(path.child("clientIP"), detail)]
    timeout = client_ip.get("timeoutSeconds")
    if timeout is None:
        return [required(path.child("clientIP").child("timeoutSeconds"), detail)]
    if timeout <= 0 or timeout > MAX_CLIENT_IP_AFFINITY_SECONDS:
        return [
            invalid(
                path.child("clientIP").child("timeoutSeconds"),
                timeout,
                f"must be greater than 0 and less than {MAX_CLIENT_IP_AFFINITY_SECONDS}",
            )
        ]
    return []


def _validate_external_traffic_policy(svc: dict) -> list[FieldError]:
    """Upstream C{validateServiceExternalTrafficPolicy}."""
    spec = svc.get("spec") or {}
    errs: list[FieldError] = []
    policy = spec.get("externalTrafficPolicy") or ""
    if not externally_accessible(svc):
        if policy:
            errs.append(
                invalid(
                    Path("spec", "externalTrafficPolicy"),
                    policy,
                    "may only be set for externally-accessible services",
                )
            )
    elif not policy:
        errs.append(required(Path("spec", "externalTrafficPolicy")))
    elif policy not in SUPPORTED_EXTERNAL_TRAFFIC_POLICY:
        errs.append(
            not_supported(
                Path("spec", "externalTrafficPolicy"), policy, SUPPORTED_EXTERNAL_TRAFFIC_POLICY
            )
        )
    hc_port = spec.get("healthCheckNodePort") or 0
    hc_path = Path("spec", "healthCheckNodePort")
    if not needs_health_check(svc):
        if hc_port:
            errs.append(
                invalid(
                    hc_path,
                    hc_port,
                    "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is "
                    "'Local'",
                )
            )
    elif not hc_port:
        errs.append(required(hc_path))
    else:
        errs.extend(invalid(hc_path, hc_port, m) for m in is_valid_port_num(hc_port))
    return errs


def _validate_load_balancer_class(new: dict, old: dict | None) -> list[FieldError]:
    """Upstream C{validateLoadBalancerClassField}."""
    spec = new.get("spec") or {}
    errs: list[FieldError] = []
    lb_class = spec.get("loadBalancerClass")
    path = Path("spec", "loadBalancerClass")
    if old is not None:
        ospec = old.get("spec") or {}
        if ospec.get("type") == LOAD_BALANCER and spec.get("type") == LOAD_BALANCER:
            if ospec.get("loadBalancerClass") != lb_class:
                errs.append(invalid(path, lb_class, "may not change once set"))
    if spec.get("type") == LOAD_BALANCER:
        if lb_class is not None:
            errs.extend(validate_qualified_name(lb_class, path))
    elif lb_class is not None:
        errs.append(forbidden(path, "may only be used when `type` is 'LoadBalancer'"))
    return errs


def validate_service(svc: dict) -> list[FieldError]:
    """
    Upstream C{ValidateService} (create and, after the update-only checks, update), in
    upstream order: ObjectMeta (DNS-1035 label name), topology annotations, ports (required
    unless headless or ExternalName, names required when more than one, unique, valid
    numbers, protocols and target ports), type-specific rules, selector labels, session
    affinity, cluster IPs and families, external IPs, type, node ports, duplicates, source
    ranges, C{allocateLoadBalancerNodePorts}, C{loadBalancerClass}, traffic policies and
    C{trafficDistribution}.
    """
    meta = svc.get("metadata") or {}
    meta_path = Path("metadata")
    errs = validate_object_meta(meta, True, validate_service_name, meta_path)
    annotations = meta.get("annotations") or {}
    if ANNOTATION_TOPOLOGY_MODE in annotations and ANNOTATION_TOPOLOGY_AWARE_HINTS in annotations:
        if annotations[ANNOTATION_TOPOLOGY_MODE] != annotations[ANNOTATION_TOPOLOGY_AWARE_HINTS]:
            errs.append(
                invalid(
                    meta_path.child("annotations").key(ANNOTATION_TOPOLOGY_MODE),
                    annotations[ANNOTATION_TOPOLOGY_MODE],
                    f"must match annotations[{ANNOTATION_TOPOLOGY_AWARE_HINTS}] when both are "
                    "specified",
                )
            )

    spec = svc.get("spec") or {}
    spec_path = Path("spec")
    ports_path = spec_path.child("ports")
    stype = spec.get("type") or ""
    ports = [p if isinstance(p, dict) else {} for p in spec.get("ports") or []]
    headless = _is_headless(spec)
    if not ports and not headless and stype != EXTERNAL_NAME:
        errs.append(required(ports_path))
    if stype == LOAD_BALANCER:
        for i, port in enumerate(ports):
            if port.get("port") == KUBELET_PORT:
                errs.append(
                    invalid(
                        ports_path.index(i),
                        KUBELET_PORT,
                        f"may not expose port {KUBELET_PORT} externally since it is used by "
                        "kubelet",
                    )
                )
        if headless:
            errs.append(
                invalid(
                    spec_path.child("clusterIPs").index(0),
                    CLUSTER_IP_NONE,
                    "may not be set to 'None' for LoadBalancer services",
                )
            )
    elif stype == NODE_PORT:
        if headless:
            errs.append(
                invalid(
                    spec_path.child("clusterIPs").index(0),
                    CLUSTER_IP_NONE,
                    "may not be set to 'None' for NodePort services",
                )
            )
    elif stype == EXTERNAL_NAME:
        if spec.get("clusterIPs"):
            errs.append(
                forbidden(spec_path.child("clusterIPs"), "may not be set for ExternalName services")
            )
        if spec.get("ipFamilies"):
            errs.append(
                forbidden(spec_path.child("ipFamilies"), "may not be set for ExternalName services")
            )
        if spec.get("ipFamilyPolicy") is not None:
            errs.append(
                forbidden(
                    spec_path.child("ipFamilyPolicy"), "may not be set for ExternalName services"
                )
            )
        cname = spec.get("externalName") or ""
        cname = cname.removesuffix(".")
        if cname:
            errs.extend(validate_dns1123_subdomain(cname, spec_path.child("externalName")))
        else:
            errs.append(required(spec_path.child("externalName")))

    names: set = set()
    for i, port in enumerate(ports):
        errs.extend(_validate_service_port(port, len(ports) > 1, names, ports_path.index(i)))

    if spec.get("selector") is not None:
        errs.extend(validate_labels(spec["selector"], spec_path.child("selector")))

    affinity = spec.get("sessionAffinity") or ""
    if not affinity:
        errs.append(required(spec_path.child("sessionAffinity")))
    elif affinity not in SUPPORTED_SESSION_AFFINITY:
        errs.append(
            not_supported(spec_path.child("sessionAffinity"), affinity, SUPPORTED_SESSION_AFFINITY)
        )
    if affinity == "ClientIP":
        errs.extend(
            _validate_client_ip_affinity_config(
                spec.get("sessionAffinityConfig"), spec_path.child("sessionAffinityConfig")
            )
        )
    elif affinity == "None" and spec.get("sessionAffinityConfig") is not None:
        errs.append(
            forbidden(
                spec_path.child("sessionAffinityConfig"),
                "must not be set when session affinity is None",
            )
        )

    errs.extend(validate_service_cluster_ips_related_fields(svc))

    for i, ip in enumerate(spec.get("externalIPs") or []):
        idx = spec_path.child("externalIPs").index(i)
        ip_errs = validate_ip(idx, ip)
        errs.extend(ip_errs if ip_errs else validate_non_special_ip(ip, idx))

    if not stype:
        errs.append(required(spec_path.child("type")))
    elif stype not in SUPPORTED_SERVICE_TYPES:
        errs.append(not_supported(spec_path.child("type"), stype, SUPPORTED_SERVICE_TYPES))

    if stype == CLUSTER_IP:
        for i, port in enumerate(ports):
            if port.get("nodePort"):
                errs.append(
                    forbidden(
                        ports_path.index(i).child("nodePort"),
                        "may not be used when `type` is 'ClusterIP'",
                    )
                )

    seen_node_ports: set = set()
    for i, port in enumerate(ports):
        node_port = port.get("nodePort") or 0
        if not node_port:
            continue
        key = (port.get("protocol") or "", node_port)
        if key in seen_node_ports:
            errs.append(duplicate(ports_path.index(i).child("nodePort"), node_port))
        seen_node_ports.add(key)

    seen_ports: set = set()
    for i, port in enumerate(ports):
        key = (port.get("protocol") or "", port.get("port") or 0)
        if key in seen_ports:
            errs.append(GoValueError("Duplicate", ports_path.index(i), _go_service_port(port)))
        seen_ports.add(key)

    ranges = spec.get("loadBalancerSourceRanges") or []
    if ranges:
        ranges_path = spec_path.child("LoadBalancerSourceRanges")
        if stype != LOAD_BALANCER:
            errs.append(forbidden(ranges_path, "may only be used when `type` is 'LoadBalancer'"))
        for i, value in enumerate(ranges):
            errs.extend(validate_cidr(ranges_path.index(i), (value or "").strip()))
    elif ANNOTATION_LB_SOURCE_RANGES in annotations:
        ann_path = Path("metadata", "annotations").key(ANNOTATION_LB_SOURCE_RANGES)
        if stype != LOAD_BALANCER:
            errs.append(forbidden(ann_path, "may only be used when `type` is 'LoadBalancer'"))
        value = (annotations[ANNOTATION_LB_SOURCE_RANGES] or "").strip()
        if value:
            for cidr in value.split(","):
                errs.extend(validate_cidr(ann_path, cidr.strip()))

    if spec.get("allocateLoadBalancerNodePorts") is not None and stype != LOAD_BALANCER:
        errs.append(
            forbidden(
                spec_path.child("allocateLoadBalancerNodePorts"),
                "may only be used when `type` is 'LoadBalancer'",
            )
        )
    if stype == LOAD_BALANCER and spec.get("allocateLoadBalancerNodePorts") is None:
        errs.append(required(Path("allocateLoadBalancerNodePorts")))

    errs.extend(_validate_load_balancer_class(svc, None))
    errs.extend(_validate_external_traffic_policy(svc))

    itp = spec.get("internalTrafficPolicy")
    if itp is None:
        if stype in (NODE_PORT, LOAD_BALANCER, CLUSTER_IP):
            errs.append(required(spec_path.child("internalTrafficPolicy")))
    elif itp not in SUPPORTED_INTERNAL_TRAFFIC_POLICY:
        errs.append(
            not_supported(
                spec_path.child("internalTrafficPolicy"), itp, SUPPORTED_INTERNAL_TRAFFIC_POLICY
            )
        )

    distribution = spec.get("trafficDistribution")
    if distribution is not None and distribution != "PreferClose":
        errs.append(
            not_supported(spec_path.child("trafficDistribution"), distribution, ["PreferClose"])
        )
    return errs


def _validate_upgrade_downgrade_cluster_ips(old: dict, new: dict) -> list[FieldError]:
    """Upstream C{validateUpgradeDowngradeClusterIPs}."""
    spec, ospec = new.get("spec") or {}, old.get("spec") or {}
    if EXTERNAL_NAME in (spec.get("type"), ospec.get("type")):
        return []
    if _is_headless(spec) and _is_headless(ospec):
        return []
    errs: list[FieldError] = []
    new_ips, old_ips = list(spec.get("clusterIPs") or []), list(ospec.get("clusterIPs") or [])
    printed = go_string_slice(spec.get("clusterIPs"))
    path = Path("spec", "clusterIPs")
    if len(old_ips) == len(new_ips):
        for i, ip in enumerate(old_ips):
            if ip != new_ips[i]:
                errs.append(invalid_go(path.index(i), printed, "may not change once set"))
    elif len(old_ips) > len(new_ips):
        if not new_ips:
            errs.append(invalid_go(path.index(0), printed, "primary clusterIP can not be unset"))
        if old_ips and new_ips and new_ips[0] != old_ips[0]:
            errs.append(invalid_go(path.index(0), printed, "may not change once set"))
        if len(new_ips) == 1 and spec.get("ipFamilyPolicy") != "SingleStack":
            errs.append(
                _invalid_policy(
                    spec, "must be set to 'SingleStack' when releasing the secondary clusterIP"
                )
            )
    elif old_ips and new_ips[0] != old_ips[0]:
        errs.append(invalid_go(path.index(0), printed, "may not change once set"))
    return errs


def _invalid_policy(spec: dict, detail: str) -> FieldError:
    policy = spec.get("ipFamilyPolicy")
    path = Path("spec", "ipFamilyPolicy")
    if policy is None:
        return invalid_go(path, "null", detail)
    return invalid(path, policy, detail)


def _validate_upgrade_downgrade_ip_families(old: dict, new: dict) -> list[FieldError]:
    """Upstream C{validateUpgradeDowngradeIPFamilies} (paths and values as upstream prints them)."""
    spec, ospec = new.get("spec") or {}, old.get("spec") or {}
    if EXTERNAL_NAME in (spec.get("type"), ospec.get("type")):
        return []
    if _is_headless(spec) != _is_headless(ospec) or _is_headless(spec):
        return []
    errs: list[FieldError] = []
    new_f, old_f = list(spec.get("ipFamilies") or []), list(ospec.get("ipFamilies") or [])
    printed_f = go_string_slice(spec.get("ipFamilies"), "core.IPFamily")
    printed_ips = go_string_slice(spec.get("clusterIPs"))
    path0 = Path("spec", "ipFamilies").index(0)
    if len(old_f) == len(new_f):
        for i, family in enumerate(old_f):
            if family != new_f[i]:
                errs.append(invalid_go(path0, printed_f, "may not change once set"))
    elif len(old_f) > len(new_f):
        if not spec.get("clusterIPs"):
            errs.append(invalid_go(path0, printed_f, "primary ipFamily can not be unset"))
        if new_f and new_f[0] != old_f[0]:
            errs.append(invalid_go(path0, printed_ips, "may not change once set"))
        if len(new_f) == 1 and spec.get("ipFamilyPolicy") != "SingleStack":
            errs.append(
                _invalid_policy(
                    spec, "must be set to 'SingleStack' when releasing the secondary ipFamily"
                )
            )
    elif old_f and new_f and new_f[0] != old_f[0]:
        errs.append(invalid_go(path0, printed_ips, "may not change once set"))
    return errs


def validate_service_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateServiceUpdate}: ObjectMeta update rules; the primary cluster IP and IP
    family may not change (secondary ones only with C{SingleStack}); C{loadBalancerClass}
    fixed while LoadBalancer; C{healthCheckNodePort} fixed while needed; then
    L{validate_service}.
    """
    errs = validate_object_meta_update(
        new.get("metadata") or {}, old.get("metadata") or {}, Path("metadata")
    )
    errs.extend(_validate_upgrade_downgrade_cluster_ips(old, new))
    errs.extend(_validate_upgrade_downgrade_ip_families(old, new))
    errs.extend(_validate_load_balancer_class(new, old))
    if needs_health_check(old) and needs_health_check(new):
        if (new.get("spec") or {}).get("healthCheckNodePort") != (old.get("spec") or {}).get(
            "healthCheckNodePort"
        ):
            errs.append(forbidden(Path("spec", "healthCheckNodePort"), "field is immutable"))
    errs.extend(validate_service(new))
    return errs


def validate_service_status_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateServiceStatusUpdate}: ObjectMeta update rules and
    C{ValidateLoadBalancerStatus} (ingress only on LoadBalancer services; valid C{ip} with an
    C{ipMode} of C{VIP} or C{Proxy}; C{hostname} a DNS name and not an IP).
    """
    errs = validate_object_meta_update(
        new.get("metadata") or {}, old.get("metadata") or {}, Path("metadata")
    )
    spec = new.get("spec") or {}
    ingresses = ((new.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    ing_path = Path("status", "loadBalancer", "ingress")
    if spec.get("type") != LOAD_BALANCER and ingresses:
        errs.append(forbidden(ing_path, "may only be used when `spec.type` is 'LoadBalancer'"))
        return errs
    for i, ingress in enumerate(ingresses):
        ingress = ingress or {}
        idx = ing_path.index(i)
        ip = ingress.get("ip") or ""
        if ip:
            errs.extend(validate_ip(idx.child("ip"), ip))
        mode = ingress.get("ipMode")
        if mode is None:
            if ip:
                errs.append(required(idx.child("ipMode"), "must be specified when `ip` is set"))
        elif not ip:
            errs.append(forbidden(idx.child("ipMode"), "may not be specified when `ip` is not set"))
        elif mode not in SUPPORTED_LB_IP_MODES:
            errs.append(not_supported(idx.child("ipMode"), mode, SUPPORTED_LB_IP_MODES))
        hostname = ingress.get("hostname") or ""
        if hostname:
            errs.extend(
                invalid(idx.child("hostname"), hostname, m) for m in is_dns1123_subdomain(hostname)
            )
            if parse_ip(hostname) is not None:
                errs.append(
                    invalid(
                        idx.child("hostname"), hostname, "must be a DNS name, not an IP address"
                    )
                )
    return errs


def service_warnings(svc: dict) -> list[str]:
    """
    Upstream C{GetWarningsForService} (the parts that do not concern IP spelling): the
    deprecated topology-aware-hints annotation, C{externalIPs} on ExternalName services and
    C{externalName} on other types.
    """
    warnings: list[str] = []
    annotations = (svc.get("metadata") or {}).get("annotations") or {}
    spec = svc.get("spec") or {}
    if ANNOTATION_TOPOLOGY_AWARE_HINTS in annotations:
        warnings.append(
            f"annotation {ANNOTATION_TOPOLOGY_AWARE_HINTS} is deprecated, please use "
            f"{ANNOTATION_TOPOLOGY_MODE} instead"
        )
    if spec.get("type") == EXTERNAL_NAME and spec.get("externalIPs"):
        warnings.append('spec.externalIPs is ignored when spec.type is "ExternalName"')
    if spec.get("type") != EXTERNAL_NAME and spec.get("externalName"):
        warnings.append('spec.externalName is ignored when spec.type is not "ExternalName"')
    return warnings


SERVICE_STRATEGY = Strategy(
    kind="Service",
    default=default_service,
    prepare_for_create=prepare_service_for_create,
    prepare_for_update=prepare_service_for_update,
    validate=validate_service,
    validate_update=validate_service_update,
    warnings=service_warnings,
    table=SERVICE_TABLE,
    allow_create_on_update=True,
    allow_unconditional_update=True,
)

SERVICE_STATUS_STRATEGY = Strategy(
    kind="Service",
    default=default_service,
    prepare_for_create=prepare_service_for_create,
    prepare_for_update=_prepare_status_update,
    validate=validate_service,
    validate_update=validate_service_status_update,
    table=SERVICE_TABLE,
    allow_create_on_update=True,
    allow_unconditional_update=True,
)
