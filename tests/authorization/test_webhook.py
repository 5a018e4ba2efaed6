"""The Webhook mode: SubjectAccessReview calls, decisions, cache, retries, failures, TLS."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

from treq.testing import StubTreq
from twisted.internet import defer
from twisted.internet import error as internet_error
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase, TestCase
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET

from kubetwist.authentication.user import UserInfo
from kubetwist.authorization.authorizer import ALLOW, DENY, NO_OPINION, Attributes
from kubetwist.authorization.webhook import (
    WebhookAuthorizer,
    compile_match_conditions,
    load_webhook_kubeconfig,
)

JANE = UserInfo(name="jane", uid="u1", groups=["dev", "system:authenticated"],
                extra={"scopes": ["a"]})
GET_PODS = Attributes(user=JANE, verb="get", namespace="ns", api_group="", api_version="v1",
                      resource="pods", name="p", path="/api/v1/namespaces/ns/pods/p",
                      resource_request=True)
HEALTHZ = Attributes(user=JANE, verb="get", path="/healthz")
URL = "https://authz.test/authorize"


class Hook(Resource):
    """A webhook: answers each POST with C{self.answer(review) -> (code, body[, type])}."""

    isLeaf = True

    def __init__(self, answer=None) -> None:
        super().__init__()
        self.reviews: list[dict] = []
        self.uris: list[bytes] = []
        self.answer = answer or (lambda review: (200, allowed(True)))

    def render_POST(self, request):
        review = json.loads(request.content.read())
        self.reviews.append(review)
        self.uris.append(request.uri)
        result = self.answer(review)
        if result is None:
            return NOT_DONE_YET
        code, body = result[0], result[1]
        request.setResponseCode(code)
        request.setHeader(b"Content-Type", (result[2] if len(result) > 2
                                            else "application/json").encode())
        return body if isinstance(body, bytes) else json.dumps(body).encode()


def allowed(allow: bool, reason: str = "", denied: bool = False, version: str = "") -> dict:
    """A review answer; without C{version} no kind and apiVersion (they default)."""
    status = {"allowed": allow, "reason": reason}
    if denied:
        status["denied"] = True
    if not version:
        return {"status": status}
    return {"apiVersion": f"authorization.k8s.io/{version}", "kind": "SubjectAccessReview",
            "status": status}


class WebhookTestCase(SynchronousTestCase):
    def make(self, answer=None, **kw):
        self.clock = Clock()
        self.hook = Hook(answer)
        self.stub = StubTreq(self.hook)
        kw.setdefault("random_source", lambda: 0.0)
        return WebhookAuthorizer(self.stub, URL, self.clock, **kw)

    def decide(self, authorizer, attributes=GET_PODS):
        d = authorizer.authorize(attributes)
        self.stub.flush()
        return self.successResultOf(d)


class ReviewTests(WebhookTestCase):
    """What is sent, and how the answer maps to a decision."""

    def test_v1_review(self) -> None:
        """A v1 review of the request's attributes, to the kubeconfig URL plus ?timeout."""
        authorizer = self.make(version="v1")
        self.assertEqual(self.decide(authorizer), (ALLOW, ""))
        self.assertEqual(self.hook.uris, [b"/authorize?timeout=30s"])
        self.assertEqual(self.hook.reviews[0], {
            "kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": None},
            "spec": {"resourceAttributes": {"namespace": "ns", "verb": "get", "version": "v1",
                                            "resource": "pods", "name": "p"},
                     "user": "jane", "groups": ["dev", "system:authenticated"],
                     "extra": {"scopes": ["a"]}, "uid": "u1"},
            "status": {"allowed": False}})

    def test_v1beta1_and_non_resource(self) -> None:
        """v1beta1 (the flag's default) names the groups C{group}; paths are non-resource."""
        authorizer = self.make()
        self.decide(authorizer, HEALTHZ)
        review = self.hook.reviews[0]
        self.assertEqual(review["apiVersion"], "authorization.k8s.io/v1beta1")
        self.assertEqual(review["spec"]["nonResourceAttributes"],
                         {"path": "/healthz", "verb": "get"})
        self.assertEqual(review["spec"]["group"], ["dev", "system:authenticated"])
        self.assertNotIn("groups", review["spec"])

    def test_field_selector(self) -> None:
        """A field selector travels as requirements (AuthorizeWithSelectors)."""
        authorizer = self.make(version="v1")
        self.decide(authorizer, Attributes(user=JANE, verb="list", resource="pods",
                                           field_selector="spec.nodeName=n1,a!=b",
                                           resource_request=True))
        self.assertEqual(self.hook.reviews[0]["spec"]["resourceAttributes"]["fieldSelector"],
                         {"requirements": [
                             {"key": "spec.nodeName", "operator": "In", "values": ["n1"]},
                             {"key": "a", "operator": "NotIn", "values": ["b"]}]})

    def test_label_selector(self) -> None:
        """A label selector travels as requirements; those that cannot narrow are left out."""
        authorizer = self.make(version="v1")
        self.decide(authorizer, Attributes(
            user=JANE, verb="list", resource="pods", resource_request=True,
            label_selector="app=web,tier!=db,env in (a, b),x notin (y),present,!absent,n>3"))
        self.assertEqual(self.hook.reviews[0]["spec"]["resourceAttributes"]["labelSelector"],
                         {"requirements": [
                             {"key": "app", "operator": "In", "values": ["web"]},
                             {"key": "tier", "operator": "NotIn", "values": ["db"]},
                             {"key": "env", "operator": "In", "values": ["a", "b"]},
                             {"key": "x", "operator": "NotIn", "values": ["y"]},
                             {"key": "present", "operator": "Exists"},
                             {"key": "absent", "operator": "DoesNotExist"}]})

    def test_decisions(self) -> None:
        """allowed -> ALLOW, denied -> DENY, neither -> NO_OPINION, both -> DENY + error."""
        cases = [
            (allowed(True, "ok"), (ALLOW, "ok")),
            (allowed(False, "no", denied=True), (DENY, "no")),
            (allowed(False, "dunno"), (NO_OPINION, "dunno")),
            (allowed(True, "both", denied=True),
             (DENY, "both", "webhook subject access review returned both allow and deny "
                            "response")),
            ({"status": {"allowed": True}}, (ALLOW, "")),  # kind and apiVersion default
        ]
        for body, want in cases:
            authorizer = self.make(lambda r, body=body: (200, body), version="v1")
            self.assertEqual(self.decide(authorizer), want)

    def test_cache(self) -> None:
        """Allowed answers are kept 5m, others 30s, per spec; expired ones are asked again."""
        answers = {"jane": allowed(True), "bob": allowed(False)}
        authorizer = self.make(lambda r: (200, answers[r["spec"]["user"]]))
        bob = Attributes(user=UserInfo(name="bob"), verb="get", resource="pods",
                         resource_request=True)
        for _ in range(3):
            self.assertEqual(self.decide(authorizer), (ALLOW, ""))
            self.assertEqual(self.decide(authorizer, bob), (NO_OPINION, ""))
        self.assertEqual(len(self.hook.reviews), 2)
        self.clock.advance(30)
        self.decide(authorizer)
        self.decide(authorizer, bob)
        self.assertEqual(len(self.hook.reviews), 3)
        self.clock.advance(270)
        self.decide(authorizer)
        self.assertEqual(len(self.hook.reviews), 4)

    def test_huge_attributes_not_cached(self) -> None:
        """Requester-controlled attributes of 10000 bytes or more are not cached."""
        authorizer = self.make()
        big = Attributes(user=JANE, verb="get", resource="pods", name="x" * 10000,
                         resource_request=True)
        self.decide(authorizer, big)
        self.decide(authorizer, big)
        self.assertEqual(len(self.hook.reviews), 2)

    def test_rules_for(self) -> None:
        self.assertEqual(self.make().rules_for(JANE, "ns"), (
            [], [], True, "webhook authorizer does not support user rule resolution"))


