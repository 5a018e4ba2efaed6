# -*- test-case-name: tests.integration.test_deletion -*-
"""
Issue 5 item 8 with the real C{kubectl} against a real C{twistd -n kubeapi}: cascading
deletion (C{--cascade=orphan}, C{--cascade=foreground}) finished by kubetwist's garbage
collector, and C{kubectl delete pod} of a pod bound to a node, finished by its pod GC (kubectl
waits until the object is gone in each case).
"""

from __future__ import annotations

import json

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units

LABELS = {"app": "x"}
TEMPLATE = {"metadata": {"labels": LABELS},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


class DeletionAcceptanceTests(ServerTestMixin, SynchronousTestCase):
    """Cascading and graceful deletion through kubectl, on the embedded store."""

    def deployment_with_replicaset(self, ns: str) -> None:
        self.create(ns, {"apiVersion": "apps/v1", "kind": "Deployment",
                         "metadata": {"name": "d"},
                         "spec": {"replicas": 0, "selector": {"matchLabels": LABELS},
                                  "template": TEMPLATE}})
        uid = self.get_json(ns, "deployment", "d")["metadata"]["uid"]
        self.create(ns, {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {
            "name": "d-1", "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": uid,
                "controller": True, "blockOwnerDeletion": True}]},
            "spec": {"replicas": 0, "selector": {"matchLabels": LABELS}, "template": TEMPLATE}})

    def not_found(self, ns: str, kind: str, name: str) -> str:
        r = self.server.kubectl("get", kind, name, "-n", ns, check=False)
        return r.stderr.strip()

    def test_cascade_orphan(self) -> None:
        """C{--cascade=orphan} removes the Deployment and leaves its ReplicaSet without an
        ownerReference."""
        ns = self.namespace()
        self.deployment_with_replicaset(ns)
        r = self.server.kubectl("delete", "deployment", "d", "-n", ns, "--cascade=orphan")
        self.assertIn('deployment.apps "d" deleted', r.stdout)
        self.assertEqual(self.not_found(ns, "deployment", "d"),
                         'Error from server (NotFound): deployments.apps "d" not found')
        rs = self.get_json(ns, "replicaset", "d-1")
        self.assertNotIn("ownerReferences", rs["metadata"])

    def test_cascade_foreground(self) -> None:
        """C{--cascade=foreground} returns once the Deployment is gone, its ReplicaSet first."""
        ns = self.namespace()
        self.deployment_with_replicaset(ns)
        r = self.server.kubectl("delete", "deployment", "d", "-n", ns, "--cascade=foreground")
        self.assertIn('deployment.apps "d" deleted', r.stdout)
        self.assertEqual(self.not_found(ns, "replicaset", "d-1"),
                         'Error from server (NotFound): replicasets.apps "d-1" not found')
        self.assertEqual(self.not_found(ns, "deployment", "d"),
                         'Error from server (NotFound): deployments.apps "d" not found')

    def test_delete_bound_pod(self) -> None:
        """C{kubectl delete pod} of a pod bound to a node nobody registered finishes: the pod
        was Terminating (deletionGracePeriodSeconds 30) and the pod GC removed it."""
        ns = self.namespace()
        self.create(ns, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"nodeName": "nowhere", "containers": [
                             {"name": "c", "image": "busybox"}]}})
        r = self.server.kubectl("delete", "pod", "p", "-n", ns, "-o", "name")
        self.assertEqual(r.stdout.strip(), "pod/p")
        self.assertEqual(self.not_found(ns, "pod", "p"),
                         'Error from server (NotFound): pods "p" not found')

    def test_delete_pod_answer_is_terminating(self) -> None:
        """The server's answer to a DELETE of a bound pod (C{kubectl delete --raw}) is the pod,
        Terminating with its C{terminationGracePeriodSeconds}."""
        ns = self.namespace()
        self.create(ns, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q"},
                         "spec": {"nodeName": "nowhere", "terminationGracePeriodSeconds": 7,
                                  "containers": [{"name": "c", "image": "busybox"}]}})
        r = self.server.kubectl("delete", "--raw", f"/api/v1/namespaces/{ns}/pods/q")
        pod = json.loads(r.stdout)
        self.assertEqual((pod["kind"], pod["metadata"]["deletionGracePeriodSeconds"]),
                         ("Pod", 7))


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
