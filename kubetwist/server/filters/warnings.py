# -*- test-case-name: tests.server.test_filters -*-
"""
The warning recorder: upstream C{endpoints/filters/warning.go WithWarningRecorder}.  Handlers
append texts to C{context.warnings}; the response writers send each as a
C{Warning: 299 - "<text>"} header (L{kubetwist.endpoints.responses.write_body}).
"""

from __future__ import annotations

from typing import Any

from kubetwist.server.filters.base import Handler
from kubetwist.server.filters.context import context_of


def with_warning_recorder(handler: Handler) -> Handler:
    """Start the request with an empty list of warnings."""

    def handle(request: Any) -> Any:
        context_of(request).warnings = []
        return handler(request)

    return handle


def add_warning(request: Any, text: str) -> None:
    """Record one warning (upstream C{warning.AddWarning}); repeated texts are sent once."""
    warnings = context_of(request).warnings
    if text not in warnings:
        warnings.append(text)
