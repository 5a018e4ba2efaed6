# -*- test-case-name: tests.apimachinery.test_selectors -*-
"""
Label and field selectors: upstream C{k8s.io/apimachinery/pkg/labels} (the C{labels.Parse}
lexer/parser, requirements and their matching), C{k8s.io/apimachinery/pkg/fields}
(C{fields.ParseSelector} with its escaping) and C{metav1.LabelSelectorAsSelector}.

Parse failures raise a 400 C{BadRequest} L{StatusError} carrying upstream's error text, as
kube-apiserver does when it decodes C{?labelSelector=} / C{?fieldSelector=} (the list handler
wraps the conversion error with C{errors.NewBadRequest(err.Error())}).
"""

from __future__ import annotations

import re
from typing import Iterable

from kubetwist.apimachinery.validation import is_qualified_name, is_valid_label_value
from kubetwist.runtime import gofmt
from kubetwist.runtime.errors import StatusError, new_bad_request
from kubetwist.runtime.field import go_string_slice

__all__ = [
    "Requirement",
    "LabelSelector",
    "FieldSelector",
    "parse_label_selector",
    "parse_field_selector",
    "label_selector_from_dict",
    "label_selector_from_set",
    "label_selector_to_string",
    "format_label_selector",
    "escape_field_value",
    "unescape_field_value",
    "everything",
    "nothing",
]

# selection.Operator values
IN = "in"
NOT_IN = "notin"
EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
GREATER_THAN = "gt"
LESS_THAN = "lt"
EXISTS = "exists"
DOES_NOT_EXIST = "!"

_BINARY_OPERATORS = [IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN]
_UNARY_OPERATORS = [EXISTS, DOES_NOT_EXIST]
_VALID_OPERATORS = _BINARY_OPERATORS + _UNARY_OPERATORS

_int64_re = re.compile(r"[+-]?[0-9]+")


def _parse_int64(s: str) -> int | None:
    """Go's C{strconv.ParseInt(s, 10, 64)}; None on failure."""
    if not _int64_re.fullmatch(s):
        return None
    v = int(s)
    if not -(2**63) <= v < 2**63:
        return None
    return v


_go_quote = gofmt.quote


def _aggregate(msgs: list[str]) -> str:
    """C{utilerrors.NewAggregate(...).Error()}: one message, or C{[a, b]} without duplicates."""
    seen: list[str] = []
    for m in msgs:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


class _SelectorError(ValueError):
    """An upstream parse error before it becomes a StatusError."""


def _validate_label_key(key: str, path: str) -> str | None:
    errs = is_qualified_name(key)
    if errs:
        return f"{path}: Invalid value: {_go_quote(key)}: " + "; ".join(errs)
    return None


