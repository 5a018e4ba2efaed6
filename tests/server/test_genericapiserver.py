"""Discovery, health, version and OpenAPI of the server chain."""

import json

from tests.support import ADMIN, KubeTestCase

AGG = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"


class DiscoveryTests(KubeTestCase):
    def test_api_versions(self):
        """/api lists v1 and the server address."""
        code, doc, _ = self.request("GET", "/api")
        self.assertEqual(doc["kind"], "APIVersions")
        self.assertEqual(doc["versions"], ["v1"])

    def test_api_group_list_order(self):
        """/apis lists every group of the chain, in kube-aggregator's priority order."""
        code, doc, _ = self.request("GET", "/apis")
        names = [g["name"] for g in doc["groups"]]
        # kube-aggregator's group priorities (pkg/controlplane/apiserver/aggregator.go),
        # highest first; the served groups must appear in this order.
        upstream = ["apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
                    "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io",
                    "networking.k8s.io", "policy", "rbac.authorization.k8s.io",
                    "storage.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io",
                    "scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io",
                    "discovery.k8s.io", "flowcontrol.apiserver.k8s.io"]
        self.assertEqual(names, [g for g in upstream if g in names])
        for group in ("apiregistration.k8s.io", "apps", "apiextensions.k8s.io",
                      "coordination.k8s.io", "rbac.authorization.k8s.io", "storage.k8s.io",
                      "scheduling.k8s.io", "node.k8s.io"):
            self.assertIn(group, names)

    def test_resource_list(self):
        """/apis/apps/v1 lists resources and subresources with verbs and short names."""
        code, doc, _ = self.request("GET", "/apis/apps/v1")
        self.assertEqual((doc["kind"], doc["apiVersion"], doc["groupVersion"]),
                         ("APIResourceList", "v1", "apps/v1"))
        by = {r["name"]: r for r in doc["resources"]}
        self.assertEqual(by["deployments"]["shortNames"], ["deploy"])
        self.assertEqual(by["deployments"]["categories"], ["all"])
        self.assertEqual(by["deployments/scale"]["kind"], "Scale")
        self.assertEqual(by["deployments/scale"]["group"], "autoscaling")
        self.assertEqual(by["deployments/status"]["verbs"], ["get", "patch", "update"])

    def test_core_resource_list(self):
        """/api/v1 has no apiVersion field; configmaps' storageVersionHash is upstream's."""
        code, doc, _ = self.request("GET", "/api/v1")
        self.assertNotIn("apiVersion", doc)
        by = {r["name"]: r for r in doc["resources"]}
        self.assertEqual(by["configmaps"]["storageVersionHash"], "qFsyl6wFWjQ=")
        self.assertNotIn("deletecollection", by["namespaces"]["verbs"])

    def test_aggregated_discovery(self):
        """/apis with the v2 Accept answers an APIGroupDiscoveryList with its media type."""
        code, doc, resp = self.request("GET", "/apis", headers={"Accept": AGG})
        self.assertEqual(resp.headers.getRawHeaders("Content-Type"),
                         ["application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"])
        self.assertEqual(doc["kind"], "APIGroupDiscoveryList")
        apps = [i for i in doc["items"] if i["metadata"]["name"] == "apps"][0]
        deploy = [r for r in apps["versions"][0]["resources"] if r["resource"] == "deployments"][0]
        self.assertEqual(deploy["scope"], "Namespaced")
        self.assertEqual(deploy["responseKind"], {"group": "", "version": "", "kind": "Deployment"})
        self.assertEqual([s["subresource"] for s in deploy["subresources"]], ["scale", "status"])

    def test_aggregated_core_group_has_no_name(self):
        """/api in aggregated form: the core group's metadata has no (empty, omitempty) name,
        only Go's null creationTimestamp."""
        _, doc, _ = self.request("GET", "/api", headers={"Accept": AGG})
        self.assertEqual([i["metadata"] for i in doc["items"]], [{"creationTimestamp": None}])

    def test_group(self):
        """/apis/apps is an APIGroup with v1 preferred."""
        code, doc, _ = self.request("GET", "/apis/apps")
        self.assertEqual(doc["preferredVersion"], {"groupVersion": "apps/v1", "version": "v1"})

    def test_apiservices_autoregistered(self):
        """Every built-in group-version has a local, available APIService."""
        code, lst, _ = self.request("GET", "/apis/apiregistration.k8s.io/v1/apiservices")
        names = sorted(i["metadata"]["name"] for i in lst["items"])
        self.assertIn("v1.apps", names)
        self.assertIn("v1.", names)
        self.assertNotIn("v1", names)
        item = [i for i in lst["items"] if i["metadata"]["name"] == "v1.apps"][0]
        self.assertEqual(item["status"]["conditions"][0]["reason"], "Local")

    def test_apiservice_priorities(self):
        """Autoregistered APIServices carry upstream's group and version priorities
        (C{apiVersionPriorities}) and field manager; the aggregator's own group has none."""
        _, lst, _ = self.request("GET", "/apis/apiregistration.k8s.io/v1/apiservices")
        by = {i["metadata"]["name"]: i for i in lst["items"]}
        self.assertNotIn("v1.apiregistration.k8s.io", by)
        for name, group_priority, version_priority in (
                ("v1.", 18000, 1), ("v1.apps", 17800, 15), ("v2.autoscaling", 17500, 30),
                ("v1.autoscaling", 17500, 15), ("v1.flowcontrol.apiserver.k8s.io", 16100, 21),
                ("v1.events.k8s.io", 17750, 15)):
            spec = by[name]["spec"]
            self.assertEqual((spec["groupPriorityMinimum"], spec["versionPriority"]),
                             (group_priority, version_priority), name)
        fields = by["v1."]["metadata"]["managedFields"]
        self.assertEqual([(f["manager"], f["operation"]) for f in fields],
                         [("kube-apiserver", "Update")])
        self.assertEqual(fields[0]["fieldsV1"]["f:spec"], {
            "f:groupPriorityMinimum": {}, "f:version": {}, "f:versionPriority": {}})


