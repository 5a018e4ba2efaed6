# -*- test-case-name: tests.server.test_openapi_types -*-
"""
OpenAPI v3 schemas of the built-in kinds, derived from kubetwist's own type definitions
(L{kubetwist.runtime.types}): upstream's C{k8s.io/kube-openapi} generated definitions, in their
shape (component names such as C{io.k8s.api.apps.v1.Deployment}, message fields as
C{allOf: [{$ref}]}, C{x-kubernetes-group-version-kind} on kinds, list and patch markers), so
that C{kubectl explain} can walk every field.  Field descriptions are empty until the type
definitions carry them.

Markers and defaults follow C{k8s.io/kube-openapi/pkg/generators/openapi.go}: C{required}
lists the fields flagged required (declaration order, inline structs' fields promoted);
C{x-kubernetes-map-type: atomic} on a C{+structType=atomic} struct; a C{default} on every
non-pointer struct (C{{}}), on every non-C{omitempty} non-pointer scalar (its zero value), on
list items and map values alike, and the value of a C{+default=} marker; types with their own
JSON codec (Time, Quantity, IntOrString, ...) never get an enforced default; a field of a
C{+enum} string type lists the type's values in C{enum} (sorted, as kube-openapi's enum
context does; upstream's "Possible enum values" description lines are not carried).
"""

from __future__ import annotations

from typing import Any

from kubetwist.runtime import types as typedefs

_SCALARS: dict[str, dict] = {
    "string": {"type": "string"},
    "bytes": {"type": "string", "format": "byte"},
    "int32": {"type": "integer", "format": "int32"},
    "int64": {"type": "integer", "format": "int64"},
    "bool": {"type": "boolean"},
    "double": {"type": "number", "format": "double"},
}

#: The special types' component names and schemas (upstream's OpenAPI definitions).
_SPECIALS: dict[str, tuple[str, dict]] = {
    "Quantity": ("io.k8s.apimachinery.pkg.api.resource.Quantity", {"type": "string"}),
    "IntOrString": ("io.k8s.apimachinery.pkg.util.intstr.IntOrString",
                    {"type": "string", "format": "int-or-string"}),
    "Time": ("io.k8s.apimachinery.pkg.apis.meta.v1.Time",
             {"type": "string", "format": "date-time"}),
    "MicroTime": ("io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
                  {"type": "string", "format": "date-time"}),
    "Duration": ("io.k8s.apimachinery.pkg.apis.meta.v1.Duration", {"type": "string"}),
    "FieldsV1": ("io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1", {"type": "object"}),
    "RawExtension": ("io.k8s.apimachinery.pkg.runtime.RawExtension", {"type": "object"}),
}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


#: Zero values of the scalar types: kube-openapi's C{OpenAPIZeroValue}, enforced as
#: C{default} on non-pointer, non-C{omitempty} fields (C{bytes} is a slice: none).
_ZEROS: dict[str, Any] = {"string": "", "int32": 0, "int64": 0, "bool": False, "double": 0}


def _value_schema(type_name: str, pointer: bool, wanted: set[str],
                  omitempty: bool = False) -> dict:
    if type_name in _SCALARS:
        out = dict(_SCALARS[type_name])
        if not pointer and not omitempty and type_name in _ZEROS:
            out["default"] = _ZEROS[type_name]
        return out
    if type_name == "ExtraValue":
        # a named []string: upstream's generator inlines it
        return {"type": "array", "items": {"type": "string", "default": ""}}
    if type_name in _SPECIALS:
        component, _ = _SPECIALS[type_name]
        wanted.add(type_name)
        return {"allOf": [_ref(component)]}
    wanted.add(type_name)
    out: dict[str, Any] = {"allOf": [_ref(type_name)]}
    if not pointer:
        out["default"] = {}
    return out


def _field_schema(f: Any, wanted: set[str]) -> dict:
    if f.container == "list":
        item = _value_schema(f.type, False, wanted)
        schema: dict[str, Any] = {"type": "array", "items": item}
    elif f.container == "map":
        item = _value_schema(f.type, False, wanted)
        schema = {"type": "object", "additionalProperties": item}
    else:
        schema = _value_schema(f.type, f.pointer, wanted, f.omitempty)
    if f.default is not None:
        schema["default"] = f.default
    if f.enum:
        schema["enum"] = list(f.enum)
    if f.list_type:
        schema["x-kubernetes-list-type"] = f.list_type
    if f.list_map_keys:
        schema["x-kubernetes-list-map-keys"] = list(f.list_map_keys)
    if f.map_type:
        schema["x-kubernetes-map-type"] = f.map_type
    if f.patch_strategy:
        schema["x-kubernetes-patch-strategy"] = f.patch_strategy
    if f.patch_merge_key:
        schema["x-kubernetes-patch-merge-key"] = f.patch_merge_key
    if f.description:
        schema["description"] = f.description
    return schema


