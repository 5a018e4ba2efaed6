"""
A live capture: the venv's real C{kubectl} talks to L{tests.runtime.kubectl_capture} over
loopback HTTP, and the protobuf bodies it sends must decode to what kubectl itself prints for
the same object, and match the recorded fixtures byte for byte.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from twisted.internet import defer, reactor
from twisted.internet.utils import getProcessOutputAndValue
from twisted.trial.unittest import SkipTest, TestCase
from twisted.web import server

from kubetwist.runtime import protobuf as pb
from tests.runtime.kubectl_capture import CaptureResource
from tests.runtime.test_protobuf import EXPECTED, fixture

KUBECTL = Path(sys.executable).parent / "kubectl"

COMMANDS = {
    "create-namespace": ["create", "namespace", "x"],
    "create-configmap": ["create", "configmap", "c", "--from-literal=a=b"],
    "create-deployment": ["create", "deployment", "d", "--image=nginx", "--replicas=2",
                          "--port=80"],
    "create-pdb": ["create", "poddisruptionbudget", "pdb", "--selector=app=rails",
                   "--min-available=50%"],
}


class KubectlLiveTests(TestCase):
    """Real kubectl against a recording server."""

    def setUp(self) -> None:
        if not os.access(KUBECTL, os.X_OK):
            raise SkipTest("no kubectl next to the Python interpreter")
        self.capture = CaptureResource()
        self.port = reactor.listenTCP(0, server.Site(self.capture), interface="127.0.0.1")
        self.addCleanup(self.port.stopListening)
        self.home = self.mktemp()
        os.makedirs(self.home)

    async def kubectl(self, *args: str) -> bytes:
        server_url = f"http://127.0.0.1:{self.port.getHost().port}"
        out, err, code = await getProcessOutputAndValue(
            str(KUBECTL),
            ["--server", server_url, "--kubeconfig", os.devnull, "-n", "default", *args],
            env={"HOME": self.home, "PATH": os.defpath},
        )
        self.assertEqual(code, 0, err)
        return out

    def test_capture(self) -> defer.Deferred:
        """
        kubectl's typed clients POST protobuf bodies that decode to the expected objects and
        are byte-identical to the fixtures; re-encoding reproduces them.
        """
        async def run() -> None:
            for name, args in COMMANDS.items():
                before = len(self.capture.requests)
                await self.kubectl(*args)
                posts = [r for r in self.capture.requests[before:] if r.method == "POST"]
                self.assertEqual(len(posts), 1, name)
                post = posts[0]
                self.assertEqual(post.content_type, pb.CONTENT_TYPE)
                self.assertEqual(post.accept, f"{pb.CONTENT_TYPE},application/json")
                self.assertEqual(pb.decode(post.body), EXPECTED[name], name)
                self.assertEqual(post.body, fixture(name), name)
                self.assertEqual(pb.encode(pb.decode(post.body)), post.body, name)
        return defer.Deferred.fromCoroutine(run())

    def test_matches_client_dry_run(self) -> defer.Deferred:
        """
        The decoded body equals kubectl's own JSON for the object (C{--dry-run=client
        -o json}), but for C{creationTimestamp}: kubectl 1.37's types omit the zero time
        (C{omitzero}, since 1.34) where a v1.32 server prints C{null}.
        """
        async def run() -> None:
            args = COMMANDS["create-deployment"]
            printed = json.loads(await self.kubectl(*args, "--dry-run=client", "-o", "json"))
            decoded = pb.decode(fixture("create-deployment"))
            del decoded["metadata"]["creationTimestamp"]
            del decoded["spec"]["template"]["metadata"]["creationTimestamp"]
            self.assertEqual(json.dumps(decoded), json.dumps(printed))
        return defer.Deferred.fromCoroutine(run())
