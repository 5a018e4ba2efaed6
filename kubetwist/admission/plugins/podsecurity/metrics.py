# -*- test-case-name: tests.admission.test_podsecurity -*-
"""
The PodSecurity plugin's metrics: upstream C{k8s.io/pod-security-admission/metrics}
(C{PrometheusRecorder}) of v1.32, as a C{prometheus_client} collector (C{collect()}) that the
composition root registers in the server's C{/metrics} registry:

 - C{pod_security_evaluations_total} (C{decision mode policy_level policy_version
   request_operation resource subresource}),
 - C{pod_security_exemptions_total} (C{request_operation resource subresource}),
 - C{pod_security_errors_total} (C{fatal request_operation resource subresource}).

C{resource} is C{pod}, C{namespace} or C{controller}; C{policy_version} is C{latest} for
C{latest} and for the privileged level, C{v1.N} up to the server's version (v1.32), C{future}
beyond it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterator

from prometheus_client.core import CounterMetricFamily

from kubetwist.admission.plugins.podsecurity.api import LEVEL_PRIVILEGED, LevelVersion, v1

__all__ = ["PodSecurityMetrics", "DECISION_ALLOW", "DECISION_DENY", "MODE_ENFORCE",
           "MODE_AUDIT", "MODE_WARN"]

DECISION_ALLOW = "allow"
DECISION_DENY = "deny"
MODE_ENFORCE = "enforce"
MODE_AUDIT = "audit"
MODE_WARN = "warn"

#: The server's version, for C{policy_version} (upstream C{api.GetAPIVersion()}).
API_VERSION = v1(32)

# upstream's help texts carry component-base's stability prefix
_EVALUATIONS = ("pod_security_evaluations",
                "[ALPHA] Number of policy evaluations that occurred, not counting ignored or "
                "exempt requests.",
                # sorted, as Go's client prints them
                ("decision", "mode", "policy_level", "policy_version", "request_operation",
                 "resource", "subresource"))
_EXEMPTIONS = ("pod_security_exemptions",
               "[ALPHA] Number of exempt requests, not counting ignored or out of scope requests.",
               ("request_operation", "resource", "subresource"))
_ERRORS = ("pod_security_errors",
           "[ALPHA] Number of errors preventing normal evaluation. Non-fatal errors may "
           "result in the latest restricted profile being used for evaluation.",
           ("fatal", "request_operation", "resource", "subresource"))


def _request_labels(a: Any) -> tuple[str, str, str]:
    """C{request_operation}, C{resource}, C{subresource} of admission attributes."""
    group, resource = a.resource.group, a.resource.resource
    if (group, resource) == ("", "pods"):
        label = "pod"
    elif (group, resource) == ("", "namespaces"):
        label = "namespace"
    else:
        label = "controller"
    return a.operation.lower(), label, a.subresource or ""


class PodSecurityMetrics:
    """
    Upstream C{PrometheusRecorder}: counts by label values, exposed by L{collect}.

    @ivar evaluations: C{Counter} of C{_EVALUATIONS} label tuples.
    @ivar exemptions: C{Counter} of C{_EXEMPTIONS} label tuples.
    @ivar errors: C{Counter} of C{_ERRORS} label tuples.
    """

    def __init__(self) -> None:
        self.evaluations: Counter = Counter()
        self.exemptions: Counter = Counter()
        self.errors: Counter = Counter()
        # upstream's populateCache: these series exist (at 0) from the start
        for operation in ("create", "update"):
            self.evaluations[("allow", MODE_ENFORCE, LEVEL_PRIVILEGED, "latest", operation,
                              "pod", "")] += 0
            for resource in ("pod", "controller"):
                self.exemptions[(operation, resource, "")] += 0

    def record_evaluation(self, decision: str, policy: LevelVersion, mode: str, a: Any) -> None:
        """One level evaluated in one mode (C{enforce}, C{audit}, C{warn})."""
        if policy.version.latest or policy.level == LEVEL_PRIVILEGED:
            version = "latest"
        elif not API_VERSION.older(policy.version):
            version = str(policy.version)
        else:
            version = "future"
        self.evaluations[(decision, mode, policy.level, version) + _request_labels(a)] += 1

    def record_exemption(self, a: Any) -> None:
        """An exempt request (namespace, user or runtime class)."""
        self.exemptions[_request_labels(a)] += 1

    def record_error(self, fatal: bool, a: Any) -> None:
        """An error: fatal (the namespace could not be read) or not (bad labels)."""
        self.errors[("true" if fatal else "false",) + _request_labels(a)] += 1

    def collect(self) -> Iterator[CounterMetricFamily]:
        """The counters that have series (Go's registry leaves out a vector without any),
        for a C{prometheus_client} registry."""
        for (name, help_text, labels), counts in ((_EVALUATIONS, self.evaluations),
                                                  (_EXEMPTIONS, self.exemptions),
                                                  (_ERRORS, self.errors)):
            if not counts:
                continue
            family = CounterMetricFamily(name, help_text, labels=labels)
            for values, count in sorted(counts.items()):
                family.add_metric(list(values), count)
            yield family
