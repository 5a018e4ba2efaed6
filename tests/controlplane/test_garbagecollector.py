"""
Tests for L{kubetwist.controlplane.garbagecollector}: Orphan, Foreground and Background
deletions finished over the whole server chain on a fake clock, and the DELETE answers.
"""

from __future__ import annotations

from twisted.application.service import IService
from zope.interface.verify import verifyObject

from kubetwist.controlplane.garbagecollector import DEFAULT_RESYNC, StoreIndex
from tests.apiextensions.test_customresources import WIDGETS, CRDTestCase, widget
from tests.support import KubeTestCase

DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
RSS = "/apis/apps/v1/namespaces/default/replicasets"
CMS = "/api/v1/namespaces/default/configmaps"

LABELS = {"app": "x"}
TEMPLATE = {"metadata": {"labels": LABELS},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


class GarbageCollectorTests(KubeTestCase):
    """Owner/dependent chains: Deployment -> ReplicaSet -> ConfigMap (any kind may depend)."""

    def setUp(self) -> None:
        super().setUp()
        code, dep, _ = self.request("POST", DEPLOYS, {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": 0, "selector": {"matchLabels": LABELS}, "template": TEMPLATE}})
        self.assertEqual(code, 201)
        self.dep_uid = dep["metadata"]["uid"]
        code, rs, _ = self.request("POST", RSS, {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "d-1", "ownerReferences": [self.ref("apps/v1", "Deployment",
                                                                      "d", self.dep_uid)]},
            "spec": {"replicas": 0, "selector": {"matchLabels": LABELS}, "template": TEMPLATE}})
        self.assertEqual(code, 201)
        self.rs_uid = rs["metadata"]["uid"]
        code, _, _ = self.request("POST", CMS, {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "leaf", "ownerReferences": [
                self.ref("apps/v1", "ReplicaSet", "d-1", self.rs_uid)]}})
        self.assertEqual(code, 201)
        self.order: list[str] = []
        for key in (("apps", "deployments"), ("apps", "replicasets"), ("", "configmaps")):
            self.kube.stores[key].after_delete.append(
                lambda obj, r=key[1]: self.order.append(f"{r}/{obj['metadata']['name']}"))

    @staticmethod
    def ref(api_version, kind, name, uid, block=True):
        return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid,
                "controller": True, "blockOwnerDeletion": block}

    def code_of(self, path):
        return self.request("GET", path)[0]

    def test_is_a_running_service(self):
        """Both collectors are services started by the post-start hooks."""
        for svc in (self.kube.garbage_collector, self.kube.pod_gc):
            self.assertTrue(verifyObject(IService, svc))
            self.assertTrue(svc.running)

    def test_orphan(self):
        """DELETE with propagationPolicy Orphan answers 200 with the Deployment carrying the
        orphan finalizer; the collector then strips the ReplicaSet's ownerReference and the
        Deployment goes."""
        code, obj, _ = self.request("DELETE", f"{DEPLOYS}/d", {
            "kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"})
        self.assertEqual((code, obj["kind"], obj["metadata"]["finalizers"]),
                         (200, "Deployment", ["orphan"]))
        self.clock.advance(0)
        self.assertEqual(self.code_of(f"{DEPLOYS}/d"), 404)
        code, rs, _ = self.request("GET", f"{RSS}/d-1")
        self.assertEqual((code, rs["metadata"].get("ownerReferences")), (200, None))
        self.assertEqual(self.code_of(f"{CMS}/leaf"), 200)
        self.assertEqual(self.order, ["deployments/d"])

    def test_foreground(self):
        """?propagationPolicy=Foreground keeps the Deployment (foregroundDeletion) until the
        ReplicaSet, itself deleted in the foreground after its own dependent, is gone."""
        code, obj, _ = self.request("DELETE", f"{DEPLOYS}/d?propagationPolicy=Foreground")
        self.assertEqual((code, obj["metadata"]["finalizers"]), (200, ["foregroundDeletion"]))
        self.assertEqual(self.code_of(f"{DEPLOYS}/d"), 200)
        self.clock.advance(0)
        self.assertEqual(self.order, ["configmaps/leaf", "replicasets/d-1", "deployments/d"])
        self.assertEqual(self.code_of(f"{DEPLOYS}/d"), 404)

    def test_background(self):
        """A default delete removes the Deployment at once; its dependents follow."""
        code, obj, _ = self.request("DELETE", f"{DEPLOYS}/d")
        self.assertEqual((code, obj["status"], obj["details"]),
                         (200, "Success", {"name": "d", "group": "apps", "kind": "deployments",
                                           "uid": self.dep_uid}))
        self.clock.advance(0)
        self.assertEqual(self.order, ["deployments/d", "replicasets/d-1", "configmaps/leaf"])

    def test_dangling_reference_removed_when_another_owner_remains(self):
        """A dependent with one owner left loses only the reference to the missing owner."""
        code, other, _ = self.request("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap",
                                                    "metadata": {"name": "owner"}})
        refs = [self.ref("v1", "ConfigMap", "owner", other["metadata"]["uid"], block=False),
                self.ref("v1", "ConfigMap", "gone", "0000-gone", block=False)]
        refs[1]["controller"] = False
        self.request("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "two", "ownerReferences": refs}})
        self.clock.advance(5)
        code, obj, _ = self.request("GET", f"{CMS}/two")
        self.assertEqual((code, [r["name"] for r in obj["metadata"]["ownerReferences"]]),
                         (200, ["owner"]))

    def test_unknown_owner_kind_left_alone(self):
        """A reference to a kind no store serves is not treated as dangling."""
        self.request("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "odd", "ownerReferences": [
                self.ref("example.com/v1", "Widget", "w", "0000-w")]}})
        self.clock.advance(5)
        self.assertEqual(self.code_of(f"{CMS}/odd"), 200)

    def test_second_delete_switches_orphan_to_foreground(self):
        """Before the collector runs, a Foreground delete replaces the orphan finalizer."""
        self.request("DELETE", f"{DEPLOYS}/d?propagationPolicy=Orphan")
        code, obj, _ = self.request("DELETE", f"{DEPLOYS}/d?propagationPolicy=Foreground")
        self.assertEqual((code, obj["metadata"]["finalizers"]), (200, ["foregroundDeletion"]))
        self.clock.advance(0)
        self.assertEqual(self.order, ["configmaps/leaf", "replicasets/d-1", "deployments/d"])


