# -*- test-case-name: tests.apiextensions.test_schema_formats -*-
"""
Go value semantics the schema engine needs to print and compare values as upstream does.

Mirrors the parts of Go's C{fmt} (C{%v}), C{encoding/json} and C{reflect} that decide the
text of kube-openapi's messages (C{k8s.io/kube-openapi/pkg/validation/errors}) and the
equality rules of C{enum}, C{uniqueItems} and list-type sets: JSON numbers are Go C{int64}
when integral in the wire text and C{float64} otherwise, and values of different Go types
are never C{reflect.DeepEqual} (Python's C{1 == 1.0 == True} must not leak in).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import orjson

from kubetwist.apimachinery.field import go_float


def _digits(f: float) -> tuple[str, int]:
    """Shortest decimal digits of C{abs(f)} and the decimal point position (C{strconv})."""
    t = Decimal(repr(abs(f))).as_tuple()
    digits = "".join(map(str, t.digits))
    exp = int(t.exponent)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    digits = stripped.lstrip("0") or "0"
    return digits, len(digits) + exp


def _fixed(digits: str, dp: int) -> str:
    if dp <= 0:
        return "0." + "0" * (-dp) + digits
    if dp >= len(digits):
        return digits + "0" * (dp - len(digits))
    return digits[:dp] + "." + digits[dp:]


def go_json_float(f: float) -> str:
    """C{encoding/json}'s text of a C{float64} (C{1e-07}, C{3}, C{1e+21})."""
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    sign = "-" if f < 0 else ""
    digits, dp = _digits(f)
    a = abs(f)
    if a < 1e-6 or a >= 1e21:
        exp = dp - 1
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}".replace("e-0", "e-")
    return sign + _fixed(digits, dp)


def go_json(value: Any) -> str:
    """C{json.Marshal} of a JSON value: sorted keys, no spaces, Go float text."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return orjson.dumps(value).decode()
    if isinstance(value, float):
        return go_json_float(value)
    if isinstance(value, dict):
        return "{" + ",".join(orjson.dumps(k).decode() + ":" + go_json(value[k])
                              for k in sorted(value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return orjson.dumps(value).decode()


def go_v(value: Any) -> str:
    """Go's C{%v} of a JSON value (C{[a b]}, C{map[k:v]}, C{<nil>})."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(go_v(v) for v in value) + "]"
    return str(value)


def go_type(value: Any) -> str:
    """The Go type a decoded JSON value has in C{unstructured} content."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "slice"
    return type(value).__name__


def deep_equal(a: Any, b: Any) -> bool:
    """C{reflect.DeepEqual} over decoded JSON values: types must match exactly."""
    ta, tb = type(a), type(b)
    if ta is not tb:
        return False
    if ta is dict:
        if len(a) != len(b):
            return False
        for k, v in a.items():
            if k not in b or not deep_equal(v, b[k]):
                return False
        return True
    if ta is list:
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b))
    return a == b


def _int_to_string(i: int) -> str:
    """Go's C{string(rune(i))}: invalid code points become U+FFFD."""
    if i < 0 or i > 0x10FFFF or 0xD800 <= i <= 0xDFFF:
        return "\ufffd"
    return chr(i)


def enum_equal(data: Any, enum_value: Any) -> bool:
    """
    kube-openapi's enum test: C{data} converted to the enum value's Go type (when
    C{reflect.ConvertibleTo}) and then C{reflect.DeepEqual}.  A C{null} never matches.
    """
    if data is None or enum_value is None:
        return False
    dt, et = go_type(data), go_type(enum_value)
    if dt == et:
        return deep_equal(data, enum_value)
    if dt == "int64":
        if et == "float64":
            return float(data) == enum_value
        if et == "string":
            return _int_to_string(data) == enum_value
        return False
    if dt == "float64" and et == "int64":
        if math.isnan(data) or math.isinf(data):
            return False
        return int(data) == enum_value
    return False


def set_key(value: Any) -> Any:
    """A hashable identity for list-type set duplicates: scalars by Go type, compounds by JSON."""
    if isinstance(value, (dict, list)):
        return ("json", go_json(value))
    return (go_type(value), value)