class MatchConditionTests(WebhookTestCase):
    """CEL matchConditions over C{request}: false skips, errors take the failure policy."""

    def matcher(self, *expressions):
        m, errs = compile_match_conditions([{"expression": e} for e in expressions])
        self.assertEqual(errs, [])
        return m

    def test_match(self) -> None:
        only_ns = self.matcher("has(request.resourceAttributes)",
                               "request.resourceAttributes.namespace == 'ns'")
        authorizer = self.make(matcher=only_ns)
        self.assertEqual(self.decide(authorizer), (ALLOW, ""))
        self.assertEqual(self.decide(authorizer, HEALTHZ), (NO_OPINION, ""))
        self.assertEqual(len(self.hook.reviews), 1)

    def test_library(self) -> None:
        """The base environment's libraries (strings, regex) are there, as upstream's."""
        authorizer = self.make(matcher=self.matcher("request.user.split(':').size() == 1",
                                                    "request.user.matches('^ja')"))
        self.assertEqual(self.decide(authorizer), (ALLOW, ""))
        bob = Attributes(user=UserInfo(name="system:bob"), verb="get", path="/x")
        self.assertEqual(self.decide(authorizer, bob), (NO_OPINION, ""))
        self.assertEqual(len(self.hook.reviews), 1)

    def test_error(self) -> None:
        """An evaluation error (and no false) decides the failure policy, with the error."""
        authorizer = self.make(matcher=self.matcher(
            "request.resourceAttributes.namespace == 'ns'"), decision_on_error=DENY)
        self.assertEqual(self.decide(authorizer, HEALTHZ), (
            DENY, "", "cel evaluation error: expression 'request.resourceAttributes.namespace "
                      "== 'ns'' resulted in error: no such key: resourceAttributes"))
        self.assertEqual(self.hook.reviews, [])

    def test_compile_errors(self) -> None:
        """Upstream's field errors for empty, repeated, broken and non-bool expressions."""
        _, errs = compile_match_conditions([{"expression": "  "}, {"expression": "'a'"},
                                            {"expression": "true"}, {"expression": "true"},
                                            {"expression": "request.user == "}])
        texts = [str(e) for e in errs]
        self.assertEqual(texts[:3], [
            "matchConditions[0].expression: Required value",
            "matchConditions[1].expression: Invalid value: \"'a'\": must evaluate to bool but "
            "got string",
            'matchConditions[3].expression: Duplicate value: "true"'])
        self.assertTrue(texts[3].startswith(
            'matchConditions[4].expression: Invalid value: "request.user == ": compilation '
            "failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>'"))
        _, errs = compile_match_conditions([{"expression": "request.userx == 'a'"},
                                            {"expression": "request.user == 'request.x'"}])
        self.assertEqual([str(e) for e in errs], [  # recorded from kube-apiserver v1.32
            "matchConditions[0].expression: Invalid value: \"request.userx == 'a'\": "
            "compilation failed: ERROR: <input>:1:8: undefined field 'userx'\n"
            " | request.userx == 'a'\n | .......^"])
        _, errs = compile_match_conditions([{"expression": "true"}] * 65)
        self.assertEqual([str(e) for e in errs],
                         ["matchConditions: Too many: 65: must have at most 64 items"])


