# -*- test-case-name: tests.admission.test_webhook -*-
"""
Tests for L{kubetwist.admission.plugins.webhook}: matching (rules, selectors, match
conditions, equivalent versions), AdmissionReview v1 and v1beta1, JSONPatch answers and
reinvocation, failure policies, dry runs, warnings, annotations and upstream's messages, with
a fake HTTPS client (no network).
"""

from __future__ import annotations

import base64
import json
from typing import Any, Callable, Optional

from twisted.internet.defer import Deferred, succeed
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.admission.chain import AdmissionChain
from kubetwist.admission.interfaces import Attributes
from kubetwist.admission.plugins.webhook import MutatingWebhook, ValidatingWebhook
from kubetwist.admission.plugins.webhook.dispatch import Dispatcher
from kubetwist.admission.plugins.webhook.matching import is_exempt, rule_matches
from kubetwist.admission.plugins.webhook.metrics import WebhookMetrics
from kubetwist.admission.plugins.webhook.review import to_status_error, verify_response
from kubetwist.admission.plugins.webhook.source import WebhookAccessor
from kubetwist.authentication.user import UserInfo
from kubetwist.egress.client import Endpoint
from kubetwist.registry.rest import ResourceSpec
from kubetwist.runtime import errors
from tests.support import KubeTestCase

CM = ResourceSpec("", "v1", "configmaps", "ConfigMap", "configmap")
DEPLOY = ResourceSpec("apps", "v1", "deployments", "Deployment", "deployment")
NS = ResourceSpec("", "v1", "namespaces", "Namespace", "namespace", namespaced=False)


class _Response:
    def __init__(self, code: int, body: bytes) -> None:
        self.code = code
        self.body = body

    def content(self) -> Deferred:
        return succeed(self.body)


class FakeClients:
    """C{for_config} of L{EgressClients}; C{answer(path, review) -> (code, body) | Deferred |
    exception}."""

    def __init__(self, answer: Callable[[str, dict], Any]) -> None:
        self.answer = answer
        self.sent: list[tuple[str, dict]] = []

    async def for_config(self, cc: dict) -> tuple[Endpoint, Any]:
        return Endpoint(cc["url"], "hook.test"), self

    def post(self, url: str, data: bytes, headers: dict) -> Any:
        path = url.split("://", 1)[1].split("/", 1)[1].split("?")[0]
        review = json.loads(data)
        self.sent.append(("/" + path, review))
        result = self.answer("/" + path, review)
        if isinstance(result, Deferred):
            return result
        if isinstance(result, BaseException):
            raise result
        code, body = result
        return succeed(_Response(code, body))


def allow(review: dict, **extra: Any) -> tuple[int, bytes]:
    response = {"uid": review["request"]["uid"], "allowed": True}
    response.update(extra)
    return 200, json.dumps({"apiVersion": review["apiVersion"], "kind": "AdmissionReview",
                            "response": response}).encode()


def patch_answer(review: dict, ops: list) -> tuple[int, bytes]:
    return allow(review, patch=base64.b64encode(json.dumps(ops).encode()).decode(),
                 patchType="JSONPatch")


class FakeSource:
    def __init__(self, hooks: list) -> None:
        self.hooks = hooks
        self.synced = True

    def webhooks(self) -> list:
        return self.hooks


class FakeScheme:
    """Equivalents and conversions over a table C{{gvr: kind}} sharing one storage; objects
    carry their version in C{apiVersion} only (conversion rewrites it)."""

    def __init__(self, kinds: Optional[dict] = None) -> None:
        self.kinds = kinds or {}
        self.defaulted: list = []

    def equivalents(self, gvr: tuple, subresource: str) -> list:
        if gvr not in self.kinds:
            return []
        return [(g, (g[0], g[1], k)) for g, k in self.kinds.items() if g[2] == gvr[2]]

    async def convert(self, obj: Any, source: tuple, target: tuple) -> Any:
        if obj is None or source == target:
            return obj
        out = dict(obj)
        out["apiVersion"] = f"{target[0]}/{target[1]}" if target[0] else target[1]
        return out

    def default(self, gvr: tuple, obj: dict) -> None:
        self.defaulted.append(gvr)

    def prune(self, gvr: tuple, obj: dict) -> None:
        obj.pop("pruned", None)


