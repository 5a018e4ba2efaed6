# -*- test-case-name: tests.apis.test_core_nodes -*-
"""
Nodes: upstream C{pkg/apis/core/v1/defaults.go} (C{SetDefaults_NodeStatus}), the v1
C{podCIDR}/C{podCIDRs} conversion of C{pkg/apis/core/v1/conversion.go},
C{pkg/apis/core/validation} (C{ValidateNode}, C{ValidateNodeUpdate}, C{validateNodeTaints},
C{ValidateNodeResources}) and C{pkg/registry/core/node/strategy.go}.

Nodes are cluster-scoped and, unlike most kinds, keep the C{status} written on create.

Not covered yet: the C{scheduler.alpha.kubernetes.io/preferAvoidPods} annotation rules of
C{ValidateNodeSpecificAnnotations}, hugepages capacity rules, C{configSource} validation (the
field is dropped, as upstream does since dynamic kubelet config was removed).
"""

from __future__ import annotations

import copy
import ipaddress

from kubetwist.apimachinery.validation import (
    is_valid_label_value,
    name_is_dns_subdomain,
    validate_cidr,
    validate_label_name,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.podspec_defaults import default_resource_list
from kubetwist.apis.core.podspec_validation import GoValueError, _validate_quantity_value
from kubetwist.apis.core.printers import NODE_TABLE
from kubetwist.registry.rest import Strategy
from kubetwist.runtime.field import (
    FieldError,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)

__all__ = [
    "NODE_STATUS_STRATEGY",
    "NODE_STRATEGY",
    "default_node",
    "node_field_attrs",
    "validate_node",
    "validate_node_update",
]

_TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


def _dict(obj: dict, key: str) -> dict:
    value = obj.get(key)
    if not isinstance(value, dict):
        value = obj[key] = {}
    return value


def default_node(node: dict) -> None:
    """
    Upstream defaulting of a v1 Node: C{status.allocatable} copies C{status.capacity} when
    absent (C{SetDefaults_NodeStatus}); both resource lists are rounded up to milli units; the
    round trip through the internal type keeps C{spec.podCIDR} and C{spec.podCIDRs} in step
    (C{podCIDRs} from a lone C{podCIDR}, C{podCIDR} as the first of C{podCIDRs}).
    """
    spec = _dict(node, "spec")
    status = node.get("status")
    if isinstance(status, dict):
        if status.get("allocatable") is None and isinstance(status.get("capacity"), dict):
            status["allocatable"] = copy.deepcopy(status["capacity"])
        for key in ("capacity", "allocatable"):
            if isinstance(status.get(key), dict):
                default_resource_list(status[key])
    cidrs = spec.get("podCIDRs")
    if not cidrs and spec.get("podCIDR"):
        spec["podCIDRs"] = [spec["podCIDR"]]
    elif cidrs and isinstance(cidrs, list):
        spec["podCIDR"] = cidrs[0]


def _go_taint(taint: dict) -> str:
    """Go's C{%#v} of a C{core.Taint}."""
    import orjson

    def q(v: object) -> str:
        return orjson.dumps(str(v or "")).decode()

    added = taint.get("timeAdded")
    added_text = "(*v1.Time)(nil)" if added is None else q(added)
    return (f"core.Taint{{Key:{q(taint.get('key'))}, Value:{q(taint.get('value'))}, "
            f"Effect:{q(taint.get('effect'))}, TimeAdded:{added_text}}}")


def validate_node_taints(taints: list, path: Path) -> list[FieldError]:
    """
    Upstream C{validateNodeTaints}: each key a label name, each value a label value, an
    effect among C{NoSchedule PreferNoSchedule NoExecute}, and no two taints with the same
    key and effect (C{Duplicate value: ...: taints must be unique by key and effect pair}).
    """
    errs: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        taint = taint if isinstance(taint, dict) else {}
        ip = path.index(i)
        key, value = taint.get("key") or "", taint.get("value") or ""
        effect = taint.get("effect") or ""
        errs.extend(validate_label_name(key, ip.child("key")))
        errs.extend(invalid(ip.child("value"), value, m) for m in is_valid_label_value(value))
        if not effect:
            errs.append(required(ip.child("effect")))
        elif effect not in _TAINT_EFFECTS:
            errs.append(not_supported(ip.child("effect"), effect, _TAINT_EFFECTS))
        if (effect, key) in seen:
            errs.append(GoValueError("Duplicate", ip, _go_taint(taint),
                                     "taints must be unique by key and effect pair"))
            continue
        seen.add((effect, key))
    return errs


def validate_node_resources(node: dict) -> list[FieldError]:
    """Upstream C{ValidateNodeResources}: capacity and allocatable quantities non-negative
    (integers for integer resources), at C{status.capacity.<name>}."""
    errs: list[FieldError] = []
    status = node.get("status") or {}
    for key in ("capacity", "allocatable"):
        resources = status.get(key) or {}
        for name in sorted(resources):
            errs.extend(_validate_quantity_value(name, resources[name],
                                                 Path("status", key, name)))
    return errs


def _family(cidr: str) -> int | None:
    try:
        return ipaddress.ip_network(cidr, strict=False).version
    except ValueError:
        return None


def validate_node(node: dict) -> list[FieldError]:
    """
    Upstream C{ValidateNode}: cluster-scoped ObjectMeta with a DNS-subdomain name, the taints
    (reported under C{metadata.taints}, as upstream does), the resource quantities, and valid
    C{spec.podCIDRs} (at most one per IP family).
    """
    errs = validate_object_meta(node.get("metadata") or {}, False, name_is_dns_subdomain,
                                Path("metadata"))
    spec = node.get("spec") or {}
    if spec.get("taints"):
        errs.extend(validate_node_taints(spec["taints"], Path("metadata", "taints")))
    errs.extend(validate_node_resources(node))
    cidrs = spec.get("podCIDRs") or []
    if cidrs:
        path = Path("spec", "podCIDRs")
        for i, value in enumerate(cidrs):
            errs.extend(validate_cidr(path.index(i), value))
        if len(cidrs) > 1:
            families = [_family(c) for c in cidrs]
            if len(cidrs) > 2 or None in families or families[0] == families[1]:
                import orjson

                text = "[]string{" + ", ".join(orjson.dumps(c).decode() for c in cidrs) + "}"
                errs.append(GoValueError("Invalid", path, text,
                                         "may specify no more than one CIDR for each IP family"))
    return errs


def _go_address(address: dict) -> str:
    import orjson

    def q(v: object) -> str:
        return orjson.dumps(str(v or "")).decode()

    return f"core.NodeAddress{{Type:{q(address.get('type'))}, Address:{q(address.get('address'))}}}"


_CIDR_MSG = 'node updates may not change podCIDR except from "" to valid'


def validate_node_update_only(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateNodeUpdate}: ObjectMeta update rules, resources, no duplicate
    C{status.addresses}, C{spec.podCIDRs} and C{spec.providerID} fixed once set, taints,
    C{spec.externalID} unchanged.
    """
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    errs.extend(validate_node_resources(new))
    seen: list[tuple[str, str]] = []
    for i, address in enumerate((new.get("status") or {}).get("addresses") or []):
        address = address if isinstance(address, dict) else {}
        key = (address.get("type") or "", address.get("address") or "")
        if key in seen:
            errs.append(GoValueError("Duplicate", Path("status", "addresses").index(i),
                                     _go_address(address)))
        seen.append(key)
    nspec, ospec = new.get("spec") or {}, old.get("spec") or {}
    ocidrs, ncidrs = ospec.get("podCIDRs") or [], nspec.get("podCIDRs") or []
    if ocidrs:
        if len(ocidrs) != len(ncidrs):
            errs.append(forbidden(Path("spec", "podCIDRs"), _CIDR_MSG))
        else:
            errs.extend(forbidden(Path("spec", "podCIDRs"), _CIDR_MSG)
                        for o, n in zip(ocidrs, ncidrs, strict=False) if o != n)
    if ospec.get("providerID") and ospec.get("providerID") != nspec.get("providerID"):
        errs.append(forbidden(Path("spec", "providerID"),
                              'node updates may not change providerID except from "" to valid'))
    if nspec.get("taints"):
        errs.extend(validate_node_taints(nspec["taints"], Path("metadata", "taints")))
    if (nspec.get("externalID") or "") != (ospec.get("externalID") or ""):
        errs.append(forbidden(Path("spec", "externalID"), "may not be updated"))
    return errs


def validate_node_update(new: dict, old: dict) -> list[FieldError]:
    """The node strategy's C{ValidateUpdate}: L{validate_node} then C{ValidateNodeUpdate}."""
    return validate_node(new) + validate_node_update_only(new, old)


def prepare_node_for_create(node: dict) -> None:
    """Upstream C{nodeStrategy.PrepareForCreate}: the status is kept; C{spec.configSource}
    is dropped (dynamic kubelet configuration no longer exists)."""
    (node.get("spec") or {}).pop("configSource", None)


def prepare_node_for_update(new: dict, old: dict) -> None:
    """Upstream C{nodeStrategy.PrepareForUpdate}: the stored status is kept; a
    C{spec.configSource} not already stored is dropped."""
    new["status"] = copy.deepcopy(old.get("status") or {})
    if (old.get("spec") or {}).get("configSource") is None:
        (new.get("spec") or {}).pop("configSource", None)


def prepare_node_status_for_update(new: dict, old: dict) -> None:
    """Upstream C{nodeStatusStrategy.PrepareForUpdate}: the stored spec is kept."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})


def node_field_attrs(node: dict) -> dict[str, str]:
    """Upstream C{NodeToSelectableFields}: C{spec.unschedulable} as C{"true"}/C{"false"}."""
    unschedulable = bool((node.get("spec") or {}).get("unschedulable"))
    return {"spec.unschedulable": "true" if unschedulable else "false"}


NODE_STRATEGY = Strategy(
    kind="Node",
    namespaced=False,
    default=default_node,
    prepare_for_create=prepare_node_for_create,
    prepare_for_update=prepare_node_for_update,
    validate=validate_node,
    validate_update=validate_node_update,
    field_attrs=node_field_attrs,
    table=NODE_TABLE,
)

NODE_STATUS_STRATEGY = Strategy(
    kind="Node",
    namespaced=False,
    default=default_node,
    prepare_for_create=prepare_node_for_create,
    prepare_for_update=prepare_node_status_for_update,
    validate=validate_node,
    validate_update=validate_node_update_only,
    field_attrs=node_field_attrs,
    table=NODE_TABLE,
)
