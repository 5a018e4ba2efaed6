"""
The library pieces of L{kubetwist.extension}: registering type tables, L{new_strategy}, and
a small server of its own assembled with L{assemble_extension} (health, version, metrics,
admission, the filter chain).
"""

from __future__ import annotations

from types import SimpleNamespace

from twisted.trial.unittest import SynchronousTestCase
from zope.interface import implementer

from kubetwist.extension import (
    APIGroupInfo,
    ExtensionConfig,
    IValidationInterface,
    ResourceSpec,
    TableConvertor,
    new_strategy,
    register_types,
)
from kubetwist.runtime import errors
from kubetwist.runtime import types as typedefs
from kubetwist.runtime.field import Path, required
from tests.extension.helpers import ExtensionTestCase, isolate_type_registry

GADGETS = "/apis/gadgets.example.org/v1/namespaces/default/gadgets"

TYPES = SimpleNamespace(
    PACKAGE="org.example.gadgets.v1", GROUP="gadgets.example.org", VERSION="v1",
    KINDS=("Gadget", "GadgetList"),
    TYPES={
        "Gadget": (("metadata", 1, "meta.ObjectMeta", "o"), ("size", 2, "int32", "o"),
                   ("labels", 3, "map[string]string", "o")),
        "GadgetList": (("metadata", 1, "meta.ListMeta", "o"), ("items", 2, "[]Gadget", "r")),
    })


def validate_gadget(obj: dict) -> list:
    if "size" not in obj:
        return [required(Path("size"), "")]
    return []


@implementer(IValidationInterface)
class NoHugeGadgets:
    """A validating plugin: sizes above 10 are forbidden."""

    name = "NoHugeGadgets"

    def handles(self, operation: str) -> bool:
        return operation in ("CREATE", "UPDATE")

    def validate(self, a: object) -> None:
        if (a.object or {}).get("size", 0) > 10:  # type: ignore[attr-defined]
            raise errors.new_forbidden(a.resource.group, a.resource.resource,  # type: ignore
                                       a.name, "too big")  # type: ignore[attr-defined]


def gadget_config() -> ExtensionConfig:
    register_types(TYPES)
    table = TableConvertor(
        columns=[{"name": "Name", "type": "string", "format": "name", "description": "",
                  "priority": 0},
                 {"name": "Size", "type": "integer", "format": "", "description": "",
                  "priority": 0}],
        row=lambda obj: [obj["metadata"]["name"], obj.get("size", 0)])
    group = APIGroupInfo(
        "gadgets.example.org", "v1",
        [ResourceSpec("gadgets.example.org", "v1", "gadgets", "Gadget", "gadget",
                      short_names=["gd"], categories=["all"])],
        {"gadgets": new_strategy("Gadget", "gadgets.example.org", validate=validate_gadget,
                                 table=table, allow_unconditional_update=True)})
    return ExtensionConfig(
        name="gadget-apiserver", groups=[group],
        admission_plugins=[("NoHugeGadgets", lambda ctx: NoHugeGadgets())],
        version_info={"major": "1", "minor": "0", "gitVersion": "v1.0.0"})


def gadget(name: str, size: int | None = 1) -> dict:
    out: dict = {"apiVersion": "gadgets.example.org/v1", "kind": "Gadget",
                 "metadata": {"name": name}}
    if size is not None:
        out["size"] = size
    return out


class RegisterTypesTests(SynchronousTestCase):
    """L{register_types}."""

    def setUp(self) -> None:
        isolate_type_registry(self)

    def test_isolated(self) -> None:
        """The tests leave the registry as they found it (other tests count its kinds)."""
        self.assertNotIn(("gadgets.example.org", "v1", "Gadget"), typedefs.KINDS)
        self.assertNotIn(("wardle.example.com", "v1alpha1", "Flunder"), typedefs.KINDS)

    def test_registered(self) -> None:
        """The kinds land in the type registry; registering again is a no-op."""
        added = register_types(TYPES)
        self.assertIn("org.example.gadgets.v1.Gadget", added)
        self.assertEqual(typedefs.lookup_kind("gadgets.example.org", "v1", "Gadget"),
                         "org.example.gadgets.v1.Gadget")
        self.assertEqual(register_types(TYPES), added)

    def test_conflict(self) -> None:
        """Other rows for a registered type are refused."""
        register_types(TYPES)
        other = SimpleNamespace(**{**vars(TYPES), "TYPES": {
            **TYPES.TYPES, "Gadget": (("metadata", 1, "meta.ObjectMeta", "o"),)}})
        with self.assertRaises(ValueError):
            register_types(other)

    def test_kind_without_type(self) -> None:
        """A served kind needs a type table."""
        broken = SimpleNamespace(PACKAGE="org.example.broken.v1", GROUP="broken.example.org",
                                 VERSION="v1", KINDS=("Thing",), TYPES={})
        with self.assertRaises(ValueError):
            register_types(broken)


