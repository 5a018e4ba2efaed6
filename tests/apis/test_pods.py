"""Tests for L{kubetwist.apis.core.pods} and its PodSpec helpers."""

from __future__ import annotations

import copy

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core import pods
from kubetwist.apis.core.podspec_defaults import image_pull_policy_for
from kubetwist.runtime.field import Path, aggregate_message
from kubetwist.runtime.quantity import canonical_quantity, round_up_milli


def _pod(**spec) -> dict:
    base = {"containers": [{"name": "web", "image": "nginx:1.25"}]}
    base.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
            "spec": base}


def _errors(pod: dict) -> str:
    pods.default_pod(pod)
    errs = pods.validate_pod(pod)
    return aggregate_message(errs) if errs else ""


class QuantityTests(SynchronousTestCase):
    """Quantities come back in kube-apiserver's canonical form."""

    def test_canonical(self) -> None:
        """Fractions become milli units, binary suffixes are reduced, numbers become strings."""
        self.assertEqual(
            [canonical_quantity(v) for v in (".5", 3, 0.3, "1.5Gi", "1000", "1500", "1000m",
                                             "1e3")],
            ["500m", "3", "300m", "1536Mi", "1k", "1500", "1", "1e3"],
        )

    def test_round_up_milli(self) -> None:
        """Resource lists are rounded up to milli precision."""
        self.assertEqual(round_up_milli("0.0001"), "1m")


class DefaultingTests(SynchronousTestCase):
    """Upstream v1 defaults of pods and pod templates."""

    def test_image_pull_policy(self) -> None:
        """C{Always} for a latest or missing tag, C{IfNotPresent} for a tag or a digest."""
        self.assertEqual(
            [image_pull_policy_for(i) for i in ("nginx", "nginx:latest", "nginx:1.2",
                                                "reg:5000/a/b@sha256:" + "a" * 64)],
            ["Always", "Always", "IfNotPresent", "IfNotPresent"],
        )

    def test_pod_defaults(self) -> None:
        """A minimal pod gains the spec, container and pod-only defaults."""
        pod = _pod()
        pods.default_pod(pod)
        self.assertEqual(pod["spec"], {
            "containers": [{
                "name": "web", "image": "nginx:1.25", "imagePullPolicy": "IfNotPresent",
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File", "resources": {},
            }],
            "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "securityContext": {},
            "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler",
            "enableServiceLinks": True,
        })

    def test_requests_from_limits_and_volumes(self) -> None:
        """Requests default to limits; volume sources get their modes and types."""
        pod = _pod(volumes=[{"name": "s", "secret": {"secretName": "x"}},
                            {"name": "h", "hostPath": {"path": "/d"}},
                            {"name": "e"}])
        pod["spec"]["containers"][0]["resources"] = {"limits": {"cpu": 0.5}}
        pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "s", "mountPath": "/s",
                                                         "readOnly": False}]
        pods.default_pod(pod)
        c = pod["spec"]["containers"][0]
        self.assertEqual(c["resources"], {"limits": {"cpu": "500m"}, "requests": {"cpu": "500m"}})
        self.assertEqual(c["resizePolicy"], [{"resourceName": "cpu",
                                              "restartPolicy": "NotRequired"}])
        self.assertEqual(c["volumeMounts"], [{"name": "s", "mountPath": "/s"}])
        self.assertEqual(pod["spec"]["volumes"], [
            {"name": "s", "secret": {"secretName": "x", "defaultMode": 420}},
            {"name": "h", "hostPath": {"path": "/d", "type": ""}},
            {"name": "e", "emptyDir": {}},
        ])

    def test_template_defaults(self) -> None:
        """A template gets C{creationTimestamp: null} and no pod-only defaults."""
        tpl = {"spec": {"containers": [{"name": "c", "image": "i",
                                        "resources": {"limits": {"cpu": "1"}}}]}}
        pods.default_pod_template_spec(tpl)
        self.assertEqual(tpl["metadata"], {"creationTimestamp": None})
        self.assertNotIn("enableServiceLinks", tpl["spec"])
        self.assertEqual(tpl["spec"]["containers"][0]["resources"], {"limits": {"cpu": "1"}})


