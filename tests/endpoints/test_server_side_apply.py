# -*- test-case-name: tests.endpoints.test_server_side_apply -*-
"""
Server-side apply and managedFields over HTTP (the whole chain, L{KubeTestCase}): upstream
C{k8s.io/apiserver/pkg/endpoints/handlers} (C{create.go}, C{update.go}, C{patch.go}) with
C{k8s.io/apimachinery/pkg/util/managedfields}; expected values are kube-apiserver v1.32's
(C{test/integration/apiserver/apply/apply_test.go}).
"""

from __future__ import annotations

import json

from tests.apiextensions.test_customresources import WIDGETS, CRDTestCase
from tests.support import KubeTestCase

DEPLOY = "/apis/apps/v1/namespaces/default/deployments"
CM = "/api/v1/namespaces/default/configmaps"
APPLY = "application/apply-patch+yaml"


def _deployment(replicas: int = 2) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": "i"}]}}}}


def _managers(obj: dict) -> list:
    return [(e["manager"], e["operation"], e.get("subresource", ""))
            for e in obj["metadata"].get("managedFields", [])]


class ApplyTests(KubeTestCase):
    def test_apply_creates_and_records(self) -> None:
        """Apply creates a missing object (201) and records one Apply entry."""
        code, obj, _ = self.request("PATCH", DEPLOY + "/web?fieldManager=mgr", _deployment(),
                                    content_type=APPLY)
        self.assertEqual(code, 201, obj)
        [entry] = obj["metadata"]["managedFields"]
        self.assertEqual(list(entry), ["manager", "operation", "apiVersion", "time",
                                       "fieldsType", "fieldsV1"])
        self.assertEqual((entry["manager"], entry["operation"], entry["apiVersion"],
                          entry["fieldsType"]), ("mgr", "Apply", "apps/v1", "FieldsV1"))
        self.assertEqual(entry["fieldsV1"]["f:spec"]["f:replicas"], {})
        code, again, _ = self.request("PATCH", DEPLOY + "/web?fieldManager=mgr", _deployment(),
                                      content_type=APPLY)
        self.assertEqual((code, again["metadata"]["resourceVersion"]),
                         (200, obj["metadata"]["resourceVersion"]))

    def test_conflict_and_force(self) -> None:
        """Another manager's change of an owned field is upstream's 409; C{force=true}
        takes it over."""
        self.request("PATCH", DEPLOY + "/web?fieldManager=mgr", _deployment(),
                     content_type=APPLY)
        code, status, _ = self.request("PATCH", DEPLOY + "/web?fieldManager=other",
                                       _deployment(3), content_type=APPLY)
        self.assertEqual((code, status), (409, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": 'Apply failed with 1 conflict: conflict with "mgr": .spec.replicas',
            "reason": "Conflict",
            "details": {"causes": [{"reason": "FieldManagerConflict",
                                    "message": 'conflict with "mgr"',
                                    "field": ".spec.replicas"}]},
            "code": 409}))
        code, obj, _ = self.request("PATCH", DEPLOY + "/web?fieldManager=other&force=true",
                                    _deployment(3), content_type=APPLY)
        self.assertEqual((code, obj["spec"]["replicas"]), (200, 3))
        fields = {e["manager"]: e["fieldsV1"] for e in obj["metadata"]["managedFields"]}
        self.assertNotIn("f:replicas", fields["mgr"]["f:spec"])

    def test_update_manager_conflict(self) -> None:
        """A field set by a merge patch belongs to that Update manager (named with its
        version in the conflict)."""
        self.request("PATCH", DEPLOY + "/web?fieldManager=mgr", _deployment(),
                     content_type=APPLY)
        code, obj, _ = self.request("PATCH", DEPLOY + "/web?fieldManager=scaler",
                                    {"spec": {"replicas": 5}},
                                    content_type="application/merge-patch+json")
        self.assertEqual(_managers(obj), [("mgr", "Apply", ""), ("scaler", "Update", "")])
        code, status, _ = self.request("PATCH", DEPLOY + "/web?fieldManager=mgr",
                                       _deployment(), content_type=APPLY)
        self.assertEqual((code, status["message"]), (
            409, ('Apply failed with 1 conflict: conflict with "scaler" using apps/v1: '
                 '.spec.replicas')))

    def test_user_agent_manager(self) -> None:
        """Without C{fieldManager} a write's manager is the User-Agent's product name."""
        code, obj, _ = self.request("POST", CM, {"metadata": {"name": "a"}, "data": {"k": "v"}},
                                    headers={"User-Agent": "kubectl/v1.32.0 (linux/amd64)"})
        self.assertEqual((code, _managers(obj)), (201, [("kubectl", "Update", "")]))
        self.assertEqual(obj["metadata"]["managedFields"][0]["fieldsV1"],
                         {"f:data": {".": {}, "f:k": {}}})

    def test_status_subresource(self) -> None:
        """A write to C{/status} records an entry with C{subresource: status}."""
        self.request("PATCH", DEPLOY + "/web?fieldManager=mgr", _deployment(),
                     content_type=APPLY)
        code, obj, _ = self.request(
            "PATCH", DEPLOY + "/web/status?fieldManager=ctrl",
            {"status": {"observedGeneration": 1}},
            content_type="application/merge-patch+json")
        self.assertEqual(code, 200, obj)
        self.assertEqual(_managers(obj), [("mgr", "Apply", ""), ("ctrl", "Update", "status")])
        entry = obj["metadata"]["managedFields"][1]
        self.assertEqual(entry["fieldsV1"], {"f:status": {"f:observedGeneration": {}}})

    def test_options_validation(self) -> None:
        """Apply needs a C{fieldManager}; C{force} only goes with apply (422 PatchOptions)."""
        code, status, _ = self.request("PATCH", DEPLOY + "/web", _deployment(),
                                       content_type=APPLY)
        self.assertEqual((code, status["message"], status["details"]), (
            422, ('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is '
                 'required for apply patch'),
            {"group": "meta.k8s.io", "kind": "PatchOptions",
             "causes": [{"reason": "FieldValueRequired",
                         "message": "Required value: is required for apply patch",
                         "field": "fieldManager"}]}))
        code, status, _ = self.request("PATCH", DEPLOY + "/web?force=true", {},
                                       content_type="application/merge-patch+json")
        self.assertEqual((code, status["message"]), (
            422, ('PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be '
                 'specified for non-apply patch')))

    def test_dry_run(self) -> None:
        """C{dryRun=All} answers the applied object and stores nothing."""
        code, obj, _ = self.request("PATCH", DEPLOY + "/web?fieldManager=m&dryRun=All",
                                    _deployment(), content_type=APPLY)
        self.assertEqual((code, _managers(obj)), (201, [("m", "Apply", "")]))
        self.assertEqual(self.request("GET", DEPLOY + "/web")[0], 404)

    def test_unknown_field(self) -> None:
        """An applied field the schema lacks is upstream's 500 (no reason)."""
        doc = _deployment()
        doc["spec"]["foo"] = 1
        code, status, _ = self.request("PATCH", DEPLOY + "/web?fieldManager=m", doc,
                                       content_type=APPLY)
        self.assertEqual((code, status.get("reason"), status["message"]), (
            500, None, ("failed to create typed patch object (/web; apps/v1, Kind=Deployment): "
                       ".spec.foo: field not declared in schema")))

    def test_removes_dropped_fields(self) -> None:
        """A label the manager applied before and dropped now is removed."""
        doc = _deployment()
        doc["metadata"]["labels"] = {"a": "1", "b": "2"}
        self.request("PATCH", DEPLOY + "/web?fieldManager=m", doc, content_type=APPLY)
        doc["metadata"]["labels"] = {"a": "1"}
        code, obj, _ = self.request("PATCH", DEPLOY + "/web?fieldManager=m", doc,
                                    content_type=APPLY)
        self.assertEqual((code, obj["metadata"]["labels"]), (200, {"a": "1"}))

    def test_reset_managed_fields(self) -> None:
        """An update with C{managedFields: []} clears them (and this write is not recorded
        either, as upstream)."""
        self.request("PATCH", DEPLOY + "/web?fieldManager=m", _deployment(), content_type=APPLY)
        code, obj, _ = self.request("PATCH", DEPLOY + "/web?fieldManager=x",
                                    {"metadata": {"managedFields": [{}]}},
                                    content_type="application/merge-patch+json")
        self.assertEqual(code, 200, obj)
        self.assertNotIn("managedFields", obj["metadata"])


