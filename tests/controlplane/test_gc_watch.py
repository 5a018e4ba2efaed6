"""
Tests for the watch-driven L{kubetwist.controlplane.garbagecollector},
L{kubetwist.controlplane.podgc} and L{kubetwist.controlplane.storageprotection}: an idle server
holding objects lists no store as time passes, and the deletions the collectors finish still
complete, from events.
"""

from __future__ import annotations

from kubetwist.registry.generic.store import Store
from kubetwist.storage.cacher.cacher import Cacher
from kubetwist.storage.kv import KVStorageBase
from tests.support import KubeTestCase

DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
CMS = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"
LABELS = {"app": "x"}
TEMPLATE = {"metadata": {"labels": LABELS},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
#: objects held while idle
N = 40


class IdleCostTests(KubeTestCase):
    """A Deployment owning N ConfigMaps, N pods (some terminating on a Ready node)."""

    def setUp(self) -> None:
        super().setUp()
        code, dep, _ = self.request("POST", DEPLOYS, {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": 0, "selector": {"matchLabels": LABELS}, "template": TEMPLATE}})
        self.assertEqual(code, 201)
        ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d",
               "uid": dep["metadata"]["uid"], "blockOwnerDeletion": True, "controller": True}
        for i in range(N):
            code, _, _ = self.request("POST", CMS, {
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": f"cm-{i}", "ownerReferences": [ref]}})
            self.assertEqual(code, 201)
        self.node("n1", ready=True)
        for i in range(N):
            self.pod(f"p-{i}", "n1")
        for i in range(0, N, 4):
            self.assertEqual(self.request("DELETE", f"{PODS}/p-{i}")[0], 200)
        self.clock.advance(1)  # the collectors' first passes
        self.lists: list[str] = []
        self.count(Store, "list")
        self.count(Cacher, "get_list")
        self.count(KVStorageBase, "get_list")

    def count(self, cls: type, method: str) -> None:
        original = getattr(cls, method)

        def counted(this, *args, **kwargs):
            self.lists.append(f"{cls.__name__}.{method}")
            return original(this, *args, **kwargs)

        self.patch(cls, method, counted)

    def node(self, name: str, ready: bool) -> None:
        code, _, _ = self.request("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
        self.assertEqual(code, 201)
        self.set_ready(name, ready)

    def set_ready(self, name: str, ready: bool) -> None:
        code, _, _ = self.request(
            "PATCH", f"/api/v1/nodes/{name}/status",
            {"status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                        "reason": "R", "message": "m"}]}},
            content_type="application/merge-patch+json")
        self.assertEqual(code, 200)

    def pod(self, name: str, node: str) -> None:
        code, obj, _ = self.request("POST", PODS, {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": node, "terminationGracePeriodSeconds": 10,
                     "containers": [{"name": "c", "image": "busybox"}]}})
        self.assertEqual(code, 201, obj)

    def idle(self, seconds: int) -> None:
        for _ in range(seconds):
            self.clock.advance(1)

    def names(self, path: str) -> list[str]:
        code, body, _ = self.request("GET", path)
        self.assertEqual(code, 200)
        return sorted(o["metadata"]["name"] for o in body["items"])

    def test_counter_counts(self):
        """The counters see a LIST request (so the idle test below can fail)."""
        self.names(CMS)
        self.assertTrue(self.lists)

    def test_idle_lists_nothing(self):
        """60 s of idleness with 2N objects and N/4 terminating pods: no store listing (the
        sweeping collectors listed every store every 5 s and the pods every second)."""
        self.idle(60)
        self.assertEqual(self.lists, [])
        self.clock.advance(300)  # the resyncs go over the graph and the indexes in memory
        self.assertEqual(self.lists, [])
        self.assertTrue(self.kube.garbage_collector.running)
        self.assertEqual(len(self.kube.pod_gc.terminating), N // 4)

    def test_background_deletion_after_idle(self):
        """After idling, deleting the owner collects its N dependents, from events only."""
        self.idle(30)
        self.assertEqual(self.request("DELETE", f"{DEPLOYS}/d")[0], 200)
        self.clock.advance(0)
        self.assertEqual([n for n in self.names(CMS) if n.startswith("cm-")], [])
        self.lists.clear()
        self.idle(10)
        self.assertEqual(self.lists, [])

    def test_foreground_deletion_after_idle(self):
        """A Foreground delete waits for the N dependents, then the owner goes."""
        self.idle(30)
        code, obj, _ = self.request("DELETE", f"{DEPLOYS}/d?propagationPolicy=Foreground")
        self.assertEqual((code, obj["metadata"]["finalizers"]), (200, ["foregroundDeletion"]))
        self.clock.advance(0)
        self.assertEqual([n for n in self.names(CMS) if n.startswith("cm-")], [])
        self.assertEqual(self.request("GET", f"{DEPLOYS}/d")[0], 404)

    def test_orphan_deletion_after_idle(self):
        """An Orphan delete strips the N references; the ConfigMaps stay."""
        self.idle(30)
        self.request("DELETE", f"{DEPLOYS}/d?propagationPolicy=Orphan")
        self.clock.advance(0)
        self.assertEqual(self.request("GET", f"{DEPLOYS}/d")[0], 404)
        code, cm, _ = self.request("GET", f"{CMS}/cm-{N - 1}")
        self.assertEqual((code, cm["metadata"].get("ownerReferences")), (200, None))

    def test_node_deleted_collects_its_terminating_pods(self):
        """Deleting the node removes its terminating pods at once (node event), not the
        others."""
        self.idle(30)
        self.assertEqual(self.request("DELETE", "/api/v1/nodes/n1")[0], 200)
        self.clock.advance(0)
        left = self.names(PODS)
        self.assertEqual(len(left), N - N // 4)
        self.assertNotIn("p-0", left)
        self.assertIn("p-1", left)

    def test_node_not_ready_collects_after_grace(self):
        """A node turning NotReady after the pods' grace expired: they go at once; a pod
        deleted later waits for its own grace (a timer, no polling)."""
        self.idle(30)
        self.set_ready("n1", False)
        self.clock.advance(0)
        self.assertNotIn("p-0", self.names(PODS))
        self.assertEqual(self.request("DELETE", f"{PODS}/p-1")[0], 200)
        self.clock.advance(9)
        self.assertIn("p-1", self.names(PODS))
        self.clock.advance(2)
        self.assertNotIn("p-1", self.names(PODS))


    def test_claim_released_by_pod_event(self):
        """A claim in use, marked for deletion, held while idle: no listing; the pod's
        deletion releases it at once (a fresh list of the namespace's pods, then)."""
        from tests.controlplane.test_storageprotection import claim

        code, _, _ = self.request("POST", "/api/v1/namespaces/default/persistentvolumeclaims",
                                  claim("data"))
        self.assertEqual(code, 201)
        code, _, _ = self.request("POST", PODS, {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "user"},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}],
                     "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]}})
        self.assertEqual(code, 201)
        path = "/api/v1/namespaces/default/persistentvolumeclaims/data"
        self.assertEqual(self.request("DELETE", path)[0], 200)
        self.lists.clear()
        self.idle(60)
        self.assertEqual(self.lists, [])
        self.assertEqual(self.request("GET", path)[0], 200)  # in use: Terminating
        self.request("DELETE", f"{PODS}/user?gracePeriodSeconds=0")
        self.clock.advance(0)
        self.assertEqual(self.request("GET", path)[0], 404)

class CustomResourceTests(KubeTestCase):
    """Custom resources appear after the collector started: it finds their store."""

    def test_custom_resource_dependent_collected(self):
        """A Widget owned by a ConfigMap goes once the ConfigMap is deleted (the store is
        found by the collector's periodic look at the set of stores)."""
        from tests.apiextensions.test_customresources import CRD, CRDS, WIDGETS, widget

        self.assertEqual(self.request("POST", CRDS, CRD)[0], 201)
        for _ in range(5):
            self.clock.advance(0)
        code, owner, _ = self.request("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap",
                                                    "metadata": {"name": "owner"}})
        self.assertEqual(code, 201)
        body = widget("w", replicas=1)
        body["metadata"]["ownerReferences"] = [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
            "uid": owner["metadata"]["uid"]}]
        code, created, _ = self.request("POST", WIDGETS, body)
        self.assertEqual(code, 201, created)
        self.clock.advance(5)  # the collector looks at the set of stores
        self.assertEqual(self.request("DELETE", f"{CMS}/owner")[0], 200)
        self.clock.advance(0)
        self.assertEqual(self.request("GET", f"{WIDGETS}/w")[0], 404)

