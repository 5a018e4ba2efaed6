# -*- test-case-name: tests.runtime.test_typed -*-
"""
Typed conversion of a decoded JSON document: what Go's C{encoding/json} (upstream's fork,
C{sigs.k8s.io/json}, reached through C{k8s.io/apimachinery/pkg/runtime/serializer/json}) does
when it decodes a request body into the kind's Go struct, driven by kubetwist's type tables
(L{kubetwist.runtime.types}).

Go refuses a JSON value of the wrong type for a field with an C{UnmarshalTypeError}, worded
C{json: cannot unmarshal <what> into Go struct field <Struct>.<path> of type <type>}:

 - C{<what>} is C{string}, C{bool}, C{array}, C{object}, C{number}, or C{number <literal>}
   when a number does not fit an integer or float field (C{number 1.5}, C{number 1e3},
   C{number 3000000000} for an C{int32});
 - C{<Struct>} is the Go name of the innermost struct being decoded (for a field promoted from
   an inline embed, the outer struct: C{Volume}, not C{VolumeSource});
 - C{<path>} is the JSON names from the root, joined by dots, without list indices or map keys
   (C{spec.volumes.fc.lun});
 - C{<type>} is C{reflect.Type.String()} of the field (or of the list or map element):
   C{int32}, C{[]v1.Container}, C{map[string]string}, C{v1.Protocol} (named types come from
   L{kubetwist.runtime.gotypes}, recorded from kube-apiserver).

Such an error is I{saved} and decoding goes on (the first saved one is reported); an error of a
type with its own C{UnmarshalJSON} (C{resource.Quantity}, C{metav1.Time}, C{intstr.IntOrString},
C{metav1.Duration}) I{aborts} decoding and wins over a saved one, as in C{decodeState.unmarshal}.
C{null} is accepted for every field.  Bad base64 in a C{[]byte} field is saved as
C{illegal base64 data at input byte N}.

The walk is iterative: nesting depth is bounded by the document (upstream's scanner refuses
more than 10000 levels before anything is decoded: L{check_depth}).
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from typing import Any, Optional

from kubetwist.runtime import gofmt
from kubetwist.runtime import types as typetables

#: Go's C{encoding/json} nesting limit (C{maxNestingDepth}).
MAX_NESTING_DEPTH = 10000

_INT_RANGES = {"int32": (-(2 ** 31), 2 ** 31 - 1), "int64": (-(2 ** 63), 2 ** 63 - 1)}
_SCALAR_GO = {"string": "string", "int32": "int32", "int64": "int64", "bool": "bool",
              "double": "float64", "bytes": "[]uint8"}
_SPECIAL_GO = {"Quantity": "resource.Quantity", "IntOrString": "intstr.IntOrString",
               "Time": "v1.Time", "MicroTime": "v1.MicroTime", "Duration": "v1.Duration",
               "FieldsV1": "v1.FieldsV1", "RawExtension": "runtime.RawExtension",
               "ExtraValue": "v1.ExtraValue"}

#: C{resource.ErrFormatWrong}.
QUANTITY_FORMAT_WRONG = ("quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


class TypeMismatch(ValueError):
    """
    A body Go could not decode into the kind's struct; C{str()} is Go's error text
    (C{json: cannot unmarshal string into Go struct field ...}).
    """


class Number(float):
    """A JSON number that keeps its literal text (C{1.0}, C{1e3}, C{-1.5e400}), for the
    C{number <literal>} of Go's messages.  See L{parse_json}."""

    text: str

    def __new__(cls, text: str) -> "Number":
        try:
            value = float(text)
        except OverflowError:  # pragma: no cover - float() gives inf, not an error
            value = float("inf")
        self = super().__new__(cls, value)
        self.text = text
        return self


def number_text(value: Any) -> str:
    """The literal of a JSON number as Go sees it in the body: the kept text of a L{Number},
    else what Go's C{encoding/json} writes for the value (C{1.5}, C{1e+21}; a whole float
    keeps a C{.0}, as it came from a literal with a point or an exponent)."""
    if isinstance(value, Number):
        return value.text
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return "+Inf" if value == float("inf") else "-Inf" if value < 0 else "NaN"
    text = repr(value)
    if "e" in text:
        mant, exp = text.split("e")
        sign = exp[0] if exp[0] in "+-" else "+"
        text = f"{mant}e{sign}{exp.lstrip('+-').lstrip('0').rjust(2, '0')}"
    return text


