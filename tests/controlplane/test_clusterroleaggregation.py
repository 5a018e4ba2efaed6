"""
The clusterrole-aggregation controller (kubetwist.controlplane.clusterroleaggregation):
C{admin}, C{edit} and C{view} are the union of the roles labelled for them, following
changes.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authorization.rbac import covers
from kubetwist.controlplane.clusterroleaggregation import aggregated_rules
from tests.support import KubeTestCase

BASE = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
TO_ADMIN = {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}


def role(name, rules, labels=None, selectors=None):
    out = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": {"name": name, "labels": labels or {}}, "rules": rules}
    if selectors is not None:
        out["aggregationRule"] = {"clusterRoleSelectors": selectors}
    return out


class AggregatedRulesTests(SynchronousTestCase):
    """The pure union upstream's syncClusterRole computes."""

    def test_union_in_name_order_without_duplicates(self):
        """Selected roles in name order, equal rules once, the role itself skipped, each
        selector in turn."""
        a = {"verbs": ["get"], "apiGroups": [""], "resources": ["a"]}
        b = {"verbs": ["get"], "apiGroups": [""], "resources": ["b"]}
        c = {"verbs": ["get"], "apiGroups": [""], "resources": ["c"]}
        target = role("agg", [c], {"x": "1"}, [{"matchLabels": {"x": "1"}},
                                               {"matchLabels": {"y": "1"}}])
        roles = [target, role("z", [a, b], {"x": "1"}), role("m", [b], {"x": "1"}),
                 role("y", [c], {"y": "1"}), role("other", [c])]
        self.assertEqual(aggregated_rules(target, roles), [b, a, c])


class ControllerTests(KubeTestCase):
    """The controller in the running chain, over the bootstrap policy."""

    def get(self, name):
        code, body, _ = self.request("GET", f"{BASE}/{name}")
        self.assertEqual(code, 200)
        return body

    def test_bootstrap_aggregation(self):
        """After the bootstrap, admin/edit/view hold the union of their aggregate-to roles:
        view is covered by edit, edit by admin, and admin can create pods (already when the
        hooks have started: no clock step)."""
        admin, edit, view = self.get("admin"), self.get("edit"), self.get("view")
        self.assertTrue(view["rules"])
        self.assertEqual(covers(edit["rules"], view["rules"]), (True, []))
        self.assertEqual(covers(admin["rules"], edit["rules"]), (True, []))
        self.assertEqual(covers(admin["rules"], [{"verbs": ["create"], "apiGroups": [""],
                                                  "resources": ["pods"]}])[0], True)
        self.assertEqual(covers(view["rules"], [{"verbs": ["get"], "apiGroups": [""],
                                                 "resources": ["secrets"]}])[0], False)
        self.assertEqual(view["rules"], self.get("system:aggregate-to-view")["rules"])

    def test_crd_role_joins_and_leaves(self):
        """A role labelled aggregate-to-admin adds its rules to admin; deleting it removes
        them."""
        rule = {"verbs": ["get", "list"], "apiGroups": ["stable.example.com"],
                "resources": ["crontabs"]}
        code, _, _ = self.request("POST", BASE, role("crontab-admin", [rule], TO_ADMIN))
        self.assertEqual(code, 201)
        self.clock.advance(0)
        self.assertIn(rule, self.get("admin")["rules"])
        self.assertNotIn(rule, self.get("edit")["rules"])
        self.assertEqual(self.request("DELETE", f"{BASE}/crontab-admin")[0], 200)
        self.clock.advance(0)
        self.assertNotIn(rule, self.get("admin")["rules"])
