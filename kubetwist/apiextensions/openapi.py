# -*- test-case-name: tests.apiextensions.test_openapi,tests.apiextensions.test_customresources -*-
"""
OpenAPI of custom resources: upstream
C{k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder} (C{BuildOpenAPIV2},
C{BuildOpenAPIV3}) and C{controller/openapi/v2/conversion.go}.

For one served version of a CRD: a definition for the kind (the version's schema plus
C{apiVersion}, C{kind}, C{metadata} and C{x-kubernetes-group-version-kind}) and one for its
list, named like upstream after the reversed group (C{com.example.v1.Widget}), with the
C{ObjectMeta}/C{ListMeta} definitions they refer to.  These are what C{kubectl explain} reads.
"""

from __future__ import annotations

import copy
from typing import Any

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"

_API_VERSION_DOC = (
    "APIVersion defines the versioned schema of this representation of an object. Servers "
    "should convert recognized schemas to the latest internal value, and may reject "
    "unrecognized values. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#resources")
_KIND_DOC = (
    "Kind is a string value representing the REST resource this object represents. Servers "
    "may infer this from the endpoint the client submits requests to. Cannot be updated. In "
    "CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#types-kinds")
_METADATA_DOC = (
    "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#metadata")
_LIST_METADATA_DOC = (
    "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#types-kinds")

_STR = {"type": "string"}
_OBJECT_META_PROPS: dict[str, dict] = {
    "annotations": {"type": "object", "additionalProperties": {"type": "string", "default": ""},
                    "description": "Annotations is an unstructured key value map stored with a "
                    "resource that may be set by external tools to store and retrieve arbitrary "
                    "metadata."},
    "creationTimestamp": {"type": "string", "format": "date-time", "description":
                          "CreationTimestamp is a timestamp representing the server time when "
                          "this object was created."},
    "deletionGracePeriodSeconds": {"type": "integer", "format": "int64", "description":
                                   "Number of seconds allowed for this object to gracefully "
                                   "terminate before it will be removed from the system."},
    "deletionTimestamp": {"type": "string", "format": "date-time", "description":
                          "DeletionTimestamp is RFC 3339 date and time at which this resource "
                          "will be deleted."},
    "finalizers": {"type": "array", "items": {"type": "string", "default": ""},
                   "x-kubernetes-list-type": "set", "description":
                   "Must be empty before the object is deleted from the registry."},
    "generateName": {**_STR, "description": "GenerateName is an optional prefix, used by the "
                     "server, to generate a unique name ONLY IF the Name field has not been "
                     "provided."},
    "generation": {"type": "integer", "format": "int64", "description": "A sequence number "
                   "representing a specific generation of the desired state."},
    "labels": {"type": "object", "additionalProperties": {"type": "string", "default": ""},
               "description": "Map of string keys and values that can be used to organize and "
               "categorize (scope and select) objects."},
    "managedFields": {"type": "array", "items": {"type": "object"}, "description":
                      "ManagedFields maps workflow-id and version to the set of fields that "
                      "are managed by that workflow."},
    "name": {**_STR, "description": "Name must be unique within a namespace."},
    "namespace": {**_STR, "description": "Namespace defines the space within which each name "
                  "must be unique."},
    "ownerReferences": {"type": "array", "items": {"type": "object"}, "description":
                        "List of objects depended by this object."},
    "resourceVersion": {**_STR, "description": "An opaque value that represents the internal "
                        "version of this object."},
    "selfLink": {**_STR, "description": "Deprecated: selfLink is a legacy read-only field that "
                 "is no longer populated by the system."},
    "uid": {**_STR, "description": "UID is the unique in time and space value for this "
            "object."},
}
_LIST_META_PROPS = {
    "continue": {**_STR, "description": "continue may be set if the user set a limit on the "
                 "number of items returned."},
    "remainingItemCount": {"type": "integer", "format": "int64", "description":
                           "remainingItemCount is the number of subsequent items in the list."},
    "resourceVersion": {**_STR, "description": "String that identifies the server's internal "
                        "version of this object."},
    "selfLink": {**_STR, "description": "Deprecated: selfLink is a legacy read-only field."},
}


