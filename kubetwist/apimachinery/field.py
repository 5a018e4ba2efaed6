# -*- test-case-name: tests.apimachinery.test_field -*-
"""
Field paths and field errors: upstream C{k8s.io/apimachinery/pkg/util/validation/field}.

Validators return a C{list[FieldError]}; the registry turns a non-empty list into one
422 C{Invalid} L{kubetwist.runtime.errors.StatusError} whose causes are the errors.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any, Iterable

import orjson

#: Sentinel: "do not print the bad value" (upstream C{omitValue}).
OMIT = object()

# ErrorType -> (cause type sent in Status.details.causes[].reason, printed text)
_TYPES = {
    "Required": ("FieldValueRequired", "Required value"),
    "Invalid": ("FieldValueInvalid", "Invalid value"),
    "NotSupported": ("FieldValueNotSupported", "Unsupported value"),
    "Duplicate": ("FieldValueDuplicate", "Duplicate value"),
    "Forbidden": ("FieldValueForbidden", "Forbidden"),
    "TooLong": ("FieldValueTooLong", "Too long"),
    "TooMany": ("FieldValueTooMany", "Too many"),
    "NotFound": ("FieldValueNotFound", "Not found"),
    "Internal": ("InternalError", "Internal error"),
    "TypeInvalid": ("FieldValueTypeInvalid", "Invalid value"),
}
_NO_VALUE_TYPES = {"Required", "Forbidden", "TooLong", "Internal"}


class Path:
    """
    An immutable field path such as C{spec.containers[0].ports[1].protocol}.

    Build with C{Path("spec").child("containers").index(0)} or C{.key("name")} for map keys
    (printed C{metadata.labels[app]}), exactly as upstream's C{field.Path}.
    """

    __slots__ = ("_parts",)

    def __init__(self, *names: str) -> None:
        self._parts: tuple[str, ...] = ()
        for n in names:
            self._parts = self._child_parts(n)

    def _child_parts(self, name: str) -> tuple[str, ...]:
        if not name:
            # Go prints an element without a name as its (empty) subscript: NewPath("") is "[]"
            return self._parts + ("[]",)
        if not self._parts:
            return (name,)
        return self._parts + ("." + name,)

    def child(self, name: str, *more: str) -> "Path":
        p = Path()
        p._parts = self._child_parts(name)
        for m in more:
            p = p.child(m)
        return p

    def index(self, i: int) -> "Path":
        p = Path()
        p._parts = self._parts + (f"[{i}]",)
        return p

    def key(self, k: str) -> "Path":
        p = Path()
        p._parts = self._parts + (f"[{k}]",)
        return p

    def __str__(self) -> str:
        return "".join(self._parts)

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


def go_float(f: float) -> str:
    """A float64 as Go's C{%v} prints it (C{strconv.FormatFloat(f, 'g', -1, 64)}): shortest
    digits, exponent form when the exponent is < -4 or >= 6 (C{2e+06}, C{3}, C{0.5},
    C{123456}, C{1.234567e+06}, C{1e-05})."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    sign, digit_tuple, exponent = Decimal(repr(f)).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    nd = len(digits)
    dp = nd + int(exponent)
    exp = dp - 1
    neg = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if nd > 1 else "")
        return f"{neg}{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp):02d}"
    if dp <= 0:
        return f"{neg}0.{'0' * -dp}{digits}"
    if dp >= nd:
        return f"{neg}{digits}{'0' * (dp - nd)}"
    return f"{neg}{digits[:dp]}.{digits[dp:]}"


def go_string_slice(values: list[str] | None) -> str:
    """Go's C{%#v} of a C{[]string}: C{[]string{"a", "b"}}, or C{[]string(nil)} for nil;
    elements quoted as C{%q} (printable non-ASCII kept as is)."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(orjson.dumps(v).decode() for v in values) + "}"


def go_quote(text: str) -> str:
    """Go's C{strconv.Quote} / C{%q} of a string: double quotes, C{\\"} C{\\\\} C{\\n}
    C{\\t} C{\\r}, C{\\xNN} for other ASCII control characters; other text kept as is."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


