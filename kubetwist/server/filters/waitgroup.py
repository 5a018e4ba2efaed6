# -*- test-case-name: tests.server.test_filters -*-
"""
Requests in flight, for graceful shutdown: upstream C{server/filters/waitgroup.go WithWaitGroup}
(non-long-running requests the shutdown drains) and C{WithWatchTerminationDuringShutdown}
(long-running requests the shutdown ends).
"""

from __future__ import annotations

from typing import Any

from kubetwist.server.filters.base import Handler
from kubetwist.server.filters.context import context_of


class WaitGroup:
    """
    @ivar active: every request in flight (drained at shutdown).
    @ivar long_running: the long-running ones among them (watches; ended at shutdown).
    """

    def __init__(self) -> None:
        self.active: set[Any] = set()
        self.long_running: set[Any] = set()

    def wrap(self, handler: Handler) -> Handler:
        """Track each request until its response finishes (or the client goes away)."""

        def handle(request: Any) -> Any:
            self.active.add(request)
            if context_of(request).long_running:
                self.long_running.add(request)

            def done(_: Any) -> None:
                self.active.discard(request)
                self.long_running.discard(request)

            request.notifyFinish().addBoth(done)
            return handler(request)

        return handle
