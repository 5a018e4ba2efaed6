"""Tests for L{kubetwist.authentication.union} and L{AuthenticationError.aggregate}."""

from __future__ import annotations

from twisted.internet import defer
from twisted.trial.unittest import SynchronousTestCase
from zope.interface import implementer
from zope.interface.verify import verifyObject

from kubetwist.authentication.authenticator import (
    AuthenticationError,
    IAuthenticator,
    ITokenAuthenticator,
)
from kubetwist.authentication.union import UnionAuthenticator, UnionTokenAuthenticator
from kubetwist.authentication.user import UserInfo
from tests.authentication.fakes import FakeRequest, resolved


@implementer(IAuthenticator, ITokenAuthenticator)
class Fixed:
    """Answers (a fired Deferred) a fixed user, None, or fails; counts calls."""

    def __init__(self, result) -> None:
        self.result = result
        self.calls = 0

    def _answer(self):
        self.calls += 1
        if isinstance(self.result, Exception):
            return defer.fail(self.result)
        return defer.succeed(self.result)

    def authenticate(self, request):
        return self._answer()

    def authenticate_token(self, token):
        return self._answer()


BOB = UserInfo(name="bob")


class AggregateTests(SynchronousTestCase):
    """AuthenticationError.aggregate mirrors utilerrors.NewAggregate."""

    def test_none(self) -> None:
        """No errors aggregate to None."""
        self.assertIsNone(AuthenticationError.aggregate([]))

    def test_one(self) -> None:
        """One error keeps its message."""
        self.assertEqual(str(AuthenticationError.aggregate([ValueError("x")])), "x")

    def test_many(self) -> None:
        """Several are bracketed, comma-separated, duplicates dropped."""
        errs = [ValueError("a"), ValueError("b"), ValueError("a")]
        self.assertEqual(str(AuthenticationError.aggregate(errs)), "[a, b]")


class UnionTests(SynchronousTestCase):
    """UnionAuthenticator."""

    def test_provides(self) -> None:
        """It is an IAuthenticator."""
        self.assertTrue(verifyObject(IAuthenticator, UnionAuthenticator([])))

    def test_first_success_wins(self) -> None:
        """Authenticators are tried in order; later ones are not asked after a success."""
        later = Fixed(UserInfo(name="later"))
        union = UnionAuthenticator([Fixed(None), Fixed(BOB), later])
        self.assertEqual(resolved(union.authenticate(FakeRequest())), BOB)
        self.assertEqual(later.calls, 0)

    def test_error_then_success(self) -> None:
        """Without fail-on-error an error does not stop the chain."""
        union = UnionAuthenticator([Fixed(AuthenticationError("bad")), Fixed(BOB)])
        self.assertEqual(resolved(union.authenticate(FakeRequest())), BOB)

    def test_all_fail(self) -> None:
        """When none succeeds, the errors are raised as one aggregate."""
        union = UnionAuthenticator(
            [Fixed(AuthenticationError("x")), Fixed(None), Fixed(AuthenticationError("y"))]
        )
        with self.assertRaises(AuthenticationError) as ctx:
            resolved(union.authenticate(FakeRequest()))
        self.assertEqual(str(ctx.exception), "[x, y]")

    def test_no_opinion(self) -> None:
        """No errors and no success is no opinion."""
        union = UnionAuthenticator([Fixed(None), Fixed(None)])
        self.assertIsNone(resolved(union.authenticate(FakeRequest())))

    def test_fail_on_error(self) -> None:
        """With fail-on-error the first error stops the chain."""
        after = Fixed(BOB)
        union = UnionAuthenticator([Fixed(AuthenticationError("stop")), after], fail_on_error=True)
        with self.assertRaises(AuthenticationError) as ctx:
            resolved(union.authenticate(FakeRequest()))
        self.assertEqual((str(ctx.exception), after.calls), ("stop", 0))


class UnionTokenTests(SynchronousTestCase):
    """UnionTokenAuthenticator."""

    def test_provides(self) -> None:
        """It is an ITokenAuthenticator."""
        self.assertTrue(verifyObject(ITokenAuthenticator, UnionTokenAuthenticator([])))

    def test_order_and_errors(self) -> None:
        """First success wins; errors aggregate when none succeeds."""
        self.assertEqual(
            resolved(UnionTokenAuthenticator([Fixed(None), Fixed(BOB)]).authenticate_token("t")),
            BOB
        )
        with self.assertRaises(AuthenticationError) as ctx:
            resolved(UnionTokenAuthenticator(
                [Fixed(AuthenticationError("e1")), Fixed(AuthenticationError("e2"))]
            ).authenticate_token("t"))
        self.assertEqual(str(ctx.exception), "[e1, e2]")
        self.assertIsNone(resolved(UnionTokenAuthenticator([Fixed(None)]).authenticate_token("t")))
