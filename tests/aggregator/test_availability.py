# -*- test-case-name: tests.aggregator.test_availability -*-
"""
The aggregator over the real chain (L{KubeTestCase}) with a fake discovery checker and a fake
proxy: the C{Available} condition's reasons and messages, the periodic and watch-driven
rechecks, 503 for unavailable APIServices, proxying of available ones with the request's user,
C{/apis} (legacy and aggregated) and C{/openapi/v3} with the extension server's documents, and
the C{poststarthook/apiservice-*} readiness checks.
"""

from __future__ import annotations

import json

from tests.support import KubeTestCase

GROUP, VERSION = "example.kubetwist.io", "v1"
NAME = f"{VERSION}.{GROUP}"
RESOURCES = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{GROUP}/{VERSION}",
             "resources": [
                 {"name": "things", "singularName": "thing", "namespaced": True, "kind": "Thing",
                  "verbs": ["get", "list"], "shortNames": ["th"]},
                 {"name": "things/status", "singularName": "", "namespaced": True,
                  "kind": "Thing", "verbs": ["get"]}]}


class FakeAddress:
    host, port, netloc = "10.213.0.2", 443, "10.213.0.2:443"


class FakeChecker:
    def __init__(self) -> None:
        self.error = None
        self.calls = 0

    async def check(self, apiservice, target):
        self.calls += 1
        if self.error is not None:
            return self.error, None
        return None, (FakeAddress(), json.dumps(RESOURCES).encode())

    async def get(self, url, headers=None):
        raise OSError("no OpenAPI here")


class FakeProxy:
    def __init__(self) -> None:
        self.served = []

    async def serve(self, request, target, user):
        self.served.append((request.uri, target, user.name))
        request.setResponseCode(200)
        request.setHeader(b"Content-Type", b"application/json")
        request.write(b'{"kind":"Thing"}')
        request.finish()


def apiservice(**spec) -> dict:
    base = {"group": GROUP, "version": VERSION, "groupPriorityMinimum": 20000,
            "versionPriority": 15,
            "service": {"namespace": "default", "name": "backend", "port": 443}}
    base.update(spec)
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": f"{base['version']}.{base['group']}"}, "spec": base}


SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "backend"},
           "spec": {"ports": [{"port": 443, "targetPort": 443, "protocol": "TCP"}]}}
ENDPOINTS = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "backend"},
             "subsets": [{"addresses": [{"ip": "10.213.0.2"}], "ports": [{"port": 443}]}]}


