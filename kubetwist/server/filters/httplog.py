# -*- test-case-name: tests.server.test_logs -*-
"""
Request logging: upstream C{k8s.io/apiserver/pkg/server/httplog} (C{WithLogging}).

At verbosity 3 and above (L{kubetwist.server.logs.VERBOSITY}, checked per request so
C{PUT /debug/flags/v} takes effect at once) every finished request is logged as upstream's
C{"HTTP"} line with the keys C{verb URI latency userAgent audit-ID srcIP resp}.  A response
of 500 or more (other than a failing health check) is logged at error level whatever the
verbosity, once, with the request's identity (C{verb}, C{resource}, C{user}, C{audit-ID});
the panic-recovery filter, which logs the failure behind an unexpected 500 itself, marks the
request so it is not logged twice.
"""

from __future__ import annotations

from typing import Any

from twisted.logger import Logger

from kubetwist.endpoints.request import context_of
from kubetwist.server.filters.base import Handler
from kubetwist.server.logs import VERBOSITY, Verbosity

log = Logger()

#: the verbosity of the request lines (upstream C{withLoggingLevel})
LOGGING_LEVEL = 3

#: set on a request whose failure was logged already (by the panic-recovery filter)
ERROR_LOGGED = "_kube_error_logged"


def _latency(seconds: float) -> str:
    """Go's C{time.Duration} text for a latency (C{1.703277ms}, C{2.5s}, C{850µs})."""
    if seconds >= 1:
        return f"{seconds:.9g}s"
    if seconds >= 0.001:
        return f"{seconds * 1000:.6g}ms"
    return f"{seconds * 1_000_000:.4g}µs"


_HEALTH_PATHS = (b"/healthz", b"/livez", b"/readyz")


def _health_check(request: Any) -> bool:
    """A health endpoint: its failures are the checks' own report (upstream logs them at
    verbosity 2, not as errors), e.g. C{/readyz} answering 500 until the server is ready."""
    path = request.uri.split(b"?", 1)[0] if isinstance(request.uri, bytes) else b""
    return path.rstrip(b"/").startswith(_HEALTH_PATHS)


def request_identity(request: Any) -> dict[str, str]:
    """C{verb}, C{resource} (C{group/resource/subresource} as the request names it),
    C{user} and C{audit-ID} of a request, for error lines."""
    from kubetwist.server.metrics import request_labels

    ctx = context_of(request)
    labels = request_labels(request)
    resource = "/".join(p for p in (labels["group"], labels["resource"],
                                    labels["subresource"] if labels["resource"] else "") if p)
    user = getattr(ctx.user, "name", "") if ctx.user is not None else ""
    return {"verb": labels["verb"], "resource": resource or labels["subresource"],
            "user": user, "audit-ID": ctx.audit_id}


def with_http_logging(handler: Handler, clock: Any, verbosity: Verbosity = VERBOSITY) -> Handler:
    """Wrap C{handler} with request logging (see the module docstring).

    @param clock: C{seconds()} (the reactor) for the latency."""

    def handle(request: Any) -> Any:
        start = clock.seconds()

        def done(_: Any) -> None:
            code = getattr(request, "code", 200) or 200
            failed = code >= 500 and not request.__dict__.get(ERROR_LOGGED) and \
                not _health_check(request)
            if not failed and not verbosity.enabled(LOGGING_LEVEL):
                return
            ctx = context_of(request)
            uri = request.uri.decode("latin-1", "replace") if isinstance(request.uri, bytes) \
                else str(request.uri)
            peer = request.getClientAddress()
            fields = {
                "URI": uri, "latency": _latency(max(0.0, clock.seconds() - start)),
                "userAgent": (request.getHeader(b"user-agent") or b"").decode("latin-1"),
                "srcIP": f"{getattr(peer, 'host', '')}:{getattr(peer, 'port', '')}",
                "resp": code,
            }
            if failed:
                log.error('"HTTP"', klog_structured=True,
                          **request_identity(request), **fields)
            else:
                from kubetwist.server.metrics import request_labels

                log.info('"HTTP"', klog_structured=True, klog_v=LOGGING_LEVEL,
                         verb=request_labels(request)["verb"], **{"audit-ID": ctx.audit_id},
                         **fields)

        request.notifyFinish().addBoth(done)
        return handler(request)

    return handle