def _package_name(type_name: str) -> str:
    """The Go package name of a full type name (C{io.k8s.api.apps.v1.X} -> C{v1})."""
    return type_name.rsplit(".", 2)[-2]


def go_struct_name(type_name: str) -> str:
    """The Go struct name of a full type name (C{io.k8s.api.core.v1.PodSpec} -> C{PodSpec})."""
    return type_name.rsplit(".", 1)[-1]


def _elem_go(f: typetables.FieldDef) -> str:
    if f.type in _SCALAR_GO:
        return _SCALAR_GO[f.type]
    if f.type in _SPECIAL_GO:
        return _SPECIAL_GO[f.type]
    return f"{_package_name(f.type)}.{go_struct_name(f.type)}"


def default_go_type(f: typetables.FieldDef, elem: bool = False) -> str:
    """
    The Go type name a field would have with no named types: C{int32}, C{[]v1.Container},
    C{map[string]string}, C{resource.Quantity}; with C{elem}, its list or map element's.
    """
    inner = _elem_go(f)
    if elem or not f.container:
        return inner
    if f.container == "list":
        return f"[]{inner}"
    return f"map[string]{inner}"


@lru_cache(maxsize=None)
def go_type(type_name: str, json_name: str, elem: bool = False) -> str:
    """
    C{reflect.Type.String()} of a field of C{type_name} (or of its element): the recorded name
    from L{kubetwist.runtime.gotypes} where there is one, else L{default_go_type}.
    """
    from kubetwist.runtime.gotypes import GO_TYPES

    recorded = GO_TYPES.get(type_name, {}).get(json_name)
    if recorded and recorded[1 if elem else 0]:
        return recorded[1 if elem else 0]
    f = fields_by_json(type_name)[json_name][0]
    return default_go_type(f, elem)


@lru_cache(maxsize=None)
def fields_by_json(type_name: str) -> dict:
    """
    C{{json_name: (FieldDef, declaring type name)}} of a struct, inline embeds promoted
    (the declaring type is the embed's, for the recorded Go names).
    """
    out: dict = {}
    typedef = typetables.TYPES.get(type_name)
    if typedef is None:
        return out
    for f in typedef.fields:
        if f.inline:
            for k, v in fields_by_json(f.type).items():
                out.setdefault(k, v)
        else:
            out.setdefault(f.json_name, (f, type_name))
    return out


#: The zero values Go decodes a JSON C{null} element of a list or map into, by element type.
_NULL_ELEMENT_ZEROS = {"string": "", "int32": 0, "int64": 0, "double": 0, "bool": False}


def zero_null_elements(obj: Any, type_name: Optional[str]) -> None:
    """
    Replace the C{null} elements of lists and maps whose elements are structs or scalars by
    the zero value Go's decoder gives them (C{{}}, C{""}, C{0}, C{false}): C{[null]} of
    C{[]LabelSelectorRequirement} is one requirement with every field empty, which
    validation then refuses with upstream's messages.  Pointer and special elements are
    left.  In place, iterative; a value of the wrong type is left to L{check}.
    """
    if type_name is None or type_name not in typetables.TYPES or not isinstance(obj, dict):
        return
    stack = [(obj, type_name)]
    fields: dict = {}
    while stack:
        value, name = stack.pop()
        if name not in fields:
            fields[name] = fields_by_json(name)
        for key, (f, _) in fields[name].items():
            item = value.get(key)
            if item is None:
                continue
            struct = f.type in typetables.TYPES
            if f.container in ("list", "map") and not f.pointer:
                zero = {} if struct else _NULL_ELEMENT_ZEROS.get(f.type)
                elements = item if isinstance(item, list) else \
                    item if isinstance(item, dict) and f.container == "map" else None
                if elements is None:
                    continue
                keys = range(len(elements)) if isinstance(elements, list) else list(elements)
                for k in keys:
                    if elements[k] is None and zero is not None:
                        elements[k] = {} if struct else zero
                    if struct and isinstance(elements[k], dict):
                        stack.append((elements[k], f.type))
            elif struct and not f.container and isinstance(item, dict):
                stack.append((item, f.type))


