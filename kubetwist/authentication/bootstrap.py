# -*- test-case-name: tests.authentication.test_bootstrap -*-
"""
Bootstrap tokens (C{--enable-bootstrap-token-auth}): upstream
C{plugin/pkg/auth/authenticator/token/bootstrap} with C{k8s.io/cluster-bootstrap}.

A token C{<id>.<secret>} (C{[a-z0-9]{6}.[a-z0-9]{16}}) names the Secret
C{kube-system/bootstrap-token-<id>} of type C{bootstrap.kubernetes.io/token}; it
authenticates as C{system:bootstrap:<id>} in C{system:bootstrappers} and the groups of
C{auth-extra-groups} (sorted) when the Secret's C{token-id} and C{token-secret} match, it is
not deleting, its C{expiration} (RFC 3339) has not passed and C{usage-bootstrap-authentication}
is C{true}.  Anything else is no opinion (upstream only logs why), so the request ends as
401 like any unknown token.
"""

from __future__ import annotations

import base64
import hmac
import re
from datetime import datetime
from typing import Any, Optional

from twisted.internet import defer
from twisted.logger import Logger
from zope.interface import implementer

from kubetwist.authentication.authenticator import ITokenAuthenticator
from kubetwist.authentication.serviceaccount_lookup import NotFound
from kubetwist.authentication.user import UserInfo

log = Logger()

TOKEN_RE = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
SECRET_TYPE = "bootstrap.kubernetes.io/token"
SECRET_PREFIX = "bootstrap-token-"
USER_PREFIX = "system:bootstrap:"
DEFAULT_GROUP = "system:bootstrappers"
GROUP_RE = re.compile(r"^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$")


def _data(secret: dict, key: str) -> str:
    raw = (secret.get("data") or {}).get(key)
    if raw is None:
        return ""
    try:
        return base64.b64decode(raw).decode("utf-8", "replace")
    except (ValueError, TypeError):
        return ""


def _parse_rfc3339(text: str) -> Optional[float]:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def groups_of(secret: dict) -> list[str]:
    """
    Upstream C{GetGroups}: C{system:bootstrappers} and the comma-separated
    C{auth-extra-groups}, sorted and without duplicates.

    @raise ValueError: an extra group not matching C{system:bootstrappers:...}.
    """
    groups = {DEFAULT_GROUP}
    extra = _data(secret, "auth-extra-groups")
    if extra:
        for g in extra.split(","):
            if not GROUP_RE.match(g):
                raise ValueError(f'bootstrap group "{g}" is invalid (must match '
                                 f'{GROUP_RE.pattern})')
            groups.add(g)
    return sorted(groups)


@implementer(ITokenAuthenticator)
class BootstrapTokenAuthenticator:
    """See the module docstring."""

    def __init__(self, getter: Any, clock: Any) -> None:
        """
        @param getter: a C{StorageObjectGetter} (C{get("secrets", ns, name)}).
        @param clock: C{IReactorTime}.
        """
        self.getter = getter
        self.clock = clock

    def authenticate_token(self, token: str) -> "defer.Deferred[UserInfo | None]":
        """@return: a Deferred of the bootstrap user, or of C{None} (see the module
        docstring); it fails only when the storage does."""
        m = TOKEN_RE.match(token)
        if m is None:
            return defer.succeed(None)
        return defer.ensureDeferred(self._authenticate(m.group(1), m.group(2)))

    async def _authenticate(self, token_id: str, token_secret: str) -> Optional[UserInfo]:
        name = SECRET_PREFIX + token_id
        try:
            secret = await self.getter.get("secrets", "kube-system", name)
        except NotFound:
            log.debug("No secret of name {name} to match bootstrap bearer token", name=name)
            return None

        def bad(why: str) -> None:
            log.debug("Bootstrap secret kube-system/{name} {why}", name=name, why=why)

        if (secret.get("metadata") or {}).get("deletionTimestamp"):
            return bad("is deleted and awaiting removal")
        if secret.get("type") != SECRET_TYPE or not secret.get("data"):
            return bad(f"has invalid type, expected {SECRET_TYPE}.")
        if not hmac.compare_digest(_data(secret, "token-secret").encode(),
                                   token_secret.encode()):
            return bad("has invalid value for key token-secret.")
        if _data(secret, "token-id") != token_id:
            return bad("has invalid value for key token-id.")
        expiration = _data(secret, "expiration")
        if expiration:
            when = _parse_rfc3339(expiration)
            if when is None or self.clock.seconds() > when:
                return bad("has expired.")
        if _data(secret, "usage-bootstrap-authentication") != "true":
            return bad("not marked usage-bootstrap-authentication=true.")
        try:
            groups = groups_of(secret)
        except ValueError as e:
            return bad(f"has invalid value for key auth-extra-groups: {e}.")
        return UserInfo(USER_PREFIX + token_id, "", groups)


__all__ = ["BootstrapTokenAuthenticator", "groups_of"]
