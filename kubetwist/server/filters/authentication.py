# -*- test-case-name: tests.server.test_filters -*-
"""
Authentication: upstream C{endpoints/filters/authentication.go WithAuthentication}.

The authenticator (an L{IAuthenticator <kubetwist.authentication.authenticator.IAuthenticator>},
asynchronous) names the user, stored as C{context.user}; no user, or an error, is 401
C{Unauthorized} (the reason is logged only).  Without an authenticator every request is 401.
"""

from __future__ import annotations

from typing import Any, Optional

from kubetwist.authentication.authenticator import IAuthenticator
from kubetwist.authentication.config import authenticate_request
from kubetwist.runtime import errors
from kubetwist.server.filters.base import Handler
from kubetwist.server.filters.context import context_of


def with_authentication(handler: Handler, authenticator: Optional[IAuthenticator]) -> Handler:
    """Authenticate, then hand on; see the module docstring."""

    def authenticated(user: Any, request: Any) -> Any:
        context_of(request).user = user
        return handler(request)

    def handle(request: Any) -> Any:
        if authenticator is None:
            raise errors.new_unauthorized()
        # a fired Deferred (tokens, certificates) runs the rest of the chain at once
        return authenticate_request(authenticator, request).addCallback(authenticated, request)

    return handle
