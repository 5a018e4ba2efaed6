"""
The wardle example (a port of upstream's sample-apiserver) served by an assembled extension
server: its group, kinds, defaulting, validation, BanFlunder, table, watch and OpenAPI.
"""

from __future__ import annotations

import json

from examples.wardle import apis
from tests.extension.helpers import ExtensionTestCase

FLUNDERS = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders"
FISCHERS = "/apis/wardle.example.com/v1alpha1/fischers"


def flunder(name: str, spec: dict | None = None) -> dict:
    out = {"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
           "metadata": {"name": name}}
    if spec is not None:
        out["spec"] = spec
    return out


def fischer(name: str, disallowed: list[str]) -> dict:
    return {"apiVersion": "wardle.example.com/v1alpha1", "kind": "Fischer",
            "metadata": {"name": name}, "disallowedFlunders": disallowed}


class _Collector:
    def __init__(self, chunks: list) -> None:
        self.chunks = chunks

    def makeConnection(self, transport: object) -> None:
        pass

    def dataReceived(self, data: bytes) -> None:
        self.chunks.append(data)

    def connectionLost(self, reason: object) -> None:
        pass


class DiscoveryTests(ExtensionTestCase):
    """The group as discovery and OpenAPI describe it."""

    def test_resource_list(self) -> None:
        """C{flunders} (namespaced) and C{fischers} (cluster-scoped) with every verb."""
        code, body, _ = self.request("GET", "/apis/wardle.example.com/v1alpha1")
        self.assertEqual(code, 200)
        by_name = {r["name"]: r for r in body["resources"]}
        self.assertEqual(sorted(by_name), ["fischers", "flunders"])
        self.assertTrue(by_name["flunders"]["namespaced"])
        self.assertFalse(by_name["fischers"]["namespaced"])
        self.assertEqual(by_name["flunders"]["kind"], "Flunder")
        self.assertEqual(by_name["flunders"]["verbs"], [
            "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"])

    def test_group_list(self) -> None:
        """C{/apis} lists only C{wardle.example.com/v1alpha1}, preferred."""
        code, body, _ = self.request("GET", "/apis")
        self.assertEqual(code, 200)
        self.assertEqual([g["name"] for g in body["groups"]], ["wardle.example.com"])
        self.assertEqual(body["groups"][0]["preferredVersion"]["version"], "v1alpha1")

    def test_openapi_v3(self) -> None:
        """The group's OpenAPI document is titled C{Wardle 0.1} and its schemas carry
        upstream's definition names and the kinds' fields."""
        code, body, _ = self.request("GET", "/openapi/v3/apis/wardle.example.com/v1alpha1")
        self.assertEqual(code, 200)
        self.assertEqual(body["info"], {"title": "Wardle", "version": "0.1"})
        schemas = body["components"]["schemas"]
        spec = schemas["io.k8s.sample-apiserver.pkg.apis.wardle.v1alpha1.FlunderSpec"]
        self.assertEqual(sorted(spec["properties"]), ["reference", "referenceType"])
        top = schemas["io.k8s.sample-apiserver.pkg.apis.wardle.v1alpha1.Flunder"]
        self.assertEqual(top["x-kubernetes-group-version-kind"], [
            {"group": "wardle.example.com", "version": "v1alpha1", "kind": "Flunder"}])
        self.assertEqual(sorted(top["properties"]),
                         ["apiVersion", "kind", "metadata", "spec", "status"])

    def test_openapi_v2(self) -> None:
        """C{/openapi/v2} has the kinds' definitions under the same names."""
        code, body, _ = self.request("GET", "/openapi/v2")
        self.assertEqual(code, 200)
        self.assertIn("io.k8s.sample-apiserver.pkg.apis.wardle.v1alpha1.Fischer",
                      body["definitions"])

    def test_no_legacy_group(self) -> None:
        """There is no core group: C{/api} is a plain 404, as upstream's without
        C{InstallLegacyAPIGroup}."""
        code, body, _ = self.request("GET", "/api")
        self.assertEqual((code, body), (404, "404 page not found\n"))

    def test_version(self) -> None:
        """C{/version} is the Wardle component's 1.2."""
        code, body, _ = self.request("GET", "/version")
        self.assertEqual((code, body["major"], body["minor"]), (200, "1", "2"))

    def test_unknown_path(self) -> None:
        """A path no group serves is a 404."""
        code, _, _ = self.request("GET", "/apis/apps/v1")
        self.assertEqual(code, 404)