class CustomResourceApplyTests(CRDTestCase):
    def test_apply_custom_resource(self) -> None:
        """Apply works on a custom resource by its schema, with conflicts."""
        self.install()
        doc = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
               "spec": {"replicas": 1}}
        code, obj, _ = self.request("PATCH", WIDGETS + "/w?fieldManager=a", doc,
                                    content_type=APPLY)
        self.assertEqual(code, 201, obj)
        self.assertEqual(obj["metadata"]["managedFields"][0]["fieldsV1"],
                         {"f:spec": {"f:replicas": {}}})
        doc["spec"]["replicas"] = 2
        code, status, _ = self.request("PATCH", WIDGETS + "/w?fieldManager=b", doc,
                                       content_type=APPLY)
        self.assertEqual((code, status["message"]), (
            409, 'Apply failed with 1 conflict: conflict with "a": .spec.replicas'))
        code, obj, _ = self.request(
            "PATCH", WIDGETS + "/w/status?fieldManager=b",
            json.dumps({"apiVersion": "example.com/v1", "kind": "Widget",
                        "metadata": {"name": "w"}, "status": {"phase": "Up"}}),
            content_type=APPLY)
        self.assertEqual((code, obj["status"]), (200, {"phase": "Up"}))
        self.assertEqual(_managers(obj), [("a", "Apply", ""), ("b", "Apply", "status")])


