# -*- test-case-name: tests.server.test_filters -*-
"""
The in-flight limit: upstream C{server/filters/maxinflight.go WithMaxInFlightLimit}, the
fallback of C{--enable-priority-and-fairness=false} (API Priority and Fairness itself is not
built yet; this filter holds its place in the chain).

Two pools: mutating requests (C{create update patch delete deletecollection}) limited by
C{--max-mutating-requests-inflight}, the others by C{--max-requests-inflight} (C{0}: no
limit); long-running requests are not counted.  Past the limit: 429 C{TooManyRequests}
C{Too many requests, please try again later.} with C{Retry-After: 1}.
"""

from __future__ import annotations

from typing import Any

from kubetwist.runtime import errors
from kubetwist.server.filters.base import Handler
from kubetwist.server.filters.context import context_of

MUTATING_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})


class MaxInFlight:
    """
    @ivar max_readonly: the non-mutating limit (C{0}: none).
    @ivar max_mutating: the mutating limit (C{0}: none).
    @ivar inflight_readonly: non-mutating requests being served.
    @ivar inflight_mutating: mutating requests being served.
    """

    def __init__(self, max_requests_inflight: int = 400,
                 max_mutating_requests_inflight: int = 200) -> None:
        self.max_readonly = max_requests_inflight
        self.max_mutating = max_mutating_requests_inflight
        self.inflight_readonly = 0
        self.inflight_mutating = 0

    def wrap(self, handler: Handler) -> Handler:
        """Count the request in its pool until its response finishes, or refuse it (429)."""

        def handle(request: Any) -> Any:
            ctx = context_of(request)
            if ctx.long_running:
                return handler(request)
            mutating = ctx.request_info.verb in MUTATING_VERBS
            if mutating:
                if self.max_mutating and self.inflight_mutating >= self.max_mutating:
                    raise too_many_requests()
                self.inflight_mutating += 1
            else:
                if self.max_readonly and self.inflight_readonly >= self.max_readonly:
                    raise too_many_requests()
                self.inflight_readonly += 1

            def release(_: Any) -> None:
                if mutating:
                    self.inflight_mutating = max(0, self.inflight_mutating - 1)
                else:
                    self.inflight_readonly = max(0, self.inflight_readonly - 1)

            request.notifyFinish().addBoth(release)
            return handler(request)

        return handle


def too_many_requests() -> errors.StatusError:
    """Upstream C{tooManyRequests}: 429 with C{retryAfterSeconds} 1."""
    return errors.new_too_many_requests("Too many requests, please try again later.", 1)
