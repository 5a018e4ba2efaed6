# -*- test-case-name: tests.apiextensions.test_jsonpath -*-
"""
A small evaluator of kube's JSONPath: upstream C{k8s.io/client-go/util/jsonpath} as used by
C{additionalPrinterColumns}, C{selectableFields} and the scale subresource's paths.

Supported: fields (C{.spec.replicas}, C{['a.b']}), indexes and slices (C{[0]}, C{[-1]},
C{[1:3]}), wildcards (C{[*]}, C{.*}), recursive descent (C{..name}) and filters
(C{[?(@.type=="Ready")]}, C{[?(@.x)]}, with C{== != < > <= >=}).  An optional surrounding
C{{...}} is accepted.  Missing keys yield no result (C{AllowMissingKeys(true)}).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["JSONPathError", "find", "first", "format_value", "parse"]


class JSONPathError(ValueError):
    """The expression cannot be parsed."""


# one step: ("field", name) | ("index", i) | ("slice", a, b) | ("wild",) | ("recurse", name)
#           | ("filter", path_steps, op, literal)
Step = tuple


_FIELD = re.compile(r"(?:\\.|[^.\[\]\\])+")


def _unescape(name: str) -> str:
    return re.sub(r"\\(.)", r"\1", name)


def _literal(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise JSONPathError(f"unrecognized literal {text!r}") from None


def parse(expr: str) -> list[Step]:
    """
    Parse C{expr} into steps.

    @raise JSONPathError: unbalanced brackets, a bad filter or literal.
    """
    s = expr.strip()
    if s.startswith("{") and s.endswith("}"):
        s = s[1:-1].strip()
    s = s.removeprefix("$")
    steps: list[Step] = []
    i = 0
    while i < len(s):
        c = s[i]
        if s.startswith("..", i):
            m = _FIELD.match(s, i + 2)
            if not m:
                raise JSONPathError(f"invalid recursive descent at {i} in {expr!r}")
            steps.append(("recurse", _unescape(m.group())))
            i = m.end()
        elif c == ".":
            if i + 1 == len(s):
                i += 1
                continue
            if s[i + 1] == "*":
                steps.append(("wild",))
                i += 2
                continue
            m = _FIELD.match(s, i + 1)
            if not m:
                i += 1
                continue
            steps.append(("field", _unescape(m.group())))
            i = m.end()
        elif c == "[":
            end = _closing(s, i)
            inner = s[i + 1:end].strip()
            steps.append(_bracket(inner, expr))
            i = end + 1
        else:
            m = _FIELD.match(s, i)
            if not m:
                raise JSONPathError(f"unexpected {c!r} at {i} in {expr!r}")
            steps.append(("field", _unescape(m.group())))
            i = m.end()
    return steps


def _closing(s: str, start: int) -> int:
    depth, quote = 0, ""
    for j in range(start, len(s)):
        ch = s[j]
        if quote:
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return j
    raise JSONPathError(f"unclosed array expect ] in {s!r}")


_FILTER = re.compile(r"^\?\(\s*@(?P<path>[^=!<>]*?)\s*"
                     r"(?:(?P<op>==|!=|<=|>=|<|>)\s*(?P<lit>.+?))?\s*\)$")


def _bracket(inner: str, expr: str) -> Step:
    if inner == "*":
        return ("wild",)
    if inner.startswith("?"):
        m = _FILTER.match(inner)
        if not m:
            raise JSONPathError(f"invalid filter {inner!r} in {expr!r}")
        path = parse(m.group("path")) if m.group("path").strip() else []
        lit = _literal(m.group("lit")) if m.group("op") else None
        return ("filter", path, m.group("op"), lit)
    if inner[:1] in "'\"":
        names = [_literal(p) for p in inner.split(",")]
        return ("field", names[0]) if len(names) == 1 else ("fields", names)
    if ":" in inner:
        parts = inner.split(":")
        try:
            a = int(parts[0]) if parts[0].strip() else None
            b = int(parts[1]) if len(parts) > 1 and parts[1].strip() else None
        except ValueError:
            raise JSONPathError(f"invalid array index {inner!r}") from None
        return ("slice", a, b)
    try:
        return ("index", int(inner))
    except ValueError:
        raise JSONPathError(f"invalid array index {inner!r}") from None


def _apply(step: Step, values: list[Any]) -> list[Any]:
    kind = step[0]
    out: list[Any] = []
    for v in values:
        if kind == "field":
            if isinstance(v, dict) and step[1] in v:
                out.append(v[step[1]])
        elif kind == "fields":
            if isinstance(v, dict):
                out.extend(v[n] for n in step[1] if n in v)
        elif kind == "index":
            if isinstance(v, list) and -len(v) <= step[1] < len(v):
                out.append(v[step[1]])
        elif kind == "slice":
            if isinstance(v, list):
                out.extend(v[step[1]:step[2]])
        elif kind == "wild":
            if isinstance(v, dict):
                out.extend(v[k] for k in sorted(v))
            elif isinstance(v, list):
                out.extend(v)
        elif kind == "recurse":
            out.extend(_recurse(v, step[1]))
        elif kind == "filter":
            items = v if isinstance(v, list) else []
            for item in items:
                if _matches(item, step[1], step[2], step[3]):
                    out.append(item)
    return out


def _recurse(v: Any, name: str) -> list[Any]:
    out = []
    if isinstance(v, dict):
        if name in v:
            out.append(v[name])
        for k in sorted(v):
            out.extend(_recurse(v[k], name))
    elif isinstance(v, list):
        for item in v:
            out.extend(_recurse(item, name))
    return out


def _matches(item: Any, path: list[Step], op: Any, lit: Any) -> bool:
    found = [item]
    for step in path:
        found = _apply(step, found)
    if op is None:
        return bool(found)
    if not found:
        return False
    left = found[0]
    try:
        if op == "==":
            return left == lit
        if op == "!=":
            return left != lit
        if op == "<":
            return left < lit
        if op == ">":
            return left > lit
        if op == "<=":
            return left <= lit
        return left >= lit
    except TypeError:
        return False


def find(expr: str | list[Step], obj: Any) -> list[Any]:
    """Every value C{expr} selects in C{obj}, in order (C{[]} when nothing matches)."""
    steps = parse(expr) if isinstance(expr, str) else expr
    values = [obj]
    for step in steps:
        values = _apply(step, values)
    return values


_MISSING = object()


def first(expr: str | list[Step], obj: Any, default: Any = None) -> Any:
    """The first value C{expr} selects in C{obj}, else C{default}."""
    found = find(expr, obj)
    return found[0] if found else default


def format_value(value: Any) -> str:
    """How C{jsonpath.PrintResults} prints one value: strings raw, maps and lists as JSON,
    booleans C{true}/C{false}, numbers as Go's C{%v}."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "<nil>"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return str(value)