class ScaleTests(KubeTestCase):
    def test_scale_takes_replicas(self) -> None:
        """A write to C{/scale} records an Update entry with C{subresource: scale} that takes
        C{.spec.replicas} from the applier (no conflict for non-apply writes)."""
        self.request("PATCH", DEPLOY + "/web?fieldManager=mgr", _deployment(),
                     content_type=APPLY)
        code, scale, _ = self.request("PATCH", DEPLOY + "/web/scale?fieldManager=hpa",
                                      {"spec": {"replicas": 4}},
                                      content_type="application/merge-patch+json")
        self.assertEqual((code, scale["spec"]["replicas"]), (200, 4))
        code, obj, _ = self.request("GET", DEPLOY + "/web")
        self.assertEqual(_managers(obj), [("mgr", "Apply", ""), ("hpa", "Update", "scale")])
        self.assertEqual(obj["metadata"]["managedFields"][1]["fieldsV1"],
                         {"f:spec": {"f:replicas": {}}})
        self.assertNotIn("f:replicas", obj["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"])

    def test_scale_entry_has_no_time(self) -> None:
        """The entry a C{/scale} write records has no C{time}, so it sorts before the timed
        Update entries (kube-apiserver v1.32, C{tests/vectors/apps.jsonl})."""
        self.request("PATCH", DEPLOY + "/web?fieldManager=mgr", _deployment(),
                     content_type=APPLY)
        self.request("PATCH", DEPLOY + "/web?fieldManager=editor", {"metadata": {"labels": {
            "x": "y"}}}, content_type="application/merge-patch+json")
        self.request("PATCH", DEPLOY + "/web/scale?fieldManager=hpa", {"spec": {"replicas": 4}},
                     content_type="application/merge-patch+json")
        code, obj, _ = self.request("GET", DEPLOY + "/web")
        entries = obj["metadata"]["managedFields"]
        self.assertEqual(_managers(obj), [("mgr", "Apply", ""), ("hpa", "Update", "scale"),
                                          ("editor", "Update", "")])
        self.assertNotIn("time", entries[1])
        self.assertIn("time", entries[2])


    def test_scale_of_unowned_replicas_not_tracked(self) -> None:
        """When no entry owns C{.spec.replicas} (applied without it, defaulted), a C{/scale}
        write records nothing: upstream's field manager skips an update of an object without
        managed fields, and the Scale only carries the entries owning the replicas."""
        obj = _deployment()
        del obj["spec"]["replicas"]
        self.request("PATCH", DEPLOY + "/web?fieldManager=mgr", obj, content_type=APPLY)
        code, _, _ = self.request("PATCH", DEPLOY + "/web/scale?fieldManager=hpa",
                                  {"spec": {"replicas": 4}},
                                  content_type="application/merge-patch+json")
        _, live, _ = self.request("GET", DEPLOY + "/web")
        self.assertEqual((code, live["spec"]["replicas"]), (200, 4))
        self.assertEqual(_managers(live), [("mgr", "Apply", "")])


