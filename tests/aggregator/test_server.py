# -*- test-case-name: tests.aggregator.test_server -*-
"""
Tests for L{kubetwist.aggregator.server}: C{apiregistration.k8s.io/v1} APIServices through the
whole server, and the autoregister controller's local APIServices, compared with what
kube-apiserver v1.32 answers for the same requests.
"""

from __future__ import annotations

from tests.support import KubeTestCase

BASE = "/apis/apiregistration.k8s.io/v1/apiservices"


def apiservice(name: str, group: str, version: str, **spec) -> dict:
    body = {"group": group, "version": version, "groupPriorityMinimum": 100,
            "versionPriority": 10}
    body.update(spec)
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": name}, "spec": body}


class AutoregisterTests(KubeTestCase):
    def test_local_apiservices(self) -> None:
        """Every built-in group-version has a local APIService, labelled automanaged onstart,
        with kube-aggregator's priorities and an Available condition."""
        code, body, _ = self.request("GET", BASE + "/v1.apps")
        self.assertEqual(code, 200)
        self.assertEqual(body["metadata"]["labels"],
                         {"kube-aggregator.kubernetes.io/automanaged": "onstart"})
        self.assertEqual(body["spec"], {"group": "apps", "version": "v1",
                                        "groupPriorityMinimum": 17800, "versionPriority": 15})
        (condition,) = body["status"]["conditions"]
        self.assertEqual({k: condition[k] for k in ("type", "status", "reason", "message")},
                         {"type": "Available", "status": "True", "reason": "Local",
                          "message": "Local APIServices are always available"})
        code, listed, _ = self.request("GET", BASE)
        names = {i["metadata"]["name"] for i in listed["items"]}
        # kube-apiserver v1.32 registers no APIService for apiregistration.k8s.io itself
        self.assertTrue({"v1.", "v1.apps", "v1.apiextensions.k8s.io"} <= names, names)
        self.assertNotIn("v1.apiregistration.k8s.io", names)

    def test_table(self) -> None:
        """kubectl's table: Name, Service (Local), Available, Age."""
        code, table, _ = self.request(
            "GET", BASE + "/v1.apps",
            headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        self.assertEqual(code, 200)
        self.assertEqual([c["name"] for c in table["columnDefinitions"]],
                         ["Name", "Service", "Available", "Age"])
        self.assertEqual(table["rows"][0]["cells"][:3], ["v1.apps", "Local", "True"])


class APIServiceTests(KubeTestCase):
    def test_name_must_match(self) -> None:
        """The name must be version.group (upstream's message)."""
        code, body, _ = self.request(
            "POST", BASE, apiservice("v1.wrong.example.com", "example.com", "v1"))
        self.assertEqual((code, body["message"]), (
            422, 'APIService.apiregistration.k8s.io "v1.wrong.example.com" is invalid: '
                 'metadata.name: Invalid value: "v1.wrong.example.com": must be '
                 '`spec.version+"."+spec.group`: "v1.example.com"'))

    def test_service_port_default(self) -> None:
        """A service reference defaults its port to 443; status starts empty."""
        obj = apiservice("v1.example.com", "example.com", "v1",
                         service={"namespace": "ns", "name": "s"}, insecureSkipTLSVerify=True)
        code, body, _ = self.request("POST", BASE + "?dryRun=All", obj)
        self.assertEqual(code, 201)
        self.assertEqual(body["spec"]["service"], {"namespace": "ns", "name": "s", "port": 443})
        self.assertEqual(body["status"], {})

    def test_status_kept_on_update(self) -> None:
        """The main resource does not change status; the status subresource does not change
        spec."""
        code, created, _ = self.request("POST", BASE, apiservice("v1.example.com",
                                                                 "example.com", "v1"))
        self.assertEqual(code, 201)
        created["status"] = {"conditions": [{"type": "Available", "status": "False",
                                             "reason": "Test", "message": "m",
                                             "lastTransitionTime": "2023-11-14T22:13:20Z"}]}
        created["spec"]["versionPriority"] = 20
        code, updated, _ = self.request("PUT", BASE + "/v1.example.com", created)
        self.assertEqual((code, updated["status"], updated["spec"]["versionPriority"]),
                         (200, {}, 20))
        updated["status"] = created["status"]
        updated["spec"]["versionPriority"] = 30
        code, status, _ = self.request("PUT", BASE + "/v1.example.com/status", updated)
        self.assertEqual(code, 200)
        self.assertEqual(status["status"]["conditions"][0]["reason"], "Test")
        self.assertEqual(status["spec"]["versionPriority"], 20)
