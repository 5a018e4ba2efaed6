"""Tests for L{kubetwist.authentication.tokencache}: kube-apiserver's 10 s token cache."""

from __future__ import annotations

from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.authenticator import AuthenticationError, with_audiences
from kubetwist.authentication.tokencache import CachedTokenAuthenticator
from kubetwist.authentication.user import UserInfo
from tests.authentication.fakes import resolved


class Counting:
    def __init__(self, answer):
        self.answer = answer
        self.calls = []
        self.pending = []

    def authenticate_token(self, token):
        self.calls.append(token)
        if self.answer == "later":
            d = defer.Deferred()
            self.pending.append(d)
            return d
        if isinstance(self.answer, Exception):
            return defer.fail(self.answer)
        return defer.succeed(self.answer)


class TokenCacheTests(SynchronousTestCase):
    def test_successes_cached_for_ten_seconds(self):
        clock = Clock()
        inner = Counting(UserInfo("jane", "1", ["g"]))
        cache = CachedTokenAuthenticator(inner, clock)
        first = resolved(cache.authenticate_token("t"))
        first.groups.append("mutated")
        self.assertEqual(resolved(cache.authenticate_token("t")).groups, ["g"])
        self.assertEqual(len(inner.calls), 1)
        with with_audiences(["other"]):
            resolved(cache.authenticate_token("t"))
        self.assertEqual(len(inner.calls), 2)
        clock.advance(10)
        resolved(cache.authenticate_token("t"))
        self.assertEqual(len(inner.calls), 3)

    def test_failures_not_cached(self):
        """No user and errors are asked again every time (failure TTL 0)."""
        for answer in (None, AuthenticationError("bad")):
            inner = Counting(answer)
            cache = CachedTokenAuthenticator(inner, Clock())
            for _ in range(2):
                d = cache.authenticate_token("t")
                d.addErrback(lambda f: f.trap(AuthenticationError) and None)
                self.assertIsNone(resolved(d))
            self.assertEqual(len(inner.calls), 2)

    def test_concurrent_lookups_share_one(self):
        inner = Counting("later")
        cache = CachedTokenAuthenticator(inner, Clock())
        a, b = cache.authenticate_token("t"), cache.authenticate_token("t")
        self.assertEqual(len(inner.calls), 1)
        inner.pending[0].callback(UserInfo("jane"))
        self.assertEqual((resolved(a).name, resolved(b).name), ("jane", "jane"))
