# -*- test-case-name: tests.apiextensions.test_cel -*-
"""
The checked CEL syntax tree and the cost of evaluating it: cel-go's C{checker/cost.go}
(static estimate) and C{interpreter/runtimecost.go} (actual cost), with the Kubernetes
function costs of upstream C{k8s.io/apiserver/pkg/cel/library/cost.go}.

The CEL runtime (cel-cpp) evaluates but does not count cost, so the cost is computed here by
walking the checked tree (decoded from the runtime's serialized C{cel.expr.CheckedExpr}) over
I{abstract values}: either the actual values of C{self} and C{oldSelf} (runtime cost, every
comprehension iterating over the real elements) or a L{Bound} derived from the schema's
C{maxItems}/C{maxLength}/C{maxProperties} (static estimate).  Both charge what cel-go charges
per step: 1 per identifier, field selection, index and ordinary call; nothing for constants
and presence tests; 10 per list and 30 per map literal; string functions proportionally to
the lengths involved.  The runtime figure does not model short-circuiting (both sides of
C{&&}/C{||} and the larger branch of C{?:} are charged), so it is an upper bound of cel-go's.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Bound", "CheckedAST", "Expr", "cost_of", "decode_checked"]

_TRAVERSAL = 0.1  # common.StringTraversalCostFactor
_REGEX = 0.25  # common.RegexStringLengthCostFactor
_LIST_CREATE = 10
_MAP_CREATE = 30


# ---------------------------------------------------------------------------------------
# a minimal protobuf reader for cel.expr.CheckedExpr


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def _fields(buf: bytes) -> Iterator[tuple[int, Any]]:
    i, n = 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 1:
            v, i = buf[i : i + 8], i + 8
        elif wt == 2:
            ln, i = _varint(buf, i)
            v, i = buf[i : i + ln], i + ln
        elif wt == 5:
            v, i = buf[i : i + 4], i + 4
        else:
            raise ValueError(f"unsupported wire type {wt}")
        yield num, v


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


@dataclass
class Expr:
    """
    One node of the checked tree (C{cel.expr.Expr}).

    @ivar kind: C{const ident select call list map comprehension}.
    @ivar name: identifier name, selected field, or function name.
    @ivar value: the constant's value.
    @ivar test_only: a C{has()} presence test.
    @ivar args: call arguments (without target), list elements, or map keys and values
        interleaved.
    """

    id: int = 0
    kind: str = ""
    name: str = ""
    value: Any = None
    test_only: bool = False
    target: Expr | None = None
    operand: Expr | None = None
    args: list = field(default_factory=list)
    iter_var: str = ""
    iter_var2: str = ""
    iter_range: Expr | None = None
    accu_var: str = ""
    accu_init: Expr | None = None
    loop_condition: Expr | None = None
    loop_step: Expr | None = None
    result: Expr | None = None


def _const(buf: bytes) -> Any:
    for num, v in _fields(buf):
        if num == 1:
            return None
        if num == 2:
            return bool(v)
        if num in (3, 4):
            return _signed(v) if num == 3 else v
        if num == 5:
            return struct.unpack("<d", v)[0]
        if num == 6:
            return v.decode()
        if num == 7:
            return bytes(v)
    return None


def _expr(buf: bytes) -> Expr:
    e = Expr()
    for num, v in _fields(buf):
        if num == 2:
            e.id = v
        elif num == 3:
            e.kind, e.value = "const", _const(v)
        elif num == 4:
            e.kind = "ident"
            e.name = next((x.decode() for n, x in _fields(v) if n == 1), "")
        elif num == 5:
            e.kind = "select"
            for n, x in _fields(v):
                if n == 1:
                    e.operand = _expr(x)
                elif n == 2:
                    e.name = x.decode()
                elif n == 3:
                    e.test_only = bool(x)
        elif num == 6:
            e.kind = "call"
            for n, x in _fields(v):
                if n == 1:
                    e.target = _expr(x)
                elif n == 2:
                    e.name = x.decode()
                elif n == 3:
                    e.args.append(_expr(x))
        elif num == 7:
            e.kind = "list"
            e.args = [_expr(x) for n, x in _fields(v) if n == 1]
        elif num == 8:
            e.kind = "map"
            for n, x in _fields(v):
                if n == 2:
                    for en, ev in _fields(x):
                        if en in (3, 4):
                            e.args.append(_expr(ev))
        elif num == 9:
            e.kind = "comprehension"
            for n, x in _fields(v):
                if n == 1:
                    e.iter_var = x.decode()
                elif n == 8:
                    e.iter_var2 = x.decode()
                elif n == 2:
                    e.iter_range = _expr(x)
                elif n == 3:
                    e.accu_var = x.decode()
                elif n == 4:
                    e.accu_init = _expr(x)
                elif n == 5:
                    e.loop_condition = _expr(x)
                elif n == 6:
                    e.loop_step = _expr(x)
                elif n == 7:
                    e.result = _expr(x)
    return e


@dataclass
class CheckedAST:
    """
    A decoded C{CheckedExpr}: the tree, the referenced names, and source positions.

    @ivar references: the names the checker resolved identifiers to (C{self}, C{oldSelf}).
    @ivar positions: expression id -> character offset in the source.
    """

    expr: Expr
    references: set
    positions: dict


def decode_checked(serialized: bytes) -> CheckedAST:
    """
    Decode the runtime's serialized expression (a C{google.protobuf.Any} holding a
    C{cel.expr.CheckedExpr}).
    """
    payload = serialized
    for num, v in _fields(serialized):
        if num == 2:
            payload = v
    expr, refs, positions = Expr(), set(), {}
    for num, v in _fields(payload):
        if num == 4:
            expr = _expr(v)
        elif num == 2:
            for n, x in _fields(v):
                if n == 2:
                    for rn, rv in _fields(x):
                        if rn == 1:
                            refs.add(rv.decode())
        elif num == 5:
            for n, x in _fields(v):
                if n == 4:
                    key = val = 0
                    for pn, pv in _fields(x):
                        if pn == 1:
                            key = pv
                        elif pn == 2:
                            val = pv
                    positions[key] = val
    return CheckedAST(expr, refs, positions)


# ---------------------------------------------------------------------------------------
# abstract values


@dataclass
class Bound:
    """
    What is known of a value without having it: its largest size (string length in bytes,
    list items, map entries), the bound of its elements or map values, and of its fields.
    """

    size: int = 1
    item: Bound | None = None
    fields: dict | None = None

    def select(self, name: str) -> Bound:
        if self.fields is not None and name in self.fields:
            return self.fields[name]
        if self.item is not None:
            return self.item
        return _UNKNOWN

    def elements(self) -> list[tuple[int, Any]]:
        return [(self.size, self.item or _UNKNOWN)]


_UNKNOWN = Bound()


def _size(v: Any) -> int:
    if isinstance(v, Bound):
        return v.size
    if isinstance(v, (str, bytes, list, dict)):
        return len(v)
    return 1


def _select(v: Any, name: str) -> Any:
    if isinstance(v, dict):
        return v.get(name, _UNKNOWN)
    if isinstance(v, Bound):
        return v.select(name)
    return _UNKNOWN


def _join(values: list) -> Any:
    """One bound covering all of C{values} (for an element picked by a computed index)."""
    if not values:
        return _UNKNOWN
    if len(values) == 1:
        return values[0]
    return Bound(max(_size(v) for v in values))


def _elements(v: Any) -> list[tuple[int, Any]]:
    if isinstance(v, list):
        return [(1, e) for e in v]
    if isinstance(v, dict):
        return [(1, k) for k in v]
    if isinstance(v, Bound):
        return v.elements()
    return []


def _ceil(x: float) -> int:
    return math.ceil(x)


def _call_cost(fn: str, args: list, target: Any) -> int:
    """Cost of the call itself given its (abstract) argument values (target first)."""
    vals = ([target] if target is not None else []) + args
    s0 = _size(vals[0]) if vals else 1
    s1 = _size(vals[1]) if len(vals) > 1 else 1
    if fn in ("startsWith", "endsWith", "string", "bytes", "strings.quote", "format", "url",
              "lowerAscii", "upperAscii", "substring", "trim", "cidr", "isIP", "isCIDR",
              "quantity", "isQuantity", "isURL"):
        return max(_ceil(s0 * _TRAVERSAL), 1 if fn in ("string", "bytes") else 0)
    if fn == "@in":
        return s1
    if fn in ("_<_", "_>_", "_<=_", "_>=_", "_==_", "_!=_"):
        return _ceil(min(s0, s1) * _TRAVERSAL)
    if fn == "_+_" and vals and isinstance(vals[0], (str, bytes)):
        return _ceil((s0 + s1) * _TRAVERSAL)
    if fn == "matches" or fn in ("find", "findAll"):
        return _ceil((1 + s0) * _TRAVERSAL) * _ceil(s1 * _REGEX)
    if fn == "contains":
        return _ceil(s0 * _TRAVERSAL) * _ceil(s1 * _TRAVERSAL)
    if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
        return max(s0, 1)
    if fn in ("replace", "split", "join", "ip.isCanonical"):
        return _ceil(s0 * 2 * _TRAVERSAL)
    if fn in ("containsIP", "containsCIDR"):
        return _ceil(2 * s0 * _TRAVERSAL) + 1
    if fn == "check":  # an authorization check (admission policies' authorizer library)
        return 350000
    return 1


def _result(fn: str, args: list, target: Any) -> Any:
    """A bound on a call's result, where the cost of later steps depends on its size."""
    vals = ([target] if target is not None else []) + args
    if fn == "_[_]" and len(vals) == 2:
        base, key = vals
        if isinstance(base, list) and isinstance(key, int) and 0 <= key < len(base):
            return base[key]
        if isinstance(base, dict) and isinstance(key, str):
            return base.get(key, _UNKNOWN)
        if isinstance(base, list):
            return _join(base)
        if isinstance(base, dict):
            return _join(list(base.values()))
        if isinstance(base, Bound):
            return base.item or _UNKNOWN
        return _UNKNOWN
    if fn in ("_+_",) and len(vals) == 2:
        a, b = vals
        if isinstance(a, (str, list)) and isinstance(b, type(a)):
            return a + b
        if isinstance(a, (str, list, Bound)) and isinstance(b, (str, list, Bound)):
            return Bound(_size(a) + _size(b))
    if fn in ("split", "findAll") and vals:
        return Bound(_size(vals[0]), Bound(_size(vals[0])))
    if fn in ("lowerAscii", "upperAscii", "trim", "substring", "replace", "find", "join",
              "format") and vals:
        return Bound(_size(vals[0]) * (2 if fn == "replace" else 1))
    return _UNKNOWN


