# -*- test-case-name: tests.integration.test_versions -*-
"""
One stored object, several served versions, through the real C{kubectl} against a real
C{twistd -n kubeapi}: HorizontalPodAutoscalers written as autoscaling/v2 and read as
autoscaling/v1, Events written as events.k8s.io/v1 and listed as core/v1.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units, parse_table


class ServedVersionsTests(ServerTestMixin, SynchronousTestCase):
    def test_hpa_and_events_across_versions(self) -> None:
        """
        C{kubectl get horizontalpodautoscalers.v1.autoscaling} shows an HPA created as
        autoscaling/v2 with its CPU
        target as C{targetCPUUtilizationPercentage}; C{kubectl get events} (core/v1) and
        C{kubectl get events.v1.events.k8s.io} both list an Event created as
        events.k8s.io/v1.
        """
        ns = self.namespace()
        self.create(ns, {
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": "web"},
                     "maxReplicas": 4, "metrics": [{"type": "Resource", "resource": {
                         "name": "cpu", "target": {"type": "Utilization",
                                                   "averageUtilization": 60}}}]}})
        # kubectl itself resolves the short name "hpa.v1.autoscaling" to the preferred
        # version (it asks /apis/autoscaling/v2 of kube-apiserver too): use the full name
        hpa = self.get_json(ns, "horizontalpodautoscalers.v1.autoscaling", "web")
        self.assertEqual((hpa["apiVersion"], hpa["spec"]["targetCPUUtilizationPercentage"],
                          hpa["spec"]["minReplicas"]), ("autoscaling/v1", 60, 1))
        self.create(ns, {
            "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "ev1"},
            "eventTime": "2024-01-01T00:00:00.000000Z", "reportingController": "example.com/c",
            "reportingInstance": "c-1", "action": "Scale", "reason": "Scaled",
            "regarding": {"kind": "Deployment", "namespace": ns, "name": "web"},
            "note": "scaled to 2", "type": "Normal"})
        events = self.get_json(ns, "events")
        self.assertEqual([(e["apiVersion"], e["metadata"]["name"], e["message"],
                           e["reportingComponent"]) for e in events["items"]],
                         [("v1", "ev1", "scaled to 2", "example.com/c")])
        rows = parse_table(self.server.kubectl(
            "get", "events.v1.events.k8s.io", "-n", ns).stdout)
        self.assertEqual([(r["TYPE"], r["REASON"], r["OBJECT"], r["MESSAGE"]) for r in rows],
                         [("Normal", "Scaled", "deployment/web", "scaled to 2")])


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
