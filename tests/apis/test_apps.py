"""Tests for L{kubetwist.apis.apps}."""

from __future__ import annotations

import copy

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.apps.register import GROUP, RESOURCES, STRATEGIES, VERSION
from kubetwist.runtime.field import aggregate_message


def _deployment(labels=None, selector=None) -> dict:
    labels = {"app": "web"} if labels is None else labels
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}} if selector is None else selector,
            "template": {"metadata": {"labels": labels},
                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        },
    }


def _create(resource: str, obj: dict) -> tuple[dict, str]:
    st = STRATEGIES[resource]
    st.default(obj)
    st.prepare_for_create(obj)
    errs = st.validate(obj)
    return obj, (aggregate_message(errs) if errs else "")


class RegisterTests(SynchronousTestCase):
    """The apps/v1 resource table."""

    def test_resources(self) -> None:
        """Short names, categories and subresources as upstream."""
        self.assertEqual((GROUP, VERSION), ("apps", "v1"))
        rows = {r.resource: (r.short_names, r.categories, r.subresources) for r in RESOURCES}
        self.assertEqual(rows, {
            "controllerrevisions": ([], [], []),
            "daemonsets": (["ds"], ["all"], ["status"]),
            "deployments": (["deploy"], ["all"], ["status", "scale"]),
            "replicasets": (["rs"], ["all"], ["status", "scale"]),
            "statefulsets": (["sts"], ["all"], ["status", "scale"]),
        })


class DeploymentTests(SynchronousTestCase):
    """Deployment defaults, validation and strategies."""

    def test_defaults_and_create(self) -> None:
        """Defaults as upstream; create sets generation 1 and an empty status."""
        obj, errs = _create("deployments", _deployment())
        self.assertEqual(errs, "")
        self.assertEqual(obj["metadata"]["generation"], 1)
        self.assertEqual(obj["status"], {})
        spec = obj["spec"]
        self.assertEqual((spec["replicas"], spec["revisionHistoryLimit"],
                          spec["progressDeadlineSeconds"]), (1, 10, 600))
        self.assertEqual(spec["strategy"], {"type": "RollingUpdate",
                                            "rollingUpdate": {
                                                "maxUnavailable": "25%", "maxSurge": "25%"}})

    def test_selector_mismatch(self) -> None:
        """A selector that does not select the template is refused with Go's map printing."""
        _, errs = _create("deployments", _deployment(labels={"app": "other"}))
        self.assertEqual(errs, 'spec.template.metadata.labels: Invalid value: '
                               'map[string]string{"app":"other"}: '
                               '`selector` does not match template `labels`')

    def test_selector_required(self) -> None:
        """A workload needs a selector; a nil selector matches no template labels either
        (kube-apiserver v1.32's answers; DaemonSets only report the mismatch)."""
        mismatch = ('spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
                    '`selector` does not match template `labels`')
        for resource, kind, want in [
                ("deployments", "Deployment", f"[spec.selector: Required value, {mismatch}]"),
                ("replicasets", "ReplicaSet", f"[spec.selector: Required value, {mismatch}]"),
                ("statefulsets", "StatefulSet", f"[spec.selector: Required value, {mismatch}]"),
                ("daemonsets", "DaemonSet", mismatch)]:
            obj = _deployment()
            obj["kind"] = kind
            del obj["spec"]["selector"]
            _, errs = _create(resource, obj)
            self.assertEqual(errs, want, kind)

    def test_update_generation_and_immutable_selector(self) -> None:
        """Spec changes bump the generation; the selector is immutable."""
        old, _ = _create("deployments", _deployment())
        old["metadata"]["resourceVersion"] = "5"
        new = copy.deepcopy(old)
        new["spec"]["replicas"] = 3
        STRATEGIES["deployments"].prepare_for_update(new, old)
        self.assertEqual(new["metadata"]["generation"], 2)
        new["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "x"}}
        new["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
        errs = STRATEGIES["deployments"].validate_update(new, old)
        self.assertEqual(aggregate_message(errs),
                         'spec.selector: Invalid value: '
                         'v1.LabelSelector{MatchLabels:map[string]string'
                         '{"app":"web", "tier":"x"}, '
                         'MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: '
                         'field is immutable')

    def test_status_strategy_keeps_spec(self) -> None:
        """A status update cannot change the spec."""
        old, _ = _create("deployments", _deployment())
        new = copy.deepcopy(old)
        new["spec"]["replicas"] = 9
        new["status"] = {"replicas": 1}
        STRATEGIES["deployments/status"].prepare_for_update(new, old)
        self.assertEqual(new["spec"]["replicas"], 1)
        self.assertEqual(new["status"], {"replicas": 1})


class OtherWorkloadTests(SynchronousTestCase):
    """StatefulSet, DaemonSet and ReplicaSet specifics."""

    def _like(self, kind: str) -> dict:
        obj = _deployment()
        obj["kind"] = kind
        return obj

    def test_statefulset(self) -> None:
        """StatefulSet defaults and status wire form; only some spec fields may change."""
        obj, errs = _create("statefulsets", self._like("StatefulSet"))
        self.assertEqual(errs, "")
        self.assertEqual(obj["status"], {"replicas": 0, "availableReplicas": 0})
        self.assertEqual(obj["spec"]["updateStrategy"],
                         {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        self.assertEqual(obj["spec"]["persistentVolumeClaimRetentionPolicy"],
                         {"whenDeleted": "Retain", "whenScaled": "Retain"})
        obj["metadata"]["resourceVersion"] = "1"
        new = copy.deepcopy(obj)
        new["spec"]["podManagementPolicy"] = "Parallel"
        self.assertIn("updates to statefulset spec for fields other than 'replicas'",
                      aggregate_message(STRATEGIES["statefulsets"].validate_update(new, obj)))

    def test_daemonset(self) -> None:
        """DaemonSets record their template generation in the deprecated annotation."""
        obj, errs = _create("daemonsets", self._like("DaemonSet"))
        self.assertEqual(errs, "")
        self.assertEqual(obj["metadata"]["annotations"],
                         {"deprecated.daemonset.template.generation": "1"})
        self.assertEqual(obj["spec"]["updateStrategy"],
                         {"type": "RollingUpdate", "rollingUpdate": {
                             "maxUnavailable": 1, "maxSurge": 0}})
        new = copy.deepcopy(obj)
        new["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
        STRATEGIES["daemonsets"].prepare_for_update(new, obj)
        annotations = new["metadata"]["annotations"]
        self.assertEqual((new["metadata"]["generation"],
                          annotations["deprecated.daemonset.template.generation"]), (2, "2"))

    def test_replicaset(self) -> None:
        """ReplicaSets default replicas to 1, start with C{status.replicas: 0}, expose it as a
        field."""
        obj, errs = _create("replicasets", self._like("ReplicaSet"))
        self.assertEqual(errs, "")
        self.assertEqual((obj["spec"]["replicas"], obj["status"]), (1, {"replicas": 0}))
        self.assertEqual(STRATEGIES["replicasets"].attrs(obj)["status.replicas"], "0")

    def test_negative_replicas(self) -> None:
        """Replicas must not be negative."""
        obj = self._like("ReplicaSet")
        obj["spec"]["replicas"] = -1
        _, errs = _create("replicasets", obj)
        self.assertEqual(errs, "spec.replicas: Invalid value: -1: must be greater than or equal to "
                               "0")
