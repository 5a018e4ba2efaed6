# -*- test-case-name: tests.controlplane.test_instance -*-
"""
Tests for L{kubetwist.controlplane.instance} (the kube-apiserver of the chain and its
bootstrap controllers) and L{kubetwist.controlplane.admission} (the pod-mutating default
admission plugins), through the whole server, compared with kube-apiserver v1.32's answers.
"""

from __future__ import annotations

from tests.support import KubeTestCase

PODS = "/api/v1/namespaces/default/pods"


def pod(**spec) -> dict:
    body = {"containers": [{"name": "c", "image": "x"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": body}


class BootstrapTests(KubeTestCase):
    """Upstream's bootstrap controller and post-start hooks."""

    def test_system_namespaces(self) -> None:
        code, body, _ = self.request("GET", "/api/v1/namespaces")
        self.assertEqual(code, 200)
        self.assertEqual(sorted(i["metadata"]["name"] for i in body["items"]),
                         ["default", "kube-node-lease", "kube-public", "kube-system"])

    def test_kubernetes_service(self) -> None:
        """The kubernetes Service: the range's first IP, port 443 to the secure port."""
        code, body, _ = self.request("GET", "/api/v1/namespaces/default/services/kubernetes")
        self.assertEqual(code, 200)
        self.assertEqual(body["metadata"]["labels"],
                         {"component": "apiserver", "provider": "kubernetes"})
        spec = body["spec"]
        self.assertEqual((spec["clusterIP"], spec["clusterIPs"], spec["type"]),
                         ("10.0.0.1", ["10.0.0.1"], "ClusterIP"))
        self.assertEqual(spec["ports"], [{"name": "https", "protocol": "TCP", "port": 443,
                                          "targetPort": 6443}])

    def test_kubernetes_endpoints(self) -> None:
        """The kubernetes Endpoints: the advertise address and the secure port, not mirrored
        to EndpointSlices."""
        code, body, _ = self.request("GET", "/api/v1/namespaces/default/endpoints/kubernetes")
        self.assertEqual(code, 200)
        self.assertEqual(body["metadata"]["labels"],
                         {"endpointslice.kubernetes.io/skip-mirror": "true"})
        self.assertEqual(body["subsets"], [{"addresses": [{"ip": "192.0.2.10"}],
                                            "ports": [{"name": "https", "port": 6443,
                                                       "protocol": "TCP"}]}])

    def test_post_start_hooks_ready(self) -> None:
        """The bootstrap hooks report ready under upstream's names."""
        code, body, _ = self.request("GET", "/readyz?verbose")
        self.assertEqual(code, 200)
        for hook in ("bootstrap-controller", "start-system-namespaces-controller",
                     "scheduling/bootstrap-system-priority-classes",
                     "priority-and-fairness-config-producer"):
            self.assertIn(f"[+]poststarthook/{hook} ok", body)

    def test_system_priority_classes(self) -> None:
        code, body, _ = self.request("GET", "/apis/scheduling.k8s.io/v1/priorityclasses")
        self.assertEqual(code, 200)
        values = {i["metadata"]["name"]: i["value"] for i in body["items"]}
        self.assertEqual(values, {"system-cluster-critical": 2000000000,
                                  "system-node-critical": 2000001000})


class PodAdmissionTests(KubeTestCase):
    """ServiceAccount, Priority and DefaultTolerationSeconds on pod creates."""

    def test_missing_service_account(self) -> None:
        """A pod naming a missing service account is 403 with upstream's message."""
        code, body, _ = self.request("POST", PODS + "?dryRun=All",
                                     pod(serviceAccountName="nope"))
        self.assertEqual((code, body["reason"], body["message"]), (
            403, "Forbidden",
            'pods "p" is forbidden: error looking up service account default/nope: '
            'serviceaccount "nope" not found'))

    def test_defaults(self) -> None:
        """The default service account with its projected token volume, priority 0, and
        the not-ready/unreachable tolerations of 300 seconds."""
        code, body, _ = self.request("POST", PODS + "?dryRun=All", pod())
        self.assertEqual(code, 201)
        spec = body["spec"]
        self.assertEqual((spec["serviceAccountName"], spec["serviceAccount"], spec["priority"]),
                         ("default", "default", 0))
        volume = spec["volumes"][0]
        self.assertTrue(volume["name"].startswith("kube-api-access-"))
        self.assertIn("projected", volume)
        self.assertEqual(spec["containers"][0]["volumeMounts"][0]["mountPath"],
                         "/var/run/secrets/kubernetes.io/serviceaccount")
        self.assertEqual(
            sorted((t["key"], t["tolerationSeconds"]) for t in spec["tolerations"]),
            [("node.kubernetes.io/not-ready", 300), ("node.kubernetes.io/unreachable", 300)])

    def test_priority_class(self) -> None:
        """A pod's priorityClassName resolves to its value; an unknown one is refused."""
        code, body, _ = self.request("POST", PODS + "?dryRun=All",
                                     pod(priorityClassName="system-node-critical"))
        self.assertEqual((code, body["spec"]["priority"]), (201, 2000001000))
        code, body, _ = self.request("POST", PODS + "?dryRun=All",
                                     pod(priorityClassName="nope"))
        self.assertEqual(code, 403)
