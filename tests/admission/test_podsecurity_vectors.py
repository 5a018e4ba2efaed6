# -*- test-case-name: tests.admission.test_podsecurity_vectors -*-
"""
kube-apiserver v1.32's recorded answers to C{tests/vectors/scripts/podsecurity.yaml}
(C{tests/vectors/podsecurity.jsonl}: namespace label validation, refused pods with their
messages, dry run, ephemeral containers, ignored updates and subresources, the warnings on
workload templates and on namespace updates that tighten C{enforce}, version selection) and to
C{podsecurity-exempt.yaml} (a server configured with C{podsecurity-admission.yaml}: defaults,
exempt user, namespace and runtime class, the exempt namespace warning) replayed against
kubetwist in process, as L{tests.endpoints.test_recorded_vectors} replays the others.
"""

import os

import yaml
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.admission.plugins.podsecurity import PodSecurity
from tests.endpoints.test_recorded_vectors import VECTORS, _make, load_vectors

RecordedPodsecurityTests = _make("podsecurity")
# found by name here (trial -j loads each test by its module and class name)
RecordedPodsecurityTests.__module__ = __name__


class PodSecurityVectorsTests(SynchronousTestCase):
    def test_vectors_load(self) -> None:
        """The recording holds the refusals and warnings the replay compares."""
        vectors = {v["id"]: v["response"] for v in load_vectors("podsecurity")}
        self.assertEqual(vectors["pod-privileged"]["code"], 403)
        self.assertEqual(len(vectors["ns-w-enforce-restricted"]["headers"]["Warning"]), 4)


def _configured_plugin() -> PodSecurity:
    """The plugin configured as the recording server was (C{podsecurity-admission.yaml})."""
    with open(os.path.join(VECTORS, "podsecurity-admission.yaml")) as f:
        admission = yaml.safe_load(f)
    entry = next(p for p in admission["plugins"] if p["name"] == "PodSecurity")
    return PodSecurity(entry["configuration"])


class RecordedPodsecurityExemptTests(_make("podsecurity-exempt")):  # type: ignore[misc]
    """C{podsecurity-exempt}: recorded with a PodSecurityConfiguration (defaults and
    exemptions); replayed with the server's PodSecurity plugin configured the same way."""

    def setUp(self) -> None:
        super().setUp()
        plugins = self.kube.admission.plugins
        index = next(i for i, p in enumerate(plugins) if p.name == "PodSecurity")
        configured = _configured_plugin()
        configured.namespaces, configured.list_pods = \
            plugins[index].namespaces, plugins[index].list_pods
        plugins[index] = configured
