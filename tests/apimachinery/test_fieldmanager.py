# -*- test-case-name: tests.apimachinery.test_fieldmanager -*-
"""
Tests for L{kubetwist.apimachinery.fieldmanager}: field paths and C{fieldsV1}, typed field
sets over atomic/set/map lists, compare, merge, and the apply/update bookkeeping (conflicts,
force, removal of dropped fields, timestamps, order) as upstream's structured-merge-diff and
C{managedfields} packages do it.
"""

from __future__ import annotations

import copy
import json

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apimachinery.fieldmanager import FieldManager, manager_or_user_agent, typed
from kubetwist.apimachinery.fieldmanager import merge as m
from kubetwist.apimachinery.fieldmanager.fieldpath import Set, path_string
from kubetwist.runtime.errors import StatusError


def F(name):
    return ("f", name)


#: A Deployment's Update entry recorded by kube-apiserver for a create (manager
#: GoogleCloudConsole, from a public cluster dump).
UPSTREAM_CREATE_FIELDS = (
    '{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:progressDeadlineSeconds":{},'
    '"f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{'
    '"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},'
    '"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{'
    '"k:{\\"name\\":\\"crud-sha256-1\\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},'
    '"f:name":{},"f:resources":{},"f:terminationMessagePath":{},'
    '"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},'
    '"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}}'
)


def _deployment(replicas: int = 3, labels: dict | None = None) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "nginx", "labels": labels if labels is not None
                     else {"app": "nginx"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {"metadata": {"labels": {"app": "nginx"}}, "spec": {"containers": [
                {"name": "nginx", "image": "nginx:1.14.2", "ports": [{"containerPort": 80}]}]}},
        },
    }


def _manager(clock: Clock) -> FieldManager:
    return FieldManager(typed.for_kind("apps", "v1", "Deployment"), "apps/v1", clock,
                        reset_fields=Set.of((F("status"),)),
                        zero=typed.zero_value("apps", "v1", "Deployment"))


def _entries(obj: dict) -> list:
    return [(e["manager"], e["operation"]) for e in obj["metadata"].get("managedFields", [])]


class FieldsV1Tests(SynchronousTestCase):
    def test_round_trip_upstream_entry(self) -> None:
        """An upstream C{fieldsV1} decodes and encodes back to the identical JSON text."""
        doc = json.loads(UPSTREAM_CREATE_FIELDS)
        s = Set.from_fields_v1(doc)
        self.assertEqual(json.dumps(s.to_fields_v1(), separators=(",", ":")),
                         UPSTREAM_CREATE_FIELDS)

    def test_element_order_and_markers(self) -> None:
        """Fields sort before keys, keys before values, values before indexes; C{"."} marks an
        element that is a member and has children."""
        s = Set.of((F("a"), ("i", 1)), (F("a"), ("v", '"x"')), (F("a"),),
                   (F("a"), ("k", (("name", '"n"'),)), F("b")), (F("a"), F("z")))
        self.assertEqual(json.dumps(s.to_fields_v1(), separators=(",", ":")),
                         '{"f:a":{".":{},"f:z":{},"k:{\\"name\\":\\"n\\"}":{"f:b":{}},'
                         '"v:\\"x\\"":{},"i:1":{}}}')

    def test_path_string(self) -> None:
        """Paths print as upstream's conflict messages print them."""
        path = (F("spec"), F("containers"), ("k", (("name", '"nginx"'),)), F("ports"),
                ("k", (("containerPort", "80"), ("protocol", '"TCP"'))), ("v", '"a"'),
                ("i", 2))
        self.assertEqual(path_string(path), '.spec.containers[name="nginx"].ports'
                                            '[containerPort=80,protocol="TCP"][="a"][2]')

    def test_set_algebra(self) -> None:
        """Union, intersection, difference and recursive difference."""
        a = Set.of((F("a"),), (F("b"), F("c")), (F("b"), F("d")))
        b = Set.of((F("b"), F("c")), (F("x"),))
        self.assertEqual(sorted(map(path_string, a.union(b).paths())),
                         [".a", ".b.c", ".b.d", ".x"])
        self.assertEqual(list(map(path_string, a.intersection(b).paths())), [".b.c"])
        self.assertEqual(list(map(path_string, a.difference(b).paths())), [".a", ".b.d"])
        self.assertEqual(list(map(path_string, a.recursive_difference(Set.of((F("b"),)))
                                  .paths())), [".a"])


