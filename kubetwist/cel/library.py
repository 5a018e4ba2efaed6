# -*- test-case-name: tests.apiextensions.test_cel -*-
"""
The Kubernetes CEL extension libraries: upstream C{k8s.io/apiserver/pkg/cel/library}
(C{lists.go}, C{regex.go}, C{urls.go}, C{quantity.go}, C{ip.go}, C{cidr.go}) declared for the
CEL runtime (C{cel-expr-python}, Google's cel-cpp bindings) with Python implementations.

The CEL standard library and the C{sets}, C{optional}, C{bindings} and two-variable
comprehension extensions come with the runtime; this module adds the C{strings} extension
(cel-go's C{ext.Strings} version 2, written here because the runtime's own cannot share the
C{indexOf}/C{lastIndexOf} names with the Kubernetes list functions) and the Kubernetes
functions on top.

Kubernetes' opaque types (C{kubernetes.URL}, C{kubernetes.Quantity}, C{net.IP},
C{net.CIDR}) cannot be returned from Python functions into cel-cpp, so each is carried as a
one-entry map whose key type no custom resource value can have (JSON object keys are
strings): URL C{map(int, string)}, Quantity C{map(uint, string)} (the exact value as a
fraction, so equality is numeric like upstream's C{Cmp}), IP C{map(bool, string)} and CIDR
C{map(int, bytes)}.  Type checking therefore still tells the four apart and rejects them where
a string is expected; only the type names in messages differ from upstream.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from kubetwist.runtime.quantity import QuantityError, parse_quantity

__all__ = ["CEL_EXTENSIONS", "ENV_CONFIG_YAML", "FUNCTION_IMPLS"]

#: The runtime's own extensions in use, as in upstream's base environment for v1.32
#: (C{ext.Sets()}, C{cel.OptionalTypes()}, C{ext.TwoVarComprehensions}); C{bindings} is
#: used internally for C{optionalOldSelf}.
CEL_EXTENSIONS = [
    {"name": "sets"},
    {"name": "optional"},
    {"name": "bindings"},
    {"name": "two-var-comprehensions"},
]

_URL = "map(int,string)"
_QUANTITY = "map(uint,string)"
_IP = "map(bool,string)"
_CIDR = "map(int,bytes)"


class CELLibraryError(ValueError):
    """Raised by a library function; the runtime turns it into a CEL evaluation error."""


# ---------------------------------------------------------------------------------------
# strings (cel-go ext/strings.go, version 2): indices count code points, as Go's runes


def _char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise CELLibraryError(f"index out of range: {i}")
    return s[i : i + 1]


def _str_index_of(s: str, sub: str, off: int = 0) -> int:
    if off < 0:
        raise CELLibraryError(f"index out of range: {off}")
    if sub == "":
        return min(off, len(s))
    if off >= len(s):
        return -1
    return s.find(sub, off)


def _str_last_index_of(s: str, sub: str, off: int | None = None) -> int:
    if off is None:
        if sub == "":
            return len(s)
        if len(s) < len(sub):
            return -1
        off = len(s) - 1
    if off < 0:
        raise CELLibraryError(f"index out of range: {off}")
    if sub == "":
        return min(off, len(s))
    if off >= len(s):
        return -1
    return s.rfind(sub, 0, min(off, len(s) - len(sub)) + len(sub))


def _index_of_any(target: Any, item: Any, *rest: int) -> int:
    if isinstance(target, str):
        return _str_index_of(target, item, *rest)
    return _index_of(target, item)


def _last_index_of_any(target: Any, item: Any, *rest: int) -> int:
    if isinstance(target, str):
        return _str_last_index_of(target, item, *rest)
    return _last_index_of(target, item)


def _ascii_case(s: str, upper: bool) -> str:
    conv = str.upper if upper else str.lower
    return "".join(conv(c) if c < "\x80" else c for c in s)


def _replace(s: str, old: str, new: str, n: int = -1) -> str:
    return s.replace(old, new, n if n >= 0 else -1)


def _split(s: str, sep: str, n: int = -1) -> list:
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        if 0 < n < len(chars):
            return chars[: n - 1] + ["".join(chars[n - 1 :])]
        return chars
    return s.split(sep, n - 1 if n > 0 else -1)


def _substring(s: str, start: int, end: int | None = None) -> str:
    if end is None:
        if start < 0 or start > len(s):
            raise CELLibraryError(f"index out of range: {start}")
        return s[start:]
    if start > end:
        raise CELLibraryError(f"invalid substring range. start: {start}, end: {end}")
    if start < 0 or start > len(s):
        raise CELLibraryError(f"index out of range: {start}")
    if end < 0 or end > len(s):
        raise CELLibraryError(f"index out of range: {end}")
    return s[start:end]


_GO_SPACE = "".join(map(chr, (
    0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0xA0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
    0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F,
    0x3000)))


def _join(values: list, sep: str = "") -> str:
    return sep.join(values)


def _quote(s: str) -> str:
    out = ['"']
    for c in s:
        if c in "\\\"":
            out.append("\\" + c)
        elif c in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[c])
        elif not c.isprintable():
            out.append(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


_QUOTE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                  "\t": "\\t", "\v": "\\v"}


def _format_value(verb: str, v: Any) -> str:
    if verb == "s":
        return _cel_string(v)
    if verb == "d":
        if isinstance(v, bool) or not isinstance(v, int):
            raise CELLibraryError("error during formatting: decimal clause can only be used "
                                  "on integers, was given " + _type_name(v))
        return str(v)
    if verb in "fe":
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise CELLibraryError(
                f"error during formatting: {'fixed-point' if verb == 'f' else 'scientific'} "
                "clause can only be used on doubles, was given " + _type_name(v))
        return ("%" + "." + "6" + verb) % v
    if verb in "xXob":
        if isinstance(v, str) and verb in "xX":
            h = v.encode().hex()
            return h.upper() if verb == "X" else h
        if isinstance(v, bytes) and verb in "xX":
            return v.hex().upper() if verb == "X" else v.hex()
        if isinstance(v, bool) or not isinstance(v, int):
            raise CELLibraryError("error during formatting: only integers, byte buffers, and "
                                  "strings can be formatted as hex, was given " + _type_name(v))
        return format(v, {"x": "x", "X": "X", "o": "o", "b": "b"}[verb])
    raise CELLibraryError('could not parse formatting clause: unrecognized formatting clause '
                          f'"{verb}"')


def _type_name(v: Any) -> str:
    for t, n in ((bool, "bool"), (int, "int"), (float, "double"), (str, "string"),
                 (bytes, "bytes"), (list, "list"), (dict, "map")):
        if isinstance(v, t):
            return n
    return "null_type" if v is None else type(v).__name__


def _cel_string(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if v != int(v) or abs(v) >= 1e21 else str(int(v))
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, list):
        return "[" + ", ".join(_cel_string(e) for e in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_cel_string(k)}: {_cel_string(e)}" for k, e in v.items()) + "}"
    return str(v)


_FORMAT_RE = re.compile(r"%(?:\.(\d+))?([a-zA-Z%])")


def _format(fmt: str, args: list) -> str:
    out, pos, n = [], 0, 0
    for m in _FORMAT_RE.finditer(fmt):
        out.append(fmt[pos : m.start()])
        pos = m.end()
        precision, verb = m.group(1), m.group(2)
        if verb == "%":
            out.append("%")
            continue
        if n >= len(args):
            raise CELLibraryError(f"index {n} out of range")
        v = args[n]
        n += 1
        if precision is not None and verb in "fe":
            out.append(("%." + precision + verb) % v)
        else:
            out.append(_format_value(verb, v))
    out.append(fmt[pos:])
    return "".join(out)


# ---------------------------------------------------------------------------------------
# lists (upstream library/lists.go)


def _is_sorted(values: list) -> bool:
    return all(values[i] <= values[i + 1] for i in range(len(values) - 1))


def _sum(values: list) -> Any:
    if not values:
        return 0
    total = values[0]
    for v in values[1:]:
        total = total + v
    return total


def _min(values: list) -> Any:
    if not values:
        raise CELLibraryError("min called on empty list")
    return min(values)


def _max(values: list) -> Any:
    if not values:
        raise CELLibraryError("max called on empty list")
    return max(values)


def _index_of(values: list, item: Any) -> int:
    for i, v in enumerate(values):
        if v == item and type(v) is type(item):
            return i
    return -1


def _last_index_of(values: list, item: Any) -> int:
    for i in range(len(values) - 1, -1, -1):
        if values[i] == item and type(values[i]) is type(item):
            return i
    return -1


# ---------------------------------------------------------------------------------------
# regex (upstream library/regex.go); RE2 syntax is close enough to Python's for the common
# subset (named groups are spelled (?P<name>...) in both).


def _compile_regex(pattern: str) -> re.Pattern:
    try:
        return re.compile(pattern)
    except re.error as e:
        raise CELLibraryError(f"Illegal regex: {e}") from None


def _find(s: str, pattern: str) -> str:
    m = _compile_regex(pattern).search(s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, limit: int = -1) -> list:
    if limit == 0:
        return []
    found = [m.group(0) for m in _compile_regex(pattern).finditer(s)]
    return found if limit < 0 else found[:limit]


# ---------------------------------------------------------------------------------------
# URLs (upstream library/urls.go, Go's url.ParseRequestURI)


def _parse_url(raw: str) -> Any:
    if not raw:
        raise CELLibraryError(
            'URL parse error during conversion from string: parse "": empty url'
        )
    if not (raw.startswith("/") or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", raw)):
        raise CELLibraryError(
            f'URL parse error during conversion from string: parse "{raw}": '
            "invalid URI for request"
        )
    return urlsplit(raw)


def _url(raw: str) -> dict:
    _parse_url(raw)
    return {0: raw}


def _is_url(raw: str) -> bool:
    try:
        _parse_url(raw)
    except (CELLibraryError, ValueError):
        return False
    return True


def _host_port(u: dict) -> tuple[str, str, str]:
    netloc = urlsplit(u[0]).netloc
    host = netloc.rpartition("@")[2]
    if host.startswith("["):
        end = host.find("]")
        hostname = host[1:end]
        port = host[end + 2 :] if host[end + 1 : end + 2] == ":" else ""
    elif ":" in host:
        hostname, _, port = host.rpartition(":")
    else:
        hostname, port = host, ""
    return host, hostname, port


def _url_query(u: dict) -> dict:
    return {k: v for k, v in parse_qs(urlsplit(u[0]).query, keep_blank_values=True).items()}


# ---------------------------------------------------------------------------------------
# quantities (upstream library/quantity.go)


def _q(value: Fraction) -> dict:
    return {0: str(value)}


def _qv(q: dict) -> Fraction:
    return Fraction(q[0])


def _quantity(raw: str) -> dict:
    try:
        return _q(parse_quantity(raw).value)
    except QuantityError as e:
        raise CELLibraryError(str(e)) from None


def _is_quantity(raw: str) -> bool:
    try:
        parse_quantity(raw)
    except QuantityError:
        return False
    return True


def _as_integer(q: dict) -> int:
    v = _qv(q)
    if v.denominator != 1:
        raise CELLibraryError("cannot convert value to integer")
    if not -(2**63) <= v.numerator < 2**63:
        raise CELLibraryError("cannot convert value to integer")
    return v.numerator


def _compare(a: dict, b: dict) -> int:
    x, y = _qv(a), _qv(b)
    return (x > y) - (x < y)


def _q_operand(other: Any) -> Fraction:
    return _qv(other) if isinstance(other, dict) else Fraction(other)


# ---------------------------------------------------------------------------------------
# IP and CIDR (upstream library/ip.go, cidr.go)


def _parse_ip(raw: str) -> ipaddress._BaseAddress:
    if "%" in raw:
        raise CELLibraryError(f'IP address "{raw}" with zone value is not allowed')
    try:
        addr = ipaddress.ip_address(raw)
    except ValueError as e:
        raise CELLibraryError(
            f'IP Address "{raw}" parse error during conversion from string: {e}'
        ) from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CELLibraryError(f'IPv4-mapped IPv6 address "{raw}" is not allowed')
    return addr


def _ip(raw: str) -> dict:
    return {True: str(_parse_ip(raw))}


def _is_ip(raw: str) -> bool:
    try:
        _parse_ip(raw)
    except CELLibraryError:
        return False
    return True


def _ip_is_canonical(raw: str) -> bool:
    return str(_parse_ip(raw)) == raw


def _ipa(v: dict) -> ipaddress._BaseAddress:
    return ipaddress.ip_address(v[True])


def _parse_cidr(raw: str) -> ipaddress._BaseNetwork:
    if "/" not in raw or "%" in raw:
        raise CELLibraryError(
            "network address parse error during conversion from string: "
            f'netip.ParsePrefix("{raw}"): no \'/\''
        )
    try:
        iface = ipaddress.ip_interface(raw)
    except ValueError as e:
        raise CELLibraryError(
            f"network address parse error during conversion from string: {e}"
        ) from None
    if isinstance(iface.ip, ipaddress.IPv6Address) and iface.ip.ipv4_mapped is not None:
        raise CELLibraryError(f'IPv4-mapped IPv6 address "{raw}" is not allowed')
    return iface


def _cidr(raw: str) -> dict:
    iface = _parse_cidr(raw)
    return {0: str(iface).encode()}


def _is_cidr(raw: str) -> bool:
    try:
        _parse_cidr(raw)
    except CELLibraryError:
        return False
    return True


def _iface(v: dict) -> Any:
    return ipaddress.ip_interface(v[0].decode())


def _contains_ip(c: dict, other: Any) -> bool:
    addr = _parse_ip(other) if isinstance(other, str) else _ipa(other)
    return addr in _iface(c).network


def _contains_cidr(c: dict, other: Any) -> bool:
    inner = _parse_cidr(other) if isinstance(other, str) else _iface(other)
    net = _iface(c).network
    return inner.version == net.version and inner.network.subnet_of(net)


# ---------------------------------------------------------------------------------------
# declarations

# (function, overload id, receiver type or None, [argument types], result type, impl)
_A = "A"
_DECLS: list[tuple[str, str, str | None, list[str], str, Callable | None]] = [
    ("isSorted", "list_is_sorted", "list(A)", [], "bool", _is_sorted),
    # results typed dyn: the runtime cannot return a type parameter from Python
    ("sum", "list_sum", "list(A)", [], "dyn", _sum),
    ("min", "list_min", "list(A)", [], "dyn", _min),
    ("max", "list_max", "list(A)", [], "dyn", _max),
    # the runtime dispatches a Python function on concrete kinds only: one overload per kind
    *[
        (name, f"list_{oid}_{kind}", "list(A)", [kind], "int", impl)
        for name, oid, impl in (
            ("indexOf", "index_of", _index_of_any),
            ("lastIndexOf", "last_index_of", _last_index_of_any),
        )
        for kind in ("int", "uint", "double", "bool", "string", "bytes", "timestamp",
                     "duration")
    ],
    ("charAt", "string_char_at_int", "string", ["int"], "string", _char_at),
    ("indexOf", "string_index_of_string", "string", ["string"], "int", _index_of_any),
    ("indexOf", "string_index_of_string_int", "string", ["string", "int"], "int",
     _index_of_any),
    ("lastIndexOf", "string_last_index_of_string", "string", ["string"], "int",
     _last_index_of_any),
    ("lastIndexOf", "string_last_index_of_string_int", "string", ["string", "int"], "int",
     _last_index_of_any),
    ("lowerAscii", "string_lower_ascii", "string", [], "string",
     lambda s: _ascii_case(s, False)),
    ("upperAscii", "string_upper_ascii", "string", [], "string",
     lambda s: _ascii_case(s, True)),
    ("replace", "string_replace_string_string", "string", ["string", "string"], "string",
     _replace),
    ("replace", "string_replace_string_string_int", "string", ["string", "string", "int"],
     "string", _replace),
    ("split", "string_split_string", "string", ["string"], "list(string)", _split),
    ("split", "string_split_string_int", "string", ["string", "int"], "list(string)", _split),
    ("substring", "string_substring_int", "string", ["int"], "string", _substring),
    ("substring", "string_substring_int_int", "string", ["int", "int"], "string", _substring),
    ("trim", "string_trim", "string", [], "string", lambda s: s.strip(_GO_SPACE)),
    ("join", "list_join", "list(string)", [], "string", _join),
    ("join", "list_join_string", "list(string)", ["string"], "string", _join),
    ("format", "string_format", "string", ["list(dyn)"], "string", _format),
    ("strings.quote", "strings_quote", None, ["string"], "string", _quote),
    ("find", "string_find_string", "string", ["string"], "string", _find),
    ("findAll", "string_find_all_string", "string", ["string"], "list(string)", _find_all),
    ("findAll", "string_find_all_string_int", "string", ["string", "int"], "list(string)",
     _find_all),
    ("url", "string_to_url", None, ["string"], _URL, _url),
    ("isURL", "is_url_string", None, ["string"], "bool", _is_url),
    ("getScheme", "url_get_scheme", _URL, [], "string", lambda u: urlsplit(u[0]).scheme),
    ("getHost", "url_get_host", _URL, [], "string", lambda u: _host_port(u)[0]),
    ("getHostname", "url_get_hostname", _URL, [], "string", lambda u: _host_port(u)[1]),
    ("getPort", "url_get_port", _URL, [], "string", lambda u: _host_port(u)[2]),
    ("getEscapedPath", "url_get_escaped_path", _URL, [], "string",
     lambda u: urlsplit(u[0]).path),
    ("getQuery", "url_get_query", _URL, [], "map(string,list(string))", _url_query),
    ("quantity", "string_to_quantity", None, ["string"], _QUANTITY, _quantity),
    ("isQuantity", "is_quantity_string", None, ["string"], "bool", _is_quantity),
    ("sign", "quantity_sign", _QUANTITY, [], "int", lambda q: (_qv(q) > 0) - (_qv(q) < 0)),
    ("isInteger", "quantity_is_integer", _QUANTITY, [], "bool",
     lambda q: _qv(q).denominator == 1),
    ("asInteger", "quantity_as_integer", _QUANTITY, [], "int", _as_integer),
    ("asApproximateFloat", "quantity_as_float", _QUANTITY, [], "double",
     lambda q: float(_qv(q))),
    ("add", "quantity_add", _QUANTITY, [_QUANTITY], _QUANTITY,
     lambda a, b: _q(_qv(a) + _q_operand(b))),
    ("add", "quantity_add_int", _QUANTITY, ["int"], _QUANTITY,
     lambda a, b: _q(_qv(a) + _q_operand(b))),
    ("sub", "quantity_sub", _QUANTITY, [_QUANTITY], _QUANTITY,
     lambda a, b: _q(_qv(a) - _q_operand(b))),
    ("sub", "quantity_sub_int", _QUANTITY, ["int"], _QUANTITY,
     lambda a, b: _q(_qv(a) - _q_operand(b))),
    ("isGreaterThan", "quantity_is_greater_than", _QUANTITY, [_QUANTITY], "bool",
     lambda a, b: _compare(a, b) > 0),
    ("isLessThan", "quantity_is_less_than", _QUANTITY, [_QUANTITY], "bool",
     lambda a, b: _compare(a, b) < 0),
    ("compareTo", "quantity_compare_to", _QUANTITY, [_QUANTITY], "int", _compare),
    ("ip", "string_to_ip", None, ["string"], _IP, _ip),
    ("isIP", "is_ip", None, ["string"], "bool", _is_ip),
    ("ip.isCanonical", "ip_is_canonical", None, ["string"], "bool", _ip_is_canonical),
    ("family", "ip_family", _IP, [], "int", lambda v: _ipa(v).version),
    ("isUnspecified", "ip_is_unspecified", _IP, [], "bool", lambda v: _ipa(v).is_unspecified),
    ("isLoopback", "ip_is_loopback", _IP, [], "bool", lambda v: _ipa(v).is_loopback),
    ("isLinkLocalMulticast", "ip_is_link_local_multicast", _IP, [], "bool",
     lambda v: _ipa(v).is_multicast and _ipa(v).is_link_local
     if _ipa(v).version == 6 else _ipa(v) in ipaddress.ip_network("224.0.0.0/24")),
    ("isLinkLocalUnicast", "ip_is_link_local_unicast", _IP, [], "bool",
     lambda v: _ipa(v).is_link_local and not _ipa(v).is_multicast),
    ("isGlobalUnicast", "ip_is_global_unicast", _IP, [], "bool",
     lambda v: not (_ipa(v).is_unspecified or _ipa(v).is_loopback or _ipa(v).is_multicast
                    or _ipa(v).is_link_local or str(_ipa(v)) == "255.255.255.255")),
    ("cidr", "string_to_cidr", None, ["string"], _CIDR, _cidr),
    ("isCIDR", "is_cidr", None, ["string"], "bool", _is_cidr),
    ("containsIP", "cidr_contains_ip_ip", _CIDR, [_IP], "bool", _contains_ip),
    ("containsIP", "cidr_contains_ip_string", _CIDR, ["string"], "bool", _contains_ip),
    ("containsCIDR", "cidr_contains_cidr", _CIDR, [_CIDR], "bool", _contains_cidr),
    ("containsCIDR", "cidr_contains_cidr_string", _CIDR, ["string"], "bool", _contains_cidr),
    ("ip", "cidr_ip", _CIDR, [], _IP, lambda c: {True: str(_iface(c).ip)}),
    ("masked", "cidr_masked", _CIDR, [], _CIDR,
     lambda c: {0: str(_iface(c).network).encode()}),
    ("prefixLength", "cidr_prefix_length", _CIDR, [], "int",
     lambda c: _iface(c).network.prefixlen),
]


def _type_yaml(spec: str) -> dict:
    """C{"map(int,list(string))"} -> the env-config YAML type description."""
    spec = spec.replace(" ", "")
    if spec == _A:
        return {"type_name": _A, "is_type_param": True}
    name, _, rest = spec.partition("(")
    if not rest:
        return {"type_name": name}
    inner = rest[:-1]
    params, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            params.append(inner[start:i])
            start = i + 1
    params.append(inner[start:])
    return {"type_name": name, "params": [_type_yaml(p) for p in params]}


def _build() -> tuple[str, dict[str, Callable]]:
    functions: dict[str, list] = {}
    impls: dict[str, Callable] = {}
    for name, oid, target, args, result, impl in _DECLS:
        overload: dict[str, Any] = {"id": oid}
        if target is not None:
            overload["target"] = _type_yaml(target)
        if args:
            overload["args"] = [_type_yaml(a) for a in args]
        overload["return"] = _type_yaml(result)
        functions.setdefault(name, []).append(overload)
        if impl is not None:
            impls[oid] = impl
    config = {
        "extensions": CEL_EXTENSIONS,
        "functions": [{"name": n, "overloads": o} for n, o in functions.items()],
    }
    return yaml.safe_dump(config, sort_keys=False), impls


#: The environment configuration (cel-expr-python's env-config YAML) and the Python
#: implementations keyed by overload id.
ENV_CONFIG_YAML, FUNCTION_IMPLS = _build()
