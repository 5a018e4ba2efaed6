# -*- test-case-name: tests.apimachinery.test_meta -*-
"""
Small ObjectMeta helpers: UIDs (C{k8s.io/apimachinery/pkg/util/uuid}), RFC 3339 timestamps
(C{metav1.Time} marshalling, seconds precision, UTC), generated names
(C{k8s.io/apiserver/pkg/storage/names.SimpleNameGenerator}) and ages
(C{k8s.io/apimachinery/pkg/util/duration.HumanDuration}, as printed in AGE columns).
"""

from __future__ import annotations

import datetime
import functools
import random
import re
import uuid
from typing import Protocol

__all__ = [
    "new_uid",
    "now_rfc3339",
    "format_rfc3339",
    "parse_rfc3339",
    "generate_name",
    "human_duration",
    "short_human_duration",
    "translate_timestamp_since",
]


class _Clock(Protocol):
    def seconds(self) -> float: ...


def new_uid() -> str:
    """A random (version 4) UUID string, as upstream C{uuid.NewUUID}."""
    return str(uuid.uuid4())


def format_rfc3339(seconds: float) -> str:
    """C{2024-01-02T03:04:05Z} for a POSIX time (fractions are truncated, as metav1.Time does)."""
    t = datetime.datetime.fromtimestamp(int(seconds // 1), tz=datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def now_rfc3339(clock: _Clock) -> str:
    """The injected clock's current time (C{clock.seconds()}, an C{IReactorTime}) as RFC 3339."""
    return format_rfc3339(clock.seconds())


_rfc3339_re = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))"
)


@functools.lru_cache(maxsize=16384)
def parse_rfc3339(ts: str) -> float:
    """
    POSIX seconds of an RFC 3339 timestamp (Go's C{time.RFC3339} layout).  Answers are
    remembered (16,384 timestamps at most): tables and printers parse every listed object's
    C{creationTimestamp} on each request.

    @raise ValueError: when C{ts} does not parse.
    """
    m = _rfc3339_re.fullmatch(ts)
    if not m:
        raise ValueError(f"invalid RFC 3339 timestamp: {ts!r}")
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac = float(m.group(7)) if m.group(7) else 0.0
    offset = 0
    if m.group(9):
        offset = (int(m.group(10)) * 60 + int(m.group(11))) * 60
        if m.group(9) == "-":
            offset = -offset
    t = datetime.datetime(y, mo, d, h, mi, s, tzinfo=datetime.timezone.utc)
    return t.timestamp() - offset + frac


#: Upstream C{utilrand} alphanums: no vowels, no confusable characters.
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_MAX_NAME_LENGTH = 63
_RANDOM_LENGTH = 5
_MAX_GENERATED_NAME_LENGTH = _MAX_NAME_LENGTH - _RANDOM_LENGTH


def generate_name(base: str, rng: random.Random | None = None) -> str:
    """
    Upstream C{SimpleNameGenerator.GenerateName}: C{base} cut to 58 characters plus 5 random
    characters from C{bcdfghjklmnpqrstvwxz2456789}.

    @param rng: a random source (tests inject a seeded one); a system source by default.
    """
    rng = rng or random.SystemRandom()
    if len(base) > _MAX_GENERATED_NAME_LENGTH:
        base = base[:_MAX_GENERATED_NAME_LENGTH]
    return base + "".join(rng.choice(_ALPHANUMS) for _ in range(_RANDOM_LENGTH))


def human_duration(seconds: float) -> str:
    """
    Upstream C{duration.HumanDuration}: C{0s}..C{119s}, C{2m3s}, C{10m}..C{179m}, C{3h4m},
    C{8h}..C{47h}, C{2d3h}, C{8d}..C{729d}, C{2y45d}, C{8y}; C{<invalid>} below -1s.
    """
    ns = int(seconds * 1e9)
    secs = int(ns / 1e9) if ns >= 0 else -((-ns) // 10**9)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 120:
        return f"{secs}s"
    minutes = ns // (60 * 10**9)
    if minutes < 10:
        s = (ns // 10**9) % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = ns // (3600 * 10**9)
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def short_human_duration(seconds: float) -> str:
    """Upstream C{duration.ShortHumanDuration}: C{59s}, C{5m}, C{3h}, C{2d}, C{1y}."""
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 60:
        return f"{secs}s"
    if int(seconds / 60) < 60:
        return f"{int(seconds / 60)}m"
    hours = int(seconds / 3600)
    if hours < 24:
        return f"{hours}h"
    if hours < 24 * 365:
        return f"{hours // 24}d"
    return f"{int(seconds / 3600 / 24 / 365)}y"


def translate_timestamp_since(ts: str | None, now: float) -> str:
    """
    The AGE cell (upstream printers' C{translateTimestampSince}): C{<unknown>} for a missing
    timestamp, else L{human_duration} of C{now - ts}.

    @param ts: an RFC 3339 string or None.
    @param now: POSIX seconds (from the injected clock).
    """
    if not ts:
        return "<unknown>"
    try:
        then = parse_rfc3339(ts)
    except ValueError:
        return "<unknown>"
    return human_duration(now - then)