class Requirement:
    """
    One label requirement (upstream C{labels.Requirement}).

    @ivar key: the label key.
    @ivar operator: one of C{in notin = == != gt lt exists !}.
    @ivar values: the values, in the order given (sorted and unique when parsed).
    """

    __slots__ = ("key", "operator", "values")

    def __init__(self, key: str, operator: str, values: list[str]) -> None:
        self.key = key
        self.operator = operator
        self.values = list(values)

    @classmethod
    def new(cls, key: str, operator: str, values: list[str] | None) -> "Requirement":
        """
        Upstream C{labels.NewRequirement} (with no field path): validates and raises
        L{_SelectorError} with the aggregated field-error text.
        """
        errs: list[str] = []
        err = _validate_label_key(key, "key")
        if err:
            errs.append(err)
        vals = values if values is not None else None
        n = len(values or [])
        if operator in (IN, NOT_IN):
            if n == 0:
                errs.append(
                    f"values: Invalid value: {go_string_slice(vals)}: for 'in', 'notin' operators, "
                    "values set can't be empty"
                )
        elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
            if n != 1:
                errs.append(
                    f"values: Invalid value: {go_string_slice(vals)}: exact-match compatibility "
                    "requires one single value"
                )
        elif operator in (EXISTS, DOES_NOT_EXIST):
            if n != 0:
                errs.append(
                    f"values: Invalid value: {go_string_slice(vals)}: values set must be empty for "
                    "exists and does not exist"
                )
        elif operator in (GREATER_THAN, LESS_THAN):
            if n != 1:
                errs.append(
                    f"values: Invalid value: {go_string_slice(vals)}: for 'Gt', 'Lt' operators, "
                    "exactly one value is required"
                )
            for i, v in enumerate(values or []):
                if _parse_int64(v) is None:
                    errs.append(
                        f"values[{i}]: Invalid value: {_go_quote(v)}: for 'Gt', 'Lt' operators, "
                        "the value must be an integer"
                    )
        else:
            supported = ", ".join(_go_quote(o) for o in _VALID_OPERATORS)
            errs.append(f"operator: Unsupported value: {_go_quote(operator)}: supported values: "
                        f"{supported}")
        for i, v in enumerate(values or []):
            msgs = is_valid_label_value(v)
            if msgs:
                errs.append(f"values[{i}][{key}]: Invalid value: {_go_quote(v)}: "
                            + "; ".join(msgs))
        if errs:
            raise _SelectorError(_aggregate(errs))
        return cls(key, operator, values or [])

    def matches(self, labels: dict) -> bool:
        """Upstream C{Requirement.Matches} over a C{{str: str}} label map."""
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            if self.key not in labels or len(self.values) != 1:
                return False
            have = _parse_int64(labels[self.key])
            want = _parse_int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        """Upstream C{Requirement.String()}: C{a in (x,y)}, C{!a}, C{a!=b}, C{a>3}."""
        op = self.operator
        prefix = "!" if op == DOES_NOT_EXIST else ""
        if op in (EXISTS, DOES_NOT_EXIST):
            return prefix + self.key
        sym = {
            EQUALS: "=", DOUBLE_EQUALS: "==", NOT_EQUALS: "!=", IN: " in ", NOT_IN: " notin ",
            GREATER_THAN: ">", LESS_THAN: "<",
        }.get(op, "")
        if len(self.values) == 1:
            vals = self.values[0]
        else:
            vals = ",".join(sorted(self.values))
        if op in (IN, NOT_IN):
            vals = f"({vals})"
        return self.key + sym + vals

    def __repr__(self) -> str:
        return f"Requirement({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Requirement)
            and (self.key, self.operator, self.values) == (other.key, other.operator, other.values)
        )


class LabelSelector:
    """
    A parsed label selector: requirements ANDed together, sorted by key (upstream
    C{internalSelector}), or the C{Nothing} selector.
    """

    def __init__(self, requirements: Iterable[Requirement] = (), nothing: bool = False) -> None:
        self._requirements = sorted(requirements, key=lambda r: r.key)
        self._nothing = nothing

    def matches(self, labels: dict | None) -> bool:
        """True when every requirement matches C{labels} (C{{str: str}}; None is empty)."""
        if self._nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self._requirements)

    def empty(self) -> bool:
        """True for the everything selector (upstream C{Empty()}; Nothing is not empty)."""
        return not self._nothing and not self._requirements

    def requirements(self) -> list[Requirement]:
        """The requirements, sorted by key."""
        return list(self._requirements)

    def requires_exact_match(self, label: str) -> tuple[str, bool]:
        """Upstream C{RequiresExactMatch}: C{(value, True)} for C{=}, C{==} or a single C{in}."""
        for r in self._requirements:
            if r.key == label:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0], True
                return "", False
        return "", False

    def __str__(self) -> str:
        """Upstream C{String()}: requirements joined with C{,}; empty for everything/nothing."""
        if self._nothing:
            return ""
        return ",".join(str(r) for r in self._requirements)

    def __repr__(self) -> str:
        return f"LabelSelector({str(self)!r})"


def everything() -> LabelSelector:
    """Upstream C{labels.Everything()}."""
    return LabelSelector()


def nothing() -> LabelSelector:
    """Upstream C{labels.Nothing()}."""
    return LabelSelector(nothing=True)


# --------------------------------------------------------------------------------------------
# the label selector lexer and parser

_ERROR, _EOS, _CLOSE, _COMMA, _NOT, _DEQ, _EQ, _GT, _ID, _IN, _LT, _NEQ, _NOTIN, _OPEN = range(14)