def definition_name(group: str, version: str, kind: str) -> str:
    """Upstream C{builder}'s name: the group reversed, C{com.example.v1.Widget}."""
    return ".".join(reversed(group.split("."))) + f".{version}.{kind}"


def _meta_definitions() -> dict[str, dict]:
    return {
        OBJECT_META: {"type": "object", "description": "ObjectMeta is metadata that all "
                      "persisted resources must have, which includes all objects users must "
                      "create.", "properties": copy.deepcopy(_OBJECT_META_PROPS)},
        LIST_META: {"type": "object", "description": "ListMeta describes metadata that "
                    "synthetic resources must have, including lists and various status "
                    "objects.", "properties": copy.deepcopy(_LIST_META_PROPS)},
    }


#: Keys of a JSONSchemaProps that the structural schema (and so the published OpenAPI) has no
#: place for.
_NOT_STRUCTURAL = ("example", "externalDocs")
#: Booleans the structural schema carries as Go C{bool}s: C{false} is not published.
_FALSE_OMITTED = ("nullable", "uniqueItems", "exclusiveMaximum", "exclusiveMinimum",
                  "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
                  "x-kubernetes-int-or-string")
_JUNCTORS = ("allOf", "oneOf", "anyOf", "not")
_EMBEDDED_API_VERSION_DOC = (
    "apiVersion defines the versioned schema of this representation of an object. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
    "#resources")
_EMBEDDED_KIND_DOC = (
    "kind is a string value representing the type of this object. In CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
    "#types-kinds")


def _children(schema: dict) -> list[dict]:
    """The sub-schemas a structural visitor walks: properties, items, additionalProperties."""
    out = [s for s in (schema.get("properties") or {}).values() if isinstance(s, dict)]
    for k in ("items", "additionalProperties"):
        if isinstance(schema.get(k), dict):
            out.append(schema[k])
    return out


def _structural(schema: Any) -> Any:
    """The schema as upstream's C{Structural.ToKubeOpenAPI} prints it: C{example} and
    C{externalDocs} dropped, C{false} booleans omitted."""
    if not isinstance(schema, dict):
        return schema
    out = {}
    for k, val in schema.items():
        if k in _NOT_STRUCTURAL or (k in _FALSE_OMITTED and val is False):
            continue
        if k == "properties":
            out[k] = {n: _structural(sub) for n, sub in (val or {}).items()}
        elif k in ("items", "additionalProperties") or k == "not":
            out[k] = _structural(val)
        elif k in ("allOf", "oneOf", "anyOf"):
            out[k] = [_structural(sub) for sub in val or []]
        else:
            out[k] = val
    return out


def _to_v2(schema: Any) -> Any:
    """
    Upstream C{openapi/v2.ToStructuralOpenAPIV2} and the v2 builder options, as v1.32 publishes
    them: junctors and defaults dropped; a nullable node loses its type, nullability,
    items and properties (and is no longer required by its parent); a node keeping unknown
    fields loses its type, items and properties; an array without items loses its type; an
    int-or-string node has no type.
    """
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k not in _JUNCTORS and k != "default"}
    if out.pop("nullable", False):
        for k in ("type", "items", "properties"):
            out.pop(k, None)
    if out.get("x-kubernetes-preserve-unknown-fields"):
        for k in ("type", "items", "properties"):
            out.pop(k, None)
    if "items" not in out and out.get("type") == "array":
        out.pop("type")
    if out.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
    props = out.get("properties")
    if isinstance(props, dict):
        nullable = [n for n, sub in props.items() if isinstance(sub, dict) and sub.get("nullable")]
        if nullable and out.get("required"):
            kept = [r for r in out["required"] if r not in nullable]
            if kept:
                out["required"] = kept
            else:
                del out["required"]
        out["properties"] = {n: _to_v2(sub) for n, sub in props.items()}
    addl = out.get("additionalProperties")
    if isinstance(addl, dict):
        if addl.get("nullable"):
            out.pop("required", None)
        out["additionalProperties"] = _to_v2(addl)
    if isinstance(out.get("items"), dict):
        out["items"] = _to_v2(out["items"])
    return out


