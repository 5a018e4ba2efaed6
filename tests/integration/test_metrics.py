"""
C{/metrics} of a real C{twistd kubeapi} after a C{kubectl} session (issue 15's acceptance):
the request counts by verb, resource and code are the requests the session made, and a
dashboard's query (C{sum by (verb, code) (apiserver_request_total{resource="configmaps"})})
reads sensible numbers; the storage, watch, admission and flow-control families are there.
"""

from __future__ import annotations

from collections import Counter

from prometheus_client.parser import text_string_to_metric_families
from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units


def _families(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def sum_by(text: str, name: str, by: tuple[str, ...], **match: str) -> Counter:
    """PromQL's C{sum by (<by>) (<name>{<match>})} over one scrape."""
    out: Counter = Counter()
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in match.items()):
                out[tuple(s.labels[k] for k in by)] += s.value
    return out


class MetricsAfterKubectlTests(ServerTestMixin, SynchronousTestCase):
    def scrape(self) -> str:
        return self.server.kubectl("get", "--raw", "/metrics").stdout

    def test_request_counts_match_the_session(self) -> None:
        """Each request of the kubectl commands on configmaps is counted once, by upstream's
        verb (POST, GET, LIST, PATCH, DELETE) and HTTP code (404 for the missing one)."""
        ns = self.namespace()
        before = sum_by(self.scrape(), "apiserver_request_total", ("verb", "code"),
                        resource="configmaps")
        k = self.server.kubectl
        k("-n", ns, "create", "configmap", "m", "--from-literal=a=1")
        k("-n", ns, "get", "configmap", "m", "-o", "name")
        k("-n", ns, "get", "configmaps", "-o", "name")
        k("-n", ns, "label", "configmap", "m", "x=y")
        k("-n", ns, "delete", "configmap", "m", "--wait=false")
        missing = self.server.kubectl("-n", ns, "get", "configmap", "m", check=False)
        self.assertIn("NotFound", missing.stderr)
        after = sum_by(self.scrape(), "apiserver_request_total", ("verb", "code"),
                       resource="configmaps")
        delta = {key: after[key] - before.get(key, 0) for key in after
                 if after[key] != before.get(key, 0)}
        # kubectl label reads the object (GET) before it patches it
        self.assertEqual(delta, {("POST", "201"): 1, ("GET", "200"): 2, ("LIST", "200"): 1,
                                 ("PATCH", "200"): 1, ("DELETE", "200"): 1,
                                 ("GET", "404"): 1})

    def test_families(self) -> None:
        """The metric families dashboards read are all served, with upstream's types."""
        self.server.kubectl("get", "namespaces", "-o", "name")
        families = _families(self.scrape())
        want = {
            "apiserver_request": "counter",
            "apiserver_request_duration_seconds": "histogram",
            "apiserver_response_sizes": "histogram",
            "apiserver_current_inflight_requests": "gauge",
            "etcd_request_duration_seconds": "histogram",
            "apiserver_storage_objects": "gauge",
            "apiserver_admission_step_admission_duration_seconds": "histogram",
            "apiserver_flowcontrol_dispatched_requests": "counter",
            "apiserver_flowcontrol_nominal_limit_seats": "gauge",
            "process_resident_memory_bytes": "gauge",
        }
        self.assertEqual({n: families[n].type for n in want if n in families}, want)
        # counted once a minute from the start, as upstream: every served resource has a value
        objects = sum_by(self.scrape(), "apiserver_storage_objects", ("resource",))
        self.assertIn(("namespaces",), objects)
        self.assertIn(("deployments.apps",), objects)


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