class DeleteOptionsHTTPTests(KubeTestCase):
    """DeleteOptions as the handler decodes them."""

    def cm(self, name="a"):
        return self.request("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": name}})[1]

    def test_conflicting_options(self):
        """orphanDependents with propagationPolicy is 422 Invalid DeleteOptions.meta.k8s.io."""
        self.cm()
        code, st, _ = self.request("DELETE", f"{CMS}/a", {
            "orphanDependents": False, "propagationPolicy": "Background"})
        self.assertEqual(code, 422)
        self.assertEqual(st["message"],
                         'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid '
                         'value: "Background": orphanDependents and deletionPropagation cannot '
                         'be both set')
        self.assertEqual((st["details"]["kind"], st["details"]["group"]),
                         ("DeleteOptions", "meta.k8s.io"))

    def test_body_wins_over_query(self):
        """With a body, the query's propagationPolicy is ignored (upstream decodes one)."""
        self.cm()
        code, obj, _ = self.request("DELETE", f"{CMS}/a?propagationPolicy=Orphan",
                                    {"propagationPolicy": "Foreground"})
        self.assertEqual((code, obj["metadata"]["finalizers"]), (200, ["foregroundDeletion"]))

    def test_orphan_dependents_false_kept_is_202(self):
        """A kept object deleted with orphanDependents=false is answered 202 Accepted."""
        self.request("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "f", "finalizers": ["x.io/y"]}})
        code, obj, _ = self.request("DELETE", f"{CMS}/f?orphanDependents=false")
        self.assertEqual((code, obj["metadata"]["finalizers"]), (202, ["x.io/y"]))

    def test_dry_run_in_body(self):
        """dryRun in the DeleteOptions body deletes nothing."""
        self.cm()
        code, obj, _ = self.request("DELETE", f"{CMS}/a", {"dryRun": ["All"]})
        self.assertEqual((code, obj["status"]), (200, "Success"))
        self.assertEqual(self.request("GET", f"{CMS}/a")[0], 200)

    def test_collection_with_policy(self):
        """DELETE of a collection with ?propagationPolicy=Orphan marks each item."""
        self.cm("a")
        code, lst, _ = self.request("DELETE", f"{CMS}?propagationPolicy=Orphan"
                                              f"&fieldSelector=metadata.name%3Da")
        self.assertEqual((code, [i["metadata"]["name"] for i in lst["items"]]), (200, ["a"]))


class WatchDrivenTests(KubeTestCase):
    """The collector's work follows the changes: no list on the clock, custom resources
    discovered at runtime, a lost watch re-listed."""

    def setUp(self) -> None:
        super().setUp()
        self.backend = self.kube.garbage_collector.backend
        self.lists: list[str] = []
        real = self.backend.get_list

        def counting(key, *args, **kwargs):
            self.lists.append(key)
            return real(key, *args, **kwargs)
        self.backend.get_list = counting

    def cm(self, name, refs=()):
        code, obj, _ = self.request("POST", CMS, {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "ownerReferences": list(refs)}})
        self.assertEqual(code, 201, obj)
        return obj

    def test_idle_reads_nothing(self):
        """Ten idle minutes read no list from storage; the graph knows every object."""
        owner = self.cm("owner")
        self.cm("dep", [GarbageCollectorTests.ref("v1", "ConfigMap", "owner",
                                                 owner["metadata"]["uid"])])
        self.clock.advance(600)
        self.assertEqual(self.lists, [])
        gc = self.kube.garbage_collector
        self.assertIn(owner["metadata"]["uid"], gc.nodes)
        self.assertEqual(len(gc.dependents[owner["metadata"]["uid"]]), 1)
        self.request("DELETE", f"{CMS}/owner")
        self.clock.advance(0)
        self.assertEqual(self.request("GET", f"{CMS}/dep")[0], 404)
        self.assertEqual(self.lists, [])

    def test_relist_after_lost_watch(self):
        """A watch that ends is followed by one re-list of /registry, in pages; a dependent
        whose owner went meanwhile is then collected."""
        owner = self.cm("owner")
        self.cm("dep", [GarbageCollectorTests.ref("v1", "ConfigMap", "owner",
                                                 owner["metadata"]["uid"])])
        gc = self.kube.garbage_collector
        gc.informer.page_size = 20
        gc.informer._watch.stop()
        self.successResultOf(self.backend.delete("/registry/configmaps/default/owner"))
        self.assertEqual(self.request("GET", f"{CMS}/dep")[0], 200)
        self.clock.advance(1)
        self.clock.advance(0)
        pages = len(self.lists)
        self.assertGreater(pages, 2)
        self.assertEqual(self.lists, ["/registry"] * pages)
        self.assertEqual(self.request("GET", f"{CMS}/dep")[0], 404)


