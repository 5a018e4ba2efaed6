# -*- test-case-name: tests.integration.test_priorityandfairness -*-
"""
Issue 11's API Priority and Fairness acceptance against a real C{twistd -n kubeapi}: a flood
from one user through a starved priority level gets 429s while another user's requests at a
different level are served, and the response headers name the flow schema.

The starved level has C{nominalConcurrencyShares: 0} (no seats) and one queue of length 1:
upstream (checked against kube-apiserver v1.32 with the same objects) answers the first
request after the queue wait limit (a quarter of C{--request-timeout}) and every other one at
once, all with 429, which makes the flood deterministic without slow handlers.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
import threading
import time
from typing import Any

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units

BASE = "/apis/flowcontrol.apiserver.k8s.io/v1"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
FS_HEADER = "x-kubernetes-pf-flowschema-uid"
PL_HEADER = "x-kubernetes-pf-prioritylevel-uid"


def _token_file() -> str:
    directory = tempfile.mkdtemp(prefix="kubetwist-apf-")
    atexit.register(shutil.rmtree, directory, True)
    path = os.path.join(directory, "tokens.csv")
    with open(path, "w") as f:
        f.write("alice-token,alice,1001,\nbob-token,bob,1002,\n")
    return path


class PriorityAndFairnessTests(ServerTestMixin, SynchronousTestCase):
    @classmethod
    def start_fixture(cls) -> Any:
        # the default 600 seats: with very few, an idle level such as global-default lends
        # all its seats away between adjustments (as upstream's does) and bob would queue
        # (AlwaysAllow: what alice and bob may do is not what this test is about)
        cls.server_args = (f"--token-auth-file={_token_file()}", "--request-timeout=4s",
                           "--authorization-mode=AlwaysAllow")
        return super().start_fixture()

    def post(self, resource: str, obj: dict) -> dict:
        r = self.server.request("POST", f"{BASE}/{resource}", json.dumps(obj).encode())
        self.assertEqual(r.status, 201, r.body)
        return r.json()

    def get(self, path: str, token: str) -> Any:
        return self.server.request("GET", path, client_cert=False, token=token)

    def test_flood_from_one_user_is_rejected_while_another_is_served(self) -> None:
        level = self.post("prioritylevelconfigurations", {
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "PriorityLevelConfiguration", "metadata": {"name": "starved"},
            "spec": {"type": "Limited", "limited": {
                "nominalConcurrencyShares": 0, "lendablePercent": 0,
                "borrowingLimitPercent": 0,
                "limitResponse": {"type": "Queue", "queuing": {
                    "queues": 1, "handSize": 1, "queueLengthLimit": 1}}}}})
        schema = self.post("flowschemas", {
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": "alice"},
            "spec": {"priorityLevelConfiguration": {"name": "starved"},
                     "matchingPrecedence": 100, "distinguisherMethod": {"type": "ByUser"},
                     "rules": [{"subjects": [{"kind": "User", "user": {"name": "alice"}}],
                                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"],
                                                   "resources": ["*"], "clusterScope": True,
                                                   "namespaces": ["*"]}]}]}})
        fs_uid, pl_uid = schema["metadata"]["uid"], level["metadata"]["uid"]
        deadline = time.monotonic() + 30
        while self.get(CONFIGMAPS, "alice-token").headers.get(FS_HEADER) != fs_uid:
            self.assertLess(time.monotonic(), deadline, "the FlowSchema never took effect")
            time.sleep(0.1)

        results: dict[str, Any] = {}

        def send(key: str, token: str) -> None:
            results[key] = (self.get(CONFIGMAPS, token), None)

        threads = [threading.Thread(target=send, args=(f"alice{i}", "alice-token"))
                   for i in range(6)]
        for t in threads:
            t.start()
        send("bob", "bob-token")
        for t in threads:
            t.join(30)

        bob, _ = results.pop("bob")
        self.assertEqual(bob.status, 200, bob.body)
        self.assertEqual(bob.json()["kind"], "ConfigMapList")
        global_default = self.server.request("GET", f"{BASE}/flowschemas/global-default").json()
        self.assertEqual(bob.headers[FS_HEADER], global_default["metadata"]["uid"])
        self.assertEqual(len(results), 6)
        for response, _ in results.values():
            self.assertEqual(response.status, 429)
            self.assertEqual(response.body, b"Too many requests, please try again later.\n")
            self.assertIn(response.headers["retry-after"], {str(n) for n in range(1, 33)})
            self.assertEqual(response.headers["content-type"], "text/plain; charset=utf-8")
            self.assertEqual((response.headers[FS_HEADER], response.headers[PL_HEADER]),
                             (fs_uid, pl_uid))

        status = self.server.request("GET", f"{BASE}/flowschemas/alice").json()["status"]
        self.assertEqual([(c["type"], c["status"], c["reason"]) for c in status["conditions"]],
                         [("Dangling", "False", "Found")])


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
