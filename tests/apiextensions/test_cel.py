# -*- test-case-name: tests.apiextensions.test_cel -*-
"""
Tests for L{kubetwist.apiextensions.schema.cel}: CRD validation rules, with messages checked
against upstream's C{apiextensions-apiserver/pkg/apiserver/schema/cel/validation_test.go}
and C{pkg/apis/apiextensions/validation/validation_test.go}.
"""

from __future__ import annotations

import typing

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apiextensions.schema.cel import (
    CELValidator,
    compile_rules,
    escape,
    rule_errors,
    valid_field_path,
)
from kubetwist.runtime.field import Path

ROOT = Path("spec", "validation", "openAPIV3Schema")


def crd(spec: dict, **root_extra) -> dict:
    """A root schema with C{spec} as given."""
    return {"type": "object", "properties": {"spec": spec}, **root_extra}


def rules(*rs, **schema) -> dict:
    """A schema node carrying rules (strings or full rule dicts)."""
    out = dict(schema)
    out["x-kubernetes-validations"] = [r if isinstance(r, dict) else {"rule": r} for r in rs]
    return out


def messages(errors) -> list[str]:
    return [e.error() for e in errors]


class ScalarRuleTests(SynchronousTestCase):
    """Rules whose C{self} is a scalar."""

    def check(self, schema: dict, value, expected: list[str], old=None) -> None:
        v = CELValidator(crd({"type": "object", "properties": {"x": schema}}))
        obj = {"spec": {"x": value}}
        old_obj = None if old is None else {"spec": {"x": old}}
        self.assertEqual(messages(v.validate(obj, old_obj)), expected)

    def test_string_passes(self):
        """A rule that holds produces no error."""
        self.check(rules("self.startsWith('a')", type="string"), "abc", [])

    def test_string_fails_default_message(self):
        """A failing rule without message says C{failed rule: <rule>}; the value is the type."""
        self.check(rules("self.startsWith('a')", type="string"), "xyz",
                   ['spec.x: Invalid value: "string": failed rule: self.startsWith(\'a\')'])

    def test_integer_message(self):
        """The rule's C{message} replaces the default detail, trimmed."""
        self.check(rules({"rule": "self > 0", "message": "  must be positive "},
                         type="integer"), -1,
                   ['spec.x: Invalid value: "integer": must be positive'])

    def test_number_int_value(self):
        """A JSON integer in a C{number} field is a double to CEL."""
        self.check(rules("self > 1.5", type="number"), 2, [])
        self.check(rules("self > 1.5", type="number"), 1,
                   ['spec.x: Invalid value: "number": failed rule: self > 1.5'])

    def test_string_library(self):
        """Kubernetes string functions (strings extension version 2) are available."""
        schema = rules("self.lowerAscii().split('-').size() == 2 && self.indexOf('-') == 3",
                       type="string")
        self.check(schema, "ABC-def", [])
        self.check(schema, "AB-def", [
            'spec.x: Invalid value: "string": failed rule: '
            "self.lowerAscii().split('-').size() == 2 && self.indexOf('-') == 3"])

    def test_quantity_and_url(self):
        """C{quantity()} and C{url()} of the Kubernetes libraries work."""
        self.check(rules("quantity(self).isLessThan(quantity('1Gi'))", type="string"),
                   "512Mi", [])
        self.check(rules("url(self).getHostname() == 'example.com'", type="string"),
                   "https://example.com:8443/x", [])

    def test_date_time_is_timestamp(self):
        """A C{date-time} string is a timestamp; C{duration} a duration."""
        self.check(rules("self > timestamp('2020-01-01T00:00:00Z')", type="string",
                         format="date-time"), "2021-05-01T10:00:00Z", [])
        self.check(rules("self < duration('1h')", type="string", format="duration"), "90m",
                   ['spec.x: Invalid value: "string": failed rule: self < duration(\'1h\')'])

    def test_int_or_string(self):
        """int-or-string values are dyn: both forms reach the rule."""
        schema = rules("type(self) == string ? self.endsWith('%') : self >= 0",
                       **{"x-kubernetes-int-or-string": True})
        self.check(schema, "50%", [])
        self.check(schema, 3, [])
        self.check(schema, -1, ['spec.x: Invalid value: "": failed rule: '
                                "type(self) == string ? self.endsWith('%') : self >= 0"])

    def test_int_or_string_no_such_overload(self):
        """A runtime type mismatch is reported as upstream's no-such-overload message."""
        self.check(rules("self > 2", **{"x-kubernetes-int-or-string": True}), "abc",
                   ['spec.x: Invalid value: "": \'no such overload\': call arguments did not '
                    "match a supported operator, function or macro signature for rule: "
                    "self > 2"])


