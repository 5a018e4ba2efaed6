# -*- test-case-name: tests.runtime.test_govalues -*-
"""
Go values of Kubernetes' internal API types, printed as kube-apiserver prints them in
validation messages: C{fmt}'s C{%#v} (L{sharp_v}; C{field.Invalid} of a whole
C{core.PodTemplateSpec}) and C{github.com/google/go-cmp/cmp.Diff} (L{cmp_diff}; the Pod update
C{Forbidden} message).

A Go type (L{GoType}) is derived from kubetwist's type tables (L{kubetwist.runtime.types}:
field order, pointers, lists and maps), the named Go types of L{kubetwist.runtime.gotypes} and
the internal packages' differences from the versioned types in
L{kubetwist.runtime.types.internal_core}.  A Go value is the decoded JSON converted by
L{from_json}: a struct is a C{dict} of Go field name to value holding every field (zero values
filled in), a nil pointer, slice or map is C{None}, a non-nil pointer is its element's value,
a C{metav1.Time} is its RFC 3339 text (C{None} for the zero time), a C{resource.Quantity} its
text (C{None} for the zero quantity).

C{cmp.Diff} follows go-cmp v0.6.0 (C{cmp/compare.go}, C{cmp/internal/diff}, C{cmp/report_*.go}).
go-cmp makes one random choice per process, from the clock at start: a process prints its
diff lines either with regular spaces or with non-breaking spaces (U+00A0) after the C{+}/C{-}
column, and the same choice decides whether its edit-script search starts from the end or the
start of two slices.  kubetwist always prints what a process that picked non-breaking spaces
prints (both choices of that process, as recorded from kube-apiserver).

Not reproduced: go-cmp's hex dump of mostly binary strings (printed as text chunks here), the
C{inf.Dec} of quantities beyond C{ParseQuantity}'s fast path (huge or very precise values), and
pointer cycles (API objects have none).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Callable, Iterator, Optional

from kubetwist.runtime import gofmt
from kubetwist.runtime import types as typetables
from kubetwist.runtime.types import internal_core

#: The sentinel of a value that is not there (a slice element only one side has, go-cmp's
#: invalid C{reflect.Value}).
INVALID: Any = type("Invalid", (), {"__repr__": lambda self: "INVALID"})()

_SCALARS = {"string": ("string", "string"), "int32": ("int", "int32"),
            "int64": ("int", "int64"), "bool": ("bool", "bool"),
            "double": ("float", "float64"), "bytes": ("bytes", "[]uint8")}
_LEAF_KINDS = frozenset({"string", "int", "bool", "float", "bytes", "time", "quantity"})
#: Go kinds go-cmp and fmt treat as structs (C{metav1.Time} and C{resource.Quantity} are
#: structs that compare with their own C{Equal} and print with their own methods).
_STRUCT_KINDS = frozenset({"struct", "time", "quantity"})


class GoType:
    """
    One Go type.

    @ivar kind: C{struct}, C{slice}, C{map}, C{ptr}, C{string}, C{int}, C{bool}, C{float},
        C{bytes}, C{time} (C{metav1.Time}) or C{quantity} (C{resource.Quantity}).
    @ivar name: C{reflect.Type.String()}: C{core.PodSpec}, C{[]core.Volume}, C{*int64},
        C{map[string]string}, C{core.ResourceList}.
    @ivar named: the type has a name (C{t.Name() != ""}): a struct, a named string or map.
    @ivar elem: the element type of a slice, map or pointer.
    @ivar key: the key type of a map.
    """

    def __init__(self, kind: str, name: str, named: bool = False, elem: "GoType | None" = None,
                 key: "GoType | None" = None,
                 fields: "Callable[[], tuple[GoField, ...]] | None" = None) -> None:
        self.kind, self.name, self.named, self.elem, self.key = kind, name, named, elem, key
        self._make_fields = fields
        self._fields: "tuple[GoField, ...] | None" = None

    @property
    def fields(self) -> "tuple[GoField, ...]":
        """A struct's fields in declaration order (built on first use: types may recurse)."""
        if self._fields is None:
            self._fields = self._make_fields() if self._make_fields else ()
        return self._fields

    def __repr__(self) -> str:
        return f"GoType({self.name})"


@dataclass(frozen=True)
class GoField:
    """A struct field: Go name, type, JSON name (C{""} for an embedded struct) and whether it
    is embedded (its fields promoted into the parent's JSON object)."""

    name: str
    type: GoType
    json: str
    embedded: bool = False


STRING = GoType("string", "string")
_INTSTR_TYPE = GoType("int", "intstr.Type", named=True)
INT_OR_STRING = GoType("struct", "intstr.IntOrString", named=True, fields=lambda: (
    GoField("Type", _INTSTR_TYPE, "type"), GoField("IntVal", GoType("int", "int32"), "intVal"),
    GoField("StrVal", STRING, "strVal")))
TIME = GoType("time", "v1.Time", named=True)
QUANTITY = GoType("quantity", "resource.Quantity", named=True)
#: C{resource.Quantity}'s own (unexported) fields, which go-cmp and C{%#v} print.
_QUANTITY_FIELDS = GoType("struct", "resource.Quantity", named=True, fields=lambda: (
    GoField("i", GoType("struct", "resource.int64Amount", named=True, fields=lambda: (
        GoField("value", GoType("int", "int64"), "value"),
        GoField("scale", GoType("int", "resource.Scale", named=True), "scale"))), "i"),
    GoField("d", GoType("struct", "resource.infDecAmount", named=True, fields=lambda: (
        GoField("Dec", GoType("ptr", "*inf.Dec", elem=GoType("struct", "inf.Dec", named=True)),
                "Dec"),)), "d"),
    GoField("s", STRING, "s"),
    GoField("Format", GoType("string", "resource.Format", named=True), "Format")))

#: Decimal SI suffixes and their exponents; binary SI suffixes and theirs (C{suffixer}).
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12,
                     "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


def quantity_fields(text: Optional[str]) -> dict:
    """
    The fields of the C{resource.Quantity} that C{ParseQuantity(text)} returns on its fast
    path: C{{"i": {"value", "scale"}, "d": {"Dec": None}, "s", "Format"}}; C{s} caches the
    text only when it is already canonical, as upstream does.  A zero quantity for C{None}.
    """
    zero = {"i": {"value": 0, "scale": 0}, "d": {"Dec": None}, "s": "", "Format": ""}
    if not text:
        return zero
    if text == "0":
        return {**zero, "s": "0", "Format": "DecimalSI"}
    pos, end, positive = 0, len(text), True
    if text[0] in "+-":
        positive, pos = text[0] != "-", 1
    while pos < end and text[pos] == "0":
        pos += 1
    start = pos
    while pos < end and text[pos].isdigit():
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos].isdigit():
            pos += 1
        denom = text[start:pos]
    suffix = text[pos:]
    if suffix in _BINARY_SUFFIXES:
        fmt, exponent = "BinarySI", _BINARY_SUFFIXES[suffix]
    elif suffix in _DECIMAL_SUFFIXES:
        fmt, exponent = "DecimalSI", _DECIMAL_SUFFIXES[suffix]
    elif suffix[:1] in ("e", "E") and suffix[1:].lstrip("+-").isdigit():
        fmt, exponent = "DecimalExponent", int(suffix[1:])
    else:
        return {**zero, "s": text}
    mantissa, scale = 1, 0
    if fmt == "BinarySI":
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = 18 - (len(num) + len(denom))
    if precision >= 0:
        scale -= len(denom)
        if scale >= -9:
            shifted = num + denom
            value = int(shifted)
            result = value * mantissa
            if -(1 << 63) <= result < (1 << 63):
                result = result if positive else -result
                if fmt == "BinarySI":
                    canonical = exponent % 10 == 0 and value & 7 != 0
                else:
                    canonical = (scale % 3 == 0 and not shifted.endswith("000")
                                 and shifted[0] != "0")
                return {"i": {"value": result, "scale": scale}, "d": {"Dec": None},
                        "s": text if canonical else "", "Format": fmt}
    # upstream's slow path keeps an inf.Dec; only its cached text and format are kept here
    return {**zero, "s": "", "Format": fmt}


