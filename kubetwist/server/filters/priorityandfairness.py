# -*- test-case-name: tests.server.test_priorityandfairness -*-
"""
API Priority and Fairness: upstream C{server/filters/priority-and-fairness.go
WithPriorityAndFairness}, in the place of the in-flight limit (C{--enable-priority-and-fairness},
on by default).

Each request (after authentication and impersonation) is classified by the
L{ConfigController <kubetwist.flowcontrol.controller.ConfigController>}: its FlowSchema and
priority level, whose UIDs every classified response carries in the headers
C{X-Kubernetes-PF-FlowSchema-UID} and C{X-Kubernetes-PF-PriorityLevel-UID} (the UIDs, not the
names, as upstream).  The request then takes one seat of its level: at once, after waiting in
a queue, or never: rejected requests, and those still waiting after the queue wait limit
(a quarter of C{--request-timeout}, at most one minute, as upstream's C{getRequestWaitContext}
for a request whose deadline is the request timeout), are answered as upstream's
C{tooManyRequests}: 429, C{text/plain; charset=utf-8}, C{X-Content-Type-Options: nosniff},
C{Retry-After} from the dropped-requests tracker (1 to 32 seconds), and the body
C{Too many requests, please try again later.}.

Long-running requests other than watches (exec, attach, log, proxy, portforward) are not
classified, as upstream.  A watch is classified and holds a seat while it starts: until its
response begins (the watch handler writes the headers once the storage watch is set up, where
upstream's storage sends the initialization signal) or ends.  A client that goes away while
its request waits leaves the queue.
"""

from __future__ import annotations

from typing import Any

from kubetwist.server.filters.base import Handler
from kubetwist.server.filters.context import context_of
from kubetwist.server.filters.maxinflight import MUTATING_VERBS, write_too_many_requests

__all__ = ["FLOW_SCHEMA_UID_HEADER", "PRIORITY_LEVEL_UID_HEADER", "PriorityAndFairness"]

#: Upstream C{flowcontrol.ResponseHeaderMatchedFlowSchemaUID}.
FLOW_SCHEMA_UID_HEADER = b"X-Kubernetes-PF-FlowSchema-UID"
#: Upstream C{flowcontrol.ResponseHeaderMatchedPriorityLevelConfigurationUID}.
PRIORITY_LEVEL_UID_HEADER = b"X-Kubernetes-PF-PriorityLevel-UID"

#: Upstream's hard limit on the queue wait, seconds.
MAX_QUEUE_WAIT = 60.0


class PriorityAndFairness:
    """
    @param controller: the L{ConfigController
        <kubetwist.flowcontrol.controller.ConfigController>}.
    @param clock: C{IReactorTime} (the queue wait limit).
    @param request_timeout: C{--request-timeout}, seconds (C{0}: the one-minute limit).
    @ivar controller: as given.
    """

    def __init__(self, controller: Any, clock: Any, request_timeout: float = 60.0) -> None:
        self.controller = controller
        self.clock = clock
        self.wait_limit = min(request_timeout / 4, MAX_QUEUE_WAIT) if request_timeout > 0 \
            else MAX_QUEUE_WAIT
        #: requests executing, by kind (upstream's atomicReadOnlyExecuting and
        #: atomicMutatingExecuting, reported as apiserver_current_inflight_requests)
        self.inflight_readonly = 0
        self.inflight_mutating = 0
        #: C{(flow schema, priority level) -> count}: requests dispatched (upstream
        #: C{apiserver_flowcontrol_dispatched_requests_total}), executing and waiting now
        self.dispatched: dict[tuple[str, str], int] = {}
        self.executing: dict[tuple[str, str], int] = {}
        self.inqueue: dict[tuple[str, str], int] = {}
        #: C{(flow schema, priority level, reason) -> count}: requests refused with 429
        #: (reasons C{queue-full}, C{time-out}, C{cancelled}, as upstream)
        self.rejected: dict[tuple[str, str, str], int] = {}

    def wrap(self, handler: Handler) -> Handler:
        """Classify, take a seat (perhaps after queuing) or answer 429, then hand on."""
        controller = self.controller

        def names(classification: Any) -> tuple[str, str]:
            return ((classification.flow_schema.get("metadata") or {}).get("name", ""),
                    classification.priority_level_name)

        def count(table: dict, key: tuple, n: int = 1) -> None:
            table[key] = table.get(key, 0) + n

        def reject(request: Any, classification: Any, reason: str = "queue-full") -> None:
            count(self.rejected, names(classification) + (reason,))
            retry_after = controller.dropped_request(classification)
            if request.finished or getattr(request, "_disconnected", False):
                return
            write_too_many_requests(request, retry_after)

        def execute(request: Any, req: Any, watch: bool, classification: Any) -> Any:
            if getattr(request, "_disconnected", False) or request.finished:
                req.finish()
                return None
            mutating = context_of(request).request_info.verb in MUTATING_VERBS
            if mutating:
                self.inflight_mutating += 1
            else:
                self.inflight_readonly += 1
            key = names(classification)
            count(self.dispatched, key)
            count(self.executing, key)

            def finished(_: Any) -> None:
                count(self.executing, key, -1)
                req.finish()
                if mutating:
                    self.inflight_mutating -= 1
                else:
                    self.inflight_readonly -= 1

            request.notifyFinish().addBoth(finished)
            if watch:
                # the watch is initialized when its handler first writes (the headers, once
                # the storage watch is set up): the seat is given back then
                outer_write = request.__dict__.get("write")  # an outer filter's (audit)

                def first_write(data: bytes) -> Any:
                    if outer_write is None:
                        request.__dict__.pop("write", None)
                    else:
                        request.write = outer_write
                    req.finish()
                    return request.write(data)

                request.write = first_write
            try:
                return handler(request)
            except BaseException:
                req.finish()
                raise

        def handle(request: Any) -> Any:
            ctx = context_of(request)
            info = ctx.request_info
            watch = info.verb == "watch"
            if ctx.long_running and not watch:
                return handler(request)
            classification = controller.classify(info, ctx.user)
            request.setHeader(PRIORITY_LEVEL_UID_HEADER,
                              classification.priority_level_uid.encode())
            request.setHeader(FLOW_SCHEMA_UID_HEADER, classification.flow_schema_uid.encode())
            req = controller.start_request(classification)
            if req is None:
                reject(request, classification)
                return None
            if req.executing:
                return execute(request, req, watch, classification)
            timer = self.clock.callLater(self.wait_limit, req.cancel)
            request.notifyFinish().addBoth(lambda _: req.cancel())
            key = names(classification)
            count(self.inqueue, key)

            def decided(dispatched: bool) -> Any:
                count(self.inqueue, key, -1)
                timed_out = not timer.active()
                if not timed_out:
                    timer.cancel()
                if not dispatched:
                    reject(request, classification, "time-out" if timed_out else "cancelled")
                    return None
                return execute(request, req, watch, classification)

            return req.wait().addCallback(decided)

        return handle
