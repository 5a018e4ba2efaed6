# -*- test-case-name: tests.apis.test_node -*-
"""
node.k8s.io/v1 RuntimeClasses: upstream C{pkg/apis/node/validation/validation.go} and
C{pkg/registry/node/runtimeclass/strategy.go} (C{PodOverhead} is GA: overhead is kept).
"""

from __future__ import annotations

from kubetwist.apimachinery.validation import (
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_immutable_field,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.pod_warnings import runtime_class_warnings
from kubetwist.apis.core.podspec_validation import (
    validate_resource_requirements,
    validate_tolerations,
)
from kubetwist.apis.printers import age_column, column, name_column, obj_age, obj_name
from kubetwist.registry.rest import Strategy, TableConvertor
from kubetwist.runtime.field import FieldError, Path, invalid
from kubetwist.runtime.quantity import canonical_quantity

__all__ = [
    "RUNTIME_CLASS_STRATEGY",
    "RUNTIME_CLASS_TABLE",
    "default_runtime_class",
    "validate_runtime_class",
    "validate_runtime_class_update",
]


def default_runtime_class(rc: dict) -> None:
    """C{handler} has no omitempty (always printed); C{overhead.podFixed} quantities take
    their canonical form."""
    rc.setdefault("handler", "")
    fixed = (rc.get("overhead") or {}).get("podFixed")
    if isinstance(fixed, dict):
        for k in list(fixed):
            fixed[k] = canonical_quantity(fixed[k])


def validate_runtime_class(rc: dict) -> list[FieldError]:
    """
    Upstream C{ValidateRuntimeClass}: DNS-subdomain name, a DNS-label C{handler}, the overhead
    as container resource limits (errors under C{overhead.limits}), and C{scheduling}'s node
    selector labels and tolerations.
    """
    errs = validate_object_meta(rc.get("metadata") or {}, False, name_is_dns_subdomain,
                                Path("metadata"))
    handler = rc.get("handler") or ""
    errs.extend(invalid(Path("handler"), handler, m) for m in name_is_dns_label(handler, False))
    overhead = rc.get("overhead")
    if overhead is not None:
        errs.extend(validate_resource_requirements({"limits": (overhead or {}).get("podFixed")},
                                                   Path("overhead")))
    sched = rc.get("scheduling")
    if sched is not None:
        sched = sched or {}
        sp = Path("scheduling")
        if sched.get("nodeSelector") is not None:
            errs.extend(validate_labels(sched.get("nodeSelector"), sp.child("nodeSelector")))
        errs.extend(validate_tolerations(sched.get("tolerations"), sp.child("tolerations")))
    return errs


def validate_runtime_class_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateRuntimeClassUpdate}: ObjectMeta update rules, C{handler} immutable."""
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    errs.extend(validate_immutable_field(new.get("handler") or "", old.get("handler") or "",
                                         Path("handler")))
    return errs


#: Upstream C{runtimeClassColumnDefinitions}; the Handler column cites
#: C{ObjectMeta.SwaggerDoc()["handler"]}, which does not exist: its description is empty.
RUNTIME_CLASS_TABLE = TableConvertor(
    columns=[name_column(), column("Handler", "string", ""), age_column()],
    row=lambda rc: [obj_name(rc), rc.get("handler") or "", obj_age(rc)],
)

RUNTIME_CLASS_STRATEGY = Strategy(
    kind="RuntimeClass",
    group="node.k8s.io",
    namespaced=False,
    default=default_runtime_class,
    validate=validate_runtime_class,
    validate_update=validate_runtime_class_update,
    table=RUNTIME_CLASS_TABLE,
    warnings=runtime_class_warnings,
    allow_unconditional_update=False,  # upstream AllowUnconditionalUpdate() false
)
