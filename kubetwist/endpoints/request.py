# -*- test-case-name: tests.server.test_filters -*-
"""
The request context (upstream C{k8s.io/apiserver/pkg/endpoints/request}): the
C{context.Context} values that the filters set
(C{request.WithRequestInfo}, C{WithUser}, C{WithAuditEvent}, C{warning.WithWarningRecorder},
C{WithReceivedTimestamp}), as ONE typed object on the request: C{request.kube_context}, a
L{RequestContext}.

Handlers, REST objects and filters read it with L{context_of}.  The names older code reads
and writes on the request (C{request.kube_info},
C{request.kube_user}, C{request.kube_warnings}) stay working: they are properties over the
context (L{attach} gives the request's class a subclass with those properties), so a write
through either name is seen through the other.
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
        L{UserInfo <kubetwist.authentication.user.UserInfo>}, or L{None} before
        authentication.
    @ivar authenticated_user: the user the credentials named, when impersonation replaced
        C{user}; else L{None}.
    @ivar audit_id: the request's audit ID (the C{Audit-ID} request header, or a new UUID);
        sent back as the C{Audit-Id} response header.
    @ivar warnings: the texts of the C{Warning: 299 - "..."} response headers, in order.
    @ivar long_running: a watch or a proxy/log/exec/attach/portforward subresource (exempt
        from the in-flight limit and the timeout).
    @ivar received_at: seconds since the epoch when the chain first saw the request.
    @ivar audit: the request's L{AuditContext <kubetwist.audit.event.AuditContext>} when its
        audit level is above C{None}, else L{None}.
    """

    request_info: Any = None
    user: Any = None
    authenticated_user: Any = None
    audit_id: str = ""
    warnings: list[str] = field(default_factory=list)
    long_running: bool = False
    received_at: float = 0.0
    audit: Any = None


class _ContextAliases:
    """The old loose request attributes, as properties over L{RequestContext}."""

    @property
    def kube_info(self) -> Any:
        return context_of(self).request_info

    @kube_info.setter
    def kube_info(self, value: Any) -> None:
        context_of(self).request_info = value

    @property
    def kube_user(self) -> Any:
        return context_of(self).user

    @kube_user.setter
    def kube_user(self, value: Any) -> None:
        context_of(self).user = value

    @property
    def kube_warnings(self) -> list[str]:
        return context_of(self).warnings

    @kube_warnings.setter
    def kube_warnings(self, value: list[str]) -> None:
        context_of(self).warnings = value


_ALIASED: dict[type, type] = {}


def _aliased_class(cls: type) -> type:
    sub = _ALIASED.get(cls)
    if sub is None:
        sub = _ALIASED[cls] = type(cls.__name__, (_ContextAliases, cls), {
            "__module__": cls.__module__, "__qualname__": cls.__qualname__})
    return sub


def attach(request: Any, context: Optional[RequestContext] = None) -> RequestContext:
    """
    Give C{request} a context (a new one unless C{context} is given) and the alias
    properties; values already set through the old names are kept.

    @return: the request's context.
    """
    cls = type(request)
    previous = {}
    if not issubclass(cls, _ContextAliases):
        previous = {k: request.__dict__.pop(k) for k in ("kube_info", "kube_user",
                                                         "kube_warnings")
                    if k in request.__dict__}
        request.__class__ = _aliased_class(cls)
    ctx = context or request.__dict__.get(CONTEXT_ATTR) or RequestContext()
    request.__dict__[CONTEXT_ATTR] = ctx
    if "kube_info" in previous:
        ctx.request_info = previous["kube_info"]
    if "kube_user" in previous:
        ctx.user = previous["kube_user"]
    if "kube_warnings" in previous:
        ctx.warnings = previous["kube_warnings"]
    return ctx


def context_of(request: Any) -> RequestContext:
    """The request's L{RequestContext}, attached on first use."""
    ctx = request.__dict__.get(CONTEXT_ATTR)
    if ctx is None:
        ctx = attach(request)
    return ctx
