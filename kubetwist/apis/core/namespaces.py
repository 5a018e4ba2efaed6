# -*- test-case-name: tests.apis.test_core_namespaces -*-
"""
Namespaces: upstream C{pkg/apis/core/v1/defaults.go} (C{SetDefaults_Namespace},
C{SetDefaults_NamespaceStatus}), C{pkg/apis/core/validation} (C{ValidateNamespace*}) and
C{pkg/registry/core/namespace/strategy.go} (main, C{status} and C{finalize} strategies).

Every namespace carries the label C{kubernetes.io/metadata.name} equal to its name: set by
defaulting when the name is known and again by the strategy (upstream C{Canonicalize}) once a
generated name has been chosen.
"""

from __future__ import annotations

import copy

from kubetwist.apimachinery.validation import (
    validate_finalizer_name,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.common import validate_namespace_name
from kubetwist.apis.core.printers import NAMESPACE_TABLE
from kubetwist.registry.rest import Strategy
from kubetwist.runtime.field import FieldError, Path, invalid

__all__ = [
    "FINALIZER_KUBERNETES",
    "LABEL_METADATA_NAME",
    "NAMESPACE_FINALIZE_STRATEGY",
    "NAMESPACE_STATUS_STRATEGY",
    "NAMESPACE_STRATEGY",
    "canonicalize_namespace",
    "default_namespace",
    "namespace_field_attrs",
    "prepare_namespace_for_create",
    "prepare_namespace_for_update",
    "validate_namespace",
    "validate_namespace_finalize_update",
    "validate_namespace_status_update",
    "validate_namespace_update",
]

#: Upstream C{v1.LabelMetadataName}.
LABEL_METADATA_NAME = "kubernetes.io/metadata.name"
#: Upstream C{api.FinalizerKubernetes}.
FINALIZER_KUBERNETES = "kubernetes"
#: Upstream C{helper.IsStandardFinalizerName}'s set.
_STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def canonicalize_namespace(ns: dict) -> None:
    """
    Upstream namespace C{Canonicalize}: C{metadata.labels["kubernetes.io/metadata.name"]} is
    the name.  Call after a generated name has been filled in; a nameless object is left as is.
    """
    meta = ns.setdefault("metadata", {})
    name = meta.get("name") or ""
    if not name:
        return
    labels = meta.get("labels")
    if not isinstance(labels, dict):
        labels = meta["labels"] = {}
    labels[LABEL_METADATA_NAME] = name


def default_namespace(ns: dict) -> None:
    """
    Upstream C{SetObjectDefaults_Namespace}: the metadata-name label when the name is known,
    C{status.phase} C{Active} when empty.
    """
    canonicalize_namespace(ns)
    status = ns.get("status")
    if not isinstance(status, dict):
        status = ns["status"] = {}
    if not status.get("phase"):
        status["phase"] = "Active"


def _set_finalizers(ns: dict, finalizers: list | None) -> None:
    spec = ns.get("spec")
    if not isinstance(spec, dict):
        spec = ns["spec"] = {}
    if finalizers:
        spec["finalizers"] = list(finalizers)
    else:
        spec.pop("finalizers", None)


def prepare_namespace_for_create(ns: dict) -> None:
    """
    Upstream C{PrepareForCreate}: C{status} is C{{"phase": "Active"}} and C{spec.finalizers}
    gains C{kubernetes} when missing (appended after the user's finalizers).
    """
    ns["status"] = {"phase": "Active"}
    finalizers = list((ns.get("spec") or {}).get("finalizers") or [])
    if FINALIZER_KUBERNETES not in finalizers:
        finalizers.append(FINALIZER_KUBERNETES)
    _set_finalizers(ns, finalizers)
    canonicalize_namespace(ns)


def prepare_namespace_for_update(new: dict, old: dict) -> None:
    """
    Upstream C{PrepareForUpdate}: C{spec.finalizers} and C{status} are kept from C{old} (they
    change only through C{/finalize} and C{/status}).
    """
    _set_finalizers(new, (old.get("spec") or {}).get("finalizers"))
    new["status"] = copy.deepcopy(old.get("status") or {})
    canonicalize_namespace(new)


def _prepare_status_update(new: dict, old: dict) -> None:
    """Status strategy: the spec is kept from C{old}."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})
    canonicalize_namespace(new)


def _prepare_finalize_update(new: dict, old: dict) -> None:
    """Finalize strategy: the status is kept from C{old}."""
    new["status"] = copy.deepcopy(old.get("status") or {})
    if not isinstance(new.get("spec"), dict):
        new["spec"] = {}
    canonicalize_namespace(new)


def _validate_finalizer_name(name: str, path: Path) -> list[FieldError]:
    """Upstream C{validateFinalizerName}: qualified name, and standard unless it has a C{/}."""
    errs = validate_finalizer_name(name, path)
    if "/" not in name and name not in _STANDARD_FINALIZERS:
        errs.append(
            invalid(
                path, name, "name is neither a standard finalizer name nor is it fully qualified"
            )
        )
    return errs


def validate_namespace(ns: dict) -> list[FieldError]:
    """
    Upstream C{ValidateNamespace}: ObjectMeta (cluster-scoped, DNS-1123 label name), then each
    of C{spec.finalizers} (errors at C{spec.finalizers}, without index, as upstream).
    """
    errs = validate_object_meta(
        ns.get("metadata") or {}, False, validate_namespace_name, Path("metadata")
    )
    for f in (ns.get("spec") or {}).get("finalizers") or []:
        errs.extend(_validate_finalizer_name(f, Path("spec", "finalizers")))
    return errs


def validate_namespace_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream strategy C{ValidateUpdate}: L{validate_namespace}, then ObjectMeta update rules."""
    errs = validate_namespace(new)
    errs.extend(
        validate_object_meta_update(
            new.get("metadata") or {}, old.get("metadata") or {}, Path("metadata")
        )
    )
    return errs


def validate_namespace_status_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateNamespaceStatusUpdate}: phase C{Active} unless being deleted, then
    C{Terminating} (the path is C{status.Phase}, capitalised, as upstream).
    """
    errs = validate_object_meta_update(
        new.get("metadata") or {}, old.get("metadata") or {}, Path("metadata")
    )
    phase = (new.get("status") or {}).get("phase") or ""
    if (new.get("metadata") or {}).get("deletionTimestamp") is None:
        if phase != "Active":
            errs.append(
                invalid(
                    Path("status", "Phase"),
                    phase,
                    "may only be 'Active' if `deletionTimestamp` is empty",
                )
            )
    elif phase != "Terminating":
        errs.append(
            invalid(
                Path("status", "Phase"),
                phase,
                "may only be 'Terminating' if `deletionTimestamp` is not empty",
            )
        )
    return errs


def validate_namespace_finalize_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateNamespaceFinalizeUpdate}: each finalizer, at C{spec.finalizers[i]}."""
    errs = validate_object_meta_update(
        new.get("metadata") or {}, old.get("metadata") or {}, Path("metadata")
    )
    path = Path("spec", "finalizers")
    for i, f in enumerate((new.get("spec") or {}).get("finalizers") or []):
        errs.extend(_validate_finalizer_name(f, path.index(i)))
    return errs


