# -*- test-case-name: tests.apiextensions.test_schema_validation -*-
"""
Tests for L{kubetwist.apiextensions.schema} validation of custom resources.

Expected messages are upstream's, from C{apiextensions-apiserver/pkg/apiserver/validation}
(C{validation_test.go}) and the message formats of C{kube-openapi/pkg/validation/errors}.
"""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apiextensions.schema import (
    CompiledSchema,
    validate_custom_resource,
    validate_custom_resource_update,
)


def obj_schema(**props):
    return {"type": "object", "properties": props}


INT_OR_STRING_ANYOF = {"nullable": True, "x-kubernetes-int-or-string": True,
                       "anyOf": [{"type": "integer"}, {"type": "string"}]}
INT_OR_STRING_ALLOF = {"nullable": True, "x-kubernetes-int-or-string": True,
                       "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]}

# (name, schema, object, expected error strings (in order))
CASES = [
    ("object field given a string", obj_schema(field={"type": "object"}), {"field": "foo"},
     ['field: Invalid value: "string": field in body must be of type object: "string"']),
    ("object field given an integer", obj_schema(field={"type": "object"}), {"field": 42},
     ['field: Invalid value: "integer": field in body must be of type object: "integer"']),
    ("object field given a boolean", obj_schema(field={"type": "object"}), {"field": True},
     ['field: Invalid value: "boolean": field in body must be of type object: "boolean"']),
    ("object field given a number", obj_schema(field={"type": "object"}), {"field": 1.2},
     ['field: Invalid value: "number": field in body must be of type object: "number"']),
    ("object field given an array", obj_schema(field={"type": "object"}), {"field": []},
     ['field: Invalid value: "array": field in body must be of type object: "array"']),
    ("non-nullable object given null", obj_schema(field={"type": "object"}), {"field": None},
     ['field: Invalid value: "null": field in body must be of type object: "null"']),
    ("nullable object accepts null", obj_schema(field={"type": "object", "nullable": True}),
     {"field": None}, []),
    ("absent field is fine", obj_schema(field={"type": "object"}), {}, []),
    ("integer accepts integral float", obj_schema(n={"type": "integer"}), {"n": 2.0}, []),
    ("integer refuses fraction", obj_schema(n={"type": "integer"}), {"n": 2.5},
     ['n: Invalid value: "number": n in body must be of type integer: "number"']),
    ("number accepts integer", obj_schema(n={"type": "number"}), {"n": 2}, []),
    ("int32 format refuses fraction with the format name",
     obj_schema(n={"type": "integer", "format": "int32"}), {"n": 2.5},
     ['n: Invalid value: "float64": n in body must be of type int32: "float64"']),
    ("int32 is not range checked at v1.32",
     obj_schema(n={"type": "integer", "format": "int32"}), {"n": 2 ** 40}, []),
    ("boolean given string", obj_schema(b={"type": "boolean"}), {"b": "true"},
     ['b: Invalid value: "string": b in body must be of type boolean: "string"']),
    ("int-or-string (anyOf) null ok", obj_schema(field=INT_OR_STRING_ANYOF), {"field": None}, []),
    ("int-or-string (anyOf) integer ok", obj_schema(field=INT_OR_STRING_ANYOF), {"field": 42}, []),
    ("int-or-string (anyOf) string ok", obj_schema(field=INT_OR_STRING_ANYOF), {"field": "x"}, []),
    ("int-or-string (anyOf) boolean", obj_schema(field=INT_OR_STRING_ANYOF), {"field": True},
     ['field: Invalid value: "boolean": field in body must be of type integer,string: "boolean"',
      '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
      'field: Invalid value: "boolean": field in body must be of type integer: "boolean"']),
    ("int-or-string (allOf) array", obj_schema(field=INT_OR_STRING_ALLOF), {"field": []},
     ['field: Invalid value: "array": field in body must be of type integer,string: "array"',
      '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
      'field: Invalid value: "array": field in body must be of type integer: "array"',
      '<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated']),
    ("int-or-string without anyOf", obj_schema(p={"x-kubernetes-int-or-string": True}),
     {"p": 1.5},
     ['p: Invalid value: "number": p in body must be of type integer,string: "number"']),
    ("invalid pattern", obj_schema(field={"type": "string", "pattern": "+"}), {"field": "foo"},
     [("field: Invalid value: \"foo\": field in body should match '+, but pattern is invalid: "
      "error parsing regexp: missing argument to repetition operator: `+`'")]),
    ("pattern mismatch", obj_schema(s={"type": "string", "pattern": "^[a-z]+$"}), {"s": "ab1"},
     ["s: Invalid value: \"ab1\": s in body should match '^[a-z]+$'"]),
    ("pattern $ is end of text (no trailing newline)",
     obj_schema(s={"type": "string", "pattern": "^[a-z]+$"}), {"s": "ab\n"},
     ["s: Invalid value: \"ab\\n\": s in body should match '^[a-z]+$'"]),
    ("pattern is unanchored search", obj_schema(s={"type": "string", "pattern": "b"}),
     {"s": "abc"}, []),
    ("pattern with mid-pattern flag", obj_schema(s={"type": "string",
                                                    "pattern": "^(?i)(abort|warn)?$"}),
     {"s": "WARN"}, []),
    ("required at root and nested",
     {"type": "object", "required": ["field"],
      "properties": {"field": {"type": "object", "required": ["nested"],
                               "properties": {"nested": {}}}}},
     {"test": "a"}, ["field: Required value"]),
    ("required nested",
     {"type": "object", "required": ["field"],
      "properties": {"field": {"type": "object", "required": ["nested"],
                               "properties": {"nested": {}}}}},
     {"field": {}}, ["field.nested: Required value"]),
    ("enum type and value errors",
     obj_schema(field={"type": "object", "required": ["nestedint", "nestedstring"],
                       "properties": {"nestedint": {"type": "integer", "enum": [1, 2]},
                                      "nestedstring": {"type": "string", "enum": ["a", "b"]}}}),
     {"field": {"nestedint": "x", "nestedstring": True}},
     [('field.nestedint: Invalid value: "string": field.nestedint in body must be of type '
      'integer: "string"'),
      'field.nestedint: Unsupported value: "x": supported values: "1", "2"',
      ('field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be of '
      'type string: "boolean"'),
      'field.nestedstring: Unsupported value: true: supported values: "a", "b"']),
    ("enum matches integral float against integer enum",
     obj_schema(n={"type": "number", "enum": [1, 2]}), {"n": 1.0}, []),
    ("enum null never matches", obj_schema(n={"type": "string", "nullable": True,
                                             "enum": ["a"]}), {"n": None},
     ['n: Unsupported value: "null": supported values: "a"']),
    ("maxProperties", obj_schema(fieldX={"type": "object", "maxProperties": 2}),
     {"fieldX": {"a": True, "b": True, "c": True}},
     ["fieldX: Too many: 3: must have at most 2 items"]),
    ("minProperties", obj_schema(m={"type": "object", "minProperties": 2}), {"m": {"a": 1}},
     ["m: Invalid value: 1: m in body should have at least 2 properties"]),
    ("maxItems", obj_schema(fieldX={"type": "array", "maxItems": 2}),
     {"fieldX": ["a", "b", "c"]}, ["fieldX: Too many: 3: must have at most 2 items"]),
    ("minItems", obj_schema(a={"type": "array", "minItems": 2, "items": {"type": "string"}}),
     {"a": ["x"]}, ["a: Invalid value: 1: a in body should have at least 2 items"]),
    ("maxLength", obj_schema(fieldX={"type": "string", "maxLength": 2}), {"fieldX": "abc"},
     ["fieldX: Too long: may not be more than 2 bytes"]),
    ("maxLength counts characters", obj_schema(s={"type": "string", "maxLength": 2}),
     {"s": "é€"}, []),
    ("minLength", obj_schema(s={"type": "string", "minLength": 3}), {"s": "ab"},
     ['s: Invalid value: "ab": s in body should be at least 3 chars long']),
    ("maximum on integer", obj_schema(size={"type": "integer", "maximum": 10}), {"size": 11},
     ["size: Invalid value: 11: size in body should be less than or equal to 10"]),
    ("exclusive maximum", obj_schema(size={"type": "integer", "maximum": 10,
                                           "exclusiveMaximum": True}), {"size": 10},
     ["size: Invalid value: 10: size in body should be less than 10"]),
    ("minimum on number", obj_schema(r={"type": "number", "minimum": 0.5}), {"r": 0.25},
     ["r: Invalid value: 0.25: r in body should be greater than or equal to 0.5"]),
    ("exclusive minimum", obj_schema(r={"type": "integer", "minimum": 0,
                                        "exclusiveMinimum": True}), {"r": 0},
     ["r: Invalid value: 0: r in body should be greater than 0"]),
    ("float maximum applied to integer data as int64",
     obj_schema(r={"type": "number", "maximum": 1e6}), {"r": 2000000},
     ["r: Invalid value: 2000000: r in body should be less than or equal to 1000000"]),
    ("float maximum printed as Go %v for float data",
     obj_schema(r={"type": "number", "maximum": 1.5e-5}), {"r": 0.5},
     ["r: Invalid value: 0.5: r in body should be less than or equal to 1.5e-05"]),
    ("multipleOf integer", obj_schema(n={"type": "integer", "multipleOf": 3}), {"n": 7},
     ["n: Invalid value: 7: n in body should be a multiple of 3"]),
    ("multipleOf number", obj_schema(n={"type": "number", "multipleOf": 0.5}), {"n": 0.7},
     ["n: Invalid value: 0.7: n in body should be a multiple of 0.5"]),
    ("multipleOf fraction for integer data", obj_schema(n={"type": "integer",
                                                          "multipleOf": 0.5}), {"n": 3},
     ["n: Invalid value: 0: factor MultipleOf declared for n must be positive: 0"]),
    ("uniqueItems", obj_schema(a={"type": "array", "uniqueItems": True,
                                  "items": {"type": "integer"}}), {"a": [1, 2, 1]},
     ['a: Invalid value: "": a in body shouldn\'t contain duplicates']),
    ("uniqueItems distinguishes 1 and 1.0", obj_schema(a={"type": "array", "uniqueItems": True,
                                                          "items": {"type": "number"}}),
     {"a": [1, 1.0]}, []),
    ("items errors carry the index",
     obj_schema(ports={"type": "array", "items": {"type": "object",
                                                   "properties": {"port": {"type": "integer"}}}}),
     {"ports": [{"port": 1}, {"port": "x"}]},
     [('ports[1].port: Invalid value: "string": ports[1].port in body must be of type integer: '
      '"string"')]),
    ("additionalProperties schema",
     obj_schema(m={"type": "object", "additionalProperties": {"type": "string"}}),
     {"m": {"a": "x", "b": 1}},
     ['m.b: Invalid value: "integer": m.b in body must be of type string: "integer"']),
    ("additionalProperties false forbids",
     obj_schema(m={"type": "object", "properties": {"a": {"type": "string"}},
                   "additionalProperties": False}),
     {"m": {"a": "x", "z": 1}},
     ['m: Invalid value: "z": m.z in body is a forbidden property']),
    ("oneOf none valid",
     obj_schema(o={"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
                   "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}),
     {"o": {}},
     [('<nil>: Invalid value: "": "o" must validate one and only one schema (oneOf). '
      'Found none valid'), "o.a: Required value"]),
    ("oneOf two valid",
     obj_schema(o={"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
                   "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}),
     {"o": {"a": "x", "b": "y"}},
     [('<nil>: Invalid value: "": "o" must validate one and only one schema (oneOf). '
      'Found 2 valid alternatives')]),
    ("not", obj_schema(o={"type": "object", "not": {"required": ["a"]},
                          "properties": {"a": {"type": "string"}}}), {"o": {"a": "x"}},
     ['<nil>: Invalid value: "": "o" must not validate the schema (not)']),
    ("format date-time", obj_schema(t={"type": "string", "format": "date-time"}),
     {"t": "yesterday"},
     ['t: Invalid value: "yesterday": t in body must be of type date-time: "yesterday"']),
    ("format date-time ok", obj_schema(t={"type": "string", "format": "date-time"}),
     {"t": "2024-01-02T03:04:05Z"}, []),
    ("format uuid", obj_schema(u={"type": "string", "format": "uuid"}), {"u": "nope"},
     ['u: Invalid value: "nope": u in body must be of type uuid: "nope"']),
    ("format byte", obj_schema(b={"type": "string", "format": "byte"}), {"b": "a$=="},
     ['b: Invalid value: "a$==": b in body must be of type byte: "a$=="']),
    ("unsupported format is stripped", obj_schema(s={"type": "string", "format": "quantity"}),
     {"s": "anything"}, []),
    ("int-or-string format is stripped",
     obj_schema(p={"x-kubernetes-int-or-string": True, "format": "int-or-string"}), {"p": "x"},
     []),
    ("preserve-unknown-fields accepts anything",
     obj_schema(x={"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
     {"x": {"a": [1, {"b": None}]}}, []),
    ("list-type set duplicates",
     obj_schema(s={"type": "array", "x-kubernetes-list-type": "set",
                   "items": {"type": "string"}}), {"s": ["a", "b", "a", "a"]},
     ['s[2]: Duplicate value: "a"']),
    ("list-type set of numbers keeps Go types apart",
     obj_schema(s={"type": "array", "x-kubernetes-list-type": "set",
                   "items": {"type": "number"}}), {"s": [1, 1.0]}, []),
    ("list-type map duplicate single key",
     obj_schema(m={"type": "array", "x-kubernetes-list-type": "map",
                   "x-kubernetes-list-map-keys": ["name"],
                   "items": {"type": "object",
                             "properties": {"name": {"type": "string"}}}}),
     {"m": [{"name": "a"}, {"name": "b"}, {"name": "a"}]},
     ['m[2]: Duplicate value: {"name":"a"}']),
    ("list-type map duplicate composite key",
     obj_schema(m={"type": "array", "x-kubernetes-list-type": "map",
                   "x-kubernetes-list-map-keys": ["port", "protocol"],
                   "items": {"type": "object",
                             "properties": {"port": {"type": "integer"},
                                            "protocol": {"type": "string"}}}}),
     {"m": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"},
            {"port": 80, "protocol": "TCP"}]},
     ['m[2]: Duplicate value: {"port":80,"protocol":"TCP"}']),
    ("list-type map item not an object",
     obj_schema(m={"type": "array", "x-kubernetes-list-type": "map",
                   "x-kubernetes-list-map-keys": ["name"],
                   "items": {"type": "object", "properties": {"name": {"type": "string"}}}}),
     {"m": [{"name": "a"}, "x"]},
     ['m[1]: Invalid value: "string": m[1] in body must be of type object: "string"',
      'm[1]: Invalid value: "x": must be an object for an array of list-type map']),
    ("embedded resource needs apiVersion and kind",
     obj_schema(t={"type": "object", "x-kubernetes-embedded-resource": True,
                   "x-kubernetes-preserve-unknown-fields": True}), {"t": {"metadata": {}}},
     ["t.apiVersion: Required value", "t.kind: Required value"]),
    ("embedded resource kind and metadata checked",
     obj_schema(t={"type": "object", "x-kubernetes-embedded-resource": True,
                   "x-kubernetes-preserve-unknown-fields": True}),
     {"t": {"apiVersion": "a/b/c", "kind": "Foo_Bar",
            "metadata": {"name": "a/b", "labels": {"k": "v v"}}}},
     ['t.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
      ('t.kind: Invalid value: "Foo_Bar": may have mixed case, but should otherwise match: '
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
      "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
      "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"),
      "t.metadata.name: Invalid value: \"a/b\": may not contain '/'",
      ('t.metadata.labels: Invalid value: "v v": a valid label must be an empty string or '
      "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
      "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
      "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")]),
    ("embedded metadata of the wrong type",
     obj_schema(t={"type": "object", "x-kubernetes-embedded-resource": True,
                   "x-kubernetes-preserve-unknown-fields": True}),
     {"t": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": 5}}},
     [('t.metadata: Invalid value: {"name":5}: json: cannot unmarshal number into Go struct '
      'field ObjectMeta.name of type string')]),
]


class ValidateCustomResourceTests(SynchronousTestCase):
    """
    Table tests of L{validate_custom_resource}: each case's errors, in order, as upstream
    prints them (C{field.Error.Error()}).
    """

    def test_cases(self):
        """
        Every case gives exactly its expected errors.
        """
        failures = []
        for name, schema, obj, expected in CASES:
            got = [e.error() for e in validate_custom_resource(obj, schema)]
            if got != expected:
                failures.append((name, got, expected))
        self.assertEqual(failures, [])

    def test_case_count(self):
        """
        The table holds at least 60 cases.
        """
        self.assertGreaterEqual(len(CASES), 60)

    def test_status_prefix(self):
        """
        With a path prefix (the status subresource), field paths are prefixed but
        kube-openapi's text stays relative to the validated value, as upstream.
        """
        schema = obj_schema(replicas={"type": "integer"})
        errs = validate_custom_resource({"replicas": "x"}, schema, "status")
        self.assertEqual([e.error() for e in errs], [
            ('status.replicas: Invalid value: "string": replicas in body must be of type '
            'integer: "string"')])

    def test_cause(self):
        """
        Type errors are C{FieldValueTypeInvalid} causes, enum errors C{FieldValueNotSupported}.
        """
        schema = obj_schema(a={"type": "integer"}, b={"type": "string", "enum": ["x"]})
        errs = validate_custom_resource({"a": "1", "b": "y"}, schema)
        self.assertEqual([e.cause() for e in errs], [
            {"reason": "FieldValueTypeInvalid", "field": "a",
             "message": 'Invalid value: "string": a in body must be of type integer: "string"'},
            {"reason": "FieldValueNotSupported", "field": "b",
             "message": 'Unsupported value: "y": supported values: "x"'},
        ])

    def test_update_tolerates_existing_duplicates(self):
        """
        On update, list-type errors count only if the old object had none.
        """
        schema = obj_schema(s={"type": "array", "x-kubernetes-list-type": "set",
                               "items": {"type": "string"}})
        self.assertEqual(validate_custom_resource_update(
            {"s": ["a", "a", "b"]}, {"s": ["a", "a"]}, schema), [])
        self.assertEqual([e.error() for e in validate_custom_resource_update(
            {"s": ["a", "a"]}, {"s": ["a"]}, schema)], ['s[1]: Duplicate value: "a"'])

    def test_compiled_schema(self):
        """
        L{CompiledSchema.validate} gives the same errors as the module function.
        """
        schema = obj_schema(n={"type": "integer", "maximum": 3})
        c = CompiledSchema(schema)
        self.assertEqual([e.error() for e in c.validate({"n": 4})],
                         ["n: Invalid value: 4: n in body should be less than or equal to 3"])
