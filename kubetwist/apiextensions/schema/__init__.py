# -*- test-case-name: tests.apiextensions.test_schema_validation -*-
"""
Structural schemas of CustomResourceDefinitions: structural-ness, validation, pruning and
defaulting of custom resources.

Upstream: C{k8s.io/apiextensions-apiserver/pkg/apiserver/schema} (structural, pruning,
defaulting, objectmeta, listtype) and C{pkg/apiserver/validation} over
C{k8s.io/kube-openapi/pkg/validation/validate}.  Pure functions over JSON dicts (the wire
form of C{openAPIV3Schema} and of custom resources); no I/O.

Two forms are offered.  L{CompiledSchema} reads a schema once (upstream builds its
structural schema and validator once per CRD version) and is what the serving code should
keep per CRD version.  The module functions take the schema dict and use a small cache of
compiled schemas keyed by the dict's identity, so a schema dict must not be mutated after
its first use (build a new dict when the CRD changes).

The decoding pipeline of a custom resource, as upstream's C{unstructuredSchemaCoercer} and
C{unstructuredDefaulter}: L{prune} (reports unknown fields for C{fieldValidation}),
L{prune_non_nullable_nulls}, then L{apply_defaults}; on create/update the registry then runs
L{validate_custom_resource} (or L{validate_custom_resource_update}).
"""

from __future__ import annotations

from typing import Any

from kubetwist.apiextensions.schema.compiled import SchemaNode, copy_json
from kubetwist.apiextensions.schema.defaulting import (
    default_node,
    prune_defaults,
    validate_defaults,
)
from kubetwist.apiextensions.schema.listtype import validate_list_sets_and_maps as _listtype
from kubetwist.apiextensions.schema.objectmeta import coerce_embedded
from kubetwist.apiextensions.schema.objectmeta import validate_embedded_object_meta as _embedded
from kubetwist.apiextensions.schema.pruning import (
    prune_node,
    prune_with_metadata,
)
from kubetwist.apiextensions.schema.pruning import (
    prune_non_nullable_nulls as _prune_nulls,
)
from kubetwist.apiextensions.schema.structural import UnsupportedSchemaError, structural_errors
from kubetwist.apiextensions.schema.validation import openapi_errors
from kubetwist.runtime.field import FieldError, Path

__all__ = [
    "CompiledSchema", "UnsupportedSchemaError", "apply_defaults", "compile_schema", "copy_json",
    "prune", "prune_non_nullable_nulls", "structural_errors", "unknown_field_warnings",
    "validate_custom_resource", "validate_custom_resource_update", "validate_embedded_object_meta",
    "validate_list_sets_and_maps", "validate_schema_defaults",
]


def _prefix_path(prefix: str) -> Path | None:
    return Path(prefix) if prefix else None


class CompiledSchema:
    """
    One CRD version's C{openAPIV3Schema}, read once; its defaults are pruned as upstream's
    C{PruneDefaults} does when a CRD is loaded.

    @ivar schema: the schema dict (not modified).
    @ivar root: the compiled L{SchemaNode} tree.
    """

    def __init__(self, schema: dict | None) -> None:
        self.schema = schema if schema is not None else {}
        self.root = SchemaNode(self.schema)
        prune_defaults(self.root, lambda obj, root: prune_with_metadata(obj, root, True))

    def validate(self, obj: Any, path_prefix: str = "") -> list[FieldError]:
        """
        Validate a custom resource (or, with C{path_prefix}, a part of one against the
        matching sub-schema): the OpenAPI schema (kube-openapi errors), embedded resources'
        TypeMeta/ObjectMeta, then list-type uniqueness, in upstream's order.

        @param obj: the decoded object (after pruning and defaulting).
        @param path_prefix: field path of C{obj} (C{"status"} for the status subresource);
            kube-openapi's own texts stay relative to C{obj}, as upstream.
        @return: field errors; the registry reports them as one 422 C{Invalid} StatusError.
        """
        errs = openapi_errors(self.root, obj, path_prefix)
        errs.extend(_embedded(self.root, obj, _prefix_path(path_prefix)))
        errs.extend(_listtype(self.root, obj, _prefix_path(path_prefix)))
        return errs

    def validate_update(self, obj: Any, old: Any, path_prefix: str = "") -> list[FieldError]:
        """
        As L{validate}, but list-type errors count only when C{old} had none (upstream's
        C{ValidateUpdate}: existing duplicates do not block updates).
        """
        errs = openapi_errors(self.root, obj, path_prefix)
        errs.extend(_embedded(self.root, obj, _prefix_path(path_prefix)))
        if not _listtype(self.root, old, _prefix_path(path_prefix)):
            errs.extend(_listtype(self.root, obj, _prefix_path(path_prefix)))
        return errs

    def prune(self, obj: Any, is_resource_root: bool = True) -> list[str]:
        """
        Drop unknown fields in place (see L{prune}).

        @return: the dropped paths (C{metadata.foo}, C{spec.foo}, C{spec.items[0].bar}).
        """
        return prune_with_metadata(obj, self.root, is_resource_root)

    def prune_nulls(self, obj: Any) -> None:
        """Drop C{null}s of fields that are neither nullable nor defaulted, in place."""
        _prune_nulls(obj, self.root)

    def default(self, obj: Any) -> None:
        """Apply defaults in place (upstream C{structuraldefaulting.Default})."""
        default_node(obj, self.root)

    def validate_defaults(self, path: Path | str) -> list[FieldError]:
        """Errors of the schema's C{default} values (see L{validate_schema_defaults})."""
        p = Path(path) if isinstance(path, str) else path
        return validate_defaults(
            SchemaNode(self.schema), p,
            validate=lambda value, node, prefix: openapi_errors(node, value, prefix),
            prune=lambda value, node, root: prune_node(value, node, root),
            embedded_meta=_embedded, coerce=coerce_embedded)


