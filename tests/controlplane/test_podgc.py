"""
Tests for L{kubetwist.controlplane.podgc}: graceful pod deletion over HTTP and how the pod
garbage collector finishes it, on a fake clock.
"""

from __future__ import annotations

from kubetwist.apimachinery.meta import format_rfc3339
from kubetwist.controlplane.podgc import node_ready
from tests.support import KubeTestCase

PODS = "/api/v1/namespaces/default/pods"
T0 = 1_700_000_000


class PodGCTests(KubeTestCase):
    """Pods bound to nodes that exist or not, Ready or not."""

    def pod(self, name, node, grace=None):
        spec = {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]}
        if grace is not None:
            spec["terminationGracePeriodSeconds"] = grace
        code, obj, _ = self.request("POST", PODS, {"apiVersion": "v1", "kind": "Pod",
                                                   "metadata": {"name": name}, "spec": spec})
        self.assertEqual(code, 201, obj)
        return obj

    def node(self, name, ready):
        code, _, _ = self.request("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
        self.assertEqual(code, 201)
        code, _, _ = self.request(
            "PATCH", f"/api/v1/nodes/{name}/status",
            {"status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                        "reason": "R", "message": "m"}]}},
            content_type="application/merge-patch+json")
        self.assertEqual(code, 200)

    def code_of(self, name):
        return self.request("GET", f"{PODS}/{name}")[0]

    def test_graceful_answer(self):
        """DELETE of a bound pod answers 200 with the pod: deletionTimestamp now + the
        default 30 s grace, deletionGracePeriodSeconds 30."""
        self.pod("p", "nowhere")
        code, obj, _ = self.request("DELETE", f"{PODS}/p")
        self.assertEqual((code, obj["kind"], obj["metadata"]["deletionTimestamp"],
                          obj["metadata"]["deletionGracePeriodSeconds"]),
                         (200, "Pod", format_rfc3339(T0 + 30), 30))

    def test_missing_node_deleted_at_once(self):
        """A terminating pod whose node does not exist is removed by the next sweep."""
        self.pod("p", "nowhere")
        self.request("DELETE", f"{PODS}/p")
        self.assertEqual(self.code_of("p"), 200)
        self.clock.advance(0)
        self.assertEqual(self.code_of("p"), 404)

    def test_not_ready_node_waits_for_grace(self):
        """On a NotReady node the pod goes only once its grace has expired."""
        self.node("n1", ready=False)
        self.pod("p", "n1", grace=10)
        self.request("DELETE", f"{PODS}/p")
        self.clock.advance(9)
        self.assertEqual(self.code_of("p"), 200)
        self.clock.advance(2)
        self.assertEqual(self.code_of("p"), 404)

    def test_ready_node_left_to_kubelet(self):
        """On a Ready node the pod stays Terminating (its kubelet would finish it)."""
        self.node("n1", ready=True)
        self.pod("p", "n1", grace=10)
        self.request("DELETE", f"{PODS}/p")
        self.clock.advance(60)
        self.assertEqual(self.code_of("p"), 200)

    def test_pod_not_terminating_left_alone(self):
        """A pod bound to a missing node but not being deleted is not collected."""
        self.pod("p", "nowhere")
        self.clock.advance(60)
        self.assertEqual(self.code_of("p"), 200)

    def test_grace_zero_deletes_at_once(self):
        """?gracePeriodSeconds=0 deletes a bound pod at once, answering the pod."""
        self.pod("p", "n1")
        code, obj, _ = self.request("DELETE", f"{PODS}/p?gracePeriodSeconds=0")
        self.assertEqual((code, obj["kind"], obj["metadata"]["deletionGracePeriodSeconds"]),
                         (200, "Pod", 0))
        self.assertEqual(self.code_of("p"), 404)

    def test_node_ready(self):
        """Ready means a Ready condition with status True."""
        self.assertEqual([node_ready(n) for n in (
            {}, {"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}},
            {"status": {"conditions": [{"type": "Ready", "status": "True"}]}})],
            [False, False, True])

    def test_node_deleted_later(self):
        """A terminating pod left to a Ready node's kubelet goes once the node is deleted."""
        self.node("n1", ready=True)
        self.pod("p", "n1", grace=10)
        self.request("DELETE", f"{PODS}/p")
        self.clock.advance(5)
        self.assertEqual(self.code_of("p"), 200)
        self.assertEqual(self.request("DELETE", "/api/v1/nodes/n1")[0], 200)
        self.clock.advance(0)
        self.assertEqual(self.code_of("p"), 404)
        self.assertEqual(self.kube.pod_gc.deleted, ["default/p"])

    def test_node_not_ready_later_waits_for_grace(self):
        """A node that turns NotReady hands its terminating pods to the grace timer."""
        self.node("n1", ready=True)
        self.pod("p", "n1", grace=10)
        self.request("DELETE", f"{PODS}/p")
        self.clock.advance(3)
        self.request("PATCH", "/api/v1/nodes/n1/status", {"status": {"conditions": [
            {"type": "Ready", "status": "False", "reason": "R", "message": "m"}]}},
            content_type="application/merge-patch+json")
        self.clock.advance(6)
        self.assertEqual(self.code_of("p"), 200)
        self.clock.advance(1)
        self.assertEqual(self.code_of("p"), 404)

    def test_terminated_over_threshold_oldest_first(self):
        """Terminated pods beyond the threshold go, oldest first; running ones stay."""
        self.kube.pod_gc.terminated_threshold = 1
        for name in ("old", "new", "running"):
            self.pod(name, "")
            self.clock.advance(1)
        for name in ("old", "new"):
            code, _, _ = self.request(
                "PATCH", f"{PODS}/{name}/status", {"status": {"phase": "Succeeded"}},
                content_type="application/merge-patch+json")
            self.assertEqual(code, 200)
        self.clock.advance(0)
        self.assertEqual([self.code_of(n) for n in ("old", "new", "running")],
                         [404, 200, 200])

    def test_idle_reads_nothing(self):
        """Ten idle minutes with pods and nodes read no list from storage."""
        self.node("n1", ready=False)
        self.pod("p", "n1")
        backend = self.kube.garbage_collector.backend
        lists = []
        real = backend.get_list
        backend.get_list = lambda key, *a, **kw: lists.append(key) or real(key, *a, **kw)
        self.clock.advance(600)
        self.assertEqual(lists, [])
