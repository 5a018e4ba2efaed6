# -*- test-case-name: tests.admission.test_metrics -*-
"""
Admission metrics: upstream C{k8s.io/apiserver/pkg/admission/metrics} (C{metrics.go}:
C{WithStepMetrics}, C{WithControllerMetrics}).

Two histograms, on the server's C{/metrics} registry:

  - C{apiserver_admission_step_admission_duration_seconds} (labels C{type} C{admit} or
    C{validate}, C{operation}, C{rejected} C{true}/C{false}): one observation per phase of a
    request that runs the chain;
  - C{apiserver_admission_controller_admission_duration_seconds} (labels C{name}, C{type},
    C{operation}, C{rejected}): one per plugin called.

Upstream's C{..._step_admission_duration_seconds_summary} (a Summary with quantiles, which
C{prometheus_client} cannot expose) is left out.  The webhook metrics belong to the webhook
plugin.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import Histogram

__all__ = ["AdmissionMetrics", "BUCKETS"]

#: Upstream's buckets of both histograms (seconds).
BUCKETS = (0.005, 0.025, 0.1, 0.5, 1.0, 2.5)


class AdmissionMetrics:
    """
    The admission histograms, registered on C{registry} (a C{prometheus_client}
    C{CollectorRegistry}, the server's L{APIServerMetrics.registry
    <kubetwist.server.metrics.APIServerMetrics>}).
    """

    def __init__(self, registry: Any) -> None:
        self.step = Histogram(
            "apiserver_admission_step_admission_duration_seconds",
            "Admission sub-step latency histogram in seconds, broken out for each operation "
            "and API resource and step type (validate or admit).",
            ("type", "operation", "rejected"), buckets=BUCKETS, registry=registry)
        self.controller = Histogram(
            "apiserver_admission_controller_admission_duration_seconds",
            "Admission controller latency histogram in seconds, identified by name and broken "
            "out for each operation and API resource and type (validate or admit).",
            ("name", "type", "operation", "rejected"), buckets=BUCKETS, registry=registry)
        #: the labelled children, found once (C{labels()} costs more than an observation)
        self._children: dict[tuple, Any] = {}

    def observe_step(self, step_type: str, operation: str, rejected: bool,
                     seconds: float) -> None:
        """One phase of the chain (C{step_type} C{admit} or C{validate})."""
        key = ("", step_type, operation, rejected)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = self.step.labels(
                step_type, operation, "true" if rejected else "false")
        child.observe(seconds)

    def observe_controller(self, name: str, step_type: str, operation: str, rejected: bool,
                           seconds: float) -> None:
        """One plugin's C{admit} or C{validate}."""
        key = (name, step_type, operation, rejected)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = self.controller.labels(
                name, step_type, operation, "true" if rejected else "false")
        child.observe(seconds)