def hook(name: str, path: str, mutating: bool = False, uid: str = "", **fields: Any) -> Any:
    h = {"name": name, "clientConfig": {"url": f"https://hook.test{path}"},
         "rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"],
                    "resources": ["*"]}],
         "sideEffects": "None", "admissionReviewVersions": ["v1"]}
    h.update(fields)
    return WebhookAccessor(uid or f"cfg/{name}/0", "cfg", h, mutating)


class _Shared:
    def __init__(self, dispatcher: Dispatcher, clock: Clock, hooks: list, mutating: bool):
        self.dispatcher = dispatcher
        self.clock = clock
        self.sources = {mutating: FakeSource(hooks)}


class WebhookTestCase(SynchronousTestCase):
    def setUp(self) -> None:
        self.clock = Clock()
        self.metrics = WebhookMetrics()
        self.namespaces = {"default": {"team": "a"}}
        self.scheme = FakeScheme()

    async def _labels(self, name: str) -> dict:
        if name not in self.namespaces:
            raise errors.new_not_found("", "namespaces", name)
        return self.namespaces[name]

    def plugins(self, answer: Callable, hooks: list, mutating: bool = False) -> Any:
        self.clients = FakeClients(answer)
        dispatcher = Dispatcher(self.clients, self.clock, self.scheme, self._labels,
                                self.metrics)
        cls = MutatingWebhook if mutating else ValidatingWebhook
        return cls(_Shared(dispatcher, self.clock, hooks, mutating))

    def attrs(self, operation: str = "CREATE", spec: ResourceSpec = CM, obj: Any = "default",
              old: Any = None, namespace: str = "default", name: str = "x",
              dry_run: bool = False, subresource: str = "") -> Attributes:
        if obj == "default":
            obj = {"apiVersion": spec.api_version, "kind": spec.kind,
                   "metadata": {"name": name, "labels": {"app": "web"}}}
        return Attributes.for_spec(operation, spec, subresource, namespace, name, obj, old,
                                   UserInfo("alice", "u1", ["devs"]), dry_run,
                                   {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"})

    def call(self, plugin: Any, a: Attributes) -> Any:
        method = plugin.admit if isinstance(plugin, MutatingWebhook) else plugin.validate
        return Deferred.fromCoroutine(method(a))

    def refusal(self, plugin: Any, a: Attributes) -> errors.StatusError:
        return self.failureResultOf(self.call(plugin, a), errors.StatusError).value


class RuleTests(SynchronousTestCase):
    def rule(self, **kw: Any) -> dict:
        r = {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
             "resources": ["pods"]}
        r.update(kw)
        return r

    def test_operations_groups_versions(self) -> None:
        gvr = ("", "v1", "pods")
        self.assertTrue(rule_matches(self.rule(), "CREATE", gvr, "", "ns"))
        self.assertFalse(rule_matches(self.rule(), "UPDATE", gvr, "", "ns"))
        self.assertTrue(rule_matches(self.rule(operations=["*"]), "DELETE", gvr, "", "ns"))
        self.assertFalse(rule_matches(self.rule(), "CREATE", ("apps", "v1", "pods"), "", "ns"))
        self.assertFalse(rule_matches(self.rule(), "CREATE", ("", "v2", "pods"), "", "ns"))
        self.assertTrue(rule_matches(self.rule(apiGroups=["*"], apiVersions=["*"]), "CREATE",
                                     ("apps", "v2", "pods"), "", "ns"))

    def test_resources_and_subresources(self) -> None:
        gvr = ("", "v1", "pods")
        self.assertFalse(rule_matches(self.rule(), "CREATE", gvr, "status", "ns"))
        self.assertTrue(rule_matches(self.rule(resources=["pods/status"]), "CREATE", gvr,
                                     "status", "ns"))
        self.assertFalse(rule_matches(self.rule(resources=["pods/status"]), "CREATE", gvr, "",
                                      "ns"))
        self.assertTrue(rule_matches(self.rule(resources=["*"]), "CREATE", gvr, "", "ns"))
        self.assertFalse(rule_matches(self.rule(resources=["*"]), "CREATE", gvr, "log", "ns"))
        self.assertTrue(rule_matches(self.rule(resources=["*/*"]), "CREATE", gvr, "log", "ns"))
        self.assertTrue(rule_matches(self.rule(resources=["pods/*"]), "CREATE", gvr, "exec",
                                     "ns"))
        self.assertTrue(rule_matches(self.rule(resources=["*/status"]), "CREATE", gvr,
                                     "status", "ns"))

    def test_scope(self) -> None:
        pods, nss = ("", "v1", "pods"), ("", "v1", "namespaces")
        rule = self.rule(resources=["*"], scope="Namespaced")
        self.assertTrue(rule_matches(rule, "CREATE", pods, "", "ns"))
        self.assertFalse(rule_matches(rule, "CREATE", pods, "", ""))
        self.assertFalse(rule_matches(rule, "CREATE", nss, "", "ns"))
        rule = self.rule(resources=["*"], scope="Cluster")
        self.assertFalse(rule_matches(rule, "CREATE", pods, "", "ns"))
        self.assertTrue(rule_matches(rule, "CREATE", nss, "", "ns"))
        self.assertTrue(rule_matches(rule, "CREATE", ("", "v1", "nodes"), "", ""))

    def test_exempt(self) -> None:
        self.assertTrue(is_exempt("admissionregistration.k8s.io",
                                  "ValidatingWebhookConfiguration"))
        self.assertTrue(is_exempt("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"))
        self.assertFalse(is_exempt("", "ConfigMap"))


class ReviewTests(SynchronousTestCase):
    def test_status_error(self) -> None:
        """Upstream C{ToStatusErr}: at least 400, Failure, the message prefixed."""
        e = to_status_error("h", {"code": 200, "message": "nope"})
        self.assertEqual(e.status, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                    "status": "Failure", "message":
                                    'admission webhook "h" denied the request: nope',
                                    "code": 400})
        e = to_status_error("h", {"code": 422, "reason": "Invalid", "details": {"x": 1}})
        self.assertEqual((e.code, e.reason, e.message, e.status["details"]),
                         (422, "Invalid", 'admission webhook "h" denied the request: Invalid',
                          {"x": 1}))
        self.assertEqual(to_status_error("h", None).message,
                         'admission webhook "h" denied the request without explanation')

    def test_verify_v1(self) -> None:
        good = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "response": {"uid": "u", "allowed": True}}
        self.assertTrue(verify_response("u", "v1", False, good)["allowed"])
        for review, text in [
            ({}, "webhook response was absent"),
            (dict(good, response={"uid": "v", "allowed": True}),
             'expected response.uid="u", got "v"'),
            (dict(good, apiVersion="admission.k8s.io/v1beta1"),
             "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got "
             "admission.k8s.io/v1beta1, Kind=AdmissionReview"),
            (dict(good, response={"uid": "u", "allowed": True, "patch": "W10="}),
             "validating webhook may not return response.patch"),
        ]:
            with self.assertRaises(ValueError) as cm:
                verify_response("u", "v1", False, review)
            self.assertEqual(str(cm.exception), text)
        with self.assertRaises(ValueError) as cm:
            verify_response("u", "v1", True, {**good, "response": {
                "uid": "u", "allowed": True, "patch": "W10="}})
        self.assertEqual(str(cm.exception),
                         "webhook returned response.patch but not response.patchType")

    def test_verify_v1beta1(self) -> None:
        """v1beta1 answers are not checked for uid or kind; a patch is a JSONPatch."""
        out = verify_response("u", "v1beta1", True, {"response": {"allowed": True,
                                                                  "patch": "W10="}})
        self.assertEqual((out["patch"], out["patchType"]), (b"[]", "JSONPatch"))