class ValidationTests(SynchronousTestCase):
    """Upstream messages and paths of pod validation."""

    def test_valid(self) -> None:
        """A defaulted minimal pod is valid."""
        self.assertEqual(_errors(_pod()), "")

    def test_containers_required(self) -> None:
        """A pod without containers is refused at C{spec.containers}."""
        self.assertEqual(_errors(_pod(containers=[])), "spec.containers: Required value")

    def test_mount_of_unknown_volume(self) -> None:
        """A mount must name a volume."""
        pod = _pod()
        pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/d"}]
        self.assertEqual(_errors(pod), 'spec.containers[0].volumeMounts[0].name: Not found: "data"')

    def test_request_above_limit(self) -> None:
        """Requests may not exceed limits."""
        pod = _pod()
        pod["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1"},
                                                     "requests": {"cpu": "2"}}
        self.assertEqual(_errors(pod), 'spec.containers[0].resources.requests: Invalid value: "2": '
                                       'must be less than or equal to cpu limit of 1')

    def test_duplicate_container_and_bad_name(self) -> None:
        """Container names are unique DNS-1123 labels."""
        pod = _pod(containers=[{"name": "a", "image": "i"}, {"name": "a", "image": "i"},
                               {"name": "B_", "image": "i"}])
        msg = _errors(pod)
        self.assertIn('spec.containers[1].name: Duplicate value: "a"', msg)
        self.assertIn('spec.containers[2].name: Invalid value: "B_": a lowercase RFC 1123 label',
                      msg)

    def test_restart_policy(self) -> None:
        """An unknown restart policy is NotSupported."""
        self.assertEqual(_errors(_pod(restartPolicy="Sometimes")),
                         'spec.restartPolicy: Unsupported value: "Sometimes": supported values: '
                         '"Always", "OnFailure", "Never"')

    def test_two_volume_sources(self) -> None:
        """A volume may have only one source."""
        pod = _pod(volumes=[{"name": "v", "emptyDir": {}, "hostPath": {"path": "/x"}}])
        self.assertEqual(_errors(pod), "spec.volumes[0].hostPath: Forbidden: may not specify more "
                                       "than 1 volume type")

    def test_update_forbidden_field(self) -> None:
        """Only images (and a few others) may change on update."""
        old = _pod()
        pods.default_pod(old)
        old["metadata"]["resourceVersion"] = "1"
        new = copy.deepcopy(old)
        new["spec"]["containers"][0]["image"] = "nginx:2"
        self.assertEqual(pods.validate_pod_update(new, old), [])
        new["spec"]["restartPolicy"] = "Never"
        errs = pods.validate_pod_update(new, old)
        self.assertEqual(len(errs), 1)
        self.assertEqual(errs[0].field, "spec")
        self.assertTrue(errs[0].detail.startswith(
            "pod updates may not change fields other than `spec.containers[*].image`,"))


class StrategyTests(SynchronousTestCase):
    """Pod registry strategies."""

    def test_prepare_for_create_qos(self) -> None:
        """Create sets phase Pending and the computed QoS class."""
        pod = _pod()
        pod["status"] = {"phase": "Running"}
        pod["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1", "memory": "1Gi"}}
        pods.default_pod(pod)
        pods.POD_STRATEGY.prepare_for_create(pod)
        self.assertEqual(pod["status"], {"phase": "Pending", "qosClass": "Guaranteed"})

    def test_qos_classes(self) -> None:
        """BestEffort without resources, Burstable with requests only."""
        self.assertEqual(pods.compute_pod_qos(_pod()), "BestEffort")
        pod = _pod()
        pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
        self.assertEqual(pods.compute_pod_qos(pod), "Burstable")

    def test_status_update_keeps_spec(self) -> None:
        """The status strategy keeps the stored spec."""
        old, new = _pod(), _pod(nodeName="n1")
        new["status"] = {"phase": "Running"}
        pods.POD_STATUS_STRATEGY.prepare_for_update(new, old)
        self.assertEqual(new["spec"], old["spec"])
        self.assertEqual(new["status"], {"phase": "Running"})

    def test_field_attrs(self) -> None:
        """Pods expose upstream's selectable fields."""
        pod = _pod(nodeName="n1")
        pods.default_pod(pod)
        pod["status"] = {"phase": "Pending", "podIPs": [{"ip": "10.0.0.1"}]}
        self.assertEqual(pods.POD_STRATEGY.attrs(pod), {
            "metadata.name": "p", "metadata.namespace": "ns", "spec.nodeName": "n1",
            "spec.restartPolicy": "Always", "spec.schedulerName": "default-scheduler",
            "spec.serviceAccountName": "", "spec.hostNetwork": "false", "status.phase": "Pending",
            "status.podIP": "10.0.0.1", "status.nominatedNodeName": "",
        })

    def test_template_validation_path(self) -> None:
        """Template validation reports under the given path."""
        errs = pods.validate_pod_template_spec({"spec": {"containers": [{"name": "c"}],
                                                         "restartPolicy": "Always",
                                                         "dnsPolicy": "ClusterFirst"}},
                                               Path("spec", "template"))
        self.assertIn("spec.template.spec.containers[0].image: Required value",
                      aggregate_message(errs))
