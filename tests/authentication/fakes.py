"""A minimal stand-in for an IRequest: headers and path, no transport."""

from __future__ import annotations

from typing import Any

from twisted.python.failure import Failure
from twisted.web.http_headers import Headers


class FakeRequest:
    """The request attributes authenticators read."""

    def __init__(self, path: bytes = b"/api/v1/pods", headers: dict | None = None) -> None:
        self.path = path
        self.requestHeaders = Headers()
        for name, values in (headers or {}).items():
            for value in values if isinstance(values, list) else [values]:
                self.requestHeaders.addRawHeader(name, value)
        self.transport = None
        self.channel = None


def resolved(d: Any) -> Any:
    """
    The result of an already-fired Deferred (the authenticators answer at once); its failure is
    raised, so C{assertRaises} works on it.

    @raise AssertionError: the Deferred has not fired.
    """
    results: list = []
    d.addBoth(results.append)
    if not results:
        raise AssertionError(f"{d!r} has not fired")
    if isinstance(results[0], Failure):
        results[0].raiseException()
    return results[0]
