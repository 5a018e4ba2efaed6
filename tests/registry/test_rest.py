"""The REST capability interfaces: who provides what, and the verbs they give."""

from __future__ import annotations

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from kubetwist.apis.core.componentstatuses import ComponentStatusREST
from kubetwist.apis.core.register import RESOURCES
from kubetwist.registry.core.namespace import NamespaceStore
from kubetwist.registry.core.pod_connect import PodStreamREST
from kubetwist.registry.core.pod_subresources import LegacyBindingREST
from kubetwist.registry.generic.store import Store
from kubetwist.registry.rest import (
    VERB_CAPABILITIES,
    ICollectionDeleter,
    IConnecter,
    ICreater,
    IGetter,
    IStandardStorage,
    ITableConvertor,
    ResourceSpec,
    Strategy,
    TableConvertor,
    verbs_of,
)
from kubetwist.registry.review import ReviewREST
from tests.support import KubeTestCase

SPEC = ResourceSpec("", "v1", "configmaps", "ConfigMap", "configmap")
ALL = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def _row(resource: str) -> ResourceSpec:
    return next(r for r in RESOURCES if r.resource == resource)


class CapabilityTests(SynchronousTestCase):
    """Each storage provides exactly its upstream capabilities."""

    def test_store(self) -> None:
        """The generic Store is a StandardStorage: every verb."""
        store = Store(SPEC, Strategy(kind="ConfigMap"), None, Clock())
        self.assertTrue(verifyObject(IStandardStorage, store))
        self.assertEqual(verbs_of(store), ALL)
        self.assertEqual([v for v, _ in VERB_CAPABILITIES], ALL)

    def test_namespaces(self) -> None:
        """Namespaces serve no deletecollection (upstream's namespace REST)."""
        store = NamespaceStore(_row("namespaces"), Strategy(kind="Namespace"), None, Clock())
        self.assertFalse(ICollectionDeleter.providedBy(store))
        self.assertTrue(verifyObject(IGetter, store))
        self.assertEqual(verbs_of(store),
                         ["create", "delete", "get", "list", "patch", "update", "watch"])

    def test_create_only(self) -> None:
        """Reviews and bindings only create."""
        review = ReviewREST(SPEC, lambda ctx, obj: obj)
        self.assertTrue(verifyObject(ICreater, review))
        self.assertEqual(verbs_of(review), ["create"])
        self.assertEqual(verbs_of(LegacyBindingREST(lambda: None)), ["create"])

    def test_componentstatuses(self) -> None:
        """ComponentStatuses get and list."""
        rest = ComponentStatusREST(_row("componentstatuses"), {})
        self.assertTrue(verifyObject(IGetter, rest))
        self.assertEqual(verbs_of(rest), ["get", "list"])

    def test_connecter(self) -> None:
        """The exec/attach/portforward subresources hand the connection over."""
        store = Store(_row("pods"), Strategy(kind="Pod"), None, Clock())
        self.assertTrue(verifyObject(IConnecter, PodStreamREST(store, lambda: None, "exec")))

    def test_table_convertor(self) -> None:
        """A TableConvertor provides ITableConvertor."""
        self.assertTrue(verifyObject(ITableConvertor, TableConvertor([], lambda o: [])))

    def test_nothing(self) -> None:
        """An object without capabilities serves nothing."""
        self.assertEqual(verbs_of(object()), [])


class InstalledVerbsTests(KubeTestCase):
    """Discovery and routes follow the capabilities."""

    def test_discovery_verbs(self) -> None:
        """/api/v1 lists each resource with the verbs of its storage."""
        code, doc, _ = self.request("GET", "/api/v1")
        verbs = {r["name"]: r["verbs"] for r in doc["resources"]}
        self.assertEqual(verbs["configmaps"], ALL)
        self.assertEqual(verbs["namespaces"],
                         ["create", "delete", "get", "list", "patch", "update", "watch"])
        self.assertEqual(verbs["componentstatuses"], ["get", "list"])
        self.assertEqual(verbs["bindings"], ["create"])

    def test_no_route_without_capability(self) -> None:
        """DELETE of the namespace collection is 405, as upstream."""
        code, st, _ = self.request("DELETE", "/api/v1/namespaces")
        self.assertEqual((code, st["reason"]), (405, "MethodNotAllowed"))

    def test_table_verbs_agree(self) -> None:
        """Where a table row still names its verbs (the create-only resources), they are the
        verbs of its storage."""
        checked = 0
        for server in self.front.chain():
            for agv in server.group_versions.values():
                for res in agv.resources.values():
                    if res.spec.verbs:
                        self.assertEqual(res.spec.verbs, res.verbs, res.spec.resource)
                        checked += 1
        self.assertEqual(checked, 7)
