"""
C{fieldValidation=Strict|Warn|Ignore} on create, update and patch of built-in kinds, over HTTP
(upstream C{k8s.io/apiserver/pkg/endpoints/handlers} create.go, update.go, patch.go).
"""

from __future__ import annotations

import json

from tests.support import KubeTestCase

CM = "/api/v1/namespaces/default/configmaps"
DEPLOY = "/apis/apps/v1/namespaces/default/deployments"

#: A ConfigMap body with a duplicate (metadata.name) and an unknown field (foo).
BAD_CM = (b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "name": "a"},'
          b' "foo": 1, "data": {"x": "1"}}')


def _deployment(name: str = "d") -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": "x"}},
                     "template": {"metadata": {"labels": {"app": "x"}},
                                  "spec": {"containers": [{"name": "c", "image": "i"}]}}}}


def _warnings(response) -> list:
    return response.headers.getRawHeaders("warning") or []


class CreateTests(KubeTestCase):
    def test_strict(self) -> None:
        """Strict: 400 BadRequest naming every duplicate and unknown field in document
        order; nothing is created."""
        code, obj, _ = self.request("POST", CM + "?fieldValidation=Strict", BAD_CM)
        self.assertEqual((code, obj["reason"], obj["message"]), (
            400, "BadRequest",
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding '
            'error: duplicate field "metadata.name", unknown field "foo"'))
        code, _, _ = self.request("GET", CM + "/a")
        self.assertEqual(code, 404)

    def test_warn_is_default(self) -> None:
        """Warn (also when fieldValidation is absent): created without the unknown field,
        one Warning header per error."""
        for query in ("?fieldValidation=Warn", ""):
            code, obj, response = self.request("POST", CM + query, BAD_CM)
            self.assertEqual((code, "foo" in obj, obj["data"]), (201, False, {"x": "1"}))
            self.assertEqual(_warnings(response), [
                '299 - "duplicate field \\"metadata.name\\""',
                '299 - "unknown field \\"foo\\""'])
            self.request("DELETE", CM + "/a")

    def test_ignore(self) -> None:
        """Ignore: created, unknown field dropped, no warning."""
        code, obj, response = self.request("POST", CM + "?fieldValidation=Ignore", BAD_CM)
        self.assertEqual((code, "foo" in obj, _warnings(response)), (201, False, []))
        code, obj, _ = self.request("GET", CM + "/a")
        self.assertEqual("foo" in obj, False)

    def test_nested_paths(self) -> None:
        """Unknown fields deep in a pod template are named with list indexes."""
        body = _deployment()
        body["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
        body["spec"]["template"]["spec"]["volumes"] = [{"name": "v", "emptyDir": {},
                                                        "bogus": 1}]
        code, obj, _ = self.request("POST", DEPLOY + "?fieldValidation=Strict", body)
        self.assertEqual((code, obj["message"]), (
            400, 'Deployment in version "v1" cannot be handled as a Deployment: strict '
                 'decoding error: unknown field "spec.template.spec.containers[0]'
                 '.imagePullPolicyy", unknown field "spec.template.spec.volumes[0].bogus"'))

    def test_yaml_strict_and_warn(self) -> None:
        """A YAML body: go-yaml's duplicate-key error comes first (Strict), or one warning
        per duplicate line (Warn)."""
        body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n  name: y\nzz: 1\n"
        code, obj, _ = self.request("POST", CM + "?fieldValidation=Strict", body,
                                    content_type="application/yaml")
        self.assertEqual((code, obj["message"]), (
            400, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding '
                 'error: yaml: unmarshal errors:\n  line 5: key "name" already set in map, '
                 'unknown field "zz"'))
        code, obj, response = self.request("POST", CM, body, content_type="application/yaml")
        self.assertEqual((code, _warnings(response)), (201, [
            '299 - "line 5: key \\"name\\" already set in map"',
            '299 - "unknown field \\"zz\\""']))

    def test_invalid_mode(self) -> None:
        """Another fieldValidation value is 422 Invalid CreateOptions."""
        code, obj, _ = self.request("POST", CM + "?fieldValidation=Bogus",
                                    {"metadata": {"name": "a"}})
        self.assertEqual((code, obj["message"]), (
            422, 'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: '
                 '"Bogus": supported values: "", "Ignore", "Strict", "Warn"'))

    def test_golden_object_accepted(self) -> None:
        """A known object with special types (IntOrString, Quantity) passes Strict."""
        body = _deployment()
        body["spec"]["strategy"] = {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}}
        body["spec"]["template"]["spec"]["containers"][0]["resources"] = {
            "limits": {"cpu": "500m", "memory": 128}}
        code, obj, response = self.request("POST", DEPLOY + "?fieldValidation=Strict", body)
        self.assertEqual((code, _warnings(response)), (201, []), obj)


class UpdateTests(KubeTestCase):
    def test_update_modes(self) -> None:
        """PUT follows the same rules as create."""
        _, created, _ = self.request("POST", CM, {"metadata": {"name": "a"}})
        body = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "a",
                             "resourceVersion": created["metadata"]["resourceVersion"]},
                "data": {"k": "v"}, "foo": 1}
        code, obj, _ = self.request("PUT", CM + "/a?fieldValidation=Strict", body)
        self.assertEqual((code, obj["message"]), (
            400, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding '
                 'error: unknown field "foo"'))
        code, obj, response = self.request("PUT", CM + "/a?fieldValidation=Warn", body)
        self.assertEqual((code, obj["data"], "foo" in obj, _warnings(response)),
                         (200, {"k": "v"}, False, ['299 - "unknown field \\"foo\\""']))
        body["metadata"]["resourceVersion"] = obj["metadata"]["resourceVersion"]
        code, obj, response = self.request("PUT", CM + "/a?fieldValidation=Ignore", body)
        self.assertEqual((code, "foo" in obj, _warnings(response)), (200, False, []))


