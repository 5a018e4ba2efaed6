"""Tests for L{kubetwist.apis.autoscaling.v1}: autoscaling/v1 <-> v2 conversion and the
autoscaling/v1 HorizontalPodAutoscalers served from the autoscaling/v2 storage."""

from __future__ import annotations

import json

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.autoscaling import v1
from kubetwist.apis.autoscaling.register import V1_STRATEGIES
from tests.endpoints.test_watch import _Collector
from tests.support import ADMIN, KubeTestCase

V1_PATH = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
V2_PATH = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
CPU50 = {"type": "Resource", "resource": {
    "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}
PODS = {"type": "Pods", "pods": {"metric": {"name": "qps"},
                                 "target": {"type": "AverageValue", "averageValue": "1k"}}}
OBJECT = {"type": "Object", "object": {
    "describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "in"},
    "target": {"type": "Value", "value": "10"}, "metric": {"name": "rps"}}}
BEHAVIOR = {"scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
    {"type": "Pods", "value": 4, "periodSeconds": 15}]},
    "scaleDown": {"selectPolicy": "Min", "policies": [
        {"type": "Percent", "value": 10, "periodSeconds": 60}]}}


def v2_hpa(name="web", **spec) -> dict:
    base = {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 5}
    base.update(spec)
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": "default"}, "spec": base,
            "status": {"desiredReplicas": 0, "currentMetrics": None}}


def v1_hpa(name="web", **spec) -> dict:
    base = {"scaleTargetRef": REF, "maxReplicas": 5}
    base.update(spec)
    return {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": "default"}, "spec": base}


class ConversionTests(SynchronousTestCase):
    def test_cpu_target_maps_to_field(self):
        """A CPU utilization metric becomes targetCPUUtilizationPercentage; no annotation."""
        out = v1.hpa_v2_to_v1(v2_hpa(metrics=[CPU50]))
        self.assertEqual(out["apiVersion"], "autoscaling/v1")
        self.assertEqual(out["spec"], {"scaleTargetRef": {"kind": "Deployment", "name": "web",
                                                          "apiVersion": "apps/v1"},
                                       "minReplicas": 1, "maxReplicas": 5,
                                       "targetCPUUtilizationPercentage": 50})
        self.assertEqual(out["status"], {"currentReplicas": 0, "desiredReplicas": 0})
        self.assertNotIn("annotations", out["metadata"])

    def test_other_metrics_and_behavior_in_annotations(self):
        """Other metrics go to the metrics annotation as v1 MetricSpecs, behavior to the
        behavior annotation as Go marshals the internal type."""
        out = v1.hpa_v2_to_v1(v2_hpa(metrics=[PODS, CPU50, OBJECT], behavior=BEHAVIOR))
        ann = out["metadata"]["annotations"]
        self.assertEqual(ann[v1.METRIC_SPECS_ANNOTATION], (
            '[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"1k"}},'
            '{"type":"Object","object":{"target":{"kind":"Ingress","name":"in",'
            '"apiVersion":"networking.k8s.io/v1"},"metricName":"rps","targetValue":"10"}}]'))
        self.assertEqual(ann[v1.BEHAVIOR_ANNOTATION], (
            '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":'
            '[{"Type":"Pods","Value":4,"PeriodSeconds":15}]},"ScaleDown":'
            '{"StabilizationWindowSeconds":null,"SelectPolicy":"Min","Policies":'
            '[{"Type":"Percent","Value":10,"PeriodSeconds":60}]}}'))
        self.assertEqual(out["spec"]["targetCPUUtilizationPercentage"], 50)

    def test_status_metrics_and_conditions_in_annotations(self):
        """Every current metric and every condition is kept in annotations; the CPU
        utilization also fills currentCPUUtilizationPercentage."""
        obj = v2_hpa(metrics=[CPU50])
        obj["status"] = {"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {
                "averageValue": "200m", "averageUtilization": 40}}}],
            "conditions": [{"type": "AbleToScale", "status": "True",
                            "lastTransitionTime": "2024-01-01T00:00:00Z",
                            "reason": "ReadyForNewScale"}]}
        out = v1.hpa_v2_to_v1(obj)
        self.assertEqual(out["status"], {"currentReplicas": 2, "desiredReplicas": 3,
                                         "currentCPUUtilizationPercentage": 40})
        ann = out["metadata"]["annotations"]
        self.assertEqual(ann[v1.METRIC_STATUSES_ANNOTATION], (
            '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,'
            '"currentAverageValue":"200m"}}]'))
        self.assertEqual(ann[v1.CONDITIONS_ANNOTATION], (
            '[{"type":"AbleToScale","status":"True","lastTransitionTime":'
            '"2024-01-01T00:00:00Z","reason":"ReadyForNewScale"}]'))

    def test_v2_v1_v2_round_trip(self):
        """v2 -> v1 -> v2 gives the v2 object back (metrics order: others, then CPU)."""
        obj = v2_hpa(metrics=[PODS, OBJECT, CPU50], behavior=BEHAVIOR)
        obj["status"] = {"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {
                "averageValue": "200m", "averageUtilization": 40}}}],
            "conditions": [{"type": "AbleToScale", "status": "True",
                            "lastTransitionTime": "2024-01-01T00:00:00Z",
                            "reason": "ReadyForNewScale", "message": "ok"}]}
        obj["metadata"]["annotations"] = {"team": "a"}
        back = v1.hpa_v1_to_v2(v1.hpa_v2_to_v1(obj))
        expected = json.loads(json.dumps(obj))
        expected["spec"]["behavior"]["scaleDown"] = dict(BEHAVIOR["scaleDown"])
        self.assertEqual(back, expected)

    def test_v1_v2_v1_round_trip(self):
        """v1 with round-trip annotations -> v2 -> v1 is lossless, annotations included."""
        obj = v1.hpa_v2_to_v1(v2_hpa(metrics=[PODS, CPU50], behavior=BEHAVIOR))
        obj["metadata"]["annotations"]["team"] = "a"
        self.assertEqual(v1.hpa_v2_to_v1(v1.hpa_v1_to_v2(obj)), obj)

    def test_v1_without_target_gets_cpu_80(self):
        """No targetCPUUtilizationPercentage and no metrics annotation: the implicit 80%."""
        out = v1.hpa_v1_to_v2(v1_hpa(minReplicas=1))
        self.assertEqual(out["spec"]["metrics"], [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}])

    def test_round_trip_annotations_dropped_in_v2(self):
        """The round-trip annotations never reach the v2 object; a malformed one is
        ignored."""
        obj = v1_hpa(minReplicas=1, targetCPUUtilizationPercentage=60)
        obj["metadata"]["annotations"] = {v1.METRIC_SPECS_ANNOTATION: "not json",
                                          v1.BEHAVIOR_ANNOTATION: "{}"}
        out = v1.hpa_v1_to_v2(obj)
        self.assertNotIn("annotations", out["metadata"])
        self.assertEqual(out["spec"]["metrics"], [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}])
        self.assertNotIn("behavior", out["spec"])

    def test_v1_defaults(self):
        """autoscaling/v1 defaults minReplicas to 1 and nothing else."""
        obj = v1_hpa()
        V1_STRATEGIES["horizontalpodautoscalers"].default(obj)
        self.assertEqual(obj["spec"], {"scaleTargetRef": REF, "maxReplicas": 5,
                                       "minReplicas": 1})

    def test_validation_uses_internal_paths(self):
        """A v1 object is validated as the internal (v2-shaped) one, as upstream."""
        errs = V1_STRATEGIES["horizontalpodautoscalers"].validate(
            v1_hpa(minReplicas=1, targetCPUUtilizationPercentage=0))
        self.assertEqual([e.error() for e in errs], [(
            "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be "
            "greater than 0")])