_STRING_TO_TOKEN = {
    ")": _CLOSE, ",": _COMMA, "!": _NOT, "==": _DEQ, "=": _EQ, ">": _GT, "in": _IN, "<": _LT,
    "!=": _NEQ, "notin": _NOTIN, "(": _OPEN,
}
_WHITESPACE = " \t\r\n"
_SPECIAL = "=!(),><"


def _lex(s: str) -> list[tuple[int, str]]:
    """Upstream C{Lexer}: the whole token stream, ending with end-of-string."""
    items: list[tuple[int, str]] = []
    pos = 0
    n = len(s)
    while True:
        while pos < n and s[pos] in _WHITESPACE:
            pos += 1
        if pos >= n:
            items.append((_EOS, ""))
            return items
        ch = s[pos]
        if ch in _SPECIAL:
            buf = ""
            last: tuple[int, str] | None = None
            while pos < n and s[pos] in _SPECIAL:
                buf += s[pos]
                pos += 1
                tok = _STRING_TO_TOKEN.get(buf)
                if tok is not None:
                    last = (tok, buf)
                elif last is not None:
                    pos -= 1
                    break
            if last is None:
                items.append((_ERROR, f"error expected: keyword found '{buf}'"))
            else:
                items.append(last)
        else:
            start = pos
            while pos < n and s[pos] not in _SPECIAL and s[pos] not in _WHITESPACE:
                pos += 1
            word = s[start:pos]
            items.append((_STRING_TO_TOKEN.get(word, _ID), word))


_KEY_AND_OPERATOR, _VALUES = 0, 1