class PatchTests(KubeTestCase):
    def setUp(self) -> None:
        super().setUp()
        code, _, _ = self.request("POST", CM, {"metadata": {"name": "a"}, "data": {"x": "1"}})
        self.assertEqual(code, 201)

    def test_merge_patch_strict(self) -> None:
        """Merge patch, Strict: 422 Invalid on the patched object (field "patch", the
        patched JSON as value)."""
        code, obj, _ = self.request("PATCH", CM + "/a?fieldValidation=Strict",
                                    b'{"foo": 1, "data": {"y": "2", "y": "3"}}',
                                    content_type="application/merge-patch+json")
        self.assertEqual((code, obj["reason"], obj["details"]["causes"][0]["field"]),
                         (422, "Invalid", "patch"))
        self.assertTrue(obj["message"].startswith(' "" is invalid: patch: Invalid value: "{'),
                        obj["message"])
        self.assertTrue(obj["message"].endswith(
            '": strict decoding error: duplicate field "data.y", unknown field "foo"'),
            obj["message"])
        self.assertNotIn("kind", obj["details"])

    def test_strategic_merge_patch_strict(self) -> None:
        """Strategic merge patch, Strict: the patch's duplicates, then the unknown fields of
        the result (sorted), with the patch printed as Go prints a map."""
        code, obj, _ = self.request("PATCH", CM + "/a?fieldValidation=Strict",
                                    b'{"zed": 1, "bar": 1, "data": {"y": "2", "y": "3"}}',
                                    content_type="application/strategic-merge-patch+json")
        self.assertEqual((code, obj["message"]), (
            422, ' "" is invalid: patch: Invalid value: "map[bar:1 data:map[y:3] zed:1]": '
                 'strict decoding error: duplicate field "data.y", unknown field "bar", '
                 'unknown field "zed"'))

    def test_json_patch_warn(self) -> None:
        """JSON patch, Warn: unknown operation keys are prefixed "json patch"; the unknown
        field added by the patch is dropped."""
        code, obj, response = self.request(
            "PATCH", CM + "/a", b'[{"op": "add", "path": "/zz", "value": 1, "x": 1}]',
            content_type="application/json-patch+json")
        self.assertEqual((code, "zz" in obj, _warnings(response)), (200, False, [
            '299 - "json patch unknown field \\"[0].x\\""',
            '299 - "unknown field \\"zz\\""']))

    def test_patch_ignore(self) -> None:
        """Ignore: the patch applies, the unknown field is dropped, nothing is said."""
        code, obj, response = self.request("PATCH", CM + "/a?fieldValidation=Ignore",
                                           {"foo": 1, "data": {"y": "2"}},
                                           content_type="application/merge-patch+json")
        self.assertEqual((code, obj["data"], "foo" in obj, _warnings(response)),
                         (200, {"x": "1", "y": "2"}, False, []))

    def test_known_patch_strict(self) -> None:
        """A patch of known fields passes Strict (kubectl's default)."""
        code, obj, response = self.request(
            "PATCH", CM + "/a?fieldValidation=Strict",
            json.dumps({"metadata": {"labels": {"a": "b"}}, "data": {"y": "2"}}),
            content_type="application/strategic-merge-patch+json")
        self.assertEqual((code, obj["metadata"]["labels"], _warnings(response)),
                         (200, {"a": "b"}, []))


class ApplyTests(KubeTestCase):
    #: An applied configuration with a duplicate key (C{a}, on line 7).
    DUP = b'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\ndata:\n  a: "1"\n  a: "2"\n'

    def test_apply_duplicate_strict(self) -> None:
        """Server-side apply under Strict: the applied YAML is decoded strictly again after the
        apply (upstream C{applyPatcher}), so a duplicate key is 400 BadRequest with go-yaml's
        line; nothing is created."""
        code, obj, _ = self.request("PATCH", CM + "/dup?fieldManager=m&fieldValidation=Strict",
                                    self.DUP, content_type="application/apply-patch+yaml")
        self.assertEqual((code, obj["reason"], obj["message"]), (
            400, "BadRequest",
            'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal '
            'errors:\n  line 7: key "a" already set in map'))
        code, _, _ = self.request("GET", CM + "/dup")
        self.assertEqual(code, 404)

    def test_apply_duplicate_warn_and_ignore(self) -> None:
        """Under Warn (the default) the apply succeeds with one Warning per duplicate line;
        under Ignore without one."""
        code, obj, response = self.request("PATCH", CM + "/dup?fieldManager=m", self.DUP,
                                           content_type="application/apply-patch+yaml")
        self.assertEqual((code, obj["data"], _warnings(response)), (
            201, {"a": "2"}, ['299 - "line 7: key \\"a\\" already set in map"']))
        code, obj, response = self.request(
            "PATCH", CM + "/dup?fieldManager=m&fieldValidation=Ignore", self.DUP,
            content_type="application/apply-patch+yaml")
        self.assertEqual((code, _warnings(response)), (200, []))
