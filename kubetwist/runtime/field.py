# -*- test-case-name: tests.runtime.test_field -*-
"""
Field paths and field errors: upstream C{k8s.io/apimachinery/pkg/util/validation/field}.

Validators return a C{list[FieldError]}; the registry turns a non-empty list into one
422 C{Invalid} L{kubetwist.runtime.errors.StatusError} whose causes are the errors.
"""

from __future__ import annotations

from typing import Any, Iterable

import orjson

from kubetwist.runtime import gofmt

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


#: Go's text of values lives in L{kubetwist.runtime.gofmt}; these names are kept for the
#: validators that import them from here.
go_float = gofmt.format_float
go_quote = gofmt.quote
go_marshal = gofmt.marshal


def go_string_slice(values: list[str] | None) -> str:
    """Go's C{%#v} of a C{[]string}: C{[]string{"a", "b"}}, or C{[]string(nil)} for nil."""
    return gofmt.string_slice(values)


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
        return gofmt.quote(value)
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


class GoValueError(FieldError):
    """
    A field error whose bad value upstream prints with C{%#v} or a C{Stringer}; C{printed}
    is that text (see L{kubetwist.runtime.gofmt}), written unquoted after C{Invalid value: }.
    """

    def __init__(self, type: str, field: Path | str, printed: str, detail: str = "") -> None:
        self.printed = printed
        super().__init__(type, field, printed, detail)

    def body(self) -> str:
        text = f"{_TYPES[self.type][1]}: {self.printed}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text


def invalid_go(path: Path | str, printed: str, detail: str) -> FieldError:
    """C{field.Invalid} whose value prints as the given Go text (C{[]string{"a"}})."""
    return GoValueError("Invalid", path, printed, detail)


def required(path: Path | str, detail: str = "") -> FieldError:
    return FieldError("Required", path, OMIT, detail)


def invalid(path: Path | str, value: Any, detail: str = "") -> FieldError:
    return FieldError("Invalid", path, value, detail)


def not_supported(path: Path | str, value: Any, valid: Iterable[str]) -> FieldError:
    """Upstream C{field.NotSupported}: detail C{supported values: "a", "b"} (given order)."""
    quoted = ", ".join(gofmt.quote(str(v)) for v in valid)
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