def _metadata_ref(ref: str, v3: bool) -> dict:
    if v3:
        return {"allOf": [{"$ref": ref + OBJECT_META}], "description": _METADATA_DOC}
    return {"$ref": ref + OBJECT_META, "description": _METADATA_DOC}


def _add_embedded_properties(schema: Any, ref: str, v3: bool) -> None:
    """
    Upstream C{addEmbeddedProperties}: every C{x-kubernetes-embedded-resource} node gets the
    C{apiVersion}, C{kind} and C{metadata} properties and requires C{kind} and C{apiVersion};
    in v2 a node keeping unknown fields is left alone (and not descended into).
    """
    if not isinstance(schema, dict):
        return
    for sub in _children(schema):
        _add_embedded_properties(sub, ref, v3)
    if not v3 and schema.get("x-kubernetes-preserve-unknown-fields"):
        return
    if schema.get("x-kubernetes-embedded-resource"):
        props = schema.setdefault("properties", {})
        props["apiVersion"] = {"type": "string", "description": _EMBEDDED_API_VERSION_DOC}
        props["kind"] = {"type": "string", "description": _EMBEDDED_KIND_DOC}
        props["metadata"] = _metadata_ref(ref, v3)
        schema["properties"] = dict(sorted(props.items()))
        required = schema.setdefault("required", [])
        for name in ("kind", "apiVersion"):
            if name not in required:
                required.append(name)


def build(group: str, version: str, kind: str, list_kind: str, schema: Any,
          v3: bool = True, selectable: list[dict] | None = None) -> dict[str, dict]:
    """
    The definitions of one CRD version: C{{kind_name: schema, list_name: schema, ObjectMeta,
    ListMeta}}; references are C{#/components/schemas/...} (v3) or C{#/definitions/...} (v2).
    As upstream C{buildKubeNative}: with no schema, or in v2 a root that keeps unknown fields,
    the kind's schema is just C{{"type": "object"}} (kubectl would otherwise refuse unknown
    fields) plus the extensions.

    @param selectable: the version's C{selectableFields} (C{[{"jsonPath": ".spec.x"}]}),
        published as C{x-kubernetes-selectable-fields} (C{[{"fieldPath": "spec.x"}]}).
    """
    ref = "#/components/schemas/" if v3 else "#/definitions/"
    name = definition_name(group, version, kind)
    list_name = definition_name(group, version, list_kind)
    if not isinstance(schema, dict) or (
            not v3 and schema.get("x-kubernetes-preserve-unknown-fields")):
        body: dict[str, Any] = {"type": "object"}
    else:
        body = _structural(copy.deepcopy(schema))
        if not v3:
            body = _to_v2(body)
        props = body.setdefault("properties", {})
        props["apiVersion"] = {"type": "string", "description": _API_VERSION_DOC}
        props["kind"] = {"type": "string", "description": _KIND_DOC}
        props["metadata"] = _metadata_ref(ref, v3)
        body["properties"] = dict(sorted(props.items()))
        _add_embedded_properties(body, ref, v3)
    body["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind,
                                                "version": version}]
    body["x-kubernetes-selectable-fields"] = [
        {"fieldPath": (sf.get("jsonPath") or "").lstrip(".")} for sf in selectable or []]
    listing = {
        "type": "object",
        "description": f"{list_kind} is a list of {kind}",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string", "description": _API_VERSION_DOC},
            "items": {"type": "array", "description": "List of " + kind.lower() + "s. More "
                      "info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
                      "api-conventions.md",
                      "items": {"$ref": ref + name} if not v3 else
                      {"allOf": [{"$ref": ref + name}], "default": {}}},
            "kind": {"type": "string", "description": _KIND_DOC},
            "metadata": {"$ref": ref + LIST_META, "description": _LIST_METADATA_DOC} if not v3
            else {"allOf": [{"$ref": ref + LIST_META}], "default": {},
                  "description": _LIST_METADATA_DOC},
        },
        "x-kubernetes-group-version-kind": [{"group": group, "kind": list_kind,
                                             "version": version}],
    }
    out = {name: body, list_name: listing}
    out.update(_meta_definitions())
    return out
