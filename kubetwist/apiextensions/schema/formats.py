# -*- test-case-name: tests.apiextensions.test_schema_formats -*-
"""
String formats and regular expressions as custom resources see them.

Upstream: C{k8s.io/kube-openapi/pkg/validation/strfmt} (the C{Default} registry and its
validators, with the C{govalidator} checks it vendors) and
C{k8s.io/apiextensions-apiserver/pkg/apiserver/validation/formats.go}
(C{StripUnsupportedFormatsPostProcessorForVersion}: formats a CRD may not use are dropped
before validation), at the v1.32 level; and Go's RE2 syntax (C{regexp}) for C{pattern},
translated to Python's C{re}.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable
from datetime import date

#: Normalized (dashes removed) string formats a v1.32 CRD may use; others are stripped.
SUPPORTED_STRING_FORMATS = frozenset({
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3",
    "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor",
    "byte", "password", "date", "duration", "datetime",
})


def effective_format(fmt: str, types: list[str]) -> str:
    """
    The format kept for validation (upstream C{StripUnsupportedFormatsPostProcessorForVersion}).

    @param fmt: the schema's C{format}.
    @param types: the schema's types as kube-openapi sees them (C{["integer", "string"]} for
        C{x-kubernetes-int-or-string}).
    @return: C{fmt}, or C{""} when upstream strips it.
    """
    if not fmt:
        return ""
    t = types[0] if len(types) == 1 else ""
    if t in ("", "string"):
        return fmt if fmt.replace("-", "") in SUPPORTED_STRING_FORMATS else ""
    if t == "integer":
        return fmt if fmt in ("int32", "int64") else ""
    if t == "number":
        return fmt if fmt in ("float", "double") else ""
    return ""


# --------------------------------------------------------------------------------------------
# validators (strfmt.Default)

_UUID = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z")
_UUID3 = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z")
_UUID4 = re.compile(
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z")
_UUID5 = re.compile(
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z")
# \p{S}\p{L} approximated by Python's Unicode word characters other than "_".
_HN_CH = r"[^\W_]"
_HN_CH_DASH = r"(?:[^\W_]|-)"
_HOSTNAME = re.compile(
    rf"^({_HN_CH}((-?{_HN_CH}{{0,62}})?)|({_HN_CH}(({_HN_CH_DASH}{{0,61}}{_HN_CH})?)(\.)){{1,}}"
    rf"([^\W\d_]){{2,63}})\Z")
_CREDIT_CARD = re.compile(
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}"
    r"|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})\Z", re.ASCII)
_ISBN10 = re.compile(r"^(?:[0-9]{9}X|[0-9]{10})\Z")
_ISBN13 = re.compile(r"^(?:[0-9]{13})\Z")
_HEXCOLOR = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})\Z")
_RGB = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*"
_RGBCOLOR = re.compile(rf"^rgb\({_RGB},{_RGB},{_RGB}\)\Z", re.ASCII)
_BASE64 = re.compile(
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})\Z")
_SSN = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}\Z", re.ASCII)
_MAC = re.compile(
    r"^(?:[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){5}|[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){7}"
    r"|[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){19}"
    r"|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){2}|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){3}"
    r"|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){9})\Z")
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\Z", re.ASCII)
_DATETIME_TAIL = re.compile(
    r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))\Z")
_GO_DURATION = re.compile(r"^[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+\Z")
_SCALA_DURATION = re.compile(r"((\d+)\s*([A-Za-zµ]+))")
_TIME_UNITS = [["ns", "nano"], ["us", "µs", "micro"], ["ms", "milli"], ["s", "sec"],
               ["m", "min"], ["h", "hr", "hour"], ["d", "day"], ["w", "wk", "week"]]
_EMAIL_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_EMAIL_ADDR = (rf"(?:{_EMAIL_ATOM}(?:\.{_EMAIL_ATOM})*|\"[^\"\\]*\")"
               rf"@(?:{_EMAIL_ATOM}(?:\.{_EMAIL_ATOM})*|\[[^\]]*\])")
_EMAIL = re.compile(rf"^(?:{_EMAIL_ADDR}|[^<>]*<{_EMAIL_ADDR}>)\Z")
_URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def _is_hostname(s: str) -> bool:
    if not _HOSTNAME.match(s) or len(s) > 255:
        return False
    return all(len(p) <= 63 for p in s.split("."))


def _parse_ip_sloppy(s: str) -> ipaddress._BaseAddress | None:
    """C{netutils.ParseIPSloppy}: IPv4 parts may carry leading zeros."""
    if "%" in s:
        return None
    try:
        return ipaddress.ip_address(s)
    except ValueError:
        pass
    parts = s.split(".")
    if len(parts) == 4 and all(p.isdigit() and p.isascii() for p in parts):
        try:
            return ipaddress.ip_address(".".join(str(int(p)) for p in parts))
        except ValueError:
            return None
    if ":" in s and "." in s:
        head, _, tail = s.rpartition(":")
        v4 = _parse_ip_sloppy(tail)
        if v4 is not None and v4.version == 4:
            try:
                return ipaddress.ip_address(f"{head}:{v4}")
            except ValueError:
                return None
    return None


def _is_ipv4(s: str) -> bool:
    return _parse_ip_sloppy(s) is not None and "." in s


def _is_ipv6(s: str) -> bool:
    return _parse_ip_sloppy(s) is not None and ":" in s


def _is_cidr(s: str) -> bool:
    ip, sep, bits = s.partition("/")
    if not sep or not bits.isdigit() or not bits.isascii() or len(bits) > 3:
        return False
    addr = _parse_ip_sloppy(ip)
    if addr is None:
        return False
    return int(bits) <= (32 if addr.version == 4 and ":" not in ip else 128)


def _is_date(s: str) -> bool:
    m = _DATE.match(s)
    if not m:
        return False
    try:
        date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return False
    return True


def _is_datetime(s: str) -> bool:
    if len(s) < 4:
        return False
    parts = s.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _DATETIME_TAIL.match(parts[1])
    if not m:
        return False
    return m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


def _is_duration(s: str) -> bool:
    if s in ("0", "+0", "-0") or _GO_DURATION.match(s):
        return True
    for m in _SCALA_DURATION.finditer(s):
        unit = m.group(3).strip().lower()
        for variants in _TIME_UNITS:
            last = len(variants) - 1
            for i, v in enumerate(variants):
                if (i == last and unit.startswith(v)) or v.lower() == unit:
                    return True
    return False


def _luhn(s: str) -> bool:
    digits = re.sub(r"[^0-9]+", "", s)
    if not _CREDIT_CARD.match(digits):
        return False
    total, double = 0, False
    for ch in reversed(digits):
        n = int(ch)
        if double:
            n *= 2
            total += n % 10 + 1 if n >= 10 else n
        else:
            total += n
        double = not double
    return total % 10 == 0


def _isbn(s: str, version: int) -> bool:
    s = re.sub(r"[\s-]+", "", s)
    if version == 10:
        if not _ISBN10.match(s):
            return False
        total = sum((i + 1) * int(s[i]) for i in range(9))
        total += 100 if s[9] == "X" else 10 * int(s[9])
        return total % 11 == 0
    if not _ISBN13.match(s):
        return False
    total = sum((1, 3)[i % 2] * int(s[i]) for i in range(12))
    return int(s[12]) - (10 - total % 10) % 10 == 0


def _is_uri(s: str) -> bool:
    """Go's C{url.ParseRequestURI}: an absolute URI or an absolute path, no control bytes."""
    if not s or any(ord(c) < 0x20 or ord(c) == 0x7F for c in s) or " " in s:
        return False
    if _URI_SCHEME.match(s):
        return True
    return s.startswith("/") or s == "*"


