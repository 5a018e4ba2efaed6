# -*- test-case-name: tests.admission.test_resourcequota -*-
"""
Resource lists for quota: upstream C{k8s.io/apiserver/pkg/quota/v1/resources.go}.

A resource list is a C{{resource name: Quantity}} dict (L{Quantity
<kubetwist.runtime.quantity.Quantity>}); L{parse_list} reads one from the wire form
(C{{"pods": "2", "requests.memory": "1Gi"}}) and L{wire_list} writes it back in canonical form.
Sums keep the format of the first operand, as upstream's C{Quantity.Add} does.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable, Optional

from kubetwist.runtime.quantity import DECIMAL_SI, Quantity, QuantityError, parse_quantity

__all__ = [
    "ResourceList", "add", "contains_prefix", "difference", "equals", "intersection",
    "is_negative", "less_than_or_equal", "mask", "new", "parse_list", "pretty_print",
    "pretty_print_names", "remove_zeros", "subtract_non_negative", "wire_list",
]

ResourceList = dict[str, Quantity]


def new(value: int | Fraction = 0, fmt: str = DECIMAL_SI) -> Quantity:
    """Upstream C{resource.NewQuantity(value, format)} (C{Quantity{Format: DecimalSI}} for 0)."""
    return Quantity(Fraction(value), fmt)


def _copy(q: Quantity) -> Quantity:
    return Quantity(q.value, q.format)


def parse_list(raw: Optional[dict]) -> ResourceList:
    """
    A resource list from its wire form; values that are not quantities are left out (the
    stored objects were validated, so this only guards against hand-written storage).
    """
    out: ResourceList = {}
    for key, value in (raw or {}).items():
        try:
            out[key] = parse_quantity(value)
        except QuantityError:
            continue
    return out


def wire_list(rl: ResourceList) -> dict[str, str]:
    """The wire form: C{{name: canonical quantity}}, names sorted (Go's map encoding)."""
    return {k: str(rl[k]) for k in sorted(rl)}


def equals(a: ResourceList, b: ResourceList) -> bool:
    """Upstream C{Equals}: the same names with equal quantities."""
    return len(a) == len(b) and all(k in b and v.cmp(b[k]) == 0 for k, v in a.items())


def less_than_or_equal(a: ResourceList, b: ResourceList) -> tuple[bool, list[str]]:
    """Upstream C{LessThanOrEqual}: whether every name of C{b} that C{a} has is not above
    C{b}'s, and the names that are."""
    over = [k for k, v in b.items() if k in a and a[k].cmp(v) > 0]
    return not over, over


def add(a: ResourceList, b: ResourceList) -> ResourceList:
    """Upstream C{Add}: the sum by name (a name in one list only is copied); a sum keeps the
    format of C{a}'s quantity unless that is zero (C{Quantity.Add})."""
    out = {k: _copy(v) for k, v in a.items()}
    for k, v in b.items():
        if k in out:
            fmt = v.format if out[k].value == 0 else out[k].format
            out[k] = Quantity(out[k].value + v.value, fmt)
        else:
            out[k] = _copy(v)
    return out


def subtract_non_negative(a: ResourceList, b: ResourceList) -> ResourceList:
    """Upstream C{SubtractWithNonNegativeResult}: C{a - b} by name, floored at zero (names of
    C{b} only are zero)."""
    out: ResourceList = {}
    for k, v in a.items():
        value = v.value - (b[k].value if k in b else 0)
        out[k] = Quantity(value, v.format) if value > 0 else new(0)
    for k in b:
        out.setdefault(k, new(0))
    return out


def mask(rl: ResourceList, names: Iterable[str]) -> ResourceList:
    """Upstream C{Mask}: only the names in C{names}."""
    keep = set(names)
    return {k: _copy(v) for k, v in rl.items() if k in keep}


def intersection(a: Iterable[str], b: Iterable[str]) -> list[str]:
    """Upstream C{Intersection}: the names of C{a} also in C{b}, once each, sorted."""
    bs = set(b)
    return sorted({x for x in a if x in bs})


def difference(a: Iterable[str], b: Iterable[str]) -> list[str]:
    """Upstream C{Difference}: the names of C{a} not in C{b}, once each, sorted."""
    bs = set(b)
    return sorted({x for x in a if x not in bs})


def contains_prefix(prefixes: Iterable[str], name: str) -> bool:
    """Upstream C{ContainsPrefix}."""
    return any(name.startswith(p) for p in prefixes)


def remove_zeros(rl: ResourceList) -> ResourceList:
    """Upstream C{RemoveZeros}."""
    return {k: v for k, v in rl.items() if v.value != 0}


def is_negative(rl: ResourceList) -> list[str]:
    """Upstream C{IsNegative}: the names whose quantity is below zero."""
    return [k for k, v in rl.items() if v.value < 0]


def pretty_print(rl: ResourceList) -> str:
    """Upstream C{prettyPrint}: C{name=quantity} sorted by name, joined by commas."""
    return ",".join(f"{k}={rl[k]}" for k in sorted(rl))


def pretty_print_names(names: Iterable[str]) -> str:
    """Upstream C{prettyPrintResourceNames}: sorted, joined by commas."""
    return ",".join(sorted(names))


def quantity_of(raw: Any) -> Optional[Quantity]:
    """A quantity from a wire value, or C{None} when it is not one."""
    try:
        return parse_quantity(raw)
    except QuantityError:
        return None
