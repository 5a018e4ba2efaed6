# -*- test-case-name: tests.apiextensions.test_customresources -*-
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


_V2_DROP = ("nullable", "anyOf", "oneOf", "not", "allOf", "x-kubernetes-validations")


def _to_v2(schema: Any) -> Any:
    """Upstream C{v2.ToStructuralOpenAPIV2}, roughly: what OpenAPI v2 cannot say is dropped."""
    if isinstance(schema, dict):
        out = {}
        for k, val in schema.items():
            if k in _V2_DROP:
                continue
            if k in ("properties", "patternProperties", "definitions"):
                out[k] = {n: _to_v2(s) for n, s in (val or {}).items()}
            elif k in ("items", "additionalProperties"):
                out[k] = _to_v2(val)
            else:
                out[k] = val
        if schema.get("x-kubernetes-int-or-string"):
            out.pop("type", None)
        return out
    return schema


def build(group: str, version: str, kind: str, list_kind: str, schema: Any,
          v3: bool = True) -> dict[str, dict]:
    """
    The definitions of one CRD version: C{{kind_name: schema, list_name: schema, ObjectMeta,
    ListMeta}}; references are C{#/components/schemas/...} (v3) or C{#/definitions/...} (v2).
    """
    ref = "#/components/schemas/" if v3 else "#/definitions/"
    name = definition_name(group, version, kind)
    list_name = definition_name(group, version, list_kind)
    body: dict[str, Any] = copy.deepcopy(schema) if isinstance(schema, dict) else {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if not v3:
        body = _to_v2(body)
    body.setdefault("type", "object")
    props = body.setdefault("properties", {})
    props["apiVersion"] = {"type": "string", "description": _API_VERSION_DOC}
    props["kind"] = {"type": "string", "description": _KIND_DOC}
    if v3:
        props["metadata"] = {"allOf": [{"$ref": ref + OBJECT_META}], "default": {},
                             "description": _METADATA_DOC}
    else:
        props["metadata"] = {"$ref": ref + OBJECT_META, "description": _METADATA_DOC}
    body["properties"] = dict(sorted(props.items()))
    body["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind,
                                                "version": version}]
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
