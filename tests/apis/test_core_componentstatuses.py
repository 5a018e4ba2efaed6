"""Tests for L{kubetwist.apis.core.componentstatuses}: the read-only, deprecated core/v1
ComponentStatuses."""

from __future__ import annotations

from twisted.internet.defer import ensureDeferred
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core.componentstatuses import (
    COMPONENT_STATUS_TABLE,
    ComponentStatusREST,
    default_probes,
)
from kubetwist.apis.core.register import RESOURCES
from kubetwist.registry.generic.store import ListOptions
from kubetwist.registry.rest import verbs_of
from kubetwist.storage.interfaces import SelectionPredicate, UnreachableError
from tests.support import KubeTestCase

CS = "/api/v1/componentstatuses"
WARNING = ['299 - "v1 ComponentStatus is deprecated in v1.19+"']
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
SCHEDULER_DOWN = ('Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: '
                  "connection refused")
CM_DOWN = ('Get "https://127.0.0.1:10257/healthz": dial tcp 127.0.0.1:10257: connect: '
           "connection refused")
SPEC = next(r for r in RESOURCES if r.resource == "componentstatuses")


class BrokenStorage:
    """A storage whose health check fails as an unreachable etcd does."""

    def check_health(self):
        raise UnreachableError(message="error getting data from etcd: context deadline exceeded")


class RESTTests(SynchronousTestCase):
    def test_etcd_failure(self) -> None:
        """A failing storage check makes etcd-0 unhealthy, the error in the condition."""
        rest = ComponentStatusREST(SPEC, default_probes(BrokenStorage()))
        got = self.successResultOf(ensureDeferred(rest.get("", "etcd-0")))
        self.assertEqual(got["conditions"], [{
            "type": "Healthy", "status": "False",
            "error": "error getting data from etcd: context deadline exceeded"}])
        self.assertEqual(COMPONENT_STATUS_TABLE.row(got),
                         ["etcd-0", "Unhealthy", "",
                          "error getting data from etcd: context deadline exceeded"])

    def test_selectors(self) -> None:
        """A list honours the selection predicate (metadata.name field selector)."""
        rest = ComponentStatusREST(SPEC, default_probes(BrokenStorage()))
        pred = SelectionPredicate(lambda o: o["metadata"]["name"] == "scheduler")
        got = self.successResultOf(ensureDeferred(rest.list("", ListOptions(predicate=pred))))
        self.assertEqual([i["metadata"]["name"] for i in got["items"]], ["scheduler"])

    def test_resource_row(self) -> None:
        """cs: cluster-scoped; its storage serves get and list only."""
        rest = ComponentStatusREST(SPEC, default_probes(BrokenStorage()))
        self.assertEqual((SPEC.kind, SPEC.namespaced, SPEC.short_names, verbs_of(rest)),
                         ("ComponentStatus", False, ["cs"], ["get", "list"]))


class HTTPTests(KubeTestCase):
    def test_list(self) -> None:
        """The list answers every component, with the deprecation warning."""
        code, body, response = self.request("GET", CS)
        self.assertEqual(code, 200)
        self.assertEqual(response.headers.getRawHeaders("warning"), WARNING)
        self.assertEqual(body, {
            "kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {},
            "items": [
                {"metadata": {"name": "scheduler", "creationTimestamp": None},
                 "conditions": [{"type": "Healthy", "status": "False",
                                 "message": SCHEDULER_DOWN}]},
                {"metadata": {"name": "controller-manager", "creationTimestamp": None},
                 "conditions": [{"type": "Healthy", "status": "False", "message": CM_DOWN}]},
                {"metadata": {"name": "etcd-0", "creationTimestamp": None},
                 "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]},
            ]})

    def test_table(self) -> None:
        """kubectl get cs: NAME STATUS MESSAGE ERROR."""
        code, body, _ = self.request("GET", CS, headers={"Accept": TABLE})
        self.assertEqual(code, 200)
        self.assertEqual([c["name"] for c in body["columnDefinitions"]],
                         ["Name", "Status", "Message", "Error"])
        self.assertEqual([r["cells"] for r in body["rows"]], [
            ["scheduler", "Unhealthy", SCHEDULER_DOWN, ""],
            ["controller-manager", "Unhealthy", CM_DOWN, ""],
            ["etcd-0", "Healthy", "ok", ""],
        ])

    def test_get(self) -> None:
        """One component by name; an unknown name is upstream's reason-less 500."""
        code, body, response = self.request("GET", CS + "/etcd-0")
        self.assertEqual((code, body["kind"], body["conditions"][0]["message"]),
                         (200, "ComponentStatus", "ok"))
        code, body, response = self.request("GET", CS + "/nope")
        self.assertEqual(code, 500)
        self.assertEqual(body, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                "status": "Failure", "message": "Component not found: nope",
                                "code": 500})
        self.assertEqual(response.headers.getRawHeaders("warning"), WARNING)

    def test_read_only(self) -> None:
        """No watch, no writes; discovery shows get/list and no storageVersionHash."""
        code, body, _ = self.request("GET", CS + "?watch=true")
        self.assertEqual((code, body["reason"], body["message"]),
                         (405, "MethodNotAllowed",
                          'watch is not supported on resources of kind "componentstatuses"'))
        code, _, _ = self.request("DELETE", CS + "/etcd-0")
        self.assertEqual(code, 405)
        code, body, _ = self.request("GET", "/api/v1")
        entry = next(r for r in body["resources"] if r["name"] == "componentstatuses")
        self.assertEqual(entry, {"name": "componentstatuses", "singularName": "componentstatus",
                                 "namespaced": False, "kind": "ComponentStatus",
                                 "verbs": ["get", "list"], "shortNames": ["cs"]})
