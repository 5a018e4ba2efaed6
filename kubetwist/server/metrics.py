# -*- test-case-name: tests.server.test_metrics -*-
"""
The API server's Prometheus metrics (upstream C{k8s.io/apiserver/pkg/endpoints/metrics}) and
C{/metrics}, through C{prometheus-client}.

One L{APIServerMetrics} per assembled chain owns its own C{CollectorRegistry} (several chains
live in one test process).  Request metrics carry upstream's names, types, labels and buckets:

 - C{apiserver_request_total} (counter; C{verb dry_run group version resource subresource
   scope component code}),
 - C{apiserver_request_duration_seconds} (histogram, seconds; the same labels but C{code}),
 - C{apiserver_response_sizes} (histogram, bytes; GET and LIST only),
 - C{apiserver_longrunning_requests} (gauge; watches and connections being served),
 - C{apiserver_current_inflight_requests} (gauge; C{request_kind} C{readOnly} / C{mutating},
   read from the in-flight filter at scrape time),

C{apiserver_audit_event_total}, C{apiserver_audit_error_total} and
C{apiserver_audit_requests_rejected_total} from the audit backends' counters, plus the
process, platform and garbage-collector collectors of C{prometheus-client} (upstream
writes Go's C{process_*} and C{go_*}; Python's are C{process_*} and C{python_*}).

Labels follow upstream's C{MonitorRequest}: C{verb} is the installer's action verb
(C{GET LIST WATCH POST PUT PATCH DELETE DELETECOLLECTION CONNECT}, C{APPLY} for a server-side
apply patch), C{scope} is C{resource} (a name, or a create), C{namespace}, C{cluster}, or
empty for a non-resource request, whose path is the C{subresource} label; C{component} is
C{apiserver}; C{dry_run} is the request's C{dryRun} values, sorted and comma-joined.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

from kubetwist.endpoints.request import context_of

#: Upstream's C{apiserver_request_duration_seconds} buckets (seconds).
DURATION_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5,
                    6, 8, 10, 15, 20, 30, 45, 60)
#: Upstream's C{apiserver_response_sizes} buckets: C{ExponentialBuckets(1000, 10, 8)} (bytes).
SIZE_BUCKETS = tuple(1000.0 * 10 ** i for i in range(8))

#: The text exposition format's content type.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_LABELS = ("verb", "dry_run", "group", "version", "resource", "subresource", "scope",
           "component")
_SIZE_LABELS = ("verb", "group", "version", "resource", "subresource", "scope", "component")

_ACTION_VERBS = {"get": "GET", "list": "LIST", "watch": "WATCH", "create": "POST",
                 "update": "PUT", "patch": "PATCH", "delete": "DELETE",
                 "deletecollection": "DELETECOLLECTION"}
_CONNECT_SUBRESOURCES = frozenset({"exec", "attach", "portforward", "proxy"})
_APPLY = "application/apply-patch+yaml"


def request_labels(request: Any) -> dict[str, str]:
    """
    The labels upstream's C{MonitorRequest} gives C{request} (from its L{RequestInfo
    <kubetwist.endpoints.requestinfo.RequestInfo>}), without C{code}: a dict of
    L{_LABELS}.
    """
    info = context_of(request).request_info
    method = request.method.decode("latin-1") if isinstance(request.method, bytes) \
        else str(request.method)
    if info is None or not info.is_resource_request:
        path = getattr(info, "path", "") if info is not None else ""
        return {"verb": method, "dry_run": "", "group": "", "version": "", "resource": "",
                "subresource": path, "scope": "", "component": "apiserver"}
    verb = _ACTION_VERBS.get(info.verb, method)
    if info.subresource in _CONNECT_SUBRESOURCES and info.resource in ("pods", "nodes",
                                                                       "services"):
        verb = "CONNECT"
    if verb == "PATCH":
        ctype = (request.getHeader(b"content-type") or b"").decode("latin-1")
        if ctype.split(";")[0].strip() == _APPLY:
            verb = "APPLY"
    if info.name or info.verb == "create":
        scope = "resource"
    elif info.namespace:
        scope = "namespace"
    else:
        scope = "cluster"
    dry_run = ",".join(sorted(set(info.query.get("dryRun", []))))
    return {"verb": verb, "dry_run": dry_run, "group": info.api_group,
            "version": info.api_version, "resource": info.resource,
            "subresource": info.subresource, "scope": scope, "component": "apiserver"}


class _InflightCollector:
    """C{apiserver_current_inflight_requests}, read from the in-flight counters at scrape."""

    def __init__(self, counts: Callable[[], tuple[int, int]]) -> None:
        self.counts = counts

    def collect(self) -> Iterable[Any]:
        readonly, mutating = self.counts()
        family = GaugeMetricFamily(
            "apiserver_current_inflight_requests",
            "Maximal number of currently used inflight request limit of this apiserver per "
            "request kind in last second.", labels=["request_kind"])
        family.add_metric(["readOnly"], readonly)
        family.add_metric(["mutating"], mutating)
        yield family


class _FlowControlCollector:
    """
    Upstream's API Priority and Fairness metrics (C{pkg/util/flowcontrol/metrics}), read at
    scrape time from the filter's counters and the controller's priority levels:
    C{apiserver_flowcontrol_dispatched_requests_total}, C{_rejected_requests_total}
    (C{flow_schema priority_level [reason]}), C{_current_executing_requests},
    C{_current_inqueue_requests} and C{_nominal_limit_seats}, C{_current_limit_seats}
    (C{priority_level}).
    """

    def __init__(self, apf: Any) -> None:
        self.apf = apf

    def collect(self) -> Iterable[Any]:
        apf = self.apf
        labels = ["flow_schema", "priority_level"]
        dispatched = CounterMetricFamily(
            "apiserver_flowcontrol_dispatched_requests",
            "Number of requests executed by API Priority and Fairness subsystem",
            labels=labels)
        for key, n in sorted(apf.dispatched.items()):
            dispatched.add_metric(list(key), n)
        yield dispatched
        rejected = CounterMetricFamily(
            "apiserver_flowcontrol_rejected_requests",
            "Number of requests rejected by API Priority and Fairness subsystem",
            labels=labels + ["reason"])
        for key, n in sorted(apf.rejected.items()):
            rejected.add_metric(list(key), n)
        yield rejected
        for name, table, text in (
                ("apiserver_flowcontrol_current_executing_requests", apf.executing,
                 "Number of requests in initial (for a WATCH) or any (for a non-WATCH) "
                 "execution stage in the API Priority and Fairness subsystem"),
                ("apiserver_flowcontrol_current_inqueue_requests", apf.inqueue,
                 "Number of requests currently pending in queues of the API Priority and "
                 "Fairness subsystem")):
            family = GaugeMetricFamily(name, text, labels=labels)
            for key, n in sorted(table.items()):
                family.add_metric(list(key), n)
            yield family
        levels = getattr(apf.controller, "priority_levels", {}) or {}
        for name, attr, text in (
                ("apiserver_flowcontrol_nominal_limit_seats", "nominal_cl",
                 "Nominal number of execution seats configured for each priority level"),
                ("apiserver_flowcontrol_current_limit_seats", "concurrency_limit",
                 "current derived number of execution seats available to each priority "
                 "level")):
            family = GaugeMetricFamily(name, text, labels=["priority_level"])
            for level, state in sorted(levels.items()):
                family.add_metric([level], getattr(state, attr, 0))
            yield family


class _AuditCollector:
    """Upstream's audit counters (C{pkg/audit/metrics.go}), read from
    L{kubetwist.audit.backends.METRICS} at scrape time."""

    def collect(self) -> Iterable[Any]:
        from kubetwist.audit.backends import METRICS

        events = CounterMetricFamily(
            "apiserver_audit_event", "Counter of audit events generated and sent to the audit "
            "backend.")
        events.add_metric([], METRICS.event_total)
        yield events
        errs = CounterMetricFamily(
            "apiserver_audit_error", "Counter of audit events that failed to be audited "
            "properly. Plugin identifies the plugin affected by the error.", labels=["plugin"])
        for plugin, n in sorted(METRICS.error_total.items()):
            errs.add_metric([plugin], n)
        yield errs
        rejected = CounterMetricFamily(
            "apiserver_audit_requests_rejected", "Counter of apiserver requests rejected due to "
            "an error in audit logging backend.")
        rejected.add_metric([], METRICS.requests_rejected_total)
        yield rejected


class APIServerMetrics:
    """
    The metrics of one API server process (see the module docstring).

    @ivar registry: the C{prometheus_client.CollectorRegistry} C{/metrics} writes.
    """

    def __init__(self, clock: Any, process_collectors: bool = True) -> None:
        """
        @param clock: C{seconds()} (the reactor) for request durations.
        @param process_collectors: register the process, platform and GC collectors (off in
            unit tests that only count requests).
        """
        self.clock = clock
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "apiserver_request_total",
            "Counter of apiserver requests broken out for each verb, dry run value, group, "
            "version, resource, scope, component, and HTTP response code.",
            _LABELS + ("code",), registry=r)
        self.durations = Histogram(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, dry run value, group, "
            "version, resource, subresource, scope and component.",
            _LABELS, buckets=DURATION_BUCKETS, registry=r)
        self.sizes = Histogram(
            "apiserver_response_sizes",
            "Response size distribution in bytes for each group, version, verb, resource, "
            "subresource, scope and component.",
            _SIZE_LABELS, buckets=SIZE_BUCKETS, registry=r)
        #: C{(code, *label values) -> (requests, durations, sizes or None)} children
        self._children: dict[tuple, tuple] = {}
        self.long_running = Gauge(
            "apiserver_longrunning_requests",
            "Gauge of all active long-running apiserver requests broken out by verb, group, "
            "version, resource, scope and component. Not all requests are tracked this way.",
            _SIZE_LABELS, registry=r)
        r.register(_AuditCollector())
        if process_collectors:
            ProcessCollector(registry=r)
            PlatformCollector(registry=r)
            GCCollector(registry=r)

    def track_inflight(self, counts: Callable[[], tuple[int, int]]) -> None:
        """Report C{apiserver_current_inflight_requests} from C{counts()} ->
        C{(read-only, mutating)} requests in flight."""
        self.registry.register(_InflightCollector(counts))

    def track_flow_control(self, apf: Any) -> None:
        """Report the C{apiserver_flowcontrol_*} metrics of the priority-and-fairness
        filter C{apf} (a L{PriorityAndFairness
        <kubetwist.server.filters.priorityandfairness.PriorityAndFairness>})."""
        self.registry.register(_FlowControlCollector(apf))

    def wrap(self, handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """
        The instrumentation filter (upstream C{InstrumentRouteFunc}): count and time every
        request C{handler} serves once its response finishes (or its connection is lost),
        and keep long-running ones in C{apiserver_longrunning_requests} meanwhile.
        """

        def handle(request: Any) -> Any:
            start = self.clock.seconds()
            labels = request_labels(request)
            size_labels = {k: labels[k] for k in _SIZE_LABELS}
            long_running = context_of(request).long_running
            if long_running:
                self.long_running.labels(**size_labels).inc()

            def done(_: Any) -> None:
                if long_running:
                    self.long_running.labels(**size_labels).dec()
                self.observe(labels, getattr(request, "code", 200),
                             self.clock.seconds() - start,
                             getattr(request, "sentLength", 0) or 0)

            request.notifyFinish().addBoth(done)
            return handler(request)

        return handle

    def observe(self, labels: dict[str, str], code: int, seconds: float, size: int) -> None:
        """Record one finished request: C{labels} from L{request_labels}, the HTTP C{code},
        its duration in C{seconds} and the response body's C{size} in bytes."""
        key = (code, *labels.values())
        children = self._children.get(key)
        if children is None:
            # the labelled children, found once per label set (C{labels()} costs more than
            # the observations; prometheus-client keeps every child anyway)
            children = self._children[key] = (
                self.requests.labels(code=str(code), **labels),
                self.durations.labels(**labels),
                self.sizes.labels(**{k: labels[k] for k in _SIZE_LABELS})
                if labels["verb"] in ("GET", "LIST") else None)
        children[0].inc()
        children[1].observe(max(0.0, seconds))
        if children[2] is not None:
            children[2].observe(size)

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format (L{CONTENT_TYPE}), then the process-wide
        storage and watch metrics (L{kubetwist.storage.metrics.REGISTRY})."""
        from kubetwist.storage.metrics import REGISTRY as PROCESS_REGISTRY

        return generate_latest(self.registry) + generate_latest(PROCESS_REGISTRY)


def install_metrics_route(front: Any, metrics: Optional[APIServerMetrics]) -> None:
    """
    Serve C{GET /metrics} from C{front}'s mux (upstream C{routes.MetricsWithReset}; the
    authorizer sees the non-resource URL C{/metrics}, as upstream).  C{DELETE /metrics}
    (upstream's reset) is answered 405 here: prometheus-client counters cannot be reset.
    """
    from kubetwist.endpoints.responses import funnel, write_body
    from kubetwist.runtime import errors

    if metrics is None:
        return

    async def serve(request: Any) -> None:
        if request.method not in (b"GET", b"HEAD"):
            raise errors.new_method_not_allowed()
        write_body(request, 200, metrics.exposition(), CONTENT_TYPE)

    front.mux["/metrics"] = funnel(serve)
