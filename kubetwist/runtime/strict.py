# -*- test-case-name: tests.runtime.test_strict -*-
"""
Strict decoding of built-in kinds: the unknown and duplicate fields that upstream's strict
serializer reports (C{k8s.io/apimachinery/pkg/runtime/serializer/json} through
C{sigs.k8s.io/json} C{UnmarshalStrict}, and C{runtime.DefaultUnstructuredConverter
.FromUnstructuredWithValidation} for strategic merge patches), driven by kubetwist's type
tables (L{kubetwist.runtime.types}), plus the duplicate keys of YAML documents that
C{sigs.k8s.io/yaml} C{YAMLToJSONStrict} refuses.

A JSON document to check is parsed with L{parse_json_pairs}: every object becomes a L{Pairs}
(its key/value pairs in order, duplicates kept), so one walk finds both kinds of error in
document order, as Go's decoder does.  Plain dicts are walked too (no duplicates possible).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Callable, Iterable, Optional

import yaml

from kubetwist.runtime import gofmt
from kubetwist.runtime import types as typetables
from kubetwist.runtime.gofmt import marshal as go_marshal
from kubetwist.runtime.gofmt import quote as go_quote

#: The most strict errors C{sigs.k8s.io/json} accumulates for one document.
MAX_STRICT_ERRORS = 100

#: The pseudo type of an C{interface{}} value (a patch decoded into C{map[string]any}):
#: any key is known, duplicates are still found.
ANY = "any"

#: Top-level keys every kind knows (C{metav1.TypeMeta}, inlined).
_TYPE_META = ("apiVersion", "kind")


class Pairs(list):
    """A JSON object as the list of its C{(key, value)} pairs, in order, duplicates kept."""


def parse_json_pairs(body: bytes) -> Any:
    """
    Parse JSON keeping every object's keys in order, duplicates included (objects become
    L{Pairs}).  Only for checking: the body has already been parsed (and refused when
    malformed) by the ordinary decoder.

    @raise ValueError: malformed JSON.
    """
    try:
        return json.loads(body, object_pairs_hook=Pairs)
    except RecursionError:
        from kubetwist.runtime import jsonparse

        return jsonparse.loads(body, object_hook=Pairs)


@lru_cache(maxsize=None)
def known_fields(type_name: str) -> Optional[dict]:
    """
    The JSON keys of a message type, inline embeds promoted (C{Volume} knows C{name} and every
    C{VolumeSource} key), as C{{json_name: FieldDef}}; C{None} for a type without a table.
    """
    typedef = typetables.TYPES.get(type_name)
    if typedef is None:
        return None
    out: dict = {}
    for f in typedef.fields:
        if f.inline:
            inner = known_fields(f.type) or {}
            for k, v in inner.items():
                out.setdefault(k, v)
        else:
            out[f.json_name] = f
    return out


def _items(node: Any, sort_keys: bool) -> Iterable:
    if isinstance(node, Pairs):
        return node
    if sort_keys:
        return sorted(node.items(), key=lambda kv: str(kv[0]))
    return list(node.items())


def _is_object(node: Any) -> bool:
    return isinstance(node, (dict, Pairs))


class _Walk:
    """One walk: collects C{unknown field}/C{duplicate field} errors (C{sigs.k8s.io/json}
    paths and wording, or the unstructured converter's when C{converter})."""

    def __init__(self, sort_keys: bool, converter: bool, prune: bool) -> None:
        self.sort_keys = sort_keys
        self.converter = converter
        self.prune = prune
        self.errors: list[str] = []
        self._seen: set = set()

    def save(self, kind: str, path: str) -> None:
        if len(self.errors) >= MAX_STRICT_ERRORS:
            return
        text = (f'{kind} "{path}"' if self.converter else f"{kind} {go_quote(path)}")
        if text not in self._seen:
            self._seen.add(text)
            self.errors.append(text)

    @staticmethod
    def join(path: str, key: Any) -> str:
        if not isinstance(key, str):
            # YAML keys that are not strings become JSON strings (sigs.k8s.io/yaml)
            key = ("true" if key else "false") if isinstance(key, bool) else str(key)
        return f"{path}.{key}" if path else key

    def value(self, node: Any, type_name: str, container: str, path: str) -> None:
        if node is None:
            return
        if container == "list":
            if isinstance(node, list) and not isinstance(node, Pairs):
                for i, item in enumerate(node):
                    self.value(item, type_name, "", f"{path}[{i}]")
            return
        if container == "map":
            if _is_object(node):
                self.map(node, type_name, path)
            return
        if type_name == ANY:
            if _is_object(node):
                self.map(node, ANY, path)
            elif isinstance(node, list):
                for i, item in enumerate(node):
                    self.value(item, ANY, "", f"{path}[{i}]")
            return
        if _is_object(node) and type_name not in typetables.SCALARS \
                and type_name not in typetables.SPECIALS:
            self.struct(node, type_name, path)

    def map(self, node: Any, elem_type: str, path: str) -> None:
        seen: set = set()
        for key, val in _items(node, self.sort_keys):
            child = path if self.converter else self.join(path, key)
            if key in seen:
                self.save("duplicate field", self.join(path, key))
            seen.add(key)
            self.value(val, elem_type, "", child)

    def struct(self, node: Any, type_name: str, path: str, extra: tuple = ()) -> None:
        fields = known_fields(type_name)
        if fields is None:
            return
        seen: set = set()
        unknown: list = []
        for key, val in _items(node, self.sort_keys):
            if key in extra:
                f = None
            else:
                f = fields.get(key) if isinstance(key, str) else None
                if f is None:
                    self.save("unknown field", self.join(path, key))
                    unknown.append(key)
                    continue
            if key in seen:
                self.save("duplicate field", self.join(path, key))
            seen.add(key)
            if f is not None:
                self.value(val, f.type, f.container, self.join(path, key))
        if self.prune and unknown and isinstance(node, dict):
            for key in unknown:
                node.pop(key, None)


def strict_errors(doc: Any, type_name: str, sort_keys: bool = False,
                  top_level: bool = True, prune: bool = False) -> list[str]:
    """
    The strict decoding errors of C{doc} decoded into C{type_name}, as C{sigs.k8s.io/json}
    C{UnmarshalStrict} words them: C{unknown field "spec.containers[0].foo"},
    C{duplicate field "metadata.name"} (map keys are part of the path:
    C{duplicate field "metadata.labels.a"}), in document order, each once, at most 100.

    @param doc: a L{Pairs} tree from L{parse_json_pairs}, or a plain dict.
    @param type_name: a full type name (C{io.k8s.api.core.v1.Pod}) or L{ANY}.
    @param sort_keys: walk plain dicts in key order (the JSON that C{sigs.k8s.io/yaml} makes of
        a YAML document, and the JSON a JSON or merge patch produces, has sorted keys).
    @param top_level: C{apiVersion} and C{kind} are known (C{TypeMeta}).
    @param prune: remove the unknown keys from plain dicts (Go's decoder drops them).
    @return: the error texts.
    """
    walk = _Walk(sort_keys, converter=False, prune=prune)
    if type_name == ANY:
        walk.value(doc, ANY, "", "")
    elif _is_object(doc):
        walk.struct(doc, type_name, "", _TYPE_META if top_level else ())
    return walk.errors


def unstructured_unknown_fields(obj: dict, type_name: str, prune: bool = False) -> list[str]:
    """
    The unknown fields of an unstructured object converted into C{type_name}, as upstream's
    C{FromUnstructuredWithValidation} reports them for a strategic merge patch: C{unknown field
    "spec.foo"} (no quoting; map keys are not part of the path), sorted by text.

    @param prune: remove the unknown keys from C{obj}.
    """
    walk = _Walk(sort_keys=False, converter=True, prune=prune)
    walk.struct(obj, type_name, "", _TYPE_META)
    return sorted(walk.errors)


def prune_unknown(obj: dict, type_name: str) -> None:
    """Remove from C{obj} (in place) every key its type does not know, as Go's decoder drops
    them whatever the C{fieldValidation}."""
    strict_errors(obj, type_name, prune=True)


# --- YAML ----------------------------------------------------------------------------------------
def _go_key(node: yaml.Node, constructor: Callable[[yaml.Node], Any]) -> tuple[Any, str]:
    """A mapping key as C{(identity, Go %#v text)}."""
    try:
        value = constructor(node)
    except yaml.YAMLError:
        value = node.value
    if isinstance(value, str):
        return ("str", value), go_quote(value)
    if isinstance(value, bool):
        return ("bool", value), "true" if value else "false"
    if value is None:
        return ("nil", None), "<nil>"
    return (type(value).__name__, value), str(value)


def yaml_duplicate_keys(body: bytes, loader: type) -> list[str]:
    """
    The duplicate mapping keys of a YAML document, as go-yaml v2's strict decoder words them
    (C{line 5: key "x" already set in map}; the line is the duplicate's value's, 1-based), in
    document order.  C{loader} is the PyYAML loader class the body is decoded with.
    """
    ldr = loader(body)
    try:
        root = ldr.get_single_node()
    except yaml.YAMLError:
        return []
    finally:
        ldr.dispose()
    out: list[str] = []

    def scalar(node: yaml.Node) -> Any:
        return ldr.construct_object(node, deep=True)

    # depth-first in document order, without recursion (documents nest up to 1000 levels)
    # each key is checked just before its value is visited, as go-yaml decodes
    stack: list = [(root, None, None)]
    while stack:
        node, key_node, seen = stack.pop()
        if key_node is not None and isinstance(key_node, yaml.ScalarNode) and \
                key_node.tag != "tag:yaml.org,2002:merge":
            ident, text = _go_key(key_node, scalar)
            if ident in seen:
                out.append(f"line {node.start_mark.line + 1}: key {text} already set in map")
            seen.add(ident)
        if isinstance(node, yaml.MappingNode):
            here: set = set()
            stack.extend((value, key, here) for key, value in reversed(node.value))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, None, None) for item in reversed(node.value))
    return out


