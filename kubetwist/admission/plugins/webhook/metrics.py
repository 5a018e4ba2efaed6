# -*- test-case-name: tests.admission.test_webhook -*-
"""
The admission webhook metrics: upstream C{k8s.io/apiserver/pkg/admission/metrics}
(C{ObserveWebhook}, C{ObserveWebhookRejection}, C{ObserveWebhookFailOpen}), with upstream's
names, labels and buckets:

 - C{apiserver_admission_webhook_admission_duration_seconds} (histogram, seconds; C{name type
   operation rejected}; buckets 5 ms .. 25 s),
 - C{apiserver_admission_webhook_request_total} (counter; C{name type operation code
   rejected}),
 - C{apiserver_admission_webhook_rejection_count} (C{name type operation error_type
   rejection_code}),
 - C{apiserver_admission_webhook_fail_open_count} (C{name type}).

C{type} is C{admit} or C{validating}; codes above 600 are written as 600.  The two
C{..._count} counters keep upstream's exact names, which C{prometheus-client} would suffix
with C{_total} as counters: they are exposed untyped.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.metrics_core import Metric

__all__ = ["WebhookMetrics", "CALLING_WEBHOOK_ERROR", "NO_ERROR", "APISERVER_INTERNAL_ERROR"]

#: Upstream C{WebhookRejectionErrorType} values.
CALLING_WEBHOOK_ERROR = "calling_webhook_error"
NO_ERROR = "no_error"
APISERVER_INTERNAL_ERROR = "apiserver_internal_error"

#: Upstream's webhook latency buckets (seconds).
BUCKETS = (0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25)


class _ExactCounters:
    """A collector of counters written under their exact (upstream) names."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, tuple], float] = {}
        self.helps: dict[str, tuple[str, tuple[str, ...]]] = {}

    def declare(self, name: str, help_text: str, labels: tuple[str, ...]) -> None:
        self.helps[name] = (help_text, labels)

    def inc(self, name: str, *values: str) -> None:
        key = (name, tuple(values))
        self.values[key] = self.values.get(key, 0.0) + 1.0

    def collect(self) -> Iterator[Metric]:
        for name, (help_text, labels) in self.helps.items():
            m = Metric(name, help_text, "unknown")
            for (n, values), v in sorted(self.values.items()):
                if n == name:
                    m.add_sample(name, dict(zip(labels, values, strict=True)), v)
            yield m

    def describe(self) -> list:
        return []


class WebhookMetrics:
    """
    The webhook metrics of one API server.

    @param registry: the C{CollectorRegistry} to register on (the server's, so C{/metrics}
        shows them); a private one when C{None} (L{register_on} adds it to another later).
    """

    def __init__(self, registry: Optional[CollectorRegistry] = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.latencies = Histogram(
            "apiserver_admission_webhook_admission_duration_seconds",
            "Admission webhook latency histogram in seconds, identified by name and broken out "
            "for each operation and API resource and type (validate or admit).",
            ("name", "type", "operation", "rejected"), buckets=BUCKETS, registry=r)
        self.requests = Counter(
            "apiserver_admission_webhook_request_total",
            "Admission webhook request total, identified by name and broken out for each "
            "admission type (validating or admit) and operation. Additional labels specify "
            "whether the request was rejected or not and an HTTP status code. Codes greater "
            "than 600 are truncated to 600, to keep the metrics cardinality bounded.",
            ("name", "type", "operation", "code", "rejected"), registry=r)
        self.exact = _ExactCounters()
        self.exact.declare(
            "apiserver_admission_webhook_rejection_count",
            "Admission webhook rejection count, identified by name and broken out for each "
            "admission type (validating or admit) and operation. Additional labels specify an "
            "error type (calling_webhook_error or apiserver_internal_error if an error "
            "occurred; no_error otherwise) and optionally a non-zero rejection code if the "
            "webhook rejects the request with an HTTP status code (honored by the apiserver "
            "when the code is greater or equal to 400). Codes greater than 600 are truncated "
            "to 600, to keep the metrics cardinality bounded.",
            ("name", "type", "operation", "error_type", "rejection_code"))
        self.exact.declare(
            "apiserver_admission_webhook_fail_open_count",
            "Admission webhook fail open count, identified by name and broken out for each "
            "admission type (validating or admit).", ("name", "type"))
        r.register(self.exact)

    def register_on(self, registry: CollectorRegistry) -> None:
        """Show these metrics in C{registry} too (a private registry is added as a
        collector)."""
        if registry is not self.registry:
            registry.register(_Delegate(self.registry))

    def observe_webhook(self, name: str, seconds: float, rejected: bool, operation: str,
                        step: str, code: int) -> None:
        """Upstream C{ObserveWebhook}: one call of webhook C{name} (C{step} C{admit} or
        C{validating}) that took C{seconds} and ended with HTTP C{code} (0: no answer)."""
        code = min(code, 600)
        flag = "true" if rejected else "false"
        self.requests.labels(name, step, operation, str(code), flag).inc()
        self.latencies.labels(name, step, operation, flag).observe(max(0.0, seconds))

    def observe_rejection(self, name: str, step: str, operation: str, error_type: str,
                          code: int) -> None:
        """Upstream C{ObserveWebhookRejection}."""
        self.exact.inc("apiserver_admission_webhook_rejection_count", name, step, operation,
                       error_type, str(min(code, 600)))

    def observe_fail_open(self, name: str, step: str) -> None:
        """Upstream C{ObserveWebhookFailOpen}."""
        self.exact.inc("apiserver_admission_webhook_fail_open_count", name, step)


class _Delegate:
    """A registry seen as one collector of another registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.inner = registry

    def collect(self) -> Any:
        return self.inner.collect()

    def describe(self) -> list:
        return []
