"""The handler chain in front: authentication, authorization, in-flight limits, timeouts."""

import json
from typing import Optional

from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET
from twisted.web.test.requesthelper import DummyRequest
from zope.interface import implementer

from kubetwist import authorization
from kubetwist.authentication.authenticator import IAuthenticator
from kubetwist.authentication.user import UserInfo
from kubetwist.authorization.authorizer import IAuthorizer
from kubetwist.server.filters.chain import HandlerChainConfig, build_handler_chain
from kubetwist.server.filters.context import context_of
from tests.support import KubeTestCase


class AuthenticationTests(KubeTestCase):
    def test_no_credentials_is_401(self):
        """A request without credentials is 401 Unauthorized."""
        code, st, _ = self.request("GET", "/api/v1/namespaces", headers={"Authorization": None})
        self.assertEqual((code, st["reason"], st["message"]), (401, "Unauthorized", "Unauthorized"))

    def test_bad_token_is_401(self):
        """An unknown bearer token is 401, even on an anonymous path."""
        code, _, _ = self.request("GET", "/healthz", headers={"Authorization": "Bearer nope"})
        self.assertEqual(code, 401)

    def test_health_is_anonymous(self):
        """/healthz, /readyz and /version answer without credentials."""
        for path in ("/healthz", "/livez", "/readyz", "/version"):
            code, _, _ = self.request("GET", path, headers={"Authorization": None})
            self.assertEqual(code, 200, path)


class AlwaysDenyTests(KubeTestCase):
    modes = ("AlwaysDeny",)

    def test_plain_user_forbidden_with_upstream_message(self):
        """A non-admin user gets 403 with upstream's forbidden message."""
        code, st, _ = self.request("GET", "/api/v1/namespaces/default/pods",
                                   headers={"Authorization": "Bearer jane-token"})
        self.assertEqual((code, st["reason"]), (403, "Forbidden"))
        self.assertEqual(st["message"], 'pods is forbidden: User "jane" cannot list resource '
                         '"pods" in API group "" in the namespace "default": Everything is '
                         'forbidden.')

    def test_system_masters_allowed(self):
        """system:masters bypasses authorization."""
        code, _, _ = self.request("GET", "/api/v1/namespaces/default/pods")
        self.assertEqual(code, 200)


