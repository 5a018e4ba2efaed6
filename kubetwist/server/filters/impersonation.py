# -*- test-case-name: tests.server.test_filters -*-
"""
Impersonation: the place of upstream C{endpoints/filters/impersonation.go WithImpersonation}
(C{Impersonate-User}, C{-Group}, C{-Uid}, C{Impersonate-Extra-*}, authorized with the
C{impersonate} verb).  Not built yet: L{with_impersonation} hands the request on as the
authenticated user (the seam issue 11 fills; the result goes to C{context.user}, the original
user to C{context.authenticated_user}).
"""

from __future__ import annotations

from typing import Any

from kubetwist.server.filters.base import Handler


def with_impersonation(handler: Handler, authorizer: Any) -> Handler:
    """A pass-through until impersonation is built (see the module docstring)."""
    return handler
