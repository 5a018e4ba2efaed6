"""Admission metrics: upstream's names, labels and buckets, one step observation per phase and
one per plugin, rejections labelled."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from twisted.internet import defer
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.admission.chain import AdmissionChain
from kubetwist.admission.metrics import AdmissionMetrics
from kubetwist.registry.rest import ResourceSpec
from kubetwist.runtime import errors
from tests.support import KubeTestCase

SPEC = ResourceSpec("", "v1", "configmaps", "ConfigMap", "configmap")


class Plugin:
    def __init__(self, name: str, refuse: bool = False, cost: float = 0.0) -> None:
        self.name = name
        self.refuse = refuse
        self.cost = cost

    def handles(self, operation: str) -> bool:
        return operation == "CREATE"

    def admit(self, a) -> None:
        Plugin.now += self.cost

    def validate(self, a) -> None:
        Plugin.now += self.cost
        if self.refuse:
            raise errors.new_forbidden("", "configmaps", a.name, "no")


Plugin.now = 0.0


class ChainMetricsTests(SynchronousTestCase):
    def test_observations(self):
        registry = CollectorRegistry()
        chain = AdmissionChain([Plugin("A", cost=0.01), Plugin("B", refuse=True, cost=0.2)],
                               metrics=AdmissionMetrics(registry), timer=lambda: Plugin.now)
        bound = chain.for_request(SPEC, "", "ns", "c", None, False)
        obj = {"metadata": {"name": "c"}}
        self.successResultOf(defer.ensureDeferred(bound.mutate("CREATE", obj, None)))
        self.failureResultOf(defer.ensureDeferred(bound.validate("CREATE", obj, None)),
                             errors.StatusError)
        # UPDATE: no plugin handles it, nothing observed
        self.successResultOf(defer.ensureDeferred(bound.mutate("UPDATE", obj, None)))

        def value(metric: str, **labels) -> float:
            return registry.get_sample_value(metric, labels)

        step = "apiserver_admission_step_admission_duration_seconds"
        ctrl = "apiserver_admission_controller_admission_duration_seconds"
        self.assertEqual(value(step + "_count", type="admit", operation="CREATE",
                               rejected="false"), 1)
        self.assertAlmostEqual(value(step + "_sum", type="admit", operation="CREATE",
                                     rejected="false"), 0.21)
        self.assertEqual(value(step + "_count", type="validate", operation="CREATE",
                               rejected="true"), 1)
        self.assertIsNone(value(step + "_count", type="admit", operation="UPDATE",
                                rejected="false"))
        self.assertEqual(value(ctrl + "_count", name="A", type="validate", operation="CREATE",
                               rejected="false"), 1)
        self.assertEqual(value(ctrl + "_count", name="B", type="validate", operation="CREATE",
                               rejected="true"), 1)
        self.assertEqual(value(ctrl + "_bucket", name="B", type="validate", operation="CREATE",
                               rejected="true", le="0.1"), 0)
        self.assertEqual(value(ctrl + "_bucket", name="B", type="validate", operation="CREATE",
                               rejected="true", le="0.5"), 1)
        text = generate_latest(registry).decode()
        self.assertIn("# HELP apiserver_admission_step_admission_duration_seconds Admission "
                      "sub-step latency histogram in seconds, broken out for each operation "
                      "and API resource and step type (validate or admit).", text)
        self.assertIn('le="0.005"', text)
        self.assertIn('le="2.5"', text)


class ServerMetricsTests(KubeTestCase):
    def test_metrics_endpoint(self):
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
        self.assertEqual(self.request("POST", "/api/v1/namespaces/default/configmaps", cm)[0],
                         201)
        code, text, _ = self.request("GET", "/metrics")
        self.assertEqual(code, 200)
        self.assertIn('apiserver_admission_step_admission_duration_seconds_count{operation='
                      '"CREATE",rejected="false",type="admit"}', text)
        self.assertIn('apiserver_admission_controller_admission_duration_seconds_count{name='
                      '"NamespaceLifecycle",operation="CREATE",rejected="false",type="admit"}',
                      text)
