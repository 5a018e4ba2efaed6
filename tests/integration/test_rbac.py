# -*- test-case-name: tests.integration.test_rbac -*-
"""
Issue 11's RBAC acceptance with the real C{kubectl} against a real C{twistd -n kubeapi} started
with the default flags (C{--authorization-mode=Node,RBAC}): a ServiceAccount token is refused
until a RoleBinding grants it, C{kubectl auth can-i --list} shows upstream's rules, escalation
is refused, and the bootstrap ClusterRoles are upstream's.

Expected texts are kube-apiserver v1.32's (C{tests/vectors/rbac/}, recorded from the reference
server with the same commands).
"""

from __future__ import annotations

import json
import os
import time

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units, kubectl
from tests.support import repository_root

VECTORS = repository_root() / "tests" / "vectors" / "rbac"
#: the namespace of the recordings (their texts name it)
RECORDED_NAMESPACE = "rbac-it"


class RBACAcceptanceTests(ServerTestMixin, SynchronousTestCase):
    """One server with the default flags for the class; each test has its own namespace."""

    def robot(self) -> tuple[str, str]:
        """A namespace with a ServiceAccount C{robot}; returns C{(namespace, token)}."""
        ns = self.namespace()
        self.server.kubectl("create", "serviceaccount", "robot", "-n", ns)
        token = self.server.kubectl("create", "token", "robot", "-n", ns).stdout.strip()
        return ns, token

    def as_token(self, token: str, *args: str, check: bool = False):
        """kubectl with only the bearer token (no client certificate, no kubeconfig)."""
        return kubectl(f"--server={self.server.url}",
                       f"--certificate-authority={self.server.ca_file}", f"--token={token}",
                       *args, kubeconfig=os.devnull, check=check,
                       env={"KUBECACHEDIR": self.server.cache_dir + "-" + token[-8:]})

    def eventually(self, probe, timeout: float = 10.0):
        """Run C{probe()} until it returns a true value (the authorizer's cache follows
        storage through a watch)."""
        deadline = time.monotonic() + timeout
        while True:
            result = probe()
            if result or time.monotonic() > deadline:
                return result
            time.sleep(0.1)

    def recorded(self, name: str, namespace: str) -> str:
        return (VECTORS / name).read_text().replace(RECORDED_NAMESPACE, namespace)

    def test_token_forbidden_until_bound(self) -> None:
        """C{get secrets} with a ServiceAccount token: upstream's 403, then allowed once a
        RoleBinding grants it."""
        ns, token = self.robot()
        r = self.as_token(token, "get", "secrets", "-n", ns)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.strip(), (
            f'Error from server (Forbidden): secrets is forbidden: User '
            f'"system:serviceaccount:{ns}:robot" cannot list resource "secrets" in API group '
            f'"" in the namespace "{ns}"'))
        self.server.kubectl("create", "role", "secret-reader", "--verb=get,list",
                            "--resource=secrets", "-n", ns)
        self.server.kubectl("create", "rolebinding", "robot-reads", "--role=secret-reader",
                            f"--serviceaccount={ns}:robot", "-n", ns)
        r = self.eventually(lambda: self.as_token(token, "get", "secrets", "-n", ns)
                            .returncode == 0)
        self.assertTrue(r)

    def test_can_i_list(self) -> None:
        """C{kubectl auth can-i --list} as the ServiceAccount: upstream's table, before and
        after a RoleBinding."""
        ns, token = self.robot()
        r = self.as_token(token, "auth", "can-i", "--list", "-n", ns, check=True)
        self.assertEqual(r.stdout, self.recorded("can_i_list_serviceaccount.txt", ns))
        self.server.kubectl("create", "role", "secret-reader", "--verb=get,list",
                            "--resource=secrets", "-n", ns)
        self.server.kubectl("create", "rolebinding", "robot-reads", "--role=secret-reader",
                            f"--serviceaccount={ns}:robot", "-n", ns)
        want = self.recorded("can_i_list_serviceaccount_bound.txt", ns)
        got = self.eventually(lambda: self.as_token(
            token, "auth", "can-i", "--list", "-n", ns, check=True).stdout == want)
        if not got:
            self.assertEqual(self.as_token(token, "auth", "can-i", "--list", "-n", ns).stdout,
                             want)

    def test_can_i_as_serviceaccount(self) -> None:
        """C{kubectl auth can-i delete secrets --as=system:serviceaccount:NS:robot}: C{no}
        (the admin impersonates the ServiceAccount)."""
        ns, _ = self.robot()
        who = self.server.kubectl("auth", "whoami", "-o", "json",
                                  f"--as=system:serviceaccount:{ns}:robot")
        self.assertEqual(json.loads(who.stdout)["status"]["userInfo"]["username"],
                         f"system:serviceaccount:{ns}:robot")
        r = self.server.kubectl("auth", "can-i", "delete", "secrets", "-n", ns,
                                f"--as=system:serviceaccount:{ns}:robot", check=False)
        self.assertEqual((r.returncode, r.stdout), (1, "no\n"))

    def test_escalation_refused(self) -> None:
        """C{kubectl create clusterrolebinding} of cluster-admin by a ServiceAccount that may
        create bindings but does not hold cluster-admin: upstream's escalation error."""
        ns, token = self.robot()
        role = f"crb-creator-{ns}"
        self.server.kubectl("create", "clusterrole", role, "--verb=create",
                            "--resource=clusterrolebindings")
        self.server.kubectl("create", "clusterrolebinding", role, f"--clusterrole={role}",
                            f"--serviceaccount={ns}:robot")
        name = f"robot-admin-{ns}"

        def attempt():
            r = self.as_token(token, "create", "clusterrolebinding", name,
                              "--clusterrole=cluster-admin", f"--serviceaccount={ns}:robot")
            return r if "attempting to grant" in r.stderr else None

        r = self.eventually(attempt)
        self.assertIsNotNone(r, "never refused as escalation")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, (
            f'error: failed to create clusterrolebinding: clusterrolebindings.rbac.'
            f'authorization.k8s.io "{name}" is forbidden: user '
            f'"system:serviceaccount:{ns}:robot" (groups=["system:serviceaccounts" '
            f'"system:serviceaccounts:{ns}" "system:authenticated"]) is attempting to grant '
            'RBAC permissions not currently held:\n'
            '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n'
            '{NonResourceURLs:["*"], Verbs:["*"]}\n'))

    def test_bootstrap_cluster_roles(self) -> None:
        """The bootstrap ClusterRoles equal upstream's v1.32 set: names, labels, annotations,
        rules (order-insensitive) and aggregation rules; an aggregated role's rules are the
        aggregation controller's, so only its aggregationRule is compared."""
        want = json.loads((VECTORS / "upstream_bootstrap.json").read_text())["clusterRoles"]
        got = self.get_json(None, "clusterroles", "-l",
                            "kubernetes.io/bootstrapping=rbac-defaults")["items"]

        def canonical(role: dict) -> dict:
            meta = role["metadata"]
            out = {"name": meta["name"], "labels": meta.get("labels"),
                   "annotations": meta.get("annotations"),
                   "aggregationRule": role.get("aggregationRule")}
            if role.get("aggregationRule") is None:
                out["rules"] = sorted(json.dumps(r, sort_keys=True)
                                      for r in role.get("rules") or [])
            return out

        self.assertEqual(sorted((canonical(r) for r in got), key=lambda r: r["name"]),
                         sorted((canonical(r) for r in want), key=lambda r: r["name"]))
        self.assertEqual(len(got), 64)


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
