# -*- test-case-name: tests.server.test_filters -*-
"""
The in-flight limit: upstream C{server/filters/maxinflight.go WithMaxInFlightLimit}, the
fallback of C{--enable-priority-and-fairness=false} (API Priority and Fairness:
L{kubetwist.server.filters.priorityandfairness}).

Two pools: mutating requests (C{create update patch delete deletecollection}) limited by
C{--max-mutating-requests-inflight}, the others by C{--max-requests-inflight} (C{0}: no
limit); long-running requests are not counted.  Past the limit: upstream's
C{tooManyRequests} (L{write_too_many_requests}): 429 with C{Retry-After: 1} and the plain-text
body C{Too many requests, please try again later.} (not a C{Status}: upstream writes it with
C{http.Error}).
"""

from __future__ import annotations

from typing import Any

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
                    write_too_many_requests(request, 1)
                    return None
                self.inflight_mutating += 1
            else:
                if self.max_readonly and self.inflight_readonly >= self.max_readonly:
                    write_too_many_requests(request, 1)
                    return None
                self.inflight_readonly += 1

            def release(_: Any) -> None:
                if mutating:
                    self.inflight_mutating = max(0, self.inflight_mutating - 1)
                else:
                    self.inflight_readonly = max(0, self.inflight_readonly - 1)

            request.notifyFinish().addBoth(release)
            return handler(request)

        return handle


#: Upstream C{tooManyRequests}' text (C{http.Error} adds the newline).
TOO_MANY_REQUESTS_BODY = b"Too many requests, please try again later.\n"


def write_too_many_requests(request: Any, retry_after: int) -> None:
    """
    Upstream C{tooManyRequests} (C{server/filters/priority-and-fairness.go}, used by
    max-in-flight too): 429, C{Retry-After}, and C{http.Error}'s plain-text answer.

    @param retry_after: seconds.
    """
    request.setResponseCode(429)
    request.setHeader(b"retry-after", str(retry_after).encode())
    request.setHeader(b"content-type", b"text/plain; charset=utf-8")
    request.setHeader(b"x-content-type-options", b"nosniff")
    request.setHeader(b"content-length", b"%d" % len(TOO_MANY_REQUESTS_BODY))
    request.write(b"" if request.method == b"HEAD" else TOO_MANY_REQUESTS_BODY)
    request.finish()
