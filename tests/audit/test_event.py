"""
Audit events (L{kubetwist.audit.event}): field order and encoding as upstream writes them,
C{objectRef} completion, the objects kept per level, C{omitManagedFields}, and the legacy
format; the shape is checked against events recorded from kube-apiserver v1.32
(C{tests/vectors/audit/upstream-events.jsonl}).
"""

from __future__ import annotations

import json

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.audit.event import (
    AuditContext,
    encode_event,
    event_string,
    micro_time,
    object_ref,
)
from kubetwist.audit.policy import RequestAuditConfig
from kubetwist.endpoints.requestinfo import parse_request_info
from tests.support import repository_root

VECTORS = repository_root() / "tests" / "vectors" / "audit"


def upstream_events() -> list[dict]:
    with open(VECTORS / "upstream-events.jsonl") as f:
        return [json.loads(line) for line in f]


def context(level: str, path: str = "/api/v1/namespaces/default/configmaps",
            method: str = "POST", omit_managed_fields: bool = False) -> AuditContext:
    info = parse_request_info(method, path)
    fields = {"auditID": "id", "requestURI": path, "verb": info.verb,
              "user": {"username": "admin"}, "sourceIPs": ["127.0.0.1"], "userAgent": "ua"}
    ref = object_ref(info)
    if ref:
        fields["objectRef"] = ref
    return AuditContext(RequestAuditConfig(level, (), omit_managed_fields), fields,
                        1700000000.25)


CM = {"kind": "ConfigMap", "apiVersion": "v1",
      "metadata": {"name": "cm", "namespace": "default",
                   "managedFields": [{"manager": "kubectl"}]},
      "data": {"a": "<&>"}}