#: Go's JSON kind names (one definition: L{kubetwist.runtime.gofmt.json_kind}).
_json_kind = gofmt.json_kind


class _Abort(Exception):
    """An C{UnmarshalJSON} error: decoding stops, this error is the answer."""


class _Decode:
    """One decode of a document into a type (see the module docstring)."""

    def __init__(self) -> None:
        self.saved: Optional[str] = None

    def save(self, text: str) -> None:
        if self.saved is None:
            self.saved = text

    @staticmethod
    def type_error(what: str, struct: str, path: tuple, gotype: str) -> str:
        if not struct and not path:
            return f"json: cannot unmarshal {what} into Go value of type {gotype}"
        return (f"json: cannot unmarshal {what} into Go struct field "
                f"{struct}.{'.'.join(path)} of type {gotype}")

    def run(self, doc: dict, type_name: str) -> Optional[str]:
        # work items (value, kind, info, struct name, JSON path), popped in document order
        stack: list = [(doc, "struct", (type_name, ""), "", ())]
        try:
            while stack:
                value, kind, info, struct, path = stack.pop()
                if value is None:
                    continue
                if kind == "struct":
                    self.struct(value, info, struct, path, stack)
                elif kind == "leaf":
                    self.leaf(value, info, struct, path)
                else:
                    self.container(value, kind, info, struct, path, stack)
        except _Abort as e:
            return str(e)
        return self.saved

    def struct(self, value: Any, info: tuple, struct: str, path: tuple, stack: list) -> None:
        type_name, gotype = info
        if not isinstance(value, dict):
            self.save(self.type_error(_json_kind(value), struct, path, gotype or
                                      f"{_package_name(type_name)}.{go_struct_name(type_name)}"))
            return
        fields = fields_by_json(type_name)
        name = go_struct_name(type_name)
        pending = []
        for key, val in value.items():
            entry = fields.get(key)
            if entry is None or val is None:
                continue
            f, owner = entry
            child = path + (key,)
            if f.container:
                pending.append((val, f.container, (f, owner), name, child))
            elif f.is_message and f.type in typetables.TYPES:
                pending.append((val, "struct", (f.type, go_type(owner, f.json_name)), name,
                                child))
            else:
                pending.append((val, "leaf", (f, owner, False), name, child))
        stack.extend(reversed(pending))

    def container(self, value: Any, kind: str, info: tuple, struct: str, path: tuple,
                  stack: list) -> None:
        f, owner = info
        if not isinstance(value, list if kind == "list" else dict):
            self.save(self.type_error(_json_kind(value), struct, path,
                                      go_type(owner, f.json_name)))
            return
        items = value if kind == "list" else list(value.values())
        if f.is_message and f.type in typetables.TYPES:
            gotype = go_type(owner, f.json_name, elem=True)
            stack.extend(reversed([(v, "struct", (f.type, gotype), struct, path)
                                   for v in items]))
        else:
            stack.extend(reversed([(v, "leaf", (f, owner, True), struct, path)
                                   for v in items]))

    def leaf(self, value: Any, info: tuple, struct: str, path: tuple) -> None:
        f, owner, elem = info
        t = f.type
        if t in typetables.SPECIALS:
            self.special(value, t, f, owner, elem, struct, path)
            return
        gotype = go_type(owner, f.json_name, elem=elem)
        jk = _json_kind(value)
        if t == "string":
            if jk != "string":
                self.save(self.type_error(jk, struct, path, gotype))
        elif t == "bool":
            if jk != "bool":
                self.save(self.type_error(jk, struct, path, gotype))
        elif t in _INT_RANGES:
            if jk != "number":
                self.save(self.type_error(jk, struct, path, gotype))
                return
            low, high = _INT_RANGES[t]
            text = number_text(value)
            if isinstance(value, float) or not low <= int(text) <= high:
                self.save(self.type_error(f"number {text}", struct, path, gotype))
        elif t == "double":
            if jk != "number":
                self.save(self.type_error(jk, struct, path, gotype))
            elif value in (float("inf"), float("-inf")):
                self.save(self.type_error(f"number {number_text(value)}", struct, path, gotype))
        elif t == "bytes":
            self.bytes_value(value, jk, gotype, struct, path)

    def bytes_value(self, value: Any, jk: str, gotype: str, struct: str, path: tuple) -> None:
        if jk == "string":
            problem = go_base64_error(value)
            if problem:
                self.save(problem)
        elif jk == "array":
            for item in value:
                ik = _json_kind(item)
                if ik == "null":
                    continue
                if ik != "number":
                    self.save(self.type_error(ik, struct, path, "uint8"))
                    continue
                text = number_text(item)
                if isinstance(item, float) or not 0 <= int(text) <= 255:
                    self.save(self.type_error(f"number {text}", struct, path, "uint8"))
        else:
            self.save(self.type_error(jk, struct, path, gotype))

    def special(self, value: Any, t: str, f: typetables.FieldDef, owner: str, elem: bool,
                struct: str, path: tuple) -> None:
        jk = _json_kind(value)
        if t in ("FieldsV1", "RawExtension"):
            return
        if t == "ExtraValue":
            if jk != "array":
                self.save(self.type_error(jk, struct, path, go_type(owner, f.json_name, elem)))
                return
            for item in value:
                ik = _json_kind(item)
                if ik not in ("string", "null"):
                    self.save(self.type_error(ik, struct, path, "string"))
            return
        if t == "Quantity":
            if jk in ("array", "object", "bool") or (jk == "string" and not value.strip()):
                raise _Abort(QUANTITY_FORMAT_WRONG)
            from kubetwist.runtime.quantity import QuantityError, parse_quantity

            try:
                parse_quantity(value if jk == "string" else number_text(value))
            except QuantityError as e:
                raise _Abort(str(e)) from None
            return
        if t == "IntOrString":
            if jk == "string":
                return
            if jk != "number":
                raise _Abort(self.type_error(jk, struct, path, "int32"))
            text = number_text(value)
            if isinstance(value, float) or not -(2 ** 31) <= int(text) < 2 ** 31:
                raise _Abort(self.type_error(f"number {text}", struct, path, "int32"))
            return
        if t in ("Time", "MicroTime", "Duration"):
            if jk != "string":
                raise _Abort(self.type_error(jk, struct, path, "string"))
            if t == "Duration":
                problem = go_duration_error(value)
            else:
                problem = go_time_error(value, micro=t == "MicroTime")
            if problem:
                raise _Abort(problem)


