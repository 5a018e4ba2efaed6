# -*- test-case-name: tests.runtime.test_gofmt -*-
"""
Tests for L{kubetwist.runtime.gofmt}: Go's text of values (C{strconv.Quote}, C{fmt}'s C{%v},
C{%#v} and C{%T}, C{encoding/json}'s C{Marshal} and C{quoteChar}).  The expected strings are
what Go 1.23 (kube-apiserver v1.32's toolchain) prints.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.runtime import gofmt


class QuoteTests(SynchronousTestCase):
    """L{gofmt.quote} is C{strconv.Quote}."""

    def test_plain(self) -> None:
        """Printable text, non-ASCII included, is kept between double quotes."""
        self.assertEqual(gofmt.quote("héllo 世界 😀"), '"héllo 世界 😀"')
        self.assertEqual(gofmt.quote(""), '""')

    def test_quote_and_backslash(self) -> None:
        """C{"} and C{\\} are backslash-escaped; C{'} is not."""
        self.assertEqual(gofmt.quote('a"b\\c\'d'), '"a\\"b\\\\c\'d"')

    def test_short_escapes(self) -> None:
        """The seven control characters with a C escape use it."""
        self.assertEqual(gofmt.quote("\a\b\f\n\r\t\v"), '"\\a\\b\\f\\n\\r\\t\\v"')

    def test_other_controls(self) -> None:
        """Other ASCII controls and DEL are C{\\xNN}."""
        self.assertEqual(gofmt.quote("\x00\x01\x1b\x7f"), '"\\x00\\x01\\x1b\\x7f"')

    def test_non_printable_runes(self) -> None:
        """Non-ASCII runes that are not graphic (C1 controls, spaces other than U+0020,
        format characters) are C{\\uNNNN} or C{\\UNNNNNNNN}."""
        self.assertEqual(gofmt.quote("\u0085\u00a0\u200b\u2028"),
                         '"\\u0085\\u00a0\\u200b\\u2028"')
        self.assertEqual(gofmt.quote("\U000e0001"), '"\\U000e0001"')

    def test_lone_surrogate(self) -> None:
        """A lone surrogate (decoded from JSON's C{\\ud800}) is U+FFFD, as Go decodes it."""
        self.assertEqual(gofmt.quote("a\ud800"), '"a\ufffd"')

    def test_quote_char(self) -> None:
        """C{encoding/json}'s C{quoteChar}: single quotes, C{'} escaped, C{"} bare."""
        self.assertEqual([gofmt.quote_char(c) for c in ("x", "'", '"', "\n", "\x01", "\\")],
                         ["'x'", "'\\''", "'\"'", "'\\n'", "'\\x01'", "'\\\\'"])


class SliceTests(SynchronousTestCase):
    """L{gofmt.string_slice} is C{%#v} of a string slice."""

    def test_nil_empty_and_values(self) -> None:
        """nil, empty, and elements quoted as C{%q}, joined by C{", "}."""
        self.assertEqual(gofmt.string_slice(None), "[]string(nil)")
        self.assertEqual(gofmt.string_slice([]), "[]string{}")
        self.assertEqual(gofmt.string_slice(["a", 'b"\n']), '[]string{"a", "b\\"\\n"}')

    def test_named_element_type(self) -> None:
        """The element type's name is the caller's (C{core.Protocol})."""
        self.assertEqual(gofmt.string_slice(["TCP"], "core.Protocol"),
                         '[]core.Protocol{"TCP"}')


class FloatTests(SynchronousTestCase):
    """L{gofmt.format_float} (C{%v}) and L{gofmt.json_float} (C{encoding/json})."""

    def test_format_float(self) -> None:
        """C{%v}: shortest digits, exponent form below 1e-4 and from 1e6 up."""
        cases = {3.0: "3", 0.5: "0.5", -2.5: "-2.5", 123456.0: "123456",
                 1234567.0: "1.234567e+06", 1e6: "1e+06", 0.0001: "0.0001", 1e-05: "1e-05",
                 1.5e-10: "1.5e-10", 1e21: "1e+21", 1e100: "1e+100", 0.1 + 0.2:
                 "0.30000000000000004", 0.0: "0"}
        self.assertEqual({f: gofmt.format_float(f) for f in cases}, cases)
        self.assertEqual(gofmt.format_float(-0.0), "-0")
        self.assertEqual([gofmt.format_float(f) for f in (float("nan"), float("inf"),
                                                          float("-inf"))],
                         ["NaN", "+Inf", "-Inf"])

    def test_json_float(self) -> None:
        """C{encoding/json}: fixed notation in [1e-6, 1e21), else C{e-7} / C{e+21}."""
        cases = {3.0: "3", 1e16: "10000000000000000", 0.000001: "0.000001", 1e-7: "1e-7",
                 1.5e-10: "1.5e-10", 1e21: "1e+21", 1.25e22: "1.25e+22", -0.5: "-0.5"}
        self.assertEqual({f: gofmt.json_float(f) for f in cases}, cases)

    def test_json_float_refuses_nan(self) -> None:
        """NaN has no JSON text (C{json: unsupported value: NaN})."""
        self.assertRaises(ValueError, gofmt.json_float, float("nan"))


class MarshalTests(SynchronousTestCase):
    """L{gofmt.marshal} is C{json.Marshal}."""

    def test_compact_sorted_html_safe(self) -> None:
        """Compact; map keys sorted on request; C{<>&} and U+2028/9 escaped."""
        self.assertEqual(
            gofmt.marshal({"b": "<&>\u2028", "a": [1, 2.5, None, True, False]}, sort_keys=True),
            '{"a":[1,2.5,null,true,false],"b":"\\u003c\\u0026\\u003e\\u2028"}')

    def test_struct_order(self) -> None:
        """Without C{sort_keys} the dict's order is kept (a struct's field order)."""
        self.assertEqual(gofmt.marshal({"b": 1, "a": {"d": 1e-7, "c": "é"}}),
                         '{"b":1,"a":{"d":1e-7,"c":"é"}}')

    def test_controls(self) -> None:
        """Control characters as Go writes them since 1.22 (C{\\b} C{\\f} short)."""
        self.assertEqual(gofmt.marshal("\x01\b\f\n\t\"\\"), '"\\u0001\\b\\f\\n\\t\\"\\\\"')

    def test_without_html_escaping(self) -> None:
        """C{escape_html=False} is an Encoder with C{SetEscapeHTML(false)}."""
        self.assertEqual(gofmt.marshal(["<a&b>"], escape_html=False), '["<a&b>"]')

    def test_unsupported(self) -> None:
        """A value JSON cannot hold is a TypeError."""
        self.assertRaises(TypeError, gofmt.marshal, object())


class SprintTests(SynchronousTestCase):
    """L{gofmt.sprint} (C{%v}), L{gofmt.type_name} (C{%T}) and L{gofmt.json_kind}."""

    def test_sprint(self) -> None:
        """Maps with sorted keys, slices space-separated, strings bare, C{<nil>}."""
        self.assertEqual(
            gofmt.sprint({"spec": {"b": [1, "x", None], "a": True, "f": 1.5, "g": 2.0,
                                   "h": 1e6}}),
            "map[spec:map[a:true b:[1 x <nil>] f:1.5 g:2 h:1e+06]]")

    def test_sprint_float64_numbers(self) -> None:
        """With C{ints_as_float} (plain C{encoding/json}), integers print as float64s."""
        self.assertEqual(gofmt.sprint([3, 1000000, False], ints_as_float=True),
                         "[3 1e+06 false]")
        self.assertEqual(gofmt.sprint([3, 1000000]), "[3 1000000]")

    def test_type_name(self) -> None:
        """C{%T} of the values an C{interface{}} holds after decoding."""
        values = [None, True, 1, 1.5, "s", [1], {"a": 1}]
        self.assertEqual([gofmt.type_name(v) for v in values],
                         ["<nil>", "bool", "int64", "float64", "string", "[]interface {}",
                          "map[string]interface {}"])
        self.assertEqual(gofmt.type_name(1, ints_as_float=True), "float64")

    def test_json_kind(self) -> None:
        """The JSON kinds C{UnmarshalTypeError} names."""
        values = [None, False, 1, 1.5, "s", [], {}]
        self.assertEqual([gofmt.json_kind(v) for v in values],
                         ["null", "bool", "number", "number", "string", "array", "object"])


class UsersTests(SynchronousTestCase):
    """The modules that print Go values do it through L{gofmt}."""

    def test_field_errors_quote_as_go(self) -> None:
        """A field error's string value is C{%q}: a control character prints as Go does."""
        from kubetwist.runtime import field

        err = field.invalid("metadata.name", "a\x07b", "bad")
        self.assertEqual(err.body(), 'Invalid value: "a\\ab": bad')
        self.assertEqual(field.not_supported("spec.x", "y", ["A", "B\n"]).detail,
                         'supported values: "A", "B\\n"')
        self.assertIs(field.go_quote, gofmt.quote)

    def test_json_syntax_error_names_char_as_go(self) -> None:
        """A JSON syntax error on a control character names it as C{quoteChar} does."""
        from kubetwist.runtime import codec

        self.assertIs(codec._go_char, gofmt.quote_char)


class MapTests(SynchronousTestCase):
    """L{gofmt.string_map} is C{%#v} of a C{map[string]string}."""

    def test_nil_empty_and_sorted(self) -> None:
        self.assertEqual(gofmt.string_map(None), "map[string]string(nil)")
        self.assertEqual(gofmt.string_map({}), "map[string]string{}")
        self.assertEqual(gofmt.string_map({"b": "2", "a": 'x"\n'}),
                         'map[string]string{"a":"x\\"\\n", "b":"2"}')