_VALIDATORS: dict[str, Callable[[str], bool]] = {
    "uri": _is_uri,
    "email": lambda s: bool(_EMAIL.match(s.strip())),
    "hostname": _is_hostname,
    "ipv4": _is_ipv4,
    "ipv6": _is_ipv6,
    "cidr": _is_cidr,
    "mac": lambda s: bool(_MAC.match(s)),
    "uuid": lambda s: bool(_UUID.match(s)),
    "uuid3": lambda s: bool(_UUID3.match(s)),
    "uuid4": lambda s: bool(_UUID4.match(s)),
    "uuid5": lambda s: bool(_UUID5.match(s)),
    "isbn": lambda s: _isbn(s, 10) or _isbn(s, 13),
    "isbn10": lambda s: _isbn(s, 10),
    "isbn13": lambda s: _isbn(s, 13),
    "creditcard": _luhn,
    "ssn": lambda s: len(s) == 11 and bool(_SSN.match(s)),
    "hexcolor": lambda s: bool(_HEXCOLOR.match(s)),
    "rgbcolor": lambda s: bool(_RGBCOLOR.match(s)),
    "byte": lambda s: bool(_BASE64.match(s)),
    "password": lambda s: True,
    "date": _is_date,
    "datetime": _is_datetime,
    "duration": _is_duration,
    "bsonobjectid": lambda s: len(s) == 24 and all(c in "0123456789abcdefABCDEF" for c in s),
}


def format_validator(fmt: str) -> Callable[[str], bool] | None:
    """The C{strfmt.Default} validator of a (kept) string format, or C{None} if unknown."""
    return _VALIDATORS.get(fmt.replace("-", ""))


# --------------------------------------------------------------------------------------------
# Go RE2 -> Python re

_POSIX = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7F", "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F", "digit": "0-9", "graph": "!-~", "lower": "a-z",
    "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z",
    "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
}
_UNICODE_CLASSES = {"L": "[^\\W\\d_]", "N": "\\d", "Nd": "\\d", "Lu": "[A-Z]", "Ll": "[a-z]"}