class ValidatingTests(WebhookTestCase):
    def test_review_sent(self) -> None:
        """The AdmissionReview carries upstream's request fields."""
        plugin = self.plugins(lambda p, r: allow(r), [hook("h", "/v")])
        self.successResultOf(self.call(plugin, self.attrs()))
        path, review = self.clients.sent[0]
        req = review["request"]
        self.assertEqual(review["apiVersion"], "admission.k8s.io/v1")
        self.assertEqual(req["kind"], {"group": "", "version": "v1", "kind": "ConfigMap"})
        self.assertEqual(req["requestResource"], {"group": "", "version": "v1",
                                                  "resource": "configmaps"})
        self.assertEqual((req["name"], req["namespace"], req["operation"], req["dryRun"]),
                         ("x", "default", "CREATE", False))
        self.assertEqual(req["userInfo"], {"username": "alice", "uid": "u1",
                                           "groups": ["devs"]})
        self.assertEqual(req["object"]["metadata"]["name"], "x")
        self.assertIsNone(req["oldObject"])
        self.assertEqual(req["options"]["kind"], "CreateOptions")

    def test_v1beta1_only(self) -> None:
        """A webhook listing only v1beta1 gets (and may answer) a v1beta1 review."""
        plugin = self.plugins(lambda p, r: (200, json.dumps({"response": {"allowed": True}})
                                            .encode()),
                              [hook("h", "/v", admissionReviewVersions=["v1beta1"])])
        self.successResultOf(self.call(plugin, self.attrs()))
        self.assertEqual(self.clients.sent[0][1]["apiVersion"], "admission.k8s.io/v1beta1")

    def test_denied(self) -> None:
        plugin = self.plugins(lambda p, r: allow(r, allowed=False, status={
            "code": 403, "reason": "Forbidden", "message": "no"}), [hook("h.example", "/v")])
        e = self.refusal(plugin, self.attrs())
        self.assertEqual((e.code, e.reason, e.message),
                         (403, "Forbidden", 'admission webhook "h.example" denied the request: no'))

    def test_concurrent_first_refusal_wins(self) -> None:
        """Every matching webhook is called at once; the first refusal in order is the
        error."""
        pending: dict[str, Deferred] = {}

        def answer(path: str, review: dict) -> Any:
            d: Deferred = Deferred()
            pending[path] = d
            return d

        plugin = self.plugins(answer, [hook("a", "/a"), hook("b", "/b")])
        d = self.call(plugin, self.attrs())
        self.assertEqual(sorted(pending), ["/a", "/b"])
        for path, name in (("/b", "b"), ("/a", "a")):
            code, body = allow({"apiVersion": "admission.k8s.io/v1",
                                "request": self.clients.sent[0 if path == "/a" else 1][1]
                                ["request"]}, allowed=False, status={"message": name})
            pending[path].callback(_Response(code, body))
        self.assertEqual(self.failureResultOf(d, errors.StatusError).value.message,
                         'admission webhook "a" denied the request: a')

    def test_failure_policies(self) -> None:
        """A webhook that cannot be called: Ignore lets the request through (a fail-open
        annotation), Fail refuses it with upstream's 500."""
        from twisted.internet.error import ConnectionRefusedError

        down = lambda p, r: ConnectionRefusedError()  # noqa: E731
        plugin = self.plugins(down, [hook("h", "/v", failurePolicy="Ignore")])
        a = self.attrs()
        self.successResultOf(self.call(plugin, a))
        self.assertEqual(a.annotations, {
            "failed-open.validating.webhook.admission.k8s.io/round_0_index_0": "h"})
        plugin = self.plugins(down, [hook("h", "/v")])
        e = self.refusal(plugin, self.attrs())
        self.assertEqual((e.code, e.reason), (500, "InternalError"))
        self.assertEqual(e.message, 'Internal error occurred: failed calling webhook "h": '
                         'failed to call webhook: Post "https://hook.test/v?timeout=10s": '
                         "dial tcp hook.test:443: connect: connection refused")

    def test_timeout(self) -> None:
        """A webhook slower than C{timeoutSeconds}: C{context deadline exceeded}."""
        plugin = self.plugins(lambda p, r: Deferred(), [hook("h", "/v", timeoutSeconds=2)])
        d = self.call(plugin, self.attrs())
        self.assertNoResult(d)
        self.clock.advance(2)
        self.assertEqual(self.failureResultOf(d, errors.StatusError).value.message,
                         'Internal error occurred: failed calling webhook "h": failed to call '
                         'webhook: Post "https://hook.test/v?timeout=2s": context deadline '
                         "exceeded")

    def test_invalid_answers(self) -> None:
        for answer, text in [
            (lambda p, r: (200, b"[1]"), "failed to call webhook: couldn't get version/kind; "
             "json parse error: json: cannot unmarshal array into Go value of type struct"),
            (lambda p, r: (200, json.dumps({"apiVersion": "admission.k8s.io/v1",
                                            "kind": "AdmissionReview",
                                            "response": {"uid": "x"}}).encode()),
             'received invalid webhook response: expected response.uid="'),
            (lambda p, r: (500, b"boom"), 'failed to call webhook: an error on the server '
             '("boom") has prevented the request from succeeding'),
        ]:
            plugin = self.plugins(answer, [hook("h", "/v")])
            e = self.refusal(plugin, self.attrs())
            self.assertIn(f'failed calling webhook "h": {text}', e.message)

    def test_dry_run_side_effects(self) -> None:
        """A dry run is refused for webhooks with side effects, sent to the others."""
        plugin = self.plugins(lambda p, r: allow(r), [hook("h", "/v", sideEffects="Unknown")])
        e = self.refusal(plugin, self.attrs(dry_run=True))
        self.assertEqual((e.code, e.message),
                         (400, 'admission webhook "h" does not support dry run'))
        self.assertEqual(self.clients.sent, [])
        plugin = self.plugins(lambda p, r: allow(r), [hook("h", "/v",
                                                           sideEffects="NoneOnDryRun")])
        self.successResultOf(self.call(plugin, self.attrs(dry_run=True)))
        self.assertTrue(self.clients.sent[0][1]["request"]["dryRun"])

    def test_warnings_and_annotations(self) -> None:
        plugin = self.plugins(lambda p, r: allow(r, warnings=["careful"],
                                                 auditAnnotations={"k": "v"}),
                              [hook("h", "/v")])
        a = self.attrs()
        self.successResultOf(self.call(plugin, a))
        self.assertEqual(a.warnings, ["careful"])
        self.assertEqual(a.annotations, {"h/k": "v"})

    def test_selectors(self) -> None:
        """namespaceSelector reads the namespace's labels (the object's own for a
        namespace); objectSelector the new or old object's labels."""
        hooks = [hook("ns", "/ns", namespaceSelector={"matchLabels": {"team": "a"}}),
                 hook("other", "/other", namespaceSelector={"matchLabels": {"team": "b"}}),
                 hook("obj", "/obj", objectSelector={"matchLabels": {"app": "db"}})]
        plugin = self.plugins(lambda p, r: allow(r), hooks)
        self.successResultOf(self.call(plugin, self.attrs()))
        self.assertEqual([p for p, _ in self.clients.sent], ["/ns"])
        self.clients.sent.clear()
        old = {"metadata": {"name": "x", "labels": {"app": "db"}}}
        self.successResultOf(self.call(plugin, self.attrs("UPDATE", old=old)))
        self.assertEqual(sorted(p for p, _ in self.clients.sent), ["/ns", "/obj"])
        self.clients.sent.clear()
        nsobj = {"metadata": {"name": "new", "labels": {"team": "b"}}}
        self.successResultOf(self.call(plugin, self.attrs(spec=NS, obj=nsobj, namespace="",
                                                         name="new")))
        self.assertEqual([p for p, _ in self.clients.sent], ["/other"])
        self.assertNotIn("namespace", self.clients.sent[0][1]["request"])
        self.clients.sent.clear()
        self.namespaces["new"] = {"team": "a"}
        self.successResultOf(self.call(plugin, self.attrs("DELETE", spec=NS, obj=nsobj,
                                                          old=nsobj, namespace="", name="new")))
        self.assertEqual([p for p, _ in self.clients.sent], ["/ns"])
        self.assertEqual(self.clients.sent[0][1]["request"]["namespace"], "new")

    def test_missing_namespace(self) -> None:
        plugin = self.plugins(lambda p, r: allow(r), [
            hook("ns", "/ns", namespaceSelector={"matchLabels": {"team": "a"}})])
        e = self.refusal(plugin, self.attrs(namespace="gone"))
        self.assertEqual((e.code, e.message), (404, 'namespaces "gone" not found'))

    def test_match_conditions(self) -> None:
        """A false condition skips the webhook; an error refuses under Fail (403), skips
        under Ignore."""
        conditions = [{"name": "web", "expression": "object.metadata.labels.app == 'web'"}]
        plugin = self.plugins(lambda p, r: allow(r), [
            hook("h", "/v", matchConditions=conditions)])
        self.successResultOf(self.call(plugin, self.attrs()))
        self.assertEqual(len(self.clients.sent), 1)
        obj = {"metadata": {"name": "x", "labels": {"app": "db"}}}
        self.successResultOf(self.call(plugin, self.attrs(obj=obj)))
        self.assertEqual(len(self.clients.sent), 1)
        bad = [{"name": "bad", "expression": "object.metadata.nothere == 'x'"}]
        plugin = self.plugins(lambda p, r: allow(r), [hook("h", "/v", matchConditions=bad)])
        e = self.refusal(plugin, self.attrs())
        self.assertEqual((e.code, e.message), (
            403, 'configmaps "x" is forbidden: expression \'object.metadata.nothere == \'x\'\' '
                 "resulted in error: no such key: nothere"))
        plugin = self.plugins(lambda p, r: allow(r), [
            hook("h", "/v", matchConditions=bad, failurePolicy="Ignore")])
        self.successResultOf(self.call(plugin, self.attrs()))
        self.assertEqual(self.clients.sent, [])

    def test_equivalent_versions(self) -> None:
        """matchPolicy Equivalent sends a request on another version of the same resource
        in the webhook's version; Exact does not."""
        self.scheme = FakeScheme({("apps", "v1", "deployments"): "Deployment",
                                  ("apps", "v1beta2", "deployments"): "Deployment"})
        rules = [{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1beta2"],
                  "resources": ["deployments"]}]
        plugin = self.plugins(lambda p, r: allow(r), [hook("h", "/v", rules=rules),
                                                      hook("e", "/e", rules=rules,
                                                           matchPolicy="Exact")])
        self.successResultOf(self.call(plugin, self.attrs(spec=DEPLOY)))
        self.assertEqual([p for p, _ in self.clients.sent], ["/v"])
        req = self.clients.sent[0][1]["request"]
        self.assertEqual(req["kind"]["version"], "v1beta2")
        self.assertEqual(req["requestKind"]["version"], "v1")
        self.assertEqual(req["object"]["apiVersion"], "apps/v1beta2")

    def test_metrics(self) -> None:
        plugin = self.plugins(lambda p, r: allow(r, allowed=False), [hook("h", "/v")])
        self.refusal(plugin, self.attrs())
        from prometheus_client import generate_latest

        text = generate_latest(self.metrics.registry).decode()
        self.assertIn('apiserver_admission_webhook_request_total{code="400",name="h",'
                      'operation="CREATE",rejected="true",type="validating"} 1.0', text)
        self.assertIn('apiserver_admission_webhook_rejection_count{error_type="no_error",'
                      'name="h",operation="CREATE",rejection_code="400",type="validating"} 1.0',
                      text)


