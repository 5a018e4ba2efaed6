# -*- test-case-name: tests.integration.test_impersonation -*-
"""
Issue 11 item 4 with the real C{kubectl} against a real C{twistd -n kubeapi}: C{kubectl --as}
and C{--as-group} change the user the server sees; a user not allowed to impersonate gets
upstream's 403.
"""

from __future__ import annotations

import json
import time

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units


class ImpersonationTests(ServerTestMixin, SynchronousTestCase):
    """The admin (system:masters) impersonates; a ServiceAccount may not (AlwaysDeny)."""

    server_args = ("--authorization-mode=AlwaysDeny",)

    def test_kubectl_as_and_as_group(self) -> None:
        """C{kubectl auth whoami --as bob --as-group system:masters --as-group g2 --as-uid u1};
        C{kubectl get --as} is authorized as the impersonated user."""
        out = self.server.kubectl("auth", "whoami", "--as", "bob", "--as-group",
                                  "system:masters", "--as-group", "g2", "--as-uid", "u1",
                                  "-o", "json").stdout
        self.assertEqual(json.loads(out)["status"]["userInfo"], {
            "username": "bob", "uid": "u1",
            "groups": ["system:masters", "g2", "system:authenticated"]})
        r = self.server.kubectl("get", "--raw", "/api/v1/namespaces/default/secrets", "--as",
                                "system:serviceaccount:default:robot",
                                check=False)
        self.assertEqual((r.returncode, r.stderr.strip()), (
            1, 'Error from server (Forbidden): secrets is forbidden: User '
               '"system:serviceaccount:default:robot" cannot list resource "secrets" in API '
               'group "" in the namespace "default": Everything is forbidden.'))

    def test_as_group_without_as_is_refused(self) -> None:
        """Groups without a user: upstream's plain-text 500."""
        r = self.server.request("GET", "/api/v1/namespaces",
                                headers={"Impersonate-Group": "g1"})
        self.assertEqual((r.status, r.headers["content-type"], r.body), (
            500, "text/plain; charset=utf-8",
            b'Internal Server Error: "/api/v1/namespaces": requested [{Group  g1    }] '
            b'without impersonating a user\n'))

    def test_service_account_may_not_impersonate(self) -> None:
        """A ServiceAccount token with C{Impersonate-User}: 403 with upstream's message."""
        deadline = time.monotonic() + 30
        while self.server.kubectl("get", "sa", "default", check=False).returncode != 0:
            self.assertLess(time.monotonic(), deadline, "no default ServiceAccount")
            time.sleep(0.2)
        token = self.server.kubectl("create", "token", "default").stdout.strip()
        r = self.server.request("GET", "/api/v1/namespaces", client_cert=False, token=token,
                                headers={"Impersonate-User": "bob"})
        self.assertEqual((r.status, r.json()["message"]), (
            403, 'users "bob" is forbidden: User "system:serviceaccount:default:default" '
                 'cannot impersonate resource "users" in API group "" at the cluster scope: '
                 'Everything is forbidden.'))


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
