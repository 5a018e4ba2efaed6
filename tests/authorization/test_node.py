"""The Node mode: upstream plugin/pkg/auth/authorizer/node (decisions, reasons, the graph)."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from kubetwist import authorization
from kubetwist.authentication.user import UserInfo
from kubetwist.authorization.authorizer import ALLOW, NO_OPINION, Attributes, IAuthorizer
from kubetwist.authorization.node import NodeAuthorizer, _factory, node_identity
from kubetwist.authorization.node.graph import Graph, pod_edges, pod_references, pv_edges
from kubetwist.storage.cacher import Cacher
from kubetwist.storage.sqlite import SQLiteStorage
from tests.support import FakeReactorClock, InlinePool

N1 = UserInfo(name="system:node:n1", groups=["system:nodes", "system:authenticated"])
NOREL = "no relationship found between node 'n1' and this object"


def pod(name="p1", node="n1", ns="default", **spec) -> dict:
    spec.setdefault("containers", [{"name": "c", "image": "x"}])
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": spec}


POD = pod(serviceAccountName="robot", imagePullSecrets=[{"name": "pull"}],
          containers=[{"name": "c", "image": "x",
                       "env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s1",
                                                                            "key": "a"}}}],
                       "envFrom": [{"configMapRef": {"name": "cm-env"}}]}],
          volumes=[{"name": "v", "secret": {"secretName": "s-vol"}},
                   {"name": "cm", "configMap": {"name": "cm-vol"}},
                   {"name": "proj", "projected": {"sources": [{"secret": {"name": "s-proj"}}]}},
                   {"name": "data", "persistentVolumeClaim": {"claimName": "claim"}},
                   {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}},
                   {"name": "az", "azureFile": {"secretName": "s-az", "shareName": "x"}},
                   {"name": "cifs",
                    "flexVolume": {"driver": "d", "secretRef": {"name": "s-flex"}}}])
PV = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
      "spec": {"claimRef": {"namespace": "default", "name": "claim"},
               "csi": {"driver": "d", "volumeHandle": "h",
                       "nodePublishSecretRef": {"name": "csi-secret", "namespace": "storage"}}}}


def res(verb, resource, name="", namespace="default", group="", subresource="", user=N1,
        field_selector="") -> Attributes:
    return Attributes(user=user, verb=verb, namespace=namespace, api_group=group,
                      resource=resource, subresource=subresource, name=name,
                      resource_request=True, field_selector=field_selector)


class DecisionTests(SynchronousTestCase):
    """Upstream's decisions and reasons (checked against kube-apiserver v1.32)."""

    def setUp(self) -> None:
        self.graph = Graph()
        self.graph.set_owned_edges(("pod", "default", "p1"), pod_edges(POD))
        self.graph.set_owned_edges(("pv", "", "pv1"), pv_edges(PV))
        self.authorizer = NodeAuthorizer(self.graph)

    def decide(self, attributes):
        return self.successResultOf(self.authorizer.authorize(attributes))

    def test_interface(self) -> None:
        self.assertTrue(verifyObject(IAuthorizer, self.authorizer))

    def test_table(self) -> None:
        cases = [
            (res("get", "secrets", "s1"), (ALLOW, "")),
            (res("get", "secrets", "s-vol"), (ALLOW, "")),
            (res("get", "secrets", "s-proj"), (ALLOW, "")),
            (res("get", "secrets", "pull"), (ALLOW, "")),
            (res("get", "secrets", "s-flex"), (ALLOW, "")),
            (res("watch", "secrets", "s1"), (ALLOW, "")),
            (res("get", "secrets", "s2"), (NO_OPINION, NOREL)),
            (res("get", "secrets", "s1", namespace="other"), (NO_OPINION, NOREL)),
            (res("list", "secrets"), (NO_OPINION, "No Object name found")),
            (res("delete", "secrets", "s1"), (NO_OPINION, "can only read resources of this type")),
            (res("get", "secrets", "s1", subresource="x"), (NO_OPINION, "cannot read subresource")),
            (res("get", "secrets", "s1", namespace=""),
             (NO_OPINION, "can only read namespaced object of this type")),
            (res("get", "configmaps", "cm-env"), (ALLOW, "")),
            (res("get", "configmaps", "cm-vol"), (ALLOW, "")),
            (res("get", "configmaps", "nope"), (NO_OPINION, NOREL)),
            (res("get", "persistentvolumeclaims", "claim"), (ALLOW, "")),
            (res("get", "persistentvolumeclaims", "p1-scratch"), (ALLOW, "")),
            (res("list", "persistentvolumeclaims"),
             (NO_OPINION, "can only get individual resources of this type")),
            (res("update", "persistentvolumeclaims", "claim", subresource="status"),
             (ALLOW, "")),
            (res("get", "persistentvolumeclaims", "claim", subresource="status"),
             (NO_OPINION, "can only get/update/patch this type")),
            (res("get", "persistentvolumes", "pv1", namespace=""), (ALLOW, "")),
            (res("get", "persistentvolumes", "pv2", namespace=""), (NO_OPINION, NOREL)),
            (res("get", "secrets", "csi-secret", namespace="storage"), (ALLOW, "")),
            (res("create", "serviceaccounts", "robot", subresource="token"), (ALLOW, "")),
            (res("create", "serviceaccounts", "default", subresource="token"),
             (NO_OPINION, NOREL)),
            (res("get", "serviceaccounts", "robot"),
             (NO_OPINION, "can only create tokens for individual service accounts")),
            (res("create", "serviceaccounts", "robot"),
             (NO_OPINION, "can only create token subresource of serviceaccount")),
            (res("get", "leases", "n1", "kube-node-lease", "coordination.k8s.io"), (ALLOW, "")),
            (res("create", "leases", "", "kube-node-lease", "coordination.k8s.io"), (ALLOW, "")),
            (res("get", "leases", "n2", "kube-node-lease", "coordination.k8s.io"),
             (NO_OPINION, "can only access node lease with the same name as the requesting "
                          "node")),
            (res("list", "leases", "", "kube-node-lease", "coordination.k8s.io"),
             (NO_OPINION, "can only get, create, update, patch, or delete a node lease")),
            (res("get", "leases", "n1", "default", "coordination.k8s.io"),
             (NO_OPINION, 'can only access leases in the "kube-node-lease" system namespace')),
            (res("get", "nodes", "n1", ""), (ALLOW, "")),
            (res("get", "nodes", "n2", ""),
             (NO_OPINION, "node 'n1' cannot read 'n2', only its own Node object")),
            (res("list", "nodes", "", ""),
             (NO_OPINION, "node 'n1' cannot read all nodes, only its own Node object")),
            (res("create", "nodes", "", ""), (ALLOW, "")),
            (res("patch", "nodes", "n1", "", subresource="status"), (ALLOW, "")),
            (res("delete", "nodes", "n1", ""), (NO_OPINION, "")),
            (res("get", "pods", "p1"), (ALLOW, "")),
            (res("get", "pods", "p2"), (NO_OPINION, NOREL)),
            (res("list", "pods"),
             (NO_OPINION, "can only list/watch pods with spec.nodeName field selector")),
            (res("watch", "pods", "", "", field_selector="spec.nodeName=n1"), (ALLOW, "")),
            (res("list", "pods", field_selector="spec.nodeName=n2"),
             (NO_OPINION, "can only list/watch pods with spec.nodeName field selector")),
            (res("create", "pods", "mirror"), (ALLOW, "")),
            (res("update", "pods", "p1", subresource="status"), (ALLOW, "")),
            (res("create", "pods", "p1", subresource="eviction"), (ALLOW, "")),
            (res("update", "pods", "p1"), (NO_OPINION, "")),
            # the static node rules decide the rest
            (res("list", "services", namespace=""), (ALLOW, "")),
            (res("create", "events", namespace="default"), (ALLOW, "")),
            (res("create", "tokenreviews", group="authentication.k8s.io", namespace=""),
             (ALLOW, "")),
            (res("get", "deployments", "d", group="apps"), (NO_OPINION, "")),
            (Attributes(user=N1, verb="get", path="/healthz"), (NO_OPINION, "")),
        ]
        for attributes, want in cases:
            self.assertEqual(self.decide(attributes), want, attributes)

    def test_not_a_node(self) -> None:
        """Other users, and node names outside system:nodes, get no opinion and no reason."""
        for user in (UserInfo(name="jane"), UserInfo(name="system:node:n1"),
                     UserInfo(name="n1", groups=["system:nodes"])):
            self.assertEqual(self.decide(res("get", "secrets", "s1", user=user)),
                             (NO_OPINION, ""))
        self.assertEqual(self.decide(res("get", "secrets", "s1", user=UserInfo(
            name="system:node:", groups=["system:nodes"]))),
            (NO_OPINION, 'unknown node for user "system:node:"'))
        self.assertEqual(node_identity(N1), ("n1", True))

    def test_other_node(self) -> None:
        n2 = UserInfo(name="system:node:n2", groups=["system:nodes"])
        self.assertEqual(self.decide(res("get", "secrets", "s1", user=n2)), (
            NO_OPINION, "no relationship found between node 'n2' and this object"))

    def test_rules_for(self) -> None:
        self.assertEqual(self.authorizer.rules_for(N1, "default"), (
            [], [], True, "node authorizer does not support user rule resolution"))
        self.assertEqual(self.authorizer.rules_for(UserInfo(name="jane"), "default"),
                         ([], [], False, ""))

    def test_graph_updates(self) -> None:
        """Moving or deleting the pod moves or removes its edges; shared edges stay."""
        other = pod("p2")
        other["spec"]["volumes"] = [{"name": "v", "secret": {"secretName": "s1"}}]
        self.graph.set_owned_edges(("pod", "default", "p2"), pod_edges(other))
        moved = dict(POD, spec=dict(POD["spec"], nodeName="n2"))
        self.graph.set_owned_edges(("pod", "default", "p1"), pod_edges(moved))
        self.assertEqual(self.decide(res("get", "configmaps", "cm-env")), (NO_OPINION, NOREL))
        self.assertEqual(self.decide(res("get", "secrets", "s1")), (ALLOW, ""))
        self.graph.delete_owner(("pod", "default", "p2"))
        self.assertEqual(self.decide(res("get", "secrets", "s1")), (NO_OPINION, NOREL))

    def test_unscheduled_pod(self) -> None:
        """A pod without a node adds nothing (upstream AddPod)."""
        self.assertEqual(pod_edges(pod(node="")), [])

    def test_references(self) -> None:
        refs = pod_references(POD)
        self.assertEqual(refs["secret"], {"s1", "s-vol", "s-proj", "pull", "s-flex", "s-az"})
        self.assertEqual(refs["configmap"], {"cm-env", "cm-vol"})
        self.assertEqual(refs["pvc"], {"claim", "p1-scratch"})
        self.assertEqual(refs["serviceAccount"], {"robot"})