def check(doc: Any, type_name: str) -> Optional[str]:
    """
    Decode C{doc} into C{type_name} as Go would and give Go's error text, or C{None} when the
    document fits the type.  Unknown fields are ignored (strict decoding is
    L{kubetwist.runtime.strict}); a type without a table accepts anything.

    @param doc: a decoded JSON object (L{parse_json} keeps number literals for the messages).
    @param type_name: a full type name (C{io.k8s.api.core.v1.Pod}).
    """
    if type_name not in typetables.TYPES or not isinstance(doc, dict):
        return None
    return _Decode().run(doc, type_name)


def check_depth(doc: Any) -> bool:
    """Whether C{doc} nests no deeper than L{MAX_NESTING_DEPTH} (iterative)."""
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > MAX_NESTING_DEPTH:
            return False
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return True


# --- Go's base64, time and duration parsers' errors ---------------------------------------------
_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def go_base64_error(text: str) -> Optional[str]:
    """
    Go's C{base64.StdEncoding.Decode} error for C{text} (C{illegal base64 data at input byte
    N}), or C{None} when it decodes; C{\\r} and C{\\n} are skipped, as Go's C{decodeQuantum}
    does.
    """
    src = text.encode("utf-8", "surrogatepass")
    n = len(src)
    si = 0
    while True:
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return None
                return f"illegal base64 data at input byte {si - j}"
            c = src[si]
            si += 1
            if c in _B64:
                j += 1
                continue
            if c in (0x0A, 0x0D):
                continue
            if c != 0x3D:  # '='
                return f"illegal base64 data at input byte {si - 1}"
            if j in (0, 1):
                return f"illegal base64 data at input byte {si - 1}"
            if j == 2:
                while si < n and src[si] in (0x0A, 0x0D):
                    si += 1
                if si == n:
                    return f"illegal base64 data at input byte {n}"
                if src[si] != 0x3D:
                    return f"illegal base64 data at input byte {si - 1}"
                si += 1
            while si < n and src[si] in (0x0A, 0x0D):
                si += 1
            if si < n:
                return f"illegal base64 data at input byte {si}"
            return None


