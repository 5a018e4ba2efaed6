# -*- test-case-name: tests.integration.test_podsecurity -*-
"""
PodSecurity admission with the real C{kubectl} against a real C{twistd kubeapi}: what
kubectl prints is what it printed against kube-apiserver v1.32 for the same commands (recorded
from the reference server, the namespace name substituted).
"""

from __future__ import annotations

import json

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units, unique_name

PRIVILEGED_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "priv"},
                  "spec": {"containers": [{"name": "c", "image": "busybox",
                                           "securityContext": {"privileged": True}}]}}


def _restricted_violations(container: str, privileged: bool = False) -> str:
    """kube-apiserver's detail text for a plain container (C{privileged: true} first when
    set)."""
    text = ""
    if privileged:
        text = (f'privileged (container "{container}" must not set '
                "securityContext.privileged=true), ")
    return text + (
        f'allowPrivilegeEscalation != false (container "{container}" must set '
        "securityContext.allowPrivilegeEscalation=false), unrestricted capabilities "
        f'(container "{container}" must set securityContext.capabilities.drop=["ALL"]), '
        f'runAsNonRoot != true (pod or container "{container}" must set '
        "securityContext.runAsNonRoot=true), seccompProfile (pod or container "
        f'"{container}" must set securityContext.seccompProfile.type to "RuntimeDefault" or '
        '"Localhost")')


class PodSecurityAcceptanceTests(ServerTestMixin, SynchronousTestCase):
    """One server with the default admission plugins (PodSecurity among them) for the
    class."""

    def labelled_namespace(self, *labels: str) -> str:
        name = unique_name("psa")
        self.server.kubectl("create", "namespace", name)
        if labels:
            out = self.server.kubectl("label", "namespace", name, *labels)
            self.assertEqual(out.stdout, f"namespace/{name} labeled\n")
        return name

    def test_enforce_restricted_refuses_privileged_pod(self) -> None:
        """C{enforce=restricted}: C{kubectl apply} of a privileged pod fails with upstream's
        message, and nothing is stored; C{kubectl run --dry-run=server} is refused too."""
        ns = self.labelled_namespace("pod-security.kubernetes.io/enforce=restricted")
        r = self.server.kubectl("apply", "-n", ns, "-f", "-",
                                input=json.dumps(PRIVILEGED_POD), check=False)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr, (
            'Error from server (Forbidden): error when creating "STDIN": pods "priv" is '
            'forbidden: violates PodSecurity "restricted:latest": '
            + _restricted_violations("c", privileged=True) + "\n"))
        self.assertEqual(self.server.kubectl("get", "pods", "-n", ns, "-o", "name").stdout, "")
        r = self.server.kubectl("run", "r", "-n", ns, "--image=busybox", "--dry-run=server",
                                check=False)
        self.assertEqual((r.returncode, r.stderr), (1, (
            'Error from server (Forbidden): pods "r" is forbidden: violates PodSecurity '
            '"restricted:latest": ' + _restricted_violations("r") + "\n")))

    def test_warn_restricted_on_deployment(self) -> None:
        """C{warn=restricted}: C{kubectl create deployment} succeeds and prints upstream's
        warning about the pod template."""
        ns = self.labelled_namespace("pod-security.kubernetes.io/warn=restricted")
        r = self.server.kubectl("create", "deployment", "web", "-n", ns, "--image=nginx")
        self.assertEqual(r.stdout, "deployment.apps/web created\n")
        self.assertEqual(r.stderr, 'Warning: would violate PodSecurity "restricted:latest": '
                         + _restricted_violations("nginx") + "\n")

    def test_namespace_labels(self) -> None:
        """An invalid level is refused with upstream's message; tightening C{enforce} over an
        existing privileged pod warns about it."""
        ns = self.labelled_namespace("pod-security.kubernetes.io/warn=restricted")
        r = self.server.kubectl("label", "namespace", ns,
                                "pod-security.kubernetes.io/enforce=bogus", check=False)
        self.assertEqual((r.returncode, r.stderr), (1, (
            f'The Namespace "{ns}" is invalid: metadata.labels[pod-security.kubernetes.io/'
            'enforce]: Invalid value: "bogus": must be one of privileged, baseline, '
            "restricted\n")))
        r = self.server.kubectl("run", "p", "-n", ns, "--image=busybox", "--privileged")
        self.assertEqual(r.stdout, "pod/p created\n")
        self.assertEqual(r.stderr, 'Warning: would violate PodSecurity "restricted:latest": '
                         + _restricted_violations("p", privileged=True) + "\n")
        r = self.server.kubectl("label", "namespace", ns,
                                "pod-security.kubernetes.io/enforce=baseline")
        self.assertEqual(r.stdout, f"namespace/{ns} labeled\n")
        self.assertEqual(r.stderr, (
            f'Warning: existing pods in namespace "{ns}" violate the new PodSecurity enforce '
            'level "baseline:latest"\nWarning: p: privileged\n'))


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
