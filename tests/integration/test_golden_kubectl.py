# -*- test-case-name: tests.integration.test_golden_kubectl -*-
"""
Acceptance of issue 5, first item: every object of C{shared/manifests/kubernetes-examples/},
sent by the real C{kubectl create --dry-run=server -o json -n fidelity -f <file>} to a real
C{twistd -n kubeapi}, gets what kube-apiserver v1.32 answered when the same command was
recorded (C{shared/golden/dry-run-kubernetes-examples.jsonl}; its README says how): the same
object after the recording's normalisation, or the same refusal with the same reason and message
(including the refusals kubectl makes itself from discovery, "no matches for kind").

The in-process replay of the same vectors over HTTP is
L{tests.endpoints.test_golden_http}; this one adds kubectl's own behaviour (discovery, REST
mapping, content negotiation, error printing) and the real process.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from twisted.trial.unittest import SynchronousTestCase

from tests.endpoints.test_golden_http import normalise
from tests.integration.harness import ServerTestMixin, class_units, shared_dir

#: The namespace the recording used; it held only its C{default} ServiceAccount.
NAMESPACE = "fidelity"

#: How many kubectl processes run at once.
PARALLELISM = 4

#: How long the ServiceAccount controller may take to create C{fidelity/default}, in seconds.
SERVICE_ACCOUNT_TIMEOUT = 30.0

#: The temporary file name in a recorded kubectl error (the recording's own temporary files).
_RECORDED_FILE = re.compile(r'"/tmp/tmp[^"]*\.json"')

#: What a temporary file name is replaced with before errors are compared.
_FILE_PLACEHOLDER = '"<file>"'

#: Vectors (C{file#index}) known not to match yet; the test fails when one of them starts to
#: match, so the set only shrinks.  Empty: every recorded answer matches.
KNOWN_MISMATCHES: frozenset[str] = frozenset()


def golden_vectors() -> list[dict]:
    """
    The recorded answers, one C{{"file", "index", "object", "accepted", "response" | "error"}}
    per object, in the file's order.
    """
    path = shared_dir() / "golden" / "dry-run-kubernetes-examples.jsonl"
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def vector_id(vector: dict) -> str:
    """C{<file>#<index>}: where a vector's object comes from."""
    return f"{vector['file']}#{vector['index']}"


def recorded_error(vector: dict) -> str:
    """The recorded kubectl error text of a refused vector, its temporary file name replaced."""
    return _RECORDED_FILE.sub(_FILE_PLACEHOLDER, vector["error"]).strip()


class GoldenKubectlDryRunTests(ServerTestMixin, SynchronousTestCase):
    """The golden vectors replayed through the real kubectl against one embedded-store server."""

    def setUp(self) -> None:
        super().setUp()
        self.work_dir = tempfile.mkdtemp(prefix="kubetwist-it-golden-")
        self.addCleanup(shutil.rmtree, self.work_dir, True)

    def ensure_namespace(self) -> None:
        """
        Create C{fidelity} unless it exists (the class shares one server) and wait until its
        C{default} ServiceAccount exists, as when the answers were recorded.  This also fills
        kubectl's discovery cache before the parallel runs.
        """
        found = self.server.kubectl(
            "get", "namespace", NAMESPACE, "--ignore-not-found", "-o", "name"
        ).stdout.strip()
        if not found:
            self.create(
                None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
            )
        deadline = time.monotonic() + SERVICE_ACCOUNT_TIMEOUT
        while True:
            names = self.server.kubectl(
                "get", "serviceaccounts", "-n", NAMESPACE, "-o", "name"
            ).stdout.split()
            if names == ["serviceaccount/default"]:
                return
            if time.monotonic() > deadline:
                self.fail(
                    f"namespace {NAMESPACE} holds {names}, not just its default "
                    f"ServiceAccount, after {SERVICE_ACCOUNT_TIMEOUT}s"
                )
            time.sleep(0.1)

    def replay(self, vector: dict) -> str | None:
        """
        Run the recorded command for one vector.

        @return: C{None} when kubectl's answer matches the recording, else a description of
            the difference (C{file#index: ...}).
        """
        where = vector_id(vector)
        fd, path = tempfile.mkstemp(suffix=".json", dir=self.work_dir)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(vector["object"], f)
        try:
            result = self.server.kubectl(
                "create",
                "--dry-run=server",
                "-o",
                "json",
                "-n",
                NAMESPACE,
                "-f",
                path,
                check=False,
            )
        finally:
            os.remove(path)
        stderr = result.stderr.replace(f'"{path}"', _FILE_PLACEHOLDER).strip()
        if vector["accepted"]:
            if result.returncode != 0:
                return f"{where}: expected acceptance, kubectl failed: {stderr}"
            try:
                answer = json.loads(result.stdout)
            except ValueError:
                return f"{where}: kubectl printed no JSON object: {result.stdout[:500]!r}"
            expected, actual = normalise(vector["response"]), normalise(answer)
            if actual != expected:
                return (
                    f"{where}: different object\n  expected: {json.dumps(expected)}\n"
                    f"  actual:   {json.dumps(actual)}"
                )
            return None
        expected_error = recorded_error(vector)
        if result.returncode == 0:
            return (
                f"{where}: expected refusal {expected_error!r}, kubectl accepted: "
                f"{result.stdout[:500]!r}"
            )
        if stderr != expected_error:
            return (
                f"{where}: different refusal\n  expected: {expected_error!r}\n"
                f"  actual:   {stderr!r}"
            )
        return None

    def test_every_vector_answers_as_kube_apiserver(self) -> None:
        """
        Every recorded C{kubectl create --dry-run=server -o json -n fidelity -f <object>} gets
        the same normalised object from kubetwist, or fails with the same error text (reason
        and message; the file name aside), except exactly the L{KNOWN_MISMATCHES}.  The share
        that matches is printed.
        """
        self.ensure_namespace()
        vectors = golden_vectors()
        with ThreadPoolExecutor(max_workers=PARALLELISM) as pool:
            outcomes = list(pool.map(self.replay, vectors))
        failed = {vector_id(v): o for v, o in zip(vectors, outcomes, strict=False) if o is not None}
        print(f"golden: {len(vectors) - len(failed)}/{len(vectors)} match")
        self.assertEqual(len(vectors), 215)
        unexpected = [o for where, o in failed.items() if where not in KNOWN_MISMATCHES]
        self.assertEqual(unexpected, [], "\n".join(unexpected))
        fixed = sorted(KNOWN_MISMATCHES - set(failed))
        self.assertEqual(fixed, [], "these match now: remove them from KNOWN_MISMATCHES")


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