class HealthTests(KubeTestCase):
    def test_readyz_verbose_lists_checks_and_hooks(self):
        """/readyz?verbose lists each check and post-start hook, then the verdict."""
        code, text, _ = self.request("GET", "/readyz?verbose")
        self.assertEqual(code, 200)
        self.assertIn("[+]ping ok\n", text)
        self.assertIn("[+]etcd-readiness ok\n", text)
        self.assertIn("[+]poststarthook/bootstrap-controller ok\n", text)
        self.assertTrue(text.endswith("readyz check passed\n"))

    def test_readyz_fails_while_shutting_down(self):
        """During shutdown /readyz fails (check "shutdown") while /livez still passes."""
        self.shutting_down = True
        code, text, _ = self.request("GET", "/readyz?verbose")
        self.assertEqual(code, 500)
        self.assertIn("[-]shutdown failed: reason withheld", text)
        self.assertTrue(text.endswith("readyz check failed\n"))
        self.assertEqual(self.request("GET", "/livez")[:2], (200, "ok"))

    def test_readyz_exclude(self):
        """?exclude= skips a failing check."""
        self.shutting_down = True
        code, text, _ = self.request("GET", "/readyz?exclude=shutdown")
        self.assertEqual((code, text), (200, "ok"))

    def test_hook_not_finished_fails_readyz(self):
        """A post-start hook that has not finished keeps /readyz failing."""
        hook = [h for h in self.kube.server.hooks][0]
        hook.finished = False
        code, text, _ = self.request("GET", f"/readyz/poststarthook/{hook.name}")
        self.assertEqual(code, 500)

    def test_single_check(self):
        """/healthz/ping runs one check."""
        code, text, _ = self.request("GET", "/healthz/ping")
        self.assertEqual((code, text), (200, "ok"))

    def test_version(self):
        """/version reports the Kubernetes level."""
        code, doc, _ = self.request("GET", "/version")
        self.assertEqual(doc["gitVersion"], "v1.32.0")


class OpenAPITests(KubeTestCase):
    def test_v3_root_and_patch_field_validation(self):
        """The v3 root lists group-versions; a PATCH operation declares fieldValidation."""
        code, root, _ = self.request("GET", "/openapi/v3")
        self.assertIn("apis/apps/v1", root["paths"])
        url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
        code, doc, _ = self.request("GET", url)
        op = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
        self.assertEqual(op["x-kubernetes-group-version-kind"],
                         {"group": "apps", "version": "v1", "kind": "Deployment"})
        self.assertIn("fieldValidation", [p["name"] for p in op["parameters"]])


#: What kube-apiserver's go-restful containers answer for a path under one of their web
#: services that no route serves.
ROUTE_NOT_FOUND = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "the server could not find the requested resource",
                   "reason": "NotFound", "details": {}, "code": 404}
METHOD_NOT_ALLOWED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                      "message": "the server does not allow this method on the requested "
                                 "resource", "reason": "MethodNotAllowed", "details": {},
                      "code": 405}


