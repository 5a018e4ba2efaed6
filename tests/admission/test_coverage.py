# -*- test-case-name: tests.admission.test_coverage -*-
"""
The admission chain sees every write through the assembled server, as upstream's handlers
pass them: create, update, delete and CONNECT, subresources (status, scale, binding, eviction,
serviceaccounts/token, exec, attach, portforward, proxy), custom resources, with the request's
kind, dry run and options.
"""

from __future__ import annotations

from typing import Any

from kubetwist.admission.interfaces import Attributes
from kubetwist.runtime import errors
from tests.apiextensions.test_customresources import CRD, CRDTestCase, widget

NS = "/api/v1/namespaces/default"


class Spy:
    """A mutating and validating plugin that records each call; refuses CONNECT to
    C{refused}."""

    name = "Spy"

    def __init__(self) -> None:
        self.seen: list[tuple] = []
        self.refuse_connect = False

    def handles(self, operation: str) -> bool:
        return True

    def _record(self, phase: str, a: Attributes) -> None:
        self.seen.append((phase, a.operation, a.resource.group, a.resource.resource,
                          a.subresource, tuple(a.kind), a.name, a.dry_run))

    async def admit(self, a: Attributes) -> None:
        self._record("admit", a)
        if a.operation == "CONNECT":
            self.connect_object = a.object
            self.connect_options = a.options

    async def validate(self, a: Attributes) -> None:
        self._record("validate", a)
        if a.operation == "CONNECT" and self.refuse_connect:
            raise errors.new_forbidden(a.resource.group, a.resource.resource, a.name,
                                       "no connect")


def pod(name: str = "p", node: str = "") -> dict:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


