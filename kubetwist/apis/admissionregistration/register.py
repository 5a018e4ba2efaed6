# -*- test-case-name: tests.apis.test_admissionregistration -*-
"""
The admissionregistration.k8s.io/v1 resource table: upstream
C{pkg/registry/admissionregistration/rest/storage_apiserver.go} (the GA resources of v1.32:
webhook configurations, ValidatingAdmissionPolicies with C{status}, and their bindings; all in
the C{api-extensions} category, stored under C{/registry/<resource>}).
"""

from __future__ import annotations

from kubetwist.apis.admissionregistration.strategies import (
    BINDING_STRATEGY,
    MUTATING_WEBHOOK_STRATEGY,
    POLICY_STATUS_STRATEGY,
    POLICY_STRATEGY,
    VALIDATING_WEBHOOK_STRATEGY,
)
from kubetwist.registry.rest import ResourceSpec, Strategy

__all__ = ["GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = "admissionregistration.k8s.io"
VERSION = "v1"

_CATEGORIES = ["api-extensions"]

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "mutatingwebhookconfigurations", "MutatingWebhookConfiguration",
                 "mutatingwebhookconfiguration", namespaced=False,
                 categories=_CATEGORIES),
    ResourceSpec(GROUP, VERSION, "validatingadmissionpolicies", "ValidatingAdmissionPolicy",
                 "validatingadmissionpolicy", namespaced=False, categories=_CATEGORIES,
                 subresources=["status"]),
    ResourceSpec(GROUP, VERSION, "validatingadmissionpolicybindings",
                 "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybinding",
                 namespaced=False, categories=_CATEGORIES),
    ResourceSpec(GROUP, VERSION, "validatingwebhookconfigurations",
                 "ValidatingWebhookConfiguration", "validatingwebhookconfiguration",
                 namespaced=False, categories=_CATEGORIES),
]

STRATEGIES: dict[str, Strategy] = {
    "mutatingwebhookconfigurations": MUTATING_WEBHOOK_STRATEGY,
    "validatingadmissionpolicies": POLICY_STRATEGY,
    "validatingadmissionpolicies/status": POLICY_STATUS_STRATEGY,
    "validatingadmissionpolicybindings": BINDING_STRATEGY,
    "validatingwebhookconfigurations": VALIDATING_WEBHOOK_STRATEGY,
}
