# -*- test-case-name: tests.controlplane.test_resourcequota -*-
"""
Tests for L{kubetwist.controlplane.resourcequota} and the C{ResourceQuota} admission plugin
through the whole server chain: C{status} derived from C{spec.hard}, usage charged at
admission, refused over the limit with upstream's message, replenished on deletion.
"""

from __future__ import annotations

from tests.support import KubeTestCase

NS = "/api/v1/namespaces/q"


def _pod(name: str, **spec) -> dict:
    body = {"containers": [{"name": "c", "image": "i"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


def _quota(name: str, hard: dict, **spec) -> dict:
    body = {"hard": hard}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name},
            "spec": body}


class QuotaChainTests(KubeTestCase):
    def setUp(self) -> None:
        super().setUp()
        code, _, _ = self.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "q"}})
        self.assertEqual(code, 201)
        self.clock.advance(0)

    def status(self, name: str) -> dict:
        self.clock.advance(0)
        self.clock.advance(0)
        code, body, _ = self.request("GET", f"{NS}/resourcequotas/{name}")
        self.assertEqual(code, 200, body)
        return body.get("status") or {}

    def test_status_from_spec(self) -> None:
        """A new quota gets status.hard from spec.hard and status.used counted."""
        self.request("POST", f"{NS}/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
        code, body, _ = self.request("POST", f"{NS}/resourcequotas", _quota(
            "q", {"pods": "2", "configmaps": "5", "cpu": "1", "memory": "1Gi",
                  "count/replicasets.apps": "3"}))
        self.assertEqual(code, 201, body)
        status = self.status("q")
        self.assertEqual(status["hard"], {"configmaps": "5", "count/replicasets.apps": "3",
                                          "cpu": "1", "memory": "1Gi", "pods": "2"})
        # the kube-root-ca.crt ConfigMap and "a"
        self.assertEqual(status["used"], {"configmaps": "2", "count/replicasets.apps": "0",
                                          "cpu": "0", "memory": "0", "pods": "0"})

    def test_third_pod_refused(self) -> None:
        """Two pods fit a quota of two; the third is refused with upstream's message and
        status.used reads 2; deleting one gives the unit back."""
        self.request("POST", f"{NS}/resourcequotas", _quota("q", {"pods": "2"}))
        self.assertEqual(self.status("q")["used"], {"pods": "0"})
        for name in ("a", "b"):
            code, body, _ = self.request("POST", f"{NS}/pods", _pod(name))
            self.assertEqual(code, 201, body)
        code, body, _ = self.request("POST", f"{NS}/pods", _pod("c"))
        self.assertEqual(code, 403, body)
        self.assertEqual(body["reason"], "Forbidden")
        self.assertEqual(body["message"], 'pods "c" is forbidden: exceeded quota: q, '
                                          'requested: pods=1, used: pods=2, limited: pods=2')
        self.assertEqual(self.status("q")["used"], {"pods": "2"})
        code, body, _ = self.request("DELETE", f"{NS}/pods/a?gracePeriodSeconds=0")
        self.assertEqual(code, 200, body)
        self.assertEqual(self.status("q")["used"], {"pods": "1"})
        code, body, _ = self.request("POST", f"{NS}/pods", _pod("c"))
        self.assertEqual(code, 201, body)

    def test_dry_run_charges_nothing(self) -> None:
        """A dry-run create is checked but status.used does not move."""
        self.request("POST", f"{NS}/resourcequotas", _quota("q", {"pods": "1"}))
        self.status("q")
        code, body, _ = self.request("POST", f"{NS}/pods?dryRun=All", _pod("a"))
        self.assertEqual(code, 201, body)
        code, body, _ = self.request("GET", f"{NS}/resourcequotas/q")
        self.assertEqual(body["status"]["used"], {"pods": "0"})

    def test_spec_change_and_status_reset(self) -> None:
        """A new spec.hard is copied to status.hard; a status.hard written by hand is put
        back to spec.hard."""
        self.request("POST", f"{NS}/resourcequotas", _quota("q", {"pods": "2"}))
        self.status("q")
        code, body, _ = self.request(
            "PATCH", f"{NS}/resourcequotas/q", {"spec": {"hard": {"pods": "3", "secrets": "4"}}},
            content_type="application/merge-patch+json")
        self.assertEqual(code, 200, body)
        status = self.status("q")
        self.assertEqual(status["hard"], {"pods": "3", "secrets": "4"})
        self.assertEqual(status["used"], {"pods": "0", "secrets": "0"})
        code, body, _ = self.request(
            "PATCH", f"{NS}/resourcequotas/q/status", {"status": {"hard": {"pods": "9"}}},
            content_type="application/merge-patch+json")
        self.assertEqual(code, 200, body)
        self.assertEqual(body["status"]["hard"], {"pods": "9", "secrets": "4"})
        self.assertEqual(self.status("q")["hard"], {"pods": "3", "secrets": "4"})

    def test_replenish_on_update(self) -> None:
        """A pod that turns Succeeded gives its compute units back (watch-driven)."""
        self.request("POST", f"{NS}/resourcequotas", _quota("q", {"pods": "2",
                                                                   "count/pods": "5"}))
        self.status("q")
        self.request("POST", f"{NS}/pods", _pod("a"))
        self.assertEqual(self.status("q")["used"], {"count/pods": "1", "pods": "1"})
        code, body, _ = self.request("PATCH", f"{NS}/pods/a/status",
                                     {"status": {"phase": "Succeeded"}},
                                     content_type="application/merge-patch+json")
        self.assertEqual(code, 200, body)
        self.assertEqual(self.status("q")["used"], {"count/pods": "1", "pods": "0"})

    def test_object_count_of_any_resource(self) -> None:
        """count/replicasets.apps counts ReplicaSets, created and deleted."""
        self.request("POST", f"{NS}/resourcequotas", _quota("q", {"count/replicasets.apps": "1"}))
        self.status("q")
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r"},
              "spec": {"replicas": 0, "selector": {"matchLabels": {"a": "b"}},
                       "template": {"metadata": {"labels": {"a": "b"}},
                                    "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
        code, body, _ = self.request("POST", "/apis/apps/v1/namespaces/q/replicasets", rs)
        self.assertEqual(code, 201, body)
        self.assertEqual(self.status("q")["used"], {"count/replicasets.apps": "1"})
        rs["metadata"]["name"] = "r2"
        code, body, _ = self.request("POST", "/apis/apps/v1/namespaces/q/replicasets", rs)
        self.assertEqual(code, 403, body)
        self.assertEqual(body["message"],
                         'replicasets.apps "r2" is forbidden: exceeded quota: q, requested: '
                         'count/replicasets.apps=1, used: count/replicasets.apps=1, limited: '
                         'count/replicasets.apps=1')
        self.request("DELETE", "/apis/apps/v1/namespaces/q/replicasets/r")
        self.assertEqual(self.status("q")["used"], {"count/replicasets.apps": "0"})

    def test_changes_elsewhere_cost_nothing(self) -> None:
        """Creations (charged by admission) and deletions in a namespace without quotas start
        no recomputation; a deletion in the quota's namespace starts one."""
        self.request("POST", f"{NS}/resourcequotas", _quota("q", {"pods": "2"}))
        self.status("q")
        controller = self.kube.resource_quota_controller
        before = controller.passes
        for path in ("/api/v1/namespaces/default/pods", f"{NS}/pods"):
            code, body, _ = self.request("POST", path, _pod("x"))
            self.assertEqual(code, 201, body)
        self.request("DELETE", "/api/v1/namespaces/default/pods/x?gracePeriodSeconds=0")
        self.clock.advance(0)
        self.assertEqual(controller.passes, before)
        self.assertEqual(self.status("q")["used"], {"pods": "1"})
        self.request("DELETE", f"{NS}/pods/x?gracePeriodSeconds=0")
        self.clock.advance(0)
        self.assertEqual(controller.passes, before + 1)
        self.assertEqual(self.status("q")["used"], {"pods": "0"})

    def test_full_resync(self) -> None:
        """Every five minutes every quota is recomputed (a hand-written used is repaired)."""
        self.request("POST", f"{NS}/resourcequotas", _quota("q", {"pods": "2"}))
        self.status("q")
        self.request("PATCH", f"{NS}/resourcequotas/q/status", {"status": {"used": {"pods": "1"}}},
                     content_type="application/merge-patch+json")
        self.assertEqual(self.status("q")["used"], {"pods": "1"})
        self.clock.advance(300)
        self.assertEqual(self.status("q")["used"], {"pods": "0"})

    def test_sync_is_compare_and_swap(self) -> None:
        """The controller writes only over the version it read (409 otherwise)."""
        from twisted.internet.defer import ensureDeferred

        from kubetwist.runtime.errors import StatusError

        self.request("POST", f"{NS}/resourcequotas", _quota("q", {"pods": "2"}))
        self.status("q")
        controller = self.kube.resource_quota_controller
        stale = dict(controller.informer.items[("q", "q")])
        stale["status"] = {}
        self.request("PATCH", f"{NS}/resourcequotas/q/status", {"status": {"used": {"pods": "1"}}},
                     content_type="application/merge-patch+json")
        f = self.failureResultOf(ensureDeferred(controller.sync(stale)), StatusError)
        self.assertEqual(f.value.code, 409)
        self.assertEqual(self.status("q")["used"], {"pods": "1"})
