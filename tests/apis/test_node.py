"""Tests for L{kubetwist.apis.node}: RuntimeClass validation, printing and serving."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.node import register
from tests.support import KubeTestCase

S = register.STRATEGIES["runtimeclasses"]


def messages(errs) -> list[str]:
    return [e.error() for e in errs]


class RuntimeClassTests(SynchronousTestCase):
    def test_handler(self) -> None:
        """The handler must be a DNS label and is immutable."""
        rc = {"metadata": {"name": "r"}, "handler": "Run_C"}
        S.default(rc)
        self.assertEqual(len(S.validate(rc)), 1)
        self.assertTrue(messages(S.validate(rc))[0].startswith(
            'handler: Invalid value: "Run_C": a lowercase RFC 1123 label'))
        old = {"metadata": {"name": "r", "resourceVersion": "1"}, "handler": "a"}
        new = dict(old, handler="b")
        self.assertEqual(messages(S.validate_update(new, old)),
                         ['handler: Invalid value: "b": field is immutable'])

    def test_overhead_canonical(self) -> None:
        """Overhead quantities are stored in canonical form."""
        rc = {"metadata": {"name": "r"}, "handler": "runc",
              "overhead": {"podFixed": {"memory": "1024Mi"}}}
        S.default(rc)
        self.assertEqual(rc["overhead"]["podFixed"], {"memory": "1Gi"})
        self.assertEqual(S.validate(rc), [])

    def test_table(self) -> None:
        """Name, Handler (empty description, as upstream), Age."""
        self.assertEqual([(c["name"], c["description"]) for c in S.table.columns][1],
                         ("Handler", ""))


class HTTPTests(KubeTestCase):
    def test_create(self) -> None:
        """RuntimeClasses are cluster-scoped in node.k8s.io/v1."""
        code, body, _ = self.request("POST", "/apis/node.k8s.io/v1/runtimeclasses", {
            "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": {"name": "gvisor"}, "handler": "runsc"})
        self.assertEqual(code, 201, body)
        self.assertEqual(body["handler"], "runsc")
