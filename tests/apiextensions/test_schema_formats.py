# -*- test-case-name: tests.apiextensions.test_schema_formats -*-
"""
Tests for L{kubetwist.apiextensions.schema.formats} and L{kubetwist.apiextensions.schema.gofmt}:
kube-openapi's C{strfmt} validators, the v1.32 format stripping, Go RE2 patterns and Go's
value printing.
"""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apiextensions.schema.formats import (
    GoRegexpError,
    compile_go_regexp,
    effective_format,
    format_validator,
)
from kubetwist.apiextensions.schema.gofmt import enum_equal, go_float, go_json

# (format, valid values, invalid values)
FORMATS = [
    ("date-time", ["2024-01-02T03:04:05Z", "2024-01-02T03:04:05.123+01:00",
                   "2024-01-02t03:04:05z"],
     ["2024-01-02", "2024-13-02T03:04:05Z", "2024-01-02T24:00:00Z", "now"]),
    ("date", ["2024-02-29"], ["2023-02-29", "2024-1-2", "02-01-2024"]),
    ("uuid", ["123e4567-e89b-12d3-a456-426614174000", "123E4567E89B12D3A456426614174000"],
     ["123e4567-e89b-12d3-a456", "g23e4567-e89b-12d3-a456-426614174000"]),
    ("uuid4", ["123e4567-e89b-42d3-a456-426614174000"],
     ["123e4567-e89b-12d3-a456-426614174000"]),
    ("byte", ["aGVsbG8=", "YWJj"], ["", "a$==", "abc"]),
    ("ipv4", ["10.0.0.1", "010.000.000.001"], ["10.0.0", "::1"]),
    ("ipv6", ["::1", "fe80::1"], ["10.0.0.1", "fe80::1%eth0"]),
    ("cidr", ["10.0.0.0/8", "fd00::/64"], ["10.0.0.0", "10.0.0.0/33"]),
    ("mac", ["00:1a:2b:3c:4d:5e", "00-1A-2B-3C-4D-5E", "001a.2b3c.4d5e"], ["00:1a:2b"]),
    ("hostname", ["example.com", "a"], ["-bad-.com", "a" * 64 + ".com"]),
    ("email", ["a@example.com", "Ann <a@example.com>"], ["not-an-email"]),
    ("uri", ["https://example.com/x", "/absolute/path"], ["relative/path", ""]),
    ("duration", ["1h30m", "10s", "1.5h", "3 days"], ["forever"]),
    ("hexcolor", ["#fff", "A0B1C2"], ["#ffff"]),
    ("rgbcolor", ["rgb(255, 0, 10)"], ["rgb(256,0,0)"]),
    ("ssn", ["123-45-6789"], ["123456789"]),
    ("isbn", ["0321751043", "978-0321751041"], ["0321751044"]),
    ("creditcard", ["4111 1111 1111 1111"], ["4111 1111 1111 1112"]),
    ("bsonobjectid", ["507f1f77bcf86cd799439011"], ["507f1f77bcf86cd79943901"]),
    ("password", ["anything"], []),
]


class FormatTests(SynchronousTestCase):
    """
    Tests of the string format validators and format stripping.
    """

    def test_formats(self):
        """
        Each format accepts its valid examples and refuses its invalid ones.
        """
        failures = []
        for fmt, good, bad in FORMATS:
            check = format_validator(fmt)
            failures += [(fmt, v, True) for v in good if not check(v)]
            failures += [(fmt, v, False) for v in bad if check(v)]
        self.assertEqual(failures, [])

    def test_effective_format(self):
        """
        Formats a v1.32 CRD may not use are stripped, per type, as upstream's post-processor.
        """
        self.assertEqual(
            [effective_format("date-time", ["string"]), effective_format("int32", ["integer"]),
             effective_format("int32", ["string"]), effective_format("uint64", ["integer"]),
             effective_format("double", ["number"]), effective_format("k8s-short-name",
                                                                      ["string"]),
             effective_format("uuid", ["integer", "string"]),
             effective_format("byte", ["object"])],
            ["date-time", "int32", "", "", "double", "", "uuid", ""])


class GoRegexpTests(SynchronousTestCase):
    """
    Tests of L{compile_go_regexp}.
    """

    def test_semantics(self):
        """
        C{$} is end of text, C{\\d} is ASCII, inline flags apply where they appear, POSIX
        classes work.
        """
        self.assertIsNone(compile_go_regexp("^a$").search("a\n"))
        self.assertIsNone(compile_go_regexp(r"^\d$").search("\u0663"))
        self.assertIsNotNone(compile_go_regexp("^x(?i)ab$").search("xAB"))
        self.assertIsNone(compile_go_regexp("^x(?i)ab$").search("XAB"))
        self.assertIsNotNone(compile_go_regexp("^[[:alpha:]]+$").search("abC"))
        self.assertIsNotNone(compile_go_regexp(r"^[\w\s:/.\\-]+$").search("a b:/c.d\\e-f"))

    def test_errors(self):
        """
        Invalid patterns raise with Go's message where known.
        """
        with self.assertRaises(GoRegexpError) as cm:
            compile_go_regexp("(a")
        self.assertEqual(str(cm.exception),
                         "error parsing regexp: missing closing ): `(a`")
        with self.assertRaises(GoRegexpError) as cm:
            compile_go_regexp("a(?=b)")
        self.assertEqual(str(cm.exception),
                         "error parsing regexp: invalid or unsupported Perl syntax: `(?=`")


class GoValueTests(SynchronousTestCase):
    """
    Tests of Go's value printing and comparison rules.
    """

    def test_go_float(self):
        """
        Go's C{%v} of a float64: shortest digits, exponent below 1e-4 and from 1e6 up.
        """
        self.assertEqual([go_float(x) for x in (3.0, 0.5, 1e6, 123456.0, 1.5e-5, 0.0001, -2.5)],
                         ["3", "0.5", "1e+06", "123456", "1.5e-05", "0.0001", "-2.5"])

    def test_go_json(self):
        """
        C{json.Marshal}: sorted keys, integral floats without a fraction, tiny floats with
        an exponent.
        """
        self.assertEqual(go_json({"b": 1.0, "a": [1e-7, "x", None, True]}),
                         '{"a":[1e-7,"x",null,true],"b":1}')

    def test_enum_equal(self):
        """
        Enum matching converts the data to the enum value's Go type first.
        """
        self.assertEqual(
            [enum_equal(1, 1.0), enum_equal(1.7, 1), enum_equal(65, "A"), enum_equal("1", 1),
             enum_equal(True, 1), enum_equal({"a": 1}, {"a": 1.0}), enum_equal(None, None)],
            [True, True, True, False, False, False, False])
