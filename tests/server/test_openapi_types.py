"""OpenAPI v3 schemas of built-in kinds derived from kubetwist's type definitions."""

from kubetwist.server.openapi_types import kind_schemas
from tests.support import KubeTestCase

from twisted.trial.unittest import SynchronousTestCase


class KindSchemaTests(SynchronousTestCase):
    def test_deployment_reaches_container_resources(self):
        """The Deployment schema carries its GVK and reaches Container.resources by refs."""
        s = kind_schemas("apps", "v1", "Deployment")
        top = s["io.k8s.api.apps.v1.Deployment"]
        self.assertEqual(top["x-kubernetes-group-version-kind"],
                         [{"group": "apps", "version": "v1", "kind": "Deployment"}])
        self.assertEqual(list(top["properties"])[:2], ["apiVersion", "kind"])
        containers = s["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
        self.assertEqual(containers["type"], "array")
        self.assertEqual(containers["x-kubernetes-patch-merge-key"], "name")
        self.assertEqual(containers["items"],
                         {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}]})
        self.assertIn("requests", s["io.k8s.api.core.v1.ResourceRequirements"]["properties"])
        self.assertEqual(s["io.k8s.apimachinery.pkg.apis.meta.v1.Time"],
                         {"type": "string", "format": "date-time"})

    def test_unknown_kind(self):
        """A kind without a type definition has no derived schema."""
        self.assertIsNone(kind_schemas("example.com", "v1", "Widget"))


class PublishedTests(KubeTestCase):
    def test_v3_document_has_kind_with_gvk_and_list(self):
        """/openapi/v3/apis/apps/v1 publishes Deployment (with GVK) and DeploymentList."""
        _, root, _ = self.request("GET", "/openapi/v3")
        _, doc, _ = self.request("GET", root["paths"]["apis/apps/v1"]["serverRelativeURL"])
        schemas = doc["components"]["schemas"]
        self.assertEqual(schemas["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"],
                         [{"group": "apps", "version": "v1", "kind": "Deployment"}])
        self.assertEqual(
            schemas["io.k8s.api.apps.v1.DeploymentList"]["x-kubernetes-group-version-kind"],
            [{"group": "apps", "version": "v1", "kind": "DeploymentList"}])
        self.assertIn("spec", schemas["io.k8s.api.apps.v1.Deployment"]["properties"])
