"""
Tests for L{kubetwist.runtime.types}: the field tables are consistent and carry the upstream
facts the codec and later the OpenAPI / strategic-merge builders rely on.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.runtime import types

META = "io.k8s.apimachinery.pkg.apis.meta.v1"
CORE = "io.k8s.api.core.v1"


class RegistryTests(SynchronousTestCase):
    """The registry is closed and well-formed."""

    def test_references_resolve(self) -> None:
        """Every message type a field names is itself defined."""
        missing = {
            (name, f.json_name, f.type)
            for name, tdef in types.TYPES.items()
            for f in tdef.fields
            if f.is_message and f.type not in types.TYPES
        }
        self.assertEqual(missing, set())

    def test_numbers_and_names_unique(self) -> None:
        """Within a type, field numbers and JSON names are unique."""
        for name, tdef in types.TYPES.items():
            numbers = [f.number for f in tdef.fields]
            self.assertEqual(len(numbers), len(set(numbers)), name)
            names = [f.json_name for f in tdef.fields if not f.inline]
            self.assertEqual(len(names), len(set(names)), name)
            self.assertEqual(set(tdef.by_number), set(numbers), name)

    def test_kinds(self) -> None:
        """The served kinds map to their types; meta kinds resolve under any group."""
        expected = {
            ("", "v1", k) for k in (
                "Namespace", "ConfigMap", "Secret", "Service", "Endpoints", "ServiceAccount",
                "Event", "Pod", "PodTemplate", "ReplicationController",
                "PersistentVolumeClaim")
        } | {("apps", "v1", k) for k in (
            "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ControllerRevision")} | {
            ("coordination.k8s.io", "v1", "Lease"),
            ("policy", "v1", "PodDisruptionBudget"),
        }
        for gvk in expected:
            self.assertEqual(types.KINDS[gvk].rsplit(".", 1)[1], gvk[2])
            list_gvk = (gvk[0], gvk[1], gvk[2] + "List")
            self.assertIn(types.KINDS[list_gvk], types.TYPES)
        self.assertEqual(types.KINDS[("autoscaling", "v1", "Scale")],
                         "io.k8s.api.autoscaling.v1.Scale")
        self.assertEqual(types.lookup_kind("apps", "v1", "DeleteOptions"),
                         f"{META}.DeleteOptions")
        self.assertEqual(types.lookup_kind("", "v1", "List"), f"{META}.List")
        self.assertIsNone(types.lookup_kind("example.com", "v1", "Widget"))


class FieldFactTests(SynchronousTestCase):
    """Spot checks of rows against upstream's struct tags."""

    def field(self, type_name: str, json_name: str) -> types.FieldDef:
        for f in types.TYPES[type_name].fields:
            if f.json_name == json_name:
                return f
        raise KeyError(json_name)

    def test_object_meta(self) -> None:
        """ObjectMeta.creationTimestamp is a non-pointer Time at 8; labels a map at 11."""
        f = self.field(f"{META}.ObjectMeta", "creationTimestamp")
        self.assertEqual((f.number, f.type, f.pointer, f.omitempty), (8, "Time", False, True))
        f = self.field(f"{META}.ObjectMeta", "labels")
        self.assertEqual((f.number, f.type, f.container), (11, "string", "map"))
        f = self.field(f"{META}.ObjectMeta", "managedFields")
        self.assertEqual((f.number, f.container), (17, "list"))

    def test_pod_spec_containers(self) -> None:
        """PodSpec.containers: repeated Container at 2, not omitempty, merged on name."""
        f = self.field(f"{CORE}.PodSpec", "containers")
        self.assertEqual(
            (f.number, f.type, f.container, f.omitempty, f.patch_strategy, f.patch_merge_key,
             f.list_type, f.list_map_keys),
            (2, f"{CORE}.Container", "list", False, "merge", "name", "map", ("name",)))

    def test_inline(self) -> None:
        """Volume embeds VolumeSource inline under field number 2."""
        f = types.TYPES[f"{CORE}.Volume"].by_number[2]
        self.assertEqual((f.json_name, f.inline, f.type), ("", True, f"{CORE}.VolumeSource"))

    def test_pointers_and_specials(self) -> None:
        """Pointer scalars and special types are marked as such."""
        f = self.field("io.k8s.api.apps.v1.DeploymentSpec", "replicas")
        self.assertEqual((f.number, f.type, f.pointer), (1, "int32", True))
        f = self.field(f"{CORE}.ServicePort", "targetPort")
        self.assertEqual((f.number, f.type, f.pointer), (4, "IntOrString", False))
        f = self.field("io.k8s.api.coordination.v1.LeaseSpec", "renewTime")
        self.assertEqual((f.number, f.type, f.pointer), (4, "MicroTime", True))
        f = self.field(f"{CORE}.Secret", "data")
        self.assertEqual((f.number, f.type, f.container), (2, "bytes", "map"))

    def test_wire_order(self) -> None:
        """C{wire_order} sorts by number while C{fields} keeps Go's declaration order."""
        tdef = types.TYPES[f"{CORE}.PodSpec"]
        self.assertEqual([f.json_name for f in tdef.fields[:3]],
                         ["volumes", "initContainers", "containers"])
        self.assertEqual([f.number for f in tdef.wire_order[:3]], [1, 2, 3])
