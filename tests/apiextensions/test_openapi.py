"""
Tests for L{kubetwist.apiextensions.openapi}: the OpenAPI v2 and v3 definitions published for a
custom resource version.  Expected values are what kube-apiserver v1.32 serves at
C{/openapi/v2} and C{/openapi/v3/apis/<group>/<version>} for the same CRD schemas.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apiextensions import openapi

NAME = "com.example.v1.Widget"
GVK = [{"group": "example.com", "kind": "Widget", "version": "v1"}]
V2_META = {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
           "description": "Standard object's metadata. More info: https://git.k8s.io/community/"
                          "contributors/devel/sig-architecture/api-conventions.md#metadata"}
V3_META = {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."
                              "ObjectMeta"}],
           "description": V2_META["description"]}
EMBEDDED_API_VERSION = {
    "description": "apiVersion defines the versioned schema of this representation of an "
                   "object. More info: https://git.k8s.io/community/contributors/devel/"
                   "sig-architecture/api-conventions.md#resources", "type": "string"}
EMBEDDED_KIND = {
    "description": "kind is a string value representing the type of this object. In "
                   "CamelCase. More info: https://git.k8s.io/community/contributors/devel/"
                   "sig-architecture/api-conventions.md#types-kinds", "type": "string"}

#: A status schema exercising what OpenAPI v2 cannot say.
STATUS = {"type": "object", "description": "Status of Waldo", "properties": {
    "nul": {"type": "string", "nullable": True},
    "ios": {"x-kubernetes-int-or-string": True,
            "anyOf": [{"type": "integer"}, {"type": "string"}]},
    "lst": {"type": "array", "x-kubernetes-preserve-unknown-fields": True,
            "items": {"type": "string"}},
    "emb": {"type": "object", "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True},
    "m": {"type": "object", "additionalProperties": {"type": "string", "nullable": True},
          "required": ["a"]},
    "req": {"type": "object", "required": ["x", "y"],
            "properties": {"x": {"type": "string", "nullable": True}, "y": {"type": "string"}}},
    "v": {"type": "string", "enum": ["a", "b"], "pattern": "^a", "default": "a",
          "x-kubernetes-validations": [{"rule": "self.size() > 0"}]},
    "one": {"type": "object", "properties": {"a": {"type": "string"}},
            "oneOf": [{"required": ["a"]}]},
}}
SCHEMA = {"type": "object", "description": "preserve-unknown-properties in nested field",
          "properties": {
              "spec": {"type": "object", "description": "Specification of Waldo",
                       "x-kubernetes-preserve-unknown-fields": True,
                       "properties": {"dummy": {"type": "string"}}},
              "status": STATUS}}


def _build(schema, v3: bool, selectable=None) -> dict:
    return openapi.build("example.com", "v1", "Widget", "WidgetList", schema, v3=v3,
                         selectable=selectable)[NAME]


class V2Tests(SynchronousTestCase):
    def test_root_preserving_unknown_fields(self) -> None:
        """A root schema keeping unknown fields is published in v2 as just C{type: object}
        (upstream C{buildKubeNative}; e2e "CustomResourcePublishOpenAPI works for CRD without
        validation schema" expects exactly that)."""
        schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        self.assertEqual(_build(schema, v3=False), {
            "type": "object", "x-kubernetes-group-version-kind": GVK,
            "x-kubernetes-selectable-fields": []})

    def test_to_v2(self) -> None:
        """Nullable and unknown-field-keeping nodes lose type, items and properties; a
        nullable property is no longer required; junctors and defaults go;
        x-kubernetes-validations stay."""
        got = _build(SCHEMA, v3=False)
        self.assertEqual(got["properties"]["spec"], {
            "description": "Specification of Waldo",
            "x-kubernetes-preserve-unknown-fields": True})
        self.assertEqual(got["properties"]["status"], {
            "description": "Status of Waldo", "type": "object", "properties": {
                "emb": {"x-kubernetes-embedded-resource": True,
                        "x-kubernetes-preserve-unknown-fields": True},
                "ios": {"x-kubernetes-int-or-string": True},
                "lst": {"x-kubernetes-preserve-unknown-fields": True},
                "m": {"additionalProperties": {}, "type": "object"},
                "nul": {},
                "one": {"properties": {"a": {"type": "string"}}, "type": "object"},
                "req": {"properties": {"x": {}, "y": {"type": "string"}}, "required": ["y"],
                        "type": "object"},
                "v": {"enum": ["a", "b"], "pattern": "^a", "type": "string",
                      "x-kubernetes-validations": [{"rule": "self.size() > 0"}]}}})
        self.assertEqual(got["properties"]["metadata"], V2_META)

    def test_embedded_resource(self) -> None:
        """An embedded resource gets apiVersion, kind and metadata (replacing its own) and
        requires kind and apiVersion, after its own required fields."""
        schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "emb": {"type": "object", "x-kubernetes-embedded-resource": True,
                    "required": ["zz"],
                    "properties": {"zz": {"type": "string"}, "kind": {"type": "string"},
                                   "metadata": {"type": "object"}}}}}}}
        emb = _build(schema, v3=False)["properties"]["spec"]["properties"]["emb"]
        self.assertEqual(emb, {
            "type": "object", "x-kubernetes-embedded-resource": True,
            "required": ["zz", "kind", "apiVersion"],
            "properties": {"apiVersion": EMBEDDED_API_VERSION, "kind": EMBEDDED_KIND,
                           "metadata": V2_META, "zz": {"type": "string"}}})


class V3Tests(SynchronousTestCase):
    def test_structural_only(self) -> None:
        """v3 keeps defaults, nullability and junctors but not C{example} or
        C{externalDocs}; the root's metadata has no default."""
        schema = {"type": "object", "properties": {"q": {
            "type": "string", "format": "date-time", "maxLength": 5, "title": "T",
            "default": "x", "nullable": True, "example": "e",
            "externalDocs": {"url": "http://x"}}}}
        got = _build(schema, v3=True)
        self.assertEqual(got["properties"]["q"], {
            "type": "string", "format": "date-time", "maxLength": 5, "title": "T",
            "default": "x", "nullable": True})
        self.assertEqual(got["properties"]["metadata"], V3_META)

    def test_embedded_resource_keeping_unknown_fields(self) -> None:
        """In v3 an embedded resource gets its metadata properties even when it keeps
        unknown fields (in v2 it does not)."""
        schema = {"type": "object", "properties": {"embl": {"type": "array", "items": {
            "type": "object", "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True}}}}
        self.assertEqual(_build(schema, v3=True)["properties"]["embl"]["items"], {
            "type": "object", "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True, "required": ["kind", "apiVersion"],
            "properties": {"apiVersion": EMBEDDED_API_VERSION, "kind": EMBEDDED_KIND,
                           "metadata": V3_META}})
        self.assertEqual(_build(schema, v3=False)["properties"]["embl"], {
            "type": "array", "items": {"x-kubernetes-embedded-resource": True,
                                       "x-kubernetes-preserve-unknown-fields": True}})

    def test_selectable_fields(self) -> None:
        """The version's selectableFields are published as x-kubernetes-selectable-fields
        (field paths without the leading dot), in v2 and v3."""
        sel = [{"jsonPath": ".spec.dummy"}, {"jsonPath": ".spec.n"}]
        for v3 in (True, False):
            self.assertEqual(_build(SCHEMA, v3=v3, selectable=sel)[
                "x-kubernetes-selectable-fields"],
                [{"fieldPath": "spec.dummy"}, {"fieldPath": "spec.n"}])