class AvailabilityTests(KubeTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.checker = FakeChecker()
        self.proxy = FakeProxy()
        self.aggregator.availability.checker = self.checker
        self.aggregator.proxy = self.proxy
        self.settle()

    def settle(self, seconds: float = 0.0) -> None:
        for _ in range(20):
            self.clock.advance(0.01)
        if seconds:
            self.clock.advance(seconds)
            for _ in range(20):
                self.clock.advance(0.01)

    def create(self, path: str, obj: dict) -> None:
        code, body, _ = self.request("POST", path, obj)
        self.assertEqual(code, 201, body)
        self.settle()

    def condition(self, name: str = NAME) -> dict:
        code, obj, _ = self.request("GET", f"/apis/apiregistration.k8s.io/v1/apiservices/{name}")
        self.assertEqual(code, 200, obj)
        return [c for c in obj["status"]["conditions"] if c["type"] == "Available"][0]

    def register(self) -> None:
        self.create("/api/v1/namespaces/default/services", SERVICE)
        self.create("/api/v1/namespaces/default/endpoints", ENDPOINTS)
        self.create("/apis/apiregistration.k8s.io/v1/apiservices", apiservice())

    def test_service_not_found(self) -> None:
        self.create("/apis/apiregistration.k8s.io/v1/apiservices", apiservice())
        c = self.condition()
        self.assertEqual((c["status"], c["reason"], c["message"]),
                         ("False", "ServiceNotFound",
                          'service/backend in "default" is not present'))

    def test_endpoints_not_found_then_passed(self) -> None:
        """Watch-driven: creating the Endpoints rechecks the APIService at once."""
        self.create("/api/v1/namespaces/default/services", SERVICE)
        self.create("/apis/apiregistration.k8s.io/v1/apiservices", apiservice())
        c = self.condition()
        self.assertEqual((c["status"], c["reason"], c["message"]),
                         ("False", "EndpointsNotFound",
                          'cannot find endpoints for service/backend in "default"'))
        self.create("/api/v1/namespaces/default/endpoints", ENDPOINTS)
        c = self.condition()
        self.assertEqual((c["status"], c["reason"], c["message"]),
                         ("True", "Passed", "all checks passed"))

    def test_missing_endpoints_and_port(self) -> None:
        self.create("/api/v1/namespaces/default/services", SERVICE)
        self.create("/api/v1/namespaces/default/endpoints", {
            **ENDPOINTS, "subsets": [{"addresses": [{"ip": "10.213.0.2"}],
                                      "ports": [{"name": "other", "port": 443}]}]})
        self.create("/apis/apiregistration.k8s.io/v1/apiservices", apiservice())
        c = self.condition()
        self.assertEqual((c["reason"], c["message"]), (
            "MissingEndpoints",
            'endpoints for service/backend in "default" have no addresses with port name ""'))
        self.create("/apis/apiregistration.k8s.io/v1/apiservices", apiservice(
            version="v2", service={"namespace": "default", "name": "backend", "port": 8443}))
        c = self.condition(f"v2.{GROUP}")
        self.assertEqual((c["reason"], c["message"]), (
            "ServicePortError", 'service/backend in "default" is not listening on port 8443'))

    def test_failed_discovery_on_resync(self) -> None:
        """A backend that stops answering is found by the 30 s resync; the transition time
        changes with the status only."""
        self.register()
        passed = self.condition()
        self.assertEqual(passed["reason"], "Passed")
        self.checker.error = "failing or missing response from https://x: boom"
        self.settle()
        self.assertEqual(self.condition()["status"], "True")  # nothing rechecked it yet
        self.settle(30.0)
        c = self.condition()
        self.assertEqual((c["status"], c["reason"], c["message"]),
                         ("False", "FailedDiscoveryCheck",
                          "failing or missing response from https://x: boom"))
        # failures are retried with backoff; recovery is picked up without a resync
        self.checker.error = None
        self.settle(1.0)
        self.assertEqual(self.condition()["reason"], "Passed")

    def test_unavailable_is_503_available_is_proxied(self) -> None:
        self.create("/apis/apiregistration.k8s.io/v1/apiservices", apiservice())
        code, body, response = self.request("GET", f"/apis/{GROUP}/{VERSION}/things")
        self.assertEqual((code, body), (503, "service unavailable\n"))
        self.assertEqual(response.headers.getRawHeaders(b"content-type"),
                         [b"text/plain; charset=utf-8"])
        self.assertEqual(self.proxy.served, [])
        self.create("/api/v1/namespaces/default/services", SERVICE)
        self.create("/api/v1/namespaces/default/endpoints", ENDPOINTS)
        code, body, _ = self.request("GET", f"/apis/{GROUP}/{VERSION}/things?limit=1")
        self.assertEqual((code, body), (200, {"kind": "Thing"}))
        uri, target, user = self.proxy.served[0]
        self.assertEqual((uri, target.server_name, target.port, user),
                         (f"/apis/{GROUP}/{VERSION}/things?limit=1".encode(),
                          "backend.default.svc", 443, "admin"))

    def test_local_apiservice_is_local(self) -> None:
        self.create("/apis/apiregistration.k8s.io/v1/apiservices",
                    {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                     "metadata": {"name": "v1.local.example.com"},
                     "spec": {"group": "local.example.com", "version": "v1",
                              "groupPriorityMinimum": 100, "versionPriority": 1}})
        c = self.condition("v1.local.example.com")
        self.assertEqual((c["status"], c["reason"], c["message"]),
                         ("True", "Local", "Local APIServices are always available"))

    def test_discovery_includes_remote_group(self) -> None:
        """Legacy C{/apis} orders the remote group by its C{groupPriorityMinimum} (20000,
        ahead of the core groups' 18000); aggregated discovery has its resources."""
        self.register()
        self.create("/apis/apiregistration.k8s.io/v1/apiservices",
                    apiservice(version="v1beta1", versionPriority=20))
        code, lst, _ = self.request("GET", "/apis")
        self.assertEqual(code, 200)
        first = lst["groups"][0]
        self.assertEqual(first["name"], GROUP)
        self.assertEqual([v["version"] for v in first["versions"]], ["v1beta1", "v1"])
        code, group, _ = self.request("GET", f"/apis/{GROUP}")
        self.assertEqual(group["preferredVersion"]["version"], "v1beta1")
        agg_type = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        code, doc, response = self.request("GET", "/apis", headers={"Accept": agg_type})
        self.assertEqual(response.headers.getRawHeaders(b"content-type"), [agg_type.encode()])
        item = doc["items"][0]
        self.assertEqual(item["metadata"]["name"], GROUP)
        versions = {v["version"]: v for v in item["versions"]}
        self.assertEqual(versions["v1"]["freshness"], "Current")
        self.assertEqual(versions["v1"]["resources"], [{
            "resource": "things",
            "responseKind": {"group": "", "version": "", "kind": "Thing"},
            "scope": "Namespaced", "singularResource": "thing", "verbs": ["get", "list"],
            "shortNames": ["th"],
            "subresources": [{"subresource": "status",
                              "responseKind": {"group": "", "version": "", "kind": "Thing"},
                              "verbs": ["get"]}]}])
        self.assertIn("apps", [i["metadata"].get("name") for i in doc["items"]])

    def test_aggregated_discovery_from_backend(self) -> None:
        """A backend serving aggregated discovery: its entry for the group-version is used
        as it is (upstream's discovery manager asks C{/apis} for it first)."""
        from twisted.web.http_headers import Headers

        entry = {"version": VERSION, "resources": [{
            "resource": "things", "responseKind": {"group": GROUP, "version": VERSION,
                                                   "kind": "Thing"},
            "scope": "Cluster", "singularResource": "thing", "verbs": ["get"]}],
            "freshness": "Current"}
        asked = []

        async def get(url, headers=None):
            asked.append((url, headers))
            if url.endswith("/apis"):
                return 200, Headers({b"Content-Type": [
                    b"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"],
                    b"ETag": [b'"e1"']}), json.dumps({"items": [
                        {"metadata": {"name": GROUP}, "versions": [entry]}]}).encode()
            raise OSError("no OpenAPI here")

        self.checker.get = get
        self.register()
        agg_type = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        code, doc, _ = self.request("GET", "/apis", headers={"Accept": agg_type})
        item = [i for i in doc["items"] if i["metadata"].get("name") == GROUP][0]
        self.assertEqual(item["versions"], [entry])
        self.assertEqual(asked[0][0], "https://10.213.0.2:443/apis")
        self.assertIn("as=APIGroupDiscoveryList", asked[0][1]["Accept"])

    def test_openapi_v3_lists_remote_documents(self) -> None:
        self.register()
        body = b'{"openapi":"3.0.0","paths":{}}'
        self.aggregator.documents.v3[(GROUP, VERSION)] = (body, "ABCD", "/openapi/v3/x")
        code, root, _ = self.request("GET", "/openapi/v3")
        self.assertEqual(root["paths"][f"apis/{GROUP}/{VERSION}"],
                         {"serverRelativeURL": f"/openapi/v3/apis/{GROUP}/{VERSION}?hash=ABCD"})
        code, doc, response = self.request("GET", f"/openapi/v3/apis/{GROUP}/{VERSION}")
        self.assertEqual((code, doc), (200, {"openapi": "3.0.0", "paths": {}}))
        self.assertEqual(response.headers.getRawHeaders(b"etag"), [b'"ABCD"'])

    def test_openapi_v2_merges_remote_definitions(self) -> None:
        self.aggregator.documents.v2[(GROUP, VERSION)] = ("etag1", {
            "paths": {f"/apis/{GROUP}/{VERSION}/things": {"get": {}}},
            "definitions": {"io.example.Thing": {"type": "object"}}})
        code, doc, response = self.request("GET", "/openapi/v2")
        self.assertEqual(doc["definitions"]["io.example.Thing"], {"type": "object"})
        self.assertIn(f"/apis/{GROUP}/{VERSION}/things", doc["paths"])
        etag = response.headers.getRawHeaders(b"etag")
        self.aggregator.documents.v2[(GROUP, VERSION)] = ("etag2", {
            "paths": {}, "definitions": {"io.example.Thing": {"type": "string"}}})
        code, doc, response = self.request("GET", "/openapi/v2")
        self.assertEqual(doc["definitions"]["io.example.Thing"], {"type": "string"})
        self.assertNotEqual(response.headers.getRawHeaders(b"etag"), etag)

    def test_readyz_hooks(self) -> None:
        code, text, _ = self.request("GET", "/readyz?verbose")
        self.assertEqual(code, 200, text)
        for hook in ("start-kube-aggregator-informers",
                     "apiservice-status-local-available-controller",
                     "apiservice-status-remote-available-controller",
                     "apiservice-registration-controller", "apiservice-discovery-controller",
                     "apiservice-openapi-controller", "apiservice-openapiv3-controller"):
            self.assertIn(f"[+]poststarthook/{hook} ok\n", text)


class RoutingTests(KubeTestCase):
    """C{--enable-aggregator-routing}: an endpoint's address (the default here), or the
    Service's ClusterIP."""

    def resolve(self, routing: bool):
        from twisted.internet.defer import ensureDeferred

        from kubetwist.aggregator.server import AggregatorConfig

        self.aggregator.configure(self.kube.stores, AggregatorConfig(routing=routing))
        d = ensureDeferred(self.aggregator.informers.start())
        for _ in range(20):
            self.clock.advance(0.01)
        self.successResultOf(d)
        self.addCleanup(self.aggregator.informers.stop)
        return self.successResultOf(ensureDeferred(
            self.aggregator.resolver.resolve("default", "backend", 443)))

    def setUp(self) -> None:
        super().setUp()
        for path, obj in (("/api/v1/namespaces/default/services", SERVICE),
                          ("/api/v1/namespaces/default/endpoints", ENDPOINTS)):
            code, body, _ = self.request("POST", path, obj)
            self.assertEqual(code, 201, body)
        code, svc, _ = self.request("GET", "/api/v1/namespaces/default/services/backend")
        self.cluster_ip = svc["spec"]["clusterIP"]

    def test_endpoint_routing(self) -> None:
        a = self.resolve(True)
        self.assertEqual((a.host, a.port, a.server_name),
                         ("10.213.0.2", 443, "backend.default.svc"))

    def test_cluster_ip(self) -> None:
        a = self.resolve(False)
        self.assertEqual((a.host, a.port), (self.cluster_ip, 443))
        self.assertNotEqual(a.host, "10.213.0.2")
