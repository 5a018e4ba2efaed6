# -*- test-case-name: tests.apiextensions.test_schema_structural -*-
"""
Tests for L{kubetwist.apiextensions.schema.structural_errors}: upstream's
C{ValidateStructural} messages (C{apiextensions-apiserver/pkg/apiserver/schema/validation.go}
and C{complete.go}).
"""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apiextensions.schema import UnsupportedSchemaError, structural_errors
from kubetwist.runtime.field import Path, aggregate_message

P = "spec.versions[0].schema.openAPIV3Schema"

CASES = [
    ("structural", {"type": "object", "properties": {"spec": {"type": "object"}}}, []),
    ("field without type", {"type": "object", "properties": {"spec": {}}},
     [(f"{P}.properties[spec].type: Required value: must not be empty for specified object "
      "fields")]),
    ("root without type", {"properties": {"spec": {"type": "object"}}},
     [f"{P}.type: Required value: must not be empty at the root"]),
    ("items without type", {"type": "object", "properties": {
        "a": {"type": "array", "items": {}}}},
     [(f"{P}.properties[a].items.type: Required value: must not be empty for specified array "
      "items")]),
    ("array without items", {"type": "object", "properties": {"a": {"type": "array"}}},
     [f"{P}.properties[a].items: Required value: must be specified"]),
    ("root not an object", {"type": "string"},
     [f'{P}.type: Invalid value: "string": must be object at the root']),
    ("additionalProperties at the root", {"type": "object", "additionalProperties": {
        "type": "string"}},
     [f"{P}.additionalProperties: Forbidden: must not be used at the root"]),
    ("preserve-unknown-fields allows no type", {"type": "object", "properties": {
        "x": {"x-kubernetes-preserve-unknown-fields": True}}}, []),
    ("int-or-string allows no type", {"type": "object", "properties": {
        "x": {"x-kubernetes-int-or-string": True}}}, []),
    ("int-or-string anyOf pattern", {"type": "object", "properties": {
        "x": {"x-kubernetes-int-or-string": True,
              "anyOf": [{"type": "integer"}, {"type": "string"}]}}}, []),
    ("int-or-string allOf pattern", {"type": "object", "properties": {
        "x": {"x-kubernetes-int-or-string": True,
              "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"maxLength": 3}]}}},
     []),
    ("int-or-string with preserve", {"type": "object", "properties": {
        "x": {"x-kubernetes-int-or-string": True, "x-kubernetes-preserve-unknown-fields": True}}},
     [(f"{P}.properties[x].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be "
      "false if x-kubernetes-int-or-string is true")]),
    ("type in anyOf", {"type": "object", "properties": {
        "x": {"type": "string", "anyOf": [{"type": "string"}, {"type": "integer"}]}}},
     [f"{P}.properties[x].anyOf[0].type: Forbidden: must be empty to be structural",
      f"{P}.properties[x].anyOf[1].type: Forbidden: must be empty to be structural"]),
    ("forbidden generics and extensions in junctors", {"type": "object", "properties": {
        "x": {"type": "object", "properties": {"a": {"type": "string"}},
              "oneOf": [{"description": "d", "title": "t", "default": 1, "nullable": True,
                         "x-kubernetes-list-type": "set", "x-kubernetes-map-type": "atomic",
                         "x-kubernetes-validations": [{"rule": "true"}]}]}}},
     [f"{P}.properties[x].oneOf[0].default: Forbidden: must be undefined to be structural",
      f"{P}.properties[x].oneOf[0].description: Forbidden: must be empty to be structural",
      f"{P}.properties[x].oneOf[0].nullable: Forbidden: must be false to be structural",
      f"{P}.properties[x].oneOf[0].title: Forbidden: must be empty to be structural",
      (f"{P}.properties[x].oneOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be "
      "structural"),
      (f"{P}.properties[x].oneOf[0].x-kubernetes-map-type: Forbidden: must be undefined to be "
      "structural"),
      (f"{P}.properties[x].oneOf[0].x-kubernetes-validations: Forbidden: must be empty to be "
      "structural")]),
    ("additionalProperties in not", {"type": "object", "properties": {
        "x": {"type": "object", "not": {"additionalProperties": True}}}},
     [(f"{P}.properties[x].not.additionalProperties: Forbidden: must be undefined to be "
      "structural")]),
    ("metadata in nested context", {"type": "object", "allOf": [
        {"properties": {"metadata": {"required": ["name"]}}}],
        "properties": {"metadata": {"type": "object"}}},
     [(f"{P}.allOf[0].properties[metadata]: Forbidden: must not be specified in a nested "
      "context")]),
    ("completeness: property only in allOf", {"type": "object", "allOf": [
        {"properties": {"foo": {"minLength": 2}}}]},
     [(f"{P}.properties[foo]: Required value: because it is defined in "
      f"{P}.allOf[0].properties[foo]")]),
    ("completeness: items only in anyOf", {"type": "object", "properties": {"a": {
        "type": "string"}}, "anyOf": [{"properties": {"a": {"items": {"minLength": 1}}}}]},
     [(f"{P}.properties[a].items: Required value: because it is defined in "
      f"{P}.anyOf[0].properties[a].items")]),
    ("root metadata restricting name only", {"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {"name": {"type": "string",
                                                               "maxLength": 5}}}}}, []),
    ("root metadata with labels", {"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}},
     [(f"{P}.properties[metadata]: Forbidden: must not specify anything other than name and "
      "generateName, but metadata is implicitly specified")]),
    ("root metadata with description", {"type": "object", "properties": {
        "metadata": {"type": "object", "description": "standard"}}},
     [(f"{P}.properties[metadata]: Forbidden: must not specify anything other than name and "
      "generateName, but metadata is implicitly specified")]),
    ("root metadata not an object", {"type": "object", "properties": {
        "metadata": {"type": "string"}}},
     [f'{P}.properties[metadata].type: Invalid value: "string": must be object']),
    ("kind must be a string at the root", {"type": "object", "properties": {
        "kind": {"type": "integer"}}},
     [f'{P}.properties[kind].type: Invalid value: "integer": must be string']),
    ("embedded resource must be an object", {"type": "object", "properties": {
        "t": {"x-kubernetes-embedded-resource": True,
              "x-kubernetes-preserve-unknown-fields": True}}},
     [(f"{P}.properties[t].type: Required value: must be object if "
      "x-kubernetes-embedded-resource is true")]),
    ("embedded resource without properties", {"type": "object", "properties": {
        "t": {"type": "object", "x-kubernetes-embedded-resource": True}}},
     [(f"{P}.properties[t].properties: Required value: must not be empty if "
      "x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields")]),
    ("embedded resource with additionalProperties", {"type": "object", "properties": {
        "t": {"type": "object", "x-kubernetes-embedded-resource": True,
              "x-kubernetes-preserve-unknown-fields": True,
              "additionalProperties": {"type": "string"}}}},
     [(f"{P}.properties[t].additionalProperties: Forbidden: must not be used if "
      "x-kubernetes-embedded-resource is set")]),
    ("invalid pattern", {"type": "object", "properties": {"s": {"type": "string",
                                                               "pattern": "(a"}}},
     [(f'{P}.properties[s].pattern: Invalid value: "(a": must be a valid regular expression, '
      "but isn't: error parsing regexp: missing closing ): `(a`")]),
]


