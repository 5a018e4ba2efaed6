"""A minimal stand-in for an IRequest: headers and path, no transport."""

from __future__ import annotations

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
