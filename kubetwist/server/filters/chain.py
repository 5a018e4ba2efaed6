# -*- test-case-name: tests.server.test_filters -*-
"""
The handler chain, run once in front of the aggregator: upstream
C{k8s.io/apiserver/pkg/server/config.go DefaultBuildHandlerChain} and C{server/filters},
C{endpoints/filters}.

Order (outermost first): panic recovery -> request info -> in-flight limit -> authentication
-> authorization -> timeout -> the aggregator's director.  Long-running requests (watches,
and the proxy/log/exec/attach/portforward subresources) are exempt from the in-flight limit
and the timeout, as upstream.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from twisted.logger import Logger
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET

from kubetwist import authorization
from kubetwist.endpoints.requestinfo import parse_request_info
from kubetwist.endpoints.responses import write_status_error
from kubetwist.runtime import errors

log = Logger()

LONG_RUNNING_SUBRESOURCES = {"proxy", "log", "exec", "attach", "portforward"}
ANONYMOUS_PATHS = ("/healthz", "/livez", "/readyz", "/version")


def is_long_running(info: Any) -> bool:
    """Upstream C{BasicLongRunningRequestCheck} for kube-apiserver's verbs and subresources."""
    return info.verb == "watch" or info.subresource in LONG_RUNNING_SUBRESOURCES


class HandlerChain(Resource):
    """
    The filters as one front resource.

    @param handler: the resource to protect (the aggregator's director).
    @param authenticator: C{authenticate(request) -> UserInfo | None}, may raise.
    @param authorizer: C{authorize(user, info) -> (decision, reason)}.
    @param max_requests_inflight: non-mutating limit (C{0}: none).
    @param max_mutating_requests_inflight: mutating limit (C{0}: none).
    @param request_timeout: seconds before a non-long-running request answers 504.
    """

    isLeaf = True

    def __init__(
        self,
        handler: Resource,
        clock: Any,
        authenticator: Any,
        authorizer: Any,
        max_requests_inflight: int = 400,
        max_mutating_requests_inflight: int = 200,
        request_timeout: float = 60.0,
        anonymous_user: Optional[Callable[[], Any]] = None,
    ) -> None:
        super().__init__()
        self.handler = handler
        self.clock = clock
        self.authenticator = authenticator
        self.authorizer = authorizer
        self.max_readonly = max_requests_inflight
        self.max_mutating = max_mutating_requests_inflight
        self.request_timeout = request_timeout
        self.anonymous_user = anonymous_user
        self.inflight_readonly = 0
        self.inflight_mutating = 0
        #: requests in flight (for draining at shutdown)
        self.active: set[Any] = set()
        #: long-running requests (watches), ended at shutdown
        self.long_running: set[Any] = set()

    def render(self, request: Any) -> Any:
        try:
            return self._render(request)
        except Exception:
            log.failure("panic in handler chain")
            write_status_error(request, errors.new_internal_error("an unexpected error occurred"))
            return NOT_DONE_YET

    def _render(self, request: Any) -> Any:
        path = request.path.decode("utf-8", "replace")
        query = request.uri.decode("latin-1").partition("?")[2]
        info = parse_request_info(request.method.decode("latin-1"), path, query)
        request.kube_info = info
        request.kube_warnings = []
        long_running = is_long_running(info)

        # authentication
        try:
            user = self.authenticator.authenticate(request) if self.authenticator else None
        except Exception as e:
            log.info("authentication failed: {err}", err=e)
            user = None
            write_status_error(request, errors.new_unauthorized())
            return NOT_DONE_YET
        if user is None:
            if self.anonymous_user is not None and (
                path in ANONYMOUS_PATHS or any(path.startswith(p + "/") for p in ANONYMOUS_PATHS[:3])
            ):
                user = self.anonymous_user()
            else:
                write_status_error(request, errors.new_unauthorized())
                return NOT_DONE_YET
        request.kube_user = user

        # in-flight limit (after authentication, as upstream's priority-and-fairness-less path)
        mutating = info.verb in ("create", "update", "patch", "delete", "deletecollection")
        if not long_running:
            if mutating:
                if self.max_mutating and self.inflight_mutating >= self.max_mutating:
                    return self._too_many(request)
                self.inflight_mutating += 1
            else:
                if self.max_readonly and self.inflight_readonly >= self.max_readonly:
                    return self._too_many(request)
                self.inflight_readonly += 1

        # authorization
        decision, reason = self.authorizer.authorize(user, info)
        if decision != authorization.ALLOW:
            self._release(mutating, long_running)
            msg = authorization.forbidden_message(user, info, reason)
            if info.is_resource_request:
                err = errors.new_forbidden(info.api_group, info.resource, info.name, msg)
            else:
                err = errors.new_forbidden("", "", "", msg)
            write_status_error(request, err)
            return NOT_DONE_YET

        self.active.add(request)
        if long_running:
            self.long_running.add(request)
        timer = None
        if not long_running and self.request_timeout > 0:
            timer = self.clock.callLater(self.request_timeout, self._timeout, request)

        def done(_: Any) -> None:
            self.active.discard(request)
            self.long_running.discard(request)
            if timer is not None and timer.active():
                timer.cancel()
            self._release(mutating, long_running)

        request.notifyFinish().addBoth(done)
        return self.handler.render(request)

    def _release(self, mutating: bool, long_running: bool) -> None:
        if long_running:
            return
        if mutating:
            self.inflight_mutating = max(0, self.inflight_mutating - 1)
        else:
            self.inflight_readonly = max(0, self.inflight_readonly - 1)

    def _too_many(self, request: Any) -> Any:
        write_status_error(request, errors.new_too_many_requests(
            "Too many requests, please try again later.", 1))
        return NOT_DONE_YET

    def _timeout(self, request: Any) -> None:
        if request.finished or getattr(request, "startedWriting", False):
            return
        write_status_error(request, errors.make_status(
            504, "Timeout",
            "Timeout: request did not complete within requested timeout - context deadline "
            "exceeded",
            {},
        ))
