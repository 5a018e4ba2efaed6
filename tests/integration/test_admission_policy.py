# -*- test-case-name: tests.integration.test_admission_policy -*-
"""
ValidatingAdmissionPolicy against a real C{twistd -n kubeapi} with the real C{kubectl}: a
policy whose ConfigMap param caps a Deployment's replicas refuses C{kubectl apply} with the
C{messageExpression}'s text, and a C{Warn} binding makes kubectl print a C{Warning:}.
"""

from __future__ import annotations

import json
import time

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units


def _deployment(name: str, replicas: int) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    }


def _policy(name: str, label: str) -> dict:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {
                "namespaceSelector": {"matchLabels": {label: "true"}},
                "resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                   "operations": ["CREATE", "UPDATE"],
                                   "resources": ["deployments"]}]},
            "validations": [{
                "expression": "object.spec.replicas <= int(params.data.maxReplicas)",
                "messageExpression": "'replicas must be at most ' + params.data.maxReplicas "
                                     "+ ', got ' + string(object.spec.replicas)",
                "reason": "Invalid"}],
        },
    }


def _binding(name: str, policy: str, label: str, ns: str, action: str) -> dict:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name},
        "spec": {"policyName": policy, "validationActions": [action],
                 "paramRef": {"name": "replica-limit", "namespace": ns,
                              "parameterNotFoundAction": "Deny"},
                 "matchResources": {"namespaceSelector": {"matchLabels": {label: "true"}}}},
    }


class ValidatingAdmissionPolicyKubectlTests(ServerTestMixin, SynchronousTestCase):
    def setup_policy(self, action: str) -> tuple[str, str]:
        ns = self.namespace()
        label = f"vap-{ns}"
        self.server.kubectl("label", "namespace", ns, f"{label}=true")
        self.create_configmap(ns, "replica-limit", {"maxReplicas": "3"})
        name = f"{ns}.example.com"
        self.create(None, _policy(name, label), _binding(name, name, label, ns, action))
        self.addCleanup(self.server.kubectl, "delete", "validatingadmissionpolicy", name)
        self.addCleanup(self.server.kubectl, "delete", "validatingadmissionpolicybinding", name)
        return ns, name

    def apply(self, ns: str, replicas: int, name: str = "web"):
        return self.server.kubectl("apply", "-n", ns, "-f", "-", check=False,
                                   input=json.dumps(_deployment(name, replicas)))

    def wait_for(self, check, timeout: float = 10.0):
        """The policy takes effect as soon as the server's watch sees it (well within a
        second); poll a bounded number of times."""
        deadline = time.monotonic() + timeout
        while True:
            result = check()
            if result is not None or time.monotonic() > deadline:
                return result
            time.sleep(0.1)

    def test_deny_with_param(self) -> None:
        """Too many replicas: kubectl apply fails with the messageExpression's text in
        upstream's wording; within the limit it is created, and an update above it is
        refused too."""
        ns, name = self.setup_policy("Deny")
        result = self.wait_for(lambda: (lambda r: r if r.returncode else None)(
            self.apply(ns, 5, "probe")))
        self.assertIsNotNone(result, "the policy never took effect")
        self.assertEqual(result.returncode, 1)
        self.assertIn(
            f"ValidatingAdmissionPolicy '{name}' with binding '{name}' denied request: "
            "replicas must be at most 3, got 5", result.stderr)
        self.assertIn('The deployments "probe" is invalid', result.stderr)
        self.assertEqual(self.apply(ns, 2).returncode, 0)
        result = self.apply(ns, 4)
        self.assertEqual(result.returncode, 1)
        self.assertIn("replicas must be at most 3, got 4", result.stderr)
        self.assertEqual(self.get_json(ns, "deployment", "web")["spec"]["replicas"], 2)

    def test_warn(self) -> None:
        """A Warn binding admits and kubectl prints upstream's warning."""
        ns, name = self.setup_policy("Warn")
        result = self.wait_for(lambda: (lambda r: r if "Warning:" in r.stderr else None)(
            self.apply(ns, 5, f"probe-{int(time.monotonic() * 1000)}")))
        self.assertIsNotNone(result, "the policy never took effect")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(
            f"Warning: Validation failed for ValidatingAdmissionPolicy '{name}' with binding "
            f"'{name}': replicas must be at most 3, got 5", result.stderr)


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
