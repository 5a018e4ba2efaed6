"""NodeRestriction: what a node (system:node:<name> in system:nodes) may do, with upstream's
messages; other users pass."""

from __future__ import annotations

import copy
from typing import Any

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.admission.plugins.noderestriction import NodeRestriction, forbidden_labels
from kubetwist.authentication.user import UserInfo
from kubetwist.registry.rest import ResourceSpec
from tests.admission.test_builtin import NODES, PODS, PVCS, attrs, refused, run

NODE = UserInfo(name="system:node:n1", groups=["system:nodes", "system:authenticated"])
LEASES = ResourceSpec("coordination.k8s.io", "v1", "leases", "Lease", "lease")
SAS = ResourceSpec("", "v1", "serviceaccounts", "ServiceAccount", "serviceaccount")


def pod(name: str = "p", node: str = "n1", **meta: Any) -> dict:
    return {"metadata": {"name": name, "namespace": "ns", "uid": "pod-uid", **meta},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]}}


def mirror(**spec: Any) -> dict:
    p = pod(annotations={"kubernetes.io/config.mirror": "x"}, ownerReferences=[{
        "apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "node-uid",
        "controller": True}])
    p["spec"].update(spec)
    return p


class NodeRestrictionTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.pods = {"p": pod(), "other": pod("other", node="n2")}

        async def get_pod(name, namespace=""):
            return copy.deepcopy(self.pods.get(name))

        async def get_node(name, namespace=""):
            return {"metadata": {"name": name, "uid": "node-uid"}} if name == "n1" else None

        self.plugin = NodeRestriction(get_pod, get_node)

    def message(self, a) -> str:
        return refused(self, self.plugin.admit(a)).status["message"]

    def test_other_users_pass(self):
        run(self, self.plugin.admit(attrs(PODS, pod(), user=UserInfo(name="jane"))))
        run(self, self.plugin.admit(attrs(PODS, pod(), user=UserInfo(
            name="system:node:n1", groups=["devs"]))))

    def test_pods(self):
        self.assertEqual(self.message(attrs(PODS, pod(), user=NODE)),
                         'pods "p" is forbidden: pod does not have "kubernetes.io/config.mirror" '
                         'annotation, node "n1" can only create mirror pods')
        run(self, self.plugin.admit(attrs(PODS, mirror(), user=NODE)))
        self.assertEqual(self.message(attrs(PODS, mirror(serviceAccountName="x"), user=NODE)),
                         'pods "p" is forbidden: node "n1" can not create pods that reference a '
                         'service account')
        self.assertEqual(
            self.message(attrs(PODS, mirror(volumes=[{"name": "v", "configMap": {"name": "c"}}]),
                               user=NODE)),
            'pods "p" is forbidden: node "n1" can not create pods that reference configmaps')
        bad_owner = mirror()
        bad_owner["metadata"]["ownerReferences"][0]["uid"] = "else"
        self.assertEqual(self.message(attrs(PODS, bad_owner, user=NODE)),
                         'pods "p" is forbidden: node n1 UID mismatch: expected else got node-uid')
        self.assertEqual(self.message(attrs(PODS, None, "DELETE", old=pod("other", "n2"),
                                            user=NODE)),
                         'pods "other" is forbidden: node "n1" can only delete pods with '
                         'spec.nodeName set to itself')
        run(self, self.plugin.admit(attrs(PODS, None, "DELETE", old=pod(), user=NODE)))
        self.assertEqual(self.message(attrs(PODS, pod(), "UPDATE", old=pod(), user=NODE)),
                         'pods "p" is forbidden: unexpected operation "UPDATE", node "n1" can '
                         'only create and delete mirror pods')
        self.assertEqual(self.message(attrs(PODS, pod(), "UPDATE", old=pod(), user=NODE,
                                            subresource="ephemeralcontainers")),
                         'pods "p" is forbidden: unexpected pod subresource '
                         '"ephemeralcontainers", only \'status\' and \'eviction\' are allowed')

    def test_pod_status_and_eviction(self):
        run(self, self.plugin.admit(attrs(PODS, pod(), "UPDATE", old=pod(), user=NODE,
                                          subresource="status")))
        self.assertEqual(self.message(attrs(PODS, pod("other", "n2"), "UPDATE",
                                            old=pod("other", "n2"), user=NODE,
                                            subresource="status")),
                         'pods "other" is forbidden: node "n1" can only update pod status for '
                         'pods with spec.nodeName set to itself')
        relabelled = pod(labels={"a": "b"})
        self.assertEqual(self.message(attrs(PODS, relabelled, "UPDATE", old=pod(), user=NODE,
                                            subresource="status")),
                         'pods "p" is forbidden: node "n1" cannot update labels through pod '
                         'status')
        eviction = {"apiVersion": "policy/v1", "kind": "Eviction",
                    "metadata": {"name": "other"}}
        self.assertEqual(self.message(attrs(PODS, eviction, user=NODE, subresource="eviction")),
                         'pods "other" is forbidden: node n1 can only evict pods with '
                         'spec.nodeName set to itself')

    def test_nodes(self):
        node = {"metadata": {"name": "n2"}}
        self.assertEqual(self.message(attrs(NODES, node, namespace="", user=NODE)),
                         'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"')
        node = {"metadata": {"name": "n1", "labels": {
            "node-restriction.kubernetes.io/x": "y", "kubernetes.io/hostname": "n1",
            "example.com/ok": "1", "foo.k8s.io/bar": "z"}}}
        self.assertEqual(self.message(attrs(NODES, node, namespace="", user=NODE)),
                         'nodes "n1" is forbidden: node "n1" is not allowed to set the following '
                         'labels: foo.k8s.io/bar, node-restriction.kubernetes.io/x')
        old = {"metadata": {"name": "n1"}, "spec": {}}
        new = {"metadata": {"name": "n1"}, "spec": {"taints": [{"key": "k",
                                                                 "effect": "NoSchedule"}]}}
        self.assertEqual(self.message(attrs(NODES, new, "UPDATE", old=old, namespace="",
                                            user=NODE)),
                         'nodes "n1" is forbidden: node "n1" is not allowed to modify taints')
        new = {"metadata": {"name": "n1", "labels": {"kubernetes.io/role": "x"}}}
        self.assertEqual(self.message(attrs(NODES, new, "UPDATE", old=old, namespace="",
                                            user=NODE)),
                         'nodes "n1" is forbidden: is not allowed to modify labels: '
                         'kubernetes.io/role')
        new = {"metadata": {"name": "n1", "labels": {"node.kubernetes.io/x": "y"}}}
        run(self, self.plugin.admit(attrs(NODES, new, "UPDATE", old=old, namespace="",
                                          user=NODE)))

    def test_forbidden_labels(self):
        self.assertEqual(forbidden_labels({"a.kubelet.kubernetes.io/x": "1"}, {}), [])
        self.assertEqual(forbidden_labels({}, {"kubernetes.io/foo": "1"}),
                         ["kubernetes.io/foo"])

    def test_pvc_status(self):
        old = {"metadata": {"name": "c", "resourceVersion": "1"}, "spec": {},
               "status": {"phase": "Bound"}}
        new = copy.deepcopy(old)
        new["status"]["capacity"] = {"storage": "2Gi"}
        run(self, self.plugin.admit(attrs(PVCS, new, "UPDATE", old=old, user=NODE,
                                          subresource="status")))
        new["status"]["phase"] = "Lost"
        message = self.message(attrs(PVCS, new, "UPDATE", old=old, user=NODE,
                                     subresource="status"))
        self.assertTrue(message.startswith(
            'persistentvolumeclaims "c" is forbidden: node "n1" is not allowed to update fields '
            'other than status.capacity and status.conditions: '), message)
        self.assertEqual(self.message(attrs(PVCS, new, "UPDATE", old=old, user=NODE)),
                         'persistentvolumeclaims "c" is forbidden: may only update PVC status')

    def test_tokens_leases(self):
        def token(**ref):
            return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                    "metadata": {}, "spec": {"boundObjectRef": ref} if ref else {}}
        self.assertEqual(self.message(attrs(SAS, token(), name="default", user=NODE,
                                            subresource="token")),
                         'serviceaccounts "default" is forbidden: node requested token not bound '
                         'to a pod')
        ref = {"apiVersion": "v1", "kind": "Pod", "name": "other", "uid": "pod-uid"}
        self.assertEqual(self.message(attrs(SAS, token(**ref), user=NODE, subresource="token",
                                            name="default")),
                         'serviceaccounts "default" is forbidden: node requested token bound to '
                         'a pod scheduled on a different node')
        run(self, self.plugin.admit(attrs(SAS, token(**dict(ref, name="p")), user=NODE,
                                          subresource="token", name="default")))
        lease = {"metadata": {"name": "n1"}}
        self.assertEqual(self.message(attrs(LEASES, lease, user=NODE)),
                         'leases.coordination.k8s.io "n1" is forbidden: can only access leases '
                         'in the "kube-node-lease" system namespace')
        run(self, self.plugin.admit(attrs(LEASES, lease, user=NODE,
                                          namespace="kube-node-lease")))
        self.assertEqual(self.message(attrs(LEASES, {"metadata": {"name": "n2"}}, user=NODE,
                                            namespace="kube-node-lease")),
                         'leases.coordination.k8s.io "n2" is forbidden: can only access node '
                         'lease with the same name as the requesting node')
