# -*- test-case-name: tests.apiextensions.test_schema_defaulting -*-
"""
Tests for L{kubetwist.apiextensions.schema.apply_defaults} and
L{validate_schema_defaults}: upstream's C{pkg/apiserver/schema/defaulting}.
"""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apiextensions.schema import apply_defaults, validate_schema_defaults

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "default": {},
            "properties": {
                "replicas": {"type": "integer", "default": 1},
                "mode": {"type": "string", "default": "auto"},
                "nullableMode": {"type": "string", "nullable": True, "default": "x"},
                "ports": {"type": "array", "items": {
                    "type": "object", "properties": {
                        "protocol": {"type": "string", "default": "TCP"},
                        "port": {"type": "integer"}}}},
                "byName": {"type": "object", "additionalProperties": {
                    "type": "object", "properties": {"weight": {"type": "integer",
                                                             "default": 10}}}},
                "config": {"type": "object", "default": {"a": "b", "unknown": 1},
                           "properties": {"a": {"type": "string"}}},
            },
        },
    },
}

# (name, object in, object out)
CASES = [
    ("absent spec gets its default and the defaults inside it", {},
     {"spec": {"replicas": 1, "mode": "auto", "nullableMode": "x", "config": {"a": "b"}}}),
    ("present fields are kept", {"spec": {"replicas": 3, "mode": "m"}},
     {"spec": {"replicas": 3, "mode": "m", "nullableMode": "x", "config": {"a": "b"}}}),
    ("null of a non-nullable field is defaulted; nullable null is kept",
     {"spec": {"replicas": None, "nullableMode": None}},
     {"spec": {"replicas": 1, "mode": "auto", "nullableMode": None, "config": {"a": "b"}}}),
    ("defaults inside array items", {"spec": {"ports": [{"port": 80}, {"protocol": "UDP"}]}},
     {"spec": {"ports": [{"port": 80, "protocol": "TCP"}, {"protocol": "UDP"}], "replicas": 1,
               "mode": "auto", "nullableMode": "x", "config": {"a": "b"}}}),
    ("defaults inside additionalProperties values", {"spec": {"byName": {"a": {}, "b": {
        "weight": 2}}}},
     {"spec": {"byName": {"a": {"weight": 10}, "b": {"weight": 2}}, "replicas": 1,
               "mode": "auto", "nullableMode": "x", "config": {"a": "b"}}}),
]


class ApplyDefaultsTests(SynchronousTestCase):
    """
    Table tests of L{apply_defaults}.
    """

    def test_cases(self):
        """
        Each object is defaulted in place to the expected one (defaults are pruned of
        unknown fields first, as upstream's C{PruneDefaults}).
        """
        failures = []
        for name, obj, expected in CASES:
            apply_defaults(obj, SCHEMA)
            if obj != expected:
                failures.append((name, obj))
        self.assertEqual(failures, [])

    def test_defaults_are_copies(self):
        """
        Two objects defaulted from one schema do not share the default value.
        """
        a, b = {}, {}
        apply_defaults(a, SCHEMA)
        apply_defaults(b, SCHEMA)
        a["spec"]["config"]["a"] = "changed"
        self.assertEqual(b["spec"]["config"], {"a": "b"})


P = "spec.versions[0].schema.openAPIV3Schema"


class ValidateSchemaDefaultsTests(SynchronousTestCase):
    """
    Tests of L{validate_schema_defaults}.
    """

    def test_unknown_fields(self):
        """
        A default with fields the schema does not specify is refused.
        """
        errs = validate_schema_defaults(SCHEMA, P)
        self.assertEqual([e.error() for e in errs], [
            (f'{P}.properties[spec].properties[config].default: Invalid value: '
            '{"a":"b","unknown":1}: must not have unknown fields')])

    def test_invalid_default(self):
        """
        A default must validate against its own schema; kube-openapi validates the default
        as a root value, so its name in the text is empty (upstream's double space).
        """
        schema = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3,
                                                        "default": 5}}}
        self.assertEqual([e.error() for e in validate_schema_defaults(schema, P)], [
            (f"{P}.properties[n].default: Invalid value: 5:  in body should be less than or "
            "equal to 3")])

    def test_valid(self):
        """
        Valid, pruned defaults give no errors.
        """
        schema = {"type": "object", "properties": {"n": {"type": "integer", "default": 2}}}
        self.assertEqual(validate_schema_defaults(schema, P), [])
