"""
The bootstrap RBAC policy (C{rbac/bootstrap-roles}): what the hook creates equals
kube-apiserver v1.32's bootstrap objects (C{tests/vectors/rbac/upstream_bootstrap.json},
recorded by C{tools/record_rbac_bootstrap.py}), and reconciliation follows upstream's
C{autoupdate} rules.
"""

from __future__ import annotations

import json

from twisted.internet.defer import ensureDeferred
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authorization.rbac import covers
from kubetwist.authorization.rbac.bootstrap import reconcile_binding, reconcile_role
from kubetwist.registry.rbac.bootstrap import ensure_rbac_policy
from tests.support import KubeTestCase, repository_root

RBAC = "/apis/rbac.authorization.k8s.io/v1"
ASSIGNED = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation")


def load_vector() -> dict:
    path = repository_root() / "tests" / "vectors" / "rbac" / "upstream_bootstrap.json"
    return json.loads(path.read_text())


def canonical(obj: dict) -> dict:
    """The object without assigned fields, its rules as a sorted list (order-insensitive);
    an aggregated role without its rules."""
    out = {k: v for k, v in obj.items() if k not in ("status", "apiVersion", "kind")}
    out["metadata"] = {k: v for k, v in obj["metadata"].items() if k not in ASSIGNED}
    if out.get("aggregationRule") is not None:
        # the aggregation controller's business (see test_clusterroleaggregation)
        out.pop("rules", None)
    if "rules" in out:
        out["rules"] = sorted(json.dumps(r, sort_keys=True) for r in out["rules"] or [])
    if not out.get("rules"):
        out.pop("rules", None)
    return out


