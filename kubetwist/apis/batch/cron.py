# -*- test-case-name: tests.apis.test_batch -*-
"""
Cron schedule checking as C{github.com/robfig/cron/v3} C{ParseStandard} does it (the parser
kube-apiserver's CronJob validation calls): five fields (minute, hour, day of month, month,
day of week) or an C{@descriptor}, an optional C{TZ=}/C{CRON_TZ=} prefix, and the parser's own
error texts, which kube-apiserver reports verbatim.
"""

from __future__ import annotations

import re
import zoneinfo

__all__ = ["parse_standard_error", "time_zone_error"]

#: (min, max, names) of minute, hour, day of month, month, day of week.
_BOUNDS = (
    (0, 59, None),
    (0, 23, None),
    (1, 31, None),
    (1, 12, {m: i + 1 for i, m in enumerate(
        "jan feb mar apr may jun jul aug sep oct nov dec".split())}),
    (0, 6, {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}),
)

_DESCRIPTORS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}

_GO_DURATION = re.compile(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$")


class _CronError(ValueError):
    pass


def _atoi(expr: str) -> int:
    """Go C{strconv.Atoi} with robfig's C{mustParseInt} wrapping."""
    if not re.fullmatch(r"[+-]?\d+", expr):
        raise _CronError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": '
                         "invalid syntax")
    num = int(expr)
    if not -(2**63) <= num < 2**63:
        raise _CronError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": '
                         "value out of range")
    if num < 0:
        raise _CronError(f"negative number ({num}) not allowed: {expr}")
    return num


def _int_or_name(expr: str, names: dict | None) -> int:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    return _atoi(expr)


def _check_range(expr: str, bounds: tuple) -> None:
    lo, hi, names = bounds
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    if low_and_high[0] in ("*", "?"):
        start, end = lo, hi
    else:
        start = _int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], names)
        else:
            raise _CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if single:
            end = hi
    else:
        raise _CronError(f"too many slashes: {expr}")
    if start < lo:
        raise _CronError(f"beginning of range ({start}) below minimum ({lo}): {expr}")
    if end > hi:
        raise _CronError(f"end of range ({end}) above maximum ({hi}): {expr}")
    if start > end:
        raise _CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise _CronError(f"step of range should be a positive number: {expr}")


def time_zone_error(name: str) -> str | None:
    """Go C{time.LoadLocation}'s error for C{name} (C{unknown time zone X}), or None."""
    if name in ("", "UTC", "Local"):
        return None
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return f"unknown time zone {name}"
    return None


def _parse(spec: str) -> None:
    if not spec:
        raise _CronError("empty spec string")
    if spec.startswith("TZ=") or spec.startswith("CRON_TZ="):
        i, eq = spec.find(" "), spec.find("=")
        zone = spec[eq + 1:i] if i >= 0 else spec[eq + 1:-1]
        err = time_zone_error(zone)
        if err:
            raise _CronError(f"provided bad location {zone}: {err}")
        spec = spec[i:].strip() if i >= 0 else ""
    if spec.startswith("@"):
        if spec in _DESCRIPTORS:
            return
        if spec.startswith("@every "):
            arg = spec[len("@every "):]
            if not _GO_DURATION.match(arg):
                raise _CronError(f'failed to parse duration {spec}: time: invalid duration "{arg}"')
            return
        raise _CronError(f"unrecognized descriptor: {spec}")
    fields = spec.split()
    if len(fields) != 5:
        raise _CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    for text, bounds in zip(fields, _BOUNDS, strict=False):
        for expr in text.split(","):
            _check_range(expr, bounds)


def parse_standard_error(spec: str) -> str | None:
    """
    The error text robfig/cron's C{ParseStandard(spec)} returns, or None when C{spec} parses.

    @param spec: e.g. C{"*/5 * * * *"}, C{"@hourly"}, C{"TZ=Europe/Paris 0 3 * * *"}.
    """
    try:
        _parse(spec)
    except _CronError as e:
        return str(e)
    return None
