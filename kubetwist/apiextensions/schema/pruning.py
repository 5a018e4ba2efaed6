# -*- test-case-name: tests.apiextensions.test_schema_pruning -*-
"""
Pruning of fields a structural schema does not specify.

Upstream: C{k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning} (C{PruneWithOptions}:
unknown fields are deleted unless C{x-kubernetes-preserve-unknown-fields} is set; C{apiVersion},
C{kind} and C{metadata} survive at the root and in embedded resources), the metadata part of
the custom-resource decoder (C{unstructuredSchemaCoercer.apply}: metadata is reduced to
C{metav1.ObjectMeta}) and C{defaulting.PruneNonNullableNullsWithoutDefaults}.
"""

from __future__ import annotations

from typing import Any

from kubetwist.apiextensions.schema.compiled import NO_DEFAULT, SchemaNode
from kubetwist.apiextensions.schema.objectmeta import coerce_embedded, prune_object_meta

_META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})


def _join(parent: str, key: str) -> str:
    return f"{parent}.{key}" if parent else key


def _prune(x: Any, node: SchemaNode | None, path: str, out: list[str], root: bool) -> None:
    if node is not None and node.preserve_unknown:
        _skip_prune(x, node, path, out, root)
        return
    if isinstance(x, dict):
        if node is None:
            for k in list(x):
                out.append(_join(path, k))
                del x[k]
            return
        embedded = node.embedded or root
        props = node.properties
        for k in list(x):
            if embedded and k in _META_FIELDS:
                continue
            sub = props.get(k) if props is not None else None
            if sub is not None:
                _prune(x[k], sub, _join(path, k), out, False)
            elif node.ap_present:
                _prune(x[k], node.ap_node, _join(path, k), out, False)
            else:
                if k not in _META_FIELDS or path:
                    out.append(_join(path, k))
                del x[k]
    elif isinstance(x, list):
        items = node.items if node is not None else None
        for i, v in enumerate(x):
            _prune(v, items, f"{path}[{i}]", out, False)


def _skip_prune(x: Any, node: SchemaNode, path: str, out: list[str], root: bool) -> None:
    if isinstance(x, dict):
        embedded = node.embedded or root
        props = node.properties
        for k, v in x.items():
            if embedded and k in _META_FIELDS:
                continue
            sub = props.get(k) if props is not None else None
            if sub is not None:
                _prune(v, sub, _join(path, k), out, False)
            elif node.ap_present:
                _prune(v, node.ap_node, _join(path, k), out, False)
    elif isinstance(x, list) and node.items is not None:
        for i, v in enumerate(x):
            _skip_prune(v, node.items, f"{path}[{i}]", out, False)


def prune_node(obj: Any, node: SchemaNode | None, is_resource_root: bool = True) -> list[str]:
    """
    Upstream C{pruning.PruneWithOptions} over a compiled schema (no metadata handling).

    @return: the sorted paths of the removed fields (C{spec.foo}, C{spec.items[0].bar}).
    """
    out: list[str] = []
    if is_resource_root and node is None:
        node = SchemaNode({})
    _prune(obj, node, "", out, is_resource_root)
    out.sort()
    return out


def prune_with_metadata(obj: Any, node: SchemaNode | None,
                        is_resource_root: bool = True) -> list[str]:
    """
    Prune C{obj} in place as the custom-resource decoder does: the root C{metadata} reduced
    to ObjectMeta fields, structural pruning, then embedded resources' metadata.

    @return: unknown field paths: root metadata ones, then the sorted pruned paths, then the
        sorted embedded-metadata ones (upstream's order).
    """
    unknown: list[str] = []
    if is_resource_root and isinstance(obj, dict):
        prune_object_meta(obj.get("metadata"), "", unknown)
    unknown.extend(prune_node(obj, node, is_resource_root))
    embedded: list[str] = []
    if node is not None:
        coerce_embedded(node, obj, "", embedded, False)
    embedded.sort()
    unknown.extend(embedded)
    return unknown


def _non_nullable_null_without_default(x: Any, node: SchemaNode | None) -> bool:
    return x is None and node is not None and not node.nullable and node.default is NO_DEFAULT


def prune_non_nullable_nulls(x: Any, node: SchemaNode | None) -> None:
    """
    Upstream C{PruneNonNullableNullsWithoutDefaults}: drop C{null} object fields whose schema
    is neither nullable nor defaulted (the decoder runs it after pruning).
    """
    if isinstance(x, dict):
        for k in list(x):
            v = x[k]
            sub = node.child(k) if node is not None else None
            if _non_nullable_null_without_default(v, sub):
                del x[k]
            else:
                prune_non_nullable_nulls(v, sub)
    elif isinstance(x, list):
        items = node.items if node is not None else None
        for v in x:
            prune_non_nullable_nulls(v, items)
