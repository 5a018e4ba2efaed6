# -*- test-case-name: tests.server.test_filters -*-
"""
The request context (upstream C{k8s.io/apiserver/pkg/endpoints/request}): the
C{context.Context} values that the filters set
(C{request.WithRequestInfo}, C{WithUser}, C{WithAuditEvent}, C{warning.WithWarningRecorder},
C{WithReceivedTimestamp}), as ONE typed object on the request: C{request.kube_context}, a
L{RequestContext}.

Handlers, REST objects and filters read and write it with L{context_of}; nothing else is kept
as loose attributes on the request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

CONTEXT_ATTR = "kube_context"


@dataclass
class RequestContext:
    """
    What the filters learn about one request.

    @ivar request_info: the L{RequestInfo <kubetwist.endpoints.requestinfo.RequestInfo>}
        (set by the request-info filter).
    @ivar user: the authenticated (after impersonation: the impersonated)
        L{UserInfo <kubetwist.authentication.user.UserInfo>}, or C{None} before
        authentication.
    @ivar authenticated_user: the user the credentials named, when impersonation replaced
        C{user}; else C{None}.
    @ivar audit_id: the request's audit ID (the C{Audit-ID} request header, or a new UUID);
        sent back as the C{Audit-Id} response header.
    @ivar warnings: the texts of the C{Warning: 299 - "..."} response headers, in order.
    @ivar long_running: a watch or a proxy/log/exec/attach/portforward subresource (exempt
        from the in-flight limit and the timeout).
    @ivar received_at: seconds since the epoch when the chain first saw the request.
    @ivar audit: the request's L{AuditContext <kubetwist.audit.event.AuditContext>} when its
        audit level is above C{None}, else C{None}.
    """

    request_info: Any = None
    user: Any = None
    authenticated_user: Any = None
    audit_id: str = ""
    warnings: list[str] = field(default_factory=list)
    long_running: bool = False
    received_at: float = 0.0
    audit: Any = None


def attach(request: Any, context: Optional[RequestContext] = None) -> RequestContext:
    """
    Give C{request} a context (a new one unless C{context} is given, or the one it has).

    @return: the request's context.
    """
    ctx = context or request.__dict__.get(CONTEXT_ATTR) or RequestContext()
    request.__dict__[CONTEXT_ATTR] = ctx
    return ctx


def context_of(request: Any) -> RequestContext:
    """The request's L{RequestContext}, attached on first use."""
    ctx = request.__dict__.get(CONTEXT_ATTR)
    if ctx is None:
        ctx = attach(request)
    return ctx
