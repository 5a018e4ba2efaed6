"""
Tests for L{kubetwist.apiextensions.jsonpath}: kube JSONPath as printer columns, selectable
fields and scale paths use it (upstream C{client-go/util/jsonpath} semantics).
"""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apiextensions import jsonpath

OBJ = {
    "metadata": {"name": "w", "labels": {"a.b/c": "x"}},
    "spec": {"replicas": 3, "ports": [{"port": 80}, {"port": 443}]},
    "status": {"conditions": [
        {"type": "Ready", "status": "True"},
        {"type": "Synced", "status": "False"},
    ]},
}


class FindTests(SynchronousTestCase):
    """Selecting values."""

    def test_fields(self) -> None:
        """A dotted path selects one nested value; a missing key selects nothing."""
        self.assertEqual(jsonpath.find(".spec.replicas", OBJ), [3])
        self.assertEqual(jsonpath.find(".spec.missing.deeper", OBJ), [])

    def test_braces_and_dollar(self) -> None:
        """C{{...}} and a leading C{$} are accepted."""
        self.assertEqual(jsonpath.find("{$.metadata.name}", OBJ), ["w"])

    def test_indexes_and_slices(self) -> None:
        """C{[n]}, C{[-1]} and C{[a:b]} index lists; out of range selects nothing."""
        self.assertEqual(jsonpath.find(".spec.ports[1].port", OBJ), [443])
        self.assertEqual(jsonpath.find(".spec.ports[-1].port", OBJ), [443])
        self.assertEqual(jsonpath.find(".spec.ports[0:1].port", OBJ), [80])
        self.assertEqual(jsonpath.find(".spec.ports[5].port", OBJ), [])

    def test_wildcard(self) -> None:
        """C{[*]} selects every item, in order."""
        self.assertEqual(jsonpath.find(".spec.ports[*].port", OBJ), [80, 443])

    def test_filter(self) -> None:
        """C{[?(@.type=="Ready")]} keeps matching items; C{!=} and existence filters work."""
        self.assertEqual(
            jsonpath.find('.status.conditions[?(@.type=="Ready")].status', OBJ), ["True"])
        self.assertEqual(
            jsonpath.find(".status.conditions[?(@.type!='Ready')].type", OBJ), ["Synced"])
        self.assertEqual(jsonpath.find(".spec.ports[?(@.port > 100)].port", OBJ), [443])
        self.assertEqual(len(jsonpath.find(".status.conditions[?(@.status)]", OBJ)), 2)

    def test_quoted_key(self) -> None:
        """C{['a.b/c']} selects a key containing dots."""
        self.assertEqual(jsonpath.find(".metadata.labels['a.b/c']", OBJ), ["x"])

    def test_recursive(self) -> None:
        """C{..port} finds the key at any depth."""
        self.assertEqual(jsonpath.find("..port", OBJ), [80, 443])

    def test_unbalanced(self) -> None:
        """An unclosed bracket is a parse error."""
        self.assertRaises(jsonpath.JSONPathError, jsonpath.parse, ".spec.ports[0")


class FormatTests(SynchronousTestCase):
    """How values print (C{PrintResults})."""

    def test_values(self) -> None:
        """Strings raw, booleans lower case, integral floats without a point, maps as JSON."""
        self.assertEqual([jsonpath.format_value(v) for v in
                          ("a", True, 3, 2.0, 2.5, {"b": 1, "a": [1]})],
                         ["a", "true", "3", "2", "2.5", '{"a":[1],"b":1}'])
