# -*- test-case-name: tests.apis.test_networking -*-
"""
The networking.k8s.io/v1 group-version: upstream C{pkg/registry/networking/rest} (ingresses with
their C{status} subresource, ingressclasses, networkpolicies) and the registry strategies of
C{pkg/registry/networking/{ingress,ingressclass,networkpolicy}/strategy.go}.
"""

from __future__ import annotations

import copy

from kubetwist.apis.networking import validation as v
from kubetwist.apis.networking.printers import (
    INGRESS_CLASS_TABLE,
    INGRESS_TABLE,
    NETWORK_POLICY_TABLE,
)
from kubetwist.registry.rest import ResourceSpec, Strategy

__all__ = ["GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = "networking.k8s.io"
VERSION = "v1"

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "ingressclasses", "IngressClass", "ingressclass",
                 namespaced=False),
    ResourceSpec(GROUP, VERSION, "ingresses", "Ingress", "ingress", short_names=["ing"],
                 subresources=["status"]),
    ResourceSpec(GROUP, VERSION, "networkpolicies", "NetworkPolicy", "networkpolicy",
                 short_names=["netpol"]),
]


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


def _generation_one(obj: dict) -> None:
    """C{PrepareForCreate} of all three strategies: generation 1."""
    _meta(obj)["generation"] = 1


def _bump_generation(new: dict, old: dict) -> None:
    """C{PrepareForUpdate}: generation + 1 when the spec changed."""
    gen = (old.get("metadata") or {}).get("generation") or 0
    _meta(new)["generation"] = gen + 1 if new.get("spec") != old.get("spec") else gen


def _ingress_create(ing: dict) -> None:
    """Upstream C{ingressStrategy.PrepareForCreate}: empty status, generation 1."""
    ing["status"] = {"loadBalancer": {}}
    _generation_one(ing)


def _ingress_update(new: dict, old: dict) -> None:
    """Upstream C{ingressStrategy.PrepareForUpdate}: keep the status; bump the generation."""
    new["status"] = copy.deepcopy(old.get("status") or {"loadBalancer": {}})
    _bump_generation(new, old)


def _ingress_status_update(new: dict, old: dict) -> None:
    """Upstream C{ingressStatusStrategy.PrepareForUpdate}: keep the stored spec."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})


_ING = dict(kind="Ingress", group=GROUP, default=v.default_ingress,
            prepare_for_create=_ingress_create, validate=v.validate_ingress, table=INGRESS_TABLE)

STRATEGIES: dict[str, Strategy] = {
    "ingresses": Strategy(**_ING, prepare_for_update=_ingress_update,
                          validate_update=v.validate_ingress_update),
    "ingresses/status": Strategy(**_ING, prepare_for_update=_ingress_status_update,
                                 validate_update=v.validate_ingress_status_update),
    "ingressclasses": Strategy(kind="IngressClass", group=GROUP, namespaced=False,
                               default=v.default_ingress_class,
                               prepare_for_create=_generation_one,
                               prepare_for_update=_bump_generation,
                               validate=v.validate_ingress_class,
                               validate_update=v.validate_ingress_class_update,
                               table=INGRESS_CLASS_TABLE),
    "networkpolicies": Strategy(kind="NetworkPolicy", group=GROUP,
                                default=v.default_network_policy,
                                prepare_for_create=_generation_one,
                                prepare_for_update=_bump_generation,
                                validate=v.validate_network_policy,
                                validate_update=v.validate_network_policy_update,
                                table=NETWORK_POLICY_TABLE),
}
