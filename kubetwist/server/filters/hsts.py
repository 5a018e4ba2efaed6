# -*- test-case-name: tests.server.test_filters -*-
"""
HSTS: upstream C{server/filters/hsts.go WithHSTS} for
C{--strict-transport-security-directives} (e.g. C{max-age=31536000,includeSubDomains,preload}):
every response carries C{Strict-Transport-Security: max-age=31536000; includeSubDomains;
preload}.  Without directives the filter is not installed.
"""

from __future__ import annotations

from typing import Any, Sequence

from kubetwist.server.filters.base import Handler


def with_hsts(handler: Handler, directives: Sequence[str]) -> Handler:
    """Add the C{Strict-Transport-Security} header built from C{directives}."""
    value = "; ".join(d.strip() for d in directives if d.strip()).encode()

    def handle(request: Any) -> Any:
        request.setHeader(b"Strict-Transport-Security", value)
        return handler(request)

    return handle
