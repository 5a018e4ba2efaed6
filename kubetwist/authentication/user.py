# -*- test-case-name: tests.authentication.test_user -*-
"""
The authenticated identity: upstream C{k8s.io/apiserver/pkg/authentication/user}.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: The user name of unauthenticated requests (C{user.Anonymous}).
ANONYMOUS = "system:anonymous"
#: The group every unauthenticated request is in (C{user.AllUnauthenticated}).
ALL_UNAUTHENTICATED = "system:unauthenticated"
#: The group every authenticated request is in (C{user.AllAuthenticated}).
ALL_AUTHENTICATED = "system:authenticated"
#: The superuser group (C{user.SystemPrivilegedGroup}).
SYSTEM_PRIVILEGED_GROUP = "system:masters"
#: The loopback client's user name (C{user.APIServerUser}).
APISERVER_USER = "system:apiserver"
#: The C{extra} key naming the credential that authenticated a user (C{user.CredentialIDKey}).
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"


@dataclass
class UserInfo:
    """
    An authenticated user (upstream C{user.DefaultInfo}).

    @ivar name: the user name, e.g. C{kubernetes-admin}, C{system:serviceaccount:ns:sa}.
    @ivar uid: a unique, stable identifier, or C{""}.
    @ivar groups: group names in the order the authenticator gave them.
    @ivar extra: additional attributes, C{{key: [values]}} (authorizers and webhooks see them).
    """

    name: str
    uid: str = ""
    groups: list[str] = field(default_factory=list)
    extra: dict[str, list[str]] = field(default_factory=dict)

    def to_user_info(self) -> dict:
        """
        The C{authentication.k8s.io/v1} C{UserInfo} wire form (SelfSubjectReview,
        TokenReview, SubjectAccessReview, audit), omitting empty fields as upstream does:
        C{{"username": str, "uid": str, "groups": [str], "extra": {str: [str]}}}.
        """
        out: dict = {}
        if self.name:
            out["username"] = self.name
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out