class FieldSetTests(SynchronousTestCase):
    def test_list_kinds(self) -> None:
        """A map list is keyed by its keys (with the key's default), a set list by value, an
        atomic list is one leaf; a granular map's keys are members."""
        pod = typed.for_kind("", "v1", "Pod")
        obj = {"metadata": {"finalizers": ["a", "b"], "labels": {"x": "1"}},
               "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}],
                                        "command": ["sh"]}]}}
        got = [path_string(p) for p in m.to_field_set(obj, pod).paths()]
        self.assertEqual(got, [
            '.metadata.finalizers[="a"]', '.metadata.finalizers[="b"]', ".metadata.labels.x",
            '.spec.containers[name="c"]', '.spec.containers[name="c"].command',
            '.spec.containers[name="c"].name',
            '.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"]',
            '.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"].containerPort',
        ])

    def test_atomic_struct(self) -> None:
        """C{+structType=atomic} (LabelSelector) is one leaf."""
        dep = typed.for_kind("apps", "v1", "Deployment")
        got = m.to_field_set({"spec": {"selector": {"matchLabels": {"a": "b"}}}}, dep)
        self.assertEqual([path_string(p) for p in got.paths()], [".spec.selector"])

    def test_undeclared_field(self) -> None:
        """An undeclared struct field is upstream's schema error."""
        dep = typed.for_kind("apps", "v1", "Deployment")
        with self.assertRaises(m.SchemaError) as e:
            m.to_field_set({"spec": {"foo": 1}}, dep)
        self.assertEqual(str(e.exception), ".spec.foo: field not declared in schema")

    def test_structural_schema(self) -> None:
        """A CRD schema's list types, map type and preserve-unknown-fields are honoured."""
        schema = typed.for_structural({"type": "object", "properties": {"spec": {
            "type": "object", "properties": {
                "items": {"type": "array", "x-kubernetes-list-type": "map",
                          "x-kubernetes-list-map-keys": ["id"],
                          "items": {"type": "object", "properties": {
                              "id": {"type": "integer"}, "v": {"type": "string"}}}},
                "tags": {"type": "array", "x-kubernetes-list-type": "set",
                         "items": {"type": "string"}},
                "sel": {"type": "object", "x-kubernetes-map-type": "atomic",
                        "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            }}}})
        obj = {"spec": {"items": [{"id": 1, "v": "a"}], "tags": ["t"], "sel": {"a": "b"},
                        "free": {"x": {"y": 1}}}}
        got = [path_string(p) for p in m.to_field_set(obj, schema).paths()]
        self.assertEqual(got, [".spec.free.x", ".spec.free.x.y", ".spec.items[id=1]",
                               ".spec.items[id=1].id", ".spec.items[id=1].v", ".spec.sel",
                               '.spec.tags[="t"]'])


class MergeTests(SynchronousTestCase):
    def test_merge_map_list(self) -> None:
        """Map-list items merge by key: live-only items stay, config order wins for shared."""
        pod = typed.for_kind("", "v1", "Pod")
        live = {"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b"},
                                        {"name": "c"}]}}
        config = {"spec": {"containers": [{"name": "c", "image": "3"}, {"name": "a"}]}}
        out = m.merge(live, config, pod)
        self.assertEqual(out["spec"]["containers"], [
            {"name": "b"}, {"name": "c", "image": "3"}, {"name": "a", "image": "1"}])

    def test_compare_added_container(self) -> None:
        """An absent list or map that appears is itself added, with its leaves."""
        dep = typed.for_kind("apps", "v1", "Deployment")
        cmp = m.compare({"metadata": {}}, {"metadata": {"labels": {"a": "b"}}}, dep)
        self.assertEqual([path_string(p) for p in cmp.added.paths()],
                         [".metadata.labels", ".metadata.labels.a"])
        self.assertTrue(cmp.modified.empty())


class ApplyTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.clock = Clock()
        self.clock.advance(1700000000)
        self.fm = _manager(self.clock)

    def test_create_update_entry(self) -> None:
        """A create records upstream's fields for the defaulted Deployment."""
        obj = {"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "crud", "labels": {"app": "crud"}},
               "spec": {"replicas": 1, "revisionHistoryLimit": 10,
                        "progressDeadlineSeconds": 600,
                        "selector": {"matchLabels": {"app": "crud"}},
                        "strategy": {"type": "RollingUpdate", "rollingUpdate": {
                            "maxUnavailable": "25%", "maxSurge": "25%"}},
                        "template": {"metadata": {"labels": {"app": "crud"},
                                                  "creationTimestamp": None},
                                     "spec": {"containers": [{
                                         "name": "crud-sha256-1", "image": "i",
                                         "imagePullPolicy": "IfNotPresent",
                                         "terminationMessagePath": "/dev/termination-log",
                                         "terminationMessagePolicy": "File",
                                         "resources": {}}],
                                         "dnsPolicy": "ClusterFirst",
                                         "restartPolicy": "Always", "securityContext": {},
                                         "terminationGracePeriodSeconds": 30,
                                         "schedulerName": "default-scheduler"}}}}
        out = self.fm.update(None, obj, "GoogleCloudConsole")
        [entry] = out["metadata"]["managedFields"]
        self.assertEqual(
            (entry["manager"], entry["operation"], entry["apiVersion"], entry["time"],
             entry["fieldsType"], json.dumps(entry["fieldsV1"], separators=(",", ":"))),
            ("GoogleCloudConsole", "Update", "apps/v1", "2023-11-14T22:13:20Z", "FieldsV1",
             UPSTREAM_CREATE_FIELDS))

    def test_conflict(self) -> None:
        """Changing a field another applier owns is upstream's 409 with causes."""
        live = self.fm.apply(None, _deployment(), "kubectl", False)
        with self.assertRaises(StatusError) as e:
            self.fm.apply(live, _deployment(5), "other", False)
        self.assertEqual(e.exception.status, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas',
            "reason": "Conflict",
            "details": {"causes": [{"reason": "FieldManagerConflict",
                                    "message": 'conflict with "kubectl"',
                                    "field": ".spec.replicas"}]},
            "code": 409})

    def test_conflicts_several(self) -> None:
        """Several conflicts are listed per manager, an Update manager with its version."""
        live = self.fm.update(None, _deployment(), "creator")
        config = _deployment(5, {"app": "other"})
        with self.assertRaises(StatusError) as e:
            self.fm.apply(live, config, "applier", False)
        self.assertEqual(e.exception.message,
                         'Apply failed with 2 conflicts: conflicts with "creator" using '
                         'apps/v1:\n- .metadata.labels.app\n- .spec.replicas')

    def test_same_value_is_shared(self) -> None:
        """Applying the same value is no conflict: both managers own the field."""
        live = self.fm.apply(None, _deployment(), "kubectl", False)
        out = self.fm.apply(live, _deployment(), "other", False)
        self.assertEqual(_entries(out), [("kubectl", "Apply"), ("other", "Apply")])

    def test_force_takes_over(self) -> None:
        """C{force} moves the field to the applier."""
        live = self.fm.apply(None, _deployment(), "kubectl", False)
        out = self.fm.apply(live, _deployment(5), "other", True)
        self.assertEqual(out["spec"]["replicas"], 5)
        sets = {e["manager"]: e["fieldsV1"] for e in out["metadata"]["managedFields"]}
        self.assertNotIn("f:replicas", sets["kubectl"]["f:spec"])
        self.assertIn("f:replicas", sets["other"]["f:spec"])

    def test_removal_of_dropped_fields(self) -> None:
        """A field dropped from the config is removed unless another manager owns it."""
        live = self.fm.apply(None, _deployment(labels={"app": "nginx", "tier": "web"}),
                             "kubectl", False)
        out = self.fm.apply(live, _deployment(), "kubectl", False)
        self.assertEqual(out["metadata"]["labels"], {"app": "nginx"})
        live = self.fm.apply(None, _deployment(labels={"app": "nginx", "tier": "web"}),
                             "kubectl", False)
        live = self.fm.apply(live, {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "metadata": {"name": "nginx", "labels": {"tier": "web"}}},
                             "other", False)
        out = self.fm.apply(live, _deployment(), "kubectl", False)
        self.assertEqual(out["metadata"]["labels"], {"app": "nginx", "tier": "web"})

    def test_update_drops_empty_manager(self) -> None:
        """A manager whose fields all moved away loses its entry; the entries sort Apply
        first, then by time."""
        live = self.fm.update(None, _deployment(), "creator")
        self.clock.advance(60)
        live = self.fm.apply(live, _deployment(7), "applier", True)
        self.assertEqual(_entries(live), [("applier", "Apply"), ("creator", "Update")])
        self.clock.advance(60)
        new = copy.deepcopy(live)
        new["spec"]["replicas"] = 9
        out = self.fm.update(live, new, "scaler")
        self.assertEqual(_entries(out), [("applier", "Apply"), ("creator", "Update"),
                                         ("scaler", "Update")])
        self.assertEqual(out["metadata"]["managedFields"][2]["time"], "2023-11-14T22:15:20Z")

    def test_empty_list_resets(self) -> None:
        """An update sending C{managedFields: []} clears the history."""
        live = self.fm.update(None, _deployment(), "creator")
        new = copy.deepcopy(live)
        new["metadata"]["managedFields"] = []
        out = self.fm.update(live, new, "x")
        self.assertNotIn("managedFields", out["metadata"])

    def test_update_of_untracked_object_records_nothing(self) -> None:
        """An update of a stored object (it has a uid) without managed fields records none:
        upstream's C{skipNonAppliedManager} starts tracking on create only (recorded:
        tests/vectors/rbac.jsonl C{role-update-no-rv})."""
        live = _deployment()
        live["metadata"]["uid"] = "0b0e5a0c-7b1e-4d1e-9a51-3a6f0e0c0d01"
        new = copy.deepcopy(live)
        new["spec"]["replicas"] = 5
        out = self.fm.update(live, new, "x")
        self.assertNotIn("managedFields", out["metadata"])
        created = self.fm.update(None, copy.deepcopy(new), "x")
        self.assertEqual([e["manager"] for e in created["metadata"]["managedFields"]], ["x"])

    def test_managed_fields_in_apply(self) -> None:
        """An applied config carrying managedFields is a 400."""
        config = _deployment()
        config["metadata"]["managedFields"] = [{"manager": "x"}]
        with self.assertRaises(StatusError) as e:
            self.fm.apply(None, config, "kubectl", False)
        self.assertEqual((e.exception.code, e.exception.message),
                         (400, "metadata.managedFields must be nil"))

    def test_unknown_field(self) -> None:
        """An applied field outside the schema is upstream's 500 with its text."""
        config = _deployment()
        config["metadata"]["namespace"] = "default"
        config["spec"]["foo"] = 1
        with self.assertRaises(StatusError) as e:
            self.fm.apply(None, config, "kubectl", False)
        self.assertEqual((e.exception.code, e.exception.reason, e.exception.message),
                         (500, "", ("failed to create typed patch object (default/nginx; "
                                   "apps/v1, Kind=Deployment): .spec.foo: field not declared "
                                   "in schema")))

    def test_before_first_apply(self) -> None:
        """Applying over an object without managedFields records its fields for
        C{before-first-apply}, which then conflicts."""
        with self.assertRaises(StatusError) as e:
            self.fm.apply(_deployment(), _deployment(5), "kubectl", False)
        self.assertEqual(e.exception.message,
                         'Apply failed with 1 conflict: conflict with "before-first-apply" '
                         'using apps/v1: .spec.replicas')

    def test_status_reset_fields_ignored(self) -> None:
        """Fields the strategy resets (C{status} on the main resource) are never owned."""
        config = _deployment()
        config["status"] = {"replicas": 3}
        out = self.fm.apply(None, config, "kubectl", False)
        self.assertNotIn("f:status", out["metadata"]["managedFields"][0]["fieldsV1"])

    def test_cap_update_managers(self) -> None:
        """Beyond ten Update managers the oldest merge into C{ancient-changes}."""
        live = self.fm.update(None, _deployment(), "m0")
        for i in range(1, 12):
            self.clock.advance(1)
            new = copy.deepcopy(live)
            new["metadata"]["labels"][f"l{i}"] = "x"
            live = self.fm.update(live, new, f"m{i}")
        managers = [e["manager"] for e in live["metadata"]["managedFields"]]
        self.assertEqual(len(managers), 10)
        self.assertIn("ancient-changes", managers)
        self.assertNotIn("m0", managers)


class ManagerNameTests(SynchronousTestCase):
    def test_user_agent_prefix(self) -> None:
        """Without C{fieldManager} the manager is the User-Agent before its first C{/}."""
        self.assertEqual(manager_or_user_agent("", "kubectl/v1.32.0 (linux/amd64)"), "kubectl")
        self.assertEqual(manager_or_user_agent("mine", "kubectl/v1.32.0"), "mine")
        self.assertEqual(manager_or_user_agent("", "a\x01b" + "c" * 200), "ab" + "c" * 126)
        self.assertEqual(manager_or_user_agent("", ""), "unknown")
        self.assertEqual(manager_or_user_agent("", "\x01/1.0"), "unknown")