class FailureTests(WebhookTestCase):
    """Item 7: bad webhook answers end in the decision on error with upstream's error text."""

    def test_table(self) -> None:
        cases = [
            # (answer, calls made, error)
            # recorded from kube-apiserver v1.32 with a webhook answering these
            (lambda r: (200, b"<garbage>"), 1,
             "couldn't get version/kind; json parse error: json: cannot unmarshal string into "
             'Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
             'Kind string "json:\\"kind,omitempty\\"" }'),
            (lambda r: (200, b"[]"), 1, "couldn't get version/kind; json parse error: json: "
             "cannot unmarshal array into Go value of type struct { APIVersion string "
             '"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'),
            (lambda r: (200, b"a: ["), 1, "yaml: line 1: did not find expected node content"),
            (lambda r: (200, b'{"status": {"allowed": true}} trailing'), 1,
             "couldn't get version/kind; json parse error: invalid character 't' after "
             "top-level value"),
            (lambda r: (200, {"apiVersion": "example.com/v1", "kind": "Foo"}), 1,
             'no kind "Foo" is registered for version "example.com/v1" in scheme '
             '"k8s.io/client-go/kubernetes/scheme/register.go:83"'),
            (lambda r: (200, {"kind": "SubjectAccessReview", "apiVersion":
                              "authorization.k8s.io/v1", "status": {"allowed": True}}), 1,
             "converting (v1.SubjectAccessReview) to (v1beta1.SubjectAccessReview): unknown "
             "conversion"),
            (lambda r: (200, {"apiVersion": "v1", "kind": "Pod"}), 1,
             "converting (v1.Pod) to (v1beta1.SubjectAccessReview): unknown conversion"),
            (lambda r: (200, {"status": {"allowed": "yes"}}), 1,
             "json: cannot unmarshal string into Go struct field "
             "SubjectAccessReviewStatus.status.allowed of type bool"),
            (lambda r: (500, b"boom", "text/plain"), 5,
             'an error on the server ("boom") has prevented the request from succeeding'),
            (lambda r: (500, b"{}"), 5,
             'an error on the server ("unknown") has prevented the request from succeeding'),
            (lambda r: (429, b""), 5, "the server has received too many requests and has "
                                      "asked us to try again later"),
            (lambda r: (502, b"gw", "text/plain"), 5,
             'an error on the server ("gw") has prevented the request from succeeding'),
            (lambda r: (503, b""), 1, "the server is currently unable to handle the request"),
            (lambda r: (404, b"nope", "text/plain"), 1,
             "the server could not find the requested resource"),
            (lambda r: (403, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                              "message": "go away", "reason": "Forbidden", "code": 403}), 1,
             "go away"),
        ]
        for answer, calls, error in cases:
            authorizer = self.make(answer)
            d = authorizer.authorize(GET_PODS)
            for _ in range(6):
                self.stub.flush()
                self.clock.advance(2)
            self.assertEqual(self.successResultOf(d), (NO_OPINION, "", error))
            self.assertEqual(len(self.hook.reviews), calls, error)
        self.flushLoggedErrors()

    def test_backoff(self) -> None:
        """Retries wait 0.5s, then 1.5 times longer (jitter 0.2), five attempts in all."""
        authorizer = self.make(lambda r: (500, b""), random_source=lambda: 1.0)
        d = authorizer.authorize(GET_PODS)
        self.stub.flush()
        seen = [len(self.hook.reviews)]
        for delay in (0.6, 0.9, 1.35, 2.025):
            self.clock.advance(delay - 0.001)
            self.stub.flush()
            seen.append(len(self.hook.reviews))
            self.clock.advance(0.001)
            self.stub.flush()
        seen.append(len(self.hook.reviews))
        self.assertEqual(seen, [1, 1, 2, 3, 4, 5])
        self.assertEqual(self.successResultOf(d)[0], NO_OPINION)

    def test_timeout_and_deny_policy(self) -> None:
        """No answer within the timeout: the failure policy's decision, Go's timeout text."""
        authorizer = self.make(lambda r: None, decision_on_error=DENY, timeout=3)
        d = authorizer.authorize(GET_PODS)
        self.stub.flush()
        self.assertNoResult(d)
        self.clock.advance(3)
        self.assertEqual(self.successResultOf(d), (
            DENY, "", f'Post "{URL}?timeout=3s": context deadline exceeded'))
        self.assertEqual(len(self.hook.reviews), 1)

    def test_connection_refused(self) -> None:
        """A refused connection is not retried."""
        calls = []

        class Refusing:
            def post(self, url, **kw):
                calls.append(url)
                return defer.fail(internet_error.ConnectionRefusedError())

        authorizer = WebhookAuthorizer(Refusing(), "https://127.0.0.1:9/x", Clock())
        self.assertEqual(self.successResultOf(authorizer.authorize(GET_PODS)), (
            NO_OPINION, "", 'Post "https://127.0.0.1:9/x?timeout=30s": dial tcp 127.0.0.1:9: '
                            "connect: connection refused"))
        self.assertEqual(len(calls), 1)


