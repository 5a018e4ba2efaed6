# -*- test-case-name: tests.apiextensions.test_schema_defaulting -*-
"""
Structural defaulting of custom resources, and the rules on C{default} values in a schema.

Upstream: C{k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting}: C{Default}
(absent fields, and C{null} where the schema is not nullable, get a copy of the default; the
walk continues into array items and additionalProperties values), C{PruneDefaults} (a
CRD's defaults are pruned once, in the object they would land in, when the CRD is loaded)
and C{ValidateDefaults} (each default must validate against its schema and, for v1 CRDs,
must not carry unknown fields).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubetwist.apiextensions.schema.compiled import NO_DEFAULT, SchemaNode, copy_json
from kubetwist.apiextensions.schema.gofmt import deep_equal
from kubetwist.runtime import field as fe
from kubetwist.runtime.field import FieldError, Path, aggregate_message

_KEY, _INDEX, _STAR = "key", "index", "*"


def default_node(x: Any, node: SchemaNode | None) -> None:
    """
    Upstream C{structuraldefaulting.Default}: apply C{node}'s defaults to C{x} in place.

    @param x: a JSON value (objects and arrays are changed in place).
    @param node: its compiled schema (defaults already pruned).
    """
    if node is None:
        return
    if isinstance(x, dict):
        props = node.properties
        if props is not None:
            for k, prop in props.items():
                d = prop.default
                if d is NO_DEFAULT or d is None:
                    continue
                if k not in x or (x[k] is None and not prop.nullable):
                    x[k] = copy_json(d)
        ap = node.ap_node if node.ap_present else None
        for k in x:
            sub = props.get(k) if props is not None else None
            if sub is not None:
                default_node(x[k], sub)
            elif node.ap_present:
                if ap is not None and x[k] is None and not ap.nullable:
                    # upstream copies the (possibly absent, i.e. nil) default
                    x[k] = None if ap.default is NO_DEFAULT else copy_json(ap.default)
                default_node(x[k], ap)
    elif isinstance(x, list):
        items = node.items
        if items is None:
            return
        for i, v in enumerate(x):
            if v is None and not items.nullable:
                x[i] = None if items.default is NO_DEFAULT else copy_json(items.default)
            default_node(x[i], items)


# --------------------------------------------------------------------------------------------
# PruneDefaults


def _surround(value: Any, steps: list[tuple]) -> Any:
    for step in reversed(steps):
        if step[0] == _KEY:
            value = {step[1]: value}
        elif step[0] == _STAR:
            value = {"*": value}
        else:
            value = [value]
    return value


def _extract(obj: Any, steps: list[tuple]) -> tuple[Any, bool]:
    x = obj
    for step in steps:
        if step[0] == _INDEX:
            if not isinstance(x, list) or not x:
                return None, False
            x = x[0]
        else:
            k = step[1] if step[0] == _KEY else "*"
            if not isinstance(x, dict) or k not in x:
                return None, False
            x = x[k]
    return x, True


def prune_defaults(root: SchemaNode, prune: Callable[[Any, SchemaNode], Any]) -> None:
    """
    Upstream C{PruneDefaults}: each default is placed in a skeleton object at its position
    under the root schema, pruned there (C{prune(obj, root)}), and read back.
    """
    def visit(node: SchemaNode, steps: list[tuple]) -> None:
        if node.default is not NO_DEFAULT and node.default is not None:
            obj = _surround(copy_json(node.default), steps)
            if isinstance(obj, dict):
                prune(obj, root)
                value, found = _extract(obj, steps)
                node.default = value if found else NO_DEFAULT
        if node.ap_node is not None:
            visit(node.ap_node, steps + [(_STAR,)])
        if node.items is not None:
            visit(node.items, steps + [(_INDEX,)])
        if node.properties is not None:
            for k, sub in node.properties.items():
                visit(sub, steps + [(_KEY, k)])

    visit(root, [])


# --------------------------------------------------------------------------------------------
# ValidateDefaults


def validate_defaults(root: SchemaNode, path: Path, validate: Callable[..., list[FieldError]],
                      prune: Callable[..., Any], embedded_meta: Callable[..., list[FieldError]],
                      coerce: Callable[..., FieldError | None],
                      require_pruned: bool = True) -> list[FieldError]:
    """
    Upstream C{defaulting.ValidateDefaults(pth, s, isResourceRoot=true, requirePrunedDefaults)}
    over raw (not yet pruned) defaults.

    Outside metadata, each default is checked in turn for: unknown fields (C{Invalid ...:
    must not have unknown fields}), embedded TypeMeta/ObjectMeta, then the schema (errors at
    C{<path>.properties[x].default}).  Inside an embedded resource's C{metadata},
    C{apiVersion} or C{kind}, the default is placed in an object C{validation/v1}
    C{Validation} and must give valid metadata (C{must result in valid metadata: ...}).

    The callables are this package's engine functions (injected to avoid import cycles).
    """
    errs: list[FieldError] = []

    def visit(node: SchemaNode, p: Path, rootnode: SchemaNode, steps: list[tuple],
              inside_meta: bool, is_root: bool) -> None:
        emb = node.embedded or is_root
        if emb:
            inside_meta = False
            rootnode = node
            steps = []
        d = node.raw.get("default", NO_DEFAULT)
        if d is not NO_DEFAULT and d is not None:
            dp = p.child("default")
            if inside_meta:
                obj = _surround(copy_json(d), steps)
                if isinstance(obj, dict):
                    obj.setdefault("kind", "Validation")
                    obj.setdefault("apiVersion", "validation/v1")
                    err = coerce(rootnode, obj, "", [], True)
                    if err is not None:
                        errs.append(fe.invalid(dp, d, f"must result in valid metadata: {err}"))
                    else:
                        merrs = embedded_meta(rootnode, obj, None, True)
                        if merrs:
                            errs.append(fe.invalid(
                                dp, d,
                                f"must result in valid metadata: {aggregate_message(merrs)}"))
                        else:
                            errs.extend(validate(d, node, str(dp)))
            else:
                embedded = emb
                if require_pruned:
                    pruned = copy_json(d)
                    prune(pruned, node, embedded)
                    if not deep_equal(pruned, d):
                        errs.append(fe.invalid(dp, d, "must not have unknown fields"))
                value = copy_json(d)
                err = coerce(node, value, str(dp), [], embedded)
                if err is not None:
                    errs.append(err)
                else:
                    merrs = embedded_meta(node, value, dp, embedded)
                    if merrs:
                        errs.extend(merrs)
                    else:
                        errs.extend(validate(d, node, str(dp)))
        if node.items is not None:
            visit(node.items, p.child("items"), rootnode, steps + [(_INDEX,)], inside_meta, False)
        if node.properties is not None:
            for k, sub in node.properties.items():
                sub_meta = inside_meta or (emb and k in ("metadata", "apiVersion", "kind"))
                visit(sub, p.child("properties").key(k), rootnode, steps + [(_KEY, k)],
                      sub_meta, False)

    visit(root, path, root, [], False, True)
    return errs
