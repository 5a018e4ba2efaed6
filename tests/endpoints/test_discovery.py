# -*- test-case-name: tests.endpoints.test_discovery -*-
"""
Tests for L{kubetwist.endpoints.discovery}: the legacy discovery documents and the aggregated
C{apidiscovery.k8s.io/v2} list, as upstream C{endpoints/discovery} builds them.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.endpoints import discovery
from kubetwist.registry.rest import ResourceSpec

PODS = discovery.DiscoveredResource(
    ResourceSpec("", "v1", "pods", "Pod", "pod", short_names=["po"], categories=["all"]),
    ["list", "create", "get"], {"status": ["update", "get", "patch"], "eviction": ["create"]})
DEPLOYMENTS = discovery.DiscoveredResource(
    ResourceSpec("apps", "v1", "deployments", "Deployment", "deployment"),
    ["get"], {"scale": ["get", "patch", "update"]})
STATUSES = discovery.DiscoveredResource(
    ResourceSpec("", "v1", "componentstatuses", "ComponentStatus", "componentstatus",
                 namespaced=False),
    ["get", "list"], storage_version=discovery.NO_STORAGE_VERSION)


class StorageVersionHashTests(SynchronousTestCase):
    def test_known_hashes(self) -> None:
        """The hashes kube-apiserver v1.32 publishes for pods, configmaps and deployments."""
        self.assertEqual([discovery.storage_version_hash("", "v1", "Pod"),
                          discovery.storage_version_hash("", "v1", "ConfigMap"),
                          discovery.storage_version_hash("apps", "v1", "Deployment")],
                         ["xPOwRZ+Yhw8=", "qFsyl6wFWjQ=", "8aSe+NMegvE="])


class LegacyTests(SynchronousTestCase):
    """C{APIResourceList}, C{APIGroup}, C{APIGroupList}, C{APIVersions}."""

    def test_resource_list(self) -> None:
        """Resources and subresources sorted by name, verbs sorted, subresource kinds as
        upstream's storage names them; C{/api/v1} has no apiVersion."""
        doc = discovery.api_resource_list("v1", [PODS, STATUSES], legacy=True)
        self.assertEqual((doc["kind"], doc["groupVersion"]), ("APIResourceList", "v1"))
        self.assertNotIn("apiVersion", doc)
        self.assertEqual([r["name"] for r in doc["resources"]],
                         ["componentstatuses", "pods", "pods/eviction", "pods/status"])
        pods = doc["resources"][1]
        self.assertEqual(pods, {"name": "pods", "singularName": "pod", "namespaced": True,
                                "kind": "Pod", "verbs": ["create", "get", "list"],
                                "shortNames": ["po"], "categories": ["all"],
                                "storageVersionHash": "xPOwRZ+Yhw8="})
        self.assertEqual(doc["resources"][2], {
            "name": "pods/eviction", "singularName": "", "namespaced": True,
            "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]})
        self.assertEqual(doc["resources"][3]["kind"], "Pod")
        self.assertNotIn("storageVersionHash", doc["resources"][0])

    def test_group_resource_list(self) -> None:
        doc = discovery.api_resource_list("apps/v1", [DEPLOYMENTS])
        self.assertEqual(doc["apiVersion"], "v1")
        self.assertEqual(doc["resources"][1]["kind"], "Scale")
        self.assertEqual(doc["resources"][1]["group"], "autoscaling")

    def test_group_and_list(self) -> None:
        """The first version is preferred; groups in kube-aggregator's priority order."""
        group = discovery.api_group("autoscaling", ["v2", "v1"])
        self.assertEqual(group["preferredVersion"],
                         {"groupVersion": "autoscaling/v2", "version": "v2"})
        listed = discovery.api_group_list({"zeta.example.com": ["v1"], "batch": ["v1"],
                                           "apps": ["v1"], "alpha.example.com": ["v1"]})
        self.assertEqual([g["name"] for g in listed["groups"]],
                         ["apps", "batch", "alpha.example.com", "zeta.example.com"])
        self.assertEqual(set(listed["groups"][0]), {"name", "versions", "preferredVersion"})

    def test_api_versions(self) -> None:
        doc = discovery.api_versions("10.0.0.1:6443")
        self.assertEqual(doc, {"kind": "APIVersions", "versions": ["v1"],
                               "serverAddressByClientCIDRs": [
                                   {"clientCIDR": "0.0.0.0/0",
                                    "serverAddress": "10.0.0.1:6443"}]})


class AggregatedTests(SynchronousTestCase):
    """C{APIGroupDiscoveryList}."""

    def test_document(self) -> None:
        doc = discovery.aggregated_discovery({"apps": {"v1": [DEPLOYMENTS]},
                                              "": {"v1": [STATUSES, PODS]}})
        self.assertEqual((doc["kind"], doc["apiVersion"]),
                         ("APIGroupDiscoveryList", "apidiscovery.k8s.io/v2"))
        self.assertEqual([i["metadata"] for i in doc["items"]],
                         [{"creationTimestamp": None},
                          {"name": "apps", "creationTimestamp": None}])
        core = doc["items"][0]["versions"][0]
        self.assertEqual((core["version"], core["freshness"]), ("v1", "Current"))
        self.assertEqual([r["resource"] for r in core["resources"]],
                         ["componentstatuses", "pods"])
        pods = core["resources"][1]
        self.assertEqual((pods["scope"], pods["responseKind"], pods["singularResource"]),
                         ("Namespaced", {"group": "", "version": "", "kind": "Pod"}, "pod"))
        self.assertEqual(pods["subresources"], [
            {"subresource": "eviction",
             "responseKind": {"group": "policy", "version": "v1", "kind": "Eviction"},
             "verbs": ["create"]},
            {"subresource": "status", "responseKind": {"group": "", "version": "", "kind": "Pod"},
             "verbs": ["get", "patch", "update"]}])
        self.assertEqual(core["resources"][0]["scope"], "Cluster")

    def test_subresource_kind(self) -> None:
        """Proxy kinds depend on the parent; others on the subresource; else the parent's."""
        self.assertEqual(discovery.subresource_kind("nodes", "proxy", "Node"),
                         ("", "", "NodeProxyOptions"))
        self.assertEqual(discovery.subresource_kind("deployments", "status", "Deployment"),
                         ("", "", "Deployment"))