def _package_name(table_package: str) -> str:
    if table_package in internal_core.PACKAGES:
        return internal_core.PACKAGES[table_package]
    # io.k8s.api.<group>.<version>: the internal package is named after the group
    return table_package.rsplit(".", 2)[-2]


def _go_field_name(struct: str, json_name: str) -> str:
    name = internal_core.FIELD_NAMES.get((struct, json_name))
    if name is None:
        name = internal_core.GO_NAMES.get(json_name)
    return name or json_name[:1].upper() + json_name[1:]


def _named(table_type: str, json_name: str, owner_package: str) -> tuple[str, str]:
    """The recorded named Go type of a field and of its element (versioned package names
    turned into the internal package's), or C{("", "")}."""
    from kubetwist.runtime.gotypes import GO_TYPES

    recorded = GO_TYPES.get(table_type, {}).get(json_name)
    if not recorded:
        name = internal_core.GO_TYPE_NAMES.get((table_type.rsplit(".", 1)[-1], json_name), "")
        return name, ""

    def internal(name: str) -> str:
        if name.startswith("[]"):
            return "[]" + internal(name[2:])
        if name.startswith("v1.") and owner_package != "v1":
            return f"{owner_package}.{name[3:]}"
        return name
    return internal(recorded[0]), internal(recorded[1]) if recorded[1] else ""


@lru_cache(maxsize=None)
def internal_type(table_type: str) -> GoType:
    """
    The internal Go struct type of a versioned table type.

    @param table_type: a full table name, C{io.k8s.api.core.v1.PodTemplateSpec}.
    @return: C{core.PodTemplateSpec} as a L{GoType}; fields built lazily.
    @raise KeyError: the table type is unknown.
    """
    typedef = typetables.TYPES[table_type]
    package, struct = table_type.rsplit(".", 1)
    pkg = _package_name(package)
    return GoType("struct", f"{pkg}.{struct}", named=True,
                  fields=lambda: _internal_fields(typedef, struct, pkg))


def _internal_fields(typedef: typetables.TypeDef, struct: str, pkg: str) -> tuple:
    package = typedef.name.rsplit(".", 1)[0]
    by_json = {f.json_name: f for f in typedef.fields if not f.inline}
    extra = internal_core.EXTRA_FIELDS.get(struct, {})
    order = internal_core.LAYOUTS.get(struct)
    if order is None:
        defs = list(typedef.fields)
    else:
        defs = [by_json.get(j) or typetables.parse_row(package, (j, 0, extra[j], "o"))
                for j in order]
    out = []
    for f in defs:
        override = internal_core.TYPE_OVERRIDES.get((struct, f.json_name))
        if override is not None:
            f = typetables.parse_row(package, (f.json_name, f.number, override, "o"))
        t = _field_type(f, typedef.name, pkg)
        if f.inline:
            out.append(GoField(t.name.rsplit(".", 1)[-1], t, "", embedded=True))
        else:
            out.append(GoField(_go_field_name(struct, f.json_name), t, f.json_name))
    return tuple(out)


def _base_type(type_name: str) -> GoType:
    if type_name in _SCALARS:
        kind, name = _SCALARS[type_name]
        return GoType(kind, name)
    if type_name == "Quantity":
        return QUANTITY
    if type_name == "IntOrString":
        return INT_OR_STRING
    if type_name in ("Time", "MicroTime"):
        return TIME if type_name == "Time" else GoType("time", "v1.MicroTime", named=True)
    if type_name in typetables.SPECIALS:
        return GoType("string", type_name)
    return internal_type(type_name)


def _field_type(f: typetables.FieldDef, owner: str, pkg: str) -> GoType:
    named, named_elem = _named(owner, f.json_name, pkg)
    base = _base_type(f.type)
    if f.container == "map":
        if named and not named.startswith("map["):
            # a named map such as core.ResourceList (map[core.ResourceName]resource.Quantity)
            key = GoType("string", f"{pkg}.ResourceName", named=True)
            return GoType("map", named, named=True, key=key, elem=base)
        elem = _renamed(base, named_elem)
        return GoType("map", f"map[string]{elem.name}", key=STRING, elem=elem)
    if f.container == "list":
        elem = _renamed(base, named_elem or (named[2:] if named.startswith("[]") else ""))
        if f.pointer:
            elem = GoType("ptr", "*" + elem.name, elem=elem)
        return GoType("slice", "[]" + elem.name, elem=elem)
    t = _renamed(base, named)
    if f.pointer:
        return GoType("ptr", "*" + t.name, elem=t)
    return t


def _renamed(base: GoType, name: str) -> GoType:
    """A scalar type under a recorded name (C{core.Protocol} for a C{string})."""
    if not name or base.kind not in ("string", "int", "bool", "float"):
        return base
    return GoType(base.kind, name, named=True)


# ----------------------------------------------------------------------------------------------
# JSON -> Go values

def _convert_pod_spec(spec: dict) -> dict:
    """Upstream C{Convert_v1_PodSpec_To_core_PodSpec}: the host namespace fields move into an
    always present security context; C{serviceAccount} stands in for an empty
    C{serviceAccountName}."""
    spec = dict(spec)
    sc = dict(spec.get("securityContext") or {})
    for key in internal_core.POD_SECURITY_CONTEXT_FIELDS:
        if key in spec:
            sc[key] = spec.pop(key)
    spec["securityContext"] = sc
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec.get("serviceAccount") or ""
    spec.pop("serviceAccount", None)
    return spec


#: Internal Go struct name -> the conversion of a versioned JSON object before it is read.
CONVERSIONS: dict[str, Callable[[dict], dict]] = {"core.PodSpec": _convert_pod_spec}


def from_json(t: GoType, value: Any) -> Any:
    """
    The Go value of type C{t} that the decoded JSON C{value} converts to (see the module
    docstring for the representation); absent or C{null} is the zero value.
    """
    if t.kind == "struct":
        obj = value if isinstance(value, dict) else {}
        convert = CONVERSIONS.get(t.name)
        if convert is not None:
            obj = convert(obj)
        if t is INT_OR_STRING:
            if isinstance(value, str):
                return {"Type": 1, "IntVal": 0, "StrVal": value}
            return {"Type": 0, "IntVal": int(value or 0), "StrVal": ""}
        return {f.name: from_json(f.type, obj if f.embedded else obj.get(f.json))
                for f in t.fields}
    if t.kind == "ptr":
        return None if value is None else from_json(t.elem, value)
    if t.kind == "slice":
        if not isinstance(value, list):
            return None
        return [from_json(t.elem, v) for v in value]
    if t.kind == "map":
        if not isinstance(value, dict):
            return None
        return {str(k): from_json(t.elem, v) for k, v in value.items()}
    if t.kind == "string":
        return "" if value is None else str(value)
    if t.kind in ("int", "float"):
        # well-typed after decoding; anything else reads as zero rather than failing
        cast = int if t.kind == "int" else float
        try:
            return cast(value or 0)
        except (TypeError, ValueError):
            return cast(0)
    if t.kind == "bool":
        return bool(value)
    if t.kind in ("time", "quantity"):
        return value if value else None
    return value


