# -*- test-case-name: tests.flowcontrol.test_controller -*-
"""
The C{Retry-After} of a rejected request: upstream
C{k8s.io/apiserver/pkg/util/flowcontrol/dropped_requests_tracker.go}.

Per priority level, the suggested wait starts at 1 second; when at least C{3 * retryAfter}
requests were dropped within the last C{retryAfter} seconds it doubles (at most 32), and when
fewer than C{retryAfter} were it goes down by one, as TCP's congestion window does.  The
decision is taken when a drop arrives in a new second.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DroppedRequestsTracker", "MAX_RETRY_AFTER"]

#: Upstream C{maxRetryAfter}.
MAX_RETRY_AFTER = 32


class _Stats:
    def __init__(self) -> None:
        self.history: list[tuple[int, int]] = []
        self.current_unix = 0
        self.current_count = 0
        self.retry_after = 1
        self.retry_after_update_unix = 0

    def record(self, unix: int) -> None:
        if self.current_unix == unix:
            self.current_count += 1
            return
        self._update_history(self.current_unix, self.current_count)
        self.current_unix = unix
        self.current_count = 1
        self._update_retry_after(unix)

    def _update_history(self, unix: int, count: int) -> None:
        self.history.append((unix, count))
        keep = min(2 * self.retry_after, MAX_RETRY_AFTER)
        self.history = [h for h in self.history if unix - h[0] <= keep]

    def _update_retry_after(self, unix: int) -> None:
        retry_after = self.retry_after
        dropped = 0
        for t, n in reversed(self.history):
            if unix - t > retry_after:
                break
            if t < unix:
                dropped += n
        if unix - self.retry_after_update_unix >= retry_after and dropped >= 3 * retry_after:
            self.retry_after = min(retry_after * 2, MAX_RETRY_AFTER)
            self.retry_after_update_unix = unix
            return
        if dropped < retry_after and retry_after > 1:
            self.retry_after = retry_after - 1


class DroppedRequestsTracker:
    """
    @param clock: C{IReactorTime} (whole seconds of C{clock.seconds()} are the buckets).
    """

    def __init__(self, clock: Any) -> None:
        self.clock = clock
        self._stats: dict[str, _Stats] = {}

    def record_dropped_request(self, priority_level: str) -> None:
        """Upstream C{RecordDroppedRequest}."""
        stats = self._stats.get(priority_level)
        if stats is None:
            stats = self._stats[priority_level] = _Stats()
        stats.record(int(self.clock.seconds()))

    def retry_after(self, priority_level: str) -> int:
        """Upstream C{GetRetryAfter}: seconds, 1 to L{MAX_RETRY_AFTER}."""
        stats = self._stats.get(priority_level)
        return stats.retry_after if stats is not None else 1
