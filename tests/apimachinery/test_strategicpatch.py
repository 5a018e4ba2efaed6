"""
Tests for L{kubetwist.apimachinery.strategicpatch} and L{kubetwist.apimachinery.patchmeta}.

Expected results follow the strategic-merge-patch conventions
(community/contributors/devel/sig-api-machinery/strategic-merge-patch.md) and upstream
C{strategicpatch} semantics.
"""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apimachinery.patchmeta import PatchMeta, patch_meta_for
from kubetwist.apimachinery.strategicpatch import apply_strategic_merge_patch
from kubetwist.runtime.errors import StatusError

POD = patch_meta_for("", "Pod")
DEPLOY = patch_meta_for("apps", "Deployment")


def pod(**spec):
    return {"metadata": {"name": "p"}, "spec": spec}


def c(name, **kw):
    d = {"name": name}
    d.update(kw)
    return d


# (description, schema, original, patch, expected)
CASES = [
    # --- maps
    ("scalar replaced", POD, {"a": 1}, {"a": 2}, {"a": 2}),
    ("new key added", POD, {"a": 1}, {"b": 2}, {"a": 1, "b": 2}),
    ("null deletes key", POD, {"a": 1, "b": 2}, {"b": None}, {"a": 1}),
    ("null on missing key is dropped", POD, {"a": 1}, {"b": None}, {"a": 1}),
    ("nested maps merge", POD,
     {"metadata": {"labels": {"a": "1", "b": "2"}}},
     {"metadata": {"labels": {"b": "3", "c": "4"}}},
     {"metadata": {"labels": {"a": "1", "b": "3", "c": "4"}}}),
    ("nested null deletes label", POD,
     {"metadata": {"labels": {"a": "1", "b": "2"}}}, {"metadata": {"labels": {"a": None}}},
     {"metadata": {"labels": {"b": "2"}}}),
    ("nulls inside a new subtree are discarded", POD,
     {}, {"spec": {"x": {"y": None, "z": 1}}}, {"spec": {"x": {"z": 1}}}),
    ("type change replaces", POD, {"a": {"b": 1}}, {"a": [1]}, {"a": [1]}),
    ("map $patch replace", POD,
     {"metadata": {"labels": {"a": "1", "b": "2"}}},
     {"metadata": {"labels": {"$patch": "replace", "c": "3"}}},
     {"metadata": {"labels": {"c": "3"}}}),
    ("map $patch delete empties an existing map", POD,
     {"metadata": {"labels": {"a": "1"}}}, {"metadata": {"labels": {"$patch": "delete"}}},
     {"metadata": {"labels": {}}}),
    ("map $patch delete of an absent map adds nothing", POD,
     {"metadata": {}}, {"metadata": {"labels": {"$patch": "delete"}}}, {"metadata": {}}),
    ("root $patch replace", POD, {"a": 1, "b": 2}, {"$patch": "replace", "c": 3}, {"c": 3}),
    # --- lists without strategy: replaced
    ("atomic list replaced", POD,
     pod(tolerations=[{"key": "a"}, {"key": "b"}]), {"spec": {"tolerations": [{"key": "c"}]}},
     pod(tolerations=[{"key": "c"}])),
    ("atomic primitive list replaced", POD,
     pod(containers=[c("a", args=["x", "y"])]), {"spec": {"containers": [c("a", args=["z"])]}},
     pod(containers=[c("a", args=["z"])])),
    # --- merge lists of maps
    ("merge list: update element by key", POD,
     pod(containers=[c("a", image="1"), c("b", image="1")]),
     {"spec": {"containers": [c("b", image="2")]}},
     pod(containers=[c("a", image="1"), c("b", image="2")])),
    # Without $setElementOrder, upstream's mergeSortedSlice puts a patch item before a
    # server-only item unless both are found in the live order.
    ("merge list: new element goes before server-only ones", POD,
     pod(containers=[c("a", image="1")]), {"spec": {"containers": [c("b", image="2")]}},
     pod(containers=[c("b", image="2"), c("a", image="1")])),
    ("merge list: patch items in patch order, interleaved by live order", POD,
     pod(containers=[c("a"), c("b"), c("c")]),
     {"spec": {"containers": [c("c", image="x"), c("a", image="y")]}},
     pod(containers=[c("b"), c("c", image="x"), c("a", image="y")])),
    ("merge list: $patch delete element", POD,
     pod(containers=[c("a"), c("b")]),
     {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}},
     pod(containers=[c("b")])),
    ("merge list: $patch replace list", POD,
     pod(containers=[c("a"), c("b")]),
     {"spec": {"containers": [c("z"), {"$patch": "replace"}]}},
     pod(containers=[c("z")])),
    ("merge list: null inside element deletes field", POD,
     pod(containers=[c("a", image="1", workingDir="/x")]),
     {"spec": {"containers": [c("a", workingDir=None)]}},
     pod(containers=[c("a", image="1")])),
    ("nested merge list: env by name", POD,
     pod(containers=[c("a", env=[{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}])]),
     {"spec": {"containers": [c("a", env=[{"name": "Y", "value": "3"}])]}},
     pod(containers=[c("a", env=[{"name": "X", "value": "1"}, {"name": "Y", "value": "3"}])])),
    ("nested merge list: ports by containerPort", POD,
     pod(containers=[c("a", ports=[{"containerPort": 80, "name": "http"}])]),
     {"spec": {"containers": [c("a", ports=[{"containerPort": 443, "name": "https"}])]}},
     pod(containers=[c("a", ports=[{"containerPort": 443, "name": "https"},
                                    {"containerPort": 80, "name": "http"}])])),
    ("nested merge list: volumeMounts delete", POD,
     pod(containers=[c("a", volumeMounts=[{"mountPath": "/a", "name": "v"},
                                          {"mountPath": "/b", "name": "w"}])]),
     {"spec": {"containers": [c("a", volumeMounts=[{"mountPath": "/a", "$patch": "delete"}])]}},
     pod(containers=[c("a", volumeMounts=[{"mountPath": "/b", "name": "w"}])])),
    ("initContainers merge by name", POD,
     pod(initContainers=[c("i", image="1")]), {"spec": {"initContainers": [c("i", image="2")]}},
     pod(initContainers=[c("i", image="2")])),
    ("imagePullSecrets merge by name", POD,
     pod(imagePullSecrets=[{"name": "a"}]), {"spec": {"imagePullSecrets": [{"name": "b"}]}},
     pod(imagePullSecrets=[{"name": "b"}, {"name": "a"}])),
    ("hostAliases merge by ip", POD,
     pod(hostAliases=[{"ip": "1.1.1.1", "hostnames": ["a"]}]),
     {"spec": {"hostAliases": [{"ip": "1.1.1.1", "hostnames": ["b"]}]}},
     pod(hostAliases=[{"ip": "1.1.1.1", "hostnames": ["b"]}])),
    ("status conditions merge by type", POD,
     {"status": {"conditions": [{"type": "Ready", "status": "False"},
                                {"type": "X", "status": "True"}]}},
     {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
     {"status": {"conditions": [{"type": "Ready", "status": "True"},
                                {"type": "X", "status": "True"}]}}),
    ("ownerReferences merge by uid", POD,
     {"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}]}},
     {"metadata": {"ownerReferences": [{"uid": "2", "name": "b"}]}},
     {"metadata": {"ownerReferences": [{"uid": "2", "name": "b"}, {"uid": "1", "name": "a"}]}}),
    ("merge list absent in original is taken, directives removed", POD,
     pod(), {"spec": {"containers": [c("a"), {"name": "b", "$patch": "delete"}]}},
     pod(containers=[c("a")])),
    # --- primitive merge lists
    ("finalizers are a set union", POD,
     {"metadata": {"finalizers": ["a", "b"]}}, {"metadata": {"finalizers": ["b", "c"]}},
     {"metadata": {"finalizers": ["a", "b", "c"]}}),
    ("$deleteFromPrimitiveList removes values", POD,
     {"metadata": {"finalizers": ["a", "b", "c"]}},
     {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}},
     {"metadata": {"finalizers": ["a", "c"]}}),
    ("$deleteFromPrimitiveList on missing list is ignored", POD,
     {"metadata": {}}, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}},
     {"metadata": {}}),
    ("primitive merge list: interleaved by live order", POD,
     {"metadata": {"finalizers": ["a", "b", "c"]}}, {"metadata": {"finalizers": ["c", "a"]}},
     {"metadata": {"finalizers": ["b", "c", "a"]}}),
    # --- $setElementOrder
    ("$setElementOrder orders a merge list", POD,
     pod(containers=[c("a"), c("b"), c("c")]),
     {"spec": {"$setElementOrder/containers": [{"name": "c"}, {"name": "b"}, {"name": "a"}],
               "containers": [c("b", image="x")]}},
     pod(containers=[c("c"), c("b", image="x"), c("a")])),
    ("$setElementOrder with an added element", POD,
     pod(containers=[c("a"), c("b")]),
     {"spec": {"$setElementOrder/containers": [{"name": "a"}, {"name": "new"}, {"name": "b"}],
               "containers": [c("new")]}},
     pod(containers=[c("a"), c("new"), c("b")])),
    ("$setElementOrder with deletion", POD,
     pod(containers=[c("a"), c("b"), c("c")]),
     {"spec": {"$setElementOrder/containers": [{"name": "c"}, {"name": "a"}],
               "containers": [{"name": "b", "$patch": "delete"}]}},
     pod(containers=[c("c"), c("a")])),
    ("$setElementOrder for primitives with deletion list", POD,
     {"metadata": {"finalizers": ["a", "b"]}},
     {"metadata": {"$setElementOrder/finalizers": ["c", "a"], "finalizers": ["c"],
                   "$deleteFromPrimitiveList/finalizers": ["b"]}},
     {"metadata": {"finalizers": ["c", "a"]}}),
    ("$setElementOrder without patch list only reorders", POD,
     {"metadata": {"finalizers": ["a", "b"]}}, {"metadata": {
         "$setElementOrder/finalizers": ["b", "a"]}},
     {"metadata": {"finalizers": ["b", "a"]}}),
    # --- $retainKeys
    ("$retainKeys clears unlisted keys (deployment strategy)", DEPLOY,
     {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
     {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
     {"spec": {"strategy": {"type": "Recreate"}}}),
    ("$retainKeys keeps listed keys and merges", DEPLOY,
     {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
     {"spec": {"strategy": {"$retainKeys": ["type", "rollingUpdate"],
                            "rollingUpdate": {"maxUnavailable": 2}}}},
     {"spec": {"strategy": {"type": "RollingUpdate",
                            "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 2}}}}),
    ("$retainKeys in a volume list element", POD,
     pod(volumes=[{"name": "v", "emptyDir": {}}]),
     {"spec": {"volumes": [{"name": "v", "$retainKeys": ["name", "hostPath"],
                            "hostPath": {"path": "/x"}}]}},
     pod(volumes=[{"name": "v", "hostPath": {"path": "/x"}}])),
    # --- templates reach the pod spec
    ("deployment template containers merge by name", DEPLOY,
     {"spec": {"template": {"spec": {"containers": [c("a", image="1"), c("b", image="1")]}}}},
     {"spec": {"template": {"spec": {"containers": [c("a", image="2")]}}}},
     {"spec": {"template": {"spec": {"containers": [c("a", image="2"), c("b", image="1")]}}}}),
    ("deployment template labels merge", DEPLOY,
     {"spec": {"template": {"metadata": {"labels": {"a": "1"}}}}},
     {"spec": {"template": {"metadata": {"labels": {"b": "2"}}}}},
     {"spec": {"template": {"metadata": {"labels": {"a": "1", "b": "2"}}}}}),
    ("service ports merge by port", patch_meta_for("", "Service"),
     {"spec": {"ports": [{"port": 80, "name": "a"}]}},
     {"spec": {"ports": [{"port": 80, "name": "b"}]}},
     {"spec": {"ports": [{"port": 80, "name": "b"}]}}),
    ("unknown schema: lists replaced, maps merged", PatchMeta("X", None),
     {"a": {"b": 1}, "l": [1, 2]}, {"a": {"c": 2}, "l": [3]}, {"a": {"b": 1, "c": 2}, "l": [3]}),
    ("pdb selector has replace strategy", patch_meta_for("policy", "PodDisruptionBudget"),
     {"spec": {"selector": {"matchLabels": {"a": "1"}}}},
     {"spec": {"selector": {"matchExpressions": []}}},
     {"spec": {"selector": {"matchExpressions": []}}}),
]


class StrategicMergeTableTests(SynchronousTestCase):
    """The table of directives and strategies."""

    def test_table(self):
        """Every case gives exactly the expected object (list order included)."""
        self.assertTrue(len(CASES) >= 40)
        for desc, schema, original, patch, expected in CASES:
            got = apply_strategic_merge_patch(original, patch, schema)
            self.assertEqual(got, expected, desc)

    def test_inputs_not_modified(self):
        """Neither the document nor the patch is changed."""
        original = pod(containers=[c("a")])
        patch = {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}
        apply_strategic_merge_patch(original, patch, POD)
        self.assertEqual(original, pod(containers=[c("a")]))
        self.assertEqual(patch, {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}})

    def test_bytes_patch(self):
        """A JSON body is accepted."""
        self.assertEqual(apply_strategic_merge_patch({"a": 1}, b'{"a": 2}', POD), {"a": 2})


class StrategicMergeErrorTests(SynchronousTestCase):
    """Errors, as kube-apiserver reports them."""

    def assertStatus(self, original, patch, code, reason, message, schema=POD):
        err = self.assertRaises(StatusError, apply_strategic_merge_patch, original, patch, schema)
        self.assertEqual((err.code, err.reason, err.message), (code, reason, message))
        return err

    def test_bad_retain_keys(self):
        """A patch key not listed in C{$retainKeys} is a 400."""
        self.assertStatus(
            {"spec": {"strategy": {}}}, {"spec": {"strategy": {"$retainKeys": ["type"], "x": 1}}},
            400, "BadRequest", "invalid patch format of retainKeys", DEPLOY,
        )

    def test_bad_delete_list_key(self):
        """C{$deleteFromPrimitiveList} without a field is a 400."""
        self.assertStatus(
            {"metadata": {"finalizers": ["a"]}}, {"metadata": {"$deleteFromPrimitiveList": ["a"]}},
            400, "BadRequest", "invalid patch format of primitive list",
        )

    def test_bad_set_order(self):
        """C{$setElementOrder} whose value is not a list is rejected."""
        err = self.assertRaises(
            StatusError, apply_strategic_merge_patch,
            {"metadata": {}}, {"metadata": {"$setElementOrder/finalizers": "x"}}, POD,
        )
        self.assertEqual(err.code, 500)
        self.assertEqual(err.message, "expected a []interface {}, but received a string")

    def test_list_of_lists(self):
        """Lists of lists are a 422 with the generic message and empty details."""
        err = self.assertStatus(
            {"metadata": {"finalizers": [["a"]]}}, {"metadata": {"finalizers": [["b"]]}},
            422, "Invalid", "the server rejected our request due to an error in our request",
        )
        self.assertEqual(err.status["details"], {})

    def test_missing_merge_key(self):
        """An element without its merge key is a 500 with Go's map printing."""
        err = self.assertStatus(
            pod(containers=[c("a")]), {"spec": {"containers": [{"image": "x", "n": 8080}]}},
            500, "", "map: map[image:x n:8080] does not contain declared merge key: name",
        )
        self.assertNotIn("reason", err.status)

    def test_unknown_patch_type(self):
        """An unknown C{$patch} value in a map."""
        self.assertStatus(
            {"a": {}}, {"a": {"$patch": "foo"}}, 500, "",
            "unknown patch type: foo in map: map[$patch:foo]",
        )

    def test_list_merge_directive(self):
        """C{$patch: merge} in a list is not supported."""
        self.assertStatus(
            pod(containers=[c("a")]), {"spec": {"containers": [{"$patch": "merge"}]}},
            500, "", "merging lists cannot yet be specified in the patch",
        )

    def test_not_an_object(self):
        """A body that is not a JSON object is a 400."""
        self.assertStatus(
            {}, b"[1]", 400, "BadRequest",
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
        )


class PatchMetaTests(SynchronousTestCase):
    """The merge-key table."""

    def test_lookup(self):
        """Lookups follow the struct graph to the tagged field."""
        spec, _, _ = DEPLOY.lookup_struct("spec")
        tmpl, _, _ = spec.lookup_struct("template")
        pspec, _, _ = tmpl.lookup_struct("spec")
        sub, strategies, key = pspec.lookup_slice("volumes")
        self.assertEqual((strategies, key), (["merge", "retainKeys"], "name"))
        cont, strategies, key = pspec.lookup_slice("containers")
        self.assertEqual((strategies, key), (["merge"], "name"))
        self.assertEqual(cont.lookup_slice("volumeMounts")[1:], (["merge"], "mountPath"))

    def test_unknown(self):
        """Unknown kinds have no metadata; unknown fields no strategy."""
        self.assertIsNone(patch_meta_for("example.com", "Widget"))
        self.assertEqual(POD.lookup_struct("nope")[1:], ([], ""))
