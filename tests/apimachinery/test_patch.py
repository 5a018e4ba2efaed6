"""
Tests for L{kubetwist.apimachinery.patch}: JSON patch and merge patch with evanphx/json-patch v4
semantics and kube-apiserver's error mapping.
"""

import json

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apimachinery.patch import apply_json_patch, apply_merge_patch, json_size
from kubetwist.runtime.errors import StatusError

GENERIC_422 = "the server rejected our request due to an error in our request"


class JSONPatchTests(SynchronousTestCase):
    """RFC 6902 operations."""

    doc = {"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"list": [1, 2, 3]}}

    def apply(self, ops):
        import json

        return apply_json_patch(self.doc, json.dumps(ops).encode())

    def test_add_replace_remove(self):
        """add, replace and remove on maps and arrays."""
        out = self.apply([
            {"op": "add", "path": "/metadata/labels/y", "value": "2"},
            {"op": "replace", "path": "/metadata/labels/x", "value": "3"},
            {"op": "remove", "path": "/spec/list/0"},
            {"op": "add", "path": "/spec/list/-", "value": 9},
            {"op": "add", "path": "/spec/list/0", "value": 0},
        ])
        self.assertEqual(out, {"metadata": {"name": "a", "labels": {"x": "3", "y": "2"}},
                               "spec": {"list": [0, 2, 3, 9]}})
        self.assertEqual(self.doc["spec"]["list"], [1, 2, 3])

    def test_escaped_keys(self):
        """C{~1} is C{/} and C{~0} is C{~} in a path segment."""
        out = self.apply([{"op": "add", "path": "/metadata/labels/a~1b~0c", "value": "v"}])
        self.assertEqual(out["metadata"]["labels"]["a/b~c"], "v")

    def test_move_copy_test(self):
        """move, copy and a passing test."""
        out = self.apply([
            {"op": "test", "path": "/metadata/name", "value": "a"},
            {"op": "copy", "from": "/metadata/name", "path": "/spec/n"},
            {"op": "move", "from": "/metadata/labels", "path": "/spec/l"},
        ])
        self.assertEqual(out, {"metadata": {"name": "a"},
                               "spec": {"list": [1, 2, 3], "n": "a", "l": {"x": "1"}}})

    def test_v4_quirks(self):
        """Negative indices work; replacing a missing key adds it; test of a missing key to null
        passes."""
        out = self.apply([
            {"op": "remove", "path": "/spec/list/-1"},
            {"op": "replace", "path": "/spec/new", "value": 1},
            {"op": "test", "path": "/spec/absent", "value": None},
        ])
        self.assertEqual(out["spec"], {"list": [1, 2], "new": 1})

    def assertFails(self, ops, code, reason, message):
        err = self.assertRaises(StatusError, self.apply, ops)
        self.assertEqual((err.code, err.reason, err.message), (code, reason, message))
        return err

    def test_failed_test_is_422(self):
        """A failing test operation is a 422 with the generic message and empty details."""
        err = self.assertFails([{"op": "test", "path": "/metadata/name", "value": "b"}], 422,
                               "Invalid", GENERIC_422)
        self.assertEqual(err.status["details"], {})

    def test_missing_path_is_422(self):
        """Removing a missing key, or adding under a missing parent, is a 422."""
        self.assertFails([{"op": "remove", "path": "/nope"}], 422, "Invalid", GENERIC_422)
        self.assertFails([{"op": "add", "path": "/a/b/c", "value": 1}], 422, "Invalid", GENERIC_422)
        self.assertFails([{"op": "add", "path": "/spec/list/9", "value": 1}], 422, "Invalid",
                         GENERIC_422)
        self.assertFails([{"op": "frob", "path": "/a"}], 422, "Invalid", GENERIC_422)

    def test_not_a_patch_is_400(self):
        """A body that is not a list of operations is a 400 with Go's decoder text."""
        err = self.assertRaises(StatusError, apply_json_patch, {}, b'{"op": "add"}')
        self.assertEqual(
            (err.code, err.message),
            (400, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
        )
        err = self.assertRaises(StatusError, apply_json_patch, {}, b"x")
        self.assertEqual((err.code, err.message), (400,
                                                   "invalid character 'x' looking for beginning of "
                                                   "value"))

    def test_too_many_operations(self):
        """More than 10000 operations is a 413."""
        ops = [{"op": "test", "path": "/metadata/name", "value": "a"}] * 10001
        self.assertFails(
            ops, 413, "RequestEntityTooLarge",
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, "
            "got 10001",
        )


    def test_copy_size_limit(self):
        """copy operations may copy 3 MiB in total (upstream's AccumulatedCopySizeLimit); past
        it the patch is the generic 422, however many bytes the copies would reach."""
        value = ["x" * 1000]
        base = [{"op": "add", "path": "/spec/l", "value": value}]
        doubling = [{"op": "copy", "from": "/spec/l", "path": "/spec/l/-"}]
        out = self.apply(base + doubling * 11)  # 2 MiB copied in total
        self.assertEqual(json.dumps(out["spec"]["l"]).count("x" * 1000), 2 ** 11)
        self.assertFails(base + doubling * 12, 422, "Invalid", GENERIC_422)
        self.assertFails(base + doubling * 30, 422, "Invalid", GENERIC_422)
        # copies of small values add up too: 3200 copies of 1 KB
        ops = [{"op": "add", "path": "/spec/s", "value": "y" * 1000}]
        ops += [{"op": "copy", "from": "/spec/s", "path": f"/spec/c{i}"} for i in range(3200)]
        self.assertFails(ops, 422, "Invalid", GENERIC_422)
        out = self.apply(ops[:3000])
        self.assertEqual(out["spec"]["c2998"], "y" * 1000)

    def test_json_size(self):
        """json_size is the compact Go encoding's length, and stops counting past the
        budget."""
        for value in ({"a": [1, "b<", None, True, False, 1.5, {}], "": []}, "\u2028é", [[[]]]):
            go = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
            go = go.replace("<", "\\u003c").replace("\u2028", "\\u2028")
            self.assertEqual(json_size(value, 1 << 20), len(go.encode()), value)
        huge: list = ["z" * 100]
        for _ in range(40):  # 2**40 strings when written out
            huge = [huge, huge]
        self.assertLess(json_size(huge, 10000), 10200)


class MergePatchTests(SynchronousTestCase):
    """RFC 7386 merge patch."""

    def test_merge(self):
        """Maps merge, nulls delete, lists replace, nulls inside new values are pruned."""
        doc = {"a": {"b": 1, "c": 2}, "l": [1, 2], "s": "x"}
        out = apply_merge_patch(doc, b'{"a": {"b": null, "d": 3}, "l": [3], "n": {"x": null, "y": '
                                     b'1}}')
        self.assertEqual(out, {"a": {"c": 2, "d": 3}, "l": [3], "s": "x", "n": {"y": 1}})
        self.assertEqual(doc, {"a": {"b": 1, "c": 2}, "l": [1, 2], "s": "x"})

    def test_replace_scalar_with_map(self):
        """A map replaces a scalar, with its nulls pruned."""
        self.assertEqual(apply_merge_patch({"a": 1}, b'{"a": {"b": null, "c": 1}}'),
                         {"a": {"c": 1}})

    def test_bad_patches(self):
        """Invalid JSON, null and scalars are 400 C{Invalid JSON Patch}."""
        for body in (b"{", b"null", b"5", b'"s"'):
            err = self.assertRaises(StatusError, apply_merge_patch, {}, body)
            self.assertEqual((err.code, err.reason, err.message),
                             (400, "BadRequest", "Invalid JSON Patch"))

    def test_array_patch(self):
        """An array patch yields the array itself (the caller's decode then fails)."""
        self.assertEqual(apply_merge_patch({"a": 1}, b'[{"a": null, "b": 1}]'), [{"b": 1}])
