"""
Tests for L{kubetwist.apis.autoscaling}: HorizontalPodAutoscaler defaulting (minReplicas, the
CPU metric, behavior), canonical metric quantities, validation messages and paths as
kube-apiserver v1.32 writes them, the Targets column, and the HTTP round trip through
autoscaling/v2.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.autoscaling import hpa
from kubetwist.apis.autoscaling.printers import HPA_TABLE, format_hpa_metrics
from tests.support import KubeTestCase


def _hpa(name="web", **spec) -> dict:
    base = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 5}
    base.update(spec)
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": "default"}, "spec": base}


def _messages(errs) -> list[str]:
    return [e.error() for e in errs]


class DefaultsTests(SynchronousTestCase):
    def test_min_replicas_and_cpu_metric(self):
        """No minReplicas and no metrics: 1 and 80% average CPU; no behavior added."""
        obj = _hpa()
        hpa.default_hpa(obj)
        self.assertEqual(obj["spec"]["minReplicas"], 1)
        self.assertEqual(obj["spec"]["metrics"], [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}])
        self.assertNotIn("behavior", obj["spec"])
        self.assertEqual(obj["status"], {"currentMetrics": None, "desiredReplicas": 0})

    def test_behavior_filled(self):
        """A behavior with only scaleDown.policies gets the rest of upstream's defaults."""
        obj = _hpa(behavior={"scaleDown": {"policies": [
            {"type": "Pods", "value": 1, "periodSeconds": 60}]}})
        hpa.default_hpa(obj)
        self.assertEqual(obj["spec"]["behavior"], {
            "scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}],
                          "selectPolicy": "Max"},
            "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                        "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                     {"type": "Percent", "value": 100, "periodSeconds": 15}]}})

    def test_quantities_canonical(self):
        """Metric target quantities come back as canonical strings."""
        obj = _hpa(metrics=[{"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {
            "type": "AverageValue", "averageValue": 20}}},
            {"type": "Object", "object": {"metric": {"name": "q"}, "describedObject": {
                "kind": "Service", "name": "s"}, "target": {"type": "Value", "value": "0.5"}}}])
        hpa.default_hpa(obj)
        self.assertEqual(obj["spec"]["metrics"][0]["pods"]["target"]["averageValue"], "20")
        self.assertEqual(obj["spec"]["metrics"][1]["object"]["target"]["value"], "500m")


class ValidationTests(SynchronousTestCase):
    def test_replica_bounds(self):
        """minReplicas 0 (HPAScaleToZero off) and maxReplicas below minReplicas are refused."""
        obj = _hpa(minReplicas=0, maxReplicas=0)
        hpa.default_hpa(obj)
        self.assertEqual(_messages(hpa.validate_hpa(obj)), [
            "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
            "spec.maxReplicas: Invalid value: 0: must be greater than 0",
            "spec.metrics: Forbidden: must specify at least one Object or External metric to "
            "support scaling to zero replicas",
        ])

    def test_metric_source_mismatch(self):
        """A Pods metric carrying only a resource source needs its pods source."""
        obj = _hpa(metrics=[{"type": "Pods", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 50}}}])
        hpa.default_hpa(obj)
        self.assertEqual(_messages(hpa.validate_hpa(obj)), [
            "spec.metrics[0].pods: Required value: must populate information for the given "
            "metric source",
        ])

    def test_metric_extra_source(self):
        """A Pods metric carrying a resource source too is refused at the extra path."""
        obj = _hpa(metrics=[{"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {
            "type": "AverageValue", "averageValue": "1"}}, "resource": {"name": "cpu"}}])
        hpa.default_hpa(obj)
        self.assertEqual(_messages(hpa.validate_hpa(obj)), [
            "spec.metrics[0].resource: Forbidden: must populate the given metric source only",
        ])

    def test_scaling_policy_limits(self):
        """Policies need a positive value and a period of at most 1800s."""
        obj = _hpa(behavior={"scaleUp": {"policies": [
            {"type": "Pods", "value": 0, "periodSeconds": 1801}]}})
        hpa.default_hpa(obj)
        self.assertEqual(_messages(hpa.validate_hpa(obj)), [
            "spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than "
            "zero",
            "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less "
            "than or equal to 1800",
        ])

    def test_missing_ref(self):
        """scaleTargetRef needs kind and name."""
        obj = _hpa(scaleTargetRef={})
        hpa.default_hpa(obj)
        self.assertEqual(_messages(hpa.validate_hpa(obj)), [
            "spec.scaleTargetRef.kind: Required value",
            "spec.scaleTargetRef.name: Required value"])


class PrinterTests(SynchronousTestCase):
    def test_targets(self):
        """Targets: resource utilization, pods values, then '+ N more...'."""
        specs = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 80}}},
            {"type": "Pods", "pods": {"target": {"averageValue": "20"}}},
            {"type": "Pods", "pods": {"target": {"averageValue": "4"}}}]
        statuses = [{"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": 40}}}]
        self.assertEqual(format_hpa_metrics(specs, statuses),
                         "cpu: 40%/80%, <unknown>/20 + 1 more...")
        self.assertEqual(format_hpa_metrics([], None), "<none>")

    def test_row(self):
        """Reference, MinPods, MaxPods and Replicas cells."""
        obj = _hpa(minReplicas=2)
        obj["status"] = {"currentReplicas": 3}
        self.assertEqual(HPA_TABLE.row(obj)[:6],
                         ["web", "Deployment/web", "<none>", 2, 5, 3])


class AutoscalingHTTPTests(KubeTestCase):
    def test_create(self):
        """POST: no generation, the empty v2 status, defaults applied."""
        code, body, _ = self.request(
            "POST", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", _hpa())
        self.assertEqual(code, 201)
        self.assertNotIn("generation", body["metadata"])
        self.assertEqual(body["status"], {"currentMetrics": None, "desiredReplicas": 0})
        self.assertEqual(body["spec"]["minReplicas"], 1)

    def test_invalid(self):
        """maxReplicas 0 gets kube-apiserver's 422."""
        code, body, _ = self.request(
            "POST", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
            _hpa("bad", maxReplicas=0))
        self.assertEqual((code, body["message"]), (422, (
            'HorizontalPodAutoscaler.autoscaling "bad" is invalid: [spec.maxReplicas: Invalid '
            "value: 0: must be greater than 0, spec.maxReplicas: Invalid value: 0: must be "
            "greater than or equal to `minReplicas`]")))

    def test_discovery(self):
        """Discovery: hpa short name, category all, the status subresource."""
        code, body, _ = self.request("GET", "/apis/autoscaling/v2")
        names = {r["name"]: r for r in body["resources"]}
        self.assertEqual(names["horizontalpodautoscalers"]["shortNames"], ["hpa"])
        self.assertEqual(names["horizontalpodautoscalers"]["categories"], ["all"])
        self.assertIn("horizontalpodautoscalers/status", names)