class StructuralErrorsTests(SynchronousTestCase):
    """
    Table tests of L{structural_errors}.
    """

    def test_cases(self):
        """
        Each schema gives exactly its expected errors, sorted by text as upstream.
        """
        failures = []
        for name, schema, expected in CASES:
            got = [e.error() for e in structural_errors(schema, Path(P))]
            if got != expected:
                failures.append((name, got, expected))
        self.assertEqual(failures, [])

    def test_condition_message(self):
        """
        The C{NonStructuralSchema} message is the aggregate of the sorted errors.
        """
        errs = structural_errors({"properties": {"b": {}, "a": {}}}, P)
        self.assertEqual(aggregate_message(errs), (
            f"[{P}.properties[a].type: Required value: must not be empty for specified object "
            f"fields, {P}.properties[b].type: Required value: must not be empty for specified "
            f"object fields, {P}.type: Required value: must not be empty at the root]"))

    def test_unsupported(self):
        """
        Fields C{NewStructural} refuses raise L{UnsupportedSchemaError} with upstream's text.
        """
        with self.assertRaises(UnsupportedSchemaError) as cm:
            structural_errors({"type": "object", "properties": {"a": {"$ref": "#/x"}}}, P)
        self.assertEqual(str(cm.exception), "OpenAPIV3Schema '$ref' is not supported")
        with self.assertRaises(UnsupportedSchemaError) as cm:
            structural_errors({"type": "array", "items": [{"type": "string"}]}, P)
        self.assertEqual(str(cm.exception),
                         "OpenAPIV3Schema 'items' must be a schema, but is an array")