class GoRegexpError(ValueError):
    """A C{pattern} Go's C{regexp.Compile} (or our translation of it) rejects."""


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    depth_flags: list[int] = []  # indices in out of scoped-flag groups opened for (?i) etc.
    depth = 0
    multiline = re.search(r"\(\?[a-zA-Z]*m", pattern) is not None
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt == "Q":
                end = pattern.find("\\E", i + 2)
                lit = pattern[i + 2:] if end < 0 else pattern[i + 2:end]
                out.append(re.escape(lit))
                i = n if end < 0 else end + 2
                continue
            if nxt == "z" and not in_class:
                out.append("\\Z")
                i += 2
                continue
            if nxt in "pP":
                if i + 2 < n and pattern[i + 2] == "{":
                    end = pattern.find("}", i + 3)
                    if end < 0:
                        raise GoRegexpError(f"invalid character class range: `{pattern[i:]}`")
                    name, j = pattern[i + 3:end], end + 1
                else:
                    name, j = pattern[i + 2:i + 3], i + 3
                cls = _UNICODE_CLASSES.get(name)
                if cls is None:
                    raise GoRegexpError(f"invalid character class range: `{pattern[i:j]}`")
                if nxt == "P":
                    cls = f"(?:(?!{cls}).)"
                if in_class:
                    raise GoRegexpError(f"invalid character class range: `{pattern[i:j]}`")
                out.append(cls)
                i = j
                continue
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "[" and pattern.startswith("[:", i):
                end = pattern.find(":]", i + 2)
                if end > 0:
                    name = pattern[i + 2:end]
                    neg = name.startswith("^")
                    rng = _POSIX.get(name.lstrip("^"))
                    if rng is None or neg:
                        raise GoRegexpError(
                            f"invalid character class range: `{pattern[i:end + 2]}`")
                    out.append(rng)
                    i = end + 2
                    continue
            if c == "[":
                out.append("\\[")
            elif c == "]":
                out.append("]")
                in_class = False
            elif c in "&~|-" and pattern[i + 1:i + 2] == c:
                out.append("\\" + c)
            else:
                out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append("[")
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                out.append("\\]")
                i += 1
            continue
        if c == "$":
            out.append("$" if multiline else "\\Z")
            i += 1
            continue
        if c == "(":
            m = re.match(r"\(\?([imsU-]+)\)", pattern[i:])
            if m:
                flags = m.group(1)
                if "U" in flags:
                    raise GoRegexpError(f"invalid or unsupported Perl syntax: `{m.group(0)}`")
                on, _, off = flags.partition("-")
                spec = on + ("-" + off if off else "")
                out.append(f"(?{spec}:")
                depth_flags.append(depth)
                i += len(m.group(0))
                continue
            if pattern.startswith("(?P<", i) or pattern.startswith("(?:", i):
                pass
            elif pattern.startswith("(?", i) and not re.match(r"\(\?[imsU-]*:", pattern[i:]):
                raise GoRegexpError(f"invalid or unsupported Perl syntax: `{pattern[i:i + 3]}`")
            depth += 1
            out.append(c)
            i += 1
            continue
        if c == ")":
            while depth_flags and depth_flags[-1] == depth:
                depth_flags.pop()
                out.append(")")
            depth -= 1
            out.append(c)
            i += 1
            continue
        if c == "|" and depth_flags and depth_flags[-1] == depth:
            # an alternation ends the scope of a flag group opened at this depth
            k = 0
            while depth_flags and depth_flags[-1] == depth:
                depth_flags.pop()
                k += 1
            out.append(")" * k + "|")
            i += 1
            continue
        out.append(c)
        i += 1
    out.append(")" * len(depth_flags))
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def compile_go_regexp(pattern: str) -> re.Pattern[str]:
    """
    Compile a Go RE2 C{pattern} for C{re.search} with Go's meaning: C{$} is end of text,
    C{\\d \\w \\s \\b} are ASCII, inline flags apply from where they appear, POSIX classes.

    @raise GoRegexpError: the pattern does not compile (message in Go's form where known:
        C{error parsing regexp: missing closing ): `(a`}).
    """
    try:
        translated = _translate(pattern)
    except GoRegexpError as e:
        raise GoRegexpError(f"error parsing regexp: {e}") from None
    try:
        return re.compile(translated, re.ASCII)
    except re.error as e:
        msg = str(e.msg)
        if msg.startswith("missing ), unterminated subpattern"):
            text = f"missing closing ): `{pattern}`"
        elif msg.startswith("unbalanced parenthesis"):
            text = f"unexpected ): `{pattern}`"
        elif msg.startswith("unterminated character set"):
            text = f"missing closing ]: `{pattern[pattern.rfind('['):]}`"
        elif msg.startswith(("nothing to repeat", "multiple repeat")):
            text = f"missing argument to repetition operator: `{pattern}`"
        else:
            text = f"{msg}: `{pattern}`"
        raise GoRegexpError(f"error parsing regexp: {text}") from None
