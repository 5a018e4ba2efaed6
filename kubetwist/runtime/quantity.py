# -*- test-case-name: tests.apis.test_pods -*-
"""
Resource quantities (resource.Quantity): upstream C{k8s.io/apimachinery/pkg/api/resource}
(C{ParseQuantity}, C{Quantity.String()} canonical form, C{Cmp}, C{RoundUp}).

A quantity is held as an exact C{fractions.Fraction} plus its format (C{DecimalSI},
C{BinarySI}, C{DecimalExponent}), which is what the canonical wire form depends on:
C{".5"} becomes C{"500m"}, C{3} becomes C{"3"}, C{"1.5Gi"} becomes C{"1536Mi"}.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

__all__ = [
    "Quantity",
    "QuantityError",
    "parse_quantity",
    "canonical_quantity",
    "round_up_milli",
]

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BINARY_SUFFIX = {v: k for k, v in _BINARY.items()}

_NUMBER_RE = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?")

#: Upstream C{ErrFormatWrong}.
ERR_FORMAT_WRONG = (
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
#: Upstream C{ErrSuffix}.
ERR_SUFFIX = "unable to parse quantity's suffix"


class QuantityError(ValueError):
    """A string that C{ParseQuantity} refuses; the message is upstream's."""


class Quantity:
    """
    An exact quantity.

    @ivar value: the amount, exactly (nano precision at most, rounded up as upstream).
    @ivar format: C{DecimalSI}, C{BinarySI} or C{DecimalExponent}.
    """

    __slots__ = ("value", "format")

    def __init__(self, value: Fraction, format: str = DECIMAL_SI) -> None:
        self.value = Fraction(value)
        self.format = format

    def cmp(self, other: "Quantity") -> int:
        """C{-1}, C{0} or C{1} as upstream C{Cmp}."""
        return (self.value > other.value) - (self.value < other.value)

    def milli_value(self) -> int:
        """Upstream C{MilliValue()}: the value times 1000, rounded up."""
        return _ceil(self.value * 1000)

    def round_up(self, scale: int) -> bool:
        """
        Upstream C{RoundUp(scale)} for a negative decimal scale such as C{-3}: round away from
        zero to a multiple of C{10**scale}.  Returns whether the value was already exact.
        """
        unit = Fraction(10) ** scale
        units = self.value / unit
        if units.denominator == 1:
            return True
        n = _ceil(abs(units))
        self.value = (n if units > 0 else -n) * unit
        return False

    def __str__(self) -> str:
        return _canonical(self.value, self.format)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


def _ceil(f: Fraction) -> int:
    return -((-f.numerator) // f.denominator)


def parse_quantity(raw: Any) -> Quantity:
    """
    Upstream C{ParseQuantity} of a wire value (a JSON string, or a JSON number as Go reads
    its text).

    @raise QuantityError: with upstream's message when the text is not a quantity.
    """
    if isinstance(raw, bool) or raw is None:
        raise QuantityError(ERR_FORMAT_WRONG)
    if isinstance(raw, int):
        text = str(raw)
    elif isinstance(raw, float):
        text = repr(raw)
        if text.endswith(".0"):
            text = text[:-2]
    elif isinstance(raw, str):
        text = raw.strip()
    else:
        raise QuantityError(ERR_FORMAT_WRONG)
    if not text:
        raise QuantityError("quantities must match the regular expression "
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    m = _NUMBER_RE.match(text)
    sign, whole, frac = m.group(1), m.group(2), m.group(3)
    if not whole and not frac:
        raise QuantityError(ERR_FORMAT_WRONG)
    suffix = text[m.end():]
    digits = (whole or "") + (frac or "")
    num = Fraction(int(digits or "0"), 10 ** len(frac or ""))
    if suffix in _BINARY:
        fmt = BINARY_SI
        num *= 2 ** _BINARY[suffix]
    elif suffix in _DECIMAL:
        fmt = DECIMAL_SI
        num *= Fraction(10) ** _DECIMAL[suffix]
    elif suffix[:1] in ("e", "E"):
        try:
            exp = int(suffix[1:])
        except ValueError:
            raise QuantityError(ERR_SUFFIX) from None
        if not re.fullmatch(r"[+-]?\d+", suffix[1:]):
            raise QuantityError(ERR_SUFFIX)
        fmt = DECIMAL_EXPONENT
        num *= Fraction(10) ** exp
    else:
        if re.fullmatch(r"[eEinumkKMGTP]*[-+]?[0-9]*", suffix):
            raise QuantityError(ERR_SUFFIX)
        raise QuantityError(ERR_FORMAT_WRONG)
    if sign == "-":
        num = -num
    # upstream keeps at most nano precision, rounding up (away from zero)
    q = Quantity(num, fmt)
    q.round_up(-9)
    return q


def _decimal_parts(value: Fraction) -> tuple[int, int]:
    """Mantissa and exponent (a multiple of 3, at least -9) with the mantissa an integer."""
    exp = 0
    if value.denominator != 1:
        while (value * Fraction(10) ** (-exp)).denominator != 1 and exp > -9:
            exp -= 3
        mant = value * Fraction(10) ** (-exp)
        return _ceil(mant) if mant > 0 else -_ceil(-mant), exp
    mant = value.numerator
    while mant != 0 and mant % 1000 == 0 and exp < 18:
        mant //= 1000
        exp += 3
    return mant, exp


def _canonical(value: Fraction, fmt: str) -> str:
    if value == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 < value < 1024 or value.denominator != 1:
            fmt = DECIMAL_SI
    if fmt == BINARY_SI:
        mant = value.numerator
        exp = 0
        while mant % 1024 == 0 and exp < 60:
            mant //= 1024
            exp += 10
        return f"{mant}{_BINARY_SUFFIX.get(exp, '')}" if exp else str(mant)
    mant, exp = _decimal_parts(value)
    if fmt == DECIMAL_EXPONENT:
        return f"{mant}e{exp}" if exp else str(mant)
    return f"{mant}{_DECIMAL_SUFFIX[exp]}"


def canonical_quantity(raw: Any) -> Any:
    """
    The wire form kube-apiserver writes back for a quantity it read (C{Quantity.String()}).
    Values that do not parse are returned unchanged (decoding reports them elsewhere).
    """
    try:
        return str(parse_quantity(raw))
    except QuantityError:
        return raw


def round_up_milli(raw: Any) -> Any:
    """
    Upstream C{SetDefaults_ResourceList} for one value: parse, round up to milli scale,
    and write the canonical form.
    """
    try:
        q = parse_quantity(raw)
    except QuantityError:
        return raw
    q.round_up(-3)
    return str(q)
