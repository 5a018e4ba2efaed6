"""Tests for L{kubetwist.authentication.bootstrap}: bootstrap tokens as upstream."""

from __future__ import annotations

import base64

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.bootstrap import BootstrapTokenAuthenticator
from tests.authentication.fakes import resolved
from tests.authentication.test_serviceaccount_lookup import FakeGetter

NOW = 1_700_000_000  # 2023-11-14T22:13:20Z
TOKEN = "abcdef.0123456789abcdef"


def secret(**data) -> dict:
    base = {"token-id": "abcdef", "token-secret": "0123456789abcdef",
            "usage-bootstrap-authentication": "true"}
    base.update(data)
    return {"kind": "Secret", "type": "bootstrap.kubernetes.io/token",
            "metadata": {"name": "bootstrap-token-abcdef", "namespace": "kube-system"},
            "data": {k: base64.b64encode(v.encode()).decode()
                     for k, v in base.items() if v is not None}}


class BootstrapTokenTests(SynchronousTestCase):
    def authenticate(self, obj, token=TOKEN):
        clock = Clock()
        clock.advance(NOW)
        getter = FakeGetter(("secrets", obj)) if obj is not None else FakeGetter()
        return resolved(BootstrapTokenAuthenticator(getter, clock).authenticate_token(token))

    def test_user(self):
        """system:bootstrap:<id> in system:bootstrappers plus the extra groups, sorted."""
        user = self.authenticate(secret(**{
            "auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token,"
                                 "system:bootstrappers:a",
            "expiration": "2023-11-15T00:00:00Z"}))
        self.assertEqual((user.name, user.uid, user.groups), (
            "system:bootstrap:abcdef", "",
            ["system:bootstrappers", "system:bootstrappers:a",
             "system:bootstrappers:kubeadm:default-node-token"]))

    def test_not_authenticated(self):
        """Table: each of upstream's refusals is no user (the bearer token is then 401)."""
        deleting = secret()
        deleting["metadata"]["deletionTimestamp"] = "2023-11-14T22:00:00Z"
        wrong_type = secret()
        wrong_type["type"] = "Opaque"
        cases = [
            (None, TOKEN),
            (secret(), "abcdef.0123456789abcdeX"),
            (secret(), "ABCDEF.0123456789abcdef"),
            (secret(), "abcdef0123456789abcdef"),
            (secret(), "abcdef.0123456789abcdee"),
            (deleting, TOKEN),
            (wrong_type, TOKEN),
            (secret(**{"token-id": "abcdeg"}), TOKEN),
            (secret(expiration="2023-11-14T22:13:19Z"), TOKEN),
            (secret(expiration="tomorrow"), TOKEN),
            (secret(**{"usage-bootstrap-authentication": "false"}), TOKEN),
            (secret(**{"usage-bootstrap-authentication": None}), TOKEN),
            (secret(**{"auth-extra-groups": "system:masters"}), TOKEN),
        ]
        for obj, token in cases:
            self.assertIsNone(self.authenticate(obj, token), (obj, token))