def _properties(type_name: str, wanted: set[str], required: list[str]) -> dict:
    props: dict[str, Any] = {}
    for f in typedefs.TYPES[type_name].fields:
        if f.inline and f.type in typedefs.TYPES:
            props.update(_properties(f.type, wanted, required))
        elif f.json_name:
            props[f.json_name] = _field_schema(f, wanted)
            if f.required:
                required.append(f.json_name)
    return props


def _type_meta_embedders() -> frozenset[str]:
    # every served kind embeds metav1.TypeMeta, and so do the meta/v1 kinds but WatchEvent
    global _TYPE_META, _TYPE_META_KINDS
    if _TYPE_META is None or _TYPE_META_KINDS != len(typedefs.KINDS):
        # recomputed when a package was registered (kubetwist.runtime.types.register_package)
        _TYPE_META_KINDS = len(typedefs.KINDS)
        _TYPE_META = frozenset(typedefs.KINDS.values()) | {
            f"io.k8s.apimachinery.pkg.apis.meta.v1.{kind}" for kind in typedefs.META_KINDS
            if kind != "WatchEvent"}
    return _TYPE_META


_TYPE_META: frozenset[str] | None = None
_TYPE_META_KINDS = 0


def type_schema(type_name: str, wanted: set[str]) -> dict:
    """
    The component schema of one message type of L{kubetwist.runtime.types.TYPES}
    (C{{"type": "object", "properties": {...}, "required": [...],
    "x-kubernetes-map-type": "atomic", "x-kubernetes-unions": [...]}}, the last three only
    when they apply), adding the type
    names it references to C{wanted}.
    """
    required: list[str] = []
    props = _properties(type_name, wanted, required)
    if type_name in _type_meta_embedders():
        # TypeMeta (json ",inline", no protobuf field, so not in the tables): its two fields
        # come first, on every struct that embeds it, reached as a root or not
        props = {"apiVersion": {"type": "string", "description": _API_VERSION_DOC},
                 "kind": {"type": "string", "description": _KIND_DOC},
                 **{k: v for k, v in props.items() if k not in ("apiVersion", "kind")}}
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    typedef = typedefs.TYPES[type_name]
    if typedef.struct_type:
        schema["x-kubernetes-map-type"] = typedef.struct_type
    if typedef.unions:
        schema["x-kubernetes-unions"] = [
            {"discriminator": disc, "fields-to-discriminateBy": dict(sorted(members.items()))}
            for disc, members in typedef.unions]
    return schema


def kind_schemas(group: str, version: str, kind: str) -> dict[str, dict] | None:
    """
    The component schemas of one kind and every type it reaches, keyed by component name
    (C{io.k8s.api.apps.v1.Deployment}), the kind's own schema carrying
    C{x-kubernetes-group-version-kind}; C{None} when kubetwist has no type definition of it.
    """
    root = typedefs.KINDS.get((group, version, kind))
    if root is None:
        return None
    out: dict[str, dict] = {}
    wanted: set[str] = {root}
    while wanted:
        name = wanted.pop()
        if name in out or name in {c for c, _ in _SPECIALS.values()}:
            continue
        if name in _SPECIALS:
            component, schema = _SPECIALS[name]
            out[component] = dict(schema)
            continue
        if name not in typedefs.TYPES:
            out[name] = {"type": "object"}
            continue
        out[name] = type_schema(name, wanted)
    top = out[root]
    top["x-kubernetes-group-version-kind"] = [{"group": group, "version": version, "kind": kind}]
    return out


_API_VERSION_DOC = (
    "APIVersion defines the versioned schema of this representation of an object. Servers "
    "should convert recognized schemas to the latest internal value, and may reject "
    "unrecognized values. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#resources")
_KIND_DOC = (
    "Kind is a string value representing the REST resource this object represents. Servers "
    "may infer this from the endpoint the client submits requests to. Cannot be updated. In "
    "CamelCase. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#types-kinds")
