"""
Tests for serving custom resources (L{kubetwist.apiextensions.server},
L{kubetwist.apiextensions.customresource}): the whole chain over HTTP with L{KubeTestCase}.
Expected values are kube-apiserver v1.32's (upstream C{test/integration/apiserver/crd_*}).
"""

import copy

from tests.support import KubeTestCase, build_chain

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com", "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                  "shortNames": ["wd"], "categories": ["all"]},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object",
                         "x-kubernetes-validations": [{"rule": "self.color == oldSelf.color",
                                                       "message": "color is immutable"}],
                         "properties": {"replicas": {"type": "integer", "minimum": 0},
                                        "color": {"type": "string", "default": "blue"}}},
                "status": {"type": "object", "properties": {
                    "replicas": {"type": "integer"}, "phase": {"type": "string"}}}}}},
            "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                     "statusReplicasPath": ".status.replicas"}},
            "selectableFields": [{"jsonPath": ".spec.color"}],
            "additionalPrinterColumns": [
                {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                {"name": "Phase", "type": "string", "jsonPath": ".status.phase",
                 "priority": 1}],
        }],
    },
}


def widget(name: str, **spec) -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name},
            "spec": spec}


class CRDTestCase(KubeTestCase):
    """Helpers: install a CRD and let the controllers run."""

    def settle(self) -> None:
        """Run what the controllers scheduled (they react to watch events on the clock)."""
        for _ in range(5):
            self.clock.advance(0)

    def install(self, crd: dict = CRD) -> dict:
        code, body, _ = self.request("POST", CRDS, crd)
        self.assertEqual(code, 201, body)
        self.settle()
        code, body, _ = self.request("GET", f"{CRDS}/{crd['metadata']['name']}")
        self.assertEqual(code, 200, body)
        return body


