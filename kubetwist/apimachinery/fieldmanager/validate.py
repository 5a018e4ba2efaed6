# -*- test-case-name: tests.endpoints.test_decode -*-
"""
The scalar, list and map checks of structured-merge-diff's typed conversion
(C{sigs.k8s.io/structured-merge-diff/v4/typed}: C{validateScalar}, C{listValue},
C{mapValue}) of an applied configuration, driven by kubetwist's type tables: what makes
upstream's server-side apply answer 500 C{failed to create typed patch object (/d; apps/v1,
Kind=Deployment): .spec.replicas: expected numeric (int or float), got string}.

Types with their own JSON form (Quantity, IntOrString, Time...) are C{untyped} scalars there
and pass; Go's conversion of the merged object refuses them later
(L{kubetwist.runtime.typed.converter_error}).
"""

from __future__ import annotations

from typing import Any

from kubetwist.apimachinery.fieldmanager import merge
from kubetwist.apimachinery.fieldmanager import typed as fmtyped
from kubetwist.apimachinery.fieldmanager.fieldpath import field_element
from kubetwist.runtime import gofmt
from kubetwist.runtime import types as typetables
from kubetwist.runtime.typed import fields_by_json


def _go_sharp_v(value: Any) -> str:
    """Go's C{%#v} of a decoded JSON value (C{[]interface {}{1, "a"}})."""
    from kubetwist.runtime.field import go_quote

    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(_go_sharp_v(v) for v in value) + "}"
    if isinstance(value, dict):
        return ("map[string]interface {}{" + ", ".join(
            f"{go_quote(k)}:{_go_sharp_v(v)}" for k, v in sorted(value.items())) + "}")
    if value is None:
        return "interface {}(nil)"
    return gofmt.sprint(value)


def _scalar_error(value: Any, t: str) -> str | None:
    if t in ("int32", "int64", "double"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"expected numeric (int or float), got {gofmt.type_name(value)}"
    elif t in ("string", "bytes"):
        if not isinstance(value, str):
            return f"expected string, got &value.valueUnstructured{{Value:{_go_sharp_v(value)}}}"
    elif t == "bool":
        if not isinstance(value, bool):
            return f"expected boolean, got &{{{gofmt.sprint(value)}}}"
    return None


def type_errors(config: Any, type_name: str, node: fmtyped.Node) -> list[tuple[tuple, str]]:
    """
    The values of an applied configuration that do not fit their field's type, as
    structured-merge-diff words them, sorted by path: C{[(path, "expected numeric (int or
    float), got string")]} (paths of L{kubetwist.apimachinery.fieldmanager.fieldpath}
    elements).  Undeclared fields are left to L{merge.to_field_set}.
    """
    out: list = []
    stack: list = [(config, type_name, node, ())]
    while stack:
        value, tname, snode, path = stack.pop()
        if not isinstance(value, dict):
            out.append((path, f"expected map, got &{{{gofmt.sprint(value)}}}"))
            continue
        fields = fields_by_json(tname)
        for key, item in value.items():
            entry = fields.get(key)
            if entry is None or item is None:
                continue
            f = entry[0]
            sub = snode.field_schema(key) if snode is not None else None
            p = path + (field_element(key),)
            message = f.is_message and f.type in typetables.TYPES
            if f.container == "list":
                if not isinstance(item, list):
                    out.append((p, f"expected list, got &{{{gofmt.sprint(item)}}}"))
                    continue
                elem_node = sub.elem if sub is not None else None
                for i, it in enumerate(item):
                    if it is None:
                        continue
                    pe = merge._item_element(sub, it, i) if sub is not None else ("i", i)
                    if message:
                        stack.append((it, f.type, elem_node, p + (pe,)))
                    elif f.type not in typetables.SPECIALS:
                        err = _scalar_error(it, f.type)
                        if err:
                            out.append((p + (pe,), err))
            elif f.container == "map":
                if not isinstance(item, dict):
                    out.append((p, f"expected map, got &{{{gofmt.sprint(item)}}}"))
                    continue
                elem_node = sub.elem if sub is not None else None
                for k, v in item.items():
                    if v is None:
                        continue
                    if message:
                        stack.append((v, f.type, elem_node, p + (field_element(k),)))
                    elif f.type not in typetables.SPECIALS:
                        err = _scalar_error(v, f.type)
                        if err:
                            out.append((p + (field_element(k),), err))
            elif message:
                stack.append((item, f.type, sub, p))
            elif f.type not in typetables.SPECIALS:
                err = _scalar_error(item, f.type)
                if err:
                    out.append((p, err))
    from kubetwist.apimachinery.fieldmanager.fieldpath import path_string

    return sorted(out, key=lambda e: path_string(e[0]))
