# -*- test-case-name: tests.server.test_filters_audit -*-
"""
Audit: upstream C{endpoints/filters/audit_init.go WithAuditInit}, C{audit.go WithAudit} and
C{WithFailedAuthenticationAudit}.

Every request gets an audit ID (the client's C{Audit-ID} header, else a new UUID) in
C{context.audit_id}, sent back as the C{Audit-Id} response header, as upstream does on every
response.

With an L{AuditConfig <kubetwist.audit.AuditConfig>}, L{with_audit} asks the policy for the
request's level (by the authenticated user and the request info); above C{None} it puts an
L{AuditContext <kubetwist.audit.event.AuditContext>} in C{context.audit} (the handlers log
the request and response objects into it, authorization and admission their annotations) and
sends the events of the stages the policy does not omit: C{RequestReceived} before the
request goes on (when the backend cannot take it in C{blocking-strict} mode: 500
C{failed to store audit event}), C{ResponseStarted} for long-running requests when the
response starts, then C{ResponseComplete} (or C{Panic} for an unexpected error) when it ends.
L{with_failed_authentication_audit} sends the single C{ResponseStarted} event of a request
whose authentication failed (401).
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Callable, Optional

from twisted.internet import defer
from twisted.python.failure import Failure

from kubetwist.audit.backends import METRICS
from kubetwist.audit.event import AuditContext, new_context
from kubetwist.audit.policy import (
    NONE,
    PANIC,
    REQUEST_RECEIVED,
    RESPONSE_COMPLETE,
    RESPONSE_STARTED,
)
from kubetwist.runtime import errors
from kubetwist.server.filters.base import Handler
from kubetwist.server.filters.context import context_of


def with_audit_init(handler: Handler, new_id: Callable[[], str] = lambda: str(uuid.uuid4())
                    ) -> Handler:
    """Give the request its audit ID, the C{Audit-Id} response header and its received time
    (upstream C{WithRequestReceivedTimestamp})."""

    def handle(request: Any) -> Any:
        given = request.getHeader(b"audit-id")
        audit_id = given.decode("latin-1") if given else new_id()
        ctx = context_of(request)
        ctx.audit_id = audit_id
        if not ctx.received_at:
            ctx.received_at = time.time()
        request.setHeader(b"Audit-Id", audit_id.encode("latin-1"))
        return handler(request)

    return handle


def _process(audit: Any, ac: AuditContext, stage: str, now: Callable[[], float]) -> bool:
    """Upstream C{processAuditEvent}: send the stage's event unless the policy omits it."""
    if stage in ac.config.omit_stages:
        return True
    METRICS.event_total += 1
    return audit.backend.process_events([ac.stage_event(stage, now())])


def with_audit(handler: Handler, audit: Optional[Any] = None,
               now: Callable[[], float] = time.time) -> Handler:
    """
    The audit filter (see the module docstring); without C{audit} (an L{AuditConfig
    <kubetwist.audit.AuditConfig>}) the request goes on unchanged.

    @raise StatusError: 500 InternalError C{failed to store audit event} when the
        C{RequestReceived} event cannot be stored (C{blocking-strict} log mode).
    """
    if audit is None:
        return handler

    def handle(request: Any) -> Any:
        ctx = context_of(request)
        user = ctx.authenticated_user or ctx.user
        config = audit.policy.evaluate(user, ctx.request_info)
        if config.level == NONE:
            return handler(request)
        ac = new_context(config, request, ctx.audit_id, user, ctx.request_info,
                         ctx.received_at or now())
        ctx.audit = ac
        if not _process(audit, ac, REQUEST_RECEIVED, now):
            METRICS.requests_rejected_total += 1
            raise errors.new_internal_error("failed to store audit event")
        state = {"panic": None, "started": False}

        def impersonation() -> None:
            if ctx.authenticated_user is not None and ctx.user is not ctx.authenticated_user:
                ac.impersonated_user = ctx.user

        if ctx.long_running:
            original_write = request.write

            def write(data: bytes) -> None:
                if not state["started"]:
                    state["started"] = True
                    impersonation()
                    ac.set_response_code(request.code)
                    _process(audit, ac, RESPONSE_STARTED, now)
                original_write(data)

            request.write = write

        def failed(failure: Failure) -> Failure:
            if not failure.check(errors.StatusError, defer.CancelledError):
                state["panic"] = failure.value
            return failure

        def finished(result: Any) -> None:
            impersonation()
            if state["panic"] is not None:
                ac.response_status = {
                    "metadata": {}, "status": "Failure",
                    "message": f"APIServer panic'd: {state['panic']}",
                    "reason": "InternalError", "code": 500}
                _process(audit, ac, PANIC, now)
                return
            if request.finished or request.startedWriting:
                ac.set_response_code(request.code)
            if ac.response_status is None:
                ac.response_status = {"metadata": {}, "status": "Success",
                                      "message": "Connection closed early", "code": 200}
            if ctx.long_running and not state["started"]:
                state["started"] = True
                _process(audit, ac, RESPONSE_STARTED, now)
            _process(audit, ac, RESPONSE_COMPLETE, now)

        request.notifyFinish().addBoth(finished)
        return defer.maybeDeferred(handler, request).addErrback(failed)

    return handle


def with_failed_authentication_audit(handler: Handler, audit: Optional[Any] = None,
                                     now: Callable[[], float] = time.time) -> Handler:
    """
    Wrap the authentication filter: a 401 it raises is recorded, when the policy (with no
    user) says so, as one C{ResponseStarted} event with the C{Status} (upstream
    C{WithFailedAuthenticationAudit}).
    """
    if audit is None:
        return handler

    def failed(failure: Failure, request: Any) -> Failure:
        ctx = context_of(request)
        if (not failure.check(errors.StatusError) or failure.value.code != 401
                or ctx.audit is not None):
            return failure
        config = audit.policy.evaluate(None, ctx.request_info)
        if config.level != NONE:
            ac = new_context(config, request, ctx.audit_id, None, ctx.request_info,
                             ctx.received_at or now())
            ctx.audit = ac
            ac.log_response_object(failure.value.status)
            ac.set_response_code(401)
            _process(audit, ac, RESPONSE_STARTED, now)
        return failure

    def handle(request: Any) -> Any:
        return defer.maybeDeferred(handler, request).addErrback(failed, request)

    return handle
