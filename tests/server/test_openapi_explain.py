"""
C{kubectl explain} needs, for every served built-in kind, a schema in
C{/openapi/v3/apis/<group>/<version>} (or C{/openapi/v3/api/v1}) carrying the kind's
C{x-kubernetes-group-version-kind}, whose every C{$ref} resolves in the same document.
"""

from __future__ import annotations

from typing import Any

from tests.support import KubeTestCase


def _refs(node: Any, out: set) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            out.add(ref)
        for v in node.values():
            _refs(v, out)
    elif isinstance(node, list):
        for v in node:
            _refs(v, out)


class ExplainTests(KubeTestCase):
    def _served(self) -> list[tuple[str, str, str]]:
        """(group, version, kind) of every top-level built-in resource from discovery."""
        out = []
        _, core, _ = self.request("GET", "/api/v1")
        for r in core["resources"]:
            if "/" not in r["name"]:
                out.append(("", "v1", r["kind"]))
        _, groups, _ = self.request("GET", "/apis")
        for g in groups["groups"]:
            for v in g["versions"]:
                _, res, _ = self.request("GET", f"/apis/{v['groupVersion']}")
                for r in res["resources"]:
                    if "/" not in r["name"]:
                        out.append((g["name"], v["version"], r["kind"]))
        return out

    def test_every_served_kind_resolves(self) -> None:
        """Each served kind has a schema with its GVK in its group-version's OpenAPI v3
        document, and every $ref reachable from it resolves."""
        docs: dict[str, dict] = {}
        missing, dangling = [], []
        served = self._served()
        for group, version, kind in served:
            path = f"/openapi/v3/apis/{group}/{version}" if group else "/openapi/v3/api/v1"
            if path not in docs:
                code, doc, _ = self.request("GET", path)
                self.assertEqual(code, 200, path)
                docs[path] = doc
            schemas = docs[path].get("components", {}).get("schemas", {})
            name = None
            for n, s in schemas.items():
                for gvk in s.get("x-kubernetes-group-version-kind", []):
                    if (gvk.get("group"), gvk.get("version"), gvk.get("kind")) == (
                            group, version, kind):
                        name = n
            if name is None:
                missing.append((group, version, kind))
                continue
            seen, todo = set(), [name]
            while todo:
                n = todo.pop()
                if n in seen:
                    continue
                seen.add(n)
                if n not in schemas:
                    dangling.append((kind, n))
                    continue
                refs: set = set()
                _refs(schemas[n], refs)
                todo.extend(r.rsplit("/", 1)[-1] for r in refs)
        self.assertGreater(len(served), 30)
        self.assertEqual((missing, dangling), ([], []))

    def test_swagger_v2_describes_built_in_kinds(self) -> None:
        """C{/openapi/v2} holds every built-in kind's definitions too (what
        C{kubectl explain --output plaintext-openapiv2} reads): references rewritten to
        C{#/definitions/...}, v3's C{allOf} reference wrappers unwrapped, and every reference
        resolving."""
        code, doc, _ = self.request("GET", "/openapi/v2")
        self.assertEqual(code, 200)
        definitions = doc["definitions"]
        deployment = definitions["io.k8s.api.apps.v1.Deployment"]
        self.assertEqual(deployment["x-kubernetes-group-version-kind"],
                         [{"group": "apps", "version": "v1", "kind": "Deployment"}])
        self.assertEqual(deployment["properties"]["spec"],
                         {"$ref": "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"})
        refs: set = set()
        _refs(definitions, refs)
        self.assertEqual({r for r in refs if not r.startswith("#/definitions/")}, set())
        self.assertEqual({r for r in refs if r[len("#/definitions/"):] not in definitions},
                         set())
        self.assertIn("io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler", definitions)
