# -*- test-case-name: tests.registry.test_scale -*-
"""
Tests for the C{scale} subresource (L{kubetwist.registry.generic.scale}; upstream
C{pkg/registry/apps/deployment/storage.ScaleREST} and its twins), through the whole server: an
C{autoscaling/v1 Scale} view of the workload, read, replaced and patched, written back into
the parent object, with upstream's errors.
"""

from __future__ import annotations

import copy

from tests.support import KubeTestCase

APPS = "/apis/apps/v1/namespaces/default"
TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                       "template": TEMPLATE}}


def scale(name: str, replicas: int, resource_version: str = "") -> dict:
    meta = {"name": name, "namespace": "default"}
    if resource_version:
        meta["resourceVersion"] = resource_version
    return {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": meta,
            "spec": {"replicas": replicas}}


class DeploymentScaleTests(KubeTestCase):
    def setUp(self) -> None:
        super().setUp()
        code, self.deployment, _ = self.request("POST", APPS + "/deployments", DEPLOYMENT)
        self.assertEqual(code, 201)

    def test_get(self) -> None:
        """The Scale carries the parent's identity, spec.replicas, status.replicas and the
        selector as a string."""
        code, body, _ = self.request("GET", APPS + "/deployments/web/scale")
        self.assertEqual(code, 200)
        meta = self.deployment["metadata"]
        self.assertEqual(body, {
            "kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {"name": "web", "namespace": "default", "uid": meta["uid"],
                         "resourceVersion": meta["resourceVersion"],
                         "creationTimestamp": meta["creationTimestamp"]},
            "spec": {"replicas": 2}, "status": {"replicas": 0, "selector": "app=web"}})

    def test_put_writes_parent(self) -> None:
        """A PUT without resourceVersion sets the parent's spec.replicas."""
        code, body, _ = self.request("PUT", APPS + "/deployments/web/scale", scale("web", 3))
        self.assertEqual((code, body["spec"]["replicas"]), (200, 3))
        _, parent, _ = self.request("GET", APPS + "/deployments/web")
        self.assertEqual(parent["spec"]["replicas"], 3)
        self.assertEqual(parent["metadata"]["resourceVersion"], body["metadata"]["resourceVersion"])

    def test_merge_patch(self) -> None:
        code, body, _ = self.request("PATCH", APPS + "/deployments/web/scale",
                                     {"spec": {"replicas": 5}},
                                     content_type="application/merge-patch+json")
        self.assertEqual((code, body["spec"]["replicas"]), (200, 5))
        _, parent, _ = self.request("GET", APPS + "/deployments/web")
        self.assertEqual(parent["spec"]["replicas"], 5)

    def test_stale_resource_version(self) -> None:
        """A Scale with an old resourceVersion is 409 Conflict on the parent resource."""
        code, body, _ = self.request("PUT", APPS + "/deployments/web/scale",
                                     scale("web", 3, "1"))
        self.assertEqual((code, body["reason"], body["message"]), (
            409, "Conflict",
            'Operation cannot be fulfilled on deployments.apps "web": the object has been '
            'modified; please apply your changes to the latest version and try again'))

    def test_negative_replicas(self) -> None:
        """Negative replicas are 422 on the Scale kind, as upstream's ValidateScale."""
        code, body, _ = self.request("PUT", APPS + "/deployments/web/scale", scale("web", -1))
        self.assertEqual((code, body["message"]), (
            422, 'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must '
                 'be greater than or equal to 0'))
        self.assertEqual(body["details"]["kind"], "Scale")
        self.assertEqual(body["details"]["group"], "autoscaling")

    def test_missing_parent(self) -> None:
        """A GET of a missing parent's Scale names C{deployments/scale}, as upstream's
        C{ScaleREST.Get} (recorded in tests/vectors/apps.jsonl)."""
        code, body, _ = self.request("GET", APPS + "/deployments/nope/scale")
        self.assertEqual((code, body["message"]),
                         (404, 'deployments/scale.apps "nope" not found'))


class OtherWorkloadScaleTests(KubeTestCase):
    def test_statefulset_and_replicaset(self) -> None:
        """StatefulSets and ReplicaSets have the same subresource."""
        for resource, kind in (("statefulsets", "StatefulSet"), ("replicasets", "ReplicaSet")):
            obj = copy.deepcopy(DEPLOYMENT)
            obj["kind"] = kind
            code, _, _ = self.request("POST", f"{APPS}/{resource}", obj)
            self.assertEqual(code, 201, resource)
            code, body, _ = self.request("PUT", f"{APPS}/{resource}/web/scale", scale("web", 4))
            self.assertEqual((code, body["spec"]["replicas"]), (200, 4), resource)
            _, parent, _ = self.request("GET", f"{APPS}/{resource}/web")
            self.assertEqual(parent["spec"]["replicas"], 4, resource)

    def test_replication_controller_selector(self) -> None:
        """A ReplicationController's selector (a label map) prints as a selector string."""
        rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
              "spec": {"replicas": 1, "selector": {"app": "web"}, "template": TEMPLATE}}
        base = "/api/v1/namespaces/default/replicationcontrollers"
        self.assertEqual(self.request("POST", base, rc)[0], 201)
        code, body, _ = self.request("GET", base + "/rc/scale")
        self.assertEqual((code, body["status"]["selector"], body["spec"]["replicas"]),
                         (200, "app=web", 1))
        code, body, _ = self.request("PUT", base + "/nope/scale", scale("nope", 1))
        self.assertEqual((code, body["message"]), (404, 'replicationcontrollers "nope" not found'))
