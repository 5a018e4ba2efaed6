# -*- test-case-name: tests.apimachinery.test_fieldmanager -*-
"""
The schema view structured merge works on: C{sigs.k8s.io/structured-merge-diff/v4/schema},
built as upstream's C{k8s.io/kube-openapi/pkg/schemaconv} builds it from OpenAPI.

A L{Node} is one of:

 - C{scalar}: a leaf (strings, numbers, booleans, Quantity, IntOrString, Time...);
 - C{map}: a struct and/or a map: C{fields} are the declared struct fields, C{elem} the
   schema of undeclared keys (C{None}: an undeclared key is an error, upstream's
   C{field not declared in schema}); C{atomic} for C{x-kubernetes-map-type: atomic} /
   C{+structType=atomic};
 - C{list}: C{list_type} C{atomic}, C{set} (items keyed by value) or C{map} (items keyed by
   C{keys}); upstream's rule for built-ins: C{x-kubernetes-list-type} when given, else a
   C{patchStrategy: merge} list is a map keyed by its C{patchMergeKey} (a set without one),
   else atomic;
 - C{deduced}: upstream's C{__untyped_deduced_}: maps are granular, lists atomic.

Built-in kinds come from L{kubetwist.runtime.types}; custom resources from the CRD's
structural schema (C{x-kubernetes-list-type}, C{x-kubernetes-list-map-keys},
C{x-kubernetes-map-type}, C{x-kubernetes-preserve-unknown-fields},
C{x-kubernetes-embedded-resource}).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kubetwist.runtime import codec
from kubetwist.runtime import types as rtypes

__all__ = [
    "DEDUCED",
    "SCALAR",
    "Node",
    "for_kind",
    "for_structural",
    "for_type",
    "zero_value",
]


@dataclass(eq=False)
class Node:
    """One schema node; see the module docstring.  C{fields} may be filled lazily."""

    kind: str
    fields: dict = field(default_factory=dict)
    elem: Node | None = None
    atomic: bool = False
    list_type: str = ""
    keys: tuple = ()
    key_defaults: dict = field(default_factory=dict)
    resolve: Callable[[], None] | None = None

    def field_schema(self, name: str) -> Node | None:
        """The schema of key C{name} of a map node, or C{None} when undeclared."""
        if self.resolve is not None:
            fn, self.resolve = self.resolve, None
            fn()
        node = self.fields.get(name)
        return node if node is not None else self.elem

    def declared(self, name: str) -> bool:
        """Whether C{name} is a declared struct field."""
        if self.resolve is not None:
            self.field_schema(name)
        return name in self.fields


SCALAR = Node("scalar")
DEDUCED = Node("deduced")

_TYPE_CACHE: dict[str, Node] = {}


#: The zero values kube-openapi enforces as C{default} on non-pointer, non-C{omitempty}
#: scalar fields (its C{mustEnforceDefault}).
_ENFORCED_ZEROS = {"string": "", "int32": 0, "int64": 0, "bool": False, "double": 0}


def _schema_default(fd: rtypes.FieldDef) -> object:
    if fd.default is not None:
        return fd.default
    if fd.pointer or fd.container or fd.omitempty:
        return None
    return _ENFORCED_ZEROS.get(fd.type)


def _key_defaults(item_type: str, keys: tuple) -> dict:
    """
    The OpenAPI defaults of a list-map's key fields (a C{+default=} marker, else the zero value
    kube-openapi enforces on a non-pointer, non-C{omitempty} scalar): an item without the key
    is keyed by the default (C{k:{"containerPort":80,"protocol":"TCP"}}), as upstream's
    C{schemaconv} carries every field's C{default} into the structured-merge-diff schema.
    """
    if not keys or item_type not in rtypes.TYPES:
        return {}
    out = {}
    for fd in _flat_fields(item_type):
        if fd.json_name in keys:
            default = _schema_default(fd)
            if default is not None:
                out[fd.json_name] = default
    return out


def _field_node(fd: rtypes.FieldDef) -> Node:
    if fd.type in rtypes.SCALARS or fd.type in rtypes.SPECIALS:
        item = DEDUCED if fd.type == "RawExtension" else SCALAR
    else:
        item = for_type(fd.type)
    if fd.container == "list":
        if fd.list_type:
            keys = tuple(fd.list_map_keys)
            return Node("list", elem=item, list_type=fd.list_type, keys=keys,
                        key_defaults=_key_defaults(fd.type, keys))
        if "merge" in fd.patch_strategy:
            if fd.patch_merge_key:
                return Node("list", elem=item, list_type="map", keys=(fd.patch_merge_key,))
            return Node("list", elem=item, list_type="set")
        return Node("list", elem=item, list_type="atomic")
    if fd.container == "map":
        return Node("map", elem=item, atomic=fd.map_type == "atomic")
    return item


def for_type(type_name: str) -> Node:
    """
    The node of a built-in message type (cached; recursive types resolve lazily); atomic
    when the type table marks the struct C{+structType=atomic}
    (L{kubetwist.runtime.types.TypeDef.struct_type}), as upstream's schema does through
    C{x-kubernetes-map-type: atomic}.
    """
    node = _TYPE_CACHE.get(type_name)
    if node is not None:
        return node
    td = rtypes.TYPES.get(type_name)
    node = Node("map", atomic=td is not None and td.struct_type == "atomic")
    _TYPE_CACHE[type_name] = node

    def resolve() -> None:
        for fd in _flat_fields(type_name):
            node.fields[fd.json_name] = _field_node(fd)
    node.resolve = resolve
    return node


def _flat_fields(type_name: str) -> list:
    out = []
    for fd in rtypes.fields_of(type_name):
        if fd.inline and not fd.json_name:
            out.extend(_flat_fields(fd.type))
        else:
            out.append(fd)
    return out


def _top(inner: Node, metadata: Node | None = None) -> Node:
    top = Node("map", atomic=False)

    def resolve() -> None:
        inner.field_schema("")
        top.fields.update(inner.fields)
        top.fields["apiVersion"] = SCALAR
        top.fields["kind"] = SCALAR
        if metadata is not None:
            top.fields["metadata"] = metadata
        top.elem = inner.elem
    top.resolve = resolve
    return top


def for_kind(group: str, version: str, kind: str) -> Node | None:
    """The schema of a served built-in kind (with C{apiVersion} and C{kind}), or C{None}."""
    name = rtypes.lookup_kind(group, version, kind)
    if name is None:
        return None
    return _top(for_type(name))


_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def for_structural(schema: dict | None) -> Node:
    """
    The schema of a custom resource from its CRD structural schema (the root schema of one
    version); C{metadata} is always C{ObjectMeta}.  A missing schema is C{deduced}.
    """
    if not schema:
        return _top(Node("map", elem=DEDUCED), for_type(_OBJECT_META))
    return _top(_from_structural(schema, root=True), for_type(_OBJECT_META))


def _from_structural(s: dict, root: bool = False) -> Node:
    if not isinstance(s, dict):
        return DEDUCED
    preserve = bool(s.get("x-kubernetes-preserve-unknown-fields"))
    if s.get("x-kubernetes-int-or-string"):
        return SCALAR
    typ = s.get("type", "")
    if typ == "array":
        items = s.get("items")
        elem = _from_structural(items) if isinstance(items, dict) else DEDUCED
        lt = s.get("x-kubernetes-list-type") or "atomic"
        keys = tuple(s.get("x-kubernetes-list-map-keys") or ())
        props = (items or {}).get("properties") or {} if isinstance(items, dict) else {}
        defaults = {k: props[k]["default"] for k in keys
                    if isinstance(props.get(k), dict) and "default" in props[k]}
        return Node("list", elem=elem, list_type=lt, keys=keys, key_defaults=defaults)
    props = s.get("properties")
    addl = s.get("additionalProperties")
    if typ == "object" or props or isinstance(addl, dict) or s.get(
            "x-kubernetes-embedded-resource"):
        node = Node("map", atomic=s.get("x-kubernetes-map-type") == "atomic")
        for name, sub in (props or {}).items():
            node.fields[name] = _from_structural(sub)
        if s.get("x-kubernetes-embedded-resource"):
            node.fields.setdefault("apiVersion", SCALAR)
            node.fields.setdefault("kind", SCALAR)
            node.fields.setdefault("metadata", DEDUCED)
        if isinstance(addl, dict):
            node.elem = _from_structural(addl)
        elif addl is True or preserve:
            node.elem = DEDUCED
        if root and "metadata" in node.fields:
            del node.fields["metadata"]
        return node
    if preserve:
        return DEDUCED
    return SCALAR


# --- Go zero values -------------------------------------------------------------------------
def zero_value(group: str, version: str, kind: str) -> dict:
    """
    The JSON of a zero-valued Go object of a built-in kind (what upstream's C{r.New()} turns
    into when converted to unstructured): non-pointer structs present, non-omitempty scalars
    at their zero, nil slices/maps/pointers C{null} unless C{omitempty}
    (L{kubetwist.runtime.codec.zero_object}).  Used as the live object of a create, so that
    C{Update} entries mark the same fields as upstream.
    """
    name = rtypes.lookup_kind(group, version, kind, protobuf=True)
    if name is None:
        return {}
    return codec.zero_object(name)


