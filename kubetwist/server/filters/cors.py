# -*- test-case-name: tests.server.test_filters -*-
"""
CORS: upstream C{server/filters/cors.go WithCORS} for C{--cors-allowed-origins} (regular
expressions matched against the C{Origin} header), with kube-apiserver's methods, headers and
C{Access-Control-Allow-Credentials: true}.  A preflight C{OPTIONS} is answered 204 here; a
request from an origin that does not match gets no CORS headers and is served as usual (the
browser refuses it).  Without allowed origins the filter is not installed.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from kubetwist.server.filters.base import Handler

ALLOWED_METHODS = "POST, GET, OPTIONS, PUT, DELETE, PATCH"
ALLOWED_HEADERS = ("Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, "
                   "X-Requested-With, If-Modified-Since")
EXPOSED_HEADERS = "Date"


def with_cors(handler: Handler, allowed_origins: Sequence[str],
              allow_credentials: str = "true") -> Handler:
    """
    Answer CORS for origins matching one of C{allowed_origins} (Go regular expressions; the
    subset Python's C{re} shares).

    @raise re.error: a pattern does not compile.
    """
    patterns = [re.compile(p) for p in allowed_origins]

    def handle(request: Any) -> Any:
        origin = request.getHeader(b"origin")
        if origin:
            text = origin.decode("latin-1")
            if any(p.search(text) for p in patterns):
                request.setHeader(b"Access-Control-Allow-Origin", origin)
                request.setHeader(b"Access-Control-Allow-Methods", ALLOWED_METHODS.encode())
                request.setHeader(b"Access-Control-Allow-Headers", ALLOWED_HEADERS.encode())
                request.setHeader(b"Access-Control-Expose-Headers", EXPOSED_HEADERS.encode())
                request.setHeader(b"Access-Control-Allow-Credentials",
                                  allow_credentials.encode())
                if request.method == b"OPTIONS":
                    request.setResponseCode(204)
                    request.finish()
                    return None
        return handler(request)

    return handle