class _Parser:
    def __init__(self, s: str) -> None:
        self.items = _lex(s)
        self.position = 0

    @staticmethod
    def _ctx(tok: int, context: int) -> int:
        if context == _VALUES and tok in (_IN, _NOTIN):
            return _ID
        return tok

    def lookahead(self, context: int) -> tuple[int, str]:
        tok, lit = self.items[self.position]
        return self._ctx(tok, context), lit

    def consume(self, context: int) -> tuple[int, str]:
        tok, lit = self.items[self.position]
        self.position += 1
        return self._ctx(tok, context), lit

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.lookahead(_VALUES)
            if tok in (_ID, _NOT):
                try:
                    reqs.append(self.parse_requirement())
                except _SelectorError as e:
                    raise _SelectorError(f"unable to parse requirement: {e}") from None
                t, lit = self.consume(_VALUES)
                if t == _EOS:
                    return reqs
                if t == _COMMA:
                    t2, l2 = self.lookahead(_VALUES)
                    if t2 not in (_ID, _NOT):
                        raise _SelectorError(f"found '{l2}', expected: identifier after ','")
                else:
                    raise _SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            elif tok == _EOS:
                return reqs
            else:
                raise _SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def parse_requirement(self) -> Requirement:
        key, op = self.parse_key_and_infer_operator()
        if op in (EXISTS, DOES_NOT_EXIST):
            return Requirement.new(key, op, [])
        op = self.parse_operator()
        if op in (IN, NOT_IN):
            values = self.parse_values()
        else:
            values = self.parse_exact_value()
        return Requirement.new(key, op, sorted(values))

    def parse_key_and_infer_operator(self) -> tuple[str, str]:
        op = ""
        tok, lit = self.consume(_VALUES)
        if tok == _NOT:
            op = DOES_NOT_EXIST
            tok, lit = self.consume(_VALUES)
        if tok != _ID:
            raise _SelectorError(f"found '{lit}', expected: identifier")
        err = _validate_label_key(lit, "<nil>")
        if err:
            raise _SelectorError(err)
        t, _ = self.lookahead(_VALUES)
        if t in (_EOS, _COMMA) and op != DOES_NOT_EXIST:
            op = EXISTS
        return lit, op

    def parse_operator(self) -> str:
        tok, lit = self.consume(_KEY_AND_OPERATOR)
        ops = {_IN: IN, _EQ: EQUALS, _DEQ: DOUBLE_EQUALS, _GT: GREATER_THAN, _LT: LESS_THAN,
               _NOTIN: NOT_IN, _NEQ: NOT_EQUALS}
        if tok not in ops:
            raise _SelectorError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        return ops[tok]

    def parse_values(self) -> set[str]:
        tok, lit = self.consume(_VALUES)
        if tok != _OPEN:
            raise _SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead(_VALUES)
        if tok in (_ID, _COMMA):
            s = self.parse_identifiers_list()
            tok, _ = self.consume(_VALUES)
            if tok != _CLOSE:
                raise _SelectorError(f"found '{lit}', expected: ')'")
            return s
        if tok == _CLOSE:
            self.consume(_VALUES)
            return {""}
        raise _SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def parse_identifiers_list(self) -> set[str]:
        s: set[str] = set()
        while True:
            tok, lit = self.consume(_VALUES)
            if tok == _ID:
                s.add(lit)
                tok2, lit2 = self.lookahead(_VALUES)
                if tok2 == _COMMA:
                    continue
                if tok2 == _CLOSE:
                    return s
                raise _SelectorError(f"found '{lit2}', expected: ',' or ')'")
            elif tok == _COMMA:
                if not s:
                    s.add("")
                tok2, _ = self.lookahead(_VALUES)
                if tok2 == _CLOSE:
                    s.add("")
                    return s
                if tok2 == _COMMA:
                    self.consume(_VALUES)
                    s.add("")
            else:
                raise _SelectorError(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        tok, _ = self.lookahead(_VALUES)
        if tok in (_EOS, _COMMA):
            return {""}
        tok, lit = self.consume(_VALUES)
        if tok == _ID:
            return {lit}
        raise _SelectorError(f"found '{lit}', expected: identifier")


def parse_label_selector(s: str) -> LabelSelector:
    """
    Upstream C{labels.Parse}: C{a=b,c!=d,e in (f,g),h notin (i),j,!k,l>3}.

    @raise StatusError: 400 BadRequest with upstream's text, e.g. C{unable to parse
        requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt} for C{a b}, or
        C{found ',', expected: !, identifier, or 'end of string'} for C{,a}.
    """
    try:
        return LabelSelector(_Parser(s).parse())
    except _SelectorError as e:
        raise new_bad_request(str(e)) from None


def label_selector_from_set(labels: dict | None) -> LabelSelector:
    """Upstream C{labels.SelectorFromSet}: C{k=v} for every entry (no validation)."""
    return LabelSelector(Requirement(k, EQUALS, [v]) for k, v in (labels or {}).items())


def label_selector_from_dict(selector: dict | None) -> LabelSelector:
    """
    Upstream C{metav1.LabelSelectorAsSelector}.

    @param selector: C{{"matchLabels": {str: str}, "matchExpressions": [{"key", "operator",
        "values"}]}}.  None gives the Nothing selector; an empty dict gives Everything.
    @raise StatusError: 400 BadRequest with upstream's error text (e.g. C{"Foo" is not a valid
        label selector operator}).
    """
    if selector is None:
        return nothing()
    match_labels = selector.get("matchLabels") or {}
    exprs = selector.get("matchExpressions") or []
    if not match_labels and not exprs:
        return everything()
    reqs: list[Requirement] = []
    ops = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}
    try:
        for k, v in match_labels.items():
            reqs.append(Requirement.new(k, EQUALS, [v]))
        for expr in exprs:
            op = expr.get("operator") or ""
            if op not in ops:
                raise _SelectorError(f"{_go_quote(op)} is not a valid label selector operator")
            reqs.append(Requirement.new(expr.get("key") or "", ops[op], expr.get("values")))
    except _SelectorError as e:
        raise new_bad_request(str(e)) from None
    return LabelSelector(reqs)


def label_selector_to_string(selector: dict | None) -> str:
    """
    C{LabelSelectorAsSelector(sel).String()}, as written to C{Scale.status.selector}:
    C{app=web,tier in (a,b)}; empty for an empty or missing selector.

    @raise StatusError: when the selector is invalid (see L{label_selector_from_dict}).
    """
    return str(label_selector_from_dict(selector))


def format_label_selector(selector: dict | None) -> str:
    """Upstream C{metav1.FormatLabelSelector}: the string, C{<none>} if empty, C{<error>} if bad."""
    try:
        s = str(label_selector_from_dict(selector))
    except StatusError:
        return "<error>"
    return s or "<none>"


