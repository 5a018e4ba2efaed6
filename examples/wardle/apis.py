# -*- test-case-name: tests.extension.test_wardle -*-
"""
The C{wardle.example.com/v1alpha1} group: upstream sample-apiserver's
C{pkg/apis/wardle/v1alpha1/defaults.go} and C{conversion.go}, C{pkg/apis/wardle/validation},
and the strategies of C{pkg/registry/wardle/flunder} and C{.../fischer}.

kubetwist keeps objects in their served form, so the internal version's effect is written
out: a C{referenceType} other than C{Flunder} or C{Fischer} converts to nothing internally,
and so neither it nor its C{reference} is stored (L{canonicalize_flunder}); validation errors
name the internal fields (C{spec.flunderReference}, C{spec.fischerReference}), as upstream's
do.  Both kinds print upstream's default table (C{Name}, C{Created At}).
"""

from __future__ import annotations

from examples.wardle import types as wardle_types
from kubetwist.extension import APIGroupInfo, ResourceSpec, new_strategy, register_types
from kubetwist.runtime.field import FieldError, Path, invalid

GROUP = wardle_types.GROUP
VERSION = wardle_types.VERSION

#: Upstream C{FlunderReferenceType} and C{FischerReferenceType}.
FLUNDER_REFERENCE_TYPE = "Flunder"
FISCHER_REFERENCE_TYPE = "Fischer"

RESOURCES = [
    ResourceSpec(GROUP, VERSION, "flunders", "Flunder", "flunder", namespaced=True),
    ResourceSpec(GROUP, VERSION, "fischers", "Fischer", "fischer", namespaced=False),
]


def default_flunder(flunder: dict) -> None:
    """Upstream C{SetDefaults_FlunderSpec}: C{referenceType: Flunder} when a C{reference}
    is set without a type; C{spec} and C{status} are always written (Go structs)."""
    spec = flunder.get("spec")
    if not isinstance(spec, dict):
        spec = flunder["spec"] = {}
    if not isinstance(flunder.get("status"), dict):
        flunder["status"] = {}
    if not spec.get("referenceType") and spec.get("reference"):
        spec["referenceType"] = FLUNDER_REFERENCE_TYPE


def validate_flunder(flunder: dict) -> list[FieldError]:
    """
    Upstream C{ValidateFlunder} on the internal form (C{Convert_v1alpha1_FlunderSpec_To_
    wardle_FlunderSpec} puts C{reference} in C{flunderReference} or C{fischerReference} by
    its type): a type without its reference is C{spec.<type>Reference: Invalid value: "":
    cannot be empty if referenceType is <type>}.
    """
    spec = flunder.get("spec") or {}
    reference_type = spec.get("referenceType")
    errs: list[FieldError] = []
    path = Path("spec")
    if reference_type == FISCHER_REFERENCE_TYPE and not spec.get("reference"):
        errs.append(invalid(path.child("fischerReference"), "",
                            "cannot be empty if referenceType is Fischer"))
    elif reference_type == FLUNDER_REFERENCE_TYPE and not spec.get("reference"):
        errs.append(invalid(path.child("flunderReference"), "",
                            "cannot be empty if referenceType is Flunder"))
    return errs


def canonicalize_flunder(flunder: dict) -> None:
    """The round trip through the internal version: only a C{Flunder} or C{Fischer}
    reference survives it (with its type); anything else is dropped."""
    spec = flunder.setdefault("spec", {})
    flunder.setdefault("status", {})
    if spec.get("referenceType") not in (FLUNDER_REFERENCE_TYPE, FISCHER_REFERENCE_TYPE) \
            or not spec.get("reference"):
        spec.pop("referenceType", None)
        spec.pop("reference", None)


#: Upstream C{flunderStrategy}: namespaced, no unconditional update, no create on update.
FLUNDER_STRATEGY = new_strategy(
    "Flunder", GROUP, namespaced=True, default=default_flunder, validate=validate_flunder,
    canonicalize=canonicalize_flunder)
#: Upstream C{fischerStrategy}: cluster-scoped, nothing to validate but the metadata.
FISCHER_STRATEGY = new_strategy("Fischer", GROUP, namespaced=False)


def group_info() -> APIGroupInfo:
    """The C{wardle.example.com/v1alpha1} group-version, its kinds registered (once)."""
    register_types(wardle_types)
    return APIGroupInfo(GROUP, VERSION, list(RESOURCES),
                        {"flunders": FLUNDER_STRATEGY, "fischers": FISCHER_STRATEGY})