def is_zero(t: GoType, value: Any) -> bool:
    """C{reflect.Value.IsZero} of a Go value."""
    if t.kind == "struct":
        return all(is_zero(f.type, value[f.name]) for f in t.fields)
    if t.kind in ("ptr", "slice", "map", "time", "quantity", "bytes"):
        return value is None
    return not value


def semantic_equal(t: GoType, x: Any, y: Any) -> bool:
    """
    C{apiequality.Semantic.DeepEqual} of two Go values of type C{t}: structural equality,
    except that a nil and an empty slice or map are equal and quantities compare by value.
    """
    k = t.kind
    if k == "struct":
        return all(semantic_equal(f.type, x[f.name], y[f.name]) for f in t.fields)
    if k == "ptr":
        if x is None or y is None:
            return x is None and y is None
        return semantic_equal(t.elem, x, y)
    if k == "slice":
        x, y = x or [], y or []
        return len(x) == len(y) and all(semantic_equal(t.elem, a, b)
                                        for a, b in zip(x, y, strict=True))
    if k == "map":
        x, y = x or {}, y or {}
        return x.keys() == y.keys() and all(semantic_equal(t.elem, x[key], y[key]) for key in x)
    if k == "quantity":
        return _quantity_equal(x, y)
    return x == y


# ----------------------------------------------------------------------------------------------
# fmt's %#v

class _Addresses:
    """Made-up heap addresses for non-nil pointers (C{0xc000010000}, then on), as
    C{%#v} prints a pointer below the top level."""

    def __init__(self) -> None:
        self.next = 0xc000010000

    def take(self) -> str:
        address, self.next = self.next, self.next + 0x60
        return f"0x{address:x}"


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


def _time_gostring(text: Optional[str]) -> str:
    """C{time.Time.GoString}: the zero time in UTC; a decoded time is local (C{time.Local},
    the server's zone, UTC here)."""
    if not text:
        return "time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)"
    t = datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(
        datetime.timezone.utc)
    return (f"time.Date({t.year}, time.{_MONTHS[t.month - 1]}, {t.day}, {t.hour}, {t.minute}, "
            f"{t.second}, {t.microsecond * 1000}, time.Local)")


def sharp_v(t: GoType, value: Any) -> str:
    """
    Go's C{fmt.Sprintf("%#v", value)} of a Go value of type C{t} (L{from_json}): e.g.
    C{core.PodTemplateSpec{ObjectMeta:v1.ObjectMeta{Name:"", ...}, Spec:core.PodSpec{...}}}.

    Pointers below the top level print as C{(*int64)(nil)} or C{(*int64)(0xc000010000)}
    (made-up addresses), a nil C{*metav1.Time} as C{<nil>}, a C{metav1.Time} through its
    C{GoString} (C{time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)}), nil slices and maps
    as C{[]core.Volume(nil)}, map keys sorted.
    """
    return _sharp(t, value, 0, _Addresses())


def _sharp(t: GoType, v: Any, depth: int, addrs: _Addresses) -> str:
    k = t.kind
    if k == "ptr":
        if t.elem.kind == "time" and depth > 0:
            return "<nil>" if v is None else _time_gostring(v)
        if v is None:
            return f"({t.name})(nil)"
        if depth == 0:
            return "&" + _sharp(t.elem, v, 1, addrs)
        return f"({t.name})({addrs.take()})"
    if k == "struct":
        inner = ", ".join(f"{f.name}:{_sharp(f.type, v[f.name], depth + 1, addrs)}"
                          for f in t.fields)
        return f"{t.name}{{{inner}}}"
    if k == "time":
        return _time_gostring(v)
    if k == "quantity":
        return _quantity_sharp(v)
    if k == "slice":
        if v is None:
            return f"{t.name}(nil)"
        return f"{t.name}{{" + ", ".join(_sharp(t.elem, e, depth + 1, addrs) for e in v) + "}"
    if k == "map":
        if v is None:
            return f"{t.name}(nil)"
        return f"{t.name}{{" + ", ".join(
            f"{_sharp(t.key, key, depth + 1, addrs)}:{_sharp(t.elem, v[key], depth + 1, addrs)}"
            for key in sorted(v)) + "}"
    if k == "string":
        return gofmt.quote(v)
    if k == "bool":
        return "true" if v else "false"
    if k == "float":
        return gofmt.format_float(v)
    return str(v)


def _quantity_sharp(text: Optional[str]) -> str:
    """C{%#v} of a C{resource.Quantity} as decoded: its unexported fields
    (L{quantity_fields})."""
    f = quantity_fields(text)
    return (f"resource.Quantity{{i:resource.int64Amount{{value:{f['i']['value']}, "
            f"scale:{f['i']['scale']}}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, "
            f"s:{gofmt.quote(f['s'])}, Format:{gofmt.quote(f['Format'])}}}")


# ----------------------------------------------------------------------------------------------
# cmp.Diff: the value tree (cmp/compare.go, cmp/report_value.go)

@dataclass(eq=False)
class _Node:
    type: GoType
    vx: Any
    vy: Any
    parent: "Optional[_Node]" = None
    num_same: int = 0
    num_diff: int = 0
    num_children: int = 0
    max_depth: int = 0
    records: list = field(default_factory=list)   # [(key, _Node)]; key "" for slice elements
    value: "Optional[_Node]" = None               # a pointer's element

    def add(self, key: str, child: "_Node") -> None:
        self.records.append((key, child))
        self._pop(child)

    def _pop(self, child: "_Node") -> None:
        self.num_same += child.num_same
        self.num_diff += child.num_diff
        self.num_children += child.num_children + 1
        self.max_depth = max(self.max_depth, child.max_depth + 1)


def _quantity_equal(a: Optional[str], b: Optional[str]) -> bool:
    if a is None or b is None:
        return a == b
    from kubetwist.runtime.quantity import QuantityError, parse_quantity
    try:
        return parse_quantity(a).value == parse_quantity(b).value
    except QuantityError:
        return a == b


def _compare(t: GoType, vx: Any, vy: Any, parent: Optional[_Node] = None) -> _Node:
    node = _Node(t, vx, vy, parent)
    k = t.kind
    if vx is INVALID or vy is INVALID:
        _report(node, (vx is INVALID) == (vy is INVALID))
    elif k == "quantity":
        _report(node, _quantity_equal(vx, vy))
    elif k in _LEAF_KINDS:
        _report(node, vx == vy)
    elif k == "struct":
        for f in t.fields:
            node.add(f.name, _compare(f.type, vx[f.name], vy[f.name], node))
    elif k == "ptr":
        if vx is None or vy is None:
            _report(node, vx is None and vy is None)
        else:
            node.value = _compare(t.elem, vx, vy, node)
            node._pop(node.value)
    elif k == "map":
        if vx is None or vy is None:
            _report(node, vx is None and vy is None)
        else:
            for key in sorted(set(vx) | set(vy)):
                node.add(key, _compare(t.elem, vx.get(key, INVALID), vy.get(key, INVALID), node))
    elif k == "slice":
        if vx is None or vy is None:
            _report(node, vx is None and vy is None)
        else:
            _compare_slice(node, t, vx, vy)
    else:  # pragma: no cover - every kind is handled above
        raise TypeError(k)
    return node


