# -*- test-case-name: tests.admission.test_namespacelifecycle -*-
"""
Tests for L{kubetwist.admission.plugins.namespacelifecycle}, through the whole server:
upstream C{admission/plugin/namespace/lifecycle} refuses content in missing or terminating
namespaces and the deletion of the immortal ones.
"""

from __future__ import annotations

from tests.support import KubeTestCase


def _cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


class NamespaceLifecycleTests(KubeTestCase):
    def test_missing_namespace(self) -> None:
        """A create in a namespace that does not exist is 404 naming the namespace."""
        code, body, _ = self.request("POST", "/api/v1/namespaces/nope/configmaps", _cm("a"))
        self.assertEqual((code, body["reason"], body["message"]),
                         (404, "NotFound", 'namespaces "nope" not found'))
        self.assertEqual(body["details"], {"name": "nope", "kind": "namespaces"})

    def test_missing_namespace_before_validation(self) -> None:
        """The check is in the mutating phase, as upstream's C{Admit}: an invalid object in a
        missing namespace is 404, not 422."""
        code, body, _ = self.request("POST", "/api/v1/namespaces/nope/configmaps",
                                     _cm("Not_A_Valid_Name"))
        self.assertEqual((code, body["reason"]), (404, "NotFound"))

    def test_namespace_created_just_now(self) -> None:
        """A namespace created a moment ago is found (live lookup)."""
        code, _, _ = self.request("POST", "/api/v1/namespaces",
                                  {"apiVersion": "v1", "kind": "Namespace",
                                   "metadata": {"name": "fresh"}})
        self.assertEqual(code, 201)
        code, _, _ = self.request("POST", "/api/v1/namespaces/fresh/configmaps", _cm("a"))
        self.assertEqual(code, 201)

    def test_immortal_namespaces(self) -> None:
        """default, kube-system and kube-public may not be deleted: 403."""
        for name in ("default", "kube-system", "kube-public"):
            code, body, _ = self.request("DELETE", f"/api/v1/namespaces/{name}")
            self.assertEqual((code, body["reason"], body["message"]), (
                403, "Forbidden",
                f'namespaces "{name}" is forbidden: this namespace may not be deleted'))

    def test_terminating_namespace(self) -> None:
        """Content cannot be created in a terminating namespace (403 with upstream's text);
        events still can."""
        self.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "ending"}, "spec": {"finalizers": ["example.com/hold"]}})
        code, _, _ = self.request("DELETE", "/api/v1/namespaces/ending")
        self.assertEqual(code, 200)
        code, body, _ = self.request("POST", "/api/v1/namespaces/ending/configmaps", _cm("a"))
        self.assertEqual((code, body["reason"], body["message"]), (
            403, "Forbidden",
            'configmaps "a" is forbidden: unable to create new content in namespace ending '
            'because it is being terminated'))
        code, _, _ = self.request("POST", "/api/v1/namespaces/ending/events", {
            "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ending"},
            "reason": "R", "type": "Normal", "firstTimestamp": "2023-11-14T22:13:20Z"})
        self.assertEqual(code, 201)
