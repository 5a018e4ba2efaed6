"""
Tests for L{kubetwist.apimachinery.selectors}, against upstream C{labels.Parse},
C{fields.ParseSelector} and C{metav1.LabelSelectorAsSelector}.
"""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apimachinery.selectors import (
    format_label_selector,
    label_selector_from_dict,
    label_selector_from_set,
    label_selector_to_string,
    parse_field_selector,
    parse_label_selector,
)
from kubetwist.runtime.errors import StatusError

QNAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


class LabelParseTests(SynchronousTestCase):
    """Parsing label selectors from the query string."""

    def test_round_trip_sorted(self):
        """Requirements are sorted by key and printed in upstream's canonical form."""
        sel = parse_label_selector("z=1, b in (y,x), !c,a, d notin (q),e!=f,g==h,n>3,m<4")
        self.assertEqual(
            str(sel), "a,b in (x,y),!c,d notin (q),e!=f,g==h,m<4,n>3,z=1"
        )

    def test_empty(self):
        """An empty string is the everything selector."""
        sel = parse_label_selector("")
        self.assertTrue(sel.empty())
        self.assertTrue(sel.matches({"a": "b"}))

    def test_matching(self):
        """Each operator matches as upstream does."""
        labels = {"env": "prod", "tier": "web", "n": "5"}
        cases = [
            ("env=prod", True), ("env==dev", False), ("env!=dev", True), ("missing!=x", True),
            ("tier in (web,db)", True), ("tier notin (web)", False), ("missing notin (a)", True),
            ("env", True), ("!env", False), ("!missing", True), ("missing in (a)", False),
            ("n>4", True), ("n<5", False), ("env>1", False), ("env=prod,tier=db", False),
        ]
        for text, expected in cases:
            self.assertEqual(parse_label_selector(text).matches(labels), expected, text)

    def test_empty_values(self):
        """C{in ()} and C{a=} mean the empty value."""
        self.assertTrue(parse_label_selector("a in ()").matches({"a": ""}))
        self.assertTrue(parse_label_selector("a=").matches({"a": ""}))
        self.assertEqual(str(parse_label_selector("a in (,b,)")), "a in (,b)")

    def assertParseError(self, text, message):
        err = self.assertRaises(StatusError, parse_label_selector, text)
        self.assertEqual((err.code, err.reason, err.message), (400, "BadRequest", message))

    def test_errors(self):
        """Syntax errors carry upstream's exact text."""
        self.assertParseError(
            "a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        )
        self.assertParseError("a=b,", "found '', expected: identifier after ','")
        self.assertParseError(",a", "found ',', expected: !, identifier, or 'end of string'")
        self.assertParseError("a!=b c", "found 'c', expected: ',' or 'end of string'")
        self.assertParseError("a in b", "unable to parse requirement: found 'b' expected: '('")
        self.assertParseError("a in (b", "unable to parse requirement: found '', expected: ',' or "
                                         "')'")
        self.assertParseError("a=(b)", "unable to parse requirement: found '(', expected: "
                                       "identifier")

    def test_invalid_key(self):
        """A bad key is a field error with upstream's C{<nil>} path."""
        self.assertParseError(
            "a:b=c", 'unable to parse requirement: <nil>: Invalid value: "a:b": ' + QNAME_MSG
        )

    def test_invalid_value(self):
        """A bad value is reported at C{values[i][key]}."""
        err = self.assertRaises(StatusError, parse_label_selector, "a=-x")
        self.assertTrue(
            err.message.startswith('unable to parse requirement: values[0][a]: Invalid value: '
                                   '"-x": '
                                   "a valid label must be an empty string"),
            err.message,
        )

    def test_gt_needs_integer(self):
        """C{gt}/C{lt} values must be integers."""
        self.assertParseError(
            "a>x",
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' "
            "operators, the value must be an integer",
        )

    def test_requires_exact_match(self):
        """C{RequiresExactMatch} answers for C{=} and single-valued C{in}."""
        self.assertEqual(parse_label_selector("a in (b)").requires_exact_match("a"), ("b", True))
        self.assertEqual(parse_label_selector("a!=b").requires_exact_match("a"), ("", False))


class LabelSelectorDictTests(SynchronousTestCase):
    """C{metav1.LabelSelector} dicts as matchers."""

    def test_none_matches_nothing(self):
        """A missing selector matches nothing and is not empty."""
        sel = label_selector_from_dict(None)
        self.assertFalse(sel.matches({}))
        self.assertFalse(sel.empty())

    def test_empty_matches_everything(self):
        """An empty selector matches everything."""
        self.assertTrue(label_selector_from_dict({}).matches({"a": "b"}))
        self.assertTrue(label_selector_from_dict({"matchLabels": {}}).empty())

    def test_match(self):
        """matchLabels and matchExpressions are ANDed."""
        sel = label_selector_from_dict({
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]},
                                 {"key": "x", "operator": "DoesNotExist"}],
        })
        self.assertTrue(sel.matches({"app": "web", "tier": "fe"}))
        self.assertFalse(sel.matches({"app": "web", "tier": "db"}))
        self.assertFalse(sel.matches({"app": "web", "x": ""}))

    def test_to_string(self):
        """The Scale selector string is sorted by key with sorted values."""
        self.assertEqual(
            label_selector_to_string({
                "matchLabels": {"b": "1", "a": "2"},
                "matchExpressions": [{"key": "c", "operator": "In", "values": ["z", "y"]},
                                     {"key": "d", "operator": "Exists"}],
            }),
            "a=2,b=1,c in (y,z),d",
        )
        self.assertEqual(label_selector_to_string({}), "")
        self.assertEqual(format_label_selector({}), "<none>")
        self.assertEqual(format_label_selector({"matchExpressions": [
            {"key": "a", "operator": "X"}]}), "<error>")

    def test_errors(self):
        """Bad operators and missing values give upstream's messages."""
        err = self.assertRaises(StatusError, label_selector_from_dict,
                                {"matchExpressions": [{"key": "a", "operator": "Foo"}]})
        self.assertEqual(err.message, '"Foo" is not a valid label selector operator')
        err = self.assertRaises(StatusError, label_selector_from_dict,
                                {"matchExpressions": [{"key": "a", "operator": "In"}]})
        self.assertEqual(
            err.message,
            "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't "
            "be empty",
        )

    def test_from_set(self):
        """A plain map selects by equality."""
        sel = label_selector_from_set({"a": "b"})
        self.assertEqual(str(sel), "a=b")
        self.assertTrue(sel.matches({"a": "b", "c": "d"}))


