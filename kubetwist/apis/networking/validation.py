# -*- test-case-name: tests.apis.test_networking -*-
"""
networking.k8s.io/v1 defaulting and validation: upstream C{pkg/apis/networking/v1/defaults.go}
(C{SetDefaults_NetworkPolicy}, C{SetDefaults_NetworkPolicyPort}, C{SetDefaults_IngressClass})
and C{pkg/apis/networking/validation/validation.go} (Ingress, IngressClass, NetworkPolicy) at
v1.32 (the C{RelaxedServiceNameValidation} gate does not exist yet: backend service names are
DNS-1035 labels).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kubetwist.apimachinery.validation import (
    _parse_ip_sloppy,
    is_dns1123_subdomain,
    is_domain_prefixed_path,
    is_valid_cidr,
    is_valid_ip,
    is_valid_port_name,
    is_valid_port_num,
    is_wildcard_dns1123_subdomain,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_immutable_field,
    validate_label_selector,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.podspec_validation import GoValueError
from kubetwist.runtime.field import (
    FieldError,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)

__all__ = [
    "default_ingress",
    "default_ingress_class",
    "default_network_policy",
    "validate_ingress",
    "validate_ingress_class",
    "validate_ingress_class_update",
    "validate_ingress_status_update",
    "validate_ingress_update",
    "validate_network_policy",
    "validate_network_policy_update",
]

_ANNOTATION_INGRESS_CLASS = "kubernetes.io/ingress.class"
_PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]
_INVALID_PATH_SEQUENCES = ["//", "/./", "/../", "%2f", "%2F"]
_INVALID_PATH_SUFFIXES = ["/..", "/."]
_PROTOCOLS = ["TCP", "UDP", "SCTP"]
_SCOPES = ["Cluster", "Namespace"]


def _d(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _path_segment_name(name: str) -> list[str]:
    """Upstream C{path.IsValidPathSegmentName}."""
    msgs: list[str] = []
    if name in (".", ".."):
        msgs.append(f"may not be '{name}'")
    msgs.extend(f"may not contain '{bad}'" for bad in ("/", "%") if bad in name)
    return msgs


# --- defaults ---------------------------------------------------------------------------------


def default_ingress(ing: dict) -> None:
    """A Go round trip always prints C{status.loadBalancer} (an empty struct)."""
    status = ing.get("status")
    if not isinstance(status, dict):
        status = ing["status"] = {}
    if not isinstance(status.get("loadBalancer"), dict):
        status["loadBalancer"] = {}
    if not isinstance(ing.get("spec"), dict):
        ing["spec"] = {}


def default_network_policy(np: dict) -> None:
    """
    Upstream C{SetDefaults_NetworkPolicy}: C{policyTypes} C{[Ingress]} (plus C{Egress} when
    C{egress} is non-empty) when unset; every port's C{protocol} C{TCP}; C{podSelector} always
    printed (C{{}}).
    """
    spec = np.get("spec")
    if not isinstance(spec, dict):
        spec = np["spec"] = {}
    if not isinstance(spec.get("podSelector"), dict):
        spec["podSelector"] = {}
    for key in ("ingress", "egress"):
        for rule in spec.get(key) or []:
            for port in _d(rule).get("ports") or []:
                if isinstance(port, dict) and port.get("protocol") is None:
                    port["protocol"] = "TCP"
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress"] + (["Egress"] if spec.get("egress") else [])


def default_ingress_class(ic: dict) -> None:
    """Upstream C{SetDefaults_IngressClass}: C{parameters.scope} C{Cluster} when unset."""
    spec = ic.get("spec")
    if not isinstance(spec, dict):
        spec = ic["spec"] = {}
    params = spec.get("parameters")
    if isinstance(params, dict) and params.get("scope") is None:
        params["scope"] = "Cluster"


# --- network policies -------------------------------------------------------------------------


def _validate_np_port(port: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateNetworkPolicyPort}."""
    errs: list[FieldError] = []
    proto = port.get("protocol")
    if proto is not None and proto not in _PROTOCOLS:
        errs.append(not_supported(path.child("protocol"), proto, _PROTOCOLS))
    num, end = port.get("port"), port.get("endPort")
    if num is not None:
        if isinstance(num, int):
            errs.extend(invalid(path.child("port"), num, m) for m in is_valid_port_num(num))
            if end is not None:
                if end < num:
                    errs.append(invalid(path.child("endPort"), end,
                                        "must be greater than or equal to `port`"))
                errs.extend(invalid(path.child("endPort"), end, m) for m in is_valid_port_num(end))
        else:
            if end is not None:
                errs.append(invalid(path.child("endPort"), end,
                                    "may not be specified when `port` is non-numeric"))
            errs.extend(invalid(path.child("port"), num, m) for m in is_valid_port_name(num))
    elif end is not None:
        errs.append(invalid(path.child("endPort"), end,
                            "may not be specified when `port` is not specified"))
    return errs