class _Walker:
    def __init__(self, limit: int | None) -> None:
        self.limit = limit

    def cost(self, e: Expr, scope: dict) -> tuple[int, Any]:
        """Returns C{(cost, abstract value)} of C{e} with variables bound in C{scope}."""
        k = e.kind
        if k == "const":
            return 0, e.value
        if k == "ident":
            return 1, scope.get(e.name, _UNKNOWN)
        if k == "select":
            c, v = self.cost(e.operand, scope)
            if e.test_only:
                return max(c - 1, 0), True
            return c + 1, _select(v, e.name)
        if k == "list":
            total, vals = _LIST_CREATE, []
            for a in e.args:
                c, v = self.cost(a, scope)
                total += c
                vals.append(v)
            return total, vals
        if k == "map":
            total = _MAP_CREATE
            for a in e.args:
                total += self.cost(a, scope)[0]
            return total, _UNKNOWN
        if k == "call":
            return self._call(e, scope)
        if k == "comprehension":
            return self._comprehension(e, scope)
        return 1, _UNKNOWN

    def _call(self, e: Expr, scope: dict) -> tuple[int, Any]:
        fn = e.name
        if fn == "_?_:_":
            c0 = self.cost(e.args[0], scope)[0]
            c1, v1 = self.cost(e.args[1], scope)
            c2, v2 = self.cost(e.args[2], scope)
            return c0 + max(c1, c2), (v1 if c1 >= c2 else v2)
        total, target = 0, None
        if e.target is not None:
            total, target = self.cost(e.target, scope)
        vals = []
        for a in e.args:
            c, v = self.cost(a, scope)
            total += c
            vals.append(v)
        if fn in ("_&&_", "_||_"):
            return total, _UNKNOWN
        return total + _call_cost(fn, vals, target), _result(fn, vals, target)

    def _comprehension(self, e: Expr, scope: dict) -> tuple[int, Any]:
        total, rng = self.cost(e.iter_range, scope)
        c, _ = self.cost(e.accu_init, scope)
        total += c
        inner = dict(scope)
        inner[e.accu_var] = _UNKNOWN
        produced = 0
        pairs = list(rng.items()) if isinstance(rng, dict) else None
        for idx, (count, elem) in enumerate(_elements(rng)):
            if e.iter_var2:
                if pairs is not None:
                    inner[e.iter_var], inner[e.iter_var2] = pairs[idx]
                else:
                    inner[e.iter_var], inner[e.iter_var2] = idx, elem
            else:
                inner[e.iter_var] = elem
            step = self.cost(e.loop_condition, inner)[0] + self.cost(e.loop_step, inner)[0]
            total += count * step
            produced += count
            if self.limit is not None and total > self.limit:
                return total, _UNKNOWN
        c, _ = self.cost(e.result, inner)
        total += c
        # macros such as map() and filter() build a list as long as their range at most
        return total, Bound(produced, _UNKNOWN)


def cost_of(ast: CheckedAST, scope: dict, limit: int | None = None) -> int:
    """
    The cost of evaluating C{ast} with C{scope} (variable name -> actual value or L{Bound}).
    With C{limit}, the walk may stop early once the cost is known to exceed it.
    """
    return _Walker(limit).cost(ast.expr, scope)[0]
