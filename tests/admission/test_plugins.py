"""Tests for the pod admission mutations in L{kubetwist.admission.plugins}."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.admission.plugins import defaulttolerationseconds, priority, serviceaccount
from kubetwist.runtime.errors import StatusError


def _pod(**spec) -> dict:
    base = {"containers": [{"name": "c", "image": "i"}],
            "initContainers": [{"name": "init", "image": "i"}]}
    base.update(spec)
    return {"metadata": {"name": "p"}, "spec": base}


class ServiceAccountTests(SynchronousTestCase):
    """The ServiceAccount admission mutation."""

    def test_mount(self) -> None:
        """The default account, a projected token volume and a mount in every container."""
        pod = _pod()
        serviceaccount.mutate_pod(pod, "abcde")
        spec = pod["spec"]
        self.assertEqual((spec["serviceAccountName"], spec["serviceAccount"]),
                         ("default", "default"))
        mount = {"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                 "name": "kube-api-access-abcde", "readOnly": True}
        self.assertEqual(spec["containers"][0]["volumeMounts"], [mount])
        self.assertEqual(spec["initContainers"][0]["volumeMounts"], [mount])
        self.assertEqual(spec["volumes"], [{"name": "kube-api-access-abcde",
                                            "projected": serviceaccount.token_volume_source()}])
        self.assertEqual(spec["volumes"][0]["projected"]["sources"][0],
                         {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}})

    def test_no_automount(self) -> None:
        """automountServiceAccountToken false adds no volume."""
        pod = _pod(automountServiceAccountToken=False)
        serviceaccount.mutate_pod(pod, "abcde")
        self.assertNotIn("volumes", pod["spec"])
        self.assertEqual(pod["spec"]["serviceAccountName"], "default")

    def test_random_suffix(self) -> None:
        """Generated suffixes are 5 characters of upstream's alphabet."""
        s = serviceaccount.random_suffix()
        self.assertEqual(len(s), 5)
        self.assertTrue(set(s) <= set("bcdfghjklmnpqrstvwxz2456789"))


class TolerationTests(SynchronousTestCase):
    """The DefaultTolerationSeconds mutation."""

    def test_adds_both(self) -> None:
        """Both NoExecute tolerations are added with 300 s."""
        pod = _pod()
        defaulttolerationseconds.mutate_pod(pod)
        self.assertEqual(pod["spec"]["tolerations"], [
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
             "tolerationSeconds": 300},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
             "tolerationSeconds": 300},
        ])

    def test_tolerate_all(self) -> None:
        """An empty-key toleration already covers both taints."""
        pod = _pod(tolerations=[{"operator": "Exists"}])
        defaulttolerationseconds.mutate_pod(pod)
        self.assertEqual(pod["spec"]["tolerations"], [{"operator": "Exists"}])


class PriorityTests(SynchronousTestCase):
    """The Priority mutation."""

    def test_default(self) -> None:
        """Without a class: priority 0, PreemptLowerPriority."""
        pod = _pod()
        priority.mutate_pod(pod)
        self.assertEqual((pod["spec"]["priority"], pod["spec"]["preemptionPolicy"]),
                         (0, "PreemptLowerPriority"))

    def test_system_class(self) -> None:
        """system-node-critical resolves to 2000001000."""
        pod = _pod(priorityClassName="system-node-critical")
        priority.mutate_pod(pod)
        self.assertEqual(pod["spec"]["priority"], 2000001000)

    def test_unknown_class(self) -> None:
        """An unknown class is Forbidden with upstream's message."""
        pod = _pod(priorityClassName="foo")
        exc = self.assertRaises(StatusError, priority.mutate_pod, pod)
        self.assertEqual((exc.code, exc.message),
                         (403, 'pods "p" is forbidden: no PriorityClass with name foo was found'))
