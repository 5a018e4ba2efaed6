# -*- test-case-name: tests.apiextensions.test_schema_validation -*-
"""
Uniqueness of C{x-kubernetes-list-type: set} and C{map} lists.

Upstream: C{k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype}
(C{ValidateListSetsAndMaps}): a set's items must be unique (scalars by Go type and value,
objects and arrays by their JSON), a map's items must be objects whose
C{x-kubernetes-list-map-keys} values are unique; each repeat (first repeat of a value only)
is one C{Duplicate value} error at the repeating index.
"""

from __future__ import annotations

from typing import Any

from kubetwist.apiextensions.schema.compiled import SchemaNode
from kubetwist.apiextensions.schema.gofmt import set_key
from kubetwist.runtime import field as fe
from kubetwist.runtime.field import FieldError, Path

_UNSPECIFIED = ("unspecified", None)


def _child(path: str, k: str) -> str:
    return f"{path}.{k}" if path else k


def validate_list_sets_and_maps(node: SchemaNode | None, obj: Any,
                                path: Path | str | None = None) -> list[FieldError]:
    """
    Upstream C{ValidateListSetsAndMaps} over an object.

    @param node: the compiled schema of C{obj}.
    @param obj: a JSON object (anything else yields no errors, as upstream).
    @param path: where C{obj} sits (C{None}: the resource root).
    @return: C{Duplicate}/C{Invalid} field errors.
    """
    if node is None or not node.has_lists or not isinstance(obj, dict):
        return []
    path = str(path) if path is not None else ""
    errs: list[FieldError] = []
    if node.ap_node is not None:
        for k, v in obj.items():
            errs.extend(_value(node.ap_node, v, f"{path}[{k}]"))
    if node.properties is not None:
        props = node.properties
        for k, v in obj.items():
            sub = props.get(k)
            if sub is not None:
                errs.extend(_value(sub, v, _child(path, k)))
    return errs


def _value(node: SchemaNode, value: Any, path: str) -> list[FieldError]:
    if not node.has_lists:
        return []
    if isinstance(value, list):
        return _array(node, value, path)
    if isinstance(value, dict):
        return validate_list_sets_and_maps(node, value, path)
    return []


def _non_unique(keys: list[Any]) -> list[int]:
    seen: dict[Any, int] = {}
    out: list[int] = []
    for i, k in enumerate(keys):
        n = seen.get(k, 0)
        if n == 1:
            out.append(i)
        seen[k] = n + 1
    return out


def _array(node: SchemaNode, arr: list, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if node.list_type == "set":
        if len(arr) > 1:
            for i in _non_unique([set_key(x) for x in arr]):
                errs.append(fe.duplicate(f"{path}[{i}]", arr[i]))
    elif node.list_type == "map":
        errs.extend(_list_map(node, arr, path))
    if node.items is not None:
        for i, v in enumerate(arr):
            errs.extend(_value(node.items, v, f"{path}[{i}]"))
    return errs


def _list_map(node: SchemaNode, arr: list, path: str) -> list[FieldError]:
    for i, x in enumerate(arr):
        if x is not None and not isinstance(x, dict):
            return [fe.invalid(f"{path}[{i}]", x,
                               "must be an object for an array of list-type map")]
    if len(arr) <= 1:
        return []
    key_fields = node.list_map_keys
    if len(key_fields) == 1:
        kf = key_fields[0]
        keys = [_UNSPECIFIED if x is None or kf not in x else x[kf] for x in arr]
        errs = []
        for i in _non_unique([k if k is _UNSPECIFIED else set_key(k) for k in keys]):
            errs.append(fe.duplicate(f"{path}[{i}]", {} if keys[i] is _UNSPECIFIED
                                     else {kf: keys[i]}))
        return errs
    maps = []
    for x in arr:
        m = {}
        if x is not None:
            for kf in key_fields:
                if kf in x:
                    m[kf] = x[kf]
        maps.append(m)
    return [fe.duplicate(f"{path}[{i}]", maps[i]) for i in _non_unique([set_key(m) for m in maps])]
