"""
RBAC escalation prevention (kubetwist.registry.rbac.escalation) in the real chain with the
default modes: the Forbidden texts are kube-apiserver v1.32's, recorded from the reference
server (user "alice" there, "jane" here).
"""

from __future__ import annotations

from tests.support import KubeTestCase

RBAC = "rbac.authorization.k8s.io"
BASE = f"/apis/{RBAC}/v1"
JANE = {"Authorization": "Bearer jane-token"}
JANE_USER = {"apiGroup": RBAC, "kind": "User", "name": "jane"}
# the test token file gives jane an empty fourth column, which upstream's token file reads as
# the groups [""] (strings.Split of "")
PREFIX = ('user "jane" (groups=["" "system:authenticated"]) is attempting to grant RBAC '
          'permissions not currently held:\n')


def cluster_role(name, rules, **extra):
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": name},
            "rules": rules, **extra}


def crb(name, role, subjects=(JANE_USER,)):
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
            "subjects": list(subjects)}


class EscalationTests(KubeTestCase):
    """A user allowed to write RBAC objects may grant only what it holds."""

    modes = ("Node", "RBAC")

    def setUp(self):
        super().setUp()
        self.admin_create("/clusterroles", cluster_role("rbac-writer", [{
            "verbs": ["create", "update", "get", "patch"], "apiGroups": [RBAC],
            "resources": ["clusterrolebindings", "clusterroles", "roles", "rolebindings"]}]))
        self.admin_create("/clusterrolebindings", crb("jane-writer", "rbac-writer"))

    def admin_create(self, path, obj):
        code, body, _ = self.request("POST", BASE + path, obj)
        self.assertEqual(code, 201, body)
        self.clock.advance(0)

    def jane(self, method, path, obj=None):
        code, body, _ = self.request(method, BASE + path, obj, headers=JANE)
        return code, body

    def test_binding_cluster_admin_refused(self):
        """Binding cluster-admin without holding it: upstream's 403."""
        code, body = self.jane("POST", "/clusterrolebindings", crb("esc", "cluster-admin"))
        self.assertEqual(code, 403)
        self.assertEqual(body["reason"], "Forbidden")
        self.assertEqual(body["details"], {"name": "esc", "group": RBAC,
                                           "kind": "clusterrolebindings"})
        self.assertEqual(body["message"], (
            f'clusterrolebindings.{RBAC} "esc" is forbidden: ' + PREFIX +
            '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n'
            '{NonResourceURLs:["*"], Verbs:["*"]}'))

    def test_role_rules_refused_with_resolution_errors(self):
        """Rules not held, compacted per resource and name, sorted; a binding of the user to
        a missing role adds the resolution errors (named after the request's resource)."""
        self.admin_create("/clusterrolebindings", crb("crb-missing", "nope2"))
        code, body = self.jane("POST", "/clusterroles", cluster_role("esc-role", [{
            "verbs": ["get", "list", "delete"], "apiGroups": ["", "apps"],
            "resources": ["secrets", "pods", "deployments"], "resourceNames": ["a"]}]))
        self.assertEqual(code, 403)
        self.assertIn(f'clusterroles.{RBAC} "esc-role" is forbidden: ' + PREFIX +
                      '{APIGroups:[""], Resources:["deployments"], ResourceNames:["a"], '
                      'Verbs:["get" "list" "delete"]}\n', body["message"])
        self.assertTrue(body["message"].endswith(
            '{APIGroups:["apps"], Resources:["secrets"], ResourceNames:["a"], '
            'Verbs:["get" "list" "delete"]}; resolution errors: '
            f'[clusterroles.{RBAC} "nope2" not found]'), body["message"])
        code, body = self.jane("POST", "/namespaces/default/roles", {
            "apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": {"name": "esc-role3"},
            "rules": [{"verbs": ["get"], "nonResourceURLs": ["/logs/*"]}]})
        self.assertEqual(code, 403)
        self.assertEqual(body["message"], (
            f'roles.{RBAC} "esc-role3" is forbidden: ' + PREFIX +
            '{NonResourceURLs:["/logs/*"], Verbs:["get"]}; resolution errors: '
            f'[roles.{RBAC} "nope2" not found]'))

    def test_held_rules_allowed(self):
        """Rules the user holds may be granted; an invalid object is then 422 as usual."""
        code, body = self.jane("POST", "/clusterroles", cluster_role("ok", [{
            "verbs": ["get"], "apiGroups": [RBAC], "resources": ["roles"]}]))
        self.assertEqual(code, 201, body)
        code, body = self.jane("POST", "/clusterrolebindings", crb("ok", "ok"))
        self.assertEqual(code, 201, body)

    def test_missing_role_is_not_found(self):
        """A binding of a role that does not exist: 404 named after the role."""
        code, body = self.jane("POST", "/clusterrolebindings", crb("esc3", "nope3"))
        self.assertEqual(code, 404)
        self.assertEqual(body["message"], f'clusterrolebindings.{RBAC} "nope3" not found')

    def test_unsupported_role_kind(self):
        """A roleRef of another kind: upstream's plain 500 (before validation)."""
        binding = crb("foo", "x")
        binding["roleRef"]["kind"] = "Foo"
        code, body = self.jane("POST", "/clusterrolebindings", binding)
        self.assertEqual((code, body["message"], body.get("reason", "")),
                         (500, 'unsupported role reference kind: "Foo"', ""))

    def test_aggregation_rule_needs_cluster_admin(self):
        """An aggregationRule needs every permission."""
        code, body = self.jane("POST", "/clusterroles", cluster_role(
            "agg", [], aggregationRule={"clusterRoleSelectors": [
                {"matchLabels": {"foo": "bar"}}]}))
        self.assertEqual(code, 403)
        self.assertEqual(body["message"], f'clusterroles.{RBAC} "agg" is forbidden: must have '
                         'cluster-admin privileges to use the aggregationRule')

    def test_escalate_and_bind_verbs(self):
        """C{escalate} on clusterroles and C{bind} of a named role lift the check."""
        self.admin_create("/clusterroles", cluster_role("delegate", [
            {"verbs": ["escalate"], "apiGroups": [RBAC], "resources": ["clusterroles"]},
            {"verbs": ["bind"], "apiGroups": [RBAC], "resources": ["clusterroles"],
             "resourceNames": ["cluster-admin"]}]))
        self.admin_create("/clusterrolebindings", crb("jane-delegate", "delegate"))
        code, body = self.jane("POST", "/clusterroles", cluster_role("big", [{
            "verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]))
        self.assertEqual(code, 201, body)
        code, body = self.jane("POST", "/clusterrolebindings", crb("esc2", "big"))
        self.assertEqual(code, 403)
        code, body = self.jane("POST", "/clusterrolebindings", crb("esc", "cluster-admin"))
        self.assertEqual(code, 201, body)

    def test_masters_bypass(self):
        """system:masters grants anything (the admin's creates above and this one)."""
        code, body, _ = self.request("POST", BASE + "/clusterrolebindings",
                                     crb("any", "cluster-admin"))
        self.assertEqual(code, 201, body)
