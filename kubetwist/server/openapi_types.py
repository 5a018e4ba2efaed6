# -*- test-case-name: tests.server.test_openapi_types -*-
"""
OpenAPI v3 schemas of the built-in kinds, derived from kubetwist's own type definitions
(L{kubetwist.runtime.types}): upstream's C{k8s.io/kube-openapi} generated definitions, in their
shape (component names such as C{io.k8s.api.apps.v1.Deployment}, message fields as
C{allOf: [{$ref}]}, C{x-kubernetes-group-version-kind} on kinds, list and patch markers), so
that C{kubectl explain} can walk every field.  Field descriptions are empty until the type
definitions carry them.
"""

from __future__ import annotations

from typing import Any, Optional

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


def _value_schema(type_name: str, pointer: bool, wanted: set[str]) -> dict:
    if type_name in _SCALARS:
        return dict(_SCALARS[type_name])
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
    item = _value_schema(f.type, f.pointer, wanted)
    if f.container == "list":
        item.pop("default", None)
        schema: dict[str, Any] = {"type": "array", "items": item}
        if f.list_type:
            schema["x-kubernetes-list-type"] = f.list_type
        if f.list_map_keys:
            schema["x-kubernetes-list-map-keys"] = list(f.list_map_keys)
    elif f.container == "map":
        item.pop("default", None)
        schema = {"type": "object", "additionalProperties": item}
        if f.map_type:
            schema["x-kubernetes-map-type"] = f.map_type
    else:
        schema = item
    if f.patch_strategy:
        schema["x-kubernetes-patch-strategy"] = f.patch_strategy
    if f.patch_merge_key:
        schema["x-kubernetes-patch-merge-key"] = f.patch_merge_key
    if f.description:
        schema["description"] = f.description
    return schema


def _properties(type_name: str, wanted: set[str]) -> dict:
    props: dict[str, Any] = {}
    for f in typedefs.TYPES[type_name].fields:
        if f.inline and f.type in typedefs.TYPES:
            props.update(_properties(f.type, wanted))
        elif f.json_name:
            props[f.json_name] = _field_schema(f, wanted)
    return props


def kind_schemas(group: str, version: str, kind: str) -> Optional[dict[str, dict]]:
    """
    The component schemas of one kind and every type it reaches, keyed by component name
    (C{io.k8s.api.apps.v1.Deployment}), the kind's own schema carrying
    C{x-kubernetes-group-version-kind}; L{None} when kubetwist has no type definition of it.
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
        schema: dict[str, Any] = {"type": "object", "properties": _properties(name, wanted)}
        out[name] = schema
    top = out[root]
    # TypeMeta (json ",inline", no protobuf field): every kind's first two properties
    top["properties"] = {
        "apiVersion": {"type": "string", "description": _API_VERSION_DOC},
        "kind": {"type": "string", "description": _KIND_DOC},
        **{k: v for k, v in top.get("properties", {}).items() if k not in ("apiVersion", "kind")},
    }
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