def yaml_strict_error(body: bytes, loader: type) -> Optional[str]:
    """The error C{sigs.k8s.io/yaml} C{YAMLToJSONStrict} gives for duplicate keys
    (C{yaml: unmarshal errors:} then, on its own line indented by two spaces, one
    C{line 5: key "x" already set in map} per duplicate), or C{None}."""
    dups = yaml_duplicate_keys(body, loader)
    if not dups:
        return None
    return "yaml: unmarshal errors:\n  " + "\n  ".join(dups)


def warnings_of(errors: list[str]) -> list[str]:
    """
    The C{Warning} texts of strict errors under C{fieldValidation=Warn} (upstream
    C{addStrictDecodingWarnings}: a YAML error becomes one warning per line, without its
    C{yaml: unmarshal errors:} prefix).
    """
    out: list[str] = []
    for e in errors:
        for prefix in ("yaml: unmarshal errors:\n",
                       "error converting YAML to JSON: yaml: unmarshal errors:\n"):
            if e.startswith(prefix):
                out.extend(line.strip() for line in e[len(prefix):].split("\n"))
                break
        else:
            out.append(e)
    return out


def strict_decoding_message(errors: list[str]) -> str:
    """C{runtime.NewStrictDecodingError(errs).Error()}."""
    return "strict decoding error: " + ", ".join(errors)


