# -*- test-case-name: tests.apiextensions.test_schema_validation -*-
"""
A CRD version's C{openAPIV3Schema}, read once into a tree of nodes.

Upstream reads the v1 C{JSONSchemaProps} into two forms per CRD version: a
C{structuralschema.Structural} (C{k8s.io/apiextensions-apiserver/pkg/apiserver/schema},
used by pruning, defaulting, list types and metadata) and a kube-openapi C{spec.Schema}
(C{pkg/apiserver/validation.ConvertJSONSchemaPropsWithPostProcess}, used by the schema
validator).  L{SchemaNode} carries what both need, so the 800 KB schemas of real CRDs are
walked once per CRD version, not per request.
"""

from __future__ import annotations

from typing import Any

from kubetwist.apiextensions.schema.formats import (
    GoRegexpError,
    compile_go_regexp,
    effective_format,
)

#: Marker: the schema has no C{default}.
NO_DEFAULT = object()


class SchemaNode:
    """
    One schema (a property, items, additionalProperties or junctor schema) of a CRD schema.

    @ivar raw: the JSON dict this node was read from (the wire form of C{JSONSchemaProps}).
    @ivar type: C{type} (C{""} when absent).
    @ivar types: the types kube-openapi checks (C{["integer", "string"]} for int-or-string).
    @ivar properties: name -> node, or C{None}.
    @ivar ap_present: C{additionalProperties} is set (bool or schema).
    @ivar ap_allows: its boolean (C{True} when it is a schema).
    @ivar ap_node: its schema, or C{None}.
    @ivar items: the C{items} schema node, or C{None}.
    @ivar default: the (pruned) default, or L{NO_DEFAULT}.
    """

    __slots__ = (
        "all_of",
        "any_of",
        "ap_allows",
        "ap_node",
        "ap_present",
        "default",
        "embedded",
        "enum",
        "excl_max",
        "excl_min",
        "format",
        "has_embedded",
        "has_lists",
        "int_or_string",
        "items",
        "junctors",
        "list_map_keys",
        "list_type",
        "map_type",
        "max_items",
        "max_length",
        "max_props",
        "maximum",
        "min_items",
        "min_length",
        "min_props",
        "minimum",
        "multiple_of",
        "not_",
        "nullable",
        "number_checks",
        "object_checks",
        "one_of",
        "pattern",
        "pattern_err",
        "pattern_re",
        "preserve_unknown",
        "properties",
        "raw",
        "required",
        "slice_checks",
        "string_checks",
        "type",
        "type_applies",
        "types",
        "unique_items",
    )

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        self.type = raw.get("type") or ""
        self.int_or_string = bool(raw.get("x-kubernetes-int-or-string"))
        if self.int_or_string:
            self.types = ["integer", "string"]
        else:
            self.types = [self.type] if self.type else []
        self.nullable = bool(raw.get("nullable"))
        self.format = effective_format(raw.get("format") or "", self.types)
        self.preserve_unknown = raw.get("x-kubernetes-preserve-unknown-fields") is True
        self.embedded = bool(raw.get("x-kubernetes-embedded-resource"))
        props = raw.get("properties")
        self.properties = ({k: SchemaNode(v) for k, v in props.items()}
                           if isinstance(props, dict) and props else None)
        ap = raw.get("additionalProperties", None)
        self.ap_present = ap is not None
        self.ap_allows = ap is not False
        self.ap_node = SchemaNode(ap) if isinstance(ap, dict) else None
        items = raw.get("items")
        self.items = SchemaNode(items) if isinstance(items, dict) else None
        self.default = raw.get("default", NO_DEFAULT)
        self.enum = raw.get("enum")
        self.pattern = raw.get("pattern") or ""
        self.pattern_re = None
        self.pattern_err = ""
        if self.pattern:
            try:
                self.pattern_re = compile_go_regexp(self.pattern)
            except GoRegexpError as e:
                self.pattern_err = str(e)
        self.minimum = raw.get("minimum")
        self.maximum = raw.get("maximum")
        self.excl_min = bool(raw.get("exclusiveMinimum"))
        self.excl_max = bool(raw.get("exclusiveMaximum"))
        self.multiple_of = raw.get("multipleOf")
        self.min_length = raw.get("minLength")
        self.max_length = raw.get("maxLength")
        self.min_items = raw.get("minItems")
        self.max_items = raw.get("maxItems")
        self.unique_items = bool(raw.get("uniqueItems"))
        self.min_props = raw.get("minProperties")
        self.max_props = raw.get("maxProperties")
        self.required = raw.get("required") or []
        self.all_of = [SchemaNode(x) for x in raw.get("allOf") or ()]
        self.any_of = [SchemaNode(x) for x in raw.get("anyOf") or ()]
        self.one_of = [SchemaNode(x) for x in raw.get("oneOf") or ()]
        n = raw.get("not")
        self.not_ = SchemaNode(n) if isinstance(n, dict) else None
        self.list_type = raw.get("x-kubernetes-list-type")
        self.list_map_keys = raw.get("x-kubernetes-list-map-keys") or []
        self.map_type = raw.get("x-kubernetes-map-type")
        self.junctors = bool(self.all_of or self.any_of or self.one_of or self.not_ is not None)
        self.type_applies = bool(self.types or self.format)
        self.string_checks = (self.max_length is not None or self.min_length is not None
                              or bool(self.pattern))
        self.number_checks = (self.multiple_of is not None or self.maximum is not None
                              or self.minimum is not None)
        self.slice_checks = True
        self.object_checks = True
        subs = list((self.properties or {}).values())
        if self.ap_node is not None:
            subs.append(self.ap_node)
        if self.items is not None:
            subs.append(self.items)
        #: some structural descendant (or this node) is a list-type set/map
        self.has_lists = self.list_type in ("set", "map") or any(x.has_lists for x in subs)
        #: some structural descendant (or this node) is an embedded resource
        self.has_embedded = self.embedded or any(x.has_embedded for x in subs)

    def child(self, key: str) -> SchemaNode | None:
        """The structural schema of field C{key}: a property, else additionalProperties."""
        if self.properties is not None:
            p = self.properties.get(key)
            if p is not None:
                return p
        if self.ap_present:
            return self.ap_node
        return None

    def __repr__(self) -> str:
        return f"<SchemaNode type={self.type!r}>"


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (faster than C{copy.deepcopy} for plain JSON)."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value