def _validate_ip_block(ipb: dict, path: Path, allowed: list[str]) -> list[FieldError]:
    """Upstream C{ValidateIPBlock}: a valid C{cidr}; each C{except} a strict subset of it."""
    cidr = ipb.get("cidr") or ""
    if not cidr:
        return [required(path.child("cidr"))]
    errs: list[FieldError] = []
    if cidr not in allowed:
        errs.extend(invalid(path.child("cidr"), cidr, m) for m in is_valid_cidr(cidr))
    try:
        net = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return errs
    for i, exc in enumerate(ipb.get("except") or []):
        epath = path.child("except").index(i)
        if exc not in allowed:
            errs.extend(invalid(epath, exc, m) for m in is_valid_cidr(exc))
        try:
            enet = ipaddress.ip_network(exc, strict=False)
        except ValueError:
            continue
        if (enet.version != net.version or enet.network_address not in net
                or net.prefixlen >= enet.prefixlen):
            errs.append(invalid(epath, exc, "must be a strict subset of `cidr`"))
    return errs


def _validate_peer(peer: dict, path: Path, allow_invalid: bool,
                   cidrs: list[str]) -> list[FieldError]:
    """Upstream C{ValidateNetworkPolicyPeer}: exactly one kind of peer, or selectors only."""
    errs: list[FieldError] = []
    count = 0
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            count += 1
            errs.extend(validate_label_selector(peer[key], path.child(key), allow_invalid))
    if peer.get("ipBlock") is not None:
        count += 1
        errs.extend(_validate_ip_block(_d(peer["ipBlock"]), path.child("ipBlock"), cidrs))
    if count == 0:
        errs.append(required(path, "must specify a peer"))
    elif count > 1 and peer.get("ipBlock") is not None:
        errs.append(forbidden(path, "may not specify both ipBlock and another peer"))
    return errs


def _validate_np_spec(spec: dict, path: Path, allow_invalid: bool = False,
                      cidrs: list[str] | None = None) -> list[FieldError]:
    """Upstream C{ValidateNetworkPolicySpec}."""
    cidrs = cidrs or []
    errs = validate_label_selector(spec.get("podSelector") or {}, path.child("podSelector"),
                                   allow_invalid)
    for key, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(spec.get(key) or []):
            rpath = path.child(key).index(i)
            rule = _d(rule)
            for j, port in enumerate(rule.get("ports") or []):
                errs.extend(_validate_np_port(_d(port), rpath.child("ports").index(j)))
            for j, peer in enumerate(rule.get(peers) or []):
                errs.extend(_validate_peer(_d(peer), rpath.child(peers).index(j),
                                           allow_invalid, cidrs))
    types = spec.get("policyTypes") or []
    if len(types) > 2:
        errs.append(invalid(path.child("policyTypes"), types,
                            "may not specify more than two policyTypes"))
        return errs
    for i, ptype in enumerate(types):
        if ptype not in ("Ingress", "Egress"):
            errs.append(not_supported(path.child("policyTypes").index(i), ptype,
                                      ["Ingress", "Egress"]))
    return errs


def validate_network_policy(np: dict) -> list[FieldError]:
    """Upstream C{ValidateNetworkPolicy}: ObjectMeta (DNS subdomain name) and the spec."""
    errs = validate_object_meta(_d(np.get("metadata")), True, name_is_dns_subdomain,
                                Path("metadata"))
    errs.extend(_validate_np_spec(_d(np.get("spec")), Path("spec")))
    return errs


