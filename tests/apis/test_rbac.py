"""Tests for L{kubetwist.apis.rbac}: defaults, validation, printing, and the HTTP surface."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.rbac import register
from kubetwist.runtime import protobuf as pb
from tests.support import KubeTestCase

RBAC = "rbac.authorization.k8s.io"
S = register.STRATEGIES


def messages(errs) -> list[str]:
    return [e.error() for e in errs]


class RegisterTests(SynchronousTestCase):
    def test_resources(self) -> None:
        """Four kinds, bindings and roles namespaced, cluster ones not, no short names."""
        rows = {(r.resource, r.kind, r.namespaced, tuple(r.short_names))
                for r in register.RESOURCES}
        self.assertEqual(rows, {
            ("roles", "Role", True, ()), ("rolebindings", "RoleBinding", True, ()),
            ("clusterroles", "ClusterRole", False, ()),
            ("clusterrolebindings", "ClusterRoleBinding", False, ()),
        })
        self.assertTrue(all(s.allow_create_on_update for s in S.values()))


class DefaultTests(SynchronousTestCase):
    def test_binding_defaults(self) -> None:
        """roleRef.apiGroup and User/Group subject apiGroups default to the RBAC group."""
        b = {"roleRef": {"kind": "Role", "name": "r"},
             "subjects": [{"kind": "User", "name": "u"}, {"kind": "Group", "name": "g"},
                          {"kind": "ServiceAccount", "name": "s", "namespace": "n"}]}
        S["rolebindings"].default(b)
        self.assertEqual(b, {
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "r"},
            "subjects": [{"kind": "User", "name": "u", "apiGroup": RBAC},
                         {"kind": "Group", "name": "g", "apiGroup": RBAC},
                         {"kind": "ServiceAccount", "name": "s", "namespace": "n"}]})

    def test_role_rules_null(self) -> None:
        """A Role without rules prints rules: null, as a Go round trip does."""
        role = {"metadata": {"name": "r"}}
        S["roles"].default(role)
        self.assertEqual(role, {"metadata": {"name": "r"}, "rules": None})


class ValidationTests(SynchronousTestCase):
    def test_policy_rules(self) -> None:
        """Upstream's rule messages and paths, including non-resource URLs in a Role (printed
        with Go's C{%#v}, as kube-apiserver v1.32: C{tests/vectors/rbac.jsonl})."""
        role = {"metadata": {"name": "r", "namespace": "n"}, "rules": [
            {"verbs": ["get"], "nonResourceURLs": ["/x"], "resources": ["pods"]},
            {"verbs": [], "resources": ["a", "b"], "resourceNames": ["n"]},
        ]}
        self.assertEqual(messages(S["roles"].validate(role)), [
            ('rules[0].nonResourceURLs: Invalid value: []string{"/x"}: namespaced rules cannot '
            'apply to non-resource URLs'),
            ('rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both '
            'regular resources and non-resource URLs'),
            "rules[1].verbs: Required value: verbs must contain at least one value",
            ("rules[1].apiGroups: Required value: resource rules must supply at least one api "
            "group"),
            ("rules[1].resourceNames: Required value: resource names cannot apply to multiple "
            "resources"),
        ])

    def test_names_are_path_segments(self) -> None:
        """RBAC names only exclude '/', '%', '.' and '..' (system:foo is fine)."""
        ok = {"metadata": {"name": "system:auth-delegator"}, "rules": None}
        self.assertEqual(S["clusterroles"].validate(ok), [])
        bad = {"metadata": {"name": "a/b%"}}
        self.assertEqual(messages(S["clusterroles"].validate(bad)), [
            "metadata.name: Invalid value: \"a/b%\": may not contain '/'",
            "metadata.name: Invalid value: \"a/b%\": may not contain '%'",
        ])

    def test_aggregation_rule(self) -> None:
        """An aggregationRule needs at least one valid selector."""
        cr = {"metadata": {"name": "c"}, "aggregationRule": {}}
        self.assertEqual(messages(S["clusterroles"].validate(cr)), [
            ("aggregationRule.clusterRoleSelectors: Required value: at least one "
            "clusterRoleSelector required if aggregationRule is non-nil")])
        cr["aggregationRule"] = {"clusterRoleSelectors": [
            {"matchExpressions": [{"key": "a", "operator": "In"}]}]}
        self.assertEqual(messages(S["clusterroles"].validate(cr)), [
            ("aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values: Required "
            "value: must be specified when `operator` is 'In' or 'NotIn'")])

    def test_cluster_role_binding(self) -> None:
        """ClusterRoleBindings refer to ClusterRoles; SA subjects need a namespace."""
        b = {"metadata": {"name": "b"}, "roleRef": {"kind": "Role", "name": "r"},
             "subjects": [{"kind": "ServiceAccount", "name": "s"},
                          {"kind": "Robot", "name": "x"},
                          {"kind": "User", "name": "u", "apiGroup": "v1"}]}
        S["clusterrolebindings"].default(b)
        self.assertEqual(messages(S["clusterrolebindings"].validate(b)), [
            'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
            "subjects[0].namespace: Required value",
            ('subjects[1].kind: Unsupported value: "Robot": supported values: '
            '"ServiceAccount", "User", "Group"'),
            ('subjects[2].apiGroup: Unsupported value: "v1": supported values: '
            '"rbac.authorization.k8s.io"'),
        ])

    def test_role_ref_immutable(self) -> None:
        """Changing roleRef is refused with Go's %#v of the internal RoleRef."""
        old = {"metadata": {"name": "b", "namespace": "n", "resourceVersion": "1"},
               "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "a"}}
        new = {"metadata": dict(old["metadata"]),
               "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "b"}}
        self.assertEqual(messages(S["rolebindings"].validate_update(new, old)), [
            ('roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", '
            'Kind:"Role", Name:"b"}: cannot change roleRef')])


class PrinterTests(SynchronousTestCase):
    def test_binding_row(self) -> None:
        """Role column is kind/name; wide columns split subjects by kind."""
        table = S["rolebindings"].table
        self.assertEqual([c["name"] for c in table.columns],
                         ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"])
        row = table.row({"metadata": {"name": "b"}, "roleRef": {"kind": "Role", "name": "r"},
                         "subjects": [{"kind": "User", "name": "u1"},
                                      {"kind": "User", "name": "u2"},
                                      {"kind": "ServiceAccount", "name": "s", "namespace": "n"}]})
        self.assertEqual(row, ["b", "Role/r", "<unknown>", "u1, u2", "", "n/s"])

    def test_role_table(self) -> None:
        """Roles print Name and Created At (upstream's default table)."""
        table = S["roles"].table
        self.assertEqual([(c["name"], c["type"]) for c in table.columns],
                         [("Name", "string"), ("Created At", "date")])


class ProtobufTests(SynchronousTestCase):
    def test_role_binding_round_trip(self) -> None:
        """A RoleBinding survives protobuf encoding with Go's JSON field order."""
        obj = {"kind": "RoleBinding", "apiVersion": "rbac.authorization.k8s.io/v1",
               "metadata": {"name": "b", "namespace": "d", "creationTimestamp": None},
               "subjects": [{"kind": "User", "apiGroup": RBAC, "name": "u"}],
               "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "r"}}
        self.assertEqual(list(pb.decode(pb.encode(obj)).items()), list(obj.items()))


class HTTPTests(KubeTestCase):
    def test_create_and_table(self) -> None:
        """A ClusterRoleBinding is created with defaults and listed as a Table."""
        code, body, _ = self.request("POST", f"/apis/{RBAC}/v1/clusterrolebindings", {
            "apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "Group", "name": "g"}]})
        self.assertEqual(code, 201, body)
        self.assertEqual(body["roleRef"]["apiGroup"], RBAC)
        self.assertEqual(body["subjects"], [{"kind": "Group", "apiGroup": RBAC, "name": "g"}])
        code, table, _ = self.request(
            "GET", f"/apis/{RBAC}/v1/clusterrolebindings",
            headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        self.assertEqual(code, 200)
        self.assertEqual(table["rows"][0]["cells"][:2], ["b", "ClusterRole/view"])

    def test_invalid_role(self) -> None:
        """An invalid Role is refused with 422 and upstream's message."""
        code, body, _ = self.request("POST", f"/apis/{RBAC}/v1/namespaces/default/roles", {
            "apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": {"name": "r"},
            "rules": [{"verbs": ["get"]}]})
        self.assertEqual(code, 422)
        self.assertEqual(body["message"],
                         'Role.rbac.authorization.k8s.io "r" is invalid: [rules[0].apiGroups: '
                         "Required value: resource rules must supply at least one api group, "
                         "rules[0].resources: Required value: resource rules must supply at "
                         "least one resource]")