_RFC3339 = "2006-01-02T15:04:05Z07:00"
_RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"
# layout chunks of time.Parse: (layout text, what it reads)
_CHUNKS = (("2006", r"\d{4}"), ("-", "-"), ("01", r"\d{2}"), ("-", "-"), ("02", r"\d{2}"),
           ("T", "T"), ("15", r"\d{2}"), (":", ":"), ("04", r"\d{2}"), (":", ":"))
_CHUNKS_RFC3339 = _CHUNKS + (("05", r"\d{2}(?:[.,]\d+)?"), ("Z07:00", r"Z|[+-]\d{2}:\d{2}"))
_CHUNKS_MICRO = _CHUNKS + (("05", r"\d{2}"), (".000000", r"\.\d{6}"),
                           ("Z07:00", r"Z|[+-]\d{2}:\d{2}"))


def go_time_error(text: str, micro: bool = False) -> Optional[str]:
    """
    Go's C{time.Parse(time.RFC3339, text)} error (C{metav1.Time}; C{RFC3339Micro} for
    C{metav1.MicroTime}), or C{None}: C{parsing time "x" as "2006-01-02T15:04:05Z07:00":
    cannot parse "x" as "2006"}; out-of-range fields give C{parsing time "...": month out of
    range}, text after the layout C{...: extra text: " x"}.
    """
    layout = _RFC3339_MICRO if micro else _RFC3339
    quoted = _go_quote(text)
    rest = text
    values = []
    for chunk, rx in (_CHUNKS_MICRO if micro else _CHUNKS_RFC3339):
        m = re.match(rx, rest)
        if not m:
            return (f"parsing time {quoted} as {_go_quote(layout)}: cannot parse "
                    f"{_go_quote(rest)} as {_go_quote(chunk)}")
        values.append(m.group(0))
        rest = rest[m.end():]
    if rest:
        return f"parsing time {quoted}: extra text: {_go_quote(rest)}"
    year, month, day, hour, minute = (int(values[i]) for i in (0, 2, 4, 6, 8))
    second = int(values[10][:2])
    if not 1 <= month <= 12:
        return f"parsing time {quoted}: month out of range"
    if hour > 23:
        return f"parsing time {quoted}: hour out of range"
    if minute > 59:
        return f"parsing time {quoted}: minute out of range"
    if second > 59:
        return f"parsing time {quoted}: second out of range"
    try:
        datetime(year, month, day)
    except ValueError:
        return f"parsing time {quoted}: day out of range"
    return None