_CACHE: dict[int, tuple[dict, CompiledSchema]] = {}
_CACHE_SIZE = 256


def compile_schema(schema: dict | None) -> CompiledSchema:
    """
    The L{CompiledSchema} of C{schema}, from a cache keyed by the dict's identity (the dict
    is kept alive by the cache, so identities are not reused while cached).
    """
    if schema is None:
        return CompiledSchema(None)
    key = id(schema)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    compiled = CompiledSchema(schema)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (schema, compiled)
    return compiled


def validate_custom_resource(obj: Any, schema: dict | None,
                             path_prefix: str = "") -> list[FieldError]:
    """
    Validate a custom resource against its version's C{openAPIV3Schema}
    (L{CompiledSchema.validate}): e.g. C{spec.replicas: Invalid value: "string":
    spec.replicas in body must be of type integer: "string"}, C{spec.size: Unsupported value:
    "x": supported values: "a", "b"}, C{spec.name: Required value}.
    """
    if schema is None:
        return []
    return compile_schema(schema).validate(obj, path_prefix)


def validate_custom_resource_update(obj: Any, old: Any, schema: dict | None,
                                    path_prefix: str = "") -> list[FieldError]:
    """L{CompiledSchema.validate_update} for a schema dict."""
    if schema is None:
        return []
    return compile_schema(schema).validate_update(obj, old, path_prefix)


def prune(obj: Any, schema: dict | None, is_resource_root: bool = True) -> list[str]:
    """
    Drop fields the structural schema does not specify, in place, as the custom-resource
    decoder does: C{apiVersion}, C{kind}, C{metadata} are kept at the root (when
    C{is_resource_root}) and in embedded resources; C{metadata} is reduced to ObjectMeta
    fields; C{x-kubernetes-preserve-unknown-fields} keeps unknown fields.

    @return: paths of the dropped fields, for C{fieldValidation=Warn/Strict}
        (see L{unknown_field_warnings}).
    """
    return compile_schema(schema).prune(obj, is_resource_root)


def prune_non_nullable_nulls(obj: Any, schema: dict | None) -> None:
    """Upstream C{PruneNonNullableNullsWithoutDefaults}, in place (after L{prune})."""
    compile_schema(schema).prune_nulls(obj)


def apply_defaults(obj: Any, schema: dict | None) -> None:
    """
    Structural defaulting in place (upstream C{structuraldefaulting.Default} with the
    schema's defaults pruned as upstream's C{PruneDefaults}): absent fields, and C{null}s of
    non-nullable fields, get their default; also inside array items and additionalProperties.
    """
    if schema is None:
        return
    compile_schema(schema).default(obj)


def validate_schema_defaults(schema: dict, path: Path | str) -> list[FieldError]:
    """
    Upstream C{defaulting.ValidateDefaults(..., requirePrunedDefaults=true)} for a v1 CRD:
    every C{default} must validate against its schema and carry no unknown fields
    (C{<path>.properties[spec].properties[x].default: Invalid value: ...: must not have
    unknown fields}).  CEL rules on defaults are not checked here.
    """
    return CompiledSchema(schema).validate_defaults(path)


def validate_embedded_object_meta(obj: Any, schema: dict | None,
                                  path: Path | None = None) -> list[FieldError]:
    """Upstream C{objectmeta.Validate(..., isResourceRoot=false)} (embedded resources only)."""
    return _embedded(compile_schema(schema).root, obj, path)


def validate_list_sets_and_maps(obj: Any, schema: dict | None,
                                path: Path | None = None) -> list[FieldError]:
    """Upstream C{listtype.ValidateListSetsAndMaps}: C{Duplicate value} errors."""
    return _listtype(compile_schema(schema).root, obj, path)


def unknown_field_warnings(paths: list[str]) -> list[str]:
    """Upstream's texts for pruned fields: C{unknown field "spec.foo"}."""
    return [f'unknown field "{p}"' for p in paths]

