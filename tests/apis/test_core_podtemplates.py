"""Tests for L{kubetwist.apis.core.podtemplates} and the podtemplates HTTP surface."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core.register import STRATEGIES
from kubetwist.runtime.field import aggregate_message
from tests.support import KubeTestCase


def _pt(**template) -> dict:
    tpl = {"metadata": {"labels": {"app": "web"}},
           "spec": {"containers": [{"name": "c", "image": "nginx"},
                                   {"name": "d", "image": "busybox:1"}]}}
    tpl.update(template)
    return {"apiVersion": "v1", "kind": "PodTemplate",
            "metadata": {"name": "pt", "namespace": "default"}, "template": tpl}


class PodTemplateStrategyTests(SynchronousTestCase):
    def test_defaults_and_generation(self) -> None:
        """The template is defaulted as a pod template; generation starts at 1 and moves with it."""
        st = STRATEGIES["podtemplates"]
        obj = _pt()
        st.default(obj)
        st.prepare_for_create(obj)
        self.assertEqual(st.validate(obj), [])
        spec = obj["template"]["spec"]
        self.assertEqual((spec["restartPolicy"], spec["containers"][0]["imagePullPolicy"],
                          spec["containers"][1]["imagePullPolicy"]),
                         ("Always", "Always", "IfNotPresent"))
        self.assertEqual(obj["metadata"]["generation"], 1)
        new = _pt(metadata={"labels": {"app": "other"}})
        st.default(new)
        st.prepare_for_update(new, obj)
        self.assertEqual(new["metadata"]["generation"], 2)

    def test_invalid_template(self) -> None:
        """Template errors are reported under template.*."""
        st = STRATEGIES["podtemplates"]
        obj = _pt(spec={"containers": [{"name": "c"}]})
        st.default(obj)
        self.assertEqual(aggregate_message(st.validate(obj)),
                         "template.spec.containers[0].image: Required value")

    def test_table_row(self) -> None:
        """printPodTemplate: containers, images, pod labels."""
        self.assertEqual(STRATEGIES["podtemplates"].table.row(_pt()),
                         ["pt", "c,d", "nginx,busybox:1", "app=web"])


class PodTemplateHTTPTests(KubeTestCase):
    def test_create(self) -> None:
        """A pod template is created in its namespace, defaulted."""
        code, out, _ = self.request("POST", "/api/v1/namespaces/default/podtemplates", _pt())
        self.assertEqual(code, 201, out)
        self.assertEqual(out["template"]["spec"]["dnsPolicy"], "ClusterFirst")
