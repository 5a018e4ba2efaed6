# -*- test-case-name: tests.runtime.test_typed -*-
"""
Tests for L{kubetwist.runtime.typed}: Go's decoding of a body into the kind's struct, against
kube-apiserver v1.32's recorded answers for a wrong value at every field of the type tables
(L{tests.runtime.typed_cases}).
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.runtime import typed
from kubetwist.runtime import types as typetables
from tests.runtime import typed_cases

POD = "io.k8s.api.core.v1.Pod"
CONFIGMAP = "io.k8s.api.core.v1.ConfigMap"


class RecordedVectorsTests(SynchronousTestCase):
    """Every recorded case: L{typed.check} gives upstream's error, or accepts the body when
    upstream's decoder did."""

    def test_every_field(self) -> None:
        data = typed_cases.load()
        mismatches = []
        for type_name, key, raw, code, message in data["cases"]:
            _, body = typed_cases.build_body(data["roots"], data["placements"], type_name, key,
                                             raw)
            got = typed.check(typed.parse_json(body), data["placements"][type_name][0])
            want = message if code in (400, 500) else None
            if got != want:
                mismatches.append((type_name, key, raw, want, got))
        self.assertEqual(mismatches, [])

    def test_covers_the_tables(self) -> None:
        """Each field of each type reachable from a creatable kind has a case: the recording
        is not stale against the type tables."""
        data = typed_cases.load()
        recorded = {(t, k) for t, k, *_ in data["cases"]}
        expected = {(t, k) for t, k, _, _ in typed_cases.cases(data["placements"])}
        self.assertEqual(expected - recorded, set())
        self.assertGreater(len(recorded), 1500)


class CheckTests(SynchronousTestCase):
    """Hand-written cases of L{typed.check}."""

    def check(self, doc: dict, type_name: str = POD):
        return typed.check(doc, type_name)

    def test_lun_string(self) -> None:
        doc = {"spec": {"volumes": [{"name": "v", "fc": {"lun": "<ADD LUN ID Here>"}}]}}
        self.assertEqual(
            self.check(doc),
            "json: cannot unmarshal string into Go struct field FCVolumeSource.spec.volumes.fc"
            ".lun of type int32")

    def test_float_literals(self) -> None:
        """A number keeps its literal in the message (parse_json)."""
        for literal in ("1.5", "1.0", "1e3", "-1.5e400"):
            doc = typed.parse_json(
                b'{"spec": {"volumes": [{"fc": {"lun": %s}}]}}' % literal.encode())
            self.assertEqual(
                self.check(doc),
                f"json: cannot unmarshal number {literal} into Go struct field "
                "FCVolumeSource.spec.volumes.fc.lun of type int32")

    def test_first_saved_error_wins(self) -> None:
        doc = {"metadata": {"name": 1}, "data": {"a": 2}}
        self.assertEqual(
            self.check(doc, CONFIGMAP),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of "
            "type string")

    def test_unmarshaler_error_wins(self) -> None:
        """An error of a type with its own UnmarshalJSON aborts decoding and beats an
        earlier saved type error."""
        doc = {"metadata": {"name": 1, "creationTimestamp": "x"}}
        self.assertEqual(
            self.check(doc, CONFIGMAP),
            'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"')

    def test_null_everywhere(self) -> None:
        doc = {"metadata": None, "spec": {"containers": None, "volumes": [None],
                                          "nodeSelector": {"a": None}}}
        self.assertIsNone(self.check(doc))

    def test_unknown_fields_ignored(self) -> None:
        self.assertIsNone(self.check({"spec": {"foo": [1], "containers": [{"bar": 1}]}}))

    def test_no_table(self) -> None:
        self.assertIsNone(self.check({"spec": 1}, "example.com.v1.Widget"))

    def test_deep_nesting(self) -> None:
        """Deep values under unknown or free-form fields are not walked recursively."""
        deep: list = []
        node = deep
        for _ in range(5000):
            node.append([])
            node = node[0]
        self.assertIsNone(self.check({"metadata": {"annotations": {}}, "foo": deep},
                                     CONFIGMAP))
        self.assertEqual(
            self.check({"metadata": {"annotations": {"a": deep}}}, CONFIGMAP),
            "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.annotations "
            "of type string")
        self.assertTrue(typed.check_depth({"a": deep}))
        for _ in range(typed.MAX_NESTING_DEPTH):
            deep = [deep]
        self.assertFalse(typed.check_depth({"a": deep}))

    def test_go_types_resolve(self) -> None:
        """Every recorded Go type name names a field of the tables."""
        from kubetwist.runtime.gotypes import GO_TYPES

        for type_name, names in GO_TYPES.items():
            for key in names:
                self.assertIn(key, typed.fields_by_json(type_name), (type_name, key))
        self.assertIn(POD, typetables.TYPES)


class GoErrorTextTests(SynchronousTestCase):
    """Go's base64, time and duration errors."""

    def test_base64(self) -> None:
        self.assertIsNone(typed.go_base64_error("YWJj"))
        self.assertIsNone(typed.go_base64_error("YQ==\n"))
        self.assertIsNone(typed.go_base64_error(""))
        self.assertEqual(typed.go_base64_error("!!"), "illegal base64 data at input byte 0")
        self.assertEqual(typed.go_base64_error("YQ="), "illegal base64 data at input byte 3")
        self.assertEqual(typed.go_base64_error("YQ"), "illegal base64 data at input byte 0")
        self.assertEqual(typed.go_base64_error("YWJjZA==YQ"),
                         "illegal base64 data at input byte 8")

    def test_time(self) -> None:
        self.assertIsNone(typed.go_time_error("2024-01-01T00:00:00Z"))
        self.assertIsNone(typed.go_time_error("2024-01-01T00:00:00.5+01:00"))
        self.assertEqual(typed.go_time_error("2024-01-01T00:00:00Zx"),
                         'parsing time "2024-01-01T00:00:00Zx": extra text: "x"')
        self.assertEqual(typed.go_time_error("2024-13-01T00:00:00Z"),
                         'parsing time "2024-13-01T00:00:00Z": month out of range')
        self.assertIsNone(typed.go_time_error("2024-01-01T00:00:00.000000Z", micro=True))

    def test_duration(self) -> None:
        self.assertIsNone(typed.go_duration_error("1h2m3.5s"))
        self.assertEqual(typed.go_duration_error("x"), 'time: invalid duration "x"')
        self.assertEqual(typed.go_duration_error("5"), 'time: missing unit in duration "5"')
        self.assertEqual(typed.go_duration_error("5y"), 'time: unknown unit "y" in duration "5y"')
