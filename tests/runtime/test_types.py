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


class MarkerTests(SynchronousTestCase):
    """Struct-level and field-level markers of upstream's Go types (k8s.io/api v0.32)."""

    def field(self, type_name: str, json_name: str) -> types.FieldDef:
        for f in types.TYPES[type_name].fields:
            if f.json_name == json_name:
                return f
        raise KeyError(json_name)

    def test_parse_row_flags_and_default(self) -> None:
        """The C{"r"} flag sets C{required}; an extra C{default} lands in C{default}."""
        f = types.parse_row(CORE, ("protocol", 3, "string", "o", {"default": "TCP"}))
        self.assertEqual((f.omitempty, f.required, f.default), (True, False, "TCP"))
        f = types.parse_row(CORE, ("name", 1, "string", "r"))
        self.assertEqual((f.omitempty, f.required, f.default), (False, True, None))

    def test_required_follows_optional_markers(self) -> None:
        """
        Required: neither C{+optional} nor C{omitempty} (Container.name), or C{+required};
        C{+optional} wins over a missing C{omitempty} (ObjectMeta fields are all optional).
        """
        self.assertTrue(self.field(f"{CORE}.Container", "name").required)
        self.assertFalse(self.field(f"{CORE}.Container", "image").required)
        self.assertTrue(self.field("io.k8s.api.apps.v1.DeploymentSpec", "template").required)
        self.assertFalse(self.field("io.k8s.api.apps.v1.DeploymentSpec", "replicas").required)
        self.assertEqual([f.json_name for f in types.TYPES[f"{META}.ObjectMeta"].fields
                          if f.required], [])

    def test_struct_types(self) -> None:
        """The C{+structType=atomic} structs, and only those, are atomic."""
        atomic = sorted(name for name, t in types.TYPES.items() if t.struct_type == "atomic")
        self.assertEqual(atomic, sorted([
            "io.k8s.api.admissionregistration.v1.MatchResources",
            "io.k8s.api.admissionregistration.v1.NamedRuleWithOperations",
            "io.k8s.api.admissionregistration.v1.ParamKind",
            "io.k8s.api.admissionregistration.v1.ParamRef",
            "io.k8s.api.admissionregistration.v1.Variable",
            "io.k8s.api.autoscaling.v1.CrossVersionObjectReference",
            f"{CORE}.ConfigMapKeySelector", f"{CORE}.EndpointAddress", f"{CORE}.EndpointPort",
            f"{CORE}.LocalObjectReference", f"{CORE}.NodeSelector", f"{CORE}.NodeSelectorTerm",
            f"{CORE}.ObjectFieldSelector", f"{CORE}.ObjectReference",
            f"{CORE}.ResourceFieldSelector", f"{CORE}.ScopeSelector", f"{CORE}.SecretKeySelector",
            f"{CORE}.SecretReference", f"{CORE}.TopologySelectorTerm",
            f"{CORE}.TypedLocalObjectReference",
            "io.k8s.api.discovery.v1.EndpointPort",
            "io.k8s.api.networking.v1.ServiceBackendPort",
            "io.k8s.api.rbac.v1.RoleRef", "io.k8s.api.rbac.v1.Subject",
            f"{META}.LabelSelector", f"{META}.OwnerReference",
        ]))

    def test_unions(self) -> None:
        """C{+union} structs carry their discriminator and members."""
        self.assertEqual(types.TYPES["io.k8s.api.flowcontrol.v1.LimitResponse"].unions,
                         (("type", {"queuing": "Queuing"}),))
        self.assertEqual(types.TYPES[f"{CORE}.PodSpec"].unions, ())

    def test_field_selector_requirement_is_meta(self) -> None:
        """FieldSelectorAttributes.requirements holds meta/v1 FieldSelectorRequirements."""
        f = self.field("io.k8s.api.authorization.v1.FieldSelectorAttributes", "requirements")
        self.assertEqual(f.type, f"{META}.FieldSelectorRequirement")

    def test_apply_schema_uses_markers(self) -> None:
        """
        Server-side apply's schema takes atomic structs and list-map key defaults from the
        tables: LabelSelector and ObjectReference are atomic, PodSpec is not, and a
        list-map item missing a key is keyed by the key's OpenAPI default: the
        C{+default="TCP"} marker, or the zero value enforced on a non-omitempty scalar.
        """
        from kubetwist.apimachinery.fieldmanager import typed

        self.assertTrue(typed.for_type(f"{META}.LabelSelector").atomic)
        self.assertTrue(typed.for_type(f"{CORE}.ObjectReference").atomic)
        self.assertFalse(typed.for_type(f"{CORE}.PodSpec").atomic)
        ports = typed.for_type(f"{CORE}.Container").field_schema("ports")
        self.assertEqual((ports.list_type, ports.keys, ports.key_defaults),
                         ("map", ("containerPort", "protocol"),
                          {"containerPort": 0, "protocol": "TCP"}))
        containers = typed.for_type(f"{CORE}.PodSpec").field_schema("containers")
        self.assertEqual(containers.key_defaults, {"name": ""})
        conditions = typed.for_type(f"{CORE}.PodStatus").field_schema("conditions")
        self.assertEqual((conditions.keys, conditions.key_defaults), (("type",), {"type": ""}))
