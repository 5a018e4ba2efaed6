"""Tests for L{kubetwist.apis.scheduling}, the system PriorityClasses and pod priority."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.scheduling import register
from tests.support import KubeTestCase

S = register.STRATEGIES["priorityclasses"]
PCS = "/apis/scheduling.k8s.io/v1/priorityclasses"


def messages(errs) -> list[str]:
    return [e.error() for e in errs]


class PriorityClassTests(SynchronousTestCase):
    def test_default_and_validate(self) -> None:
        """preemptionPolicy defaults; user values above 1e9 are forbidden."""
        pc = {"metadata": {"name": "high"}, "value": 1000000001}
        S.default(pc)
        self.assertEqual(pc["preemptionPolicy"], "PreemptLowerPriority")
        self.assertEqual(messages(S.validate(pc)), [
            "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"])

    def test_system_prefix(self) -> None:
        """system- names are reserved to the known system classes with their values."""
        pc = {"metadata": {"name": "system-node-critical"}, "value": 5}
        self.assertEqual(messages(S.validate(pc)), [
            ("metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
            "for system use only. error: value of system-node-critical PriorityClass must be "
            "2000001000")])

    def test_update(self) -> None:
        """value may not change; preemptionPolicy is immutable."""
        old = {"metadata": {"name": "p", "resourceVersion": "1"}, "value": 1,
               "preemptionPolicy": "Never"}
        new = dict(old, value=2, preemptionPolicy="PreemptLowerPriority")
        self.assertEqual(messages(S.validate_update(new, old)), [
            "value: Forbidden: may not be changed in an update.",
            'preemptionPolicy: Invalid value: "PreemptLowerPriority": field is immutable'])

    def test_table(self) -> None:
        """Columns as upstream: PreemptionPolicy comes after Age."""
        self.assertEqual([c["name"] for c in S.table.columns],
                         ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"])


class BootstrapTests(KubeTestCase):
    def test_system_classes_created(self) -> None:
        """The post-start hook creates the two system PriorityClasses."""
        code, body, _ = self.request("GET", PCS)
        self.assertEqual(code, 200)
        got = {i["metadata"]["name"]: i["value"] for i in body["items"]}
        self.assertEqual(got, {"system-node-critical": 2000001000,
                               "system-cluster-critical": 2000000000})
        code, body, _ = self.request("GET", "/readyz/poststarthook/scheduling/"
                                            "bootstrap-system-priority-classes")
        self.assertEqual(code, 200)

    def test_pod_priority_from_stored_class(self) -> None:
        """A pod naming a stored PriorityClass gets its value and preemption policy."""
        code, _, _ = self.request("POST", PCS, {
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "batch"}, "value": 42, "preemptionPolicy": "Never"})
        self.assertEqual(code, 201)
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"priorityClassName": "batch",
                        "containers": [{"name": "c", "image": "i"}]}}
        code, body, _ = self.request("POST", "/api/v1/namespaces/default/pods", pod)
        self.assertEqual(code, 201, body)
        self.assertEqual((body["spec"]["priority"], body["spec"]["preemptionPolicy"]),
                         (42, "Never"))
        pod["metadata"]["name"] = "q"
        pod["spec"]["priorityClassName"] = "missing"
        code, body, _ = self.request("POST", "/api/v1/namespaces/default/pods", pod)
        self.assertEqual(code, 403)
        self.assertEqual(body["message"], 'pods "q" is forbidden: no PriorityClass with name '
                                          "missing was found")


class ProtectionTests(KubeTestCase):
    def pc(self, name: str, value: int, global_default: bool = False) -> dict:
        return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": name}, "value": value, "globalDefault": global_default}

    def test_system_classes_not_deletable(self) -> None:
        """Deleting a system class is 403 Forbidden, before any lookup; others delete."""
        code, body, _ = self.request("DELETE", PCS + "/system-node-critical")
        self.assertEqual(code, 403)
        self.assertEqual((body["reason"], body["message"], body["details"]), (
            "Forbidden",
            ('priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a '
            "system priority class and cannot be deleted"),
            {"name": "system-node-critical", "group": "scheduling.k8s.io",
             "kind": "priorityclasses"}))
        code, body, _ = self.request("GET", PCS + "/system-node-critical")
        self.assertEqual(code, 200)
        self.assertEqual(self.request("POST", PCS, self.pc("low", 5))[0], 201)
        self.assertEqual(self.request("DELETE", PCS + "/low")[0], 200)

    def test_delete_collection_skips_the_veto(self) -> None:
        """
        DELETE on the collection removes system classes too, as upstream (whose registry
        overrides only the single delete; the generic DeleteCollection bypasses it).
        """
        code, body, _ = self.request("DELETE", PCS + "?labelSelector=")
        self.assertEqual(code, 200, body)
        self.assertIn("system-node-critical",
                      [i["metadata"]["name"] for i in body["items"]])
        code, _, _ = self.request("GET", PCS + "/system-node-critical")
        self.assertEqual(code, 404)

    def test_one_global_default(self) -> None:
        """A second globalDefault class is refused on create and on update; the default
        itself may be updated."""
        self.assertEqual(self.request("POST", PCS, self.pc("first", 10, True))[0], 201)
        code, body, _ = self.request("POST", PCS, self.pc("second", 20, True))
        self.assertEqual((code, body["reason"], body["message"]), (
            403, "Forbidden",
            ('priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass first is '
            "marked as default. Only one default can exist")))
        code, other, _ = self.request("POST", PCS, self.pc("other", 30))
        self.assertEqual(code, 201)
        other["globalDefault"] = True
        code, body, _ = self.request("PUT", PCS + "/other", other)
        self.assertEqual((code, body["message"]), (
            403, ('priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass first '
                 "is marked as default. Only one default can exist")))
        code, first, _ = self.request("GET", PCS + "/first")
        first["description"] = "still the default"
        code, body, _ = self.request("PUT", PCS + "/first", first)
        self.assertEqual((code, body["description"]), (200, "still the default"))


class VetoTests(SynchronousTestCase):
    def test_veto(self) -> None:
        """The strategy's delete veto names only the two system classes."""
        from kubetwist.runtime.errors import StatusError

        self.assertRaises(StatusError, S.veto_delete, "", "system-cluster-critical")
        self.assertIsNone(S.veto_delete("", "system-other"))