def _report(node: _Node, equal: bool) -> None:
    if equal:
        node.num_same += 1
    else:
        node.num_diff += 1


def _compare_slice(node: _Node, t: GoType, vx: list, vy: list) -> None:
    def similarity(ix: int, iy: int) -> tuple[int, int]:
        n = _compare(t.elem, vx[ix], vy[iy])
        return n.num_same, n.num_diff

    edits = difference(len(vx), len(vy), similarity)
    ix = iy = 0
    for e in edits:
        if e == "X":
            node.add("", _compare(t.elem, vx[ix], INVALID, node))
            ix += 1
        elif e == "Y":
            node.add("", _compare(t.elem, INVALID, vy[iy], node))
            iy += 1
        else:
            node.add("", _compare(t.elem, vx[ix], vy[iy], node))
            ix += 1
            iy += 1


def difference(nx: int, ny: int, f: Callable[[int, int], tuple[int, int]]) -> str:
    """
    go-cmp's C{diff.Difference}: an edit script (C{.} identity, C{X} only in x, C{Y} only in
    y, C{M} modified) turning C{nx} elements into C{ny}, searching from both ends in turn,
    starting (as kubetwist's chosen process does) with the reverse search.

    @param f: C{f(ix, iy)} -> C{(NumSame, NumDiff)} of comparing two elements.
    """
    def equal(ix: int, iy: int) -> bool:
        return f(ix, iy)[1] == 0

    def similar(ix: int, iy: int) -> bool:
        same, diff = f(ix, iy)
        return diff == 0 or same + 1 >= diff

    fwd = _Path(1, 0, 0)
    rev = _Path(-1, nx, ny)
    fwd_front = [0, 0]
    rev_front = [nx, ny]
    budget = 4 * (nx + ny)
    forward = False
    while True:
        if (fwd_front[0] >= rev_front[0] or fwd_front[1] >= rev_front[1] or budget == 0):
            break
        stop1 = stop2 = False
        i = 0
        if forward:
            while not (stop1 and stop2) and budget > 0:
                z = _zigzag(i)
                px, py = fwd_front[0] + z, fwd_front[1] - z
                if px >= rev.x or py < fwd.y:
                    stop1 = True
                elif py >= rev.y or px < fwd.x:
                    stop2 = True
                elif equal(px, py):
                    fwd.connect(px, py, equal, similar)
                    fwd.append(".")
                    while fwd.x < rev.x and fwd.y < rev.y and equal(fwd.x, fwd.y):
                        fwd.append(".")
                    fwd_front = [fwd.x, fwd.y]
                    stop1 = stop2 = True
                else:
                    budget -= 1
                i += 1
            if rev.x - fwd_front[0] >= rev.y - fwd_front[1]:
                fwd_front[0] += 1
            else:
                fwd_front[1] += 1
        else:
            while not (stop1 and stop2) and budget > 0:
                z = _zigzag(i)
                px, py = rev_front[0] - z, rev_front[1] + z
                if fwd.x >= px or rev.y < py:
                    stop1 = True
                elif fwd.y >= py or rev.x < px:
                    stop2 = True
                elif equal(px - 1, py - 1):
                    rev.connect(px, py, equal, similar)
                    rev.append(".")
                    while fwd.x < rev.x and fwd.y < rev.y and equal(rev.x - 1, rev.y - 1):
                        rev.append(".")
                    rev_front = [rev.x, rev.y]
                    stop1 = stop2 = True
                else:
                    budget -= 1
                i += 1
            if rev_front[0] - fwd.x >= rev_front[1] - fwd.y:
                rev_front[0] -= 1
            else:
                rev_front[1] -= 1
        forward = not forward
    fwd.connect(rev.x, rev.y, equal, similar)
    return "".join(fwd.es) + "".join(reversed(rev.es))


def _zigzag(x: int) -> int:
    if x & 1:
        x = ~x
    return x >> 1


class _Path:
    def __init__(self, direction: int, x: int, y: int) -> None:
        self.dir, self.x, self.y = direction, x, y
        self.es: list[str] = []

    def append(self, e: str) -> None:
        self.es.append(e)
        if e in ".M":
            self.x += self.dir
            self.y += self.dir
        elif e == "X":
            self.x += self.dir
        else:
            self.y += self.dir

    def connect(self, dx: int, dy: int, equal: Callable, similar: Callable) -> None:
        if self.dir > 0:
            while dx > self.x and dy > self.y:
                if equal(self.x, self.y):
                    self.append(".")
                elif similar(self.x, self.y):
                    self.append("M")
                elif dx - self.x >= dy - self.y:
                    self.append("X")
                else:
                    self.append("Y")
            while dx > self.x:
                self.append("X")
            while dy > self.y:
                self.append("Y")
        else:
            while self.x > dx and self.y > dy:
                if equal(self.x - 1, self.y - 1):
                    self.append(".")
                elif similar(self.x - 1, self.y - 1):
                    self.append("M")
                elif self.y - dy >= self.x - dx:
                    self.append("Y")
                else:
                    self.append("X")
            while self.x > dx:
                self.append("X")
            while self.y > dy:
                self.append("Y")


# ----------------------------------------------------------------------------------------------
# cmp.Diff: the text tree (cmp/report_text.go)

_NBSP = chr(0xA0)
_MAX_COLUMN = 80
_IDENTICAL, _REMOVED, _INSERTED = 0x20, 0x2D, 0x2B   # ' ', '-', '+'


def _indent(b: list, d: int, n: int) -> None:
    if d == _REMOVED:
        b.append("-" + _NBSP)
    elif d == _INSERTED:
        b.append("+" + _NBSP)
    else:
        b.append(_NBSP + _NBSP)
    b.append("\t" * n)


def _blen(text: str) -> int:
    return len(text.encode("utf-8"))


