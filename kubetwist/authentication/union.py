# -*- test-case-name: tests.authentication.test_union -*-
"""
Trying several authenticators in turn: upstream
C{k8s.io/apiserver/pkg/authentication/request/union}.
"""

from __future__ import annotations

from typing import Sequence

from twisted.internet import defer
from twisted.web.iweb import IRequest
from zope.interface import implementer

from kubetwist.authentication.authenticator import (
    AuthenticationError,
    IAuthenticator,
    ITokenAuthenticator,
)
from kubetwist.authentication.user import UserInfo


@implementer(IAuthenticator)
class UnionAuthenticator:
    """
    The first authenticator that authenticates the request wins.

    With C{fail_on_error=False} (upstream C{union.New}) errors are collected and the next
    authenticator is tried; when none succeeds the aggregate of the errors is raised, or
    C{None} returned when there were none.  With C{fail_on_error=True} (upstream
    C{union.NewFailOnError}) the first error is raised at once.
    """

    def __init__(
        self, authenticators: Sequence[IAuthenticator], fail_on_error: bool = False
    ) -> None:
        self.authenticators = list(authenticators)
        self.fail_on_error = fail_on_error

    def authenticate(self, request: IRequest) -> "defer.Deferred[UserInfo | None]":
        """
        @return: a Deferred of the first user; it fails with L{AuthenticationError} (see the
            class docstring).
        """
        return defer.ensureDeferred(self._authenticate(request))

    async def _authenticate(self, request: IRequest) -> UserInfo | None:
        errors: list[AuthenticationError] = []
        for auth in self.authenticators:
            try:
                user = await auth.authenticate(request)
            except AuthenticationError as e:
                if self.fail_on_error:
                    raise
                errors.append(e)
                continue
            if user is not None:
                return user
        err = AuthenticationError.aggregate(errors)
        if err is not None:
            raise err
        return None


@implementer(ITokenAuthenticator)
class UnionTokenAuthenticator:
    """
    Several token authenticators as one (upstream C{token/union}): the first that knows the
    token wins; errors are aggregated as in L{UnionAuthenticator}.
    """

    def __init__(
        self, authenticators: Sequence[ITokenAuthenticator], fail_on_error: bool = False
    ) -> None:
        self.authenticators = list(authenticators)
        self.fail_on_error = fail_on_error

    def authenticate_token(self, token: str) -> "defer.Deferred[UserInfo | None]":
        """
        @return: a Deferred of the first user; it fails with L{AuthenticationError} (see
            L{UnionAuthenticator}).
        """
        return defer.ensureDeferred(self._authenticate_token(token))

    async def _authenticate_token(self, token: str) -> UserInfo | None:
        errors: list[AuthenticationError] = []
        for auth in self.authenticators:
            try:
                user = await auth.authenticate_token(token)
            except AuthenticationError as e:
                if self.fail_on_error:
                    raise
                errors.append(e)
                continue
            if user is not None:
                return user
        err = AuthenticationError.aggregate(errors)
        if err is not None:
            raise err
        return None