class FlunderTests(ExtensionTestCase):
    """Flunders: defaulting, validation, the round trip through the internal version."""

    def test_reference_type_defaulted(self) -> None:
        """A reference without a type gets C{referenceType: Flunder}; C{status} is written."""
        code, body, _ = self.request("POST", FLUNDERS, flunder("a", {"reference": "b"}))
        self.assertEqual(code, 201, body)
        self.assertEqual(body["spec"], {"reference": "b", "referenceType": "Flunder"})
        self.assertEqual(body["status"], {})
        self.assertEqual(body["metadata"]["namespace"], "default")

    def test_type_without_reference(self) -> None:
        """C{referenceType: Fischer} without a reference is refused with upstream's
        internal field path."""
        code, body, _ = self.request("POST", FLUNDERS, flunder("a", {"referenceType": "Fischer"}))
        self.assertEqual(code, 422)
        self.assertEqual(body["message"], 'Flunder.wardle.example.com "a" is invalid: '
                         'spec.fischerReference: Invalid value: "": cannot be empty if '
                         "referenceType is Fischer")

    def test_unknown_reference_type_dropped(self) -> None:
        """A reference type that is neither C{Flunder} nor C{Fischer} does not survive the
        conversion to the internal version, nor does its reference."""
        code, body, _ = self.request("POST", FLUNDERS,
                                     flunder("a", {"reference": "x", "referenceType": "Other"}))
        self.assertEqual(code, 201, body)
        self.assertEqual(body["spec"], {})

    def test_meta_validated(self) -> None:
        """The common metadata validation follows the kind's (upstream's path segment rule:
        C{Bad_Name} is a valid flunder name, C{a%b} is not)."""
        code, body, _ = self.request("POST", FLUNDERS, flunder("Bad_Name"))
        self.assertEqual(code, 201, body)
        code, body, _ = self.request("POST", FLUNDERS, flunder("a%b"))
        self.assertEqual(code, 422)
        self.assertEqual(body["message"], 'Flunder.wardle.example.com "a%b" is invalid: '
                         "metadata.name: Invalid value: \"a%b\": may not contain '%'")

    def test_strict_field_validation(self) -> None:
        """Unknown fields are found from the type tables (C{fieldValidation=Strict})."""
        code, body, _ = self.request("POST", FLUNDERS + "?fieldValidation=Strict",
                                     flunder("a", {"bogus": 1}))
        self.assertEqual(code, 400)
        self.assertIn('unknown field \\"spec.bogus\\"', json.dumps(body["message"]))

    def test_update_needs_resource_version(self) -> None:
        """Upstream's strategies refuse unconditional updates."""
        self.request("POST", FLUNDERS, flunder("a"))
        code, body, _ = self.request("PUT", FLUNDERS + "/a", flunder("a", {"reference": "c"}))
        self.assertEqual(code, 422, body)
        self.assertIn("metadata.resourceVersion", body["message"])

    def test_merge_patch_and_delete(self) -> None:
        """A merge patch updates the spec; delete removes the flunder."""
        self.request("POST", FLUNDERS, flunder("a"))
        code, body, _ = self.request("PATCH", FLUNDERS + "/a", {"spec": {"reference": "z"}},
                                     content_type="application/merge-patch+json")
        self.assertEqual(code, 200, body)
        self.assertEqual(body["spec"], {"reference": "z", "referenceType": "Flunder"})
        code, _, _ = self.request("DELETE", FLUNDERS + "/a")
        self.assertEqual(code, 200)
        code, _, _ = self.request("GET", FLUNDERS + "/a")
        self.assertEqual(code, 404)

    def test_table(self) -> None:
        """C{kubectl get} sees upstream's default table: Name, Created At."""
        self.request("POST", FLUNDERS, flunder("a"))
        code, body, _ = self.request(
            "GET", FLUNDERS,
            headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        self.assertEqual(code, 200)
        self.assertEqual([c["name"] for c in body["columnDefinitions"]], ["Name", "Created At"])
        self.assertEqual(body["rows"][0]["cells"][0], "a")

    def test_watch(self) -> None:
        """A watch of flunders sees them added and deleted."""
        _, listed, _ = self.request("GET", FLUNDERS)
        d = self.treq.get(
            "https://wardle.test" + FLUNDERS +
            f"?watch=1&resourceVersion={listed['metadata']['resourceVersion']}",
            headers={"Authorization": ["Bearer admin-token"]})
        self.treq.flush()
        response = self.successResultOf(d)
        chunks: list[bytes] = []
        response.deliverBody(_Collector(chunks))
        self.request("POST", FLUNDERS, flunder("w"))
        self.request("DELETE", FLUNDERS + "/w")
        self.treq.flush()
        events = [json.loads(line) for line in b"".join(chunks).splitlines() if line]
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in events],
                         [("ADDED", "w"), ("DELETED", "w")])
        self.assertEqual(events[0]["object"]["kind"], "Flunder")

    def test_stored_key(self) -> None:
        """Flunders are stored under upstream's key, C{<prefix>/wardle.example.com/flunders/
        <namespace>/<name>}."""
        self.request("POST", FLUNDERS, flunder("k"))
        got = self.successResultOf(self.storage.get(
            "/registry/wardle.example.com/wardle.example.com/flunders/default/k"))
        self.assertEqual(got["metadata"]["name"], "k")


