# -*- test-case-name: tests.server.test_filters -*-
"""
The request timeout: upstream C{server/filters/timeout.go WithTimeoutForNonLongRunningRequests}
(with C{--request-timeout}, default 1m): a non-long-running request still unanswered after the
timeout gets 504 C{Timeout} C{Timeout: request did not complete within requested timeout -
context deadline exceeded}.
"""

from __future__ import annotations

from typing import Any

from kubetwist.endpoints.responses import write_status_error
from kubetwist.runtime import errors
from kubetwist.server.filters.base import Handler
from kubetwist.server.filters.context import context_of


def timeout_error() -> errors.StatusError:
    """Upstream's 504 for a request past its deadline."""
    return errors.make_status(
        504, "Timeout",
        "Timeout: request did not complete within requested timeout - context deadline exceeded",
        {},
    )


def with_timeout(handler: Handler, clock: Any, timeout: float) -> Handler:
    """
    @param clock: C{IReactorTime}.
    @param timeout: seconds; C{0} or less: no timeout.
    """

    def expire(request: Any) -> None:
        if request.finished or getattr(request, "startedWriting", False):
            return
        write_status_error(request, timeout_error())

    def handle(request: Any) -> Any:
        if timeout > 0 and not context_of(request).long_running:
            timer = clock.callLater(timeout, expire, request)

            def done(_: Any) -> None:
                if timer.active():
                    timer.cancel()

            request.notifyFinish().addBoth(done)
        return handler(request)

    return handle