class KubeconfigTests(SynchronousTestCase):
    """The webhook kubeconfig: current context, files relative to it, inline data."""

    def write(self, name: str, text: str) -> str:
        d = tempfile.mkdtemp()
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", d], check=False))
        p = os.path.join(d, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def test_load(self) -> None:
        p = self.write("kc.yaml", """
apiVersion: v1
kind: Config
clusters:
- name: other
  cluster: {server: https://other.test/}
- name: w
  cluster: {server: "https://authz.test/authorize", certificate-authority-data: QUJD}
users:
- name: u
  user: {token: secret-token, client-certificate: cert.pem}
contexts:
- name: c
  context: {cluster: w, user: u}
current-context: c
""")
        with open(os.path.join(os.path.dirname(p), "cert.pem"), "wb") as f:
            f.write(b"CERT")
        target = load_webhook_kubeconfig(p)
        self.assertEqual((target.server, target.ca_pem, target.token, target.cert_pem),
                         ("https://authz.test/authorize", b"ABC", "secret-token", b"CERT"))

    def test_errors(self) -> None:
        """Item 7: bad kubeconfig files are one-line errors as upstream's."""
        cases = [
            ("apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthorizationConfiguration\n",
             'error loading config file "{p}": no kind "AuthorizationConfiguration" is '
             'registered for version "apiserver.config.k8s.io/v1beta1" in scheme '
             '"k8s.io/client-go/tools/clientcmd/api/latest/latest.go:50"'),
            ("clusters: [\n", 'error loading config file "{p}": yaml: line 1: did not find '
                              "expected node content"),
            ("apiVersion: v1\nkind: Config\n", "invalid configuration: no configuration has "
             "been provided, try setting KUBERNETES_MASTER environment variable"),
        ]
        for text, want in cases:
            p = self.write("kc.yaml", text)
            with self.assertRaises(ValueError) as ctx:
                load_webhook_kubeconfig(p)
            self.assertEqual(str(ctx.exception), want.format(p=p))
        from kubetwist.authorization.webhook import tls_policy_for

        for text, want in (
                ("clusters:\n- cluster: {server: 'https://x', certificate-authority-data: "
                 "QUJD}\n", "unable to load root certificates: unable to parse bytes as PEM "
                             "block"),
                ("clusters:\n- cluster: {server: 'https://x'}\nusers:\n- user: "
                 "{client-certificate-data: QUJD, client-key-data: QUJD}\n",
                 "tls: failed to find any PEM data in key input"),
                ("clusters:\n- cluster: {server: 'https://x', certificate-authority-data: QUJD,"
                 " insecure-skip-tls-verify: true}\n", "specifying a root certificates file "
                                                        "with the insecure flag is not allowed")):
            with self.assertRaises(ValueError) as ctx:
                tls_policy_for(load_webhook_kubeconfig(self.write("kc.yaml", text)))
            self.assertEqual(str(ctx.exception), want)
        with self.assertRaises(ValueError) as ctx:
            load_webhook_kubeconfig("/nonexistent/kc")
        self.assertEqual(str(ctx.exception), "stat /nonexistent/kc: no such file or directory")


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


class RealHTTPSTests(TestCase):
    """One round trip over real TLS on loopback: server verified by CA, client certificate."""

    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp()
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", self.dir], check=False))
        d = self.dir
        j = os.path.join
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                 "-nodes", "-days", "1", "-subj", "/CN=test-ca", "-keyout", j(d, "ca.key"),
                 "-out", j(d, "ca.crt"))
        with open(j(d, "ext"), "w") as f:
            f.write("subjectAltName=IP:127.0.0.1\n")
        for name, cn in (("server", "127.0.0.1"), ("client", "kube-apiserver")):
            _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                     "-nodes", "-subj", f"/CN={cn}", "-keyout", j(d, f"{name}.key"),
                     "-out", j(d, f"{name}.csr"))
            _openssl("x509", "-req", "-in", j(d, f"{name}.csr"), "-CA", j(d, "ca.crt"),
                     "-CAkey", j(d, "ca.key"), "-CAcreateserial", "-days", "1",
                     "-extfile", j(d, "ext"), "-out", j(d, f"{name}.crt"))

    def serve(self, hook):
        from twisted.internet import reactor, ssl
        from twisted.web.server import Site

        j = os.path.join
        with open(j(self.dir, "ca.crt"), "rb") as f:
            ca = ssl.Certificate.loadPEM(f.read())
        with open(j(self.dir, "server.crt"), "rb") as f:
            server_pem = f.read()
        with open(j(self.dir, "server.key"), "rb") as f:
            server_pem += f.read()
        options = ssl.PrivateCertificate.loadPEM(server_pem).options(ca)
        port = reactor.listenSSL(0, Site(hook), options, interface="127.0.0.1")
        self.addCleanup(port.stopListening)
        return port.getHost().port

    @defer.inlineCallbacks
    def test_untrusted_server(self):
        """A server certificate from another CA: no call, Go's x509 error."""
        from twisted.internet import reactor

        from kubetwist.authorization.webhook import WebhookSettings, build

        j = os.path.join
        hook = Hook()
        port = self.serve(hook)
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                 "-nodes", "-days", "1", "-subj", "/CN=other-ca", "-keyout",
                 j(self.dir, "other.key"), "-out", j(self.dir, "other.crt"))
        kc = j(self.dir, "kc.yaml")
        with open(kc, "w") as f:
            f.write(f"clusters:\n- name: w\n  cluster:\n    server: https://127.0.0.1:{port}/a\n"
                    "    certificate-authority: other.crt\n")
        authorizer = build(WebhookSettings(kubeconfig=kc, version="v1", timeout=10), reactor)
        self.addCleanup(lambda: authorizer.client._agent._pool.closeCachedConnections())
        result = yield authorizer.authorize(GET_PODS)
        self.assertEqual(result, (NO_OPINION, "", f'Post "https://127.0.0.1:{port}/a?timeout=10s":'
                                  " tls: failed to verify certificate: x509: certificate signed "
                                  "by unknown authority"))
        self.assertEqual(hook.reviews, [])
        self.flushLoggedErrors()

    @defer.inlineCallbacks
    def test_insecure(self):
        """C{insecure-skip-tls-verify}: the server is not verified."""
        from twisted.internet import reactor

        from kubetwist.authorization.webhook import WebhookSettings, build

        hook = Hook(lambda review: (200, allowed(True, "insecure")))
        port = self.serve(hook)
        kc = os.path.join(self.dir, "kc.yaml")
        with open(kc, "w") as f:
            f.write(f"clusters:\n- name: w\n  cluster:\n    server: https://127.0.0.1:{port}/a\n"
                    "    insecure-skip-tls-verify: true\nusers:\n- user: {client-certificate: "
                    "client.crt, client-key: client.key}\n")
        authorizer = build(WebhookSettings(kubeconfig=kc, version="v1", timeout=10), reactor)
        self.addCleanup(lambda: authorizer.client._agent._pool.closeCachedConnections())
        result = yield authorizer.authorize(GET_PODS)
        self.assertEqual(result, (ALLOW, "insecure"))

    @defer.inlineCallbacks
    def test_no_client_certificate(self):
        """A server that wants a client certificate we do not have: Go's remote error."""
        from twisted.internet import reactor

        from kubetwist.authorization.webhook import WebhookSettings, build

        port = self.serve(Hook())
        kc = os.path.join(self.dir, "kc.yaml")
        with open(kc, "w") as f:
            f.write(f"clusters:\n- name: w\n  cluster:\n    server: https://127.0.0.1:{port}/a\n"
                    "    certificate-authority: ca.crt\n")
        authorizer = build(WebhookSettings(kubeconfig=kc, version="v1", timeout=10), reactor)
        self.addCleanup(lambda: authorizer.client._agent._pool.closeCachedConnections())
        result = yield authorizer.authorize(GET_PODS)
        self.assertEqual(result, (NO_OPINION, "", f'Post "https://127.0.0.1:{port}/a?timeout=10s":'
                                  " remote error: tls: certificate required"))
        self.flushLoggedErrors()

    @defer.inlineCallbacks
    def test_round_trip(self):
        from twisted.internet import reactor, ssl
        from twisted.web.server import Site

        from kubetwist.authorization.webhook import WebhookSettings, build

        j = os.path.join
        with open(j(self.dir, "ca.crt"), "rb") as f:
            ca = ssl.Certificate.loadPEM(f.read())
        with open(j(self.dir, "server.crt"), "rb") as f:
            server_pem = f.read()
        with open(j(self.dir, "server.key"), "rb") as f:
            server_pem += f.read()
        seen_peers: list = []

        def answer(review):
            return 200, allowed(review["spec"].get("user") == "jane", "by hook", version="v1")

        hook = Hook(answer)
        original = hook.render_POST

        def render(request):
            cert = request.transport.getPeerCertificate()
            seen_peers.append(cert.get_subject().CN if cert is not None else None)
            return original(request)

        hook.render_POST = render
        options = ssl.PrivateCertificate.loadPEM(server_pem).options(ca)
        port = reactor.listenSSL(0, Site(hook), options, interface="127.0.0.1")
        self.addCleanup(port.stopListening)
        kc = j(self.dir, "kc.yaml")
        with open(kc, "w") as f:
            f.write(f"""
apiVersion: v1
kind: Config
clusters:
- name: w
  cluster:
    server: https://127.0.0.1:{port.getHost().port}/authorize
    certificate-authority: ca.crt
users:
- name: u
  user: {{client-certificate: client.crt, client-key: client.key}}
contexts:
- name: c
  context: {{cluster: w, user: u}}
current-context: c
""")
        authorizer = build(WebhookSettings(kubeconfig=kc, version="v1", timeout=10), reactor)
        self.addCleanup(lambda: authorizer.client._agent._pool.closeCachedConnections())
        result = yield authorizer.authorize(GET_PODS)
        self.assertEqual(result, (ALLOW, "by hook"))
        self.assertEqual(seen_peers, ["kube-apiserver"])
