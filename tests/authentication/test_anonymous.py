"""Tests for L{kubetwist.authentication.anonymous}."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.anonymous import (
    AnonymousAuthenticator,
    anonymous_user,
    is_anonymous_allowed_path,
)
from kubetwist.authentication.user import UserInfo
from tests.authentication.fakes import FakeRequest, resolved


class AnonymousTests(SynchronousTestCase):
    """Anonymous access to the public health and version paths."""

    def test_user(self) -> None:
        """The anonymous user is system:anonymous in system:unauthenticated, fresh each time."""
        user = anonymous_user()
        self.assertEqual(user, UserInfo(name="system:anonymous", groups=["system:unauthenticated"]))
        user.groups.append("x")
        self.assertEqual(anonymous_user().groups, ["system:unauthenticated"])

    def test_allowed_paths(self) -> None:
        """Exactly the public-info-viewer paths are allowed."""
        allowed = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
        denied = ["/", "/api", "/api/v1/pods", "/readyz/etcd", "/healthz/ping", "/livez/",
                  "/versionx", "/metrics", "/openapi/v2"]
        self.assertEqual([p for p in allowed + denied if is_anonymous_allowed_path(p)], allowed)

    def test_authenticator_allowed(self) -> None:
        """On an allowed path the request is anonymous."""
        self.assertEqual(
            resolved(AnonymousAuthenticator().authenticate(FakeRequest(b"/readyz"))),
            anonymous_user()
        )

    def test_authenticator_percent_decoded(self) -> None:
        """The path is compared percent-decoded, as Go's URL.Path."""
        self.assertEqual(
            resolved(AnonymousAuthenticator().authenticate(FakeRequest(b"/%76ersion"))),
            anonymous_user()
        )

    def test_authenticator_denied(self) -> None:
        """Elsewhere it has no opinion."""
        self.assertIsNone(resolved(AnonymousAuthenticator().authenticate(
            FakeRequest(b"/api/v1/pods"))))

    def test_all_paths(self) -> None:
        """With no path list (upstream: no conditions) every path is anonymous."""
        self.assertEqual(
            resolved(AnonymousAuthenticator(None).authenticate(FakeRequest(b"/api"))),
            anonymous_user()
        )
        self.assertEqual(
            resolved(AnonymousAuthenticator([]).authenticate(FakeRequest(b"/api"))),
            anonymous_user()
        )
