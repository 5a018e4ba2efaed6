# -*- test-case-name: tests.admission.test_policy -*-
"""
Tests for L{kubetwist.admission.plugins.policy}: the C{ValidatingAdmissionPolicy} plugin
through the whole server (matching, params, variables, actions, failure policy, messages,
cost limits), and its compiler and matcher directly.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.admission.interfaces import Attributes, GroupVersionKind, GroupVersionResource
from kubetwist.admission.plugins.policy import compiler, matching
from kubetwist.admission.plugins.policy.validator import PolicyValidator
from tests.support import KubeTestCase

ARG = "/apis/admissionregistration.k8s.io/v1"


def _policy(name: str, validations: list, **spec: Any) -> dict:
    body = {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": [{
            "apiGroups": ["apps"], "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
        "validations": validations,
    }
    body.update(spec)
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name}, "spec": body}


def _binding(name: str, policy: str, actions: tuple = ("Deny",), **spec: Any) -> dict:
    body = {"policyName": policy, "validationActions": list(actions)}
    body.update(spec)
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name},
            "spec": body}


def _deployment(name: str, replicas: int, labels: Optional[dict] = None) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels or {"app": "web"}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    }


class PolicyServerTests(KubeTestCase):
    """The plugin in the real server chain (default plugins)."""

    def install(self, policy: dict, *bindings: dict) -> None:
        code, body, _ = self.request("POST", f"{ARG}/validatingadmissionpolicies", policy)
        self.assertEqual(code, 201, body)
        for b in bindings:
            code, body, _ = self.request("POST", f"{ARG}/validatingadmissionpolicybindings", b)
            self.assertEqual(code, 201, body)

    def create(self, obj: dict, ns: str = "default") -> tuple[int, Any, Any]:
        return self.request("POST", f"/apis/apps/v1/namespaces/{ns}/deployments", obj)

    def test_deny_message_expression(self) -> None:
        """A failed validation refuses with 422 Invalid, upstream's message (the
        messageExpression's text) and the message as the one cause."""
        self.install(_policy("p", [{
            "expression": "object.spec.replicas <= 2",
            "messageExpression": "'too many: ' + string(object.spec.replicas)"}]),
            _binding("b", "p"))
        code, body, _ = self.create(_deployment("web", 3))
        text = ("ValidatingAdmissionPolicy 'p' with binding 'b' denied request: too many: 3")
        self.assertEqual((code, body["reason"], body["message"]),
                         (422, "Invalid", f'deployments.apps "web" is forbidden: {text}'))
        self.assertEqual(body["details"], {"name": "web", "group": "apps",
                                           "kind": "deployments", "causes": [{"message": text}]})
        code, _, _ = self.create(_deployment("small", 2))
        self.assertEqual(code, 201)