class BootstrapPolicyTests(KubeTestCase):
    """The objects the hook leaves in a fresh server."""

    def listed(self, path: str) -> dict:
        code, body, _ = self.request("GET", path)
        self.assertEqual(code, 200)
        return {(o["metadata"].get("namespace", ""), o["metadata"]["name"]): canonical(o)
                for o in body["items"]}

    def test_equal_to_upstream(self):
        """Names, labels, annotations, rules, aggregation rules, roleRefs and subjects of
        every ClusterRole, ClusterRoleBinding, Role and RoleBinding equal upstream's."""
        vector = load_vector()
        for key, path in (("clusterRoles", "/clusterroles"),
                          ("clusterRoleBindings", "/clusterrolebindings"),
                          ("roles", "/roles"), ("roleBindings", "/rolebindings")):
            want = {(o["metadata"].get("namespace", ""), o["metadata"]["name"]): canonical(o)
                    for o in vector[key]}
            got = self.listed(RBAC + path)
            self.assertEqual(sorted(got), sorted(want), key)
            for name, obj in want.items():
                self.assertEqual(got[name], obj, name)
        self.assertEqual(len(vector["clusterRoles"]), 64)

    def test_hook_is_ready(self):
        """C{/readyz/poststarthook/rbac/bootstrap-roles} is ok once the policy is in."""
        code, body, _ = self.request("GET", "/readyz/poststarthook/rbac/bootstrap-roles")
        self.assertEqual((code, body), (200, "ok"))

    def rerun(self):
        self.successResultOf(ensureDeferred(ensure_rbac_policy(self.kube.stores)))

    def test_reconcile_restores_rules_and_subjects(self):
        """A bootstrap role that lost a rule gets it back, extra rules stay; a binding that
        lost a subject gets it back; a changed roleRef is recreated."""
        code, view, _ = self.request("GET", RBAC + "/clusterroles/system:aggregate-to-view")
        removed = view["rules"][0]
        view["rules"] = view["rules"][1:] + [{"verbs": ["get"], "apiGroups": ["x.io"],
                                              "resources": ["things"]}]
        code, _, _ = self.request("PUT", RBAC + "/clusterroles/system:aggregate-to-view", view)
        self.assertEqual(code, 200)
        code, crb, _ = self.request("GET", RBAC + "/clusterrolebindings/system:discovery")
        crb["subjects"] = []
        self.assertEqual(self.request("PUT", RBAC + "/clusterrolebindings/system:discovery",
                                      crb)[0], 200)
        self.assertEqual(self.request("DELETE", RBAC + "/clusterrolebindings/system:monitoring")
                         [0], 200)
        code, _, _ = self.request("POST", RBAC + "/clusterrolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "system:monitoring"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "view"}})
        self.assertEqual(code, 201)
        self.rerun()
        _, view, _ = self.request("GET", RBAC + "/clusterroles/system:aggregate-to-view")
        # upstream appends the uncovered part broken down (one verb and resource each)
        self.assertEqual(covers(view["rules"], [removed]), (True, []))
        self.assertIn({"apiGroups": [""], "resources": ["pods"], "verbs": ["watch"]},
                      view["rules"])
        self.assertIn({"verbs": ["get"], "apiGroups": ["x.io"], "resources": ["things"]},
                      view["rules"])
        _, crb, _ = self.request("GET", RBAC + "/clusterrolebindings/system:discovery")
        self.assertEqual(crb["subjects"], [{"apiGroup": "rbac.authorization.k8s.io",
                                            "kind": "Group", "name": "system:authenticated"}])
        _, mon, _ = self.request("GET", RBAC + "/clusterrolebindings/system:monitoring")
        self.assertEqual(mon["roleRef"]["name"], "system:monitoring")

    def test_autoupdate_false_protects(self):
        """C{rbac.authorization.kubernetes.io/autoupdate: "false"} keeps a changed role."""
        _, role, _ = self.request("GET", RBAC + "/clusterroles/system:discovery")
        role["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = "false"
        role["rules"] = []
        self.assertEqual(self.request("PUT", RBAC + "/clusterroles/system:discovery", role)[0],
                         200)
        self.rerun()
        _, role, _ = self.request("GET", RBAC + "/clusterroles/system:discovery")
        self.assertFalse(role.get("rules"))


class ReconcileTests(SynchronousTestCase):
    """The pure reconciliation functions."""

    expected = {"metadata": {"name": "r", "labels": {"a": "1"},
                             "annotations": {"rbac.authorization.kubernetes.io/autoupdate":
                                             "true"}},
                "rules": [{"verbs": ["get", "list"], "apiGroups": [""],
                           "resources": ["pods"]}]}

    def test_create_none_update(self):
        """Missing: create; equal: none; a missing verb: the uncovered part appended."""
        self.assertEqual(reconcile_role(None, self.expected)[0], "create")
        self.assertEqual(reconcile_role(json.loads(json.dumps(self.expected)),
                                        self.expected)[0], "none")
        existing = {"metadata": {"name": "r", "labels": {"a": "2", "b": "3"}},
                    "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}
        op, obj = reconcile_role(existing, self.expected)
        self.assertEqual(op, "update")
        self.assertEqual(obj["metadata"]["labels"], {"a": "2", "b": "3"})
        self.assertEqual(obj["metadata"]["annotations"],
                         {"rbac.authorization.kubernetes.io/autoupdate": "true"})
        self.assertEqual(obj["rules"][1], {"apiGroups": [""], "resources": ["pods"],
                                           "verbs": ["list"]})

    def test_aggregation_selectors(self):
        """Missing selectors are appended; an unexpected aggregation rule is removed."""
        expected = {"metadata": {"name": "admin"}, "aggregationRule": {
            "clusterRoleSelectors": [{"matchLabels": {"x": "true"}}]}}
        op, obj = reconcile_role({"metadata": {"name": "admin"}, "aggregationRule": {
            "clusterRoleSelectors": [{"matchLabels": {"y": "true"}}]}}, expected)
        self.assertEqual(op, "update")
        self.assertEqual(obj["aggregationRule"]["clusterRoleSelectors"],
                         [{"matchLabels": {"y": "true"}}, {"matchLabels": {"x": "true"}}])
        op, obj = reconcile_role({"metadata": {"name": "r"}, "aggregationRule": {}},
                                 {"metadata": {"name": "r"}})
        self.assertEqual(op, "update")
        self.assertNotIn("aggregationRule", obj)

    def test_binding(self):
        """Subjects are added, a different roleRef recreates, autoupdate false protects."""
        expected = {"metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "x"},
                    "subjects": [{"kind": "Group", "name": "g"}]}
        op, obj = reconcile_binding({"metadata": {"name": "b"}, "roleRef": expected["roleRef"],
                                     "subjects": [{"kind": "User", "name": "u"}]}, expected)
        self.assertEqual((op, obj["subjects"]), ("update", [{"kind": "User", "name": "u"},
                                                            {"kind": "Group", "name": "g"}]))
        self.assertEqual(reconcile_binding({"metadata": {"name": "b"}, "roleRef": {
            "kind": "ClusterRole", "name": "y"}}, expected)[0], "recreate")
        self.assertEqual(reconcile_binding({"metadata": {"name": "b", "annotations": {
            "rbac.authorization.kubernetes.io/autoupdate": "false"}}}, expected)[0], "none")
