"""Tests for L{kubetwist.apis.core.replicationcontrollers} and the RC HTTP surface."""

from __future__ import annotations

import copy

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core.register import RESOURCES, STRATEGIES
from kubetwist.runtime.field import aggregate_message
from tests.support import KubeTestCase


def _rc(**spec) -> dict:
    body = {
        "replicas": 2,
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
    }
    body.update(spec)
    return {"apiVersion": "v1", "kind": "ReplicationController",
            "metadata": {"name": "web", "namespace": "ns"}, "spec": body}


def _create(obj: dict) -> tuple[dict, str]:
    st = STRATEGIES["replicationcontrollers"]
    st.default(obj)
    st.prepare_for_create(obj)
    errs = st.validate(obj)
    return obj, aggregate_message(errs) if errs else ""


class ReplicationControllerStrategyTests(SynchronousTestCase):
    def test_resource_row(self) -> None:
        """rc is namespaced, short name rc, category all, status and scale subresources."""
        row = next(r for r in RESOURCES if r.resource == "replicationcontrollers")
        self.assertEqual((row.kind, row.namespaced, row.short_names, row.categories,
                          row.subresources),
                         ("ReplicationController", True, ["rc"], ["all"], ["status", "scale"]))

    def test_defaults_from_template_labels(self) -> None:
        """The selector and the object's labels default to the template labels."""
        obj, errs = _create(_rc(replicas=None))
        self.assertEqual(errs, "")
        self.assertEqual(obj["spec"]["selector"], {"app": "web"})
        self.assertEqual(obj["metadata"]["labels"], {"app": "web"})
        self.assertEqual(obj["spec"]["replicas"], 1)
        self.assertEqual(obj["status"], {"replicas": 0})
        self.assertEqual(obj["metadata"]["generation"], 1)
        self.assertEqual(obj["spec"]["template"]["spec"]["restartPolicy"], "Always")

    def test_selector_mismatch(self) -> None:
        """A selector that does not select the template labels is refused."""
        _, errs = _create(_rc(selector={"app": "other"}))
        self.assertEqual(errs, 'spec.template.metadata.labels: Invalid value: '
                               'map[string]string{"app":"web"}: '
                               '`selector` does not match template `labels`')

    def test_restart_policy_and_negative_replicas(self) -> None:
        """restartPolicy must be Always; replicas may not be negative."""
        obj = _rc(replicas=-1)
        obj["spec"]["template"]["spec"]["restartPolicy"] = "Never"
        _, errs = _create(obj)
        self.assertEqual(errs, '[spec.replicas: Invalid value: -1: must be greater than or equal '
                               'to 0, spec.template.spec.restartPolicy: Unsupported value: '
                               '"Never": supported values: "Always"]')

    def test_update_generation_and_status(self) -> None:
        """A spec change bumps the generation; the stored status is kept."""
        old, _ = _create(_rc())
        old["status"] = {"replicas": 2}
        new = _rc(replicas=3)
        STRATEGIES["replicationcontrollers"].default(new)
        STRATEGIES["replicationcontrollers"].prepare_for_update(new, old)
        self.assertEqual((new["metadata"]["generation"], new["status"]), (2, {"replicas": 2}))

    def test_status_update_rules(self) -> None:
        """Status counters may not exceed status.replicas."""
        old, _ = _create(_rc())
        old["metadata"]["resourceVersion"] = "5"
        new = copy.deepcopy(old)
        new["status"] = {"replicas": 1, "readyReplicas": 2}
        errs = STRATEGIES["replicationcontrollers/status"].validate_update(new, old)
        self.assertEqual(aggregate_message(errs), "status.readyReplicas: Invalid value: 2: "
                                                  "cannot be greater than status.replicas")

    def test_field_attrs(self) -> None:
        """status.replicas is a field selector."""
        obj, _ = _create(_rc())
        self.assertEqual(STRATEGIES["replicationcontrollers"].attrs(obj)["status.replicas"], "0")


class ReplicationControllerHTTPTests(KubeTestCase):
    def setUp(self):
        super().setUp()
        self.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
        code, _, _ = self.request("POST", "/api/v1/namespaces/ns/replicationcontrollers", _rc())
        self.assertEqual(code, 201)

    def test_scale_subresource(self) -> None:
        """GET scale prints the label-map selector; PUT scale changes spec.replicas."""
        path = "/api/v1/namespaces/ns/replicationcontrollers/web/scale"
        code, scale, _ = self.request("GET", path)
        self.assertEqual((code, scale["spec"], scale["status"]),
                         (200, {"replicas": 2}, {"replicas": 0, "selector": "app=web"}))
        scale["spec"]["replicas"] = 5
        code, _, _ = self.request("PUT", path, scale)
        self.assertEqual(code, 200)
        code, rc, _ = self.request("GET", "/api/v1/namespaces/ns/replicationcontrollers/web")
        self.assertEqual((rc["spec"]["replicas"], rc["metadata"]["generation"]), (5, 2))

    def test_table(self) -> None:
        """The Table has upstream's columns and row."""
        code, table, _ = self.request(
            "GET", "/api/v1/namespaces/ns/replicationcontrollers",
            headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        self.assertEqual(code, 200)
        self.assertEqual([c["name"] for c in table["columnDefinitions"]],
                         ["Name", "Desired", "Current", "Ready", "Age", "Containers", "Images",
                          "Selector"])
        self.assertEqual(table["rows"][0]["cells"][:4] + table["rows"][0]["cells"][5:],
                         ["web", 2, 0, 0, "c", "nginx", "app=web"])

    def test_field_selector(self) -> None:
        """status.replicas selects."""
        code, lst, _ = self.request(
            "GET", "/api/v1/namespaces/ns/replicationcontrollers?fieldSelector=status.replicas=1")
        self.assertEqual((code, lst["items"]), (200, []))
