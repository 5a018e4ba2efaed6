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
from typing import Any

from kubetwist.runtime import gofmt

#: Go's C{%v} of a float64 (L{kubetwist.runtime.gofmt}, where Go's text of values lives).
go_float = gofmt.format_float
#: C{encoding/json}'s text of a float64.
go_json_float = gofmt.json_float
#: Go's C{%v} of a JSON value (C{[a b]}, C{map[k:v]}, C{<nil>}).
go_v = gofmt.sprint


def go_json(value: Any) -> str:
    """C{json.Marshal} of a JSON value as kube-openapi prints it: sorted keys, no spaces, Go
    float text, no HTML escaping."""
    return gofmt.marshal(value, sort_keys=True, escape_html=False)


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
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b, strict=False))
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
