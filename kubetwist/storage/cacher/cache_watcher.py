# -*- test-case-name: tests.storage.test_cacher -*-
"""
One client watch served from the watch cache: upstream
C{k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go}.

A L{CacheWatcher} feeds one L{Watch}.  It first delivers its initial events (lazily, from a
snapshot of references to the cached objects, so a large initial state never floods the
transport), then live events.  Delivery follows the consumer's flow control: while the
transport is paused, live events wait in a bounded backlog; when the backlog overflows the
watcher is closed, as upstream closes an unresponsive watcher, and the client re-lists.  No
watcher ever holds up the cache or another watcher.  Every object handed to the consumer is a
private copy; the cache's dicts are exposed only to a consumer that asks to share them
(C{share}: the REST watch handler, which only reads and encodes them).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import orjson
from twisted.logger import Logger

from kubetwist.storage.cacher.watch_cache import CacheEvent
from kubetwist.storage.interfaces import (
    INITIAL_EVENTS_END_ANNOTATION,
    SelectionPredicate,
    Watch,
    WatchEvent,
)

_log = Logger()

#: Upstream's C{maxWatchChanSizeWithoutIndex}: how many live events may wait for a paused
#: consumer before its watch is closed.
DEFAULT_WATCHER_BUFFER = 100

#: Upstream C{defaultBookmarkFrequency} (seconds).
BOOKMARK_INTERVAL = 60.0


def copy_object(obj: dict) -> dict:
    """A deep copy of a JSON-shaped dict (an C{orjson} round trip: faster than C{deepcopy})."""
    return orjson.loads(orjson.dumps(obj))


def with_revision(obj: dict, revision: int) -> dict:
    """A copy of C{obj} whose C{metadata.resourceVersion} is C{str(revision)}."""
    out = copy_object(obj)
    out.setdefault("metadata", {})["resourceVersion"] = str(revision)
    return out


def bookmark_object(revision: int, annotations: dict | None = None) -> dict:
    """The object of a BOOKMARK event: C{{"metadata": {"resourceVersion": "N"}}}."""
    meta: dict[str, Any] = {"resourceVersion": str(revision)}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"metadata": meta}


def _shared(event: CacheEvent, type_: str) -> WatchEvent:
    """C{event} as a watch event holding the cache's own object and the event's memo."""
    if event.encoded is None:
        event.encoded = {}
    return WatchEvent(type_, event.obj, event.key, event.encoded)


def filter_event(event: CacheEvent, predicate: SelectionPredicate,
                 share: bool = False) -> WatchEvent | None:
    """
    Upstream C{cacheWatcher.convertToWatchEvent}: the event as a watcher with C{predicate}
    sees it, or C{None}.  A modification that stops matching is DELETED (the old state at the
    event's revision), one that starts matching is ADDED.  The object is a copy, unless
    C{share}: then it is the cache's own, with the event's memo (L{WatchEvent.memo}).
    """
    copy = (lambda t: _shared(event, t)) if share else (
        lambda t: WatchEvent(t, copy_object(event.obj), event.key))
    if event.type == "DELETED":
        if predicate.matches(event.obj):
            return copy("DELETED")
        return None
    if predicate.empty():
        return copy(event.type)
    current = predicate.matches(event.obj)
    old = event.prev is not None and predicate.matches(event.prev)
    if current and old:
        return copy("MODIFIED")
    if current:
        return copy("ADDED")
    if old:
        return WatchEvent("DELETED", with_revision(event.prev, event.rv), event.key)  # type: ignore[arg-type]
    return None


class CacheWatcher:
    """
    The server side of one watch from the cache.

    @param clock: C{IReactorTime} for bookmarks.
    @param start: the first key of the watched range; C{end} its end (C{None}: only C{start}).
    @param predicate: what the client selects.
    @param bookmarks: whether to send periodic BOOKMARK events.
    @param bookmark_interval: seconds between bookmarks.
    @param deadline: clock time the consumer ends the watch (a bookmark is sent 2 s before,
        as upstream), or C{None}.
    @param max_buffer: live events that may wait for a paused consumer.
    @param progress: C{() -> int}, the revision a bookmark may carry (the cache's).
    @param on_stop: called once when the watch ends, from either side.
    @param share: hand out the cache's own objects (not copies) with each change's memo
        (L{filter_event}); for consumers that only read and encode them.
    """

    def __init__(self, clock: Any, start: str, end: str | None,
                 predicate: SelectionPredicate, *, bookmarks: bool = False,
                 bookmark_interval: float = BOOKMARK_INTERVAL, deadline: float | None = None,
                 max_buffer: int = DEFAULT_WATCHER_BUFFER,
                 progress: Callable[[], int] | None = None,
                 on_stop: Callable[[CacheWatcher], Any] | None = None,
                 share: bool = False) -> None:
        self.clock = clock
        self.share = share
        self.start = start
        self.end = end
        self.predicate = predicate
        self.bookmarks = bookmarks
        self.bookmark_interval = bookmark_interval
        self.deadline = deadline
        self.max_buffer = max_buffer
        self._progress = progress
        self._on_stop = on_stop
        self.watch = Watch(on_stop=self._stopped, on_resume=self._pump)
        #: events with a revision at or below it are not sent (the client has them)
        self.start_rv = 0
        #: the revision of the last event or bookmark sent
        self.last_rv = 0
        self._initial: Iterator[WatchEvent] | None = None
        self._backlog: deque[WatchEvent] = deque()
        self._started = False
        self._timer: Any = None
        #: set when closed for falling too far behind
        self.overflowed = False

    # -- set-up -------------------------------------------------------------------------------
    def covers(self, key: str) -> bool:
        if self.end is None:
            return key == self.start
        return self.start <= key < self.end

    def begin(self, start_rv: int, initial: Iterator[WatchEvent] | None = None) -> None:
        """
        Start delivering: C{initial} events first (if any), then live events with a revision
        above C{start_rv}.  Called once, when the watcher is registered with its cache.
        """
        self.start_rv = start_rv
        self.last_rv = start_rv
        self._initial = initial
        self._started = True
        self._schedule_bookmark()
        self._pump()

    def initial_events(self, objects: list[tuple[str, dict]], revision: int,
                       end_bookmark: bool) -> Iterator[WatchEvent]:
        """
        The lazy initial events: ADDED (a copy) per object in C{objects} that matches, then, if
        C{end_bookmark}, the BOOKMARK annotated C{k8s.io/initial-events-end} at C{revision}.
        """
        for key, obj in objects:
            if self.predicate.matches(obj):
                yield WatchEvent("ADDED", obj if self.share else copy_object(obj), key)
        if end_bookmark:
            yield WatchEvent("BOOKMARK", bookmark_object(
                revision, {INITIAL_EVENTS_END_ANNOTATION: "true"}))

    # -- delivery -----------------------------------------------------------------------------
    def add(self, event: CacheEvent) -> None:
        """A live cache event (called by the cache's dispatch, in revision order)."""
        if self.watch.ended or event.rv <= self.start_rv or not self.covers(event.key):
            return
        try:
            out = filter_event(event, self.predicate, self.share)
        except Exception:  # noqa: BLE001 - a predicate that raises ends this watch only
            _log.failure("watch predicate failed")
            self.close()
            return
        if out is not None:
            self.send(out)

    def send(self, event: WatchEvent) -> None:
        """Deliver C{event} now if the consumer accepts it, else queue it (bounded)."""
        if self.watch.ended:
            return
        if self._started and self._initial is None and not self._backlog and self.watch.accepting:
            self._deliver(event)
            return
        self._backlog.append(event)
        if len(self._backlog) > self.max_buffer:
            self.overflowed = True
            _log.info("closing an unresponsive watcher of {key}: {n} events waiting",
                      key=self.start, n=len(self._backlog))
            self.close()

    def _deliver(self, event: WatchEvent) -> None:
        rv = (event.object.get("metadata") or {}).get("resourceVersion")
        if rv and event.type != "ERROR":
            try:
                self.last_rv = max(self.last_rv, int(rv))
            except ValueError:
                pass
        self.watch.send(event)

    def _pump(self) -> None:
        """Deliver initial events, then the backlog, while the consumer accepts them."""
        if not self._started:
            return
        while self.watch.accepting and self._initial is not None:
            event = next(self._initial, None)
            if event is None:
                self._initial = None
                break
            self._deliver(event)
        while self.watch.accepting and self._initial is None and self._backlog:
            self._deliver(self._backlog.popleft())

    # -- bookmarks ----------------------------------------------------------------------------
    def _schedule_bookmark(self) -> None:
        """Upstream C{nextBookmarkTime}: every interval, and 2 s before the deadline."""
        if not self.bookmarks or self.watch.ended:
            return
        now = self.clock.seconds()
        at = now + self.bookmark_interval
        if self.deadline is not None:
            pre_timeout = self.deadline - 2
            if pre_timeout > now:
                at = min(at, pre_timeout)
            elif at >= self.deadline:
                return
        self._timer = self.clock.callLater(at - now, self._bookmark)

    def _bookmark(self) -> None:
        self._timer = None
        if self.watch.ended:
            return
        if self._initial is None and not self._backlog and self.watch.accepting:
            current = self._progress() if self._progress is not None else 0
            self._deliver(WatchEvent("BOOKMARK", bookmark_object(max(current, self.last_rv))))
        self._schedule_bookmark()

    # -- ending ---------------------------------------------------------------------------------
    def close(self) -> None:
        """End the watch from the server side (the client sees its stream end)."""
        self.watch.close()
        if not self.watch.ended:
            # not subscribed yet: the close is buffered; release our side now
            self._stopped()

    def error(self, status: dict) -> None:
        """Send one ERROR event (a C{Status}) and close."""
        self._initial = None
        self._backlog.clear()
        self.watch.send(WatchEvent("ERROR", status))
        self.close()

    def _stopped(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None and timer.active():
            timer.cancel()
        self._initial = None
        self._backlog.clear()
        on_stop, self._on_stop = self._on_stop, None
        if on_stop is not None:
            on_stop(self)
