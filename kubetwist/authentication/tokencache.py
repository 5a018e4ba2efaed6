# -*- test-case-name: tests.authentication.test_tokencache -*-
"""
The cache in front of all token authenticators: upstream
C{k8s.io/apiserver/pkg/authentication/token/cache} as kube-apiserver configures it
(C{TokenSuccessCacheTTL} 10 s, C{TokenFailureCacheTTL} 0: only successes are remembered).

The key is the SHA-256 of the token and the requested audiences, so the token itself is
never kept; concurrent lookups of one token share one authentication.  A cached user is
handed out as a copy.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any, Optional

from twisted.internet import defer
from twisted.python.failure import Failure
from zope.interface import implementer

from kubetwist.authentication.authenticator import ITokenAuthenticator, audiences_from
from kubetwist.authentication.user import UserInfo

#: Upstream C{TokenSuccessCacheTTL} of kube-apiserver, seconds.
SUCCESS_TTL = 10.0
#: Entries kept at most (the oldest expired ones are dropped first).
MAX_ENTRIES = 32768


def _copy(user: Optional[UserInfo]) -> Optional[UserInfo]:
    if user is None:
        return None
    return dataclasses.replace(user, groups=list(user.groups),
                               extra={k: list(v) for k, v in user.extra.items()})


@implementer(ITokenAuthenticator)
class CachedTokenAuthenticator:
    """Remembers successful authentications for C{success_ttl} seconds."""

    def __init__(self, authenticator: Any, clock: Any, success_ttl: float = SUCCESS_TTL) -> None:
        """
        @param authenticator: the token authenticator (the union of all of them).
        @param clock: C{IReactorTime}.
        """
        self.authenticator = authenticator
        self.clock = clock
        self.success_ttl = success_ttl
        self._entries: dict[bytes, tuple[float, UserInfo]] = {}
        self._inflight: dict[bytes, list[defer.Deferred]] = {}

    def authenticate_token(self, token: str) -> "defer.Deferred[UserInfo | None]":
        """@return: a Deferred of the (cached or fresh) user; see the wrapped authenticator."""
        key = hashlib.sha256(json.dumps([token, audiences_from()]).encode()).digest()
        now = self.clock.seconds()
        hit = self._entries.get(key)
        if hit is not None:
            if hit[0] > now:
                return defer.succeed(_copy(hit[1]))
            del self._entries[key]
        waiters = self._inflight.get(key)
        d: defer.Deferred = defer.Deferred()
        if waiters is not None:
            waiters.append(d)
            return d
        self._inflight[key] = [d]
        defer.maybeDeferred(self.authenticator.authenticate_token, token).addBoth(
            self._done, key)
        return d

    def _done(self, result: Any, key: bytes) -> None:
        waiters = self._inflight.pop(key, [])
        if isinstance(result, UserInfo) and self.success_ttl > 0:
            now = self.clock.seconds()
            if len(self._entries) >= MAX_ENTRIES:
                self._entries = {k: v for k, v in self._entries.items() if v[0] > now}
                while len(self._entries) >= MAX_ENTRIES:
                    self._entries.pop(next(iter(self._entries)))
            self._entries[key] = (now + self.success_ttl, result)
        for w in waiters:
            if isinstance(result, Failure):
                w.errback(result)
            else:
                w.callback(_copy(result))


__all__ = ["CachedTokenAuthenticator", "SUCCESS_TTL"]
