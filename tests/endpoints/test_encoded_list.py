# -*- test-case-name: tests.endpoints.test_encoded_list -*-
"""
Lists written from encoded items (L{ResourceHandlers._writes_encoded_list},
L{Store.list_encoded}, L{codec.list_envelope}): the same bytes as the list encoded whole, for
built-in kinds with Go's zero values and escapes, pages, selectors and empty lists; the forms
that need the whole object (pretty, Table, audit of the response) take the other path.
"""

from __future__ import annotations

from typing import Any

from kubetwist.endpoints.handlers.rest import ResourceHandlers
from kubetwist.registry.generic.store import Store
from kubetwist.runtime import codec
from tests.support import KubeTestCase


class EncodedListCodecTests(KubeTestCase):
    def test_envelope_and_items(self) -> None:
        """C{head + join(items) + tail} is L{codec.encode}'s body, for a typed kind (field
        order, zero values, escapes), an empty list and an untyped kind."""
        lists = [
            {"kind": "PodList", "apiVersion": "v1",
             "metadata": {"resourceVersion": "7", "continue": "x", "remainingItemCount": 3},
             "items": [{"metadata": {"name": "p<&>", "namespace": "n", "labels": {"b": "1",
                                                                               "a": "2"}},
                        "spec": {"containers": [{"name": "c", "image": "i"}]},
                        "status": {}}]},
            {"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
             "items": []},
            {"kind": "WidgetList", "apiVersion": "example.com/v1", "metadata": {},
             "items": [{"apiVersion": "example.com/v1", "kind": "Widget", "z": 1, "a": "\u2028"}]},
        ]
        for lst in lists:
            head, tail = codec.list_envelope(lst)
            encode = codec.list_item_encoder(lst["apiVersion"], lst["kind"])
            body = head + b",".join(encode(item) for item in lst["items"]) + tail
            self.assertEqual(body, codec.encode(lst, codec.JSON))


class EncodedListHandlerTests(KubeTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.request("POST", "/api/v1/namespaces", {"metadata": {"name": "enc"}})
        for i in range(5):
            code, _, _ = self.request("POST", "/api/v1/namespaces/enc/configmaps", {
                "metadata": {"name": f"cm-{i}", "labels": {"i": str(i % 2)},
                             "annotations": {"html": "<a href='x'>&</a>"}},
                "data": {"k": f"v{i}", "a": "\u2029"}, "binaryData": {"b": "AAE="}})
            self.assertEqual(code, 201)
        code, _, _ = self.request("POST", "/api/v1/namespaces/enc/pods", {
            "metadata": {"name": "p", "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
        self.assertEqual(code, 201)
        self.fast_calls: list[Any] = []
        original = Store.list_encoded

        async def spy(store: Store, namespace: str, options: Any, *args: Any) -> Any:
            self.fast_calls.append(namespace)
            return await original(store, namespace, options, *args)

        self.patch(Store, "list_encoded", spy)

    def raw(self, path: str, headers: dict | None = None) -> bytes:
        code, _, response = self.request("GET", path, headers=headers)
        self.assertEqual(code, 200)
        self.content_types.append(response.headers.getRawHeaders("Content-Type"))
        return self.successResultOf(response.content())

    content_types: list = []

    def both(self, path: str, headers: dict | None = None) -> tuple[bytes, bytes]:
        """The body through the encoded items, then through the whole-list encoder."""
        self.fast_calls.clear()
        self.content_types = []
        fast = self.raw(path, headers)
        self.assertEqual(len(self.fast_calls), 1, path)
        originals = (ResourceHandlers._writes_encoded_list,
                     ResourceHandlers._writes_encoded_table)
        ResourceHandlers._writes_encoded_list = lambda *a: False
        ResourceHandlers._writes_encoded_table = lambda *a: False
        try:
            slow = self.raw(path, headers)
        finally:
            (ResourceHandlers._writes_encoded_list,
             ResourceHandlers._writes_encoded_table) = originals
        self.assertEqual(len(self.fast_calls), 1)
        self.assertEqual(self.content_types[0], self.content_types[1])
        return fast, slow

    def test_tables(self) -> None:
        """A Table with the objects' metadata (kubectl's request): the same body from
        encoded rows, twice (the second from the remembered encodings), for ConfigMaps,
        Pods and Namespaces, paged too."""
        table = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
        for path in ["/api/v1/namespaces/enc/configmaps", "/api/v1/namespaces/enc/pods",
                     "/api/v1/namespaces", "/api/v1/configmaps?limit=2",
                     "/api/v1/namespaces/enc/configmaps?resourceVersion=0&labelSelector=i%3D0"]:
            for _ in range(2):
                with self.subTest(path=path):
                    fast, slow = self.both(path, table)
                    self.assertEqual(fast, slow)
                    self.assertIn(b'"kind":"Table"', fast)

    def test_same_bytes(self) -> None:
        """Cached (C{resourceVersion=0}), consistent, selected, paged and empty lists: the
        same body either way."""
        for path in ["/api/v1/namespaces/enc/configmaps?resourceVersion=0",
                     "/api/v1/namespaces/enc/configmaps",
                     "/api/v1/configmaps?labelSelector=i%3D1",
                     "/api/v1/namespaces/enc/configmaps?limit=2",
                     "/api/v1/namespaces/none/configmaps",
                     "/api/v1/namespaces"]:
            with self.subTest(path=path):
                fast, slow = self.both(path)
                self.assertEqual(fast, slow)
                self.assertTrue(fast.endswith(b"\n"))

    def test_second_page_through_backend(self) -> None:
        """A continue goes to the backend; its items are encoded as they come."""
        code, first, _ = self.request("GET", "/api/v1/namespaces/enc/configmaps?limit=2")
        token = first["metadata"]["continue"]
        fast, slow = self.both(f"/api/v1/namespaces/enc/configmaps?limit=2&continue={token}")
        self.assertEqual(fast, slow)

    def test_whole_object_forms(self) -> None:
        """Pretty output, a Table with whole objects or none, YAML and metadata-only lists
        do not take the encoded path."""
        for path, headers in [
            ("/api/v1/namespaces/enc/configmaps?pretty=true", None),
            ("/api/v1/namespaces/enc/configmaps?includeObject=Object",
             {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}),
            ("/api/v1/namespaces/enc/configmaps?includeObject=None",
             {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}),
            ("/api/v1/namespaces/enc/configmaps?pretty=1",
             {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}),
            ("/api/v1/namespaces/enc/configmaps", {"Accept": "application/yaml"}),
            ("/api/v1/namespaces/enc/configmaps",
             {"Accept": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"}),
        ]:
            self.raw(path, headers)
        self.assertEqual(self.fast_calls, [])
