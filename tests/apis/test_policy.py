"""
Tests for L{kubetwist.apis.policy}: PodDisruptionBudget validation messages and paths as
kube-apiserver v1.32 writes them, the status reset and generation, the printer row, and the
HTTP round trip through policy/v1.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.policy import pdb
from kubetwist.apis.policy.register import PDB_TABLE
from tests.support import KubeTestCase


def _pdb(name="web", **spec) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}}


def _messages(errs) -> list[str]:
    return [e.error() for e in errs]


class PDBTests(SynchronousTestCase):
    def test_percent_over_100(self):
        """minAvailable above 100% is refused."""
        self.assertEqual(_messages(pdb.validate_pdb(_pdb(minAvailable="120%"))), [
            'spec.minAvailable: Invalid value: "120%": must not be greater than 100%'])

    def test_negative_and_bad_policy(self):
        """A negative maxUnavailable and an unknown eviction policy are refused."""
        obj = _pdb(maxUnavailable=-1, unhealthyPodEvictionPolicy="Never")
        self.assertEqual(_messages(pdb.validate_pdb(obj)), [
            "spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0",
            'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: '
            '"AlwaysAllow", "IfHealthyBudget"'])

    def test_no_eviction_policy_default(self):
        """unhealthyPodEvictionPolicy stays unset; the status has its four counters."""
        obj = _pdb(minAvailable=1)
        pdb.default_pdb(obj)
        pdb.prepare_pdb_for_create(obj)
        self.assertNotIn("unhealthyPodEvictionPolicy", obj["spec"])
        self.assertEqual(obj["status"], {"disruptionsAllowed": 0, "currentHealthy": 0,
                                         "desiredHealthy": 0, "expectedPods": 0})
        self.assertEqual(obj["metadata"]["generation"], 1)

    def test_generation_on_spec_change(self):
        """An update changing the spec bumps the generation and keeps the stored status."""
        old = _pdb(minAvailable=1)
        old["metadata"]["generation"] = 1
        old["status"] = {"disruptionsAllowed": 2}
        new = _pdb(minAvailable=2)
        pdb.prepare_pdb_for_update(new, old)
        self.assertEqual((new["metadata"]["generation"], new["status"]),
                         (2, {"disruptionsAllowed": 2}))

    def test_row(self):
        """Min Available / Max Unavailable print N/A when unset."""
        obj = _pdb(minAvailable="50%")
        obj["status"] = {"disruptionsAllowed": 1}
        self.assertEqual(PDB_TABLE.row(obj)[:4], ["web", "50%", "N/A", 1])


class PolicyHTTPTests(KubeTestCase):
    def test_create(self):
        """POST a PDB: generation 1 and the zeroed status."""
        code, body, _ = self.request(
            "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
            _pdb(minAvailable=1))
        self.assertEqual(code, 201)
        self.assertEqual(body["metadata"]["generation"], 1)
        self.assertEqual(body["status"]["expectedPods"], 0)

    def test_discovery(self):
        """Discovery: pdb short name and the status subresource."""
        code, body, _ = self.request("GET", "/apis/policy/v1")
        names = {r["name"]: r for r in body["resources"]}
        self.assertEqual(names["poddisruptionbudgets"]["shortNames"], ["pdb"])
        self.assertIn("poddisruptionbudgets/status", names)


class PolicyProtobufTests(KubeTestCase):
    def test_kubectl_create_pdb_body(self):
        """The protobuf body real kubectl sends for `create pdb` is accepted and stored."""
        from tests.runtime.test_protobuf import fixture

        code, body, _ = self.request(
            "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
            fixture("create-pdb"), content_type="application/vnd.kubernetes.protobuf",
            headers={"Accept": "application/json"})
        self.assertEqual(code, 201)
        self.assertEqual(body["spec"], {"minAvailable": "50%",
                                        "selector": {"matchLabels": {"app": "rails"}}})
