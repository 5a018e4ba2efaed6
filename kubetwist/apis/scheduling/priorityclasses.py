# -*- test-case-name: tests.apis.test_scheduling -*-
"""
scheduling.k8s.io/v1 PriorityClasses: upstream C{pkg/apis/scheduling/v1/defaults.go},
C{pkg/apis/scheduling/validation/validation.go}, C{pkg/apis/scheduling/v1/helpers.go}
(C{SystemPriorityClasses}, C{IsKnownSystemPriorityClass}),
C{pkg/registry/scheduling/priorityclass/strategy.go}, the system classes' delete protection of
C{pkg/registry/scheduling/priorityclass/storage/storage.go} and the PriorityClass check of the
C{Priority} admission plugin (C{plugin/pkg/admission/priority}).
"""

from __future__ import annotations

from kubetwist.apimachinery.validation import (
    name_is_dns_subdomain,
    validate_immutable_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.printers import age_column, column, name_column, obj_age, obj_name
from kubetwist.registry.rest import Strategy, TableConvertor
from kubetwist.runtime import errors
from kubetwist.runtime.field import FieldError, Path, forbidden, not_supported, required

__all__ = [
    "HIGHEST_USER_DEFINABLE_PRIORITY",
    "PRIORITY_CLASS_STRATEGY",
    "PRIORITY_CLASS_TABLE",
    "SYSTEM_PRIORITY_CLASS_PREFIX",
    "default_priority_class",
    "forbid_system_priority_class_delete",
    "is_known_system_priority_class",
    "system_priority_classes",
    "validate_priority_class",
    "validate_priority_class_update",
]

#: Upstream C{scheduling.HighestUserDefinablePriority}.
HIGHEST_USER_DEFINABLE_PRIORITY = 1000000000
#: Upstream C{scheduling.SystemPriorityClassPrefix}.
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"

_SYSTEM = (
    ("system-node-critical", 2000001000,
     "Used for system critical pods that must not be moved from their current node."),
    ("system-cluster-critical", 2000000000,
     ("Used for system critical pods that must run in the cluster, but can be moved to another "
     "node if necessary.")),
)


def system_priority_classes() -> list[dict]:
    """
    Upstream C{SystemPriorityClasses()}: fresh v1 C{PriorityClass} dicts for
    C{system-node-critical} (2000001000) and C{system-cluster-critical} (2000000000), as the
    C{scheduling/bootstrap-system-priority-classes} post-start hook creates them.
    """
    return [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": name}, "value": value, "description": description,
         "preemptionPolicy": "PreemptLowerPriority"}
        for name, value, description in _SYSTEM
    ]


def is_known_system_priority_class(name: str, value: int, global_default: bool) -> str:
    """
    Upstream C{IsKnownSystemPriorityClass}: C{""} when C{name} is a system class with its exact
    value and C{globalDefault: false}, else the error text.
    """
    for spc_name, spc_value, _ in _SYSTEM:
        if spc_name == name:
            if spc_value != value:
                return f"value of {name} PriorityClass must be {spc_value}"
            if global_default:
                return f"globalDefault of {name} PriorityClass must be false"
            return ""
    return f"{name} is not a known system priority class"


def default_priority_class(pc: dict) -> None:
    """Upstream C{SetDefaults_PriorityClass}: C{preemptionPolicy: PreemptLowerPriority};
    C{value} has no omitempty and is always printed."""
    if pc.get("preemptionPolicy") is None:
        pc["preemptionPolicy"] = "PreemptLowerPriority"
    pc.setdefault("value", 0)


def _validate_preemption_policy(policy: str, path: Path) -> list[FieldError]:
    """Upstream C{ValidatePreemptionPolicy}."""
    if policy in ("PreemptLowerPriority", "Never"):
        return []
    if policy == "":
        return [required(path)]
    return [not_supported(path, policy, ["PreemptLowerPriority", "Never"])]


def validate_priority_class(pc: dict) -> list[FieldError]:
    """
    Upstream C{ValidatePriorityClass}: DNS-subdomain name; C{system-} names only for the known
    system classes (403-style C{Forbidden} on C{metadata.name}); user values at most
    1000000000; a valid C{preemptionPolicy}.
    """
    meta = pc.get("metadata") or {}
    errs = validate_object_meta(meta, False, name_is_dns_subdomain, Path("metadata"))
    name = meta.get("name") or ""
    value = pc.get("value") or 0
    if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        problem = is_known_system_priority_class(name, value, bool(pc.get("globalDefault")))
        if problem:
            errs.append(forbidden(
                Path("metadata").child("name"),
                f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved "
                f"for system use only. error: {problem}"))
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(forbidden(Path("value"), "maximum allowed value of a user defined priority "
                                             f"is {HIGHEST_USER_DEFINABLE_PRIORITY}"))
    if pc.get("preemptionPolicy") is not None:
        errs.extend(_validate_preemption_policy(pc["preemptionPolicy"],
                                                Path("preemptionPolicy")))
    return errs


def validate_priority_class_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidatePriorityClassUpdate}: ObjectMeta update rules; C{value} (Forbidden
    C{may not be changed in an update.}) and C{preemptionPolicy} (immutable) unchanged.
    """
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    if (new.get("value") or 0) != (old.get("value") or 0):
        errs.append(forbidden(Path("value"), "may not be changed in an update."))
    errs.extend(validate_immutable_field(new.get("preemptionPolicy"),
                                         old.get("preemptionPolicy"), Path("preemptionPolicy")))
    return errs


_DOCS = {
    "value": (
        "value represents the integer value of this priority class. This is the actual "
        "priority that pods receive when they have the name of this class in their pod spec."
    ),
    "globalDefault": (
        "globalDefault specifies whether this PriorityClass should be considered as the "
        "default priority for pods that do not have any priority class. Only one "
        "PriorityClass can be marked as `globalDefault`. However, if more than one "
        "PriorityClasses exists with their `globalDefault` field set to true, the smallest "
        "value of such global default PriorityClasses will be used as the default priority."
    ),
    "preemptionPolicy": (
        "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, "
        "PreemptLowerPriority. Defaults to PreemptLowerPriority if unset."
    ),
}

#: Upstream C{priorityClassColumnDefinitions} / C{printPriorityClass}.
PRIORITY_CLASS_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Value", "integer", _DOCS["value"]),
        column("Global-Default", "boolean", _DOCS["globalDefault"]),
        age_column(),
        column("PreemptionPolicy", "string", _DOCS["preemptionPolicy"]),
    ],
    row=lambda pc: [obj_name(pc), int(pc.get("value") or 0), bool(pc.get("globalDefault")),
                    obj_age(pc), pc.get("preemptionPolicy") or ""],
)

def forbid_system_priority_class_delete(namespace: str, name: str) -> None:
    """
    Upstream C{priorityclass/storage.REST.Delete}: the system classes cannot be deleted.

    @raise StatusError: 403 Forbidden (C{priorityclasses.scheduling.k8s.io "<name>" is
        forbidden: this is a system priority class and cannot be deleted}), before the object
        is even looked up.
    """
    if any(name == spc_name for spc_name, _, _ in _SYSTEM):
        raise errors.new_forbidden("scheduling.k8s.io", "priorityclasses", name,
                                   "this is a system priority class and cannot be deleted")


PRIORITY_CLASS_STRATEGY = Strategy(
    kind="PriorityClass",
    group="scheduling.k8s.io",
    namespaced=False,
    default=default_priority_class,
    validate=validate_priority_class,
    validate_update=validate_priority_class_update,
    table=PRIORITY_CLASS_TABLE,
    veto_delete=forbid_system_priority_class_delete,
)

