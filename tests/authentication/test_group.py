"""Tests for L{kubetwist.authentication.group}."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.authenticator import AuthenticationError
from kubetwist.authentication.group import AuthenticatedGroupAdder
from kubetwist.authentication.user import UserInfo
from tests.authentication.fakes import FakeRequest, resolved
from tests.authentication.test_union import Fixed


class AuthenticatedGroupAdderTests(SynchronousTestCase):
    """system:authenticated is appended exactly when upstream appends it."""

    def _authenticate(self, user):
        return resolved(AuthenticatedGroupAdder(Fixed(user)).authenticate(FakeRequest()))

    def test_appended(self) -> None:
        """An authenticated user gets system:authenticated last; other fields are kept and the
        delegate's user is not modified."""
        user = UserInfo(name="u", uid="1", groups=["g"], extra={"k": ["v"]})
        self.assertEqual(
            self._authenticate(user),
            UserInfo(name="u", uid="1", groups=["g", "system:authenticated"], extra={"k": ["v"]}),
        )
        self.assertEqual(user.groups, ["g"])

    def test_anonymous_untouched(self) -> None:
        """system:anonymous gets nothing added."""
        user = UserInfo(name="system:anonymous", groups=["system:unauthenticated"])
        self.assertEqual(self._authenticate(user).groups, ["system:unauthenticated"])

    def test_already_present(self) -> None:
        """A user already in system:authenticated or system:unauthenticated is unchanged."""
        for group in ["system:authenticated", "system:unauthenticated"]:
            self.assertEqual(self._authenticate(UserInfo(name="u", groups=[group])).groups, [group])

    def test_none_and_errors_pass_through(self) -> None:
        """No opinion stays no opinion; errors propagate."""
        self.assertIsNone(self._authenticate(None))
        self.assertRaises(AuthenticationError, self._authenticate, AuthenticationError("x"))