def validate_network_policy_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateNetworkPolicyUpdate}: metadata update rules and the spec, tolerating
    invalid selector label values and CIDRs the stored object already had.
    """
    ospec = _d(old.get("spec"))
    allow_invalid = bool(validate_label_selector(ospec.get("podSelector") or {}, Path("x")))
    cidrs: list[str] = []
    for key, peers in (("ingress", "from"), ("egress", "to")):
        for rule in ospec.get(key) or []:
            for peer in _d(rule).get(peers) or []:
                ipb = _d(_d(peer).get("ipBlock"))
                if ipb:
                    cidrs.append(ipb.get("cidr") or "")
                    cidrs.extend(ipb.get("except") or [])
    errs = validate_object_meta_update(_d(new.get("metadata")), _d(old.get("metadata")),
                                       Path("metadata"))
    errs.extend(_validate_np_spec(_d(new.get("spec")), Path("spec"), allow_invalid, cidrs))
    return errs


# --- ingresses --------------------------------------------------------------------------------


def _validate_local_ref(ref: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateIngressTypedLocalObjectReference}."""
    errs: list[FieldError] = []
    if ref.get("apiGroup") is not None:
        errs.extend(invalid(path.child("apiGroup"), ref["apiGroup"], m)
                    for m in is_dns1123_subdomain(ref["apiGroup"]))
    for key in ("kind", "name"):
        value = ref.get(key) or ""
        if not value:
            errs.append(required(path.child(key)))
        else:
            errs.extend(invalid(path.child(key), value, m) for m in _path_segment_name(value))
    return errs


def _validate_backend(backend: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateIngressBackend}: exactly one of C{resource} and C{service}."""
    has_res, has_svc = backend.get("resource") is not None, backend.get("service") is not None
    if has_res and has_svc:
        return [invalid(path, "", "cannot set both resource and service backends")]
    if has_res:
        return _validate_local_ref(_d(backend["resource"]), path.child("resource"))
    if not has_svc:
        return [invalid(path, "", "resource or service backend is required")]
    errs: list[FieldError] = []
    svc = _d(backend["service"])
    name = svc.get("name") or ""
    if not name:
        errs.append(required(path.child("service", "name")))
    else:
        errs.extend(invalid(path.child("service", "name"), name, m)
                    for m in name_is_dns1035_label(name, False))
    port = _d(svc.get("port"))
    pname, pnum = port.get("name") or "", port.get("number") or 0
    if pname and pnum:
        errs.append(invalid(path, "", "cannot set both port name & port number"))
    elif pname:
        errs.extend(invalid(path.child("service", "port", "name"), pname, m)
                    for m in is_valid_port_name(pname))
    elif pnum:
        errs.extend(invalid(path.child("service", "port", "number"), pnum, m)
                    for m in is_valid_port_num(pnum))
    else:
        errs.append(required(path, "port name or number is required"))
    return errs


def _validate_http_path(hp: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateHTTPIngressPath}: C{pathType} required, the path's shape, backend."""
    ptype = hp.get("pathType")
    if ptype is None:
        return [required(path.child("pathType"), "pathType must be specified")]
    errs: list[FieldError] = []
    value = hp.get("path") or ""
    if ptype in ("Exact", "Prefix"):
        if not value.startswith("/"):
            errs.append(invalid(path.child("path"), value, "must be an absolute path"))
        if value:
            errs.extend(invalid(path.child("path"), value, f"must not contain '{seq}'")
                        for seq in _INVALID_PATH_SEQUENCES if seq in value)
            errs.extend(invalid(path.child("path"), value, f"cannot end with '{suf}'")
                        for suf in _INVALID_PATH_SUFFIXES if value.endswith(suf))
    elif ptype == "ImplementationSpecific":
        if value and not value.startswith("/"):
            errs.append(invalid(path.child("path"), value, "must be an absolute path"))
    else:
        errs.append(not_supported(path.child("pathType"), ptype, _PATH_TYPES))
    errs.extend(_validate_backend(_d(hp.get("backend")), path.child("backend")))
    return errs


