# -*- test-case-name: tests.authentication.test_group -*-
"""
Group adders: upstream C{k8s.io/apiserver/pkg/authentication/group}.
"""

from __future__ import annotations

import dataclasses

from twisted.internet.defer import Deferred
from twisted.web.iweb import IRequest
from zope.interface import implementer

from kubetwist.authentication.authenticator import IAuthenticator
from kubetwist.authentication.user import (
    ALL_AUTHENTICATED,
    ALL_UNAUTHENTICATED,
    ANONYMOUS,
    UserInfo,
)


@implementer(IAuthenticator)
class AuthenticatedGroupAdder:
    """
    Appends C{system:authenticated} to the groups of an authenticated user (upstream
    C{AuthenticatedGroupAdder}), unless the user is C{system:anonymous} or already has
    C{system:authenticated} or C{system:unauthenticated}.
    """

    def __init__(self, authenticator: IAuthenticator) -> None:
        self.authenticator = authenticator

    def authenticate(self, request: IRequest) -> "Deferred[UserInfo | None]":
        """
        @return: a Deferred of a new L{UserInfo} with the group appended, of the delegate's user
            unchanged, or of C{None}; it fails with the delegate's L{AuthenticationError}.
        """
        return self.authenticator.authenticate(request).addCallback(self._add_group)

    @staticmethod
    def _add_group(user: UserInfo | None) -> UserInfo | None:
        if user is None or user.name == ANONYMOUS:
            return user
        if ALL_AUTHENTICATED in user.groups or ALL_UNAUTHENTICATED in user.groups:
            return user
        return dataclasses.replace(user, groups=[*user.groups, ALL_AUTHENTICATED])