class EventTests(SynchronousTestCase):
    def test_micro_time(self):
        self.assertEqual(micro_time(1700000000.25), "2023-11-14T22:13:20.250000Z")

    def test_field_order_is_upstreams(self):
        """The keys of a complete event come in the order of upstream's recorded events."""
        ac = context("RequestResponse")
        ac.log_request_object(CM, "", "v1", "configmaps")
        ac.log_response_object(CM)
        ac.set_response_code(201)
        ac.add_annotation("authorization.k8s.io/decision", "allow")
        ours = list(json.loads(encode_event(ac.stage_event("ResponseComplete", 1700000001))))
        theirs = [list(e) for e in upstream_events()
                  if e["stage"] == "ResponseComplete" and e["verb"] == "create"
                  and e["level"] == "RequestResponse"][0]
        self.assertEqual(ours, theirs)

    def test_every_upstream_field_is_known(self):
        """Every field upstream wrote is one kubetwist writes (and objectRef's too)."""
        ac = context("RequestResponse", "/api/v1/namespaces/default/configmaps/cm", "PATCH")
        ac.impersonated_user = type("U", (), {"name": "jane", "uid": "", "groups": ["g"],
                                             "extra": {}})()
        ac.log_request_patch(b'{"data":{"a":"2"}}')
        ac.log_response_object(CM)
        ac.set_response_code(200)
        ac.add_annotation("k", "v")
        ours = set(ac.stage_event("ResponseComplete", 1700000001))
        for ev in upstream_events():
            self.assertLessEqual(set(ev), ours, ev["auditID"])
            self.assertLessEqual(set(ev.get("objectRef", {})),
                                 {"resource", "namespace", "name", "apiGroup", "apiVersion",
                                  "subresource", "uid", "resourceVersion"})

    def test_request_received_stage(self):
        """RequestReceived: its stage timestamp is the received time; no status, objects or
        annotations yet."""
        ac = context("RequestResponse")
        ev = ac.stage_event("RequestReceived", 1700000005)
        self.assertEqual(ev["stageTimestamp"], ev["requestReceivedTimestamp"])
        for key in ("responseStatus", "requestObject", "responseObject", "annotations"):
            self.assertNotIn(key, ev)

    def test_object_ref_completed_at_metadata(self):
        """At Metadata the request object names the object but is not kept."""
        ac = context("Metadata")
        ac.log_request_object(CM, "", "v1", "configmaps")
        ac.log_response_object(CM)
        ev = ac.stage_event("ResponseComplete", 1700000001)
        self.assertEqual(ev["objectRef"], {"resource": "configmaps", "namespace": "default",
                                           "name": "cm", "apiVersion": "v1"})
        self.assertNotIn("requestObject", ev)
        self.assertNotIn("responseObject", ev)

    def test_request_level_keeps_only_the_request(self):
        ac = context("Request")
        ac.log_request_object(CM, "", "v1", "configmaps")
        ac.log_response_object(CM)
        ev = json.loads(encode_event(ac.stage_event("ResponseComplete", 1700000001)))
        self.assertEqual(ev["requestObject"]["data"], {"a": "<&>"})
        self.assertNotIn("responseObject", ev)

    def test_go_escaping(self):
        """The line escapes <, > and & as Go's encoder does."""
        ac = context("Request")
        ac.log_request_object(CM, "", "v1", "configmaps")
        line = encode_event(ac.stage_event("ResponseComplete", 1700000001))
        self.assertIn(b'"a":"\\u003c\\u0026\\u003e"', line)

    def test_omit_managed_fields(self):
        ac = context("RequestResponse", omit_managed_fields=True)
        ac.log_request_object(CM, "", "v1", "configmaps")
        ac.log_response_object({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {},
                                "items": [CM]})
        ev = json.loads(encode_event(ac.stage_event("ResponseComplete", 1700000001)))
        self.assertNotIn("managedFields", ev["requestObject"]["metadata"])
        self.assertNotIn("managedFields", ev["responseObject"]["items"][0]["metadata"])
        self.assertIn("managedFields", CM["metadata"])

    def test_huge_response_left_out(self):
        """A response object over MAX_LOGGED_OBJECT_BYTES is not logged; its status is."""
        from kubetwist.audit import event

        self.patch(event, "MAX_LOGGED_OBJECT_BYTES", 100)
        ac = context("RequestResponse")
        ac.log_response_object(dict(CM, data={"a": "x" * 200}))
        ac.set_response_code(200)
        ev = ac.stage_event("ResponseComplete", 1)
        self.assertNotIn("responseObject", ev)
        self.assertEqual(ev["responseStatus"], {"metadata": {}, "code": 200})
        ac.log_response_object({"kind": "ConfigMap", "data": {"a": "x" * 50}})
        self.assertIn("responseObject", ac.stage_event("ResponseComplete", 1))

    def test_yaml_apply_patch_logged_as_json(self):
        """An apply patch sent as YAML is logged as the same JSON object."""
        ac = context("Request", "/api/v1/namespaces/default/configmaps/cm", "PATCH")
        ac.log_request_patch(b"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: '1'\n")
        ev = json.loads(encode_event(ac.stage_event("ResponseComplete", 1)))
        self.assertEqual(ev["requestObject"],
                         {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1"}})

    def test_status_response(self):
        """A failure Status gives responseStatus its fields (kind/apiVersion left out)."""
        ac = context("Metadata")
        ac.log_response_object({"kind": "Status", "apiVersion": "v1", "metadata": {},
                                "status": "Failure", "message": "m", "reason": "NotFound",
                                "details": {"name": "x", "kind": "pods"}, "code": 404})
        ac.set_response_code(404)
        self.assertEqual(ac.stage_event("ResponseComplete", 1)["responseStatus"], {
            "metadata": {}, "status": "Failure", "message": "m", "reason": "NotFound",
            "details": {"name": "x", "kind": "pods"}, "code": 404})

    def test_legacy_format(self):
        """Upstream EventString."""
        ac = context("Metadata")
        ac.fields["user"] = {"username": "admin", "groups": ["system:masters", "b"]}
        ac.set_response_code(201)
        self.assertEqual(
            event_string(ac.stage_event("ResponseComplete", 1)),
            '2023-11-14T22:13:20.25Z AUDIT: id="id" stage="ResponseComplete" ip="127.0.0.1" '
            'method="create" user="admin" groups="\\"system:masters\\",\\"b\\"" as="<self>" '
            'asgroups="<lookup>" user-agent="ua" namespace="default" '
            'uri="/api/v1/namespaces/default/configmaps" response="201"')
        ac = context("Metadata")
        self.assertIn('response="<deferred>"',
                      event_string(ac.stage_event("RequestReceived", 1)))
