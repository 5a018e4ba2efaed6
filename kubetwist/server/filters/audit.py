# -*- test-case-name: tests.server.test_filters -*-
"""
Audit: upstream C{endpoints/filters/audit_init.go WithAuditInit} and the place of
C{endpoints/filters/audit.go WithAudit}.

Every request gets an audit ID (the client's C{Audit-ID} header, else a new UUID) in
C{context.audit_id}, sent back as the C{Audit-Id} response header, as upstream does on every
response.  Audit events, policies and backends (C{--audit-policy-file}, ...) are not built
yet: L{with_audit} hands the request on unchanged (the seam issue 11 fills).
"""

from __future__ import annotations

import uuid
from typing import Any, Callable, Optional

from kubetwist.server.filters.base import Handler
from kubetwist.server.filters.context import context_of


def with_audit_init(handler: Handler, new_id: Callable[[], str] = lambda: str(uuid.uuid4())
                    ) -> Handler:
    """Give the request its audit ID and the C{Audit-Id} response header."""

    def handle(request: Any) -> Any:
        given = request.getHeader(b"audit-id")
        audit_id = given.decode("latin-1") if given else new_id()
        context_of(request).audit_id = audit_id
        request.setHeader(b"Audit-Id", audit_id.encode("latin-1"))
        return handler(request)

    return handle


def with_audit(handler: Handler, backend: Optional[Any] = None) -> Handler:
    """The audit filter: a pass-through until audit backends exist (see the module)."""
    return handler
