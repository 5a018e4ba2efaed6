# -*- test-case-name: tests.storage.test_cacher -*-
"""
The state and event window of one resource prefix: upstream
C{k8s.io/apiserver/pkg/storage/cacher} (C{watch_cache.go}, C{watch_cache_history.go}).

A L{WatchCache} holds the current objects of its prefix (each dict stored once, keyed by its
backend key, never mutated after it is stored: an update replaces the dict) and a window of the
latest events.  The window's capacity follows upstream: it starts at 100 events, doubles (up to
100 * 1024) whenever it is full and its oldest event is younger than the event fresh duration
(75 s), and halves (down to 100) when even the event a quarter of the window back is older than
that; a fixed capacity may be given instead.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kubetwist.storage.continuetoken import key_bytes, key_text, prefix_range_end

#: Upstream C{defaultLowerBoundCapacity} / C{defaultUpperBoundCapacity}.
LOWER_BOUND_CAPACITY = 100
UPPER_BOUND_CAPACITY = 100 * 1024

#: Upstream C{DefaultEventFreshDuration} (seconds): how long an event should stay in the window.
EVENT_FRESH_DURATION = 75.0


@dataclass
class CacheEvent:
    """
    One change in the window (upstream C{watchCacheEvent}).

    @ivar type: C{ADDED}, C{MODIFIED} or C{DELETED}.
    @ivar key: the backend key.
    @ivar obj: the new state (DELETED: the last state with the delete's resourceVersion).
    @ivar prev: the state before, or C{None}.
    @ivar rv: the event's revision.
    @ivar time: when it was recorded (clock seconds).
    @ivar encoded: the event's encoded frames, C{{(flavor, type): bytes}}, filled by the
        watch handlers sharing it (L{kubetwist.storage.interfaces.WatchEvent.memo}): one
        encoding per output format, written to every watcher.
    """

    __slots__ = ("encoded", "key", "obj", "prev", "rv", "time", "type")

    type: str
    key: str
    obj: dict
    prev: dict | None
    rv: int
    time: float
    encoded: dict | None


class TooOldError(Exception):
    """A watch start older than the window; C{oldest} is the oldest revision one may start at."""

    def __init__(self, resource_version: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {resource_version} ({oldest})")
        self.resource_version = resource_version
        self.oldest = oldest


def object_revision(obj: dict) -> int:
    """C{metadata.resourceVersion} of a stored object as an int (0 when absent)."""
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except (TypeError, ValueError):
        return 0


def range_end(prefix: str) -> str:
    """The smallest key greater than every key starting with C{prefix}."""
    return key_text(prefix_range_end(key_bytes(prefix)))


class WatchCache:
    """
    The objects under one prefix and the window of recent events.

    @param prefix: the backend key prefix (ends with C{/}).
    @param clock: C{IReactorTime}, to time events for the window's sizing.
    @param capacity: a fixed window size, or C{None} for upstream's adaptive size.
    @param event_fresh_duration: seconds an event should stay (adaptive sizing only).
    @ivar rv: the revision the cache is known to be complete at (last event or progress).
    @ivar encoded: per key, the serializations of its current object:
        C{{key: (object, {flavor: bytes})}} (L{encoded_items}); an entry whose object is not
        the current one is stale and replaced.
    """

    def __init__(self, prefix: str, clock: Any, capacity: int | None = None,
                 event_fresh_duration: float = EVENT_FRESH_DURATION) -> None:
        self.prefix = prefix
        self.clock = clock
        self.adaptive = capacity is None
        self.capacity = LOWER_BOUND_CAPACITY if capacity is None else max(1, int(capacity))
        self.event_fresh_duration = event_fresh_duration
        self.objects: dict[str, dict] = {}
        self.encoded: dict[str, tuple[dict, dict[Any, bytes]]] = {}
        self.keys: list[str] = []
        self.history: deque[CacheEvent] = deque()
        self.rv = 0
        self.list_rv = 0
        self.removed_since_relist = False

    # -- state --------------------------------------------------------------------------------
    def replace(self, items: Iterable[tuple[str, dict]], revision: int) -> None:
        """Upstream C{Replace}: the state of a (re)list at C{revision}; the window restarts."""
        self.objects = dict(items)
        self.encoded = {}
        self.keys = sorted(self.objects)
        self.history.clear()
        self.rv = revision
        self.list_rv = revision
        self.removed_since_relist = False

    def progress(self, revision: int) -> bool:
        """Upstream C{UpdateResourceVersion}: complete up to C{revision}; whether it advanced."""
        if revision > self.rv:
            self.rv = revision
            return True
        return False

    def apply(self, type_: str, key: str, obj: dict) -> CacheEvent:
        """
        Record a backend event (C{obj} carries the event's resourceVersion) and update the
        state; return the recorded L{CacheEvent}.
        """
        rv = object_revision(obj)
        self.encoded.pop(key, None)
        if type_ == "DELETED":
            prev = self.objects.pop(key, None)
            if prev is not None:
                i = bisect.bisect_left(self.keys, key)
                if i < len(self.keys) and self.keys[i] == key:
                    del self.keys[i]
        else:
            prev = self.objects.get(key)
            if prev is None:
                bisect.insort(self.keys, key)
                type_ = "ADDED"
            elif type_ == "ADDED":
                type_ = "MODIFIED"
            self.objects[key] = obj
        event = CacheEvent(type_, key, obj, prev, rv, self.clock.seconds(), None)
        self._record(event)
        self.rv = max(self.rv, rv)
        return event

    def _record(self, event: CacheEvent) -> None:
        if len(self.history) >= self.capacity:
            if self.adaptive:
                self._resize(event.time)
            while len(self.history) >= self.capacity:
                self.history.popleft()
                self.removed_since_relist = True
        self.history.append(event)

    def _resize(self, now: float) -> None:
        """Upstream C{resizeCacheLocked} (called when the window is full)."""
        if now - self.history[0].time < self.event_fresh_duration:
            self.capacity = min(self.capacity * 2, UPPER_BOUND_CAPACITY)
            return
        quarter = self.history[len(self.history) - self.capacity // 4]
        if now - quarter.time > self.event_fresh_duration:
            self.capacity = max(self.capacity // 2, LOWER_BOUND_CAPACITY)

    # -- reads --------------------------------------------------------------------------------
    def encoded_items(self, keys: list[str], objects: list[dict], flavor: Any,
                      encode: Callable[[dict], bytes]) -> list[bytes]:
        """
        C{encode(obj)} for each cached object C{obj} at its key (C{keys} and C{objects} in
        the same order), computed once per C{flavor} (an output format: who encodes, for which
        version) while the object is current (upstream C{cachingObject}).  C{encode} must not
        mutate its argument.
        """
        memo = self.encoded
        out = []
        for key, obj in zip(keys, objects, strict=True):
            entry = memo.get(key)
            if entry is None or entry[0] is not obj:
                entry = memo[key] = (obj, {})
            data = entry[1].get(flavor)
            if data is None:
                data = entry[1][flavor] = encode(obj)
            out.append(data)
        return out

    def oldest_start(self) -> int:
        """
        The oldest revision a watch may start from (upstream C{GetIntervalLocked}'s
        C{oldest - 1}): the (re)list revision while no event has left the window, else the
        revision before the oldest event in it.
        """
        if self.list_rv > 0 and not self.removed_since_relist:
            return self.list_rv
        if self.history:
            return self.history[0].rv - 1
        return self.rv

    def events_after(self, revision: int) -> list[CacheEvent]:
        """
        The window's events with a revision above C{revision}, oldest first.

        @raise TooOldError: C{revision} is older than L{oldest_start}.
        """
        oldest = self.oldest_start()
        if revision < oldest:
            raise TooOldError(revision, oldest)
        history = self.history
        lo, hi = 0, len(history)
        while lo < hi:
            mid = (lo + hi) // 2
            if history[mid].rv > revision:
                hi = mid
            else:
                lo = mid + 1
        return [history[i] for i in range(lo, len(history))]

    def range(self, start: str, end: str | None) -> list[str]:
        """The keys in C{[start, end)} in order (C{end} C{None}: just C{start} if present)."""
        if end is None:
            return [start] if start in self.objects else []
        keys = self.keys
        return keys[bisect.bisect_left(keys, start):bisect.bisect_left(keys, end)]
