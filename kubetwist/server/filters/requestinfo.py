# -*- test-case-name: tests.server.test_filters -*-
"""
Request info: upstream C{endpoints/filters/requestinfo.go WithRequestInfo} and the
long-running check of C{server/filters/longrunning.go BasicLongRunningRequestCheck} with
kube-apiserver's verbs and subresources.
"""

from __future__ import annotations

from typing import Any

from kubetwist.endpoints.requestinfo import parse_request_info
from kubetwist.server.filters.base import Handler
from kubetwist.server.filters.context import context_of

#: kube-apiserver's long-running subresources (C{pkg/controlplane} C{LongRunningFunc}).
LONG_RUNNING_SUBRESOURCES = {"proxy", "log", "exec", "attach", "portforward"}


def is_long_running(info: Any) -> bool:
    """Upstream C{BasicLongRunningRequestCheck}: watches and the streaming subresources."""
    return info.verb == "watch" or info.subresource in LONG_RUNNING_SUBRESOURCES


def with_request_info(handler: Handler) -> Handler:
    """Parse the request's method, path and query into C{context.request_info}."""

    def handle(request: Any) -> Any:
        ctx = context_of(request)
        path = request.path.decode("utf-8", "replace")
        query = request.uri.decode("latin-1").partition("?")[2]
        ctx.request_info = parse_request_info(request.method.decode("latin-1"), path, query)
        ctx.long_running = is_long_running(ctx.request_info)
        return handler(request)

    return handle
