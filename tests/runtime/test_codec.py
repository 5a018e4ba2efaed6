# -*- test-case-name: tests.runtime.test_codec -*-
"""
Tests for L{kubetwist.runtime.codec}: media types, JSON and YAML encoding and decoding, and
Go's C{encoding/json} wording of syntax errors.
"""

from __future__ import annotations

import json

import yaml
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.runtime import codec, errors


class MediaTypeTests(SynchronousTestCase):
    """C{Accept} and C{Content-Type} parsing."""

    def test_accept_with_parameters(self) -> None:
        """Kubernetes' parameters are read; order is kept, with a q=0 range last (goautoneg
        parses it and upstream's negotiation does not look at q)."""
        ranges = codec.parse_accept(
            "application/json;as=Table;v=v1;g=meta.k8s.io, application/yaml;q=0, */*")
        self.assertEqual([(r.type, r.as_kind, r.group, r.version) for r in ranges], [
            ("application/json", "Table", "meta.k8s.io", "v1"), ("*/*", "", "", ""),
            ("application/yaml", "", "", "")])
        self.assertEqual(ranges[2].q, 0.0)
        self.assertEqual(ranges[0].header(), "application/json;as=Table;g=meta.k8s.io;v=v1")
        self.assertEqual(ranges[1].header(), "*/*")

    def test_accept_missing(self) -> None:
        """No Accept header accepts anything."""
        self.assertEqual(codec.parse_accept(None), [codec.MediaType("*/*")])
        self.assertEqual(codec.parse_accept(""), [codec.MediaType("*/*")])

    def test_watch_stream_parameter(self) -> None:
        """C{stream=watch} is kept (protobuf watch negotiation)."""
        (media,) = codec.parse_accept("application/vnd.kubernetes.protobuf;stream=watch")
        self.assertEqual((media.type, media.stream), (codec.PROTOBUF, "watch"))

    def test_content_type_of(self) -> None:
        """The bare, lower-cased media type of a Content-Type header."""
        self.assertEqual(codec.content_type_of("Application/JSON; charset=utf-8"),
                         "application/json")
        self.assertEqual(codec.content_type_of(None), "")


class EncodeTests(SynchronousTestCase):
    """JSON and YAML output."""

    def test_json_compact(self) -> None:
        """JSON is compact, UTF-8, in the object's key order."""
        out = codec.encode({"b": "é", "a": [1, None]}, codec.JSON)
        self.assertEqual(out.rstrip(b"\n"), '{"b":"é","a":[1,null]}'.encode())

    def test_yaml_sorted_block_style(self) -> None:
        """YAML is block style with sorted keys; multi-line strings are literal blocks."""
        out = codec.encode({"b": "x\ny", "a": {"d": 1, "c": [True]}}, codec.YAML)
        self.assertEqual(out, b"a:\n  c:\n  - true\n  d: 1\nb: |-\n  x\n  y\n")
        self.assertEqual(yaml.safe_load(out), {"b": "x\ny", "a": {"d": 1, "c": [True]}})


class DecodeTests(SynchronousTestCase):
    """L{codec.decode_body}."""

    def test_json(self) -> None:
        self.assertEqual(codec.decode_body(b'{"a": [1, 2.5]}', codec.JSON), {"a": [1, 2.5]})

    def test_yaml(self) -> None:
        """YAML 1.1 booleans are booleans; timestamps stay strings, as in JSON."""
        self.assertEqual(codec.decode_body(b"a: yes\nt: 2001-01-01\nn: 1\n", codec.YAML),
                         {"a": True, "t": "2001-01-01", "n": 1})

    def test_json_as_yaml(self) -> None:
        """A JSON document sent as YAML (kubectl's apply) decodes."""
        self.assertEqual(codec.decode_body(b'{"a": 1}', codec.APPLY_PATCH_YAML), {"a": 1})

    def test_bad_yaml(self) -> None:
        """Malformed YAML is 400 BadRequest naming the YAML conversion."""
        with self.assertRaises(errors.StatusError) as caught:
            codec.decode_body(b"a: [", codec.YAML)
        self.assertEqual(caught.exception.code, 400)
        self.assertTrue(caught.exception.message.startswith("error converting YAML to JSON: "))

    def test_json_syntax_errors(self) -> None:
        """Malformed JSON raises L{codec.JSONSyntaxError} worded as Go's encoding/json."""
        cases = {
            b"": "unexpected end of JSON input",
            b"{": "unexpected end of JSON input",
            b"x": "invalid character 'x' looking for beginning of value",
            b'{"a" 1}': "invalid character '1' after object key",
            b"[1 2]": "invalid character '2' after array element",
            b'{"a":"\x01"}': "invalid character '\\x01' in string literal",
        }
        got = {}
        for body in cases:
            with self.assertRaises(codec.JSONSyntaxError) as caught:
                codec.decode_body(body, codec.JSON)
            got[body] = str(caught.exception)
        self.assertEqual(got, cases)

    def test_summarize_data(self) -> None:
        """Upstream C{summarizeData}: JSON text cut at 30 bytes, other data as hex."""
        self.assertEqual(codec.summarize_data(b""), "<empty>")
        self.assertEqual(codec.summarize_data(b'{"a":1}'), '{"a":1}')
        self.assertEqual(codec.summarize_data(b"{" + b"x" * 40), "{" + "x" * 29 + " ...")
        self.assertEqual(codec.summarize_data(b"\x00\x01"), "0001")
        self.assertEqual(codec.summarize_data(b"\x00" * 31), "00" * 30 + " ...")


class StrictTests(SynchronousTestCase):
    """L{codec.strict_body_errors}: upstream's strict serializer over the type tables."""

    def test_json_unknown_and_duplicate(self) -> None:
        """JSON: unknown and duplicate fields in document order."""
        body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"},"x":1}'
        self.assertEqual(codec.strict_body_errors(body, codec.JSON,
                                                  "io.k8s.api.core.v1.ConfigMap"),
                         ['duplicate field "metadata.name"', 'unknown field "x"'])

    def test_unparseable_body_has_no_strict_errors(self) -> None:
        """A body that does not parse is left to the ordinary decoder."""
        self.assertEqual(codec.strict_body_errors(b"{", codec.JSON,
                                                  "io.k8s.api.core.v1.ConfigMap"), [])
        self.assertEqual(json.loads(codec.encode_json({})), {})