class CoverageTests(CRDTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.spy = Spy()
        self.kube.admission.plugins.append(self.spy)

    def phases(self, resource: str, subresource: str = "") -> list[tuple]:
        return [s for s in self.spy.seen if s[3] == resource and s[4] == subresource]

    def test_pod_lifecycle(self) -> None:
        """create, update, status update, delete (with dry run passed on)."""
        self.assertEqual(self.request("POST", f"{NS}/pods", pod())[0], 201)
        self.assertEqual(self.request("POST", f"{NS}/pods?dryRun=All", pod("dry"))[0], 201)
        code, body, _ = self.request("GET", f"{NS}/pods/p")
        body["metadata"].setdefault("labels", {})["a"] = "b"
        self.assertEqual(self.request("PUT", f"{NS}/pods/p", body)[0], 200)
        code, body, _ = self.request("GET", f"{NS}/pods/p")
        body["status"] = {"phase": "Running"}
        self.assertEqual(self.request("PUT", f"{NS}/pods/p/status", body)[0], 200)
        self.assertEqual(self.request("DELETE", f"{NS}/pods/p?dryRun=All")[0], 200)
        pod_kind = ("", "v1", "Pod")
        self.assertEqual(self.phases("pods"), [
            ("admit", "CREATE", "", "pods", "", pod_kind, "p", False),
            ("validate", "CREATE", "", "pods", "", pod_kind, "p", False),
            ("admit", "CREATE", "", "pods", "", pod_kind, "dry", True),
            ("validate", "CREATE", "", "pods", "", pod_kind, "dry", True),
            ("admit", "UPDATE", "", "pods", "", pod_kind, "p", False),
            ("validate", "UPDATE", "", "pods", "", pod_kind, "p", False),
            ("admit", "DELETE", "", "pods", "", pod_kind, "p", True),
            ("validate", "DELETE", "", "pods", "", pod_kind, "p", True),
        ])
        self.assertEqual(self.phases("pods", "status"), [
            ("admit", "UPDATE", "", "pods", "status", pod_kind, "p", False),
            ("validate", "UPDATE", "", "pods", "status", pod_kind, "p", False)])

    def test_binding_and_eviction(self) -> None:
        self.assertEqual(self.request("POST", f"{NS}/pods", pod())[0], 201)
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
                   "target": {"kind": "Node", "name": "n1"}}
        self.assertEqual(self.request("POST", f"{NS}/pods/p/binding", binding)[0], 201)
        self.assertEqual(self.phases("pods", "binding"), [
            ("admit", "CREATE", "", "pods", "binding", ("", "v1", "Binding"), "p", False),
            ("validate", "CREATE", "", "pods", "binding", ("", "v1", "Binding"), "p", False)])
        eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}}
        code, body, _ = self.request("POST", f"{NS}/pods/p/eviction", eviction)
        self.assertEqual(code, 201, body)
        kind = ("policy", "v1", "Eviction")
        self.assertEqual(self.phases("pods", "eviction"), [
            ("admit", "CREATE", "", "pods", "eviction", kind, "p", False),
            ("validate", "CREATE", "", "pods", "eviction", kind, "p", False)])

    def test_token(self) -> None:
        """serviceaccounts/token: both phases on the TokenRequest; a refusal issues none."""
        req = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "spec": {"audiences": ["x"]}}
        code, body, _ = self.request("POST", f"{NS}/serviceaccounts/default/token", req)
        self.assertEqual(code, 201, body)
        kind = ("authentication.k8s.io", "v1", "TokenRequest")
        self.assertEqual(self.phases("serviceaccounts", "token"), [
            ("admit", "CREATE", "", "serviceaccounts", "token", kind, "default", False),
            ("validate", "CREATE", "", "serviceaccounts", "token", kind, "default", False)])

        class Deny:
            def handles(self, operation):
                return True

            def validate(self, a):
                if a.subresource == "token":
                    raise errors.new_forbidden("", "serviceaccounts", a.name, "no tokens")

        self.kube.admission.plugins.append(Deny())
        code, body, _ = self.request("POST", f"{NS}/serviceaccounts/default/token", req)
        self.assertEqual((code, body["message"]),
                         (403, 'serviceaccounts "default" is forbidden: no tokens'))
        self.assertEqual(body["reason"], "Forbidden")

    def test_scale(self) -> None:
        dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                        "template": {"metadata": {"labels": {"a": "b"}},
                                     "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
        path = "/apis/apps/v1/namespaces/default/deployments"
        self.assertEqual(self.request("POST", path, dep)[0], 201)
        code, scale, _ = self.request("GET", f"{path}/d/scale")
        scale["spec"]["replicas"] = 3
        code, body, _ = self.request("PUT", f"{path}/d/scale", scale)
        self.assertEqual(code, 200, body)
        self.assertIn(("validate", "UPDATE", "apps", "deployments", "scale",
                       ("autoscaling", "v1", "Scale"), "d", False), self.spy.seen)

    def test_connect(self) -> None:
        """exec, attach, portforward and proxy run both phases with operation CONNECT and the
        options object, before the connection is looked at; a refusal is the answer."""
        self.assertEqual(self.request("POST", f"{NS}/pods", pod())[0], 201)
        code, _, _ = self.request(
            "POST", f"{NS}/pods/p/exec?command=ls&command=-l&stdout=true&container=c")
        self.assertEqual(code, 400)  # no node: the connecter's own answer, after admission
        self.assertEqual(self.phases("pods", "exec"), [
            ("admit", "CONNECT", "", "pods", "exec", ("", "v1", "PodExecOptions"), "p", False),
            ("validate", "CONNECT", "", "pods", "exec", ("", "v1", "PodExecOptions"), "p",
             False)])
        self.assertEqual(self.spy.connect_object, {
            "kind": "PodExecOptions", "apiVersion": "v1", "stdout": True, "container": "c",
            "command": ["ls", "-l"]})
        self.assertIsNone(self.spy.connect_options)
        self.request("GET", f"{NS}/pods/p/attach?stdin=true")
        self.assertEqual(self.spy.connect_object,
                         {"kind": "PodAttachOptions", "apiVersion": "v1", "stdin": True})
        self.request("POST", f"{NS}/pods/p/portforward?ports=80")
        self.assertEqual(self.spy.connect_object,
                         {"kind": "PodPortForwardOptions", "apiVersion": "v1", "ports": [80]})
        self.request("GET", f"{NS}/pods/p:8080/proxy/some/path")
        self.assertEqual(self.spy.connect_object,
                         {"kind": "PodProxyOptions", "apiVersion": "v1", "path": "/some/path"})
        self.request("GET", f"{NS}/services/s/proxy")
        self.assertEqual(self.spy.connect_object,
                         {"kind": "ServiceProxyOptions", "apiVersion": "v1"})
        self.request("GET", "/api/v1/nodes/n/proxy/")
        self.assertEqual(self.spy.connect_object,
                         {"kind": "NodeProxyOptions", "apiVersion": "v1", "path": "/"})
        self.spy.refuse_connect = True
        code, body, _ = self.request("POST", f"{NS}/pods/p/exec?command=ls")
        self.assertEqual((code, body["message"]), (403, 'pods "p" is forbidden: no connect'))

    def test_logs_are_not_connect(self) -> None:
        self.assertEqual(self.request("POST", f"{NS}/pods", pod())[0], 201)
        self.request("GET", f"{NS}/pods/p/log")
        self.assertEqual(self.phases("pods", "log"), [])

    def test_custom_resources(self) -> None:
        self.install(CRD)
        base = "/apis/example.com/v1/namespaces/default/widgets"
        self.assertEqual(self.request("POST", base, widget("w", replicas=1))[0], 201)
        code, body, _ = self.request("GET", f"{base}/w")
        body["status"] = {"replicas": 1}
        self.assertEqual(self.request("PUT", f"{base}/w/status", body)[0], 200)
        self.assertEqual(self.request("DELETE", f"{base}/w")[0], 200)
        kind = ("example.com", "v1", "Widget")
        self.assertEqual(self.phases("widgets"), [
            ("admit", "CREATE", "example.com", "widgets", "", kind, "w", False),
            ("validate", "CREATE", "example.com", "widgets", "", kind, "w", False),
            ("admit", "DELETE", "example.com", "widgets", "", kind, "w", False),
            ("validate", "DELETE", "example.com", "widgets", "", kind, "w", False)])
        self.assertEqual(self.phases("widgets", "status"), [
            ("admit", "UPDATE", "example.com", "widgets", "status", kind, "w", False),
            ("validate", "UPDATE", "example.com", "widgets", "status", kind, "w", False)])