class ObjectRuleTests(SynchronousTestCase):
    """Rules on objects, lists and maps."""

    def test_object_rule(self):
        """A failing rule on an object prints C{"object"} as the value."""
        v = CELValidator(crd(rules(
            {"rule": "self.minReplicas <= self.maxReplicas",
             "message": "minReplicas must be <= maxReplicas"},
            type="object", properties={"minReplicas": {"type": "integer"},
                                       "maxReplicas": {"type": "integer"}})))
        self.assertEqual(
            messages(v.validate({"spec": {"minReplicas": 3, "maxReplicas": 1}})),
            ['spec: Invalid value: "object": minReplicas must be <= maxReplicas'])

    def test_has(self):
        """C{has()} tests presence of an optional field."""
        v = CELValidator(crd(rules("has(self.a) || has(self.b)", type="object",
                                   properties={"a": {"type": "string"},
                                               "b": {"type": "string"}})))
        self.assertEqual(v.validate({"spec": {"b": "x"}}), [])
        self.assertEqual(messages(v.validate({"spec": {}})),
                         ['spec: Invalid value: "object": failed rule: '
                          "has(self.a) || has(self.b)"])

    def test_no_such_key(self):
        """Reading an absent field is an evaluation error, as cel-go's C{no such key}."""
        v = CELValidator(crd(rules("self.a == 'x'", type="object",
                                   properties={"a": {"type": "string"}})))
        self.assertEqual(messages(v.validate({"spec": {}})),
                         ['spec: Invalid value: "object": no such key: a evaluating rule: '
                          "self.a == 'x'"])

    def test_root_rule(self):
        """A rule on the root sees apiVersion, kind and metadata.name; its path is <nil>."""
        schema = rules("self.metadata.name.startsWith('ok-') && self.kind == 'Foo'",
                       type="object", properties={"spec": {"type": "object"}})
        v = CELValidator(schema)
        obj = {"apiVersion": "x/v1", "kind": "Foo", "metadata": {"name": "bad"}, "spec": {}}
        self.assertEqual(messages(v.validate(obj)), [
            '<nil>: Invalid value: "object": failed rule: '
            "self.metadata.name.startsWith('ok-') && self.kind == 'Foo'"])

    def test_list_items_each_validated(self):
        """A rule on list items runs for every element, at its index."""
        v = CELValidator(crd({"type": "object", "properties": {"l": {
            "type": "array", "items": rules("self.size() < 3", type="string")}}}))
        self.assertEqual(messages(v.validate({"spec": {"l": ["a", "abcd", "b", "xyz"]}})), [
            'spec.l[1]: Invalid value: "string": failed rule: self.size() < 3',
            'spec.l[3]: Invalid value: "string": failed rule: self.size() < 3'])

    def test_list_macros(self):
        """all, exists, exists_one, map and filter over a list."""
        v = CELValidator(crd({"type": "object", "properties": {"l": rules(
            "self.all(i, i > 0)", "self.exists(i, i == 2)", "self.exists_one(i, i == 3)",
            "self.map(i, i * 2).filter(j, j > 4).size() == 1",
            type="array", items={"type": "integer"})}}))
        self.assertEqual(v.validate({"spec": {"l": [1, 2, 3]}}), [])
        self.assertEqual(len(v.validate({"spec": {"l": [3, 3, -1]}})), 4)

    def test_list_library(self):
        """The Kubernetes list library: isSorted, sum, min, max, indexOf."""
        v = CELValidator(crd({"type": "object", "properties": {"l": rules(
            "self.isSorted() && self.sum() == 6 && self.min() == 1 && self.max() == 3 "
            "&& self.indexOf(2) == 1", type="array", items={"type": "integer"})}}))
        self.assertEqual(v.validate({"spec": {"l": [1, 2, 3]}}), [])
        self.assertEqual(len(v.validate({"spec": {"l": [3, 2, 1]}})), 1)

    def test_map_values(self):
        """A rule on additionalProperties runs per value, at its key."""
        v = CELValidator(crd({"type": "object", "properties": {"m": {
            "type": "object", "additionalProperties": rules("self >= 0", type="integer")}}}))
        self.assertEqual(messages(v.validate({"spec": {"m": {"a": 1, "b": -1}}})),
                         ['spec.m[b]: Invalid value: "integer": failed rule: self >= 0'])

    def test_map_self(self):
        """A rule on the map itself indexes by key."""
        v = CELValidator(crd({"type": "object", "properties": {"m": rules(
            "'a' in self && self['a'] == 'x'", type="object",
            additionalProperties={"type": "string"})}}))
        self.assertEqual(v.validate({"spec": {"m": {"a": "x"}}}), [])
        self.assertEqual(len(v.validate({"spec": {"m": {"b": "x"}}})), 1)

    def test_nested_list_of_maps_with_keys(self):
        """Rules deep inside a map list of objects report the full path."""
        item = {"type": "object", "properties": {
            "name": {"type": "string"},
            "ports": {"type": "array", "items": rules(
                {"rule": "self.port < 65536", "message": "port too large"},
                type="object", properties={"port": {"type": "integer"}})}}}
        v = CELValidator(crd({"type": "object", "properties": {"containers": {
            "type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"], "items": item}}}))
        obj = {"spec": {"containers": [{"name": "a", "ports": [{"port": 80}]},
                                       {"name": "b", "ports": [{"port": 1}, {"port": 70000}]}]}}
        self.assertEqual(messages(v.validate(obj)),
                         ['spec.containers[1].ports[1]: Invalid value: "object": port too large'])

    def test_escaped_property(self):
        """Property names that are CEL keywords or contain dashes are escaped."""
        v = CELValidator(crd(rules("self.__namespace__ == self.__dash__x", type="object",
                                   properties={"namespace": {"type": "string"},
                                               "-x": {"type": "string"}})))
        self.assertEqual(v.validate({"spec": {"namespace": "a", "-x": "a"}}), [])
        self.assertEqual(len(v.validate({"spec": {"namespace": "a", "-x": "b"}})), 1)

    def test_null_not_validated(self):
        """Rules are not evaluated for null or absent values."""
        v = CELValidator(crd({"type": "object", "properties": {"x": rules(
            "self == 'never'", type="string", nullable=True)}}))
        self.assertEqual(v.validate({"spec": {"x": None}}), [])
        self.assertEqual(v.validate({"spec": {}}), [])