def _validate_rule_value(rule: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateIngressRuleValue}/C{validateHTTPIngressRuleValue}."""
    http = rule.get("http")
    if http is None:
        return []
    http = _d(http)
    hpath = path.child("http")
    errs: list[FieldError] = []
    paths = http.get("paths") or []
    if not paths:
        errs.append(required(hpath.child("paths")))
    for i, hp in enumerate(paths):
        errs.extend(_validate_http_path(_d(hp), hpath.child("paths").index(i)))
    return errs


def _host_errors(host: str, path: Path) -> list[FieldError]:
    fn = is_wildcard_dns1123_subdomain if "*" in host else is_dns1123_subdomain
    return [invalid(path, host, m) for m in fn(host)]


def _validate_ingress_spec(spec: dict, path: Path, allow_bad_secret: bool,
                           allow_wildcard: bool) -> list[FieldError]:
    """Upstream C{ValidateIngressSpec}."""
    errs: list[FieldError] = []
    rules = spec.get("rules") or []
    if not rules and spec.get("defaultBackend") is None:
        # Go prints the (empty) internal slice with %#v.
        shown = "[]networking.IngressRule{}" if isinstance(spec.get("rules"), list) \
            else "[]networking.IngressRule(nil)"
        errs.append(GoValueError("Invalid", path, shown,
                                 "either `defaultBackend` or `rules` must be specified"))
    if spec.get("defaultBackend") is not None:
        errs.extend(_validate_backend(_d(spec["defaultBackend"]), path.child("defaultBackend")))
    for i, rule in enumerate(rules):
        rule = _d(rule)
        rpath = path.child("rules").index(i)
        host = rule.get("host") or ""
        wildcard = False
        if host:
            if _parse_ip_sloppy(host) is not None:
                errs.append(invalid(rpath.child("host"), host,
                                    "must be a DNS name, not an IP address"))
            wildcard = "*" in host
            errs.extend(_host_errors(host, rpath.child("host")))
        if not wildcard or not allow_wildcard:
            errs.extend(_validate_rule_value(rule, rpath))
    for i, tls in enumerate(spec.get("tls") or []):
        tls = _d(tls)
        tpath = path.child("tls").index(i)
        for j, host in enumerate(tls.get("hosts") or []):
            errs.extend(_host_errors(host, tpath.child("hosts").index(j)))
        secret = tls.get("secretName") or ""
        if not allow_bad_secret and secret:
            errs.extend(invalid(tpath.child("secretName"), secret, m)
                        for m in name_is_dns_subdomain(secret, False))
    cls = spec.get("ingressClassName")
    if cls is not None:
        errs.extend(invalid(path.child("ingressClassName"), cls, m)
                    for m in name_is_dns_subdomain(cls, False))
    return errs


def validate_ingress(ing: dict) -> list[FieldError]:
    """
    Upstream C{ValidateIngressCreate}: ObjectMeta (DNS subdomain name), the spec, and the
    legacy C{kubernetes.io/ingress.class} annotation matching C{ingressClassName}.
    """
    meta = _d(ing.get("metadata"))
    spec = _d(ing.get("spec"))
    errs = validate_object_meta(meta, True, name_is_dns_subdomain, Path("metadata"))
    errs.extend(_validate_ingress_spec(spec, Path("spec"), False, False))
    annotations = _d(meta.get("annotations"))
    cls = spec.get("ingressClassName")
    if _ANNOTATION_INGRESS_CLASS in annotations and cls is not None \
            and annotations[_ANNOTATION_INGRESS_CLASS] != cls:
        errs.append(invalid(Path("annotations").child(_ANNOTATION_INGRESS_CLASS),
                            annotations[_ANNOTATION_INGRESS_CLASS],
                            "must match `ingressClassName` when both are specified"))
    return errs


def validate_ingress_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateIngressUpdate}: metadata update rules and the spec, tolerating invalid
    TLS secret names and invalid wildcard-host rules the stored object already had.
    """
    ospec = _d(old.get("spec"))
    bad_secret = any(name_is_dns_subdomain(_d(t).get("secretName") or "", False)
                     for t in ospec.get("tls") or [] if _d(t).get("secretName"))
    wildcard = any("*" in (_d(r).get("host") or "") and _validate_rule_value(_d(r), Path("x"))
                   for r in ospec.get("rules") or [])
    errs = validate_object_meta_update(_d(new.get("metadata")), _d(old.get("metadata")),
                                       Path("metadata"))
    errs.extend(validate_object_meta(_d(new.get("metadata")), True, name_is_dns_subdomain,
                                     Path("metadata")))
    errs.extend(_validate_ingress_spec(_d(new.get("spec")), Path("spec"), bad_secret, wildcard))
    return errs


