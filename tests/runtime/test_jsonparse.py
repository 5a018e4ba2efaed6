"""
Tests for L{kubetwist.runtime.jsonparse}: the iterative JSON parser used where orjson refuses
what Go's C{encoding/json} accepts (deep nesting, numbers beyond a double).
"""

from __future__ import annotations

import json

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.runtime import jsonparse


class LoadsTests(SynchronousTestCase):
    """L{jsonparse.loads} parses what Go parses, iteratively."""

    def test_same_as_json(self) -> None:
        """Ordinary documents parse as the standard library parses them."""
        for doc in ('{"a": [1, 2.5, "x", true, false, null], "b": {"c": {}}}', "[]", '"s"',
                    '{"u": "\\u00e9\\n"}', "-0.5e3"):
            self.assertEqual(jsonparse.loads(doc), json.loads(doc), doc)

    def test_deep_nesting_without_recursion(self) -> None:
        """Nesting up to Go's 10000 levels parses, far past Python's recursion limit."""
        depth = jsonparse.MAX_NESTING_DEPTH
        value = jsonparse.loads("[" * depth + "]" * depth)
        for _ in range(depth - 1):
            self.assertEqual(len(value), 1)
            value = value[0]
        self.assertEqual(value, [])

    def test_too_deep(self) -> None:
        """One level more than Go's C{maxNestingDepth} raises L{jsonparse.DepthError}."""
        depth = jsonparse.MAX_NESTING_DEPTH + 1
        self.assertRaises(jsonparse.DepthError, jsonparse.loads, "[" * depth + "]" * depth)

    def test_malformed(self) -> None:
        """Truncated documents, bad characters and trailing data raise C{ValueError}."""
        for doc in ('{"a": 1', "[1,", "{1: 2}", "[1] x", ""):
            self.assertRaises(ValueError, jsonparse.loads, doc)