class _Line:
    """C{textLine}."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def length(self) -> int:
        return _blen(self.text)

    def equal(self, other: Any) -> bool:
        return isinstance(other, _Line) and other.text == self.text

    def compact(self, b: list, d: int) -> "_Line":
        b.append(self.text)
        return self

    def expanded(self, b: list, d: int, n: int) -> None:
        b.append(self.text)


_NIL = _Line("nil")
_ELLIPSIS = _Line("...")


class _Wrap:
    """C{textWrap}."""

    __slots__ = ("prefix", "value", "suffix")

    def __init__(self, prefix: str, value: Any, suffix: str = "") -> None:
        self.prefix, self.value, self.suffix = prefix, value, suffix

    def length(self) -> int:
        return _blen(self.prefix) + self.value.length() + _blen(self.suffix)

    def equal(self, other: Any) -> bool:
        return (isinstance(other, _Wrap) and other.prefix == self.prefix
                and other.suffix == self.suffix and self.value.equal(other.value))

    def compact(self, b: list, d: int) -> Any:
        start = len(b)
        b.append(self.prefix)
        value = self.value.compact(b, d)
        b.append(self.suffix)
        if isinstance(value, _Line):
            return _Line("".join(b[start:]))
        return _Wrap(self.prefix, value, self.suffix)

    def expanded(self, b: list, d: int, n: int) -> None:
        b.append(self.prefix)
        self.value.expanded(b, d, n)
        b.append(self.suffix)

    def string(self) -> str:
        b: list = []
        s2 = self.compact([], 0)
        _indent(b, 0, 0)
        s2.expanded(b, 0, 0)
        b.append("\n")
        return "".join(b)


@dataclass
class _Record:
    """C{textRecord}."""

    value: Any
    diff: int = 0
    key: str = ""
    elide_comma: bool = False
    comment: Any = None   # a _Stats or a str


@dataclass
class _Stats:
    """C{diffStats}."""

    name: str
    ignored: int = 0
    identical: int = 0
    removed: int = 0
    inserted: int = 0
    modified: int = 0

    def is_zero(self) -> bool:
        return not (self.ignored or self.identical or self.removed or self.inserted
                    or self.modified)

    def num_diff(self) -> int:
        return self.removed + self.inserted + self.modified

    def append(self, other: "_Stats") -> "_Stats":
        return replace(self, ignored=self.ignored + other.ignored,
                       identical=self.identical + other.identical,
                       removed=self.removed + other.removed,
                       inserted=self.inserted + other.inserted,
                       modified=self.modified + other.modified)

    def __str__(self) -> str:
        counts = (("ignored", self.ignored), ("identical", self.identical),
                  ("removed", self.removed), ("inserted", self.inserted),
                  ("modified", self.modified))
        parts = [f"{n} {label}" for label, n in counts if n > 0]
        total = sum(n for _, n in counts)
        name = self.name
        if total > 1:
            name += "s"
            if name.endswith("ys"):
                name = name[:-2] + "ies"
        if not parts:
            return ""
        if len(parts) <= 2:
            return " and ".join(parts) + " " + name
        return ", ".join(parts[:-1]) + ", and " + parts[-1] + " " + name


class _List(list):
    """C{textList}: a list of L{_Record}s."""

    def length(self) -> int:
        n = 0
        for i, r in enumerate(self):
            n += _blen(r.key)
            if r.key:
                n += 2
            n += r.value.length()
            if i < len(self) - 1:
                n += 2
        return n

    def equal(self, other: Any) -> bool:
        if not isinstance(other, _List) or len(other) != len(self):
            return False
        for r1, r2 in zip(self, other, strict=True):
            if not (r1.diff == r2.diff and r1.key == r2.key and r1.value.equal(r2.value)
                    and str(r1.comment or "") == str(r2.comment or "")
                    and (r1.comment is None) == (r2.comment is None)):
                return False
        return True

    def append_ellipsis(self, ds: _Stats) -> None:
        has_stats = not ds.is_zero()
        if not self or not self[-1].value.equal(_ELLIPSIS):
            self.append(_Record(_ELLIPSIS, elide_comma=True, comment=ds if has_stats else None))
            return
        if has_stats:
            self[-1].comment = self[-1].comment.append(ds)

    def compact(self, b: list, d: int) -> Any:
        s = _List(replace(r) for r in self)
        start = len(b)
        multi = False
        for i, r in enumerate(s):
            if r.diff in (_INSERTED, _REMOVED):
                multi = True
            b.append(r.key)
            if r.key:
                b.append(": ")
            s[i].value = r.value.compact(b, d | r.diff)
            if not isinstance(s[i].value, _Line):
                multi = True
            if r.comment is not None:
                multi = True
            if i < len(s) - 1:
                b.append(", ")
        if d in (_INSERTED, _REMOVED) and _blen("".join(b[start:])) > _MAX_COLUMN:
            multi = True
        if not multi:
            return _Line("".join(b[start:]))
        return s

    def _align(self, skip: Callable, length: Callable) -> list[int]:
        lens = [0] * len(self)
        start = end = width = 0
        for i, r in enumerate(self):
            if skip(r):
                for j in range(start, min(end, len(self))):
                    lens[j] = width - length(self[j])
                start, end, width = i + 1, i + 1, 0
            else:
                width = max(width, length(r))
                end = i + 1
        for j in range(start, min(end, len(self))):
            lens[j] = width - length(self[j])
        return lens

    def expanded(self, b: list, d: int, n: int) -> None:
        key_lens = self._align(lambda r: r.key == "" or not isinstance(r.value, _Line),
                               lambda r: len(r.key))
        value_lens = self._align(
            lambda r: (not isinstance(r.value, _Line) or r.value.equal(_ELLIPSIS)
                       or r.comment is None),
            lambda r: len(r.value.text))
        simple = False
        for r in self:
            simple = (r.diff == 0 and r.key == "" and isinstance(r.value, _Line)
                      and r.comment is None)
            if not simple:
                break
        if simple:
            batch: list[str] = []

            def emit() -> None:
                if batch:
                    b.append("\n")
                    _indent(b, d, n + 1)
                    b.append("".join(batch).rstrip(" "))
                    batch.clear()
            for r in self:
                line = r.value.text
                if _blen("".join(batch)) + _blen(line) + 2 > _MAX_COLUMN:
                    emit()
                batch.append(line)
                batch.append(", ")
            emit()
            b.append("\n")
            _indent(b, d, n)
            return
        for i, r in enumerate(self):
            b.append("\n")
            _indent(b, d | r.diff, n + 1)
            if r.key:
                b.append(r.key + ": ")
            b.append(" " * key_lens[i])
            r.value.expanded(b, d | r.diff, n + 1)
            if not r.elide_comma:
                b.append(",")
            b.append(" " * value_lens[i])
            if r.comment is not None:
                b.append(" // " + str(r.comment))
        b.append("\n")
        _indent(b, d, n)


# ----------------------------------------------------------------------------------------------
# cmp.Diff: formatting (cmp/report_compare.go, cmp/report_reflect.go)

_EMIT, _ELIDE, _AUTO = 0, 1, 2
_MAX_PRESET = 6


@dataclass(frozen=True)
class _Opts:
    diff_mode: int = 0
    type_mode: int = _EMIT
    avoid_stringer: bool = False
    verbosity_level: int = 0
    limit_verbosity: bool = False

    def verbosity(self) -> int:
        return max(0, min(16, self.verbosity_level))

    def with_verbosity(self, level: int) -> "_Opts":
        return replace(self, verbosity_level=level, limit_verbosity=True)

    def preset(self, i: int) -> "_Opts":
        return replace(self, verbosity_level=self.verbosity() + 2 * i,
                       avoid_stringer=self.avoid_stringer or i > 0)


def _stringer(t: GoType, v: Any) -> Optional[str]:
    """The C{String()} of a value whose type implements C{fmt.Stringer} (C{metav1.Time}
    by value, C{*resource.Quantity}), or None."""
    if t.kind == "time":
        return _time_string(v)
    if t.kind == "ptr" and t.elem.kind == "quantity" and v is not None:
        from kubetwist.runtime.quantity import QuantityError, parse_quantity
        try:
            return str(parse_quantity(v))
        except QuantityError:
            return str(v)
    if t.name in internal_core.STRINGERS:
        return str(v)
    return None


def _time_string(text: Optional[str]) -> str:
    """C{time.Time.String()} of a decoded time (UTC here)."""
    if not text:
        return "0001-01-01 00:00:00 +0000 UTC"
    t = datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(
        datetime.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def _format_type(opts: _Opts, t: GoType, s: Any) -> Any:
    if opts.type_mode == _AUTO:
        if t.kind in ("struct", "slice", "map") or t.kind in _STRUCT_KINDS:
            if s.equal(_NIL):
                return s
        else:
            return s
        if opts.diff_mode == _IDENTICAL:
            return s
    elif opts.type_mode == _ELIDE:
        return s
    name = t.name
    if not t.named and t.kind == "ptr":
        name = "(" + name + ")"
    return _Wrap(name, _wrap_parens(s))


def _wrap_parens(s: Any) -> Any:
    if isinstance(s, _Wrap):
        if ((s.prefix.startswith("(") and s.suffix.endswith(")"))
                or (s.prefix.startswith("{") and s.suffix.endswith("}"))):
            return s
    return _Wrap("(", s, ")")


def _go_format_string(s: str) -> str:
    """go-cmp's C{formatString}: C{strconv.Quote}, or a raw string when that is shorter."""
    qs = gofmt.quote(s)
    if _blen(qs) == _blen(s) + 2:
        return qs
    if not any(c == "`" or c == "\n" or not (c == "\t" or c.isprintable()) for c in s):
        return "`" + s + "`"
    return qs


