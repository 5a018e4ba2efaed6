# -*- test-case-name: tests.server.test_filters -*-
"""
Authorization: upstream C{endpoints/filters/authorization.go WithAuthorization}.

The request's L{Attributes <kubetwist.authorization.authorizer.Attributes>} (from
C{context.user} and C{context.request_info}) go to the authorizer (an L{IAuthorizer
<kubetwist.authorization.authorizer.IAuthorizer>}); anything but ALLOW is 403 C{Forbidden} with
upstream's message (C{pods is forbidden: User "jane" cannot list resource "pods" in API group
"" in the namespace "default": <reason>}).  The decision and reason are audit annotations
(C{authorization.k8s.io/decision}: C{allow} or C{forbid}, C{authorization.k8s.io/reason}).
"""

from __future__ import annotations

from typing import Any

from kubetwist import authorization
from kubetwist.audit import event as audit_event
from kubetwist.authorization.authorizer import ALLOW, Attributes, IAuthorizer
from kubetwist.runtime import errors
from kubetwist.server.filters.base import Handler
from kubetwist.server.filters.context import context_of

#: upstream C{decisionAnnotationKey} and C{reasonAnnotationKey}
DECISION_ANNOTATION = "authorization.k8s.io/decision"
REASON_ANNOTATION = "authorization.k8s.io/reason"


def forbidden(attributes: Attributes, reason: str) -> errors.StatusError:
    """Upstream C{responsewriters.Forbidden}: the 403 for C{attributes}."""
    msg = authorization.forbidden_message(attributes, reason)
    if attributes.resource_request:
        return errors.new_forbidden(attributes.api_group, attributes.resource, attributes.name,
                                    msg)
    return errors.new_forbidden("", "", "", msg)


def write_internal_error(request: Any, err: str) -> None:
    """
    Upstream C{responsewriters.InternalError}: 500, C{text/plain}, C{Internal Server Error:
    "<request URI>": <err>} with C{& < >} HTML-escaped.
    """
    from kubetwist.runtime.gofmt import quote

    uri = request.uri.decode("utf-8", "replace") if isinstance(request.uri, bytes) else \
        str(request.uri)
    text = f"Internal Server Error: {quote(uri)}: {err}"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    request.setResponseCode(500)
    request.setHeader(b"Content-Type", b"text/plain; charset=utf-8")
    request.setHeader(b"X-Content-Type-Options", b"nosniff")
    request.write((text + "\n").encode())
    request.finish()


def with_authorization(handler: Handler, authorizer: IAuthorizer) -> Handler:
    """Authorize, then hand on; see the module docstring."""

    def decided(result: tuple, request: Any, attributes: Attributes) -> Any:
        decision, reason = result[0], result[1]
        audit_event.add_annotation(request, DECISION_ANNOTATION,
                                   "allow" if decision == ALLOW else "forbid")
        audit_event.add_annotation(request, REASON_ANNOTATION, reason or "")
        if decision != ALLOW:
            if len(result) > 2 and result[2]:
                # an evaluation error without an allow (a failed webhook): upstream's
                # responsewriters.InternalError, plain text
                write_internal_error(request, str(result[2]))
                return None
            raise forbidden(attributes, reason)
        return handler(request)

    def authorizer_failed(failure: Any, request: Any) -> Any:
        # upstream reasonError: the decision is left out
        audit_event.add_annotation(request, REASON_ANNOTATION, "internal error")
        return failure

    def handle(request: Any) -> Any:
        ctx = context_of(request)
        attributes = Attributes.from_request_info(ctx.user, ctx.request_info)
        return authorizer.authorize(attributes).addCallbacks(
            decided, authorizer_failed, callbackArgs=(request, attributes),
            errbackArgs=(request,))

    return handle
