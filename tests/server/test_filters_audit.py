"""
The audit filters in the real chain (L{kubetwist.server.filters.audit}): the events of each
level and stage, the objects the handlers log, the annotations of authorization and
admission, failed authentication, impersonated users, long-running requests, panics.
"""

from __future__ import annotations

import json

from twisted.internet import defer

from kubetwist.audit import AuditConfig
from kubetwist.audit.event import encode_event
from kubetwist.audit.policy import load_policy
from kubetwist.authentication.user import UserInfo
from kubetwist.server.filters import audit as audit_filter
from kubetwist.server.filters.context import context_of
from tests.support import KubeTestCase

POLICY = b"""
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: []
rules:
- level: None
  resources: [{group: "", resources: ["events"]}]
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"]}]
- level: Request
  resources: [{group: "apps", resources: ["deployments"]}]
  omitStages: ["RequestReceived"]
- level: Metadata
  verbs: ["get", "list", "watch", "delete"]
- level: None
"""


class MemoryBackend:
    """Keeps the events (through their JSON encoding, as a backend sees them)."""

    def __init__(self, accept: bool = True) -> None:
        self.events: list[dict] = []
        self.accept = accept

    def process_events(self, events):
        self.events.extend(json.loads(encode_event(e)) for e in events)
        return self.accept

    def run(self):
        pass

    def shutdown(self):
        pass


def stages(events):
    return [(e["stage"], e["verb"], e["level"]) for e in events]


CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1"}}
DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
    "spec": {"selector": {"matchLabels": {"a": "b"}},
             "template": {"metadata": {"labels": {"a": "b"}},
                          "spec": {"containers": [{"name": "c", "image": "i"}]}}}}