class ServingTests(CRDTestCase):
    """The custom resource endpoints."""

    def test_established(self) -> None:
        """The CRD gets accepted names, NamesAccepted and Established."""
        crd = self.install()
        conds = {c["type"]: (c["status"], c["reason"], c["message"])
                 for c in crd["status"]["conditions"]}
        self.assertEqual(conds, {
            "NamesAccepted": ("True", "NoConflicts", "no conflicts found"),
            "Established": ("True", "InitialNamesAccepted", "the initial names have been accepted"),
        })
        self.assertEqual(crd["status"]["acceptedNames"], {
            "categories": ["all"], "kind": "Widget", "listKind": "WidgetList",
            "plural": "widgets", "shortNames": ["wd"], "singular": "widget"})
        self.assertEqual(crd["status"]["storedVersions"], ["v1"])

    def test_create_defaults_prunes_warns(self) -> None:
        """Create applies defaults, prunes unknown fields with a Warning (the default Warn),
        drops status (status subresource) and starts at generation 1."""
        self.install()
        body = widget("w1", replicas=1, junk=1)
        body["status"] = {"phase": "x"}
        code, obj, response = self.request("POST", WIDGETS, body)
        self.assertEqual(code, 201, obj)
        self.assertEqual((obj["spec"], "status" in obj, obj["metadata"]["generation"]),
                         ({"replicas": 1, "color": "blue"}, False, 1))
        self.assertEqual(response.headers.getRawHeaders("warning"),
                         ['299 - "unknown field \\"spec.junk\\""'])

    def test_strict_field_validation(self) -> None:
        """fieldValidation=Strict refuses unknown fields with 400 and upstream's text."""
        self.install()
        code, obj, _ = self.request("POST", WIDGETS + "?fieldValidation=Strict",
                                    widget("w1", junk=1))
        self.assertEqual((code, obj["reason"], obj["message"]), (
            400, "BadRequest", 'Widget in version "v1" cannot be handled as a Widget: strict '
            'decoding error: unknown field "spec.junk"'))

    def test_list_items_are_typed(self) -> None:
        """List items of custom resources carry apiVersion and kind."""
        self.install()
        self.request("POST", WIDGETS, widget("w1"))
        code, lst, _ = self.request("GET", WIDGETS)
        self.assertEqual((lst["kind"], [(i["apiVersion"], i["kind"]) for i in lst["items"]]),
                         ("WidgetList", [("example.com/v1", "Widget")]))

    def test_list_continue_always_written(self) -> None:
        """A custom resource list carries C{metadata.continue} even when empty, as upstream's
        UnstructuredList encodes it (C{tests/vectors/crd.jsonl}); a Table of it does not."""
        self.install()
        self.request("POST", WIDGETS, widget("w1"))
        _, lst, _ = self.request("GET", WIDGETS)
        self.assertEqual(lst["metadata"]["continue"], "")
        _, table, _ = self.request("GET", WIDGETS, headers={
            "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        self.assertNotIn("continue", table["metadata"])

    def test_schema_error(self) -> None:
        """An invalid value is a 422 with the schema's message and path."""
        self.install()
        code, obj, _ = self.request("POST", WIDGETS, widget("w1", replicas="two"))
        self.assertEqual(code, 422, obj)
        self.assertEqual(obj["details"]["causes"][0], {
            "reason": "FieldValueTypeInvalid", "field": "spec.replicas",
            "message": 'Invalid value: "string": spec.replicas in body must be of type integer: '
                       '"string"'})

    def test_unchecked_rules_error_only_with_rules(self) -> None:
        """The "some validation rules were not checked" error follows a blocking error only
        when the schema has CEL rules (upstream's validator is nil without any;
        C{tests/vectors/crd.jsonl})."""
        self.install()
        _, obj, _ = self.request("POST", WIDGETS, widget("w1", color=5))
        self.assertEqual([c["field"] for c in obj["details"]["causes"]],
                         ["spec.color", "<nil>"])
        plain = copy.deepcopy(CRD)
        plain["metadata"]["name"] = "gizmos.example.com"
        plain["spec"]["names"] = {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"}
        del plain["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
            "x-kubernetes-validations"]
        self.install(plain)
        gizmo = widget("g1", color=5)
        gizmo["kind"] = "Gizmo"
        code, obj, _ = self.request("POST", "/apis/example.com/v1/namespaces/default/gizmos",
                                    gizmo)
        self.assertEqual(code, 422, obj)
        self.assertEqual([c["field"] for c in obj["details"]["causes"]], ["spec.color"])

    def test_cel_old_self(self) -> None:
        """A transition rule refuses a change of spec.color."""
        self.install()
        self.request("POST", WIDGETS, widget("w1", color="red"))
        code, obj, _ = self.request("PATCH", WIDGETS + "/w1", {"spec": {"color": "green"}},
                                    content_type="application/merge-patch+json")
        self.assertEqual((code, obj["message"]), (
            422, 'Widget.example.com "w1" is invalid: spec: Invalid value: "object": color is '
            'immutable'))

    def test_table(self) -> None:
        """The Table has Name, then the printer columns with their priorities."""
        self.install()
        self.request("POST", WIDGETS, widget("w1", replicas=2))
        code, table, _ = self.request(
            "GET", WIDGETS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        self.assertEqual([(c["name"], c["type"], c["priority"])
                          for c in table["columnDefinitions"]],
                         [("Name", "string", 0), ("Replicas", "integer", 0),
                          ("Phase", "string", 1)])
        self.assertEqual(table["rows"][0]["cells"], ["w1", 2, None])

    def test_scale_and_status(self) -> None:
        """scale writes specReplicasPath (generation bump); status writes only status; the
        main endpoint ignores status."""
        self.install()
        self.request("POST", WIDGETS, widget("w1", replicas=1))
        code, scale, _ = self.request("PUT", WIDGETS + "/w1/scale", {
            "apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "w1"},
            "spec": {"replicas": 4}})
        self.assertEqual((code, scale["spec"], scale["status"]), (200, {"replicas": 4},
                                                                  {"replicas": 0}))
        code, obj, _ = self.request("PATCH", WIDGETS + "/w1/status",
                                    {"status": {"replicas": 4}, "spec": {"replicas": 9}},
                                    content_type="application/merge-patch+json")
        self.assertEqual((obj["spec"]["replicas"], obj["status"], obj["metadata"]["generation"]),
                         (4, {"replicas": 4}, 2))
        code, obj, _ = self.request("PATCH", WIDGETS + "/w1", {"status": {"replicas": 0}},
                                    content_type="application/merge-patch+json")
        self.assertEqual((obj["status"], obj["metadata"]["generation"]), ({"replicas": 4}, 2))

    def test_negative_scale_is_the_resource_error(self) -> None:
        """A negative count through C{/scale} is refused by the custom resource's validation,
        not as a Scale (upstream; C{tests/vectors/crd.jsonl} cr-scale-patch-negative)."""
        self.install()
        self.request("POST", WIDGETS, widget("w1", replicas=1))
        code, st, _ = self.request("PATCH", WIDGETS + "/w1/scale", {"spec": {"replicas": -5}},
                                   content_type="application/merge-patch+json")
        self.assertEqual((code, st["details"]["kind"]), (422, "Widget"))
        self.assertIn({"reason": "FieldValueInvalid", "field": ".spec.replicas",
                       "message": "Invalid value: -5: should be a non-negative integer"},
                      st["details"]["causes"])

    def test_scale_of_unset_replicas_not_tracked(self) -> None:
        """Scaling a custom resource whose replicas nobody owns (unset) records no managed
        fields entry (upstream; C{tests/vectors/crd.jsonl} cr-watch-events)."""
        self.install()
        self.request("POST", WIDGETS, widget("w1"))
        self.request("PATCH", WIDGETS + "/w1/scale", {"spec": {"replicas": 2}},
                     content_type="application/merge-patch+json")
        _, obj, _ = self.request("GET", WIDGETS + "/w1")
        self.assertEqual(obj["spec"]["replicas"], 2)
        self.assertEqual([e.get("subresource", "") for e in obj["metadata"]["managedFields"]],
                         [""])

    def test_strategic_merge_patch_refused(self) -> None:
        """Strategic merge patch is 415 with the three accepted patch types."""
        self.install()
        self.request("POST", WIDGETS, widget("w1"))
        code, obj, _ = self.request("PATCH", WIDGETS + "/w1", {"spec": {}},
                                    content_type="application/strategic-merge-patch+json")
        self.assertEqual((code, obj["message"]), (
            415, "the body of the request was in an unknown format - accepted media types "
            "include: application/json-patch+json, application/merge-patch+json, "
            "application/apply-patch+yaml"))

    def test_selectors(self) -> None:
        """Label selectors and the selectable field spec.color filter lists; an unknown field
        label is refused."""
        self.install()
        self.request("POST", WIDGETS, dict(widget("w1", color="red"),
                                           metadata={"name": "w1", "labels": {"a": "b"}}))
        self.request("POST", WIDGETS, widget("w2", color="green"))
        def names(q: str) -> list:
            return [i["metadata"]["name"] for i in self.request("GET", WIDGETS + q)[1]["items"]]

        self.assertEqual(names("?fieldSelector=spec.color%3Dgreen"), ["w2"])
        self.assertEqual(names("?labelSelector=a%3Db"), ["w1"])
        self.assertEqual(names("?fieldSelector=metadata.name%3Dw1"), ["w1"])
        code, obj, _ = self.request("GET", WIDGETS + "?fieldSelector=spec.replicas%3D1")
        self.assertEqual((code, obj["message"]), (400, "field label not supported: spec.replicas"))

    def test_discovery_and_delete(self) -> None:
        """The group appears in discovery (legacy and aggregated) with short names and
        categories; deleting the CRD deletes its objects and the group disappears."""
        self.install()
        self.request("POST", WIDGETS, widget("w1"))
        code, groups, _ = self.request("GET", "/apis")
        self.assertIn("example.com", [g["name"] for g in groups["groups"]])
        code, agg, _ = self.request("GET", "/apis", headers={
            "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
        group = [g for g in agg["items"] if g["metadata"]["name"] == "example.com"][0]
        res = group["versions"][0]["resources"][0]
        self.assertEqual((res["resource"], res["shortNames"], res["categories"],
                          [s["subresource"] for s in res["subresources"]]),
                         ("widgets", ["wd"], ["all"], ["scale", "status"]))
        code, obj, _ = self.request("DELETE", f"{CRDS}/widgets.example.com")
        self.assertEqual((code, obj["metadata"]["finalizers"]),
                         (200, ["customresourcecleanup.apiextensions.k8s.io"]))
        self.settle()
        self.assertEqual(self.request("GET", f"{CRDS}/widgets.example.com")[0], 404)
        self.assertEqual(self.request("GET", WIDGETS)[0], 404)
        code, groups, _ = self.request("GET", "/apis")
        self.assertNotIn("example.com", [g["name"] for g in groups["groups"]])
        self.install()
        self.assertEqual(self.request("GET", WIDGETS)[1]["items"], [])

    def test_apiservice_registered(self) -> None:
        """An APIService v1.example.com is registered (automanaged "true") and removed."""
        self.install()
        code, svc, _ = self.request("GET", "/apis/apiregistration.k8s.io/v1/apiservices/"
                                           "v1.example.com")
        self.assertEqual((code, svc["metadata"]["labels"], svc["spec"]["groupPriorityMinimum"],
                          svc["spec"]["versionPriority"]),
                         (200, {"kube-aggregator.kubernetes.io/automanaged": "true"}, 1000, 100))
        self.request("DELETE", f"{CRDS}/widgets.example.com")
        self.settle()
        self.assertEqual(self.request("GET", "/apis/apiregistration.k8s.io/v1/apiservices/"
                                             "v1.example.com")[0], 404)

    def test_openapi(self) -> None:
        """/openapi/v3/apis/example.com/v1 carries the schema with the GVK extension."""
        self.install()
        code, root, _ = self.request("GET", "/openapi/v3")
        self.assertIn("apis/example.com/v1", root["paths"])
        code, doc, _ = self.request("GET", "/openapi/v3/apis/example.com/v1")
        schema = doc["components"]["schemas"]["com.example.v1.Widget"]
        self.assertEqual(schema["x-kubernetes-group-version-kind"],
                         [{"group": "example.com", "kind": "Widget", "version": "v1"}])
        self.assertEqual(schema["properties"]["spec"]["properties"]["color"],
                         {"type": "string", "default": "blue"})
        code, v2, _ = self.request("GET", "/openapi/v2")
        self.assertIn("com.example.v1.Widget", v2["definitions"])

    def test_namespace_deletion_deletes_custom_resources(self) -> None:
        """Deleting a namespace deletes the custom resources in it."""
        self.install()
        self.request("POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})
        self.request("POST", "/apis/example.com/v1/namespaces/team/widgets", widget("w1"))
        self.request("DELETE", "/api/v1/namespaces/team")
        self.settle()
        code, lst, _ = self.request("GET", "/apis/example.com/v1/widgets")
        self.assertEqual(lst["items"], [])

    def test_name_conflict(self) -> None:
        """A second CRD of the group claiming a taken plural is NamesAccepted False."""
        self.install()
        other = copy.deepcopy(CRD)
        other["metadata"]["name"] = "gadgets.example.com"
        other["spec"]["names"] = {"plural": "gadgets", "singular": "gadget", "kind": "Gadget",
                                  "shortNames": ["wd"]}
        crd = self.install(other)
        cond = [c for c in crd["status"]["conditions"] if c["type"] == "NamesAccepted"][0]
        self.assertEqual((cond["status"], cond["reason"], cond["message"]),
                         ("False", "ShortNamesConflict", '"wd" is already in use'))

    def test_restart(self) -> None:
        """A new server chain over the same storage serves the CRDs it finds."""
        self.install()
        self.request("POST", WIDGETS, widget("w1"))
        parts = build_chain(self.clock, storage=self.storage)
        for server in parts["front"].chain():
            server.hooks.startService()
            self.addCleanup(server.hooks.stopService)
        self.settle()
        from treq.testing import StubTreq
        self.treq = StubTreq(parts["chain"])
        code, obj, _ = self.request("GET", WIDGETS + "/w1")
        self.assertEqual((code, obj["spec"]), (200, {"color": "blue"}))


class VersionTests(CRDTestCase):
    """Several versions, conversion strategy None, served false, deprecation."""

    def crd(self) -> dict:
        crd = copy.deepcopy(CRD)
        v1 = crd["spec"]["versions"][0]
        v1beta1 = dict(copy.deepcopy(v1), name="v1beta1", storage=False, deprecated=True)
        v0 = dict(copy.deepcopy(v1), name="v1alpha1", storage=False, served=False)
        crd["spec"]["versions"] = [v1beta1, v1, v0]
        return crd

    def test_versions(self) -> None:
        """Objects written in v1beta1 read back in v1 (apiVersion rewritten); the deprecated
        version warns; an unserved version is 404; v1 is preferred."""
        self.install(self.crd())
        code, obj, response = self.request(
            "POST", "/apis/example.com/v1beta1/namespaces/default/widgets",
            dict(widget("w1"), apiVersion="example.com/v1beta1"))
        self.assertEqual((code, obj["apiVersion"]), (201, "example.com/v1beta1"))
        self.assertEqual(response.headers.getRawHeaders("warning"), [
            '299 - "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget"'])
        code, obj, _ = self.request("GET", WIDGETS + "/w1")
        self.assertEqual((code, obj["apiVersion"]), (200, "example.com/v1"))
        self.assertEqual(self.request("GET", "/apis/example.com/v1alpha1/namespaces/default/"
                                             "widgets")[0], 404)
        code, group, _ = self.request("GET", "/apis/example.com")
        self.assertEqual((group["preferredVersion"]["version"],
                          [v["version"] for v in group["versions"]]), ("v1", ["v1", "v1beta1"]))

    def test_stored_in_old_version(self) -> None:
        """After the storage version moves to v1beta1... an object stored in v1 still reads in
        every served version, and storedVersions lists both."""
        self.install()
        self.request("POST", WIDGETS, widget("w1"))
        code, crd, _ = self.request("GET", f"{CRDS}/widgets.example.com")
        new = self.crd()
        new["metadata"] = crd["metadata"]
        new["spec"]["versions"][0]["storage"] = True
        new["spec"]["versions"][1]["storage"] = False
        code, crd, _ = self.request("PUT", f"{CRDS}/widgets.example.com", new)
        self.assertEqual((code, crd["status"]["storedVersions"]), (200, ["v1", "v1beta1"]))
        self.settle()
        code, obj, _ = self.request("GET",
                                    "/apis/example.com/v1beta1/namespaces/default/widgets/w1")
        self.assertEqual((code, obj["apiVersion"]), (200, "example.com/v1beta1"))
        code, obj, _ = self.request("GET", WIDGETS + "/w1")
        self.assertEqual((code, obj["apiVersion"]), (200, "example.com/v1"))


class FieldValidationTests(CRDTestCase):
    def test_apply_duplicate_preserving_unknown_fields(self) -> None:
        """A custom resource applied with a duplicate key under a schema that preserves
        unknown fields is still refused under Strict (e2e "FieldValidation should detect
        duplicates in a CR when preserving unknown fields")."""
        crd = copy.deepcopy(CRD)
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
            "x-kubernetes-preserve-unknown-fields"] = True
        self.install(crd)
        body = (b"\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n"
                b"  unknown: uk1\n  color: c1\n  color: c2\n  replicas: 1\n")
        code, obj, _ = self.request("PATCH", WIDGETS + "/w?fieldManager=m&fieldValidation=Strict",
                                    body, content_type="application/apply-patch+yaml")
        self.assertEqual((code, obj["message"]), (
            400, 'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal '
                 'errors:\n  line 9: key "color" already set in map'))


class RoutingTests(CRDTestCase):
    def test_unknown_paths_in_custom_resource_group(self):
        """Custom resources are served outside go-restful: an unknown version or resource of
        their group, a write to the version's discovery document, or HEAD are a plain-text
        404, as upstream's crdHandler delegates them to the not-found handler."""
        self.install()
        for method, path in (("GET", "/apis/example.com/v9"), ("GET", "/apis/example.com/v1/foos"),
                             ("POST", "/apis/example.com/v1"), ("HEAD", WIDGETS),
                             ("HEAD", "/apis/example.com/v1")):
            code, body, response = self.request(method, path, b"{}" if method == "POST" else None)
            self.assertEqual((code, response.headers.getRawHeaders("content-type")),
                             (404, ["text/plain; charset=utf-8"]), (method, path))
            if method != "HEAD":
                self.assertEqual(body, "404 page not found\n")


class WatchListTests(CRDTestCase):
    def test_initial_events_list_blueprint(self):
        """The initial-events-end bookmark of a custom resource watch-list carries the empty
        list as Go encodes an unstructured list: sorted keys, no metadata, C{items: []}."""
        import base64
        import json

        self.install()
        d = self.treq.get(
            "https://kubetwist.test" + WIDGETS + "?watch=1&sendInitialEvents=true"
            "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=5",
            headers={"Authorization": ["Bearer admin-token"]})
        self.treq.flush()
        response = self.successResultOf(d)
        chunks = []
        response.deliverBody(_Collect(chunks))
        self.treq.flush()
        self.clock.advance(6)
        self.treq.flush()
        events = [json.loads(line) for line in b"".join(chunks).splitlines() if line]
        # the initial-events-end bookmark (a later one comes before the watch's deadline)
        (annotations,) = [e["object"]["metadata"]["annotations"] for e in events
                          if "annotations" in e["object"]["metadata"]]
        self.assertEqual(
            base64.b64decode(annotations["kubernetes.io/initial-events-list-blueprint"]),
            b'{"apiVersion":"example.com/v1","items":[],"kind":"WidgetList"}\n')


class _Collect:
    def __init__(self, chunks):
        self.chunks = chunks

    def makeConnection(self, transport):
        pass

    def dataReceived(self, data):
        self.chunks.append(data)

    def connectionLost(self, reason):
        pass
