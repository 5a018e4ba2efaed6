"""A failed authorizer in the handler chain: upstream's plain-text 500 (WithAuthorization)."""

from __future__ import annotations

import json

from treq.testing import StubTreq
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist import authorization
from kubetwist.authentication.user import UserInfo
from kubetwist.authorization.webhook import WebhookAuthorizer
from kubetwist.server.filters.chain import HandlerChainConfig, build_handler_chain
from tests.authorization.test_webhook import Hook
from tests.server.test_filters import _OK, _Request, _User


class FailedWebhookTests(SynchronousTestCase):
    """Webhook mode behind the union: a broken webhook is a 500, a denial a 403."""

    def chain(self, answer):
        self.clock = Clock()
        self.ok = _OK()
        self.hook = Hook(answer)
        self.stub = StubTreq(self.hook)
        webhook = WebhookAuthorizer(self.stub, "https://authz.test/", self.clock,
                                    retry_backoff=(0.5, 1.5, 0.0, 1))
        union = authorization.UnionAuthorizer([authorization.PrivilegedGroups(), webhook])
        config = HandlerChainConfig(clock=self.clock, authenticator=_User(UserInfo("jane")),
                                    authorizer=union)
        return build_handler_chain(self.ok, config)

    def render(self, chain, request):
        chain.render(request)
        self.stub.flush()
        return request

    def test_garbage_is_500(self) -> None:
        request = self.render(self.chain(lambda r: (200, b"<garbage>")),
                              _Request(path=b"/api/v1/namespaces?limit=1&x=<b>"))
        self.assertEqual(request.responseCode, 500)
        self.assertEqual(request.responseHeaders.getRawHeaders(b"content-type"),
                         [b"text/plain; charset=utf-8"])
        self.assertEqual(b"".join(request.written).decode(), (
            'Internal Server Error: "/api/v1/namespaces?limit=1&amp;x=&lt;b&gt;": couldn\'t get '
            "version/kind; json parse error: json: cannot unmarshal string into Go value of "
            'type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
            '"json:\\"kind,omitempty\\"" }\n'))
        self.assertEqual(self.ok.seen, [])
        self.flushLoggedErrors()

    def test_denied_is_403(self) -> None:
        answer = {"apiVersion": "authorization.k8s.io/v1beta1", "kind": "SubjectAccessReview",
                  "status": {"allowed": False, "denied": True, "reason": "not you"}}
        request = self.render(self.chain(lambda r: (200, answer)), _Request())
        status = json.loads(b"".join(request.written))
        self.assertEqual((request.responseCode, status["message"]), (
            403, 'namespaces is forbidden: User "jane" cannot list resource "namespaces" in API '
                 'group "" at the cluster scope: not you'))