class StatusResetTests(KubeTestCase):
    def test_deployment_status_keeps_label_owner(self) -> None:
        """A Deployment's C{/status} resets C{metadata.labels} as well as C{spec}: a status
        write without the labels leaves their owner in place (upstream
        C{deploymentStatusStrategy.GetResetFields}; C{tests/vectors/apps.jsonl} status-update)."""
        obj = _deployment()
        obj["metadata"]["labels"] = {"app": "web"}
        self.request("PATCH", DEPLOY + "/web?fieldManager=mgr", obj, content_type=APPLY)
        _, live, _ = self.request("GET", DEPLOY + "/web")
        status = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "web",
                               "resourceVersion": live["metadata"]["resourceVersion"]},
                  "status": {"replicas": 1}}
        code, out, _ = self.request("PUT", DEPLOY + "/web/status?fieldManager=ctrl", status)
        self.assertEqual(code, 200, out)
        self.assertEqual(out["metadata"]["labels"], {"app": "web"})
        fields = {e["manager"]: e["fieldsV1"] for e in out["metadata"]["managedFields"]}
        self.assertEqual(fields["mgr"]["f:metadata"], {"f:labels": {"f:app": {}}})
        self.assertEqual(fields["ctrl"], {"f:status": {"f:replicas": {}}})


class ClientSideUpgradeTests(KubeTestCase):
    def test_last_applied_allows_takeover(self) -> None:
        """C{kubectl}'s first server-side apply over a client-side applied object may change
        the fields its last-applied annotation set (upstream C{lastAppliedManager}); the
        annotation then follows the applied config (C{lastAppliedUpdater})."""
        doc = _deployment(1)
        last = json.dumps(doc, separators=(",", ":"), sort_keys=True)
        created = dict(doc, metadata={"name": "web", "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration": last}})
        code, obj, _ = self.request("POST", DEPLOY + "?fieldManager=kubectl-client-side-apply",
                                    created)
        self.assertEqual(code, 201, obj)
        code, status, _ = self.request("PATCH", DEPLOY + "/web?fieldManager=other",
                                       _deployment(4), content_type=APPLY)
        self.assertEqual((code, status["message"]), (
            409, ('Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" '
                 'using apps/v1: .spec.replicas')))
        code, obj, _ = self.request("PATCH", DEPLOY + "/web?fieldManager=kubectl",
                                    _deployment(4), content_type=APPLY)
        self.assertEqual((code, obj["spec"]["replicas"]), (200, 4), obj)
        self.assertEqual(
            obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"],
            json.dumps(_deployment(4), separators=(",", ":"), sort_keys=True))

    def test_client_managed_fields_patch(self) -> None:
        """A JSON patch replacing managedFields (kubectl's csaupgrade) is taken as sent."""
        self.request("POST", DEPLOY + "?fieldManager=kubectl-client-side-apply", _deployment(1))
        code, obj, _ = self.request("GET", DEPLOY + "/web")
        entry = dict(obj["metadata"]["managedFields"][0], manager="kubectl", operation="Apply")
        patch = [{"op": "test", "path": "/metadata/resourceVersion",
                  "value": obj["metadata"]["resourceVersion"]},
                 {"op": "replace", "path": "/metadata/managedFields", "value": [entry]}]
        code, obj, _ = self.request("PATCH", DEPLOY + "/web", patch,
                                    content_type="application/json-patch+json")
        self.assertEqual((code, _managers(obj)), (200, [("kubectl", "Apply", "")]))
        code, obj, _ = self.request("PATCH", DEPLOY + "/web?fieldManager=kubectl",
                                    _deployment(4), content_type=APPLY)
        self.assertEqual((code, obj["spec"]["replicas"], _managers(obj)),
                         (200, 4, [("kubectl", "Apply", "")]))


class ApplyKindTests(KubeTestCase):
    def test_wrong_kind_or_version(self) -> None:
        """An applied config of another version or kind is upstream's 400 C{invalid object
        type} (C{versionCheckManager})."""
        for api_version, kind, text in (("apps/v2", "Deployment", "apps/v2, Kind=Deployment"),
                                        ("apps/v1", None, "apps/v1, Kind="),
                                        ("v1", "ConfigMap", "/v1, Kind=ConfigMap")):
            doc = _deployment()
            doc["apiVersion"] = api_version
            if kind is None:
                del doc["kind"]
            else:
                doc["kind"] = kind
            code, status, _ = self.request("PATCH", DEPLOY + "/web?fieldManager=m", doc,
                                           content_type=APPLY)
            self.assertEqual((code, status["reason"], status["message"]),
                             (400, "BadRequest", f"invalid object type: {text}"))


class FieldManagerOptionTests(KubeTestCase):
    def test_field_manager_too_long(self) -> None:
        """A C{fieldManager} over 128 bytes is 422 Invalid C{CreateOptions}."""
        code, status, _ = self.request("POST", CM + "?fieldManager=" + "m" * 129,
                                       {"metadata": {"name": "a"}})
        self.assertEqual((code, status["message"]), (
            422, ('CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be '
                 'more than 128 bytes')))