class GadgetServerTests(ExtensionTestCase):
    """A server of a library user's own: the pieces work together."""

    def config(self) -> ExtensionConfig:
        return gadget_config()

    def test_crud_and_validation(self) -> None:
        """Create (the kind's validation, then admission), get, list with short names in
        discovery."""
        code, body, _ = self.request("POST", GADGETS, gadget("a", None))
        self.assertEqual(code, 422)
        self.assertEqual(body["message"],
                         'Gadget.gadgets.example.org "a" is invalid: size: Required value')
        code, body, _ = self.request("POST", GADGETS, gadget("big", 11))
        self.assertEqual(code, 403)
        self.assertEqual(body["message"], 'gadgets.gadgets.example.org "big" is forbidden: '
                         "too big")
        code, body, _ = self.request("POST", GADGETS, gadget("a", 3))
        self.assertEqual(code, 201, body)
        code, body, _ = self.request("GET", GADGETS + "/a")
        self.assertEqual((code, body["size"]), (200, 3))
        _, discovery, _ = self.request("GET", "/apis/gadgets.example.org/v1")
        self.assertEqual(discovery["resources"][0]["shortNames"], ["gd"])
        self.assertEqual(discovery["resources"][0]["categories"], ["all"])

    def test_strategic_merge_patch(self) -> None:
        """Strategic merge patch works from the type tables' metadata."""
        self.request("POST", GADGETS, gadget("a", 3))
        code, body, _ = self.request(
            "PATCH", GADGETS + "/a", {"size": 4, "labels": {"x": "y"}},
            content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 200, body)
        self.assertEqual((body["size"], body["labels"]), (4, {"x": "y"}))

    def test_server_side_apply(self) -> None:
        """Server-side apply works, and records the field manager."""
        code, body, _ = self.request(
            "PATCH", GADGETS + "/b?fieldManager=me",
            "apiVersion: gadgets.example.org/v1\nkind: Gadget\nmetadata:\n  name: b\nsize: 2\n",
            content_type="application/apply-patch+yaml")
        self.assertEqual(code, 201, body)
        self.assertEqual(body["metadata"]["managedFields"][0]["manager"], "me")

    def test_table(self) -> None:
        """The strategy's printer columns."""
        self.request("POST", GADGETS, gadget("a", 3))
        code, body, _ = self.request(
            "GET", GADGETS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        self.assertEqual(code, 200)
        self.assertEqual(body["rows"][0]["cells"], ["a", 3])

    def test_health_version_metrics(self) -> None:
        """C{/readyz}, C{/version} and C{/metrics} are served."""
        code, text, _ = self.request("GET", "/readyz?verbose")
        self.assertEqual(code, 200)
        self.assertIn("[+]etcd ok", text)
        self.assertIn("[+]informer-sync ok", text)
        self.assertIn("[+]poststarthook/max-in-flight-filter ok", text)
        code, body, _ = self.request("GET", "/version")
        self.assertEqual((code, body["gitVersion"]), (200, "v1.0.0"))
        code, text, _ = self.request("GET", "/metrics")
        self.assertEqual(code, 200)
        self.assertIn("apiserver_request_total", text)

    def test_unauthenticated(self) -> None:
        """The filter chain's authentication: an unknown token is 401."""
        code, body, _ = self.request("GET", GADGETS, token="nope")
        self.assertEqual((code, body["reason"]), (401, "Unauthorized"))