class PopulatorTests(SynchronousTestCase):
    """The graph follows storage through watches (asynchronously, in memory)."""

    def setUp(self) -> None:
        self.clock = FakeReactorClock()
        self.storage = Cacher(SQLiteStorage(self.clock, ":memory:", threadpool=InlinePool()),
                              self.clock)
        self.addCleanup(self.storage.stop)

    def create(self, key, obj):
        self.successResultOf(self.storage.create(key, obj))
        self.clock.advance(0)

    def test_watches(self) -> None:
        self.create("/registry/pods/default/p1", POD)
        authorizer = _factory(authorization.AuthorizerConfig(storage=self.storage,
                                                             reactor=self.clock))
        self.addCleanup(authorizer.populator.stop)
        self.clock.advance(0)
        decide = authorizer.decide
        self.assertEqual(decide(res("get", "secrets", "s1")), (ALLOW, ""))
        self.create("/registry/persistentvolumes/pv1", PV)
        self.assertEqual(decide(res("get", "persistentvolumes", "pv1", "")), (ALLOW, ""))
        self.successResultOf(self.storage.delete("/registry/pods/default/p1"))
        self.clock.advance(0)
        self.assertEqual(decide(res("get", "secrets", "s1")), (NO_OPINION, NOREL))
        self.assertEqual(decide(res("get", "persistentvolumes", "pv1", "")), (NO_OPINION, NOREL))

    def test_malformed_objects(self) -> None:
        """Item 7: objects of unexpected shapes in storage link nothing and break nothing."""
        authorizer = _factory(authorization.AuthorizerConfig(storage=self.storage,
                                                             reactor=self.clock))
        self.addCleanup(authorizer.populator.stop)
        bad = [
            {"metadata": {"name": "b1", "namespace": "default"}, "spec": "x"},
            {"metadata": {"name": "b2", "namespace": "default"},
             "spec": {"nodeName": "n1", "volumes": ["x", 3]}},
            {"metadata": {"name": "b3", "namespace": "default"},
             "spec": {"nodeName": "n1", "containers": [{"env": "oops"}]}},
            {"metadata": {"name": "b4", "namespace": "default"}, "spec": None},
        ]
        for i, obj in enumerate(bad):
            self.create(f"/registry/pods/default/b{i + 1}", obj)
        self.create("/registry/persistentvolumes/weird", {"metadata": {"name": "weird"},
                                                          "spec": {"claimRef": "x"}})
        self.create("/registry/pods/default/p1", POD)
        self.assertEqual(authorizer.decide(res("get", "secrets", "s1")), (ALLOW, ""))
        self.assertEqual(authorizer.decide(res("get", "pods", "b2")), (NO_OPINION, NOREL))
        self.flushLoggedErrors()

    def test_mode(self) -> None:
        """C{Node} is a registered mode."""
        union = authorization.from_modes(["Node"], authorization.AuthorizerConfig())
        self.assertEqual(self.successResultOf(union.authorize(res("get", "secrets", "x"))),
                         (NO_OPINION, NOREL))