def validate_ingress_status_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateIngressStatusUpdate}: metadata update rules; each
    C{status.loadBalancer.ingress[]} C{ip} a valid IP (unless already stored) and C{hostname}
    a DNS subdomain, not an IP.
    """
    errs = validate_object_meta_update(_d(new.get("metadata")), _d(old.get("metadata")),
                                       Path("metadata"))
    old_ips = [_d(i).get("ip") for i in _d(_d(old.get("status")).get("loadBalancer"))
               .get("ingress") or [] if _d(i).get("ip")]
    path = Path("status", "loadBalancer", "ingress")
    for i, lb in enumerate(_d(_d(new.get("status")).get("loadBalancer")).get("ingress") or []):
        lb = _d(lb)
        ip, host = lb.get("ip") or "", lb.get("hostname") or ""
        if ip and ip not in old_ips:
            errs.extend(invalid(path.index(i).child("ip"), ip, m) for m in is_valid_ip(ip))
        if host:
            errs.extend(invalid(path.index(i).child("hostname"), host, m)
                        for m in is_dns1123_subdomain(host))
            if _parse_ip_sloppy(host) is not None:
                errs.append(invalid(path.index(i).child("hostname"), host,
                                    "must be a DNS name, not an IP address"))
    return errs


# --- ingress classes --------------------------------------------------------------------------


def _validate_params(params: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateIngressClassParametersReference}."""
    errs = _validate_local_ref(params, path)
    scope = params.get("scope")
    if scope is None:
        errs.append(required(path.child("scope")))
        return errs
    if scope not in _SCOPES:
        errs.append(not_supported(path.child("scope"), scope, _SCOPES))
    elif scope == "Namespace":
        ns = params.get("namespace")
        if ns is None:
            errs.append(required(path.child("namespace"),
                                 "`parameters.scope` is set to 'Namespace'"))
        else:
            errs.extend(invalid(path.child("namespace"), ns, m)
                        for m in name_is_dns_label(ns, False))
    elif params.get("namespace") is not None:
        errs.append(forbidden(path.child("namespace"), "`parameters.scope` is set to 'Cluster'"))
    return errs


def validate_ingress_class(ic: dict) -> list[FieldError]:
    """
    Upstream C{ValidateIngressClass}: cluster-scoped ObjectMeta, C{controller} required, at
    most 250 characters and a domain-prefixed path, and the C{parameters} reference.
    """
    errs = validate_object_meta(_d(ic.get("metadata")), False, name_is_dns_subdomain,
                                Path("metadata"))
    spec = _d(ic.get("spec"))
    path = Path("spec")
    controller = spec.get("controller") or ""
    if not controller:
        errs.append(required(path.child("controller")))
    else:
        if len(controller) > 250:
            errs.append(too_long(path.child("controller"), "", 250))
        errs.extend(is_domain_prefixed_path(path.child("controller"), controller))
    if spec.get("parameters") is not None:
        errs.extend(_validate_params(_d(spec["parameters"]), path.child("parameters")))
    return errs


def validate_ingress_class_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateIngressClassUpdate}: metadata rules, C{controller} immutable."""
    errs = validate_object_meta_update(_d(new.get("metadata")), _d(old.get("metadata")),
                                       Path("metadata"))
    errs.extend(validate_immutable_field(_d(new.get("spec")).get("controller") or "",
                                         _d(old.get("spec")).get("controller") or "",
                                         Path("spec", "controller")))
    errs.extend(validate_ingress_class(new))
    return errs