class RoutingTests(KubeTestCase):
    def test_unknown_path_under_web_service(self):
        """A path under /api, a built-in group or /version that no route serves is a 404
        Status with empty details (upstream go-restful container)."""
        for path in ("/api/v2", "/api/foo/bar", "/api/v1/foos", "/apis/apps/v9",
                     "/apis/apps/v1/foos", "/apis/apps/v1/namespaces/default/foos/x",
                     "/apis/apiregistration.k8s.io/v9", "/apis/apiextensions.k8s.io/v1/foos",
                     "/api/v1/namespaces/default/configmaps/x/foo", "/version/foo"):
            code, body, _ = self.request("GET", path)
            self.assertEqual((code, body), (404, ROUTE_NOT_FOUND), path)

    def test_unknown_path_elsewhere(self):
        """Any other unserved path is Go's plain-text C{404 page not found} (upstream's last
        delegate)."""
        for path in ("/foo", "/apis/foo", "/apis/foo/v1", "/.well-known/foo"):
            code, body, response = self.request("GET", path)
            self.assertEqual((code, body, response.headers.getRawHeaders("content-type")),
                             (404, "404 page not found\n", ["text/plain; charset=utf-8"]), path)

    def test_method_not_allowed(self):
        """Another method on a go-restful route, HEAD included, is 405 with empty details."""
        for method, path in (("POST", "/api"), ("POST", "/version"), ("HEAD", "/version"),
                             ("POST", "/apis/apps/v1"), ("HEAD", "/api/v1"),
                             ("HEAD", "/api/v1/namespaces/default/configmaps"),
                             ("PUT", "/api/v1/namespaces/default/configmaps"),
                             ("POST", "/.well-known/openid-configuration")):
            code, body, _ = self.request(method, path, b"{}" if method != "HEAD" else None)
            self.assertEqual(code, 405, (method, path))
            if method != "HEAD":
                self.assertEqual(body, METHOD_NOT_ALLOWED, (method, path))
        code, _, _ = self.request("HEAD", "/api/v1/namespaces/default/foos")
        self.assertEqual(code, 404)

    def test_openapi_v3_unknown(self):
        """An unknown /openapi/v3 document is a bare 404: no body, no content type."""
        code, body, response = self.request("GET", "/openapi/v3/apis/foo")
        self.assertEqual((code, body, response.headers.getRawHeaders("content-type")),
                         (404, "", None))


class IndexTests(KubeTestCase):
    def test_index(self):
        """GET / (and /index.html) lists the served paths, sorted, as upstream's
        C{routes.Index}: MarshalIndent with two spaces, no trailing newline."""
        for path in ("/", "/index.html"):
            d = self.treq.get("https://kubetwist.test" + path,
                              headers={k: [v] for k, v in ADMIN.items()})
            self.treq.flush()
            response = self.successResultOf(d)
            raw = self.successResultOf(response.content())
            self.assertEqual((response.code, raw[:14]), (200, b'{\n  "paths": ['), path)
            self.assertTrue(raw.endswith(b'"\n  ]\n}'), raw[-20:])
            paths = json.loads(raw)["paths"]
            self.assertEqual(paths, sorted(paths))
            for p in ("/api", "/api/v1", "/apis", "/apis/", "/apis/apps", "/apis/apps/v1",
                      "/healthz", "/healthz/ping", "/livez/etcd", "/readyz/shutdown",
                      "/openapi/v2", "/openapi/v3", "/openapi/v3/", "/version",
                      "/.well-known/openid-configuration", "/openid/v1/jwks"):
                self.assertIn(p, paths)
            self.assertNotIn("/livez/shutdown", paths)
            self.assertNotIn("/", paths)


class StorageVersionHashTests(KubeTestCase):
    def _hash(self, path: str, resource: str) -> str:
        _, doc, _ = self.request("GET", path)
        return {r["name"]: r for r in doc["resources"]}[resource].get("storageVersionHash")

    def test_hash_of_storage_version(self):
        """storageVersionHash is of the version upstream stores: events.k8s.io Events as core
        v1 Events, autoscaling/v1 HPAs as autoscaling/v2, CRDs as apiextensions v1beta1
        (values read from kube-apiserver v1.32)."""
        for path, resource, expected in (
                ("/api/v1", "events", "r2yiGXH7wu8="),
                ("/apis/events.k8s.io/v1", "events", "r2yiGXH7wu8="),
                ("/apis/autoscaling/v1", "horizontalpodautoscalers", "qwQve8ut294="),
                ("/apis/autoscaling/v2", "horizontalpodautoscalers", "qwQve8ut294="),
                ("/apis/apiextensions.k8s.io/v1", "customresourcedefinitions", "jfWCUB31mvA="),
                ("/apis/admissionregistration.k8s.io/v1", "validatingwebhookconfigurations",
                 "B0wHjQmsGNk=")):
            self.assertEqual(self._hash(path, resource), expected, path)
