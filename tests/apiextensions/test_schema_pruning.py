# -*- test-case-name: tests.apiextensions.test_schema_pruning -*-
"""
Tests for L{kubetwist.apiextensions.schema.prune} and friends: upstream's
C{pkg/apiserver/schema/pruning}, the decoder's metadata handling and
C{PruneNonNullableNullsWithoutDefaults}.
"""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apiextensions.schema import (
    prune,
    prune_non_nullable_nulls,
    unknown_field_warnings,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "items": {"type": "array", "items": {
                    "type": "object", "properties": {"name": {"type": "string"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                         "properties": {"typed": {"type": "object",
                                                  "properties": {"a": {"type": "string"}}}}},
                "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                             "properties": {"spec": {"type": "object", "properties": {
                                 "x": {"type": "string"}}}}},
                "nested": {"type": "object", "properties": {"a": {"type": "string"}}},
                "nullable": {"type": "string", "nullable": True},
                "defaulted": {"type": "string", "default": "d"},
            },
        },
    },
}

# (name, object in, object out, pruned paths)
CASES = [
    ("unknown spec field", {"spec": {"replicas": 1, "foo": 2}}, {"spec": {"replicas": 1}},
     ["spec.foo"]),
    ("unknown root field; apiVersion/kind/metadata kept",
     {"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "n"}, "bar": 1},
     {"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "n"}}, ["bar"]),
    ("unknown fields in array items",
     {"spec": {"items": [{"name": "a", "x": 1}, {"y": 2}]}},
     {"spec": {"items": [{"name": "a"}, {}]}}, ["spec.items[0].x", "spec.items[1].y"]),
    ("additionalProperties keep every key", {"spec": {"labels": {"a": "b", "c": "d"}}},
     {"spec": {"labels": {"a": "b", "c": "d"}}}, []),
    ("preserve-unknown-fields keeps unknowns but prunes specified children",
     {"spec": {"free": {"anything": {"deep": 1}, "typed": {"a": "x", "b": "y"}}}},
     {"spec": {"free": {"anything": {"deep": 1}, "typed": {"a": "x"}}}},
     ["spec.free.typed.b"]),
    ("embedded resource keeps TypeMeta and metadata",
     {"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                            "spec": {"x": "1", "z": 2}, "status": {}}}},
     {"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                            "spec": {"x": "1"}}}},
     ["spec.template.spec.z", "spec.template.status"]),
    ("apiVersion in a non-embedded object is unknown",
     {"spec": {"nested": {"a": "x", "apiVersion": "v1"}}}, {"spec": {"nested": {"a": "x"}}},
     ["spec.nested.apiVersion"]),
    ("root metadata reduced to ObjectMeta",
     {"metadata": {"name": "n", "clusterName": "c", "ownerReferences": [
         {"apiVersion": "v1", "kind": "K", "name": "o", "uid": "u", "extra": 1}]}},
     {"metadata": {"name": "n", "ownerReferences": [
         {"apiVersion": "v1", "kind": "K", "name": "o", "uid": "u"}]}},
     ["metadata.clusterName", "metadata.ownerReferences[0].extra"]),
    ("embedded metadata reduced to ObjectMeta",
     {"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": "p", "bogus": 1, "creationTimestamp": None}}}},
     {"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}}},
     ["spec.template.metadata.bogus"]),
    ("object under a scalar schema loses its fields",
     {"spec": {"nested": {"a": {"x": 1}}}}, {"spec": {"nested": {"a": {}}}},
     ["spec.nested.a.x"]),
]


class PruneTests(SynchronousTestCase):
    """
    Table tests of L{prune}.
    """

    def test_cases(self):
        """
        Each object is pruned in place to the expected one; the pruned paths are returned.
        """
        failures = []
        for name, obj, expected, paths in CASES:
            got_paths = prune(obj, SCHEMA)
            if obj != expected or got_paths != paths:
                failures.append((name, obj, got_paths))
        self.assertEqual(failures, [])

    def test_not_resource_root(self):
        """
        Outside a resource root, C{apiVersion}/C{kind}/C{metadata} are pruned (silently, at
        the top level, as upstream).
        """
        obj = {"kind": "K", "replicas": 1, "x": 1}
        paths = prune(obj, SCHEMA["properties"]["spec"], is_resource_root=False)
        self.assertEqual((obj, paths), ({"replicas": 1}, ["x"]))

    def test_warnings(self):
        """
        Pruned paths become upstream's warning texts.
        """
        self.assertEqual(unknown_field_warnings(["spec.foo"]), ['unknown field "spec.foo"'])

    def test_prune_nulls(self):
        """
        C{null}s of fields neither nullable nor defaulted are dropped; others stay.
        """
        obj = {"spec": {"replicas": None, "nullable": None, "defaulted": None,
                        "labels": {"a": None}}}
        prune_non_nullable_nulls(obj, SCHEMA)
        self.assertEqual(obj, {"spec": {"nullable": None, "defaulted": None, "labels": {}}})