class AutoscalingV1HTTPTests(KubeTestCase):
    def test_create_v2_read_v1(self):
        """An HPA created as autoscaling/v2 reads back as autoscaling/v1."""
        code, created, _ = self.request("POST", V2_PATH, v2_hpa(metrics=[CPU50, PODS]))
        self.assertEqual(code, 201)
        code, got, _ = self.request("GET", V1_PATH + "/web")
        self.assertEqual(code, 200)
        self.assertEqual((got["apiVersion"], got["kind"]),
                         ("autoscaling/v1", "HorizontalPodAutoscaler"))
        self.assertEqual(got["spec"]["targetCPUUtilizationPercentage"], 50)
        self.assertEqual(got["metadata"]["annotations"], {v1.METRIC_SPECS_ANNOTATION: (
            '[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"1k"}}]')})
        self.assertEqual(got["metadata"]["resourceVersion"],
                         created["metadata"]["resourceVersion"])

    def test_create_v1_read_v2(self):
        """An HPA created as autoscaling/v1 reads back as autoscaling/v2, the v1 create
        answering in v1 with the defaults applied."""
        code, created, _ = self.request(
            "POST", V1_PATH, v1_hpa(targetCPUUtilizationPercentage=70))
        self.assertEqual(code, 201)
        self.assertEqual(created["spec"], {"scaleTargetRef": {
            "kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}, "minReplicas": 1,
            "maxReplicas": 5, "targetCPUUtilizationPercentage": 70})
        self.assertEqual(created["status"], {"currentReplicas": 0, "desiredReplicas": 0})
        code, got, _ = self.request("GET", V2_PATH + "/web")
        self.assertEqual(code, 200)
        self.assertEqual(got["apiVersion"], "autoscaling/v2")
        self.assertEqual(got["spec"]["metrics"], [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}])
        self.assertEqual(got["status"], {"desiredReplicas": 0, "currentMetrics": None})

    def test_list_across_versions(self):
        """A v1 list names v1 kinds and holds objects created in either version."""
        self.request("POST", V2_PATH, v2_hpa("a", metrics=[CPU50]))
        self.request("POST", V1_PATH, v1_hpa("b", targetCPUUtilizationPercentage=20))
        code, lst, _ = self.request("GET", "/apis/autoscaling/v1/horizontalpodautoscalers")
        self.assertEqual((code, lst["kind"], lst["apiVersion"]),
                         (200, "HorizontalPodAutoscalerList", "autoscaling/v1"))
        self.assertEqual([(i["metadata"]["name"], i["spec"]["targetCPUUtilizationPercentage"])
                          for i in lst["items"]], [("a", 50), ("b", 20)])

    def test_patch_in_request_version(self):
        """A merge patch sent to v1 applies to the v1 form; other metrics survive."""
        self.request("POST", V2_PATH, v2_hpa(metrics=[CPU50, PODS]))
        code, out, _ = self.request(
            "PATCH", V1_PATH + "/web", {"spec": {"targetCPUUtilizationPercentage": 65}},
            content_type="application/merge-patch+json")
        self.assertEqual((code, out["spec"]["targetCPUUtilizationPercentage"]), (200, 65))
        _, got, _ = self.request("GET", V2_PATH + "/web")
        self.assertEqual(got["spec"]["metrics"], [PODS, {"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 65}}}])

    def test_invalid_v1_create(self):
        """The 422 of a v1 create names the internal field path."""
        code, body, _ = self.request("POST", V1_PATH,
                                     v1_hpa(targetCPUUtilizationPercentage=0))
        self.assertEqual((code, body["message"]), (422, (
            'HorizontalPodAutoscaler.autoscaling "web" is invalid: spec.metrics[0].resource.'
            'target.averageUtilization: Invalid value: 0: must be greater than 0')))

    def test_status_update_v1(self):
        """PUT of v1 status keeps the spec and stores the status in v2."""
        _, created, _ = self.request("POST", V1_PATH, v1_hpa(targetCPUUtilizationPercentage=70))
        created["status"] = {"currentReplicas": 2, "desiredReplicas": 3,
                             "currentCPUUtilizationPercentage": 55}
        created["spec"]["maxReplicas"] = 99
        code, out, _ = self.request("PUT", V1_PATH + "/web/status", created)
        self.assertEqual(code, 200)
        self.assertEqual(out["spec"]["maxReplicas"], 5)
        self.assertEqual(out["status"], {"currentReplicas": 2, "desiredReplicas": 3,
                                         "currentCPUUtilizationPercentage": 55})
        _, got, _ = self.request("GET", V2_PATH + "/web")
        self.assertEqual(got["status"]["currentMetrics"], [{"type": "Resource", "resource": {
            "name": "cpu", "current": {"averageUtilization": 55}}}])

    def test_delete_and_table(self):
        """The v1 Table has the v2 columns; delete answers with a Status."""
        self.request("POST", V2_PATH, v2_hpa(metrics=[CPU50]))
        code, table, _ = self.request(
            "GET", V1_PATH, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        self.assertEqual(code, 200)
        self.assertEqual([c["name"] for c in table["columnDefinitions"]],
                         ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas",
                          "Age"])
        self.assertEqual(table["rows"][0]["cells"][:3],
                         ["web", "Deployment/web", "cpu: <unknown>/50%"])
        code, body, _ = self.request("DELETE", V1_PATH + "/web")
        self.assertEqual((code, body["status"]), (200, "Success"))
        self.assertEqual(self.request("GET", V2_PATH + "/web")[0], 404)

    def test_watch_v1_sees_v2_writes(self):
        """A v1 watch gets v1 objects for writes made through v2."""
        d = self.treq.get("https://kubetwist.test" + V1_PATH + "?watch=1",
                          headers={k: [v] for k, v in ADMIN.items()})
        self.treq.flush()
        response = self.successResultOf(d)
        chunks: list = []
        response.deliverBody(_Collector(chunks))
        self.request("POST", V2_PATH, v2_hpa(metrics=[CPU50]))
        self.request("DELETE", V2_PATH + "/web")
        self.treq.flush()
        events = [json.loads(line) for line in b"".join(chunks).splitlines() if line]
        self.assertEqual([(e["type"], e["object"]["apiVersion"],
                           e["object"]["spec"]["targetCPUUtilizationPercentage"])
                          for e in events],
                         [("ADDED", "autoscaling/v1", 50), ("DELETED", "autoscaling/v1", 50)])

    def test_discovery(self):
        """autoscaling serves v2 (preferred) and v1; v1 has hpa, category all and status."""
        _, group, _ = self.request("GET", "/apis/autoscaling")
        self.assertEqual([v["version"] for v in group["versions"]], ["v2", "v1"])
        self.assertEqual(group["preferredVersion"]["version"], "v2")
        _, body, _ = self.request("GET", "/apis/autoscaling/v1")
        names = {r["name"]: r for r in body["resources"]}
        self.assertEqual(names["horizontalpodautoscalers"]["shortNames"], ["hpa"])
        self.assertEqual(names["horizontalpodautoscalers"]["categories"], ["all"])
        self.assertIn("horizontalpodautoscalers/status", names)