class AuditFilterTests(KubeTestCase):
    policy = POLICY

    def setUp(self):
        self.backend = MemoryBackend()
        self.audit = AuditConfig(load_policy(self.policy), self.backend)
        super().setUp()

    def test_request_response_level(self):
        """C{RequestResponse}: RequestReceived then ResponseComplete; the request object as
        decoded and defaulted, the response object, the responseStatus code, the
        authorization annotations, objectRef completed from the object."""
        code, _, resp = self.request("POST", "/api/v1/namespaces/default/configmaps", CM,
                                     headers={"User-Agent": "kubectl/v1.32.0"})
        self.assertEqual(code, 201)
        events = self.backend.events
        self.assertEqual(stages(events), [("RequestReceived", "create", "RequestResponse"),
                                          ("ResponseComplete", "create", "RequestResponse")])
        received, complete = events
        self.assertEqual(list(received), [
            "kind", "apiVersion", "level", "auditID", "stage", "requestURI", "verb", "user",
            "sourceIPs", "userAgent", "objectRef", "requestReceivedTimestamp",
            "stageTimestamp"])
        self.assertEqual(received["objectRef"], {"resource": "configmaps",
                                                 "namespace": "default", "apiVersion": "v1"})
        self.assertEqual(received["requestReceivedTimestamp"], received["stageTimestamp"])
        self.assertRegex(complete["stageTimestamp"],
                         r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
        self.assertEqual(complete["auditID"], resp.headers.getRawHeaders("Audit-Id")[0])
        self.assertEqual(complete["objectRef"], {"resource": "configmaps",
                                                 "namespace": "default", "name": "cm",
                                                 "apiVersion": "v1"})
        self.assertEqual(complete["responseStatus"], {"metadata": {}, "code": 201})
        self.assertEqual(complete["requestObject"]["data"], {"a": "1"})
        self.assertEqual(complete["responseObject"]["metadata"]["name"], "cm")
        self.assertIn("uid", complete["responseObject"]["metadata"])
        self.assertEqual(complete["annotations"], {"authorization.k8s.io/decision": "allow",
                                                   "authorization.k8s.io/reason": ""})
        self.assertEqual(complete["user"]["username"], "admin")
        self.assertEqual(list(complete)[:8], ["kind", "apiVersion", "level", "auditID",
                                              "stage", "requestURI", "verb", "user"])

    def test_request_level_and_rule_omit_stages(self):
        """C{Request}: the request object but no response object; the rule's omitted
        RequestReceived is not sent."""
        code, _, _ = self.request("POST", "/apis/apps/v1/namespaces/default/deployments",
                                  DEPLOYMENT)
        self.assertEqual(code, 201)
        [ev] = self.backend.events
        self.assertEqual((ev["stage"], ev["level"]), ("ResponseComplete", "Request"))
        self.assertIn("requestObject", ev)
        self.assertNotIn("responseObject", ev)
        # defaulted, as upstream logs it
        self.assertEqual(ev["requestObject"]["spec"]["revisionHistoryLimit"], 10)
        self.assertEqual(ev["objectRef"]["apiGroup"], "apps")

    def test_metadata_level_has_no_bodies(self):
        """C{Metadata}: no request or response object; a failure's Status fields are the
        responseStatus."""
        code, _, _ = self.request("GET", "/api/v1/namespaces/default/pods/nope")
        self.assertEqual(code, 404)
        received, complete = self.backend.events
        self.assertEqual(complete["level"], "Metadata")
        self.assertNotIn("requestObject", complete)
        self.assertNotIn("responseObject", complete)
        self.assertEqual(complete["responseStatus"], {
            "metadata": {}, "status": "Failure", "message": 'pods "nope" not found',
            "reason": "NotFound", "details": {"name": "nope", "kind": "pods"}, "code": 404})

    def test_none_level_sends_nothing(self):
        """A C{None} rule (and no matching rule) records nothing."""
        self.request("POST", "/api/v1/namespaces/default/events",
                     {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
                      "involvedObject": {}})
        self.request("POST", "/api/v1/namespaces/default/secrets",
                     {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
        self.assertEqual(self.backend.events, [])

    def test_patch_logs_the_patch(self):
        """A patch's requestObject is the patch as sent."""
        self.request("POST", "/api/v1/namespaces/default/configmaps", CM)
        del self.backend.events[:]
        code, _, _ = self.request("PATCH", "/api/v1/namespaces/default/configmaps/cm",
                                  {"data": {"a": "2"}},
                                  content_type="application/merge-patch+json")
        self.assertEqual(code, 200)
        self.assertEqual(self.backend.events[-1]["requestObject"], {"data": {"a": "2"}})
        self.assertEqual(self.backend.events[-1]["responseObject"]["data"], {"a": "2"})

    def test_delete_logs_delete_options(self):
        """A delete body is logged as upstream's internal DeleteOptions; the Status of the
        deletion is the responseStatus."""
        self.request("POST", "/api/v1/namespaces/default/configmaps", CM)
        del self.backend.events[:]
        code, _, _ = self.request("DELETE", "/api/v1/namespaces/default/configmaps/cm",
                                  {"propagationPolicy": "Background"})
        self.assertEqual(code, 200)
        ev = self.backend.events[-1]
        self.assertEqual(ev["requestObject"], {"kind": "DeleteOptions",
                                               "apiVersion": "meta.k8s.io/__internal",
                                               "propagationPolicy": "Background"})
        self.assertEqual(ev["responseStatus"]["status"], "Success")
        self.assertEqual(ev["responseStatus"]["code"], 200)
        self.assertEqual(ev["responseStatus"]["details"]["name"], "cm")

    def test_non_resource_verb_is_lowercase_method(self):
        """Non-resource requests: the verb is the lowercase HTTP method, no objectRef."""
        self.request("GET", "/version")
        ev = self.backend.events[-1]
        self.assertEqual((ev["verb"], ev["requestURI"]), ("get", "/version"))
        self.assertNotIn("objectRef", ev)

    def test_failed_authentication(self):
        """A 401 is one ResponseStarted event with no user (upstream
        WithFailedAuthenticationAudit)."""
        code, _, _ = self.request("GET", "/api/v1/namespaces/default/pods",
                                  headers={"Authorization": "Bearer nope"})
        self.assertEqual(code, 401)
        [ev] = self.backend.events
        self.assertEqual((ev["stage"], ev["user"]), ("ResponseStarted", {}))
        self.assertEqual(ev["responseStatus"], {"metadata": {}, "status": "Failure",
                                                "message": "Unauthorized",
                                                "reason": "Unauthorized", "code": 401})
        self.assertNotIn("annotations", ev)

    def test_watch_has_response_started(self):
        """A long-running request also has ResponseStarted, sent when the response
        starts."""
        d = self.treq.get("https://kubetwist.test/api/v1/namespaces/default/pods?watch=1"
                          "&timeoutSeconds=1", headers={"Authorization": ["Bearer admin-token"]})
        self.treq.flush()
        self.assertEqual([e["stage"] for e in self.backend.events],
                         ["RequestReceived", "ResponseStarted"])
        self.clock.advance(2)
        self.treq.flush()
        self.successResultOf(d)
        self.assertEqual([e["stage"] for e in self.backend.events],
                         ["RequestReceived", "ResponseStarted", "ResponseComplete"])
        self.assertEqual(self.backend.events[1]["responseStatus"], {"metadata": {},
                                                                    "code": 200})

    def test_authorizer_error(self):
        """An authorizer that fails: reason C{internal error}, no decision; the unexpected
        error is a Panic event."""
        self.patch(self.chain.authorizer, "authorize",
                   lambda attributes: defer.fail(RuntimeError("webhook down")))
        code, _, _ = self.request("GET", "/api/v1/namespaces/default/pods",
                                  headers={"Authorization": "Bearer jane-token"})
        self.assertEqual(code, 500)
        ev = self.backend.events[-1]
        self.assertEqual(ev["stage"], "Panic")
        self.assertEqual(ev["annotations"], {"authorization.k8s.io/reason": "internal error"})
        self.assertEqual(ev["responseStatus"]["message"], "APIServer panic'd: webhook down")
        self.flushLoggedErrors(RuntimeError)

    def test_audit_id_header(self):
        """The client's Audit-ID is the event's auditID."""
        self.request("GET", "/api/v1/namespaces", headers={"Audit-ID": "my-id"})
        self.assertEqual({e["auditID"] for e in self.backend.events}, {"my-id"})


class ForbiddenAuditTests(KubeTestCase):
    modes = ("AlwaysDeny",)

    def setUp(self):
        self.backend = MemoryBackend()
        self.audit = AuditConfig(load_policy(POLICY), self.backend)
        super().setUp()

    def test_forbidden_annotations(self):
        """A denied request: the forbid decision and the authorizer's reason."""
        code, _, _ = self.request("GET", "/api/v1/namespaces/default/pods",
                                  headers={"Authorization": "Bearer jane-token"})
        self.assertEqual(code, 403)
        ev = self.backend.events[-1]
        self.assertEqual(ev["annotations"], {"authorization.k8s.io/decision": "forbid",
                                             "authorization.k8s.io/reason":
                                             "Everything is forbidden."})
        self.assertEqual((ev["responseStatus"]["code"], ev["responseStatus"]["reason"]),
                         (403, "Forbidden"))


class AdmissionAnnotationTests(KubeTestCase):
    def setUp(self):
        self.backend = MemoryBackend()
        self.audit = AuditConfig(load_policy(POLICY), self.backend)
        super().setUp()

    def test_admission_annotations(self):
        """An admission plugin's C{add_annotation} becomes an audit annotation, also when the
        plugin refuses the request."""
        from zope.interface import implementer

        from kubetwist.admission.interfaces import IValidationInterface
        from kubetwist.runtime import errors

        @implementer(IValidationInterface)
        class Annotating:
            name = "Annotating"

            def handles(self, operation):
                return True

            def validate(self, attributes):
                attributes.add_annotation("annotating.admission.k8s.io/seen",
                                          attributes.name)
                if attributes.name == "refused":
                    raise errors.new_forbidden("", "configmaps", "refused", "no")

        self.kube.admission.plugins.append(Annotating())
        self.request("POST", "/api/v1/namespaces/default/configmaps", CM)
        self.assertEqual(self.backend.events[-1]["annotations"]["annotating.admission.k8s.io/seen"],
                         "cm")
        code, _, _ = self.request("POST", "/api/v1/namespaces/default/configmaps",
                                  dict(CM, metadata={"name": "refused"}))
        self.assertEqual(code, 403)
        self.assertEqual(self.backend.events[-1]["annotations"],
                         {"authorization.k8s.io/decision": "allow",
                          "authorization.k8s.io/reason": "",
                          "annotating.admission.k8s.io/seen": "refused"})


class StrictBackendTests(KubeTestCase):
    def setUp(self):
        self.backend = MemoryBackend(accept=False)
        self.audit = AuditConfig(load_policy(POLICY), self.backend)
        super().setUp()

    def test_unstored_request_received_fails_the_request(self):
        """When the backend cannot store RequestReceived (blocking-strict), the request is
        500 C{failed to store audit event}."""
        code, st, _ = self.request("GET", "/api/v1/namespaces/default/pods")
        self.assertEqual((code, st["message"]),
                         (500, "Internal error occurred: failed to store audit event"))


def _CodedRequest(*args):
    """The filter tests' DummyRequest with the C{code} twisted.web's Request has."""
    from tests.server.test_filters import _Request

    class Coded(_Request):
        @property
        def code(self):
            return self.responseCode or 200

    return Coded(*args)


class FilterUnitTests(KubeTestCase):
    """L{audit_filter.with_audit} around a handler of its own."""

    def setUp(self):
        self.backend = MemoryBackend()
        super().setUp()

    def run_filter(self, inner, user=None, authenticated=None):
        from kubetwist.endpoints.requestinfo import parse_request_info

        handler = audit_filter.with_audit(inner, AuditConfig(load_policy(POLICY),
                                                             self.backend),
                                          now=lambda: 1700000000.5)
        request = _CodedRequest(b"GET", b"/api/v1/namespaces/default/pods/p")
        ctx = context_of(request)
        ctx.request_info = parse_request_info("GET", "/api/v1/namespaces/default/pods/p")
        ctx.user = user or UserInfo("jane", groups=["system:authenticated"])
        ctx.authenticated_user = authenticated
        ctx.audit_id = "id"
        ctx.received_at = 1700000000.25
        d = defer.maybeDeferred(handler, request)
        return request, d

    def test_panic_stage(self):
        """An unexpected error is a Panic event with upstream's message."""
        def boom(request):
            raise ValueError("kaput")

        request, d = self.run_filter(boom)
        self.failureResultOf(d, ValueError)
        request.setResponseCode(500)
        request.finish()
        ev = self.backend.events[-1]
        self.assertEqual(ev["stage"], "Panic")
        self.assertEqual(ev["responseStatus"], {
            "metadata": {}, "status": "Failure", "message": "APIServer panic'd: kaput",
            "reason": "InternalError", "code": 500})
        self.assertEqual(ev["requestReceivedTimestamp"], "2023-11-14T22:13:20.250000Z")
        self.assertEqual(ev["stageTimestamp"], "2023-11-14T22:13:20.500000Z")

    def test_impersonated_user(self):
        """The credentials' user is C{user}; the impersonated one C{impersonatedUser}."""
        admin = UserInfo("admin", groups=["system:masters"])
        jane = UserInfo("jane", groups=["system:authenticated"])

        def ok(request):
            request.write(b"ok")
            request.finish()

        request, d = self.run_filter(ok, user=jane, authenticated=admin)
        self.successResultOf(d)
        received, complete = self.backend.events
        self.assertEqual(received["user"], {"username": "admin",
                                            "groups": ["system:masters"]})
        self.assertNotIn("impersonatedUser", received)
        self.assertEqual(complete["impersonatedUser"], {"username": "jane",
                                                        "groups": ["system:authenticated"]})

