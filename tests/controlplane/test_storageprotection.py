"""
Tests for L{kubetwist.controlplane.storageprotection}: the finalizers
C{StorageObjectInUseProtection} puts on claims and volumes are released once nothing uses them.
"""

from __future__ import annotations

from kubetwist.controlplane.storageprotection import pod_uses_claim
from tests.support import KubeTestCase

NS = "/api/v1/namespaces/default"


def claim(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}


class StorageProtectionTests(KubeTestCase):
    def test_claim_released_when_unused(self):
        code, body, _ = self.request("POST", f"{NS}/persistentvolumeclaims", claim("data"))
        self.assertEqual(code, 201, body)
        self.assertEqual(body["metadata"]["finalizers"], ["kubernetes.io/pvc-protection"])
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "user"},
               "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}],
                        "volumes": [{"name": "v", "persistentVolumeClaim":
                                     {"claimName": "data"}}]}}
        self.assertEqual(self.request("POST", f"{NS}/pods", pod)[0], 201)
        code, body, _ = self.request("DELETE", f"{NS}/persistentvolumeclaims/data")
        self.assertEqual(code, 200)
        self.clock.advance(1)
        code, body, _ = self.request("GET", f"{NS}/persistentvolumeclaims/data")
        self.assertEqual(code, 200)  # in use: stays Terminating
        self.assertTrue(body["metadata"]["deletionTimestamp"])
        self.request("DELETE", f"{NS}/pods/user?gracePeriodSeconds=0")
        self.clock.advance(0)
        self.clock.advance(1)
        self.assertEqual(self.request("GET", f"{NS}/persistentvolumeclaims/data")[0], 404)

    def test_volume_released_unless_bound(self):
        pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
              "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                       "hostPath": {"path": "/tmp/x"}}}
        code, body, _ = self.request("POST", "/api/v1/persistentvolumes", pv)
        self.assertEqual(code, 201, body)
        self.assertEqual(body["metadata"]["finalizers"], ["kubernetes.io/pv-protection"])
        self.assertEqual(self.request("DELETE", "/api/v1/persistentvolumes/pv1")[0], 200)
        self.clock.advance(0)
        self.clock.advance(1)
        self.assertEqual(self.request("GET", "/api/v1/persistentvolumes/pv1")[0], 404)

    def test_pod_uses_claim(self):
        def pod(**spec):
            return {"metadata": {"name": "p"}, "spec": {"nodeName": "n", **spec},
                    "status": {}}
        vol = {"name": "v", "persistentVolumeClaim": {"claimName": "c"}}
        self.assertTrue(pod_uses_claim(pod(volumes=[vol]), "c"))
        self.assertFalse(pod_uses_claim(pod(volumes=[vol]), "d"))
        self.assertFalse(pod_uses_claim({"metadata": {"name": "p"},
                                         "spec": {"volumes": [vol]}}, "c"))
        done = pod(volumes=[vol])
        done["status"]["phase"] = "Succeeded"
        self.assertFalse(pod_uses_claim(done, "c"))
        self.assertTrue(pod_uses_claim(pod(volumes=[{"name": "scratch", "ephemeral": {}}]),
                                       "p-scratch"))

    def pod(self, name, claim_name, node="n1"):
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
               "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}],
                        "volumes": [{"name": "v", "persistentVolumeClaim":
                                     {"claimName": claim_name}}]}}
        self.assertEqual(self.request("POST", f"{NS}/pods", pod)[0], 201)

    def test_claim_kept_while_any_pod_uses_it(self):
        """Two users: the claim stays until the second is gone or finished."""
        self.request("POST", f"{NS}/persistentvolumeclaims", claim("data"))
        self.pod("a", "data")
        self.pod("b", "data")
        self.request("DELETE", f"{NS}/persistentvolumeclaims/data")
        self.request("DELETE", f"{NS}/pods/a?gracePeriodSeconds=0")
        self.clock.advance(0)
        self.assertEqual(self.request("GET", f"{NS}/persistentvolumeclaims/data")[0], 200)
        code, _, _ = self.request("PATCH", f"{NS}/pods/b/status",
                                  {"status": {"phase": "Failed"}},
                                  content_type="application/merge-patch+json")
        self.assertEqual(code, 200)
        self.clock.advance(0)
        self.assertEqual(self.request("GET", f"{NS}/persistentvolumeclaims/data")[0], 404)
        self.assertEqual(self.kube.storage_protection.released, ["pvc/default/data"])

    def test_unused_claim_released_on_delete(self):
        """A claim nobody uses goes on the next reactor turn after its DELETE."""
        self.request("POST", f"{NS}/persistentvolumeclaims", claim("free"))
        self.pod("other", "something-else")
        self.request("DELETE", f"{NS}/persistentvolumeclaims/free")
        self.assertEqual(self.request("GET", f"{NS}/persistentvolumeclaims/free")[0], 200)
        self.clock.advance(0)
        self.assertEqual(self.request("GET", f"{NS}/persistentvolumeclaims/free")[0], 404)