class FieldSelectorTests(SynchronousTestCase):
    """C{fields.ParseSelector}."""

    def test_parse(self):
        """Terms are sorted; C{==} is equality."""
        sel = parse_field_selector("status.phase!=Running,metadata.name==web")
        self.assertEqual(
            sel.requirements(),
            [("metadata.name", "=", "web"), ("status.phase", "!=", "Running")],
        )
        self.assertEqual(str(sel), "metadata.name=web,status.phase!=Running")

    def test_matches(self):
        """Missing fields read as empty strings."""
        sel = parse_field_selector("a=1,b!=2")
        self.assertTrue(sel.matches({"a": "1", "b": "3"}))
        self.assertFalse(sel.matches({"a": "1", "b": "2"}))
        self.assertTrue(parse_field_selector("c=").matches({}))

    def test_escaping(self):
        """Escaped commas and equals signs belong to the value."""
        sel = parse_field_selector(r"a=b\,c\=d\\e")
        self.assertEqual(sel.requirements(), [("a", "=", "b,c=d\\e")])
        self.assertEqual(str(sel), r"a=b\,c\=d\\e")

    def test_empty(self):
        """An empty selector, or only empty terms, is empty."""
        self.assertTrue(parse_field_selector("").empty())
        self.assertTrue(parse_field_selector(",").empty())

    def assertFieldError(self, text, message):
        err = self.assertRaises(StatusError, parse_field_selector, text)
        self.assertEqual((err.code, err.reason, err.message), (400, "BadRequest", message))

    def test_errors(self):
        """Upstream's messages, including Go's rune number for an unescaped character."""
        self.assertFieldError("a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'")
        self.assertFieldError("a=b=c", "invalid field selector: unescaped character in value: 61")
        self.assertFieldError(r"a=b\x", r"invalid field selector: invalid escape sequence: \x")
        self.assertFieldError("a=b\\", "invalid field selector: invalid escape sequence: \\")

    def test_transform(self):
        """C{transform} maps each term and drops ones mapped to nothing."""
        sel = parse_field_selector("a=1,b=2").transform(lambda f, v: ("", "") if f == "a"
                                                        else (f.upper(), v))
        self.assertEqual(sel.requirements(), [("B", "=", "2")])
