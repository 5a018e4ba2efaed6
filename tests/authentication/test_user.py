"""Tests for L{kubetwist.authentication.user}."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.user import UserInfo


class UserInfoTests(SynchronousTestCase):
    """The UserInfo wire form."""

    def test_full(self) -> None:
        """Every field is written under its authentication.k8s.io name."""
        user = UserInfo(name="jane", uid="42", groups=["a", "b"], extra={"k": ["v"]})
        self.assertEqual(
            user.to_user_info(),
            {"username": "jane", "uid": "42", "groups": ["a", "b"], "extra": {"k": ["v"]}},
        )

    def test_empty_fields_omitted(self) -> None:
        """Empty uid, groups and extra are omitted (omitempty)."""
        self.assertEqual(UserInfo(name="jane").to_user_info(), {"username": "jane"})

    def test_defaults_not_shared(self) -> None:
        """Each user gets its own groups list."""
        a, b = UserInfo(name="a"), UserInfo(name="b")
        a.groups.append("x")
        self.assertEqual(b.groups, [])
