# -*- test-case-name: tests.integration.test_pod_subresources -*-
"""
Issue 5 item 1 with the real C{kubectl} against a real C{twistd -n kubeapi}: C{kubectl debug}
adds an ephemeral container (C{pods/ephemeralcontainers}, a strategic merge patch),
C{kubectl logs} and C{kubectl exec} meet kube-apiserver's answers for a pod on no node, and
C{kubectl drain} cordons a node and evicts its pod (C{pods/eviction}).
"""

from __future__ import annotations

import json

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units


def _pod(name: str, containers: tuple[str, ...] = ("c",), **spec: object) -> dict:
    body: dict = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                  "spec": {"containers": [{"name": c, "image": "busybox"} for c in containers]}}
    body["spec"].update(spec)
    return body


class PodSubresourceAcceptanceTests(ServerTestMixin, SynchronousTestCase):
    """The pod subresources through kubectl, on the embedded store."""

    def test_debug_adds_ephemeral_container(self) -> None:
        """C{kubectl debug p --image=busybox --target=c} stores one ephemeral container."""
        ns = self.namespace()
        self.create(ns, _pod("p"))
        self.server.kubectl("debug", "p", "-n", ns, "--image=busybox", "--target=c",
                            "--profile=general")
        pod = self.get_json(ns, "pod", "p")
        (ec,) = pod["spec"]["ephemeralContainers"]
        self.assertEqual((ec["image"], ec["targetContainerName"], ec["name"][:9]),
                         ("busybox", "c", "debugger-"))

    def test_logs_and_exec_without_node(self) -> None:
        """The log of an unknown or unnamed container: the server's 400s; C{kubectl logs} of a
        pod on no node: no output; C{kubectl exec}: C{pod p does not have a host assigned}."""
        ns = self.namespace()
        self.create(ns, _pod("p", ("a", "b")))
        r = self.server.kubectl("get", "--raw",
                                f"/api/v1/namespaces/{ns}/pods/p/log?container=x", check=False)
        self.assertEqual((r.returncode, r.stderr.strip()), (
            1, "Error from server (BadRequest): container x is not valid for pod p"))
        r = self.server.kubectl("get", "--raw", f"/api/v1/namespaces/{ns}/pods/p/log",
                                check=False)
        self.assertEqual(r.stderr.strip(), (
            "Error from server (BadRequest): a container name must be specified for pod p, "
            "choose one of: [a b]"))
        r = self.server.kubectl("logs", "p", "-n", ns, "-c", "a")
        self.assertEqual(r.stdout, "")
        r = self.server.kubectl("exec", "p", "-n", ns, "-c", "a", "--", "ls", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("pod p does not have a host assigned", r.stderr)

    def test_drain_evicts(self) -> None:
        """C{kubectl drain} cordons the node and evicts its running pod through
        C{pods/eviction}; the pod is gone afterwards."""
        ns = self.namespace()
        node = f"node-{ns}"[:60]
        self.create(None, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})
        self.addCleanup(self.server.kubectl, "delete", "node", node, check=False)
        self.create(ns, _pod("p", nodeName=node))
        self.server.kubectl("patch", "pod", "p", "-n", ns, "--subresource=status",
                            "--type=merge", "-p", json.dumps({"status": {"phase": "Running"}}))
        r = self.server.kubectl("drain", node, "--force", "--grace-period=0", "--timeout=60s")
        self.assertIn(f"node/{node} cordoned", r.stdout)
        self.assertIn("pod/p evicted", r.stdout)
        self.assertIn(f"node/{node} drained", r.stdout)
        self.assertTrue(self.get_json(None, "node", node)["spec"]["unschedulable"])
        r = self.server.kubectl("get", "pod", "p", "-n", ns, check=False)
        self.assertEqual(r.stderr.strip(), 'Error from server (NotFound): pods "p" not found')


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
