# -*- test-case-name: tests.fuzz.test_bodies -*-
"""
Hostile create bodies and patches against the in-process server (L{KubeTestCase}): every
answer is a Status with a 4xx code (or a success), never a 500, and what is stored is an
object the Go types can hold (it passes the typed decoder and encodes as protobuf; the
protobuf list of its resource works).
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubetwist.runtime import protobuf, typed
from tests.fuzz import strategies as fz
from tests.support import KubeTestCase

#: Answers that are 500 upstream too, by patch type (recorded from kube-apiserver v1.32):
#: server-side apply's type errors (structured-merge-diff; tests/endpoints/test_decode.py
#: ApplyTests) and a strategic merge patch's unknown C{$patch} directive (C{unknown patch type:
#: merge in map: map[$patch:merge]}) or a directive of the wrong type (C{expected a []interface
#: {}, but received a string}) or a list mixing lists and maps (C{list element types are not
#: identical: ...}) or a list element without its merge key (C{map: map[] does not contain
#: declared merge key: name}), and a create with a resourceVersion that parses.
UPSTREAM_500_PREFIXES = {
    "application/apply-patch+yaml": ("failed to create typed patch object",
                                     "failed to convert new object"),
    "application/strategic-merge-patch+json": ("unknown patch type: ", "expected a ",
                                               "list element types are not identical: ",
                                               "map: map[] does not contain declared merge key"),
    "create": ("resourceVersion should not be set on objects to be created",),
}


class FuzzCase(KubeTestCase):
    def check_answer(self, code: int, obj: Any, what: Any, content_type: str = "") -> None:
        """A success, or a Status failure with a 4xx code (or one of upstream's own 500s for
        this patch type)."""
        if 200 <= code < 300:
            return
        self.assertIsInstance(obj, dict, (code, obj, what))
        self.assertEqual((obj.get("kind"), obj.get("status"), obj.get("code")),
                         ("Status", "Failure", code), (obj, what))
        allowed = UPSTREAM_500_PREFIXES.get(content_type, ())
        if code == 500 and allowed and str(obj.get("message")).startswith(allowed):
            return
        self.assertTrue(400 <= code < 500, (code, obj, what))

    def check_stored(self, path: str, type_name: str) -> None:
        """The object at C{path} fits its type and encodes as protobuf."""
        code, obj, _ = self.request("GET", path)
        self.assertEqual(code, 200, obj)
        self.assertIsNone(typed.check(obj, type_name), obj)
        protobuf.encode(obj)

    def check_protobuf_list(self, collection: str) -> None:
        code, obj, _ = self.request("GET", collection,
                                    headers={"Accept": "application/vnd.kubernetes.protobuf"})
        self.assertEqual(code, 200, obj)


class CreateFuzzTests(FuzzCase):
    """Creates of generated objects of ten kinds, as JSON and YAML."""

    @fz.FUZZ
    @given(st.sampled_from(fz.RESOURCES).flatmap(
        lambda r: st.tuples(st.just(r), fz.body_of(r[1], r[2]))), st.booleans())
    def test_create(self, case: tuple, as_yaml: bool) -> None:
        (collection, api_version, kind), body = case
        data = fz.encode(body)
        content_type = "application/json"
        if as_yaml and fz.DEEP not in json.dumps(body):
            try:
                data = yaml.safe_dump(body).encode("utf-8", "surrogatepass")
                content_type = "application/yaml"
            except (yaml.YAMLError, UnicodeEncodeError):
                pass
        code, obj, _ = self.request("POST", collection, data, content_type=content_type)
        self.check_answer(code, obj, body, "create")
        if code == 201:
            name = obj["metadata"]["name"]
            self.check_stored(f"{collection}/{name}", fz.type_name_of(api_version, kind))
            self.check_protobuf_list(collection)

    @fz.FUZZ
    @given(st.binary(max_size=200), st.sampled_from(
        ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]))
    def test_garbage(self, data: bytes, content_type: str) -> None:
        """Arbitrary bytes in any accepted media type."""
        code, obj, _ = self.request("POST", fz.RESOURCES[0][0], data, content_type=content_type)
        self.check_answer(code, obj, data)


class PatchFuzzTests(FuzzCase):
    """Every patch type on a stored ConfigMap and Deployment."""

    TARGETS = [
        ("/api/v1/namespaces/default/configmaps", "v1", "ConfigMap",
         {"metadata": {"name": "target", "labels": {"a": "b"}}, "data": {"k": "v"}}),
        ("/apis/apps/v1/namespaces/default/deployments", "apps/v1", "Deployment",
         {"metadata": {"name": "target"}, "spec": {
             "replicas": 1, "selector": {"matchLabels": {"a": "b"}},
             "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [
                 {"name": "c", "image": "i", "env": [{"name": "E", "value": "v"}]}]}}}}),
    ]

    def setUp(self) -> None:
        super().setUp()
        for collection, api_version, kind, body in self.TARGETS:
            code, obj, _ = self.request("POST", collection,
                                        {"apiVersion": api_version, "kind": kind, **body})
            self.assertEqual(code, 201, obj)

    def patch(self, index: int, content_type: str, body: Any, query: str = "") -> None:
        collection, api_version, kind, _ = self.TARGETS[index]
        path = f"{collection}/target"
        data = body if isinstance(body, bytes) else fz.encode(body)
        code, obj, _ = self.request("PATCH", path + query, data, content_type=content_type)
        self.check_answer(code, obj, body, content_type)
        if 200 <= code < 300:
            self.check_stored(path, fz.type_name_of(api_version, kind))
            self.check_protobuf_list(collection)

    @fz.FUZZ
    @given(st.integers(0, 1), fz.json_patches)
    def test_json_patch(self, index: int, ops: list) -> None:
        self.patch(index, "application/json-patch+json", ops)

    @fz.FUZZ
    @given(st.integers(0, 1).flatmap(lambda i: st.tuples(st.just(i), fz.merge_patch(
        fz.type_name_of(*PatchFuzzTests.TARGETS[i][1:3])))))
    def test_merge_patch(self, case: tuple) -> None:
        self.patch(case[0], "application/merge-patch+json", case[1])

    @fz.FUZZ
    @given(st.integers(0, 1).flatmap(lambda i: st.tuples(st.just(i), fz.strategic_patch(
        fz.type_name_of(*PatchFuzzTests.TARGETS[i][1:3])))))
    def test_strategic_merge_patch(self, case: tuple) -> None:
        self.patch(case[0], "application/strategic-merge-patch+json", case[1])

    @fz.FUZZ
    @given(st.integers(0, 1).flatmap(lambda i: st.tuples(st.just(i), fz.body_of(
        *PatchFuzzTests.TARGETS[i][1:3]))))
    def test_apply(self, case: tuple) -> None:
        index, body = case
        body["metadata"]["name"] = "target"
        self.patch(index, "application/apply-patch+yaml", body, "?fieldManager=fuzz&force=true")