# --------------------------------------------------------------------------------------------
# field selectors


def escape_field_value(s: str) -> str:
    """Upstream C{fields.EscapeValue}: backslash-escape C{\\}, C{,} and C{=}."""
    return s.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_field_value(s: str) -> str:
    """
    Upstream C{fields.UnescapeValue}.

    @raise _SelectorError: C{invalid field selector: invalid escape sequence: \\x} or
        C{invalid field selector: unescaped character in value: 61} (Go prints the rune number).
    """
    if not any(c in s for c in "\\,="):
        return s
    out: list[str] = []
    in_slash = False
    for c in s:
        if in_slash:
            if c in "\\,=":
                out.append(c)
            else:
                raise _SelectorError(f"invalid field selector: invalid escape sequence: \\{c}")
            in_slash = False
            continue
        if c == "\\":
            in_slash = True
        elif c in ",=":
            raise _SelectorError(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if in_slash:
        raise _SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(s: str) -> list[str]:
    if not s:
        return []
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, c in enumerate(s):
        if in_slash:
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c == ",":
            terms.append(s[start:i])
            start = i + 1
    terms.append(s[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
    return None


class FieldSelector:
    """
    A parsed field selector (upstream C{fields.Selector}): terms ANDed together.

    @ivar terms: C{[(field, op, value)]} with C{op} C{=} or C{!=} (C{==} is read as C{=}),
        sorted as upstream sorts the raw terms.
    """

    def __init__(self, terms: Iterable[tuple[str, str, str]] = (), nothing: bool = False) -> None:
        self.terms = list(terms)
        self._nothing = nothing

    def matches(self, fields: dict) -> bool:
        """True when every term holds over C{fields} (C{{str: str}}; missing fields read C{""})."""
        if self._nothing:
            return False
        for f, op, v in self.terms:
            have = fields.get(f, "")
            if (have == v) != (op == "="):
                return False
        return True

    def empty(self) -> bool:
        """True when there are no terms."""
        return not self._nothing and not self.terms

    def requirements(self) -> list[tuple[str, str, str]]:
        """C{[(field, op, value)]}: what a caller checks against its supported field labels."""
        return list(self.terms)

    def requires_exact_match(self, field: str) -> tuple[str, bool]:
        """Upstream C{RequiresExactMatch}: the value of the first C{field=value} term."""
        for f, op, v in self.terms:
            if f == field and op == "=":
                return v, True
        return "", False

    def transform(self, fn) -> "FieldSelector":
        """
        Upstream C{Transform}: C{fn(field, value) -> (field, value)} per term; a term mapped to
        C{("", "")} is dropped.  C{fn} may raise.
        """
        out = []
        for f, op, v in self.terms:
            nf, nv = fn(f, v)
            if nf or nv:
                out.append((nf, op, nv))
        return FieldSelector(out, self._nothing)

    def __str__(self) -> str:
        """Upstream C{String()}: C{a=b,c!=d} with values escaped."""
        if self._nothing:
            return ""
        return ",".join(f"{f}{op}{escape_field_value(v)}" for f, op, v in self.terms)

    def __repr__(self) -> str:
        return f"FieldSelector({str(self)!r})"


def parse_field_selector(s: str) -> FieldSelector:
    """
    Upstream C{fields.ParseSelector}: comma-joined C{field=value}, C{field==value},
    C{field!=value}; C{\\,}, C{\\=} and C{\\\\} escape values.

    @raise StatusError: 400 BadRequest, e.g. C{invalid selector: 'a'; can't understand 'a'}.
    """
    terms: list[tuple[str, str, str]] = []
    try:
        for part in sorted(_split_terms(s)):
            if not part:
                continue
            split = _split_term(part)
            if split is None:
                raise _SelectorError(f"invalid selector: '{s}'; can't understand '{part}'")
            lhs, op, rhs = split
            value = unescape_field_value(rhs)
            terms.append((lhs, "!=" if op == "!=" else "=", value))
    except _SelectorError as e:
        raise new_bad_request(str(e)) from None
    return FieldSelector(terms)