class BanFlunderTests(ExtensionTestCase):
    """The BanFlunder admission plugin."""

    def test_banned_name_refused(self) -> None:
        """A flunder named in a Fischer's C{disallowedFlunders} is refused with upstream's
        message; other names are admitted."""
        code, _, _ = self.request("POST", FISCHERS, fischer("f", ["bad", "worse"]))
        self.assertEqual(code, 201)
        code, body, _ = self.request("POST", FLUNDERS, flunder("worse"))
        self.assertEqual(code, 403)
        self.assertEqual(body["reason"], "Forbidden")
        self.assertEqual(body["message"], 'flunders.wardle.example.com "worse" is forbidden: '
                         "this name may not be used, please change the resource name")
        code, _, _ = self.request("POST", FLUNDERS, flunder("fine"))
        self.assertEqual(code, 201)

    def test_fischers_not_banned(self) -> None:
        """Only flunders are checked: a Fischer may have a banned name."""
        self.request("POST", FISCHERS, fischer("f", ["x"]))
        code, _, _ = self.request("POST", FISCHERS, fischer("x", []))
        self.assertEqual(code, 201)

    def test_fischer_is_cluster_scoped(self) -> None:
        """Fischers have no namespace."""
        code, body, _ = self.request("POST", FISCHERS, fischer("g", []))
        self.assertEqual(code, 201)
        self.assertNotIn("namespace", body["metadata"])


class StrategyTests(ExtensionTestCase):
    """The strategies' upstream flags."""

    def test_flags(self) -> None:
        """Neither kind allows create-on-update or unconditional updates."""
        for strategy in (apis.FLUNDER_STRATEGY, apis.FISCHER_STRATEGY):
            self.assertFalse(strategy.allow_create_on_update)
            self.assertFalse(strategy.allow_unconditional_update)
        self.assertTrue(apis.FLUNDER_STRATEGY.namespaced)
        self.assertFalse(apis.FISCHER_STRATEGY.namespaced)
