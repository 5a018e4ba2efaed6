# -*- test-case-name: tests.integration.test_authorization_modes -*-
"""
The C{Node} and C{ABAC} authorization modes with the real C{kubectl} against a real
C{twistd -n kubeapi --authorization-mode=Node,ABAC}: a kubelet's token reads the secret of
a pod bound to its node and nothing else (upstream's reasons), an ABAC user reads but does
not write.
"""

from __future__ import annotations

import json
import os

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import KubeAPIProcess, ServerFixture, ServerTestMixin, kubectl

POLICY = [
    {"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy",
     "spec": {"user": "alice", "namespace": "*", "resource": "*", "apiGroup": "*",
              "readonly": True}},
    {"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy",
     "spec": {"group": "system:authenticated", "nonResourcePath": "*", "readonly": True}},
]


class NodeAndABACTests(ServerTestMixin, SynchronousTestCase):
    """One server (Node,ABAC; token-file users for node n1 and alice) for the class."""

    @classmethod
    def start_fixture(cls) -> ServerFixture:
        server = KubeAPIProcess()
        tokens = os.path.join(server.work_dir, "tokens.csv")
        with open(tokens, "w") as f:
            f.write('node-token,system:node:n1,10,"system:nodes"\nalice-token,alice,11,\n')
        policy = os.path.join(server.work_dir, "policy.jsonl")
        with open(policy, "w") as f:
            f.write("\n".join(json.dumps(p) for p in POLICY) + "\n")
        server.extra_args += [f"--token-auth-file={tokens}", "--authorization-mode=Node,ABAC",
                              f"--authorization-policy-file={policy}"]
        try:
            server.start()
        except BaseException:
            server.cleanup()
            raise
        return ServerFixture(server, None)

    def as_token(self, token: str, *args: str):
        return kubectl(f"--server={self.server.url}",
                       f"--certificate-authority={self.server.ca_file}", f"--token={token}",
                       *args, kubeconfig=os.devnull, check=False,
                       env={"KUBECACHEDIR": self.server.cache_dir + "-" + token})

    def test_node_reads_secrets_of_its_pods(self) -> None:
        ns = self.namespace()
        self.create(ns, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}},
                    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s2"}},
                    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"},
                     "spec": {"nodeName": "n1", "automountServiceAccountToken": False,
                              "containers": [{"name": "c", "image": "x", "env": [
                                  {"name": "A", "valueFrom": {"secretKeyRef": {
                                      "name": "s1", "key": "a"}}}]}]}})
        r = None
        for _ in range(50):  # the graph follows storage asynchronously
            r = self.as_token("node-token", "get", "secret", "s1", "-n", ns, "-o", "name")
            if r.returncode == 0:
                break
        self.assertEqual(r.stdout, "secret/s1\n")
        r = self.as_token("node-token", "get", "secret", "s2", "-n", ns)
        self.assertEqual(r.stderr.strip(), (
            f'Error from server (Forbidden): secrets "s2" is forbidden: User "system:node:n1" '
            f'cannot get resource "secrets" in API group "" in the namespace "{ns}": no '
            "relationship found between node 'n1' and this object\nNo policy matched."))
        r = self.as_token("node-token", "get", "pods", "-n", ns)
        self.assertIn("can only list/watch pods with spec.nodeName field selector", r.stderr)
        r = self.as_token("node-token", "get", "pods", "-n", ns,
                          "--field-selector=spec.nodeName=n1", "-o", "name")
        self.assertEqual(r.stdout, "pod/p1\n")

    def test_abac_readonly(self) -> None:
        ns = self.namespace()
        r = self.as_token("alice-token", "get", "configmaps", "-n", ns, "-o", "name")
        self.assertEqual((r.returncode, r.stdout), (0, "configmap/kube-root-ca.crt\n"))
        r = self.as_token("alice-token", "create", "configmap", "x", "-n", ns)
        self.assertIn(f'configmaps is forbidden: User "alice" cannot create resource '
                      f'"configmaps" in API group "" in the namespace "{ns}": No policy '
                      "matched.", r.stderr)
