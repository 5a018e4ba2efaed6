# -*- test-case-name: tests.apis.test_networking -*-
"""
Server-side printing of networking.k8s.io/v1 kinds: upstream C{printIngress},
C{printIngressClass}, C{printNetworkPolicy} and their column definitions in
C{k8s.io/kubernetes/pkg/printers/internalversion/printers.go}.
"""

from __future__ import annotations

from kubetwist.apimachinery.selectors import format_label_selector
from kubetwist.apis.printers import age_column, column, name_column, obj_age, obj_name
from kubetwist.registry.rest import TableConvertor

__all__ = ["INGRESS_CLASS_TABLE", "INGRESS_TABLE", "NETWORK_POLICY_TABLE", "ingress_hosts"]

#: C{NetworkPolicySpec.podSelector} C{SwaggerDoc()} of k8s.io/api networking/v1 v0.32.
_POD_SELECTOR_DOC = (
    "podSelector selects the pods to which this NetworkPolicy object applies. The array of "
    "ingress rules is applied to any pods selected by this field. Multiple network policies "
    "can select the same set of pods. In this case, the ingress rules for each are combined "
    "additively. This field is NOT optional and follows standard label selector semantics. An "
    "empty podSelector matches all pods in this namespace.")


def ingress_hosts(ing: dict) -> str:
    """Upstream C{formatHosts}: at most three hosts then C{+ N more...}; C{*} for none."""
    hosts = [r.get("host") for r in (ing.get("spec") or {}).get("rules") or []
             if isinstance(r, dict) and r.get("host")]
    if not hosts:
        return "*"
    text = ",".join(hosts[:3])
    if len(hosts) > 3:
        text += f" + {len(hosts) - 3} more..."
    return text


def _address(ing: dict) -> str:
    """Upstream C{ingressLoadBalancerStatusStringer} (wide): IPs and hostnames, comma-joined."""
    out = []
    for lb in ((ing.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []:
        lb = lb or {}
        if lb.get("ip"):
            out.append(lb["ip"])
        elif lb.get("hostname"):
            out.append(lb["hostname"])
    return ",".join(out)


def _ingress_row(ing: dict) -> list:
    spec = ing.get("spec") or {}
    ports = "80, 443" if spec.get("tls") else "80"
    return [obj_name(ing), spec.get("ingressClassName") or "<none>", ingress_hosts(ing),
            _address(ing), ports, obj_age(ing)]


INGRESS_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Class", "string", "The name of the IngressClass resource that should be used "
                                  "for additional configuration"),
        column("Hosts", "string", "Hosts that incoming requests are matched against before the "
                                  "ingress rule"),
        column("Address", "string", "Address is a list containing ingress points for the "
                                    "load-balancer"),
        column("Ports", "string", "Ports of TLS configurations that open"),
        age_column(),
    ],
    row=_ingress_row,
)


def _parameters(ic: dict) -> str:
    """Upstream C{printIngressClass}: C{<kind>[.<apiGroup>]/<name>}, or C{<none>}."""
    params = (ic.get("spec") or {}).get("parameters")
    if not isinstance(params, dict):
        return "<none>"
    kind = params.get("kind") or ""
    if params.get("apiGroup"):
        kind = f"{kind}.{params['apiGroup']}"
    return f"{kind}/{params.get('name') or ''}"


INGRESS_CLASS_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Controller", "string", "Controller that is responsible for handling this class"),
        column("Parameters", "string", "A reference to a resource with additional parameters"),
        age_column(),
    ],
    row=lambda ic: [obj_name(ic), (ic.get("spec") or {}).get("controller") or "",
                    _parameters(ic), obj_age(ic)],
)

NETWORK_POLICY_TABLE = TableConvertor(
    columns=[name_column(), column("Pod-Selector", "string", _POD_SELECTOR_DOC), age_column()],
    row=lambda np: [obj_name(np),
                    format_label_selector((np.get("spec") or {}).get("podSelector") or {}),
                    obj_age(np)],
)
