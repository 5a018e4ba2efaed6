"""Tests for L{kubetwist.apis.core.register}."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core import register
from kubetwist.apis.core.printers import SERVICE_TABLE


class RegisterTests(SynchronousTestCase):
    def test_resources(self) -> None:
        """The core resources carry upstream's short names, categories and subresources."""
        table = {
            r.resource: (
                r.kind,
                r.singular,
                r.namespaced,
                r.short_names,
                r.categories,
                r.subresources,
            )
            for r in register.RESOURCES
        }
        self.assertEqual(
            table["namespaces"],
            ("Namespace", "namespace", False, ["ns"], [], ["finalize", "status"]),
        )
        self.assertEqual(
            table["services"],
            ("Service", "service", True, ["svc"], ["all"], ["proxy", "status"]),
        )
        self.assertEqual(table["pods"], ("Pod", "pod", True, ["po"], ["all"], [
            "attach", "binding", "ephemeralcontainers", "eviction", "exec", "log",
            "portforward", "proxy", "resize", "status"]))
        self.assertEqual(table["bindings"], ("Binding", "binding", True, [], [], []))
        self.assertEqual(table["endpoints"][:4], ("Endpoints", "endpoints", True, ["ep"]))
        self.assertEqual(table["events"][3], ["ev"])
        self.assertEqual(table["configmaps"][3], ["cm"])
        self.assertEqual(table["serviceaccounts"][3], ["sa"])
        self.assertEqual(table["secrets"][3], [])
        self.assertEqual(table["nodes"],
                         ("Node", "node", False, ["no"], [], ["proxy", "status"]))
        self.assertEqual(table["limitranges"][3], ["limits"])
        self.assertEqual(table["resourcequotas"][3:], (["quota"], [], ["status"]))
        self.assertEqual(table["podtemplates"][2:], (True, [], [], []))
        self.assertEqual((register.GROUP, register.VERSION), ("", "v1"))

    def test_strategies(self) -> None:
        """Every resource and subresource served has a strategy; kinds and scopes agree."""
        self.assertEqual(
            sorted(register.STRATEGIES),
            [
                "bindings",
                "configmaps",
                "endpoints",
                "events",
                "limitranges",
                "namespaces",
                "namespaces/finalize",
                "namespaces/status",
                "nodes",
                "nodes/proxy",
                "nodes/status",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "persistentvolumes",
                "persistentvolumes/status",
                "pods",
                "pods/attach",
                "pods/binding",
                "pods/ephemeralcontainers",
                "pods/eviction",
                "pods/exec",
                "pods/log",
                "pods/portforward",
                "pods/proxy",
                "pods/resize",
                "pods/status",
                "podtemplates",
                "replicationcontrollers",
                "replicationcontrollers/status",
                "resourcequotas",
                "resourcequotas/status",
                "secrets",
                "serviceaccounts",
                "services",
                "services/proxy",
                "services/status",
            ],
        )
        for r in register.RESOURCES:
            if r.resource in ("componentstatuses", "bindings"):
                continue  # served without a Store: kubetwist.apis.core.componentstatuses
            strategy = register.STRATEGIES[r.resource]
            self.assertEqual((strategy.kind, strategy.namespaced), (r.kind, r.namespaced))
        self.assertIs(register.STRATEGIES["services"].table, SERVICE_TABLE)
