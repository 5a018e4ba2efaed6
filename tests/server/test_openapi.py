# -*- test-case-name: tests.server.test_openapi -*-
"""
Tests for L{kubetwist.server.openapi}: OpenAPI publication (upstream kube-openapi's
C{handler3} for C{/openapi/v3} and C{handler} for C{/openapi/v2}) through the whole server,
with the answers kube-apiserver v1.32 gives, and the document builders' pieces.
"""

from __future__ import annotations

import re

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.server import openapi
from tests.support import KubeTestCase


class V3Tests(KubeTestCase):
    def root(self) -> dict:
        code, body, _ = self.request("GET", "/openapi/v3")
        self.assertEqual(code, 200)
        return body["paths"]

    def test_root_lists_group_versions(self) -> None:
        """The root names one document per group-version, addressed by its SHA-512 hash."""
        paths = self.root()
        for gv in ("api/v1", "apis/apps/v1", "apis/apiextensions.k8s.io/v1",
                   "apis/apiregistration.k8s.io/v1"):
            self.assertIn(gv, paths)
        self.assertRegex(paths["apis/apps/v1"]["serverRelativeURL"],
                         r"^/openapi/v3/apis/apps/v1\?hash=[0-9A-F]{128}$")

    def test_document_is_immutable_under_its_hash(self) -> None:
        """A document answers with its hash as ETag and is cacheable forever."""
        url = self.root()["apis/apps/v1"]["serverRelativeURL"]
        code, doc, response = self.request("GET", url)
        self.assertEqual(code, 200)
        digest = re.search(r"hash=([0-9A-F]+)", url).group(1)
        headers = response.headers
        self.assertEqual(headers.getRawHeaders("ETag"), [f'"{digest}"'])
        self.assertEqual(headers.getRawHeaders("Cache-Control"), ["public, immutable"])
        self.assertEqual(headers.getRawHeaders("Content-Type"), ["application/json"])
        self.assertEqual(doc["openapi"], "3.0.0")

    def test_operations(self) -> None:
        """Operations carry upstream's ids, actions and group-version-kinds."""
        _, doc, _ = self.request("GET", "/openapi/v3/apis/apps/v1")
        collection = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"]
        self.assertEqual((collection["post"]["operationId"],
                          collection["post"]["x-kubernetes-action"],
                          collection["post"]["x-kubernetes-group-version-kind"]),
                         ("createAppsV1NamespacedDeployment", "post",
                          {"group": "apps", "version": "v1", "kind": "Deployment"}))
        self.assertEqual((collection["get"]["operationId"],
                          collection["get"]["x-kubernetes-action"]),
                         ("listAppsV1NamespacedDeployment", "list"))
        item = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
        self.assertEqual(item["patch"]["operationId"], "patchAppsV1NamespacedDeployment")
        scale = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
        self.assertEqual(scale["put"]["x-kubernetes-group-version-kind"],
                         {"group": "autoscaling", "version": "v1", "kind": "Scale"})

    def test_unknown_document(self) -> None:
        code, _, _ = self.request("GET", "/openapi/v3/apis/nothing.example.com/v1")
        self.assertEqual(code, 404)


class V2Tests(KubeTestCase):
    def test_etag_and_not_modified(self) -> None:
        """/openapi/v2 has an ETag; asking with it is 304, with another is 200."""
        code, doc, response = self.request("GET", "/openapi/v2")
        self.assertEqual((code, doc["swagger"]), (200, "2.0"))
        (etag,) = response.headers.getRawHeaders("ETag")
        self.assertEqual(self.request("GET", "/openapi/v2",
                                      headers={"If-None-Match": etag})[0], 304)
        self.assertEqual(self.request("GET", "/openapi/v2",
                                      headers={"If-None-Match": '"x"'})[0], 200)
        self.assertIn("io.k8s.api.apps.v1.Deployment", doc["definitions"])

    def test_not_acceptable(self) -> None:
        self.assertEqual(self.request("GET", "/openapi/v2",
                                      headers={"Accept": "text/html"})[0], 406)


class BuilderTests(SynchronousTestCase):
    def test_definition_names(self) -> None:
        """Upstream's definition names per group."""
        self.assertEqual([openapi.definition_name(*gvk) for gvk in (
            ("", "v1", "Pod"), ("apps", "v1", "Deployment"),
            ("rbac.authorization.k8s.io", "v1", "Role"),
            ("apiregistration.k8s.io", "v1", "APIService"),
            ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"))], [
            "io.k8s.api.core.v1.Pod", "io.k8s.api.apps.v1.Deployment",
            "io.k8s.api.rbac.v1.Role",
            "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService",
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"])

    def test_v2_definitions(self) -> None:
        """v3 component schemas become v2 definitions: references rewritten, a lone allOf
        reference (with its default) unwrapped."""
        doc = {"components": {"schemas": {"A": {"properties": {
            "b": {"$ref": "#/components/schemas/B"},
            "c": {"allOf": [{"$ref": "#/components/schemas/C"}], "default": {},
                  "description": "d"},
            "l": {"items": [{"$ref": "#/components/schemas/B"}]}}}}}}
        self.assertEqual(openapi.v2_definitions(doc), {"A": {"properties": {
            "b": {"$ref": "#/definitions/B"},
            "c": {"$ref": "#/definitions/C", "description": "d"},
            "l": {"items": [{"$ref": "#/definitions/B"}]}}}})
        self.assertEqual(openapi.v2_definitions({}), {})
