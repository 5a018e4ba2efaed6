# -*- test-case-name: tests.endpoints.test_handlers -*-
"""
Server-side output transforms: C{Table} and C{PartialObjectMetadata(List)}; upstream
C{k8s.io/apiserver/pkg/endpoints/handlers/response.go} and C{registry/rest/table.go}.
"""

from __future__ import annotations

from typing import Any, Optional

from kubetwist.registry.rest import TableConvertor
from kubetwist.runtime import codec

#: Upstream C{DefaultTableConvertor} columns.
DEFAULT_COLUMNS = [
    {
        "name": "Name", "type": "string", "format": "name",
        "description": "Name must be unique within a namespace. Is required when creating "
        "resources, although some resources may allow a client to request the generation of "
        "an appropriate name automatically. Name is primarily intended for creation "
        "idempotence and configuration definition. Cannot be updated. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
        "priority": 0,
    },
    {
        "name": "Created At", "type": "date", "format": "",
        "description": "CreationTimestamp is a timestamp representing the server time when "
        "this object was created. It is not guaranteed to be set in happens-before order "
        "across separate operations. Clients may not set this value. It is represented in "
        "RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. "
        "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
        "api-conventions.md#metadata",
        "priority": 0,
    },
]


def _default_row(obj: dict) -> list:
    meta = obj.get("metadata", {})
    return [meta.get("name", ""), meta.get("creationTimestamp")]


DEFAULT_TABLE = TableConvertor(columns=DEFAULT_COLUMNS, row=_default_row)


def partial_object_metadata(obj: dict, version: str = "v1") -> dict:
    """C{{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": ...}}."""
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": obj.get("metadata", {}),
    }


def partial_object_metadata_list(lst: dict, version: str = "v1") -> dict:
    """A C{PartialObjectMetadataList} of a C{<Kind>List}."""
    return {
        "kind": "PartialObjectMetadataList",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": lst.get("metadata", {}),
        "items": [partial_object_metadata(i, version) for i in lst.get("items", [])],
    }


def to_table(
    objects: list[dict],
    convertor: Optional[TableConvertor],
    list_meta: Optional[dict] = None,
    include_object: str = "Metadata",
    version: str = "v1",
    with_headers: bool = True,
    api_version: str = "",
    kind: str = "",
) -> dict:
    """
    Render C{objects} as a C{meta.k8s.io Table}: C{{"kind": "Table", "apiVersion",
    "metadata", "columnDefinitions": [...], "rows": [{"cells": [...], "object": ...}]}}.

    @param include_object: C{None} (C{"object": null} per row, as upstream's encoder writes an
        empty RawExtension), C{Metadata} (a PartialObjectMetadata per row, the default) or
        C{Object} (the full object).
    @param list_meta: the list's metadata, or for one object C{{"resourceVersion": ...}}
        (upstream's table generators copy the object's resourceVersion).
    """
    conv = convertor or DEFAULT_TABLE
    if conv.order is not None:
        objects = conv.order(objects)
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": conv.row(obj)}
        # a row's object is a RawExtension holding the typed object: Go's field order
        if include_object == "Object":
            full = dict(obj)
            if api_version and "apiVersion" not in full:
                full = {"apiVersion": api_version, "kind": kind, **full}
            row["object"] = codec.go_order(full)
        elif include_object != "None":
            row["object"] = codec.go_order(partial_object_metadata(obj, version))
        else:
            row["object"] = None  # a RawExtension is a struct: Go's omitempty keeps it, as null
        rows.append(row)
    meta: dict[str, Any] = {}
    if list_meta:
        for k in ("resourceVersion", "continue", "remainingItemCount"):
            if k in list_meta:
                meta[k] = list_meta[k]
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": meta,
        "columnDefinitions": conv.columns if with_headers else [],
        "rows": rows,
    }
