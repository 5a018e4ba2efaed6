"""Field errors print values as upstream (Go's %v / %q)."""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.runtime import field
from kubetwist.runtime.field import go_float


class GoFloatTests(SynchronousTestCase):
    def test_go_float_formatting(self):
        """Floats print as strconv.FormatFloat(f, 'g', -1, 64)."""
        cases = {3.0: "3", 2000000.0: "2e+06", 0.5: "0.5", 123456.0: "123456",
                 1234567.0: "1.234567e+06", 0.00001: "1e-05", 0.0001: "0.0001",
                 -2.5: "-2.5", 1.5e300: "1.5e+300", 0.0: "0"}
        for value, text in cases.items():
            self.assertEqual(go_float(value), text, value)

    def test_invalid_float_value_message(self):
        """An Invalid error with a float bad value prints it Go-style."""
        e = field.invalid("spec.x", 3.0, "must be an integer")
        self.assertEqual(e.error(), "spec.x: Invalid value: 3: must be an integer")

    def test_strings_quoted(self):
        """Strings are quoted as Go's %q."""
        e = field.invalid("a", 'x"y', "d")
        self.assertEqual(e.error(), 'a: Invalid value: "x\\"y": d')


class GoStringSliceTests(SynchronousTestCase):
    def test_go_string_slice(self):
        """[]string prints as Go's %#v: quoted elements, nil as []string(nil)."""
        from kubetwist.runtime.field import go_string_slice

        self.assertEqual(go_string_slice(["a", 'b"c']), '[]string{"a", "b\\"c"}')
        self.assertEqual(go_string_slice([]), "[]string{}")
        self.assertEqual(go_string_slice(None), "[]string(nil)")

    def test_negative_zero(self):
        """-0.0 prints as Go's %v does: -0."""
        self.assertEqual(go_float(-0.0), "-0")


class GoQuoteAndMarshalTests(SynchronousTestCase):
    def test_quote(self):
        """strconv.Quote: backslash escapes for quotes, backslashes and control characters,
        C{\\xNN} for the other ASCII controls; non-ASCII text kept."""
        self.assertEqual(field.go_quote('a"b\\c\n\t\r\x01\x7fé'),
                         '"a\\"b\\\\c\\n\\t\\r\\x01\\x7fé"')

    def test_marshal(self):
        """json.Marshal: compact, HTML-safe escapes and U+2028/U+2029; keys sorted only for
        maps (sort_keys), else in the dict's (Go struct field) order."""
        value = {"b": "<&>\u2028", "a": [1, None]}
        self.assertEqual(field.go_marshal(value),
                         '{"b":"\\u003c\\u0026\\u003e\\u2028","a":[1,null]}')
        self.assertEqual(field.go_marshal(value, sort_keys=True),
                         '{"a":[1,null],"b":"\\u003c\\u0026\\u003e\\u2028"}')


class PathTests(SynchronousTestCase):
    def test_empty_name_prints_as_subscript(self):
        """Upstream C{field.NewPath("")} prints C{[]} (a nameless element is printed as its
        empty subscript); kube-apiserver shows it for whole-object errors such as a too-large
        ConfigMap or a static pod that cannot be resized."""
        self.assertEqual(str(field.Path("")), "[]")
        self.assertEqual(str(field.Path("spec").child("containers").index(0)),
                         "spec.containers[0]")
        self.assertEqual(str(field.Path()), "")
        self.assertEqual(field.forbidden(field.Path(""), "x").field, "[]")
