"""
The resource handlers end to end over HTTP (StubTreq) through the real chain: verbs, status
codes, Status reasons and messages as kube-apiserver answers them.
"""

from tests.support import KubeTestCase


def cm(name, **data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": data or {"a": "b"}}


class CreateGetTests(KubeTestCase):
    def test_create_returns_201_with_system_fields(self):
        """A create answers 201 with uid, creationTimestamp and resourceVersion set."""
        code, obj, _ = self.request("POST", "/api/v1/namespaces/default/configmaps", cm("a"))
        self.assertEqual(code, 201)
        self.assertEqual(obj["kind"], "ConfigMap")
        self.assertEqual(obj["metadata"]["namespace"], "default")
        self.assertTrue(obj["metadata"]["uid"])
        self.assertEqual(obj["metadata"]["creationTimestamp"], "2023-11-14T22:13:20Z")
        self.assertTrue(obj["metadata"]["resourceVersion"].isdigit())

    def test_get_roundtrip(self):
        """GET returns the created object with the same resourceVersion."""
        _, created, _ = self.request("POST", "/api/v1/namespaces/default/configmaps", cm("a"))
        code, got, _ = self.request("GET", "/api/v1/namespaces/default/configmaps/a")
        self.assertEqual(code, 200)
        self.assertEqual(got, created)

    def test_get_missing_is_404_status(self):
        """A missing object is 404 NotFound with upstream's message and details."""
        code, st, _ = self.request("GET", "/apis/apps/v1/namespaces/default/deployments/nope")
        self.assertEqual(code, 404)
        self.assertEqual(st["reason"], "NotFound")
        self.assertEqual(st["message"], 'deployments.apps "nope" not found')
        self.assertEqual(st["details"], {"name": "nope", "group": "apps", "kind": "deployments"})

    def test_already_exists(self):
        """A second create of the same name is 409 AlreadyExists."""
        self.request("POST", "/api/v1/namespaces/default/configmaps", cm("a"))
        code, st, _ = self.request("POST", "/api/v1/namespaces/default/configmaps", cm("a"))
        self.assertEqual((code, st["reason"]), (409, "AlreadyExists"))
        self.assertEqual(st["message"], 'configmaps "a" already exists')

    def test_generate_name(self):
        """generateName gets a five-character suffix."""
        body = cm("")
        body["metadata"] = {"generateName": "x-"}
        code, obj, _ = self.request("POST", "/api/v1/namespaces/default/configmaps", body)
        self.assertEqual(code, 201)
        self.assertRegex(obj["metadata"]["name"], r"^x-[bcdfghjklmnpqrstvwxz2456789]{5}$")

    def test_missing_namespace_is_404(self):
        """Creating in a namespace that does not exist is refused (NamespaceLifecycle)."""
        code, st, _ = self.request("POST", "/api/v1/namespaces/ghost/configmaps", cm("a"))
        self.assertEqual((code, st["reason"]), (404, "NotFound"))
        self.assertEqual(st["message"], 'namespaces "ghost" not found')

    def test_invalid_name_is_422_with_field_path(self):
        """A bad name is 422 Invalid with a metadata.name cause; nothing is stored."""
        code, st, _ = self.request("POST", "/api/v1/namespaces/default/configmaps", cm("Bad_Name"))
        self.assertEqual((code, st["reason"]), (422, "Invalid"))
        self.assertEqual(st["details"]["causes"][0]["field"], "metadata.name")
        self.assertTrue(st["message"].startswith('ConfigMap "Bad_Name" is invalid: metadata.name'))
        code, _, _ = self.request("GET", "/api/v1/namespaces/default/configmaps/Bad_Name")
        self.assertEqual(code, 404)

    def test_malformed_json_is_400(self):
        """Malformed JSON is 400 BadRequest."""
        code, st, _ = self.request("POST", "/api/v1/namespaces/default/configmaps", b'{"bad')
        self.assertEqual((code, st["reason"]), (400, "BadRequest"))
        self.assertIn("json parse error", st["message"])

    def test_wrong_kind_is_400(self):
        """A Service posted to the configmaps URL is 400 BadRequest."""
        body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"}}
        code, st, _ = self.request("POST", "/api/v1/namespaces/default/configmaps", body)
        self.assertEqual((code, st["reason"]), (400, "BadRequest"))
        self.assertIn('Service in version "v1" cannot be handled as a ConfigMap', st["message"])

    def test_wrong_api_version_is_400(self):
        """An apiVersion other than the URL's is 400 with upstream's message."""
        body = {"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
        code, st, _ = self.request("POST", "/api/v1/namespaces/default/configmaps", body)
        self.assertEqual(code, 400)
        self.assertEqual(st["message"], "the API version in the data (apps/v1) does not match "
                                        "the expected API version (v1)")

    def test_unknown_resource_is_404(self):
        """An unknown resource under a served group-version is a 404 Status."""
        code, st, _ = self.request("GET", "/api/v1/foos")
        self.assertEqual((code, st["reason"]), (404, "NotFound"))
        code, st, _ = self.request("GET", "/apis/nope.example.com/v1/foos")
        self.assertEqual(code, 404)


class UpdateTests(KubeTestCase):
    def test_stale_resource_version_conflicts(self):
        """PUT with an old resourceVersion is 409 Conflict with the optimistic-lock message."""
        _, obj, _ = self.request("POST", "/api/v1/namespaces/default/configmaps", cm("a"))
        obj["data"] = {"a": "c"}
        code, newer, _ = self.request("PUT", "/api/v1/namespaces/default/configmaps/a", obj)
        self.assertEqual(code, 200)
        obj["data"] = {"a": "d"}
        code, st, _ = self.request("PUT", "/api/v1/namespaces/default/configmaps/a", obj)
        self.assertEqual((code, st["reason"]), (409, "Conflict"))
        self.assertEqual(st["message"], 'Operation cannot be fulfilled on configmaps "a": the '
                         'object has been modified; please apply your changes to the latest '
                         'version and try again')

    def test_generation_bumps_on_spec_change_only(self):
        """A Deployment's generation grows with spec changes, not with label changes."""
        dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                   "metadata": {"labels": {"a": "b"}},
                   "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
        code, obj, _ = self.request("POST", "/apis/apps/v1/namespaces/default/deployments", dep)
        self.assertEqual((code, obj["metadata"]["generation"]), (201, 1))
        code, obj, _ = self.request(
            "PATCH", "/apis/apps/v1/namespaces/default/deployments/d",
            {"metadata": {"labels": {"x": "y"}}}, content_type="application/merge-patch+json")
        self.assertEqual((code, obj["metadata"]["generation"]), (200, 1))
        code, obj, _ = self.request(
            "PATCH", "/apis/apps/v1/namespaces/default/deployments/d",
            {"spec": {"replicas": 3}}, content_type="application/strategic-merge-patch+json")
        self.assertEqual((code, obj["metadata"]["generation"], obj["spec"]["replicas"]),
                         (200, 2, 3))

    def test_json_patch(self):
        """A JSON patch applies to the stored object."""
        self.request("POST", "/api/v1/namespaces/default/configmaps", cm("a"))
        code, obj, _ = self.request(
            "PATCH", "/api/v1/namespaces/default/configmaps/a",
            [{"op": "add", "path": "/data/z", "value": "1"}],
            content_type="application/json-patch+json")
        self.assertEqual((code, obj["data"]), (200, {"a": "b", "z": "1"}))

    def test_patch_unsupported_media_type(self):
        """A PATCH with a non-patch content type is upstream's generic 415, with empty details
        (C{tests/vectors/core.jsonl} cm-patch-bad-content-type)."""
        self.request("POST", "/api/v1/namespaces/default/configmaps", cm("a"))
        code, st, _ = self.request("PATCH", "/api/v1/namespaces/default/configmaps/a", {},
                                   content_type="text/plain")
        self.assertEqual((code, st["reason"], st["message"], st["details"]),
                         (415, "UnsupportedMediaType", "415: Unsupported Media Type", {}))

    def test_scale_subresource(self):
        """GET and PATCH of /scale read and write spec.replicas."""
        dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                   "metadata": {"labels": {"a": "b"}},
                   "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
        self.request("POST", "/apis/apps/v1/namespaces/default/deployments", dep)
        code, scale, _ = self.request("GET", "/apis/apps/v1/namespaces/default/deployments/d/scale")
        self.assertEqual(code, 200)
        self.assertEqual(scale["kind"], "Scale")
        self.assertEqual(scale["spec"], {"replicas": 1})
        self.assertEqual(scale["status"]["selector"], "a=b")
        code, scale, _ = self.request(
            "PATCH", "/apis/apps/v1/namespaces/default/deployments/d/scale",
            {"spec": {"replicas": 4}}, content_type="application/merge-patch+json")
        self.assertEqual((code, scale["spec"]["replicas"]), (200, 4))
        _, obj, _ = self.request("GET", "/apis/apps/v1/namespaces/default/deployments/d")
        self.assertEqual(obj["spec"]["replicas"], 4)

    def test_scale_of_missing_object(self):
        """GET of a missing object's /scale names C{deployments/scale}; PATCH names the
        deployment (kube-apiserver v1.32, C{tests/vectors/apps.jsonl})."""
        code, st, _ = self.request("GET", "/apis/apps/v1/namespaces/default/deployments/x/scale")
        self.assertEqual((code, st["message"], st["details"]), (
            404, 'deployments/scale.apps "x" not found',
            {"name": "x", "group": "apps", "kind": "deployments/scale"}))
        code, st, _ = self.request(
            "PATCH", "/apis/apps/v1/namespaces/default/deployments/x/scale",
            {"spec": {"replicas": 4}}, content_type="application/merge-patch+json")
        self.assertEqual((code, st["message"]), (404, 'deployments.apps "x" not found'))


class DeleteTests(KubeTestCase):
    def test_delete_returns_success_status(self):
        """Deleting answers a Success Status naming the object; it is gone."""
        _, obj, _ = self.request("POST", "/api/v1/namespaces/default/configmaps", cm("a"))
        code, st, _ = self.request("DELETE", "/api/v1/namespaces/default/configmaps/a")
        self.assertEqual(code, 200)
        self.assertEqual(st["status"], "Success")
        self.assertEqual(st["details"], {"name": "a", "kind": "configmaps",
                                         "uid": obj["metadata"]["uid"]})
        self.assertEqual(self.request("GET", "/api/v1/namespaces/default/configmaps/a")[0], 404)

    def test_finalizers_keep_object_with_deletion_timestamp(self):
        """An object with finalizers gets deletionTimestamp and goes when they are removed."""
        body = cm("a")
        body["metadata"]["finalizers"] = ["example.com/x"]
        self.request("POST", "/api/v1/namespaces/default/configmaps", body)
        code, obj, _ = self.request("DELETE", "/api/v1/namespaces/default/configmaps/a")
        self.assertEqual(code, 200)
        self.assertEqual(obj["metadata"]["deletionTimestamp"], "2023-11-14T22:13:20Z")
        code, obj, _ = self.request(
            "PATCH", "/api/v1/namespaces/default/configmaps/a",
            {"metadata": {"finalizers": None}}, content_type="application/merge-patch+json")
        self.assertEqual(code, 200)
        self.assertEqual(self.request("GET", "/api/v1/namespaces/default/configmaps/a")[0], 404)

    def test_uid_precondition(self):
        """A delete with a wrong uid precondition is 409 Conflict."""
        self.request("POST", "/api/v1/namespaces/default/configmaps", cm("a"))
        code, st, _ = self.request(
            "DELETE", "/api/v1/namespaces/default/configmaps/a",
            {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "nope"}})
        self.assertEqual((code, st["reason"]), (409, "Conflict"))
        # upstream rest.BeforeDelete: the kind stands where the resource would
        uid = self.request("GET", "/api/v1/namespaces/default/configmaps/a")[1]["metadata"]["uid"]
        self.assertEqual(
            st["message"],
            f'Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition '
            f'(nope) does not match the UID in record ({uid}). The object might have been '
            f'deleted and then recreated')
        self.assertEqual(st["details"], {"name": "a", "kind": "ConfigMap"})

    def test_delete_namespace_terminates_and_cleans_up(self):
        """A namespace goes Terminating, its content is deleted, then it disappears."""
        self.request("POST", "/api/v1/namespaces",
                     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t"}})
        self.request("POST", "/api/v1/namespaces/t/configmaps", cm("a"))
        code, ns, _ = self.request("DELETE", "/api/v1/namespaces/t")
        self.assertEqual(code, 200)
        self.assertEqual(ns["status"]["phase"], "Terminating")
        self.clock.advance(0)
        self.assertEqual(self.request("GET", "/api/v1/namespaces/t/configmaps/a")[0], 404)
        self.assertEqual(self.request("GET", "/api/v1/namespaces/t")[0], 404)

    def test_immortal_namespace(self):
        """kube-system cannot be deleted (403)."""
        code, st, _ = self.request("DELETE", "/api/v1/namespaces/kube-system")
        self.assertEqual((code, st["reason"]), (403, "Forbidden"))


class ListTests(KubeTestCase):
    def setUp(self):
        super().setUp()
        for i in range(7):
            body = cm(f"c{i}")
            body["metadata"]["labels"] = {"i": str(i), "even": str(i % 2 == 0).lower()}
            self.request("POST", "/api/v1/namespaces/default/configmaps", body)

    def names(self, path):
        code, lst, _ = self.request("GET", path)
        self.assertEqual(code, 200, lst)
        return [i["metadata"]["name"] for i in lst["items"]]

    def test_list_items_have_no_type_meta(self):
        """List items carry no kind/apiVersion, as typed lists."""
        code, lst, _ = self.request("GET", "/api/v1/namespaces/default/configmaps")
        self.assertEqual(lst["kind"], "ConfigMapList")
        self.assertNotIn("kind", lst["items"][0])

    def test_label_selectors(self):
        """=, !=, in, notin, exists and !exists select as upstream."""
        base = "/api/v1/namespaces/default/configmaps?labelSelector="
        self.assertEqual(len(self.names(base + "even%3Dtrue")), 4)
        self.assertEqual(len(self.names(base + "even!%3Dtrue")), 4)  # kube-root-ca.crt too
        self.assertEqual(self.names(base + "i%20in%20(1,2)"), ["c1", "c2"])
        self.assertEqual(len(self.names(base + "i%20notin%20(1,2)")), 6)
        self.assertEqual(len(self.names(base + "i")), 7)
        self.assertEqual(self.names(base + "!i"), ["kube-root-ca.crt"])

    def test_field_selector(self):
        """metadata.name field selector; an unsupported field is 400 worded as the kind's
        field label conversion words it (C{tests/vectors/fieldselectors.jsonl})."""
        self.assertEqual(self.names("/api/v1/configmaps?fieldSelector=metadata.name%3Dc3"), ["c3"])
        code, st, _ = self.request("GET", "/api/v1/configmaps?fieldSelector=spec.x%3Dy")
        self.assertEqual((code, st["message"]), (400, '"spec.x" is not a known field selector: '
                                                      'only "metadata.name", "metadata.namespace"'))
        code, st, _ = self.request("GET", "/api/v1/pods?fieldSelector=spec.x%3Dy")
        self.assertEqual((code, st["message"]), (400, "field label not supported: spec.x"))
        code, st, _ = self.request("GET", "/apis/batch/v1/jobs?fieldSelector=spec.x%3Dy")
        self.assertEqual((code, st["message"]), (400, 'field label "spec.x" not supported for Job'))

    def test_invalid_list_options_have_causes(self):
        """Invalid list options are upstream's NewInvalid on ListOptions, with the cause
        (kube-apiserver v1.32, C{tests/vectors/core.jsonl} list-rv-match-without-rv)."""
        code, st, _ = self.request("GET", "/api/v1/configmaps?resourceVersionMatch=Exact")
        self.assertEqual((code, st["message"], st["details"]), (422, (
            'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
            'resourceVersionMatch is forbidden unless resourceVersion is provided'),
            {"group": "meta.k8s.io", "kind": "ListOptions", "causes": [{
                "reason": "FieldValueForbidden", "field": "resourceVersionMatch",
                "message": "Forbidden: resourceVersionMatch is forbidden unless resourceVersion "
                           "is provided"}]}))

    def test_chunked_list(self):
        """limit/continue pages through every object exactly once."""
        seen, cont = [], ""
        while True:
            path = "/api/v1/namespaces/default/configmaps?limit=3"
            if cont:
                path += "&continue=" + cont
            code, lst, _ = self.request("GET", path)
            seen += [i["metadata"]["name"] for i in lst["items"]]
            cont = lst["metadata"].get("continue", "")
            if not cont:
                break
        self.assertEqual(len(seen), 8)
        self.assertEqual(len(set(seen)), 8)

    def test_table(self):
        """Accept as=Table answers a meta.k8s.io Table with the printer columns."""
        code, t, resp = self.request(
            "GET", "/api/v1/namespaces/default/configmaps",
            headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
        self.assertEqual(code, 200)
        self.assertEqual(t["kind"], "Table")
        self.assertEqual([c["name"] for c in t["columnDefinitions"]], ["Name", "Data", "Age"])
        self.assertEqual(t["rows"][0]["object"]["kind"], "PartialObjectMetadata")

    def test_table_of_one_object(self):
        """The Table of one object carries its resourceVersion; C{includeObject=None} writes
        C{"object": null} per row (kube-apiserver v1.32, C{tests/vectors/core.jsonl})."""
        _, cm, _ = self.request("GET", "/api/v1/namespaces/default/configmaps/c1")
        accept = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
        code, t, _ = self.request("GET", "/api/v1/namespaces/default/configmaps/c1",
                                  headers=accept)
        self.assertEqual((code, t["metadata"]), (200, {
            "resourceVersion": cm["metadata"]["resourceVersion"]}))
        code, t, _ = self.request("GET", "/api/v1/namespaces/default/configmaps/c1"
                                  "?includeObject=None", headers=accept)
        self.assertEqual(t["rows"][0]["object"], None)
        self.assertIn("object", t["rows"][0])

    def test_yaml_output(self):
        """Accept application/yaml answers YAML."""
        code, text, resp = self.request("GET", "/api/v1/namespaces/default/configmaps/c1",
                                        headers={"Accept": "application/yaml"})
        self.assertEqual(code, 200)
        self.assertIn("kind: ConfigMap\n", text)

    def test_protobuf_only_gets_protobuf(self):
        """A client accepting only protobuf gets the list as protobuf."""
        from kubetwist.runtime import protobuf

        d = self.treq.get("https://kubetwist.test/api/v1/namespaces/default/configmaps",
                          headers={"Authorization": ["Bearer admin-token"],
                                   "Accept": ["application/vnd.kubernetes.protobuf"]})
        self.treq.flush()
        response = self.successResultOf(d)
        self.assertEqual(response.headers.getRawHeaders("Content-Type"),
                         ["application/vnd.kubernetes.protobuf"])
        lst = protobuf.decode(self.successResultOf(response.content()))
        self.assertEqual(lst["kind"], "ConfigMapList")
        self.assertEqual(len(lst["items"]), 8)

    def test_protobuf_table_is_406(self):
        """A Table asked for only in protobuf is 406 NotAcceptable."""
        code, st, _ = self.request("GET", "/api/v1/namespaces/default/configmaps", headers={
            "Accept": "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io"})
        self.assertEqual((code, st["reason"]), (406, "NotAcceptable"))


class ProtobufBodyTests(KubeTestCase):
    """Request bodies as kubectl 1.37's typed clients send them (captured protobuf)."""

    def body(self, name):
        import os

        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        with open(os.path.join(here, "runtime", "fixtures", name), "rb") as f:
            return f.read()

    def post(self, path, fixture):
        return self.request("POST", path, self.body(fixture),
                            content_type="application/vnd.kubernetes.protobuf")

    def test_create_namespace_and_configmap(self):
        """kubectl create namespace / configmap bodies create the objects."""
        code, ns, _ = self.post("/api/v1/namespaces", "kubectl-create-namespace.pb")
        self.assertEqual(code, 201, ns)
        self.assertEqual(ns["status"], {"phase": "Active"})
        code, cm, _ = self.post("/api/v1/namespaces/default/configmaps",
                                "kubectl-create-configmap.pb")
        self.assertEqual(code, 201, cm)
        self.assertEqual(cm["kind"], "ConfigMap")
        self.assertTrue(cm["data"])

    def test_create_deployment_defaults(self):
        """kubectl create deployment's protobuf body is defaulted like JSON input."""
        code, dep, _ = self.post("/apis/apps/v1/namespaces/default/deployments",
                                 "kubectl-create-deployment.pb")
        self.assertEqual(code, 201, dep)
        self.assertEqual(dep["spec"]["strategy"]["type"], "RollingUpdate")
        c = dep["spec"]["template"]["spec"]["containers"][0]
        self.assertEqual(c["terminationMessagePath"], "/dev/termination-log")

    def test_protobuf_to_wrong_url_is_400(self):
        """A protobuf ConfigMap posted to the secrets URL is refused like JSON would be."""
        code, st, _ = self.post("/api/v1/namespaces/default/secrets", "kubectl-create-configmap.pb")
        self.assertEqual((code, st["reason"]), (400, "BadRequest"))

    def test_malformed_protobuf_is_400(self):
        """Truncated protobuf is 400 BadRequest."""
        body = self.body("kubectl-create-configmap.pb")[:-5]
        code, st, _ = self.request("POST", "/api/v1/namespaces/default/configmaps", body,
                                   content_type="application/vnd.kubernetes.protobuf")
        self.assertEqual((code, st["reason"]), (400, "BadRequest"))


class ServiceTests(KubeTestCase):
    def test_cluster_ip_and_node_port_allocated_and_released(self):
        """A NodePort service gets a ClusterIP and a nodePort; deleting frees them."""
        svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
               "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}}
        code, obj, _ = self.request("POST", "/api/v1/namespaces/default/services", svc)
        self.assertEqual(code, 201, obj)
        ip = obj["spec"]["clusterIP"]
        self.assertTrue(ip.startswith("10.0.0."))
        self.assertEqual(obj["spec"]["clusterIPs"], [ip])
        self.assertEqual(obj["spec"]["ports"][0]["nodePort"], 30080)
        svc["metadata"]["name"] = "s2"
        code, st, _ = self.request("POST", "/api/v1/namespaces/default/services", svc)
        self.assertEqual((code, st["reason"]), (422, "Invalid"))
        self.assertIn("spec.ports[0].nodePort: Invalid value: 30080: provided port is already "
                      "allocated", st["message"])
        self.request("DELETE", "/api/v1/namespaces/default/services/s")
        code, obj, _ = self.request("POST", "/api/v1/namespaces/default/services", svc)
        self.assertEqual(code, 201)

    def test_kubernetes_service_bootstrapped(self):
        """The kubernetes Service has the first IP of the range; Endpoints name the server."""
        code, svc, _ = self.request("GET", "/api/v1/namespaces/default/services/kubernetes")
        self.assertEqual(code, 200)
        self.assertEqual(svc["spec"]["clusterIP"], "10.0.0.1")
        code, ep, _ = self.request("GET", "/api/v1/namespaces/default/endpoints/kubernetes")
        self.assertEqual(ep["subsets"][0]["addresses"], [{"ip": "192.0.2.10"}])


class CreateResourceVersionTests(KubeTestCase):
    def test_resource_version_on_create_is_refused(self):
        """A create carrying metadata.resourceVersion fails as upstream's storage does (500,
        a plain error: no reason, recorded from kube-apiserver v1.32)."""
        body = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "rv", "resourceVersion": "12"}}
        code, st, _ = self.request("POST", "/api/v1/namespaces/default/configmaps", body)
        self.assertEqual((code, st.get("reason")), (500, None))
        self.assertEqual(st["message"], "resourceVersion should not be set on objects to be "
                                        "created")
        self.assertEqual(self.request("GET", "/api/v1/namespaces/default/configmaps/rv")[0], 404)

    def test_dry_run_ignores_resource_version(self):
        """Under dryRun=All the storage check does not run (upstream's dry-run storage)."""
        body = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "rv", "resourceVersion": "12"}}
        code, _, _ = self.request("POST", "/api/v1/namespaces/default/configmaps?dryRun=All",
                                  body)
        self.assertEqual(code, 201)