def namespace_field_attrs(ns: dict) -> dict[str, str]:
    """
    Upstream C{NamespaceToSelectableFields}: C{status.phase} and (a kept bug) C{name}.
    """
    return {
        "status.phase": (ns.get("status") or {}).get("phase") or "",
        "name": (ns.get("metadata") or {}).get("name") or "",
    }


NAMESPACE_STRATEGY = Strategy(
    kind="Namespace",
    namespaced=False,
    default=default_namespace,
    prepare_for_create=prepare_namespace_for_create,
    prepare_for_update=prepare_namespace_for_update,
    validate=validate_namespace,
    validate_update=validate_namespace_update,
    field_attrs=namespace_field_attrs,
    table=NAMESPACE_TABLE,
    canonicalize=canonicalize_namespace,
    allow_create_on_update=False,
    allow_unconditional_update=True,
    subresource_verbs=("update",),
)

NAMESPACE_STATUS_STRATEGY = Strategy(
    kind="Namespace",
    namespaced=False,
    default=default_namespace,
    prepare_for_create=prepare_namespace_for_create,
    prepare_for_update=_prepare_status_update,
    validate=validate_namespace,
    validate_update=validate_namespace_status_update,
    field_attrs=namespace_field_attrs,
    table=NAMESPACE_TABLE,
    allow_create_on_update=False,
    allow_unconditional_update=True,
)

NAMESPACE_FINALIZE_STRATEGY = Strategy(
    kind="Namespace",
    namespaced=False,
    default=default_namespace,
    prepare_for_create=prepare_namespace_for_create,
    prepare_for_update=_prepare_finalize_update,
    validate=validate_namespace,
    validate_update=validate_namespace_finalize_update,
    field_attrs=namespace_field_attrs,
    table=NAMESPACE_TABLE,
    allow_create_on_update=False,
    allow_unconditional_update=True,
)