class InflightTests(KubeTestCase):
    priority_and_fairness = False

    def test_over_the_limit_is_429(self):
        """Past --max-requests-inflight, a request is 429 with Retry-After: 1 and upstream's
        plain-text answer (http.Error, not a Status)."""
        self.assertIsNone(self.chain.priority_and_fairness)
        self.chain.inflight.max_readonly = 1
        self.chain.inflight.inflight_readonly = 1
        code, body, resp = self.request("GET", "/api/v1/namespaces")
        self.assertEqual((code, body), (429, "Too many requests, please try again later.\n"))
        self.assertEqual(resp.headers.getRawHeaders("Retry-After"), ["1"])
        self.assertEqual(resp.headers.getRawHeaders("Content-Type"),
                         ["text/plain; charset=utf-8"])
        self.assertEqual(resp.headers.getRawHeaders("X-Content-Type-Options"), ["nosniff"])
        self.assertIsNone(resp.headers.getRawHeaders("X-Kubernetes-PF-FlowSchema-UID"))

    def test_counters_return_to_zero(self):
        """Finished requests release their in-flight slot."""
        self.request("GET", "/api/v1/namespaces")
        self.request("POST", "/api/v1/namespaces/default/configmaps",
                     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
        inflight = self.chain.inflight
        self.assertEqual((inflight.inflight_readonly, inflight.inflight_mutating), (0, 0))


class _Request(DummyRequest):
    """A DummyRequest with a path and URI as the Site sets them."""

    def __init__(self, method: bytes = b"GET", path: bytes = b"/api/v1/namespaces",
                 headers: Optional[dict] = None) -> None:
        super().__init__(path.lstrip(b"/").split(b"/"))
        self.method = method
        self.path = path
        self.uri = path
        for k, v in (headers or {}).items():
            self.requestHeaders.setRawHeaders(k, [v])


class _OK(Resource):
    """Answers 200 with C{ok}, recording the context it saw."""

    isLeaf = True

    def __init__(self) -> None:
        super().__init__()
        self.seen: list = []

    def render(self, request):
        self.seen.append(context_of(request))
        return b"ok"


@implementer(IAuthorizer)
class _Later:
    """An authorizer that answers when told to (a webhook, say)."""

    def __init__(self) -> None:
        self.pending: list[defer.Deferred] = []

    def authorize(self, attributes):
        d = defer.Deferred()
        self.pending.append(d)
        return d


@implementer(IAuthenticator)
class _User:
    def __init__(self, user) -> None:
        self.user = user

    def authenticate(self, request):
        return defer.succeed(self.user)


class ComposedChainTests(SynchronousTestCase):
    """The filters composed by build_handler_chain, on requests without a server."""

    def chain(self, **kw):
        self.clock = Clock()
        self.ok = _OK()
        config = HandlerChainConfig(clock=self.clock, authenticator=_User(UserInfo("jane")),
                                    authorizer=authorization.from_modes(["AlwaysAllow"]))
        for k, v in kw.items():
            setattr(config, k, v)
        self.chain_under_test = build_handler_chain(self.ok, config)
        return self.chain_under_test

    def render(self, chain, request):
        self.assertEqual(chain.render(request), NOT_DONE_YET)
        return request

    def test_context(self) -> None:
        """One context object carries what the filters learnt."""
        request = self.render(self.chain(), _Request())
        ctx = self.ok.seen[0]
        self.assertIs(request.kube_context, ctx)
        self.assertIsInstance(self.chain_under_test.authenticator, _User)
        self.assertEqual((ctx.user.name, ctx.request_info.verb, ctx.request_info.resource),
                         ("jane", "list", "namespaces"))
        self.assertFalse(hasattr(request, "kube_user"))
        self.assertEqual(request.written, [b"ok"])

    def test_audit_id(self) -> None:
        """Every response has an Audit-Id; a client's Audit-ID is kept."""
        request = self.render(self.chain(), _Request(headers={b"audit-id": b"abc"}))
        self.assertEqual(request.responseHeaders.getRawHeaders(b"audit-id"), [b"abc"])
        self.assertEqual(self.ok.seen[0].audit_id, "abc")
        request = self.render(self.chain(), _Request())
        self.assertEqual(len(request.responseHeaders.getRawHeaders(b"audit-id")[0]), 36)

    def test_async_authorizer_and_forbidden(self) -> None:
        """The chain waits for a later decision; a denial is upstream's 403."""
        later = _Later()
        chain = self.chain(authorizer=later)
        request = self.render(chain, _Request())
        self.assertEqual(self.ok.seen, [])
        later.pending[0].callback(("allow", ""))
        self.assertEqual(request.written, [b"ok"])
        request = self.render(chain, _Request(b"DELETE", b"/api/v1/nodes/n1"))
        later.pending[1].callback(("noopinion", "not today"))
        status = json.loads(b"".join(request.written))
        self.assertEqual((request.responseCode, status["message"]), (
            403, 'nodes "n1" is forbidden: User "jane" cannot delete resource "nodes" in API '
                 'group "" at the cluster scope: not today'))
        self.assertEqual(chain.inflight.inflight_mutating, 0)

    def test_timeout(self) -> None:
        """An unanswered request gets upstream's 504 after --request-timeout."""
        later = _Later()
        request = self.render(self.chain(authorizer=later, request_timeout=5), _Request())
        self.clock.advance(5)
        status = json.loads(b"".join(request.written))
        self.assertEqual((request.responseCode, status["reason"]), (504, "Timeout"))

    def test_recovery(self) -> None:
        """An exception in the chain is a 500 InternalError, logged."""

        @implementer(IAuthorizer)
        class Broken:
            def authorize(self, attributes):
                raise RuntimeError("boom")

        request = self.render(self.chain(authorizer=Broken()), _Request())
        status = json.loads(b"".join(request.written))
        self.assertEqual((request.responseCode, status["message"]),
                         (500, "Internal error occurred: an unexpected error occurred"))
        self.assertEqual(len(self.flushLoggedErrors(RuntimeError)), 1)

    def test_hsts_and_cors(self) -> None:
        """HSTS and CORS headers when configured; a CORS preflight is 204."""
        chain = self.chain(hsts_directives=["max-age=31536000", "includeSubDomains"],
                           cors_allowed_origins=[r"//example\.com$"])
        request = self.render(chain, _Request(headers={b"origin": b"https://example.com"}))
        h = request.responseHeaders
        self.assertEqual(h.getRawHeaders(b"strict-transport-security"),
                         [b"max-age=31536000; includeSubDomains"])
        self.assertEqual(h.getRawHeaders(b"access-control-allow-origin"),
                         [b"https://example.com"])
        self.assertEqual(h.getRawHeaders(b"access-control-allow-credentials"), [b"true"])
        preflight = self.render(chain, _Request(b"OPTIONS", headers={
            b"origin": b"https://example.com"}))
        self.assertEqual((preflight.responseCode, preflight.finished), (204, 1))
        other = self.render(chain, _Request(headers={b"origin": b"https://evil.com"}))
        self.assertIsNone(other.responseHeaders.getRawHeaders(b"access-control-allow-origin"))