def _format_string(opts: _Opts, prefix: str, s: str) -> Any:
    max_len = _blen(s)
    max_lines = s.count("\n") + 1
    if opts.limit_verbosity:
        max_len = (1 << opts.verbosity()) << 5
        max_lines = (1 << opts.verbosity()) << 2
    lines = (s[:-1] if s.endswith("\n") else s).split("\n")
    triple = len(lines) >= 4 and opts.diff_mode in (_REMOVED, _INSERTED)
    for i in range(len(lines)):
        if not triple:
            break
        lines[i] = lines[i].removesuffix("\r").removeprefix("\r")
        line = lines[i]
        triple = (not line.removeprefix(prefix).startswith('"""') and not line.startswith("...")
                  and all(c.isprintable() or c == "\t" for c in line) and _blen(line) <= max_len)
    if triple:
        out = _List()
        out.append(_Record(_Line(prefix + '"""'), diff=opts.diff_mode, elide_comma=True))
        for i, line in enumerate(lines):
            elided = len(lines) - i
            if i == max_lines - 1 and elided > 1:
                out.append(_Record(_ELLIPSIS, diff=opts.diff_mode, elide_comma=True,
                                   comment=f"{elided} elided lines"))
                break
            out.append(_Record(_Line(line), diff=opts.diff_mode, elide_comma=True))
        out.append(_Record(_Line(prefix + '"""'), diff=opts.diff_mode, elide_comma=True))
        return _Wrap("(", out, ")")
    raw = s.encode("utf-8")
    if len(raw) > max_len + 3:
        return _Line(prefix + _go_format_string(raw[:max_len].decode("utf-8", "replace")) + "...")
    return _Line(prefix + _go_format_string(s))


def _format_value(opts: _Opts, t: GoType, v: Any) -> Any:
    if v is INVALID:
        return None
    if not opts.avoid_stringer:
        text = _stringer(t, v)
        if text is not None:
            return _format_string(opts, "s", text)
    k = t.kind
    skip_type = False
    if k == "bool":
        out: Any = _Line("true" if v else "false")
    elif k == "int":
        out = _Line(str(v))
    elif k == "float":
        out = _Line(gofmt.format_float(v))
    elif k == "string":
        out = _format_string(opts, "", v)
    elif k == "quantity":
        return _format_value(opts, _QUANTITY_FIELDS, quantity_fields(v))
    elif k == "struct":
        out_list = _List()
        fields = t.fields
        max_len = len(fields)
        if opts.limit_verbosity:
            max_len = ((1 << opts.verbosity()) >> 1) << 2
            opts = replace(opts, verbosity_level=opts.verbosity_level - 1)
        for f in fields:
            fv = v[f.name]
            if is_zero(f.type, fv):
                continue
            if len(out_list) == max_len:
                out_list.append_ellipsis(_Stats(""))
                break
            s = _format_value(replace(opts, type_mode=_AUTO), f.type, fv)
            out_list.append(_Record(s, key=f.name))
        out = _Wrap("{", out_list, "}")
    elif k in ("slice", "map"):
        if v is None:
            out = _NIL
        else:
            n = len(v)
            max_len = n
            if opts.limit_verbosity:
                max_len = ((1 << opts.verbosity()) >> 1) << 2
                opts = replace(opts, verbosity_level=opts.verbosity_level - 1)
            out_list = _List()
            items: Iterator = (("", e) for e in v) if k == "slice" else (
                (_format_map_key(t.key, key), v[key]) for key in sorted(v))
            for key, e in items:
                if len(out_list) == max_len:
                    out_list.append_ellipsis(_Stats(""))
                    break
                s = _format_value(replace(opts, type_mode=_ELIDE), t.elem, e)
                out_list.append(_Record(s, key=key))
            out = _Wrap("{", out_list, "}")
    elif k == "ptr":
        if v is None:
            out = _NIL
        else:
            if not t.named:
                skip_type = True
            out = _Wrap("&", _format_value(opts, t.elem, v))
    else:  # pragma: no cover
        raise TypeError(k)
    if not skip_type:
        out = _format_type(opts, t, out)
    return out


def _format_map_key(t: GoType, key: str) -> str:
    opts = _Opts(diff_mode=_IDENTICAL, type_mode=_ELIDE, verbosity_level=_MAX_PRESET,
                 limit_verbosity=True)
    text = _format_value(opts, t, key)
    if isinstance(text, _Line):
        return text.text.strip()
    return text.string().strip()


def _format_diff(opts: _Opts, v: _Node) -> Any:
    if opts.diff_mode == _IDENTICAL:
        opts = opts.with_verbosity(1)
    elif opts.verbosity() < 3:
        opts = opts.with_verbosity(3)
    if _can_format_diff_slice(opts, v):
        return _format_diff_slice(opts, v)
    t = v.type
    if v.max_depth == 0:
        if opts.diff_mode in (0, _IDENTICAL):
            if v.num_diff == 0:
                outx = _format_value(opts, t, v.vx)
                outy = _format_value(opts, t, v.vy)
                return outx if outx.length() < outy.length() else outy
            elide = replace(opts, type_mode=_ELIDE)
            outx = _format_value(elide, t, v.vx)
            outy = _format_value(elide, t, v.vy)
            i = 0
            while i <= _MAX_PRESET and outx is not None and outy is not None and outx.equal(outy):
                opts2 = replace(opts.preset(i), type_mode=_ELIDE)
                outx = _format_value(opts2, t, v.vx)
                outy = _format_value(opts2, t, v.vy)
                i += 1
            out = _List()
            if outx is not None:
                out.append(_Record(outx, diff=_REMOVED))
            if outy is not None:
                out.append(_Record(outy, diff=_INSERTED))
            return _format_type(replace(opts, type_mode=_EMIT), t, out)
        if opts.diff_mode == _REMOVED:
            return _format_value(opts, t, v.vx)
        return _format_value(opts, t, v.vy)
    k = t.kind
    if k in ("struct", "slice", "map"):
        return _format_type(opts, t, _format_diff_list(opts, v.records, k))
    if k == "ptr":
        return _Wrap("&", _format_diff(opts, v.value))
    raise TypeError(k)  # pragma: no cover


def _coalesce(name: str, records: list) -> list[_Stats]:
    groups: list[_Stats] = []
    prev = 0
    for _, node in records:
        case = 1 if node.num_diff == 0 else 2
        if case != prev:
            groups.append(_Stats(name))
            prev = case
        g = groups[-1]
        if node.num_diff == 0:
            g.identical += 1
        elif node.vy is INVALID:
            g.removed += 1
        elif node.vx is INVALID:
            g.inserted += 1
        else:
            g.modified += 1
    return groups


