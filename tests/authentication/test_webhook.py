"""Tests for L{kubetwist.authentication.webhook}: TokenReview webhooks, cache and retries."""

from __future__ import annotations

import base64
import json
import os
import tempfile

from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.authenticator import AuthenticationError, with_audiences
from kubetwist.authentication.webhook import (
    WebhookTokenAuthenticator,
    load_webhook_kubeconfig,
)


class FakeWebhook:
    """Records the bodies; answers from a list of (code, review status) or exceptions."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.bodies = []

    def post(self, body):
        self.bodies.append(json.loads(body))
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            return defer.fail(answer)
        code, status = answer
        return defer.succeed((code, json.dumps({"apiVersion": "authentication.k8s.io/v1",
                                                "kind": "TokenReview",
                                                "status": status}).encode()))


OK = (200, {"authenticated": True, "user": {"username": "jane", "uid": "7",
                                            "groups": ["dev"], "extra": {"a": ["b"]}}})


class WebhookTests(SynchronousTestCase):
    def make(self, hook, ttl=120.0, version="v1"):
        self.clock = Clock()
        return WebhookTokenAuthenticator(hook.post, version, ["https://kubernetes"], ttl,
                                         self.clock)

    def result(self, d):
        out = []
        d.addBoth(out.append)
        self.assertEqual(len(out), 1, "not fired")
        if hasattr(out[0], "raiseException"):
            out[0].raiseException()
        return out[0]

    def test_review_and_cache(self):
        """The TokenReview sent, the user returned, the answer cached for the TTL."""
        hook = FakeWebhook(OK)
        a = self.make(hook)
        user = self.result(a.authenticate_token("t1"))
        self.assertEqual((user.name, user.uid, user.groups, user.extra),
                         ("jane", "7", ["dev"], {"a": ["b"]}))
        self.assertEqual(hook.bodies, [{"kind": "TokenReview",
                                        "apiVersion": "authentication.k8s.io/v1",
                                        "metadata": {"creationTimestamp": None},
                                        "spec": {"token": "t1",
                                                 "audiences": ["https://kubernetes"]},
                                        "status": {"user": {}}}])
        self.assertEqual(list(hook.bodies[0]), ["kind", "apiVersion", "metadata", "spec",
                                                "status"])
        self.result(a.authenticate_token("t1"))
        self.assertEqual(len(hook.bodies), 1)
        self.clock.advance(121)
        self.result(a.authenticate_token("t1"))
        self.assertEqual(len(hook.bodies), 2)

    def test_v1beta1(self):
        hook = FakeWebhook(OK)
        self.result(self.make(hook, version="v1beta1").authenticate_token("t"))
        self.assertEqual(hook.bodies[0]["apiVersion"], "authentication.k8s.io/v1beta1")

    def test_rejections(self):
        """Not authenticated: no user, cached; status.error is the (logged) reason."""
        hook = FakeWebhook((200, {"authenticated": False}))
        a = self.make(hook)
        self.assertIsNone(self.result(a.authenticate_token("t")))
        self.assertIsNone(self.result(a.authenticate_token("t")))
        self.assertEqual(len(hook.bodies), 1)
        hook = FakeWebhook((200, {"authenticated": False, "error": "token revoked"}))
        with self.assertRaises(AuthenticationError) as e:
            self.result(self.make(hook).authenticate_token("t"))
        self.assertEqual(str(e.exception), "token revoked")

    def test_audiences(self):
        """With requested audiences they are sent; the answer's must intersect them."""
        hook = FakeWebhook(OK)  # no audiences in the answer: the API audiences count
        with with_audiences(["vault"]):
            d = self.make(hook).authenticate_token("t")
        self.assertIsNone(self.result(d))
        hook = FakeWebhook((200, dict(OK[1], audiences=["other"])))
        a = self.make(hook)
        with with_audiences(["vault"]):
            d = a.authenticate_token("t")
        self.assertIsNone(self.result(d))
        self.assertEqual(hook.bodies[0]["spec"]["audiences"], ["vault"])
        hook = FakeWebhook(OK)
        with with_audiences(["https://kubernetes"]):
            d = self.make(hook).authenticate_token("t")
        self.assertEqual(self.result(d).name, "jane")

    def test_retries_with_backoff(self):
        """5xx and connection errors are retried (0.5 s, x1.5, 5 attempts); 4xx is not."""
        hook = FakeWebhook((500, {}), ConnectionRefusedError("refused"), OK)
        a = self.make(hook)
        d = a.authenticate_token("t")
        out = []
        d.addBoth(out.append)
        self.assertEqual((out, len(hook.bodies)), ([], 1))
        self.clock.advance(0.5)
        self.assertEqual(len(hook.bodies), 2)
        self.clock.advance(0.75)
        self.assertEqual(out[0].name, "jane")
        hook = FakeWebhook((500, {}))
        d = self.make(hook).authenticate_token("t")
        d.addBoth(out.append)
        self.clock.pump([0.5, 0.75, 1.125, 1.6875, 5])
        self.assertEqual(len(hook.bodies), 5)
        self.assertIsInstance(out[-1].value, AuthenticationError)
        hook = FakeWebhook((403, {}))
        with self.assertRaises(AuthenticationError) as e:
            self.result(self.make(hook).authenticate_token("t"))
        self.assertEqual(str(e.exception), "the server responded with the status code 403 but "
                                           "did not return more information")


class KubeconfigTests(SynchronousTestCase):
    def test_load(self):
        d = tempfile.mkdtemp()
        self.addCleanup(__import__("shutil").rmtree, d)
        with open(os.path.join(d, "ca.pem"), "wb") as f:
            f.write(b"CA")
        path = os.path.join(d, "hook.yaml")
        with open(path, "w") as f:
            f.write(f"""
apiVersion: v1
kind: Config
clusters:
- name: hook
  cluster: {{server: "https://127.0.0.1:9443/authn", certificate-authority: ca.pem}}
users:
- name: api
  user: {{client-certificate-data: "{base64.b64encode(b'CERT').decode()}", token: tok}}
contexts:
- name: c
  context: {{cluster: hook, user: api}}
current-context: c
""")
        cfg = load_webhook_kubeconfig(path)
        self.assertEqual((cfg.server, cfg.ca_pem, cfg.cert_pem, cfg.token),
                         ("https://127.0.0.1:9443/authn", b"CA", b"CERT", "tok"))

    def test_errors_are_one_line(self):
        with self.assertRaises(ValueError) as e:
            load_webhook_kubeconfig("/nonexistent/hook.yaml")
        self.assertEqual(str(e.exception), "invalid configuration: stat /nonexistent/hook.yaml: "
                                           "no such file or directory")
        fd, path = tempfile.mkstemp()
        os.write(fd, b"apiVersion: v1\nkind: Config\n")
        os.close(fd)
        self.addCleanup(os.unlink, path)
        with self.assertRaises(ValueError) as e:
            load_webhook_kubeconfig(path)
        self.assertIn("invalid configuration: no configuration has been provided",
                      str(e.exception))
