"""Tests for L{kubetwist.apis.storage}: defaults, validation, printing, HTTP."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.storage import register
from tests.support import KubeTestCase

S = register.STRATEGIES


def messages(errs) -> list[str]:
    return [e.error() for e in errs]


class StorageClassTests(SynchronousTestCase):
    def test_defaults(self) -> None:
        """reclaimPolicy defaults to Delete and volumeBindingMode to Immediate."""
        sc = {"metadata": {"name": "s"}, "provisioner": "p"}
        S["storageclasses"].default(sc)
        self.assertEqual((sc["reclaimPolicy"], sc["volumeBindingMode"]), ("Delete", "Immediate"))
        self.assertEqual(S["storageclasses"].validate(sc), [])

    def test_validation(self) -> None:
        """Provisioner required; unknown policy and mode are unsupported values."""
        sc = {"metadata": {"name": "s"}, "provisioner": "", "reclaimPolicy": "Recycle",
              "volumeBindingMode": "Later"}
        self.assertEqual(messages(S["storageclasses"].validate(sc)), [
            'provisioner: Required value',
            'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
            ('volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", '
            '"WaitForFirstConsumer"'),
        ])

    def test_update_immutability(self) -> None:
        """Parameters, provisioner and reclaimPolicy are forbidden to change."""
        old = {"metadata": {"name": "s", "resourceVersion": "1"}, "provisioner": "a",
               "parameters": {"x": "1"}, "reclaimPolicy": "Delete",
               "volumeBindingMode": "Immediate"}
        new = dict(old, provisioner="b", parameters={"x": "2"}, reclaimPolicy="Retain")
        self.assertEqual(messages(S["storageclasses"].validate_update(new, old)), [
            "parameters: Forbidden: updates to parameters are forbidden.",
            "provisioner: Forbidden: updates to provisioner are forbidden.",
            "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
        ])

    def test_table(self) -> None:
        """The default class is marked and unset fields print their defaults."""
        row = S["storageclasses"].table.row({
            "metadata": {"name": "s", "annotations": {
                "storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "p"})
        self.assertEqual(row, ["s (default)", "p", "Delete", "Immediate", False, "<unknown>"])


class CSITests(SynchronousTestCase):
    def test_csi_driver_defaults(self) -> None:
        """CSIDriver spec defaults as upstream's SetDefaults_CSIDriver."""
        d = {"metadata": {"name": "csi.example.com"}}
        S["csidrivers"].default(d)
        self.assertEqual(d["spec"], {
            "attachRequired": True, "podInfoOnMount": False, "storageCapacity": False,
            "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
            "requiresRepublish": False, "seLinuxMount": False})
        self.assertEqual(S["csidrivers"].validate(d), [])

    def test_csi_driver_token_requests(self) -> None:
        """Token request audiences are unique and expirations at least ten minutes."""
        d = {"metadata": {"name": "x"}, "spec": {"tokenRequests": [
            {"audience": "a", "expirationSeconds": 60}, {"audience": "a"}]}}
        S["csidrivers"].default(d)
        self.assertEqual(messages(S["csidrivers"].validate(d)), [
            ("spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a "
            "duration less than 10 minutes"),
            'spec.tokenRequests[1].audience: Duplicate value: "a"',
        ])

    def test_volume_attachment(self) -> None:
        """A VolumeAttachment needs an attacher and exactly one source; status is reset."""
        va = {"metadata": {"name": "v"}, "spec": {"nodeName": "n"},
              "status": {"attached": True}}
        S["volumeattachments"].default(va)
        S["volumeattachments"].prepare_for_create(va)
        self.assertEqual(va["status"], {"attached": False})
        self.assertEqual(messages(S["volumeattachments"].validate(va))[:2], [
            "spec.attacher: Required value",
            ("spec.source: Required value: must specify exactly one of inlineVolumeSpec and "
            "persistentVolumeName"),
        ])

    def test_csi_node_duplicates(self) -> None:
        """CSINode drivers need a node ID and unique names."""
        node = {"metadata": {"name": "n"}, "spec": {"drivers": [
            {"name": "d", "nodeID": "1", "topologyKeys": ["k"]}, {"name": "d"}]}}
        self.assertEqual(messages(S["csinodes"].validate(node)), [
            'spec.drivers[1].nodeID: Required value',
            'spec.drivers[1].name: Duplicate value: "d"',
        ])

    def test_capacity_table(self) -> None:
        """CSIStorageCapacity prints its class and capacity, <unset> when absent."""
        table = S["csistoragecapacities"].table
        self.assertEqual(table.row({"metadata": {"name": "c"}, "storageClassName": "s"}),
                         ["c", "s", "<unset>"])


class HTTPTests(KubeTestCase):
    def test_short_name_and_defaults(self) -> None:
        """storageclasses are served with short name sc and come back defaulted."""
        code, body, _ = self.request("GET", "/apis/storage.k8s.io/v1")
        sc = next(r for r in body["resources"] if r["name"] == "storageclasses")
        self.assertEqual((sc["shortNames"], sc["namespaced"]), (["sc"], False))
        code, body, _ = self.request("POST", "/apis/storage.k8s.io/v1/storageclasses", {
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "fast"}, "provisioner": "kubernetes.io/gce-pd"})
        self.assertEqual(code, 201)
        self.assertEqual((body["reclaimPolicy"], body["volumeBindingMode"]),
                         ("Delete", "Immediate"))
