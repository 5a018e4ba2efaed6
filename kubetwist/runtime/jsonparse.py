# -*- test-case-name: tests.runtime.test_jsonparse -*-
"""
An iterative JSON parser for the bodies the fast parser (orjson) refuses but Go's
C{encoding/json} accepts: nesting deeper than orjson's 1024 levels (Go allows 10000:
C{maxNestingDepth}), numbers beyond a double (C{1e400}, which Go keeps as text until it knows
the target type), integers beyond 64 bits.  Nothing recurses, so a body nested 10000 levels
deep costs no Python stack.
"""

from __future__ import annotations

import re
from json.decoder import scanstring
from typing import Any, Callable, Optional

#: Go's C{encoding/json} C{maxNestingDepth}.
MAX_NESTING_DEPTH = 10000

_SURROGATE = re.compile("[\ud800-\udfff]")

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


class DepthError(ValueError):
    """Nesting beyond L{MAX_NESTING_DEPTH}; C{str()} is Go's C{exceeded max depth}."""

    def __init__(self) -> None:
        super().__init__("exceeded max depth")


def loads(text: Any, parse_float: Optional[Callable[[str], Any]] = None,
          object_hook: Optional[Callable[[list], Any]] = None) -> Any:
    """
    Parse one JSON document without recursion.

    @param text: C{bytes} (UTF-8) or C{str}.
    @param parse_float: builds a non-integer number from its text (default C{float}).
    @param object_hook: builds an object from its C{[(key, value)]} pairs (default C{dict}).
    @raise DepthError: more than L{MAX_NESTING_DEPTH} levels.
    @raise ValueError: malformed JSON.
    """
    s = text.decode("utf-8") if isinstance(text, (bytes, bytearray)) else text
    parse_float = parse_float or float
    build = object_hook or dict
    # stack of [container, pending key]; containers are lists (arrays) or pair lists (objects)
    stack: list = []
    kinds: list = []  # "a" or "o", parallel to stack
    i = _WS.match(s, 0).end()
    result: Any = None
    have_result = False
    while True:
        if i >= len(s):
            raise ValueError("unexpected end of JSON input")
        c = s[i]
        value: Any
        produced = True
        if c == "{" or c == "[":
            if len(stack) >= MAX_NESTING_DEPTH:
                raise DepthError()
            stack.append([[], None])
            kinds.append("o" if c == "{" else "a")
            i = _WS.match(s, i + 1).end()
            if i < len(s) and s[i] == ("}" if c == "{" else "]"):
                i += 1
                container, _ = stack.pop()
                kind = kinds.pop()
                value = build(container) if kind == "o" else container
            else:
                if c == "{":
                    i = _key(s, i, stack)
                continue
        elif c == '"':
            value, i = scanstring(s, i + 1)
        elif c in "-0123456789":
            m = _NUMBER.match(s, i)
            if not m:
                raise ValueError(f"invalid number at {i}")
            lit = m.group(0)
            i = m.end()
            value = int(lit) if re.fullmatch(r"-?\d+", lit) else parse_float(lit)
        elif s.startswith("true", i):
            value, i = True, i + 4
        elif s.startswith("false", i):
            value, i = False, i + 5
        elif s.startswith("null", i):
            value, i = None, i + 4
        else:
            raise ValueError(f"invalid character at {i}")
        # attach the value, then close as many containers as end here
        while produced:
            produced = False
            if not stack:
                result, have_result = value, True
                break
            top = stack[-1]
            if kinds[-1] == "o":
                top[0].append((top[1], value))
            else:
                top[0].append(value)
            i = _WS.match(s, i).end()
            if i >= len(s):
                raise ValueError("unexpected end of JSON input")
            closer = "}" if kinds[-1] == "o" else "]"
            if s[i] == ",":
                i = _WS.match(s, i + 1).end()
                if kinds[-1] == "o":
                    i = _key(s, i, stack)
                break
            if s[i] != closer:
                raise ValueError(f"invalid character at {i}")
            i += 1
            container, _ = stack.pop()
            kind = kinds.pop()
            value = build(container) if kind == "o" else container
            produced = True
        if have_result:
            break
        i = _WS.match(s, i).end()
    i = _WS.match(s, i).end()
    if i != len(s):
        raise ValueError(f"invalid character after top-level value at {i}")
    return result


def _replace_surrogates(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def fix_surrogates(value: Any) -> Any:
    """
    C{value} with every lone UTF-16 surrogate in its strings and keys (a JSON C{"\\ud800"}
    escape, which Python's decoders keep) replaced by U+FFFD, as Go's C{encoding/json}
    decodes it; such strings cannot be encoded as UTF-8 again.  Iterative; containers are
    changed in place, the (possibly new) top value is returned.
    """
    if isinstance(value, str):
        return _replace_surrogates(value) if _SURROGATE.search(value) else value
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in list(node):
                item = node[key]
                if isinstance(key, str) and _SURROGATE.search(key):
                    del node[key]
                    key = _replace_surrogates(key)
                    node[key] = item
                if isinstance(item, str):
                    if _SURROGATE.search(item):
                        node[key] = _replace_surrogates(item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                if isinstance(item, str):
                    if _SURROGATE.search(item):
                        node[i] = _replace_surrogates(item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
    return value


def _key(s: str, i: int, stack: list) -> int:
    if i >= len(s) or s[i] != '"':
        raise ValueError(f"invalid character at {i}: expecting an object key")
    key, i = scanstring(s, i + 1)
    i = _WS.match(s, i).end()
    if i >= len(s) or s[i] != ":":
        raise ValueError(f"invalid character at {i}: expecting ':'")
    stack[-1][1] = key
    return _WS.match(s, i + 1).end()
