# -*- test-case-name: tests.controlplane.test_namespace -*-
"""
Tests for L{kubetwist.controlplane.namespace.NamespaceController}: a new namespace gets its
C{default} ServiceAccount and C{kube-root-ca.crt} ConfigMap; a deleted one turns
C{Terminating}, loses its content, then its C{kubernetes} finalizer, and goes (upstream's
namespace REST, namespace controller, serviceaccounts controller and root-ca-cert-publisher).
"""

from __future__ import annotations

from twisted.internet.defer import Deferred
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core import register as core
from kubetwist.controlplane.namespace import NamespaceController
from kubetwist.registry.generic.store import ListOptions, Store
from kubetwist.runtime import errors
from kubetwist.storage.sqlite import SQLiteStorage
from tests.support import FakeReactorClock, InlinePool

CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _store(storage, clock, resource: str) -> Store:
    spec = next(r for r in core.RESOURCES if r.resource == resource)
    return Store(spec, core.STRATEGIES[resource], storage, clock)


class NamespaceControllerTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.clock = FakeReactorClock()
        self.clock.advance(1_700_000_000)
        storage = SQLiteStorage(self.clock, ":memory:", threadpool=InlinePool())
        self.namespaces = _store(storage, self.clock, "namespaces")
        self.configmaps = _store(storage, self.clock, "configmaps")
        self.serviceaccounts = _store(storage, self.clock, "serviceaccounts")
        self.controller = NamespaceController(
            self.namespaces, lambda: [self.configmaps, self.serviceaccounts], self.clock,
            serviceaccounts=self.serviceaccounts, configmaps=self.configmaps, root_ca_pem=CA)

    def wait(self, coro):
        return self.successResultOf(Deferred.fromCoroutine(coro))

    def create_namespace(self, name: str = "team") -> dict:
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        self.namespaces.strategy.default(ns)
        return self.wait(self.namespaces.create("", ns))

    def names(self, store: Store, namespace: str) -> list[str]:
        listed = self.wait(store.list(namespace, ListOptions()))
        return [i["metadata"]["name"] for i in listed["items"]]

    def test_populated_on_create(self) -> None:
        """A new namespace gets the default ServiceAccount and the root CA ConfigMap."""
        self.create_namespace()
        self.assertEqual(self.names(self.serviceaccounts, "team"), ["default"])
        cm = self.wait(self.configmaps.get("team", "kube-root-ca.crt"))
        self.assertEqual(cm["data"], {"ca.crt": CA})
        self.assertIn("kubernetes.io/description", cm["metadata"]["annotations"])

    def test_populate_is_idempotent(self) -> None:
        """Populating again (a restart) keeps the existing objects."""
        ns = self.create_namespace()
        uid = self.wait(self.serviceaccounts.get("team", "default"))["metadata"]["uid"]
        self.wait(self.controller.populate(ns))
        self.assertEqual(self.wait(self.serviceaccounts.get("team", "default"))["metadata"]["uid"],
                         uid)

    def test_delete_terminates_then_removes(self) -> None:
        """A delete answers the namespace Terminating; the controller then empties it and
        removes the kubernetes finalizer, which deletes it."""
        self.create_namespace()
        answer, deleted = self.wait(self.namespaces.delete("", "team", {}))
        self.assertFalse(deleted)
        self.assertEqual(answer["status"]["phase"], "Terminating")
        self.assertEqual(answer["spec"]["finalizers"], ["kubernetes"])
        self.assertIn("deletionTimestamp", answer["metadata"])
        self.clock.advance(0)
        self.assertEqual(self.names(self.configmaps, "team"), [])
        self.assertEqual(self.names(self.serviceaccounts, "team"), [])
        err = self.failureResultOf(Deferred.fromCoroutine(self.namespaces.get("", "team")),
                                   errors.StatusError).value
        self.assertEqual(err.code, 404)

    def test_other_finalizers_keep_it(self) -> None:
        """Finalizers other than kubernetes keep the emptied namespace Terminating."""
        ns = {"apiVersion": "v1", "kind": "Namespace",
              "metadata": {"name": "team"}, "spec": {"finalizers": ["example.com/x"]}}
        self.namespaces.strategy.default(ns)
        self.wait(self.namespaces.create("", ns))
        self.wait(self.namespaces.delete("", "team", {}))
        self.clock.advance(0)
        kept = self.wait(self.namespaces.get("", "team"))
        self.assertEqual(kept["status"]["phase"], "Terminating")
        self.assertEqual(kept["spec"].get("finalizers"), ["example.com/x"])
        self.assertEqual(self.names(self.configmaps, "team"), [])

    def test_resume(self) -> None:
        """After a restart, namespaces left Terminating are finished and the others
        populated."""
        self.create_namespace("gone")
        self.create_namespace("kept")
        controller = self.controller
        self.namespaces.on_marked_for_deletion.remove(controller._schedule)
        self.wait(self.namespaces.delete("", "gone", {}))
        self.wait(self.serviceaccounts.delete("kept", "default", {}))
        self.wait(controller.resume())
        self.assertEqual(self.names(self.namespaces, ""), ["kept"])
        self.assertEqual(self.names(self.serviceaccounts, "kept"), ["default"])