_DURATION_RE = re.compile(r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+|[-+]?0")


def go_duration_error(text: str) -> Optional[str]:
    """Go's C{time.ParseDuration} error (C{time: invalid duration "x"}), or C{None}."""
    if _DURATION_RE.fullmatch(text):
        return None
    if re.fullmatch(r"[-+]?(?:\d+\.?\d*|\.\d+)", text):
        return f"time: missing unit in duration {_go_quote(text)}"
    m = re.fullmatch(r"[-+]?(?:(?:\d+\.?\d*|\.\d+)[a-zA-Zµμ]+)+", text)
    if m:
        unit = re.findall(r"(?:\d+\.?\d*|\.\d+)([a-zA-Zµμ]+)", text)
        bad = next(u for u in unit if u not in ("ns", "us", "µs", "μs", "ms", "s", "m", "h"))
        return f"time: unknown unit {_go_quote(bad)} in duration {_go_quote(text)}"
    return f"time: invalid duration {_go_quote(text)}"


def _go_quote(text: str) -> str:
    from kubetwist.runtime.gofmt import quote

    return quote(text)


# --- parsing that keeps number literals ----------------------------------------------------------
def parse_json(body: bytes) -> Any:
    """
    Parse a JSON body keeping every float's literal (L{Number}) and integers of any size, for
    L{check}'s messages.  Only for checking a body already accepted by the ordinary decoder.

    @raise ValueError: malformed JSON.
    """
    import json

    from kubetwist.runtime import jsonparse

    def constant(name: str) -> Any:
        raise ValueError(f"invalid JSON constant {name}")

    try:
        return json.loads(body, parse_float=Number, parse_constant=constant)
    except RecursionError:
        return jsonparse.loads(body, parse_float=Number)


def decode_error(obj: Any, type_name: Optional[str], body: bytes = b"",
                 json_body: bool = False) -> Optional[str]:
    """
    L{check} of a decoded body; for a JSON body with an error, the body is parsed again
    keeping number literals (L{parse_json}) so the message quotes them as Go does
    (C{number 1e3}).  C{None} for a type without a table or a body that fits.
    """
    if type_name is None:
        return None
    message = check(obj, type_name)
    if message and json_body and body:
        try:
            exact = check(parse_json(body), type_name)
        except ValueError:
            exact = None
        message = exact or message
    return message


# --- the unstructured converter (strategic merge patches) ---------------------------------------
_GO_KIND = {"string": "string", "bool": "bool", "int32": "int32", "int64": "int64",
            "double": "float64"}


def _unstructured_kind(value: Any) -> str:
    """C{reflect.Kind} of a decoded JSON value in an unstructured map (ints are C{int64})."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "slice"
    return "map"


def converter_error(obj: Any, type_name: Optional[str]) -> Optional[str]:
    """
    Upstream C{runtime.DefaultUnstructuredConverter.FromUnstructured} of a patched object into
    the kind's struct (a strategic merge patch's result), which words type errors its own way:
    C{unrecognized type: int32} (a string or bool for an integer), C{cannot convert float64 to
    int32} (a fraction), C{cannot convert int64 to string}, C{cannot restore struct from:
    string}, C{cannot restore slice from map}, C{cannot restore map from slice}.  Fields are
    visited in struct declaration order and the first error ends the conversion.  C{None}
    when the object converts (or the type has no table).
    """
    if type_name is None or type_name not in typetables.TYPES or not isinstance(obj, dict):
        return None
    try:
        _conv_struct(obj, type_name)
    except _Abort as e:
        return str(e)
    return None


def _conv_struct(value: Any, type_name: str) -> None:
    if not isinstance(value, dict):
        raise _Abort(f"cannot restore struct from: {_unstructured_kind(value)}")
    for f in typetables.TYPES[type_name].fields:
        if f.inline:
            _conv_struct(value, f.type)
            continue
        item = value.get(f.json_name)
        if item is None:
            continue
        _conv_field(item, f, type_name, f.container)


def _conv_field(value: Any, f: typetables.FieldDef, owner: str, container: str) -> None:
    if container == "list":
        if f.type == "bytes" and isinstance(value, str):
            _conv_leaf(value, f, owner)
            return
        if not isinstance(value, list):
            raise _Abort(f"cannot restore slice from {_unstructured_kind(value)}")
        for item in value:
            if item is not None:
                _conv_field(item, f, owner, "")
        return
    if container == "map":
        if not isinstance(value, dict):
            raise _Abort(f"cannot restore map from {_unstructured_kind(value)}")
        for item in value.values():
            if item is not None:
                _conv_field(item, f, owner, "")
        return
    if f.is_message and f.type in typetables.TYPES:
        _conv_struct(value, f.type)
        return
    _conv_leaf(value, f, owner)


def _conv_leaf(value: Any, f: typetables.FieldDef, owner: str) -> None:
    t = f.type
    st = _unstructured_kind(value)
    if t == "bytes":
        if st == "string":
            problem = go_base64_error(value) if value else None
            if problem:
                raise _Abort(f"error decoding from json: {problem}")
            return
        if st != "slice":
            raise _Abort(f"cannot restore slice from {st}")
        return
    if t in typetables.SPECIALS:
        if t in ("FieldsV1", "RawExtension", "ExtraValue"):
            return
        # types with UnmarshalJSON: the value is marshalled and unmarshalled
        message = _Decode()
        message.special(value, t, f, owner, False, "", ())
        return
    if t not in _GO_KIND:
        return
    kind = _GO_KIND[t]
    if st == kind:
        return
    if st == "int64":
        if t in ("int32", "int64", "double"):
            return
        if t == "string":
            raise _Abort(
                f"cannot convert int64 to {go_type(owner, f.json_name, bool(f.container))}")
        raise _Abort(f"unrecognized type: {kind}")
    if st == "float64" and t in ("int32", "int64"):
        if value.is_integer():
            return
        raise _Abort(f"cannot convert float64 to {go_type(owner, f.json_name, bool(f.container))}")
    raise _Abort(f"unrecognized type: {kind}")
