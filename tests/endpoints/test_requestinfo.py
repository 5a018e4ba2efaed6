"""RequestInfo parsing as upstream's RequestInfoFactory."""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.endpoints.requestinfo import parse_request_info


class RequestInfoTests(SynchronousTestCase):
    def check(self, method, path, query="", **expected):
        info = parse_request_info(method, path, query)
        for k, v in expected.items():
            self.assertEqual(getattr(info, k), v, f"{k} of {method} {path}?{query}")

    def test_core_namespaced_item(self):
        """/api/v1/namespaces/ns/pods/p/status: namespace, resource, name, subresource."""
        self.check("PUT", "/api/v1/namespaces/ns/pods/p/status", verb="update",
                   api_group="", api_version="v1", namespace="ns", resource="pods", name="p",
                   subresource="status", is_resource_request=True)

    def test_collection_verbs(self):
        """GET collection is list, or watch with ?watch=true; DELETE is deletecollection."""
        self.check("GET", "/apis/apps/v1/namespaces/ns/deployments", verb="list",
                   api_group="apps")
        self.check("GET", "/apis/apps/v1/deployments", "watch=true", verb="watch", namespace="")
        self.check("DELETE", "/api/v1/namespaces/ns/configmaps", verb="deletecollection")

    def test_namespace_subresources(self):
        """/api/v1/namespaces/x/status is the namespace's status, not a resource "status"."""
        self.check("PUT", "/api/v1/namespaces/x/finalize", resource="namespaces", name="x",
                   subresource="finalize", namespace="x")
        self.check("GET", "/api/v1/namespaces/x", resource="namespaces", name="x", verb="get")

    def test_deprecated_watch_prefix(self):
        """/api/v1/watch/namespaces/ns/pods is a watch."""
        self.check("GET", "/api/v1/watch/namespaces/ns/pods", verb="watch", resource="pods",
                   namespace="ns")

    def test_field_selector_names_the_object(self):
        """A list narrowed by metadata.name carries that name (for authorization)."""
        self.check("GET", "/api/v1/namespaces/ns/pods", "fieldSelector=metadata.name%3Dp",
                   verb="list", name="p")

    def test_non_resource(self):
        """/healthz and /apis are not resource requests."""
        self.check("GET", "/healthz", is_resource_request=False, verb="get")
        self.check("GET", "/apis/apps", is_resource_request=False)