class TransitionRuleTests(SynchronousTestCase):
    """Rules using C{oldSelf}."""

    immutable: typing.ClassVar[dict] = {"type": "object", "properties": {"name": rules(
        {"rule": "self == oldSelf", "message": "Value is immutable"}, type="string")}}

    def test_immutable(self):
        """C{self == oldSelf} with message C{Value is immutable} refuses a change."""
        v = CELValidator(crd(self.immutable))
        self.assertEqual(messages(v.validate({"spec": {"name": "b"}}, {"spec": {"name": "a"}})),
                         ['spec.name: Invalid value: "string": Value is immutable'])
        self.assertEqual(v.validate({"spec": {"name": "a"}}, {"spec": {"name": "a"}}), [])

    def test_not_on_create(self):
        """Transition rules are skipped on create and where the old value is absent."""
        v = CELValidator(crd(self.immutable))
        self.assertEqual(v.validate({"spec": {"name": "b"}}, None), [])
        self.assertEqual(v.validate({"spec": {"name": "b"}}, {"spec": {}}), [])

    def test_map_list_correlated_by_key(self):
        """Items of a map list correlate with old items by key, not by index."""
        items = {"type": "object", "properties": {
            "k": {"type": "string"},
            "v": rules({"rule": "self >= oldSelf", "messageExpression":
                        "'may only grow, was ' + string(oldSelf)"}, type="integer")}}
        v = CELValidator(crd({"type": "object", "properties": {"l": {
            "type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["k"], "items": items}}}))
        old = {"spec": {"l": [{"k": "a", "v": 5}, {"k": "b", "v": 1}]}}
        new = {"spec": {"l": [{"k": "b", "v": 2}, {"k": "a", "v": 4}, {"k": "c", "v": 0}]}}
        self.assertEqual(messages(v.validate(new, old)),
                         ['spec.l[1].v: Invalid value: "integer": may only grow, was 5'])

    def test_atomic_list_not_correlated(self):
        """Items of an atomic list never see an oldSelf."""
        v = CELValidator(crd({"type": "object", "properties": {"l": {
            "type": "array", "items": rules("self == oldSelf", type="string")}}}))
        self.assertEqual(v.validate({"spec": {"l": ["x"]}}, {"spec": {"l": ["y"]}}), [])

    def test_map_correlated_by_key(self):
        """additionalProperties values correlate by key."""
        v = CELValidator(crd({"type": "object", "properties": {"m": {
            "type": "object", "additionalProperties": rules("self == oldSelf",
                                                            type="string")}}}))
        self.assertEqual(
            messages(v.validate({"spec": {"m": {"a": "1", "b": "2"}}},
                                {"spec": {"m": {"a": "0"}}})),
            ['spec.m[a]: Invalid value: "string": failed rule: self == oldSelf'])

    def test_optional_old_self(self):
        """With optionalOldSelf the rule runs on create too, oldSelf being optional."""
        v = CELValidator(crd({"type": "object", "properties": {"x": rules(
            {"rule": "!oldSelf.hasValue() || self >= oldSelf.value()",
             "optionalOldSelf": True},
            {"rule": "oldSelf.orValue('') != 'locked'", "optionalOldSelf": True},
            type="string")}}))
        self.assertEqual(v.validate({"spec": {"x": "a"}}, None), [])
        self.assertEqual(messages(v.validate({"spec": {"x": "a"}}, {"spec": {"x": "b"}})), [
            'spec.x: Invalid value: "string": failed rule: '
            "!oldSelf.hasValue() || self >= oldSelf.value()"])
        self.assertEqual(messages(v.validate({"spec": {"x": "z"}}, {"spec": {"x": "locked"}})),
                         ['spec.x: Invalid value: "string": failed rule: '
                          "oldSelf.orValue('') != 'locked'"])

    def test_ratcheting_warns_unchanged(self):
        """With a warnings list, failures on unchanged values become warnings."""
        v = CELValidator(crd({"type": "object", "properties": {"x": rules(
            "self.size() > 3", type="string")}}))
        warnings: list[str] = []
        errors = v.validate({"spec": {"x": "ab"}}, {"spec": {"x": "ab"}}, warnings=warnings)
        self.assertEqual((errors, warnings), (
            [], ['spec.x: Invalid value: "string": failed rule: self.size() > 3']))
        self.assertEqual(len(v.validate({"spec": {"x": "ac"}}, {"spec": {"x": "ab"}},
                                        warnings=[])), 1)


class MessageReasonFieldPathTests(SynchronousTestCase):
    """messageExpression, reason and fieldPath."""

    def validate(self, rule: dict, value: dict) -> list[str]:
        v = CELValidator(crd(rules(rule, type="object", properties={
            "a": {"type": "string"},
            "m": {"type": "object", "additionalProperties": {"type": "string"}}})))
        return messages(v.validate({"spec": value}))

    def test_message_expression(self):
        """messageExpression's result is the detail, and takes precedence over message."""
        self.assertEqual(self.validate({"rule": "self.a == 'x'", "message": "invisible",
                                        "messageExpression": "'a is ' + self.a"}, {"a": "y"}),
                         ['spec: Invalid value: "object": a is y'])

    def test_message_expression_empty_falls_back(self):
        """An empty messageExpression result falls back to message."""
        self.assertEqual(self.validate({"rule": "self.a == 'x'", "message": "fallback",
                                        "messageExpression": "'  '"}, {"a": "y"}),
                         ['spec: Invalid value: "object": fallback'])

    def test_reason_forbidden(self):
        """reason FieldValueForbidden makes a Forbidden error with the message."""
        self.assertEqual(self.validate({"rule": "!has(self.a)", "message": "no a",
                                        "reason": "FieldValueForbidden"}, {"a": "y"}),
                         ["spec: Forbidden: no a"])

    def test_reason_required(self):
        """reason FieldValueRequired makes a Required error; cause type follows."""
        v = CELValidator(crd(rules({"rule": "has(self.a)", "message": "a needed",
                                    "reason": "FieldValueRequired"}, type="object",
                                   properties={"a": {"type": "string"}})))
        (err,) = v.validate({"spec": {}})
        self.assertEqual((err.error(), err.cause_type),
                         ("spec: Required value: a needed", "FieldValueRequired"))

    def test_field_path(self):
        """fieldPath moves the error to the named field, normalized."""
        self.assertEqual(self.validate({"rule": "self.a == 'x'", "fieldPath": ".a"},
                                       {"a": "y"}),
                         ['spec.a: Invalid value: "object": failed rule: self.a == \'x\''])
        self.assertEqual(self.validate({"rule": "false", "fieldPath": ".m['k.1']"}, {}),
                         ['spec.m[k.1]: Invalid value: "object": failed rule: false'])

    def test_valid_field_path(self):
        """ValidFieldPath refuses unknown fields and bad syntax."""
        schema = {"type": "object", "properties": {"a": {"type": "object", "properties": {
            "b": {"type": "string"}}}}}
        self.assertEqual(valid_field_path(".a['b']", schema), "a.b")
        for bad in (".c", "a", ".a[b]", ".a."):
            self.assertRaises(ValueError, valid_field_path, bad, schema)


class CostTests(SynchronousTestCase):
    """Runtime cost limits."""

    def test_per_call_limit(self):
        """A rule costing more than the per-call limit stops validation."""
        v = CELValidator(crd({"type": "object", "properties": {"l": rules(
            "self.all(a, self.all(b, a != b || a == b))", "self.size() < 0",
            type="array", items={"type": "integer"})}}), per_call_limit=10000)
        errors = messages(v.validate({"spec": {"l": list(range(200))}}))
        self.assertEqual(errors, [
            "spec.l: Invalid value: \"array\": 'operation cancelled: actual cost limit "
            "exceeded': no further validation rules will be run due to call cost exceeds "
            "limit for rule: self.all(a, self.all(b, a != b || a == b))"])

    def test_budget_exhausted(self):
        """Once the per-object budget is spent, one error says so and validation stops."""
        v = CELValidator(crd({"type": "object", "properties": {"l": {
            "type": "array", "items": rules("self.size() < 100", type="string")}}}))
        errors = messages(v.validate({"spec": {"l": ["a"] * 10}}, budget=12))
        self.assertEqual(errors, [
            'spec.l[4]: Invalid value: "string": validation failed due to running out of '
            "cost budget, no further validation rules will be run"])

    def test_message_expression_budget(self):
        """A messageExpression beyond the remaining budget ends validation."""
        v = CELValidator(crd(rules({"rule": "false", "messageExpression":
                                    "'string 1' + 'string 2' + 'string 3'"}, type="object")))
        self.assertEqual(messages(v.validate({"spec": {}}, budget=1)), [
            'spec: Invalid value: "object": messageExpression evaluation failed due to '
            "running out of cost budget, no further validation rules will be run"])


class CompileRulesTests(SynchronousTestCase):
    """CRD-time compilation: L{compile_rules}."""

    def test_valid(self):
        """Valid rules give no errors."""
        self.assertEqual(compile_rules(crd(rules(
            "self.a == 'x'", type="object", properties={"a": {"type": "string",
                                                              "maxLength": 10}})), ROOT), [])

    def test_syntax_error(self):
        """A syntax error is reported with cel-go's issue text and the Go rule struct."""
        (err,) = compile_rules(crd(rules("self ==", type="object")), ROOT)
        self.assertEqual(err.error(), (
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule:"
            ' Invalid value: apiextensions.ValidationRule{Rule:"self ==", Message:"", '
            'MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
            'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: '
            "<input>:1:8: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', "
            "'.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, "
            "BYTES, IDENTIFIER}\n | self ==\n | .......^"))

    def test_undefined_field(self):
        """A field the schema does not declare is an undefined field, as upstream."""
        rule = "self.type != 'secret' || has(self.namespace)"
        (err,) = compile_rules(crd(rules(rule, type="object", properties={
            "type": {"type": "string"}})), ROOT)
        self.assertTrue(err.error().endswith(
            "compilation failed: ERROR: <input>:1:29: undefined field 'namespace'\n"
            f" | {rule}\n | {'.' * 28}^"), err.error())

    def test_not_bool(self):
        """A rule must evaluate to a bool."""
        (err,) = compile_rules(crd(rules("self.a", type="object", properties={
            "a": {"type": "string"}})), ROOT)
        self.assertTrue(err.error().endswith(": cel expression must evaluate to a bool"))

    def test_message_expression_not_string(self):
        """A messageExpression must evaluate to a string."""
        (err,) = compile_rules(crd(rules({"rule": "true", "messageExpression": "1"},
                                         type="object")), ROOT)
        self.assertEqual(err.field, "spec.validation.openAPIV3Schema.properties[spec]."
                                    "x-kubernetes-validations[0].messageExpression")
        self.assertTrue(err.error().endswith(": messageExpression must evaluate to a string"))

    def test_old_self_uncorrelatable(self):
        """oldSelf under an atomic list is refused, naming the list."""
        errs = compile_rules(crd({"type": "object", "properties": {"l": {
            "type": "array", "maxItems": 10,
            "items": rules("self == oldSelf", type="string", maxLength=10)}}}), ROOT)
        self.assertEqual(messages(errs), [
            "spec.validation.openAPIV3Schema.properties[spec].properties[l].items."
            'x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf '
            "cannot be used on the uncorrelatable portion of the schema within "
            "spec.validation.openAPIV3Schema.properties[spec].properties[l]"])

    def test_optional_old_self_unused(self):
        """optionalOldSelf on a rule that does not use oldSelf is refused."""
        errs = compile_rules(crd(rules({"rule": "true", "optionalOldSelf": True},
                                       type="object")), ROOT)
        self.assertEqual(messages(errs), [
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]."
            "optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in "
            "rule"])

    def test_estimated_cost_exceeded(self):
        """An unbounded quadratic rule exceeds the static cost limit."""
        errs = messages(compile_rules(crd({"type": "object", "properties": {"l": rules(
            "self.all(a, self.all(b, a == b))", type="array",
            items={"type": "string"})}}), ROOT))
        self.assertIn(
            "spec.validation.openAPIV3Schema.properties[spec].properties[l]."
            "x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget "
            "by factor of more than 100x (try simplifying the rule, or adding maxItems, "
            "maxProperties, and maxLength where arrays, maps, and strings are declared)", errs)

    def test_bounded_cost_accepted(self):
        """maxItems and maxLength bring the same rule within the limit."""
        self.assertEqual(compile_rules(crd({"type": "object", "properties": {"l": rules(
            "self.all(a, self.all(b, a == b))", type="array", maxItems=10,
            items={"type": "string", "maxLength": 10})}}), ROOT), [])

    def test_rule_errors(self):
        """The per-rule field checks made before compiling."""
        errs = rule_errors([{"rule": " "}, {"rule": "a\nb"}, {"rule": "x", "reason": "Bad"}],
                           {"type": "object"}, Path("s"))
        self.assertEqual(messages(errs), [
            "s.x-kubernetes-validations[0].rule: Required value: rule is not specified",
            "s.x-kubernetes-validations[1].message: Required value: message must be "
            "specified if rule contains line breaks",
            's.x-kubernetes-validations[2].reason: Unsupported value: "Bad": supported values: '
            '"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", '
            '"FieldValueRequired"'])

    def test_runtime_compile_error(self):
        """A stored CRD with a broken rule reports it on every object."""
        v = CELValidator(crd(rules("self.a ==", type="object")))
        (err,) = v.validate({"spec": {}})
        self.assertTrue(err.error().startswith(
            'spec: Invalid value: "object": rule compile error: compilation failed: ERROR:'))

    def test_escape(self):
        """Upstream's escaping of property names."""
        self.assertEqual([escape(n) for n in ("a", "namespace", "a-b", "a.b", "a/b", "a__b",
                                              "1a", "a b")],
                         ["a", "__namespace__", "a__dash__b", "a__dot__b", "a__slash__b",
                          "a__underscores__b", None, None])
