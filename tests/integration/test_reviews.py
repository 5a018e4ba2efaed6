# -*- test-case-name: tests.integration.test_reviews -*-
"""
The review resources with the real C{kubectl}: C{kubectl auth can-i} (SelfSubjectAccessReview,
sent as protobuf), C{kubectl auth can-i --list} (SelfSubjectRulesReview) and
C{kubectl auth whoami} (SelfSubjectReview), for the admin (client certificate, system:masters)
and a plain token-file user, against a real C{twistd -n kubeapi}.
"""

from __future__ import annotations

import json
import os

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import (
    KubeAPIProcess,
    ServerFixture,
    ServerTestMixin,
    class_units,
    kubectl,
    parse_table,
)


class ReviewAcceptanceTests(ServerTestMixin, SynchronousTestCase):
    """One server (C{--authorization-mode=AlwaysAllow}, a token file with C{jane-token}) for
    the class."""

    @classmethod
    def start_fixture(cls) -> ServerFixture:
        server = KubeAPIProcess()
        token_file = os.path.join(server.work_dir, "tokens.csv")
        with open(token_file, "w") as f:
            f.write("jane-token,jane,2,devs\n")
        server.extra_args += [f"--token-auth-file={token_file}",
                              "--authorization-mode=AlwaysAllow"]
        try:
            server.start()
        except BaseException:
            server.cleanup()
            raise
        return ServerFixture(server, None)

    def jane(self, *args: str, check: bool = True):
        """kubectl as the token-file user (no client certificate)."""
        return kubectl(
            f"--server={self.server.url}",
            f"--certificate-authority={self.server.ca_file}",
            "--token=jane-token", *args,
            kubeconfig=os.devnull, check=check,
            env={"KUBECACHEDIR": self.server.cache_dir + "-jane"},
        )

    def test_can_i(self) -> None:
        """C{kubectl auth can-i create pods} prints C{yes} for the admin and (AlwaysAllow) the
        plain user alike."""
        r = self.server.kubectl("auth", "can-i", "create", "pods")
        self.assertEqual(r.stdout, "yes\n")
        r = self.jane("auth", "can-i", "create", "pods", "-n", "kube-system")
        self.assertEqual(r.stdout, "yes\n")

    def test_whoami(self) -> None:
        """C{kubectl auth whoami -o json}: the SelfSubjectReview of the requesting user."""
        review = json.loads(self.jane("auth", "whoami", "-o", "json").stdout)
        self.assertEqual(review["kind"], "SelfSubjectReview")
        self.assertEqual(review["apiVersion"], "authentication.k8s.io/v1")
        self.assertEqual(review["status"], {"userInfo": {
            "username": "jane", "uid": "2", "groups": ["devs", "system:authenticated"]}})
        self.assertRegex(review["metadata"]["creationTimestamp"],
                         r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        admin = json.loads(self.server.kubectl("auth", "whoami", "-o", "json").stdout)
        self.assertIn("system:masters", admin["status"]["userInfo"]["groups"])
        self.assertEqual(admin["status"]["userInfo"]["groups"][-1], "system:authenticated")
        table = parse_table(self.jane("auth", "whoami").stdout)
        self.assertEqual(table, [
            {"ATTRIBUTE": "Username", "VALUE": "jane"},
            {"ATTRIBUTE": "UID", "VALUE": "2"},
            {"ATTRIBUTE": "Groups", "VALUE": "[devs system:authenticated]"},
        ])

    def test_can_i_list(self) -> None:
        """C{kubectl auth can-i --list}: AlwaysAllow's rules, everything on every path."""
        r = self.jane("auth", "can-i", "--list")
        self.assertEqual(parse_table(r.stdout), [
            {"Resources": "*.*", "Non-Resource URLs": "[]", "Resource Names": "[]",
             "Verbs": "[*]"},
            {"Resources": "", "Non-Resource URLs": "[*]", "Resource Names": "[]",
             "Verbs": "[*]"},
        ])


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