def _format_diff_list(opts: _Opts, recs: list, k: str) -> Any:
    if k == "struct":
        name = "field"
        opts = replace(opts, type_mode=_AUTO)
    elif k == "slice":
        name = "element"
        opts = replace(opts, type_mode=_ELIDE)
    else:
        name = "entry"
        opts = replace(opts, type_mode=_ELIDE)

    def key_of(key: str, node: _Node) -> str:
        if k == "map":
            return _format_map_key(node.parent.type.key, key)
        return key

    max_len = -1
    if opts.limit_verbosity:
        if opts.diff_mode == _IDENTICAL:
            max_len = ((1 << opts.verbosity()) >> 1) << 2
        else:
            max_len = (1 << opts.verbosity()) << 1
        opts = replace(opts, verbosity_level=opts.verbosity_level - 1)

    if opts.diff_mode in (_IDENTICAL, _REMOVED, _INSERTED):
        out = _List()
        deferred = False
        for key, node in recs:
            if len(out) == max_len:
                deferred = True
                break
            if k == "struct":
                if opts.diff_mode == _IDENTICAL:
                    zero = (is_zero(node.type, node.vx) or is_zero(node.type, node.vy))
                elif opts.diff_mode == _REMOVED:
                    zero = node.vx is INVALID or is_zero(node.type, node.vx)
                else:
                    zero = node.vy is INVALID or is_zero(node.type, node.vy)
                if zero:
                    continue
            text = _format_diff(opts, node)
            if text is not None:
                out.append(_Record(text, key=key_of(key, node)))
        if deferred:
            out.append_ellipsis(_Stats(""))
        return _Wrap("{", out, "}")

    num_diffs = 0
    out = _List()
    groups = _coalesce(name, recs)
    max_group = _Stats(name)
    for i, ds in enumerate(groups):
        if max_len >= 0 and num_diffs >= max_len:
            max_group = max_group.append(ds)
            continue
        if ds.num_diff() == 0:
            num_equal = ds.identical
            lo = hi = 0
            while lo < 2 and lo + hi < num_equal and i != 0:
                lo += 1
            while hi < 2 and lo + hi < num_equal and i != len(groups) - 1:
                hi += 1
            if num_equal - (lo + hi) == 1:
                hi += 1
            ident = replace(opts, diff_mode=_IDENTICAL)
            for key, node in recs[:lo]:
                out.append(_Record(_format_diff(ident, node), key=key_of(key, node)))
            if num_equal > lo + hi:
                out.append_ellipsis(replace(ds, identical=ds.identical - (lo + hi)))
            for key, node in recs[num_equal - hi:num_equal]:
                out.append(_Record(_format_diff(ident, node), key=key_of(key, node)))
            recs = recs[num_equal:]
            continue
        for key, node in recs[:ds.num_diff()]:
            if _can_format_diff_slice(opts, node):
                out.append(_Record(_format_diff_slice(opts, node), key=key_of(key, node)))
            elif node.num_children == node.max_depth:
                removed = replace(opts, diff_mode=_REMOVED)
                inserted = replace(opts, diff_mode=_INSERTED)
                outx = _format_diff(removed, node)
                outy = _format_diff(inserted, node)
                j = 0
                while (j <= _MAX_PRESET and outx is not None and outy is not None
                       and outx.equal(outy)):
                    opts2 = opts.preset(j)
                    outx = _format_diff(replace(opts2, diff_mode=_REMOVED), node)
                    outy = _format_diff(replace(opts2, diff_mode=_INSERTED), node)
                    j += 1
                if outx is not None:
                    out.append(_Record(outx, diff=_REMOVED, key=key_of(key, node)))
                if outy is not None:
                    out.append(_Record(outy, diff=_INSERTED, key=key_of(key, node)))
            else:
                out.append(_Record(_format_diff(opts, node), key=key_of(key, node)))
        recs = recs[ds.num_diff():]
        num_diffs += ds.num_diff()
    if not max_group.is_zero():
        out.append_ellipsis(max_group)
    return _Wrap("{", out, "}")


# ----------------------------------------------------------------------------------------------
# cmp.Diff: differences within strings and slices of numbers (cmp/report_slices.go)

_NUMBER_KINDS = frozenset({"int", "float", "bool"})


def _can_format_diff_slice(opts: _Opts, v: _Node) -> bool:
    if opts.diff_mode != 0 or v.num_diff == 0 or v.vx is INVALID or v.vy is INVALID:
        return False
    t = v.type
    if t.kind == "string":
        return _blen(v.vx) >= 32 and _blen(v.vy) >= 32
    if t.kind == "slice" and t.elem.kind in _NUMBER_KINDS:
        if not v.vx or not v.vy:
            return False
        if v.num_diff > v.num_same:
            return True
        return len(v.vx) >= 32 and len(v.vy) >= 32
    return False


def _is_text_rune(c: str) -> bool:
    """C{unicode.IsPrint(r) || unicode.IsSpace(r)}, and not U+FFFD."""
    return c != "\ufffd" and (c == " " or c.isprintable() or c.isspace())


def _format_diff_slice(opts: _Opts, v: _Node) -> Any:
    t = v.type
    if t.kind != "string":
        elem = t.elem
        chunk = 16 if elem.kind == "bool" else 8
        name = elem.name if elem.name in ("int32", "int64", "float64", "bool") else "int"

        def number_rec(chunk_values: list, d: int) -> _Record:
            text = ", ".join(("true" if e else "false") if elem.kind == "bool" else
                             gofmt.format_float(e) if elem.kind == "float" else str(e)
                             for e in chunk_values)
            return _Record(_Line(text), diff=d)
        out_list = _slice_records(opts, list(v.vx), list(v.vy), chunk, name, number_rec)
        return _format_type(opts, t, _Wrap("{", out_list, "}"))
    sx, sy = v.vx, v.vy
    total = valid = lines = max_line = last = 0
    both = (sx + sy).encode("utf-8")
    for i, c in _byte_indexed(sx + sy):
        total += 1
        if _is_text_rune(c):
            valid += 1
        if c == "\n":
            max_line = max(max_line, i - last)
            last = i + 1
            lines += 1
    pure = valid == total
    mostly_text = valid > int(0.90 * total)
    lined = pure and lines >= 4 and max_line <= 1024
    if lined:
        ssx, ssy = sx.split("\n"), sy.split("\n")
        es_lines = difference(len(ssx), len(ssy),
                              lambda i, j: (1, 0) if ssx[i] == ssy[j] else (0, 2))
        bx, by = sx.encode("utf-8"), sy.encode("utf-8")
        es_bytes = difference(len(bx), len(by),
                              lambda i, j: (1, 0) if bx[i] == by[j] else (0, 2))
        eff_lines = _dist(es_lines) / len(es_lines)
        eff_bytes = _dist(es_bytes) / len(es_bytes)
        ratio = _blen(gofmt.quote(sx + sy)) / len(both)
        lined = eff_lines < 4 * eff_bytes or ratio > 1.1
    if lined:
        out_list = _slice_records(
            opts, ssx, ssy, 1, "line",
            lambda chunk, d: _Record(_Line(_go_format_string(chunk[0])), diff=d))
        triple = _triple_quoted(out_list)
        if triple is not None:
            out: Any = _Wrap("(", triple, ")")
            return out if t.name == "string" else _format_type(opts, t, out)
        delim = "\n"
    else:
        bx, by = sx.encode("utf-8"), sy.encode("utf-8")
        out_list = _slice_records(
            opts, list(bx), list(by), 64, "byte",
            lambda chunk, d: _Record(_Line(_go_format_string(
                bytes(chunk).decode("utf-8", "replace"))), diff=d))
        delim = ""
    out = _Wrap("strings.Join(", _Wrap("{", out_list, "}"), f", {gofmt.quote(delim)})")
    if not mostly_text:
        out = _Wrap("{", out_list, "}")
        return _format_type(replace(opts, type_mode=_EMIT), t, out)
    return out if t.name == "string" else _format_type(opts, t, out)