class CustomResourceOwnerTests(CRDTestCase):
    """Custom resources of a CRD established after the collector started."""

    def widget(self, name, refs=()):
        body = widget(name)
        body["metadata"]["ownerReferences"] = list(refs)
        code, obj, _ = self.request("POST", WIDGETS, body)
        self.assertEqual(code, 201, obj)
        return obj

    def test_dependents_of_a_custom_resource(self):
        """A ConfigMap owned by a Widget goes with it; a Widget owned by a ConfigMap too."""
        self.install()
        w = self.widget("w")
        self.request("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "of-w", "ownerReferences": [GarbageCollectorTests.ref(
                "example.com/v1", "Widget", "w", w["metadata"]["uid"])]}})
        code, owner, _ = self.request("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap",
                                                    "metadata": {"name": "owner"}})
        self.widget("of-cm", [GarbageCollectorTests.ref("v1", "ConfigMap", "owner",
                                                       owner["metadata"]["uid"])])
        self.request("DELETE", f"{WIDGETS}/w")
        self.request("DELETE", f"{CMS}/owner")
        self.settle()
        self.assertEqual(self.request("GET", f"{CMS}/of-w")[0], 404)
        self.assertEqual(self.request("GET", f"{WIDGETS}/of-cm")[0], 404)

    def test_owner_kind_served_later_is_retried_at_resync(self):
        """A reference to a kind nobody serves yet is resolved at the next resync once its
        CRD is established: a missing owner then means a dangling reference."""
        self.request("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "early", "ownerReferences": [GarbageCollectorTests.ref(
                "example.com/v1", "Widget", "gone", "0000-gone")]}})
        self.settle()
        self.install()
        self.assertEqual(self.request("GET", f"{CMS}/early")[0], 200)
        self.clock.advance(DEFAULT_RESYNC)
        self.settle()
        self.assertEqual(self.request("GET", f"{CMS}/early")[0], 404)


class StoreIndexTests(KubeTestCase):
    """Backend keys and kinds to Stores."""

    def test_lookups(self):
        stores = list(self.kube.stores.values())
        index = StoreIndex(lambda: stores, "/registry")
        self.assertEqual(index.by_key("/registry/configmaps/ns/a").spec.resource, "configmaps")
        self.assertEqual(index.by_key("/registry/namespaces/ns").spec.resource, "namespaces")
        self.assertEqual(index.by_key("/registry/services/specs/ns/a").spec.resource,
                         "services")
        self.assertEqual(index.by_key("/registry/deployments/ns/a").spec.resource,
                         "deployments")
        self.assertIsNone(index.by_key("/registry/nothing/here/at/all"))
        self.assertIsNone(index.by_key("/registry/example.com/widgets/ns/a"))
        self.assertEqual(index.by_kind("apps", "Deployment").spec.resource, "deployments")
        self.assertIsNone(index.by_kind("example.com", "Widget"))
        prefixed = StoreIndex(lambda: stores, "/other/")
        self.assertEqual(prefixed.by_key("/other/registry/configmaps/ns/a").spec.resource,
                         "configmaps")


class WatchCacheUntouchedTests(KubeTestCase):
    """The collectors watch the backend: they start none of the watch cache's per-resource
    caches (which start on a client's first watch or list, see tests.endpoints.test_watch)."""

    def test_no_cache_started(self):
        self.clock.advance(1)
        started = set(self.storage._caches)
        for prefix in ("configmaps", "pods", "nodes", "persistentvolumeclaims",
                       "persistentvolumes"):
            self.assertNotIn(f"/registry/{prefix}/", started)
        self.assertTrue(self.kube.garbage_collector.informer.synced)