#: The characters Go's C{encoding/json} escapes in strings beyond JSON's own (HTML-safe output).
_GO_JSON_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def go_marshal(value: Any, sort_keys: bool = False) -> str:
    """
    Go's C{json.Marshal} text of a JSON value: compact, UTF-8, C{<} C{>} C{&} U+2028 U+2029
    escaped.  C{sort_keys}: a Go map's keys are sorted; a struct's fields keep their order
    (the dict's insertion order, when the caller built it in Go field order).
    """
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys)
    for ch, esc in _GO_JSON_ESCAPES:
        text = text.replace(ch, esc)
    return text


def _go_value(value: Any) -> str:
    """Print a bad value the way upstream's C{ErrorBody} does (C{%q} for strings, C{%v} else)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    return orjson.dumps(value).decode()


class FieldError(Exception):
    """
    One validation failure at one field path (upstream C{field.Error}).

    @ivar type: one of C{Required Invalid NotSupported Duplicate Forbidden TooLong TooMany
        NotFound Internal TypeInvalid}.
    @ivar field: the path, as a string (C{spec.replicas}).
    @ivar bad_value: the offending value, or L{OMIT}.
    @ivar detail: human text appended after the value.
    """

    def __init__(self, type: str, field: Path | str, bad_value: Any = OMIT, detail: str = ""):
        if type not in _TYPES:
            raise ValueError(type)
        self.type = type
        self.field = str(field)
        self.bad_value = bad_value
        self.detail = detail
        super().__init__(self.error())

    @property
    def cause_type(self) -> str:
        """The C{reason} of this error's C{StatusCause} (C{FieldValueRequired}, ...)."""
        return _TYPES[self.type][0]

    def body(self) -> str:
        """Upstream C{ErrorBody()}: C{Invalid value: "x": detail}."""
        text = _TYPES[self.type][1]
        if self.type not in _NO_VALUE_TYPES and self.bad_value is not OMIT:
            text = f"{text}: {_go_value(self.bad_value)}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text

    def error(self) -> str:
        """Upstream C{Error()}: C{<field>: <body>}."""
        return f"{self.field}: {self.body()}"

    def cause(self) -> dict:
        """This error as a C{metav1.StatusCause}: C{{"reason", "message", "field"}}."""
        return {"reason": self.cause_type, "message": self.body(), "field": self.field}

    def __repr__(self) -> str:
        return f"FieldError({self.error()!r})"


def required(path: Path | str, detail: str = "") -> FieldError:
    return FieldError("Required", path, OMIT, detail)


def invalid(path: Path | str, value: Any, detail: str = "") -> FieldError:
    return FieldError("Invalid", path, value, detail)


def not_supported(path: Path | str, value: Any, valid: Iterable[str]) -> FieldError:
    """Upstream C{field.NotSupported}: detail C{supported values: "a", "b"} (given order)."""
    quoted = ", ".join(orjson.dumps(v).decode() for v in valid)
    return FieldError("NotSupported", path, value, f"supported values: {quoted}" if quoted else "")


def duplicate(path: Path | str, value: Any) -> FieldError:
    return FieldError("Duplicate", path, value)


def forbidden(path: Path | str, detail: str) -> FieldError:
    return FieldError("Forbidden", path, OMIT, detail)


def too_long(path: Path | str, value: Any, max_length: int) -> FieldError:
    return FieldError("TooLong", path, value, f"may not be more than {max_length} bytes")


def too_many(path: Path | str, actual: int, max_quantity: int) -> FieldError:
    return FieldError("TooMany", path, actual, f"must have at most {max_quantity} items")


def not_found(path: Path | str, value: Any) -> FieldError:
    return FieldError("NotFound", path, value)


def internal(path: Path | str, detail: str) -> FieldError:
    return FieldError("Internal", path, OMIT, detail)


def aggregate_message(errors: list[FieldError]) -> str:
    """Upstream C{utilerrors.Aggregate.Error()}: one message, or C{[a, b]} for several."""
    msgs: list[str] = []
    for e in errors:
        m = e.error()
        if m not in msgs:
            msgs.append(m)
    if len(msgs) == 1:
        return msgs[0]
    return "[" + ", ".join(msgs) + "]"