def _byte_indexed(text: str) -> Iterator[tuple[int, str]]:
    """C{for i, r := range text}: each rune with its byte offset."""
    i = 0
    for c in text:
        yield i, c
        i += _blen(c)


def _dist(es: str) -> int:
    return len(es) - es.count(".")


def _triple_quoted(records: "_List") -> "Optional[_List]":
    """The lines of a lined-text diff in go-cmp's triple-quote form, or None when they may
    not be written so."""
    out = _List([_Record(_Line('"""'), elide_comma=True)])
    removed: set = set()
    inserted: set = set()
    for r in records:
        r = replace(r)
        if not r.value.equal(_ELLIPSIS):
            line = _unquote(r.value.text).removesuffix("\r").removeprefix("\r")
            norm = "".join(c for c in line if not c.isspace())
            ok = (not line.startswith('"""') and not line.startswith("...")
                  and all(c.isprintable() or c == "\t" for c in line))
            if r.diff == _REMOVED:
                ok = ok and norm not in inserted
                removed.add(norm)
            elif r.diff == _INSERTED:
                ok = ok and norm not in removed
                inserted.add(norm)
            if not ok:
                return None
            r.value = _Line(line)
            r.elide_comma = True
        if r.diff not in (_REMOVED, _INSERTED):
            removed, inserted = set(), set()
        out.append(r)
    last = out[-1]
    if last.diff == _IDENTICAL and isinstance(last.value, _Line) and not last.value.text:
        out.pop()
    out.append(_Record(_Line('"""'), elide_comma=True))
    return out


def _unquote(text: str) -> str:
    """C{strconv.Unquote} of what L{_go_format_string} wrote."""
    if text.startswith("`"):
        return text[1:-1]
    import json
    try:
        return json.loads(text)
    except ValueError:
        return text[1:-1]


def _slice_records(opts: _Opts, vx: list, vy: list, chunk: int, name: str,
                   make: Callable[[list, int], _Record]) -> _List:
    """go-cmp's C{formatDiffSlice}: the records of a chunked diff of two sequences."""
    def eq(i: int, j: int) -> bool:
        return vx[i] == vy[j]
    es = difference(len(vx), len(vy), lambda i, j: (1, 0) if eq(i, j) else (0, 2))
    out = _List()

    def append_chunks(values: list, d: int) -> int:
        for start in range(0, len(values), chunk):
            out.append(make(values[start:start + chunk], d))
        return len(values)

    max_len = -1
    if opts.limit_verbosity:
        max_len = (1 << opts.verbosity()) << 2
    groups = _cleanup_identical(_coalesce_intervening(_coalesce_edits(name, es), chunk // 4), eq)
    num_diffs = 0
    max_group = _Stats(name)
    for i, ds in enumerate(groups):
        if max_len >= 0 and num_diffs >= max_len:
            max_group = max_group.append(ds)
            continue
        if ds.num_diff() == 0:
            num_equal = ds.ignored + ds.identical
            lo = hi = 0
            while lo < chunk * 2 and lo + hi < num_equal and i != 0:
                lo += 1
            while hi < chunk * 2 and lo + hi < num_equal and i != len(groups) - 1:
                hi += 1
            if num_equal - (lo + hi) <= chunk and ds.ignored == 0:
                hi = num_equal - lo
            append_chunks(vx[:lo], _IDENTICAL)
            if num_equal > lo + hi:
                out.append_ellipsis(replace(ds, identical=ds.identical - (lo + hi)))
            append_chunks(vx[num_equal - hi:num_equal], _IDENTICAL)
            vx, vy = vx[num_equal:], vy[num_equal:]
            continue
        len0 = len(out)
        nx = append_chunks(vx[:ds.identical + ds.removed + ds.modified], _REMOVED)
        vx = vx[nx:]
        ny = append_chunks(vy[:ds.identical + ds.inserted + ds.modified], _INSERTED)
        vy = vy[ny:]
        num_diffs += len(out) - len0
    if not max_group.is_zero():
        out.append_ellipsis(max_group)
    return out


def _coalesce_edits(name: str, es: str) -> list[_Stats]:
    groups: list[_Stats] = []
    prev = ""
    for e in es:
        mode = "=" if e == "." else "!"
        if mode != prev:
            groups.append(_Stats(name))
            prev = mode
        g = groups[-1]
        if e == ".":
            g.identical += 1
        elif e == "X":
            g.removed += 1
        elif e == "Y":
            g.inserted += 1
        else:
            g.modified += 1
    return groups


def _coalesce_intervening(groups: list[_Stats], window: int) -> list[_Stats]:
    out: list[_Stats] = []
    for ds in groups:
        if len(out) >= 2 and ds.num_diff() > 0:
            prev, curr = out[-2], out[-1]
            had_x, had_y = prev.removed > 0, prev.inserted > 0
            has_x, has_y = ds.removed > 0, ds.inserted > 0
            if (had_x or has_x) and (had_y or has_y) and curr.identical <= window:
                out[-2] = prev.append(curr).append(ds)
                out.pop()
                continue
        out.append(ds)
    return out


def _cleanup_identical(groups: list[_Stats], eq: Callable[[int, int], bool]) -> list[_Stats]:
    ix = iy = 0
    prepend: list[_Stats] = []
    append: list[_Stats] = []
    for i, ds in enumerate(groups):
        if ds.num_diff() == 0:
            ix += ds.identical
            iy += ds.identical
            continue
        nx = ds.identical + ds.removed + ds.modified
        ny = ds.identical + ds.inserted + ds.modified
        lead = trail = 0
        while lead < nx and lead < ny and eq(ix + lead, iy + lead):
            lead += 1
        while trail < nx and trail < ny and eq(ix + nx - 1 - trail, iy + ny - 1 - trail):
            trail += 1
        if lead + trail > 0:
            if lead:
                if i - 1 >= 0:
                    groups[i - 1].identical += lead
                else:
                    prepend.append(_Stats(groups[0].name, identical=lead))
                ix += lead
                iy += lead
            if trail:
                if i + 1 < len(groups):
                    groups[i + 1].identical += trail
                else:
                    append.append(_Stats(groups[-1].name, identical=trail))
            nx -= lead + trail
            ny -= lead + trail
            groups[i] = _Stats(ds.name, removed=nx, inserted=ny)
        ix += nx
        iy += ny
    # deferred in upstream: run in reverse order of registration
    for g in reversed(append):
        groups = groups + [g]
    for g in reversed(prepend):
        groups = [g] + groups
    return groups


def cmp_diff(t: GoType, x: Any, y: Any) -> str:
    """
    C{cmp.Diff(x, y)} of two Go values of type C{t} (L{from_json}): C{""} when equal, else
    go-cmp's report, e.g.::

          core.PodSpec{
          \tVolumes: {...},
        -\tRestartPolicy: "Always",
        +\tRestartPolicy: "Never",
          \t... // 31 identical fields
          }

    with non-breaking spaces (U+00A0) after the first column, as upstream prints them (see the
    module docstring).
    """
    root = _compare(t, x, y)
    if root.num_diff == 0:
        return ""
    text = _format_diff(_Opts(), root)
    if not isinstance(text, _Wrap):
        text = _Wrap("", text)
    return text.string()
