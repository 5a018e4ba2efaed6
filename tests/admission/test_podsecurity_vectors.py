# -*- test-case-name: tests.admission.test_podsecurity_vectors -*-
"""
kube-apiserver v1.32's recorded answers to C{tests/vectors/scripts/podsecurity.yaml}
(C{tests/vectors/podsecurity.jsonl}: namespace label validation, refused pods with their
messages, dry run, ephemeral containers, ignored updates and subresources, the warnings on
workload templates and on namespace updates that tighten C{enforce}, version selection) replayed
against kubetwist in process, as L{tests.endpoints.test_recorded_vectors} replays the others.
"""

from twisted.trial.unittest import SynchronousTestCase

from tests.endpoints.test_recorded_vectors import _make, load_vectors

RecordedPodsecurityTests = _make("podsecurity")


class PodSecurityVectorsTests(SynchronousTestCase):
    def test_vectors_load(self) -> None:
        """The recording holds the refusals and warnings the replay compares."""
        vectors = {v["id"]: v["response"] for v in load_vectors("podsecurity")}
        self.assertEqual(vectors["pod-privileged"]["code"], 403)
        self.assertEqual(len(vectors["ns-w-enforce-restricted"]["headers"]["Warning"]), 4)
