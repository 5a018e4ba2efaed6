"""Tests for L{kubetwist.apis.core.persistentvolumes} and the PV/PVC HTTP surface."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core.register import STRATEGIES
from kubetwist.runtime.field import aggregate_message
from tests.support import KubeTestCase


def _pvc(**spec) -> dict:
    body = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "ns"}, "spec": body}


def _pv(**spec) -> dict:
    body = {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
            "hostPath": {"path": "/data"}}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
            "spec": body}


def _create(resource: str, obj: dict) -> tuple[dict, str]:
    st = STRATEGIES[resource]
    st.default(obj)
    st.prepare_for_create(obj)
    errs = st.validate(obj)
    return obj, aggregate_message(errs) if errs else ""


class PersistentVolumeClaimTests(SynchronousTestCase):
    def test_defaults_and_create(self) -> None:
        """volumeMode Filesystem, status Pending, the pvc-protection finalizer."""
        obj, errs = _create("persistentvolumeclaims", _pvc())
        self.assertEqual(errs, "")
        self.assertEqual(obj["spec"]["volumeMode"], "Filesystem")
        self.assertEqual(obj["status"], {"phase": "Pending"})
        self.assertEqual(obj["metadata"]["finalizers"], ["kubernetes.io/pvc-protection"])

    def test_validation(self) -> None:
        """Access modes and a storage request are required; unknown modes are refused."""
        _, errs = _create("persistentvolumeclaims", _pvc(accessModes=[], resources={}))
        self.assertEqual(errs, "[spec.accessModes: Required value: at least 1 access mode is "
                               "required, spec.resources[storage]: Required value]")
        _, errs = _create("persistentvolumeclaims", _pvc(accessModes=["Sometimes"]))
        self.assertEqual(errs, 'spec.accessModes: Unsupported value: "Sometimes": supported '
                               'values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", '
                               '"ReadWriteOncePod"')

    def test_update_immutable_spec(self) -> None:
        """Only resources.requests may change, and storage may not shrink."""
        old, _ = _create("persistentvolumeclaims", _pvc())
        old["metadata"]["resourceVersion"] = "3"
        new = _pvc(accessModes=["ReadWriteMany"], resources={"requests": {"storage": "512Mi"}})
        new["metadata"]["resourceVersion"] = "3"
        new["metadata"]["finalizers"] = ["kubernetes.io/pvc-protection"]
        STRATEGIES["persistentvolumeclaims"].default(new)
        errs = STRATEGIES["persistentvolumeclaims"].validate_update(new, old)
        self.assertEqual([e.field for e in errs], ["spec", "spec.resources.requests.storage"])


class PersistentVolumeTests(SynchronousTestCase):
    def test_defaults_and_create(self) -> None:
        """Retain, Filesystem, hostPath type "", Pending with the transition time."""
        pv = _pv()
        pv["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
        obj, errs = _create("persistentvolumes", pv)
        self.assertEqual(errs, "")
        self.assertEqual((obj["spec"]["persistentVolumeReclaimPolicy"], obj["spec"]["volumeMode"],
                          obj["spec"]["hostPath"]), ("Retain", "Filesystem",
                                                     {"path": "/data", "type": ""}))
        self.assertEqual(obj["status"], {"phase": "Pending",
                                         "lastPhaseTransitionTime": "2024-01-01T00:00:00Z"})
        self.assertEqual(obj["metadata"]["finalizers"], ["kubernetes.io/pv-protection"])

    def test_one_source(self) -> None:
        """Exactly one volume source; capacity must be storage only."""
        _, errs = _create("persistentvolumes", _pv(nfs={"server": "s", "path": "/"}))
        self.assertEqual(errs, "spec.nfs: Forbidden: may not specify more than 1 volume type")
        obj = _pv()
        del obj["spec"]["hostPath"]
        _, errs = _create("persistentvolumes", obj)
        self.assertEqual(errs, "spec: Required value: must specify a volume type")

    def test_unknown_fields(self) -> None:
        """A pod-volume field in a PV storageos source is unknown to the PV type table, and
        dropped."""
        from kubetwist.runtime import strict

        obj = _pv(storageos={"volumeName": "v", "secretName": "s"})
        self.assertEqual(strict.strict_errors(obj, "io.k8s.api.core.v1.PersistentVolume",
                                              prune=True),
                         ['unknown field "spec.storageos.secretName"'])
        self.assertEqual(obj["spec"]["storageos"], {"volumeName": "v"})


class PersistentVolumeHTTPTests(KubeTestCase):
    def test_strict_unknown_field(self) -> None:
        """fieldValidation=Strict refuses an unknown field with upstream's message."""
        body = _pv(storageos={"volumeName": "v", "secretName": "s"})
        del body["spec"]["hostPath"]
        code, status, _ = self.request(
            "POST", "/api/v1/persistentvolumes?fieldValidation=Strict", body)
        self.assertEqual((code, status["message"]), (
            400, 'PersistentVolume in version "v1" cannot be handled as a PersistentVolume: '
                 'strict decoding error: unknown field "spec.storageos.secretName"'))

    def test_create_table_and_delete(self) -> None:
        """A PV is cluster-scoped, printed as upstream, and its delete returns the object."""
        code, _, _ = self.request("POST", "/api/v1/persistentvolumes", _pv())
        self.assertEqual(code, 201)
        code, table, _ = self.request(
            "GET", "/api/v1/persistentvolumes",
            headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        cells = table["rows"][0]["cells"]
        self.assertEqual(cells[:9] + cells[10:], ["pv1", "1Gi", "RWO", "Retain", "Pending", "",
                                                  "", "<unset>", "", "Filesystem"])
        code, body, _ = self.request("DELETE", "/api/v1/persistentvolumes/pv1")
        self.assertEqual((code, body["kind"]), (200, "PersistentVolume"))
