# -*- test-case-name: tests.apiextensions.test_customresources -*-
"""
The one seam between the custom-resource serving code and the structural-schema engine
(L{kubetwist.apiextensions.schema} and L{kubetwist.apiextensions.schema.cel}: upstream
C{pkg/apiserver/schema}, C{pkg/apiserver/validation}, C{pkg/apiserver/schema/cel}).

The engine caches compiled schemas by the schema dict's identity; a CRD object is never
mutated once read, so the schema dicts taken from it are stable.  CEL validators are cached
here the same way (compiling rules is the expensive part).
"""

from __future__ import annotations

from typing import Any

from kubetwist.apiextensions import schema as engine
from kubetwist.apiextensions.schema import cel
from kubetwist.runtime import field as fe
from kubetwist.runtime.field import FieldError, Path

_CEL_CACHE: dict[int, tuple[dict, Any]] = {}
_CEL_CACHE_SIZE = 256


# --- CRD-time checks ----------------------------------------------------------------------------
def structural_errors(schema: dict, path: Path) -> list[FieldError]:
    """Upstream C{NewStructural} + C{ValidateStructural} + C{ValidateDefaults} of one
    C{openAPIV3Schema} at C{path}; a schema C{NewStructural} refuses is one C{Invalid} error
    at C{path} (upstream's C{structuralSchemaInitErrs})."""
    try:
        errs = list(engine.structural_errors(schema, path))
    except engine.UnsupportedSchemaError as e:
        return [fe.invalid(path, "", str(e))]
    if not errs:
        errs = list(engine.validate_schema_defaults(schema, path))
    return errs


def compile_rules(schema: dict, path: Path) -> list[FieldError]:
    """Compile every C{x-kubernetes-validations} rule (CEL) of C{schema}; compile errors."""
    return list(cel.compile_rules(schema, path))


# --- per-object operations ----------------------------------------------------------------------
def validate(obj: Any, schema: dict | None, path_prefix: str = "",
             old: Any = None) -> list[FieldError]:
    """Schema validation of C{obj} (the value at C{path_prefix}) against C{schema}; with
    C{old}, upstream's update rules (existing list-type duplicates do not block)."""
    if not schema:
        return []
    if old is not None:
        return list(engine.validate_custom_resource_update(obj, old, schema, path_prefix))
    return list(engine.validate_custom_resource(obj, schema, path_prefix))


def _cel_validator(schema: dict) -> Any:
    key = id(schema)
    hit = _CEL_CACHE.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    validator = cel.CELValidator(schema)
    if len(_CEL_CACHE) >= _CEL_CACHE_SIZE:
        _CEL_CACHE.pop(next(iter(_CEL_CACHE)))
    _CEL_CACHE[key] = (schema, validator)
    return validator


def has_rules(schema: dict | None) -> bool:
    """Whether C{schema} holds any C{x-kubernetes-validations} rule (upstream
    C{cel.NewValidator} returns nil when there is none)."""
    return bool(schema) and _cel_validator(schema).has_rules


def validate_rules(schema: dict | None, obj: dict, old: dict | None) -> list[FieldError]:
    """CEL C{x-kubernetes-validations} of C{obj} (C{oldSelf} from C{old} on updates)."""
    if not schema:
        return []
    validator = _cel_validator(schema)
    if not validator.has_rules:
        return []
    return list(validator.validate(obj, old))


def prune(obj: Any, schema: dict | None, is_resource_root: bool = True) -> list[str]:
    """Upstream's decoder: drop fields C{schema} does not specify and non-nullable nulls,
    in place; returns the dotted paths of unknown fields dropped (for C{fieldValidation})."""
    if not schema:
        return []
    dropped = list(engine.prune(obj, schema, is_resource_root))
    engine.prune_non_nullable_nulls(obj, schema)
    return dropped


def apply_defaults(obj: Any, schema: dict | None) -> None:
    """Set the C{default}s of C{schema} into C{obj}, in place."""
    if schema:
        engine.apply_defaults(obj, schema)