class MutatingTests(WebhookTestCase):
    def test_patch_applied(self) -> None:
        """A JSONPatch answer changes the object in place; patch and mutation annotations
        are added; the object is defaulted."""
        plugin = self.plugins(lambda p, r: patch_answer(r, [
            {"op": "add", "path": "/data", "value": {"k": "v"}}]), [hook("m", "/m", True)],
            mutating=True)
        a = self.attrs()
        obj = a.object
        self.successResultOf(self.call(plugin, a))
        self.assertIs(a.object, obj)
        self.assertEqual(obj["data"], {"k": "v"})
        self.assertEqual(json.loads(a.annotations[
            "mutation.webhook.admission.k8s.io/round_0_index_0"]),
            {"configuration": "cfg", "webhook": "m", "mutated": True})
        self.assertIn("patch.webhook.admission.k8s.io/round_0_index_0", a.annotations)
        self.assertEqual(self.scheme.defaulted, [("", "v1", "configmaps")])

    def test_patch_breaking_the_schema(self) -> None:
        """A patched object that does not decode as the kind is a 500; unknown fields are
        dropped."""
        plugin = self.plugins(lambda p, r: patch_answer(r, [
            {"op": "add", "path": "/data", "value": 42}]), [hook("m", "/m", True)],
            mutating=True)
        e = self.refusal(plugin, self.attrs())
        self.assertEqual((e.code, e.message), (
            500, "Internal error occurred: json: cannot unmarshal number into Go struct field "
                 "ConfigMap.data of type map[string]string"))
        plugin = self.plugins(lambda p, r: patch_answer(r, [
            {"op": "add", "path": "/unknown", "value": 1}]), [hook("m", "/m", True)],
            mutating=True)
        a = self.attrs()
        self.successResultOf(self.call(plugin, a))
        self.assertNotIn("unknown", a.object)

    def test_patch_failing(self) -> None:
        plugin = self.plugins(lambda p, r: patch_answer(r, [
            {"op": "remove", "path": "/spec/nothere"}]), [hook("m", "/m", True)],
            mutating=True)
        e = self.refusal(plugin, self.attrs())
        self.assertEqual(e.code, 500)
        self.assertTrue(e.message.startswith("Internal error occurred: "), e.message)

    def test_patch_on_delete(self) -> None:
        plugin = self.plugins(lambda p, r: patch_answer(r, [
            {"op": "add", "path": "/data", "value": {}}]), [hook("m", "/m", True)],
            mutating=True)
        obj = {"metadata": {"name": "x"}}
        e = self.refusal(plugin, self.attrs("DELETE", obj=obj, old=obj))
        self.assertEqual(e.message, 'Internal error occurred: admission webhook "m" attempted '
                         "to modify the object, which is not supported for this operation")
        self.assertIsNone(self.clients.sent[0][1]["request"]["object"])

    def test_reinvocation(self) -> None:
        """In the chain, a webhook with C{reinvocationPolicy: IfNeeded} is called again when
        a later webhook changed the object, and sees the change; without it, it is not."""
        def answer(path: str, review: dict) -> Any:
            labels = review["request"]["object"]["metadata"].get("labels") or {}
            if path == "/a":
                return patch_answer(review, [{"op": "add", "path": "/metadata/labels/a",
                                              "value": labels.get("b", "none")}])
            return patch_answer(review, [{"op": "add", "path": "/metadata/labels/b",
                                          "value": "set"}])

        for policy, calls, value in (("IfNeeded", 2, "set"), ("Never", 1, "none")):
            plugin = self.plugins(answer, [
                hook("a", "/a", True, reinvocationPolicy=policy), hook("b", "/b", True)],
                mutating=True)
            chain = AdmissionChain([plugin])
            a = self.attrs()
            self.successResultOf(Deferred.fromCoroutine(chain.admit(a)))
            self.assertEqual([p for p, _ in self.clients.sent].count("/a"), calls)
            self.assertEqual(a.object["metadata"]["labels"],
                             {"app": "web", "a": value, "b": "set"})


