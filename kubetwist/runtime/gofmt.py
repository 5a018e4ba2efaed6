# -*- test-case-name: tests.runtime.test_gofmt -*-
"""
Go's text of values: the one place kubetwist prints a value the way a Go program would.

Upstream's messages embed values through C{fmt} verbs (C{%q}, C{%v}, C{%#v}, C{%T}),
C{strconv.Quote}, C{encoding/json}'s C{Marshal} and its error texts.  Every validation
message, decoding error and Status detail that quotes a value uses these functions, so a
value prints the same everywhere and exactly as kube-apiserver prints it.

Values are decoded JSON (C{dict}, C{list}, C{str}, C{int}, C{float}, C{bool}, C{None}).  How a
number prints depends on the Go type it was decoded into, which the caller knows:
C{k8s.io/apimachinery/pkg/util/json} (what the API machinery uses) makes integral numbers
C{int64} and the rest C{float64}; plain C{encoding/json} makes every number C{float64}
(C{ints_as_float=True} below).

This module sits in C{runtime/}, the lowest layer, because the strict decoder needs it;
C{runtime.field} and everything above import it from here.
"""

from __future__ import annotations

import json
import math
import unicodedata
from decimal import Decimal
from typing import Any, Iterable, Optional

#: Unicode general categories Go's C{strconv.IsPrint} accepts (letters, marks, numbers,
#: punctuation, symbols), plus the ASCII space, which it accepts by name.
_PRINTABLE_CATEGORIES = frozenset("LMNPS")

#: C{strconv}'s short escapes for control characters (C{appendEscapedRune}).
_SHORT_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                  "\t": "\\t", "\v": "\\v"}

