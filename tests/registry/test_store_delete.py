"""
Tests for L{kubetwist.registry.generic.store.Store.delete}, L{kubetwist.registry.deletion} and
L{kubetwist.registry.core.pod}: upstream C{Store.Delete}, C{rest.BeforeDelete},
C{deletionFinalizersForGarbageCollection} and the pod C{CheckGracefulDelete}.
"""

from __future__ import annotations

from twisted.internet.defer import Deferred
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apimachinery.meta import format_rfc3339
from kubetwist.apis.apps import register as apps
from kubetwist.apis.core import register as core
from kubetwist.registry import deletion
from kubetwist.registry.core.pod import check_graceful_delete
from kubetwist.registry.generic.store import ListOptions, Store
from kubetwist.runtime import errors
from kubetwist.storage.sqlite import SQLiteStorage
from tests.support import FakeReactorClock, InlinePool

T0 = 1_700_000_000


def _spec(resources, name):
    return next(r for r in resources if r.resource == name)


class StoreDeleteTests(SynchronousTestCase):
    """Store.delete over in-memory SQLite on a fake clock."""

    def setUp(self) -> None:
        self.clock = FakeReactorClock()
        self.clock.advance(T0)
        self.storage = SQLiteStorage(self.clock, ":memory:", threadpool=InlinePool())
        self.cms = Store(_spec(core.RESOURCES, "configmaps"), core.STRATEGIES["configmaps"],
                         self.storage, self.clock)
        self.pods = Store(_spec(core.RESOURCES, "pods"), core.STRATEGIES["pods"],
                          self.storage, self.clock, return_deleted_object=True)
        self.rcs = Store(_spec(core.RESOURCES, "replicationcontrollers"),
                         core.STRATEGIES["replicationcontrollers"], self.storage, self.clock)
        self.deploys = Store(_spec(apps.RESOURCES, "deployments"), apps.STRATEGIES["deployments"],
                             self.storage, self.clock)

    def wait(self, coro):
        return self.successResultOf(Deferred.fromCoroutine(coro))

    def fail_with(self, coro) -> errors.StatusError:
        return self.failureResultOf(Deferred.fromCoroutine(coro), errors.StatusError).value

    def cm(self, name="a", finalizers=None) -> dict:
        obj = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": name, "namespace": "default"}}
        if finalizers:
            obj["metadata"]["finalizers"] = finalizers
        return self.wait(self.cms.create("default", obj))

    def pod(self, name="p", node="n1", grace=None, phase=None) -> dict:
        spec = {"containers": [{"name": "c", "image": "busybox"}]}
        if node:
            spec["nodeName"] = node
        if grace is not None:
            spec["terminationGracePeriodSeconds"] = grace
        obj = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": "default"}, "spec": spec}
        self.pods.strategy.default(obj)
        obj = self.wait(self.pods.create("default", obj))
        if phase:
            async def set_phase(cur):
                cur["status"]["phase"] = phase
                return cur
            status = self.pods.for_subresource(core.STRATEGIES["pods/status"])
            obj, _ = self.wait(status.update("default", name, set_phase))
        return obj

    def get(self, store, name):
        return self.wait(store.get("default", name))

    def test_plain_delete_answers_status(self):
        """A configmap without finalizers is removed at once; the answer is a Status of
        success whose details name the resource (upstream puts the resource in kind)."""
        uid = self.cm()["metadata"]["uid"]
        answer, deleted = self.wait(self.cms.delete("default", "a", {}))
        self.assertTrue(deleted)
        self.assertEqual(answer, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                  "status": "Success",
                                  "details": {"name": "a", "kind": "configmaps", "uid": uid}})
        self.assertEqual(self.fail_with(self.cms.get("default", "a")).code, 404)

    def test_orphan_policy_adds_finalizer(self):
        """propagationPolicy Orphan keeps the object with the orphan finalizer,
        deletionTimestamp now and deletionGracePeriodSeconds 0; the answer is the object."""
        self.cm()
        answer, deleted = self.wait(self.cms.delete("default", "a",
                                                   {"propagationPolicy": "Orphan"}))
        self.assertFalse(deleted)
        meta = answer["metadata"]
        self.assertEqual((meta["finalizers"], meta["deletionTimestamp"],
                          meta["deletionGracePeriodSeconds"], answer["kind"]),
                         (["orphan"], format_rfc3339(T0), 0, "ConfigMap"))
        self.assertEqual(self.get(self.cms, "a")["metadata"]["finalizers"], ["orphan"])

    def test_foreground_policy_adds_finalizer_after_others(self):
        """Foreground appends foregroundDeletion after the object's own finalizers."""
        self.cm(finalizers=["example.com/x"])
        answer, _ = self.wait(self.cms.delete("default", "a", {"propagationPolicy": "Foreground"}))
        self.assertEqual(answer["metadata"]["finalizers"],
                         ["example.com/x", "foregroundDeletion"])

    def test_orphan_dependents_false_is_background(self):
        """The deprecated orphanDependents=false adds no finalizer: deleted at once."""
        self.cm()
        _, deleted = self.wait(self.cms.delete("default", "a", {"orphanDependents": False}))
        self.assertTrue(deleted)

    def test_orphan_dependents_true_adds_orphan(self):
        """orphanDependents=true is the orphan policy."""
        self.cm()
        answer, deleted = self.wait(self.cms.delete("default", "a", {"orphanDependents": True}))
        self.assertEqual((deleted, answer["metadata"]["finalizers"]), (False, ["orphan"]))

    def test_second_delete_switches_policy(self):
        """A second delete with another policy swaps orphan for foregroundDeletion and keeps
        the first deletionTimestamp; Background then removes it, deleting the object."""
        self.cm()
        self.wait(self.cms.delete("default", "a", {"propagationPolicy": "Orphan"}))
        self.clock.advance(10)
        answer, deleted = self.wait(self.cms.delete("default", "a",
                                                   {"propagationPolicy": "Foreground"}))
        self.assertEqual((deleted, answer["metadata"]["finalizers"],
                          answer["metadata"]["deletionTimestamp"]),
                         (False, ["foregroundDeletion"], format_rfc3339(T0)))
        answer, deleted = self.wait(self.cms.delete("default", "a",
                                                   {"propagationPolicy": "Background"}))
        self.assertTrue(deleted)
        self.assertEqual(answer["status"], "Success")

    def test_default_policy_of_replicationcontrollers_is_orphan(self):
        """v1 ReplicationControllers orphan by default (upstream, for back compatibility);
        apps/v1 Deployments delete dependents in the background."""
        rc = {"apiVersion": "v1", "kind": "ReplicationController",
              "metadata": {"name": "rc", "namespace": "default"},
              "spec": {"replicas": 0, "selector": {"a": "b"}, "template": {
                  "metadata": {"labels": {"a": "b"}},
                  "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
        self.rcs.strategy.default(rc)
        self.wait(self.rcs.create("default", rc))
        answer, deleted = self.wait(self.rcs.delete("default", "rc", {}))
        self.assertEqual((deleted, answer["metadata"]["finalizers"]), (False, ["orphan"]))
        self.assertEqual(answer["metadata"]["generation"], 2)
        self.assertEqual(self.deploys.gc_policy, "DeleteDependents")
        self.assertEqual(Store(_spec(core.RESOURCES, "events"), core.STRATEGIES["events"],
                               self.storage, self.clock).gc_policy, "Unsupported")

    def test_unsupported_policy_ignores_orphan(self):
        """Events take no GC finalizers: an Orphan delete removes them at once."""
        events = Store(_spec(core.RESOURCES, "events"), core.STRATEGIES["events"],
                       self.storage, self.clock)
        self.wait(events.create("default", {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reason": "R", "type": "Normal", "firstTimestamp": format_rfc3339(T0)}))
        _, deleted = self.wait(events.delete("default", "e", {"propagationPolicy": "Orphan"}))
        self.assertTrue(deleted)

    def test_conflicting_options_are_invalid(self):
        """orphanDependents with propagationPolicy is 422 with upstream's message and cause."""
        self.cm()
        err = self.fail_with(self.cms.delete("default", "a", {
            "orphanDependents": True, "propagationPolicy": "Orphan"}))
        self.assertEqual((err.code, err.reason), (422, "Invalid"))
        self.assertEqual(err.message,
                         'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid '
                         'value: "Orphan": orphanDependents and deletionPropagation cannot be '
                         'both set')
        self.assertEqual(err.status["details"]["causes"], [{
            "reason": "FieldValueInvalid", "field": "propagationPolicy",
            "message": 'Invalid value: "Orphan": orphanDependents and deletionPropagation '
                       'cannot be both set'}])

    def test_resource_version_precondition(self):
        """A stale resourceVersion precondition is 409 with upstream's BeforeDelete message."""
        rv = self.cm()["metadata"]["resourceVersion"]
        err = self.fail_with(self.cms.delete("default", "a",
                                             {"preconditions": {"resourceVersion": "1"}}))
        self.assertEqual(err.code, 409)
        self.assertEqual(err.message,
                         f'Operation cannot be fulfilled on ConfigMap "a": the ResourceVersion '
                         f'in the precondition (1) does not match the ResourceVersion in record '
                         f'({rv}). The object might have been modified')
        _, deleted = self.wait(self.cms.delete("default", "a",
                                              {"preconditions": {"resourceVersion": rv}}))
        self.assertTrue(deleted)

    def test_dry_run_orphan_keeps_object_unchanged(self):
        """A dry-run Orphan delete answers the marked object but stores nothing."""
        self.cm()
        answer, deleted = self.wait(self.cms.delete("default", "a", {
            "propagationPolicy": "Orphan", "dryRun": ["All"]}))
        self.assertEqual((deleted, answer["metadata"]["finalizers"]), (False, ["orphan"]))
        self.assertNotIn("finalizers", self.get(self.cms, "a")["metadata"])

    def test_dry_run_delete_keeps_object(self):
        """A dry-run delete answers success and keeps the object."""
        self.cm()
        answer, deleted = self.wait(self.cms.delete("default", "a", {}, dry_run=True))
        self.assertEqual((deleted, answer["status"]), (True, "Success"))
        self.assertEqual(self.get(self.cms, "a")["metadata"]["name"], "a")

    def test_bound_pod_is_deleted_gracefully(self):
        """A pod with a nodeName gets deletionTimestamp now + terminationGracePeriodSeconds,
        deletionGracePeriodSeconds, and stays (v1.32 pods have no generation to bump)."""
        self.pod(grace=30)
        answer, deleted = self.wait(self.pods.delete("default", "p", {}))
        meta = answer["metadata"]
        self.assertEqual((deleted, meta["deletionTimestamp"], meta["deletionGracePeriodSeconds"],
                          meta.get("generation")),
                         (False, format_rfc3339(T0 + 30), 30, None))
        self.assertEqual(self.get(self.pods, "p")["metadata"]["deletionGracePeriodSeconds"], 30)

    def test_update_of_terminating_pod_keeps_it(self):
        """An update of a pod whose graceful deletion is pending does not delete it (upstream
        ShouldDeleteDuringUpdate wants deletionGracePeriodSeconds 0)."""
        self.pod(grace=30)
        self.wait(self.pods.delete("default", "p", {}))

        async def label(cur):
            cur["metadata"]["labels"] = {"a": "b"}
            return cur

        out, _ = self.wait(self.pods.update("default", "p", label))
        self.assertEqual((out["metadata"]["labels"], out["metadata"]["deletionGracePeriodSeconds"]),
                         ({"a": "b"}, 30))
        self.assertEqual(self.get(self.pods, "p")["metadata"]["labels"], {"a": "b"})

    def test_grace_can_shorten_not_lengthen(self):
        """A later delete with a longer grace changes nothing (answers the pod); a shorter one
        moves deletionTimestamp back; grace 0 removes the pod."""
        self.pod(grace=30)
        self.wait(self.pods.delete("default", "p", {}))
        self.clock.advance(5)
        answer, deleted = self.wait(self.pods.delete("default", "p", {"gracePeriodSeconds": 60}))
        self.assertEqual((deleted, answer["metadata"]["deletionGracePeriodSeconds"]), (False, 30))
        answer, deleted = self.wait(self.pods.delete("default", "p", {"gracePeriodSeconds": 10}))
        self.assertEqual((deleted, answer["metadata"]["deletionTimestamp"],
                          answer["metadata"]["deletionGracePeriodSeconds"]),
                         (False, format_rfc3339(T0 + 10), 10))
        answer, deleted = self.wait(self.pods.delete("default", "p", {"gracePeriodSeconds": 0}))
        self.assertTrue(deleted)
        self.assertEqual(answer["kind"], "Pod")
        self.assertEqual(self.fail_with(self.pods.get("default", "p")).code, 404)

    def test_shortening_past_now_clamps(self):
        """Shortening a grace already spent sets deletionTimestamp to now and grace 1."""
        self.pod(grace=30)
        self.wait(self.pods.delete("default", "p", {}))
        self.clock.advance(20)
        answer, _ = self.wait(self.pods.delete("default", "p", {"gracePeriodSeconds": 5}))
        self.assertEqual((answer["metadata"]["deletionTimestamp"],
                          answer["metadata"]["deletionGracePeriodSeconds"]),
                         (format_rfc3339(T0 + 20), 1))

    def test_unbound_and_terminal_pods_go_at_once(self):
        """Pods with no nodeName, or Succeeded/Failed, are deleted at once; the answer is the
        pod (pods return deleted objects) carrying the zero-grace deletionTimestamp."""
        self.pod("u", node="")
        answer, deleted = self.wait(self.pods.delete("default", "u", {"gracePeriodSeconds": 30}))
        self.assertEqual(
            (deleted, answer["kind"], answer["metadata"]["deletionGracePeriodSeconds"]),
            (True, "Pod", 0))
        self.pod("t", phase="Succeeded")
        _, deleted = self.wait(self.pods.delete("default", "t", {}))
        self.assertTrue(deleted)

    def test_zero_grace_with_resource_version_precondition(self):
        """A zero-grace pod delete with a resourceVersion precondition is stored marked, then
        removed under the marked object's resourceVersion (upstream updates the
        precondition)."""
        rv = self.pod(grace=30)["metadata"]["resourceVersion"]
        _, deleted = self.wait(self.pods.delete("default", "p", {
            "gracePeriodSeconds": 0, "preconditions": {"resourceVersion": rv}}))
        self.assertTrue(deleted)
        self.assertEqual(self.fail_with(self.pods.get("default", "p")).code, 404)

    def test_no_options_means_grace_zero(self):
        """Internal callers passing no options delete even bound pods at once."""
        self.pod(grace=30)
        _, deleted = self.wait(self.pods.delete("default", "p"))
        self.assertTrue(deleted)

    def test_delete_collection_marks_and_returns_listed(self):
        """delete_collection applies the options to each item and answers the list as it was
        before deleting."""
        self.cm("a")
        self.cm("b")
        out = self.wait(self.cms.delete_collection("default", ListOptions(),
                                                  {"propagationPolicy": "Orphan"}))
        self.assertEqual([i["metadata"]["name"] for i in out["items"]], ["a", "b"])
        self.assertNotIn("finalizers", out["items"][0]["metadata"])
        self.assertEqual(self.get(self.cms, "b")["metadata"]["finalizers"], ["orphan"])

    def test_marked_hooks_run_once(self):
        """on_marked_for_deletion hooks run when the object changed, not for a repeat."""
        seen = []
        self.cms.on_marked_for_deletion.append(lambda o: seen.append(o["metadata"]["name"]))
        self.cm(finalizers=["x/y"])
        self.wait(self.cms.delete("default", "a", {}))
        self.wait(self.cms.delete("default", "a", {}))
        self.assertEqual(seen, ["a"])


class DeletionHelperTests(SynchronousTestCase):
    """The pure functions of L{kubetwist.registry.deletion} and the pod graceful check."""

    def test_gc_finalizers_unchanged(self):
        """With no options and no default policy nothing changes."""
        obj = {"metadata": {"finalizers": ["a"]}}
        self.assertEqual(deletion.gc_finalizers("", obj, {}), (False, ["a"]))

    def test_gc_finalizers_existing_finalizer_wins_over_default(self):
        """An object already carrying foregroundDeletion keeps it over an orphan default."""
        obj = {"metadata": {"finalizers": ["foregroundDeletion"]}}
        self.assertEqual(deletion.gc_finalizers("OrphanDependents", obj, {}),
                         (False, ["foregroundDeletion"]))

    def test_unsupported_policy_value(self):
        """An unknown propagationPolicy is 422 NotSupported listing upstream's values."""
        err = self.assertRaises(errors.StatusError, deletion.validate_delete_options,
                                {"propagationPolicy": "Later"})
        self.assertEqual(err.message,
                         'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported '
                         'value: "Later": supported values: "Foreground", "Background", '
                         '"Orphan", "nil"')

    def test_pod_grace_rules(self):
        """The pod grace: requested, else the spec's, else 0; 0 when unbound; negative is 1."""
        bound = {"spec": {"nodeName": "n", "terminationGracePeriodSeconds": 7}}
        for pod, opts, want in [
            (bound, {}, 7),
            (bound, {"gracePeriodSeconds": 3}, 3),
            (bound, {"gracePeriodSeconds": -5}, 1),
            ({"spec": {"nodeName": "n"}}, {}, 0),
            ({"spec": {"terminationGracePeriodSeconds": 7}}, {}, 0),
            (dict(bound, status={"phase": "Failed"}), {}, 0),
        ]:
            self.assertTrue(check_graceful_delete(pod, opts))
            self.assertEqual(opts["gracePeriodSeconds"], want)

    def test_negative_grace_is_one(self):
        """BeforeDelete turns a negative gracePeriodSeconds into 1 before the strategy runs."""
        obj = {"metadata": {"name": "p"}, "spec": {"nodeName": "n"}}
        opts = {"gracePeriodSeconds": -1}
        out = deletion.before_delete(obj, opts, T0, "", "Pod", check_graceful_delete)
        self.assertEqual((out.graceful, obj["metadata"]["deletionGracePeriodSeconds"],
                          obj["metadata"]["deletionTimestamp"]),
                         (True, 1, format_rfc3339(T0 + 1)))