# --- patches -------------------------------------------------------------------------------------
_JSON_PATCH_OP = frozenset({"op", "path", "from", "value"})


def json_patch_errors(doc: Any) -> list[str]:
    """
    The strict errors of a JSON patch document decoded into upstream's C{[]jsonPatchOp}
    (C{op path from value}; C{value} is any JSON), each prefixed C{json patch} as
    C{patch.go} does: C{json patch unknown field "[0].foo"},
    C{json patch duplicate field "[1].value.a"}.

    @param doc: a L{Pairs} tree (L{parse_json_pairs}).
    """
    walk = _Walk(sort_keys=False, converter=False, prune=False)
    if isinstance(doc, list) and not isinstance(doc, Pairs):
        for i, op in enumerate(doc):
            if not _is_object(op):
                continue
            path = f"[{i}]"
            seen: set = set()
            for key, val in _items(op, False):
                if key not in _JSON_PATCH_OP:
                    walk.save("unknown field", f"{path}.{key}")
                    continue
                if key in seen:
                    walk.save("duplicate field", f"{path}.{key}")
                seen.add(key)
                if key == "value":
                    walk.value(val, ANY, "", f"{path}.value")
    return [f"json patch {e}" for e in walk.errors]


def go_json(obj: Any) -> str:
    """Compact JSON as Go's C{encoding/json} writes a C{map[string]any} (keys sorted, HTML-safe
    escapes): the patched object upstream quotes in a JSON or merge patch's strict decoding
    error."""
    return go_marshal(obj, sort_keys=True)


def go_sprint(value: Any) -> str:
    """Go's C{fmt.Sprintf("%+v", v)} of a decoded JSON value (C{map[a:1 b:[x y]]}, keys sorted):
    the patch upstream quotes in a strategic merge patch's strict decoding error."""
    return gofmt.sprint(value)
