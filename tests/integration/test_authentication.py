# -*- test-case-name: tests.integration.test_authentication -*-
"""
Issue 11 item 3 against a real C{twistd -n kubeapi} with the default flags: credentials stop
working when what they name is gone, and bad credentials are upstream's 401.
"""

from __future__ import annotations

import time

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


class ServiceAccountLookupTests(ServerTestMixin, SynchronousTestCase):
    def wait_default_sa(self) -> None:
        deadline = time.monotonic() + 30
        while self.server.kubectl("get", "sa", "default", check=False).returncode != 0:
            self.assertLess(time.monotonic(), deadline, "no default ServiceAccount")
            time.sleep(0.2)

    def test_token_of_deleted_service_account(self) -> None:
        """C{kubectl create token}'s token is 401 once its ServiceAccount is deleted, and
        stays 401 when a ServiceAccount of the same name is created again (another uid)."""
        self.wait_default_sa()
        ns = self.namespace()
        self.server.kubectl("create", "serviceaccount", "robot", "-n", ns)
        token = self.server.kubectl("create", "token", "robot", "-n", ns).stdout.strip()
        r = self.server.request("GET", "/api", client_cert=False, token=token)
        self.assertEqual(r.status, 200)
        self.server.kubectl("delete", "serviceaccount", "robot", "-n", ns)
        # as upstream, a token stays good for up to 10 s after its last success (the token
        # cache), and the lookup reads the watch cache, which follows the store a moment later
        deadline = time.monotonic() + 20
        while True:
            r = self.server.request("GET", "/api", client_cert=False, token=token)
            if r.status != 200 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual((r.status, r.json()), (401, UNAUTHORIZED))
        self.server.kubectl("create", "serviceaccount", "robot", "-n", ns)
        r = self.server.request("GET", "/api", client_cert=False, token=token)
        self.assertEqual(r.status, 401)

    def test_bad_tokens(self) -> None:
        """Malformed and unknown bearer tokens: 401 with upstream's Status."""
        for token in ("nope", "a.b.c", "eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0.", "x" * 5000):
            r = self.server.request("GET", "/api", client_cert=False, token=token)
            self.assertEqual((r.status, r.json()), (401, UNAUTHORIZED), token[:20])


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