class ServerTests(KubeTestCase):
    """Through the whole server: a configuration written through the API is in force for
    the next request (watched), its refusal is the response, its warnings are headers, and
    writes of the configuration kinds are never sent to webhooks."""

    def setUp(self) -> None:
        super().setUp()
        shared = self.kube.admission_context._admission_webhooks
        self.answers: dict[str, Callable] = {}
        self.clients = FakeClients(lambda path, review: self.answers[path](review))
        shared.dispatcher.clients = self.clients

    def configure(self, kind: str, *hooks: dict) -> None:
        code, body, _ = self.request(
            "POST", f"/apis/admissionregistration.k8s.io/v1/{kind.lower()}s",
            {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
             "metadata": {"name": "cfg"}, "webhooks": list(hooks)})
        self.assertEqual(code, 201, body)

    def webhook(self, name: str, path: str) -> dict:
        return {"name": name, "clientConfig": {"url": f"https://hook.test{path}"},
                "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                           "apiVersions": ["v1"], "resources": ["configmaps"]}],
                "sideEffects": "None", "admissionReviewVersions": ["v1"]}

    def test_validating(self) -> None:
        self.answers["/v"] = lambda r: allow(r, allowed=False, warnings=["w1"],
                                             status={"code": 409, "message": "taken"})
        self.configure("ValidatingWebhookConfiguration", self.webhook("v.example.com", "/v"))
        code, body, response = self.request(
            "POST", "/api/v1/namespaces/default/configmaps",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
        self.assertEqual((code, body["message"]),
                         (409, 'admission webhook "v.example.com" denied the request: taken'))
        self.assertEqual(response.headers.getRawHeaders("Warning"), ['299 - "w1"'])
        code, _, _ = self.request("GET", "/api/v1/namespaces/default/configmaps/c")
        self.assertEqual(code, 404)
        review = self.clients.sent[0][1]["request"]
        self.assertEqual(review["object"]["metadata"]["namespace"], "default")
        self.assertEqual(len(self.clients.sent), 1)
        # a changed configuration is in force for the next request, a deleted one is gone
        path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/cfg"
        code, cfg, _ = self.request("GET", path)
        cfg["webhooks"][0]["rules"][0]["operations"] = ["UPDATE"]
        self.assertEqual(self.request("PUT", path, cfg)[0], 200)
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
        code, stored, _ = self.request("POST", "/api/v1/namespaces/default/configmaps", cm)
        self.assertEqual(code, 201, stored)
        code, body, _ = self.request("PUT", "/api/v1/namespaces/default/configmaps/c", stored)
        self.assertEqual(code, 409, body)
        self.assertEqual(self.request("DELETE", path)[0], 200)
        code, body, _ = self.request("PUT", "/api/v1/namespaces/default/configmaps/c", stored)
        self.assertEqual(code, 200, body)
        self.assertEqual(len(self.clients.sent), 2)

    def test_mutating(self) -> None:
        self.answers["/m"] = lambda r: patch_answer(r, [
            {"op": "add", "path": "/data", "value": {"from": "webhook"}}])
        self.configure("MutatingWebhookConfiguration", self.webhook("m.example.com", "/m"))
        code, body, _ = self.request(
            "POST", "/api/v1/namespaces/default/configmaps",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
        self.assertEqual((code, body["data"]), (201, {"from": "webhook"}))

    def test_equivalent_version(self) -> None:
        """A webhook for C{autoscaling/v2} HPAs sees a C{autoscaling/v1} create converted to
        v2 (matchPolicy Equivalent, the default); its patch comes back converted to v1."""
        hook = self.webhook("hpa.example.com", "/hpa")
        hook["rules"] = [{"operations": ["CREATE"], "apiGroups": ["autoscaling"],
                          "apiVersions": ["v2"], "resources": ["horizontalpodautoscalers"]}]
        self.answers["/hpa"] = lambda r: patch_answer(r, [
            {"op": "replace", "path": "/spec/maxReplicas", "value": 7}])
        self.configure("MutatingWebhookConfiguration", hook)
        code, body, _ = self.request(
            "POST", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers",
            {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
             "metadata": {"name": "h"},
             "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                         "name": "web"},
                      "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}})
        self.assertEqual(code, 201, body)
        self.assertEqual((body["apiVersion"], body["spec"]["maxReplicas"]),
                         ("autoscaling/v1", 7))
        self.assertEqual(body["spec"]["targetCPUUtilizationPercentage"], 50)
        req = self.clients.sent[0][1]["request"]
        self.assertEqual((req["kind"]["version"], req["requestKind"]["version"]), ("v2", "v1"))
        self.assertEqual(req["object"]["apiVersion"], "autoscaling/v2")
        self.assertEqual(req["object"]["spec"]["metrics"][0]["resource"]["name"], "cpu")

    def test_custom_resource_pruned(self) -> None:
        """Fields a webhook adds to a custom resource that its schema does not know are
        dropped; known ones are kept."""
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "widgets.example.com"},
               "spec": {"group": "example.com", "scope": "Namespaced",
                        "names": {"plural": "widgets", "singular": "widget",
                                  "kind": "Widget"},
                        "versions": [{"name": "v1", "served": True, "storage": True,
                                      "schema": {"openAPIV3Schema": {
                                          "type": "object", "properties": {"spec": {
                                              "type": "object", "properties": {
                                                  "size": {"type": "integer"}}}}}}}]}}
        code, body, _ = self.request(
            "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        self.assertEqual(code, 201, body)
        self.clock.advance(1)
        hook = self.webhook("widgets.example.com", "/w")
        hook["rules"] = [{"operations": ["CREATE"], "apiGroups": ["example.com"],
                          "apiVersions": ["v1"], "resources": ["widgets"]}]
        self.answers["/w"] = lambda r: patch_answer(r, [
            {"op": "add", "path": "/spec", "value": {"size": 3, "color": "red"}}])
        self.configure("MutatingWebhookConfiguration", hook)
        code, body, _ = self.request(
            "POST", "/apis/example.com/v1/namespaces/default/widgets",
            {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
        self.assertEqual(code, 201, body)
        self.assertEqual(body["spec"], {"size": 3})