#: What Go's C{encoding/json} escapes in strings beyond JSON's own (its HTML-safe output).
_JSON_HTML_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"))
_JSON_LINE_ESCAPES = (("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def _is_print(ch: str) -> bool:
    """Go's C{strconv.IsPrint} of one rune."""
    return ch == " " or unicodedata.category(ch)[0] in _PRINTABLE_CATEGORIES


def _valid_rune(ch: str) -> str:
    """A lone surrogate (a Python string from JSON's C{"\\ud800"}) is U+FFFD, as Go decodes
    it."""
    return "\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch


def _escape_rune(ch: str, quote_char: str) -> str:
    """C{strconv.appendEscapedRune} for C{Quote} (graphic runes kept, the rest escaped)."""
    if ch == quote_char or ch == "\\":
        return "\\" + ch
    if _is_print(ch):
        return ch
    if ch in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[ch]
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def quote(text: str) -> str:
    """
    Go's C{strconv.Quote(s)}, which is also C{fmt}'s C{%q} and C{%#v} of a string.

    Double-quoted; C{"} and C{\\} backslash-escaped; printable runes (C{strconv.IsPrint})
    kept as they are, non-ASCII included; C{\\a \\b \\f \\n \\r \\t \\v}; other control
    characters C{\\xNN}; other non-printable runes C{\\uNNNN} or C{\\UNNNNNNNN}.

    @param text: the string.
    @return: its quoted form, e.g. C{quote('a"b\\x01')} is C{'"a\\\\"b\\\\x01"'}.
    """
    return '"' + "".join(_escape_rune(_valid_rune(ch), '"') for ch in text) + '"'


def quote_char(ch: str) -> str:
    """
    C{encoding/json}'s C{quoteChar}, how its syntax errors name a character:
    C{'x'}, C{'\\''}, C{'"'}, C{'\\n'}, C{'\\x01'}.

    @param ch: one character (a byte of the input, as its code point).
    """
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return "'" + quote(ch)[1:-1] + "'"


def string_slice(values: Optional[Iterable[Any]], type_name: str = "string") -> str:
    """
    Go's C{%#v} of a string slice: C{[]string{"a", "b"}}, C{[]string{}} when empty,
    C{[]string(nil)} for nil; elements as L{quote}.

    @param type_name: the element type's name as C{%#v} prints it (C{string},
        C{core.Protocol}, C{v1.ResourceName}, ...).
    """
    if values is None:
        return f"[]{type_name}(nil)"
    return f"[]{type_name}{{" + ", ".join(quote(str(v)) for v in values) + "}"


def string_map(values: Optional[dict], type_name: str = "map[string]string") -> str:
    """
    Go's C{%#v} of a string-to-string map: C{map[string]string{"a":"1", "b":"2"}} (keys
    sorted, as C{fmt} prints maps), C{map[string]string{}} when empty,
    C{map[string]string(nil)} for nil; keys and values as L{quote}.
    """
    if values is None:
        return f"{type_name}(nil)"
    inner = ", ".join(f"{quote(str(k))}:{quote(str(values[k]))}" for k in sorted(values))
    return f"{type_name}{{{inner}}}"


def _shortest_digits(f: float) -> tuple[str, int]:
    """The shortest decimal digits of C{abs(f)} (as C{strconv} finds them) and the decimal
    point's position: C{1234.5 -> ("12345", 4)}, C{0.001 -> ("1", -2)}."""
    _, digit_tuple, exponent = Decimal(repr(abs(f))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    return digits, len(digits) + int(exponent)


def _fixed(digits: str, dp: int) -> str:
    if dp <= 0:
        return "0." + "0" * -dp + digits
    if dp >= len(digits):
        return digits + "0" * (dp - len(digits))
    return digits[:dp] + "." + digits[dp:]


def _exponent_form(digits: str, dp: int, min_exp_digits: int) -> str:
    exp = dp - 1
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp):0{min_exp_digits}d}"


def format_float(f: float) -> str:
    """
    Go's C{%v} of a C{float64} (C{strconv.FormatFloat(f, 'g', -1, 64)}): the shortest
    digits, exponent form when the exponent is below -4 or at least 6, with at least two
    exponent digits: C{3}, C{0.5}, C{123456}, C{1.234567e+06}, C{1e-05}, C{NaN}, C{+Inf}.
    """
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    sign = "-" if f < 0 else ""
    digits, dp = _shortest_digits(f)
    exp = dp - 1
    if exp < -4 or exp >= 6:
        return sign + _exponent_form(digits, dp, 2)
    return sign + _fixed(digits, dp)


def json_float(f: float) -> str:
    """
    C{encoding/json}'s text of a C{float64}: fixed notation for magnitudes in
    [1e-6, 1e21), else the exponent form with C{e-7}/C{e+21} (no padding):
    C{3}, C{0.000001}, C{1e-7}, C{1e+21}.

    @raise ValueError: NaN or an infinity (C{json: unsupported value}).
    """
    if math.isnan(f) or math.isinf(f):
        raise ValueError(f"json: unsupported value: {format_float(f)}")
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    sign = "-" if f < 0 else ""
    digits, dp = _shortest_digits(f)
    if abs(f) < 1e-6 or abs(f) >= 1e21:
        return sign + _exponent_form(digits, dp, 1)
    return sign + _fixed(digits, dp)


def json_string(text: str, escape_html: bool = True) -> str:
    """
    C{encoding/json}'s text of a string: C{\\"} C{\\\\} C{\\b} C{\\f} C{\\n} C{\\r} C{\\t},
    other control characters C{\\u00XX}, U+2028 and U+2029 escaped, other text as is (UTF-8);
    C{<} C{>} C{&} as C{\\u003c} ... unless C{escape_html} is false (an C{Encoder} with
    C{SetEscapeHTML(false)}).
    """
    text = json.dumps("".join(_valid_rune(ch) for ch in text), ensure_ascii=False)
    escapes = _JSON_HTML_ESCAPES + _JSON_LINE_ESCAPES if escape_html else _JSON_LINE_ESCAPES
    for ch, esc in escapes:
        text = text.replace(ch, esc)
    return text


def marshal(value: Any, sort_keys: bool = False, escape_html: bool = True) -> str:
    """
    Go's C{json.Marshal} text of a decoded JSON value: compact, UTF-8, Go's float text
    (L{json_float}) and string escapes (L{json_string}).

    @param sort_keys: a Go map's keys print sorted; a struct's fields keep their order (the
        dict's insertion order, when the caller built it in Go field order).
    @param escape_html: see L{json_string}.
    @raise ValueError: a NaN or infinite float.
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json_float(value)
    if isinstance(value, str):
        return json_string(value, escape_html)
    if isinstance(value, dict):
        keys = sorted(value) if sort_keys else list(value)
        return "{" + ",".join(json_string(str(k), escape_html) + ":"
                              + marshal(value[k], sort_keys, escape_html) for k in keys) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(marshal(v, sort_keys, escape_html) for v in value) + "]"
    raise TypeError(f"json: unsupported type: {type(value).__name__}")


def sprint(value: Any, ints_as_float: bool = False) -> str:
    """
    Go's C{%v} (and C{%+v}) of a decoded JSON value held in an C{interface{}}:
    C{map[a:1 b:[x y]]} (map keys sorted, as C{fmt} prints maps), strings bare, C{<nil>},
    floats as L{format_float}.

    @param ints_as_float: the value came from plain C{encoding/json}, where every number is a
        C{float64} (C{1000000} prints C{1e+06}).
    """
    if value is None:
        return "<nil>"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float) or (ints_as_float and isinstance(value, int)):
        return format_float(float(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{sprint(value[k], ints_as_float)}"
                                 for k in sorted(value)) + "]"
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(sprint(v, ints_as_float) for v in value) + "]"
    return str(value)


def type_name(value: Any, ints_as_float: bool = False) -> str:
    """
    Go's C{%T} of a decoded JSON value held in an C{interface{}}: C{bool}, C{int64},
    C{float64}, C{string}, C{[]interface {}}, C{map[string]interface {}}, and C{<nil>} for
    nil.

    @param ints_as_float: as for L{sprint} (every number a C{float64}).
    """
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, float) or (ints_as_float and isinstance(value, int)):
        return "float64"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, (list, tuple)):
        return "[]interface {}"
    return type(value).__name__


def json_kind(value: Any) -> str:
    """
    The JSON kind C{encoding/json}'s C{UnmarshalTypeError} names (C{json: cannot unmarshal
    <kind> into Go ...}): C{null}, C{bool}, C{number}, C{string}, C{array}, C{object}.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"
