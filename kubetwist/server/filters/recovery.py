# -*- test-case-name: tests.server.test_filters -*-
"""
Panic recovery: upstream C{server/filters/wrap.go WithPanicRecovery}, and the one place a
filter's refusal is written.

A L{StatusError <kubetwist.runtime.errors.StatusError>} raised by an inner filter is written
as its C{Status} (401, 403, 429, 504 ...); any other exception is logged and answered 500
C{InternalError} C{Internal error occurred: an unexpected error occurred}; when the response
had started already, the connection is dropped.
"""

from __future__ import annotations

from typing import Any

from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure

from kubetwist.endpoints.responses import write_status_error
from kubetwist.runtime import errors
from kubetwist.server.filters.base import Handler

log = Logger()


def with_panic_recovery(handler: Handler) -> Handler:
    """Wrap C{handler}: every failure ends as a response (see the module docstring)."""

    def recover(failure: Failure, request: Any) -> None:
        if request.finished or getattr(request, "_disconnected", False):
            return
        if failure.check(errors.StatusError):
            err = failure.value
        elif failure.check(defer.CancelledError):
            return
        else:
            from kubetwist.server.filters.httplog import ERROR_LOGGED, request_identity

            log.failure("panic in handler chain", failure, klog_structured=True,
                        **request_identity(request))
            request.__dict__[ERROR_LOGGED] = True
            err = errors.new_internal_error("an unexpected error occurred")
        if getattr(request, "startedWriting", False):
            if request.channel is not None:
                request.channel.loseConnection()
            return
        write_status_error(request, err)

    def handle(request: Any) -> defer.Deferred:
        return defer.maybeDeferred(handler, request).addErrback(recover, request)

    return handle
