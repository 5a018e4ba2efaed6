# -*- test-case-name: tests.server.test_metrics -*-
"""
Tests for L{kubetwist.server.metrics}: C{/metrics} counts requests with upstream's metric
names, labels and buckets (C{k8s.io/apiserver/pkg/endpoints/metrics}).
"""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from kubetwist.server import metrics as m
from tests.support import KubeTestCase


def _samples(text: str, name: str) -> dict[tuple, float]:
    """C{{sorted label items: value}} of the samples named C{name}."""
    out: dict[tuple, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                out[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def _names(text: str) -> set[str]:
    return {s.name for f in text_string_to_metric_families(text) for s in f.samples}


def _key(**labels: str) -> tuple:
    base = {"dry_run": "", "group": "", "version": "", "resource": "", "subresource": "",
            "scope": "", "component": "apiserver"}
    base.update(labels)
    return tuple(sorted(base.items()))


class MetricsTests(KubeTestCase):
    def scrape(self) -> str:
        code, body, response = self.request("GET", "/metrics")
        self.assertEqual(code, 200)
        self.assertEqual(response.headers.getRawHeaders("content-type"), [m.CONTENT_TYPE])
        return body if isinstance(body, str) else body.decode()

    def test_request_counts_by_verb_resource_code(self) -> None:
        """Each request is counted once it finishes, with upstream's verb, scope and code."""
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
        base = "/api/v1/namespaces/default/configmaps"
        self.assertEqual(self.request("POST", base, cm)[0], 201)
        self.assertEqual(self.request("POST", base, cm)[0], 409)
        self.assertEqual(self.request("POST", base + "?dryRun=All",
                                      {**cm, "metadata": {"name": "b"}})[0], 201)
        self.assertEqual(self.request("GET", base + "/a")[0], 200)
        self.assertEqual(self.request("GET", base)[0], 200)
        self.assertEqual(self.request("GET", "/api/v1/configmaps")[0], 200)
        self.assertEqual(self.request("PATCH", base + "/a", {"data": {"k": "v"}},
                                      content_type="application/merge-patch+json")[0], 200)
        self.assertEqual(self.request("DELETE", base + "/a")[0], 200)
        self.assertEqual(self.request("GET", "/healthz")[0], 200)
        totals = _samples(self.scrape(), "apiserver_request_total")
        cms = {"version": "v1", "resource": "configmaps"}
        want = {
            _key(verb="POST", scope="resource", code="201", **cms): 1.0,
            _key(verb="POST", scope="resource", code="409", **cms): 1.0,
            _key(verb="POST", scope="resource", code="201", dry_run="All", **cms): 1.0,
            _key(verb="GET", scope="resource", code="200", **cms): 1.0,
            _key(verb="LIST", scope="namespace", code="200", **cms): 1.0,
            _key(verb="LIST", scope="cluster", code="200", **cms): 1.0,
            _key(verb="PATCH", scope="resource", code="200", **cms): 1.0,
            _key(verb="DELETE", scope="resource", code="200", **cms): 1.0,
            _key(verb="GET", subresource="/healthz", code="200"): 1.0,
        }
        self.assertEqual({k: v for k, v in totals.items() if k in want}, want)

    def test_durations_and_sizes(self) -> None:
        """Durations in upstream's buckets; response sizes for reads only."""
        self.request("GET", "/api/v1/namespaces/default")
        text = self.scrape()
        buckets = _samples(text, "apiserver_request_duration_seconds_bucket")
        les = sorted({float(dict(k)["le"]) for k in buckets})
        self.assertEqual(les[:-1], sorted(m.DURATION_BUCKETS))
        sizes = _samples(text, "apiserver_response_sizes_count")
        get_ns = tuple(sorted({"verb": "GET", "group": "", "version": "v1",
                               "resource": "namespaces", "subresource": "",
                               "scope": "resource", "component": "apiserver"}.items()))
        self.assertEqual(sizes.get(get_ns), 1.0)
        size_sum = _samples(text, "apiserver_response_sizes_sum")[get_ns]
        self.assertGreater(size_sum, 100)

    def test_inflight_and_process(self) -> None:
        """The in-flight gauge by request kind, and process metrics, are exposed."""
        text = self.scrape()
        inflight = _samples(text, "apiserver_current_inflight_requests")
        self.assertEqual(set(inflight), {(("request_kind", "readOnly"),),
                                         (("request_kind", "mutating"),)})
        self.assertIn("process_resident_memory_bytes", text)
        self.assertIn("apiserver_audit_event_total", _names(text))

    def test_apply_verb(self) -> None:
        """A server-side apply patch is counted as APPLY."""
        body = ('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s"},'
                '"data":{"a":"b"}}')
        code, _, _ = self.request(
            "PATCH", "/api/v1/namespaces/default/configmaps/s?fieldManager=me", body,
            content_type="application/apply-patch+yaml")
        self.assertEqual(code, 201)
        totals = _samples(self.scrape(), "apiserver_request_total")
        self.assertEqual(totals.get(_key(verb="APPLY", scope="resource", code="201",
                                         version="v1", resource="configmaps")), 1.0)

    def test_only_get(self) -> None:
        """C{/metrics} answers GET; other methods are 405."""
        code, _, _ = self.request("POST", "/metrics", {})
        self.assertEqual(code, 405)


class StorageAndWatchMetricsTests(KubeTestCase):
    """The process-wide storage and watch metrics, and the flow-control metrics."""

    def scrape(self) -> str:
        code, body, _ = self.request("GET", "/metrics")
        self.assertEqual(code, 200)
        return body if isinstance(body, str) else body.decode()

    def value(self, text: str, name: str, **labels: str) -> float:
        return _samples(text, name).get(tuple(sorted(labels.items())), 0.0)

    def test_storage_requests_by_operation_and_type(self) -> None:
        """A create is one storage C{create} of type C{configmaps}; an apps resource is
        typed C{deployments.apps}."""
        before = self.scrape()
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m1"}}
        self.assertEqual(self.request("POST", "/api/v1/namespaces/default/configmaps", cm)[0],
                         201)
        after = self.scrape()
        self.assertEqual(self.value(after, "etcd_requests_total", operation="create",
                                    type="configmaps")
                         - self.value(before, "etcd_requests_total", operation="create",
                                      type="configmaps"), 1.0)
        self.assertGreater(self.value(after, "etcd_request_duration_seconds_count",
                                      operation="create", type="configmaps"), 0)
        from kubetwist.storage.metrics import type_of

        self.assertEqual(type_of("/registry/deployments/default/web"), "deployments.apps")
        self.assertEqual(type_of("/registry/services/specs/default/x"), "services")

    def test_storage_objects(self) -> None:
        """The object counter sets C{apiserver_storage_objects} per resource."""
        from twisted.internet.defer import ensureDeferred

        for n in ("o1", "o2"):
            self.request("POST", "/api/v1/namespaces/default/configmaps",
                         {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n}})
        self.successResultOf(ensureDeferred(self.kube.object_counter.run_once()))
        text = self.scrape()
        got = self.value(text, "apiserver_storage_objects", resource="configmaps")
        # kube-root-ca.crt in each system namespace, plus the two made here
        listed = self.request("GET", "/api/v1/configmaps")[1]["items"]
        self.assertEqual(got, float(len(listed)))

    def test_watch_events(self) -> None:
        """Each watch event written counts in C{apiserver_watch_events_total} and its size
        in C{apiserver_watch_events_sizes}; the watcher is registered while it runs."""
        before = self.scrape()
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w1"}}
        self.request("POST", "/api/v1/namespaces/default/configmaps", cm)
        d = self.treq.request(
            "GET", "https://kubetwist.test/api/v1/namespaces/default/configmaps?watch=1"
                   "&resourceVersion=0&timeoutSeconds=1",
            headers={"Authorization": ["Bearer admin-token"]})
        self.treq.flush()
        labels = {"group": "", "version": "v1", "kind": "ConfigMap"}
        # the gauge is process-wide (other tests' watches may still be registered): a delta
        watching = self.value(before, "apiserver_registered_watchers", **labels)
        self.assertEqual(self.value(self.scrape(), "apiserver_registered_watchers", **labels),
                         watching + 1)
        self.clock.advance(2)
        self.treq.flush()
        self.assertIn(b"w1", self.successResultOf(self.successResultOf(d).content()))
        after = self.scrape()
        self.assertGreaterEqual(
            self.value(after, "apiserver_watch_events_total", **labels)
            - self.value(before, "apiserver_watch_events_total", **labels), 1.0)
        self.assertGreaterEqual(self.value(after, "apiserver_watch_events_sizes_count",
                                           **labels), 1.0)
        self.assertEqual(self.value(after, "apiserver_registered_watchers", **labels),
                         watching)

    def test_flow_control(self) -> None:
        """Requests are counted by flow schema and priority level; levels report seats."""
        self.request("GET", "/api/v1/namespaces")
        text = self.scrape()
        dispatched = _samples(text, "apiserver_flowcontrol_dispatched_requests_total")
        self.assertTrue(dispatched)
        for key in dispatched:
            self.assertEqual([k for k, _ in key], ["flow_schema", "priority_level"])
        nominal = _samples(text, "apiserver_flowcontrol_nominal_limit_seats")
        self.assertIn((("priority_level", "catch-all"),), nominal)
        self.assertIn("apiserver_flowcontrol_current_executing_requests",
                      {f.name for f in text_string_to_metric_families(text)})
