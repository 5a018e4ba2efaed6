# -*- test-case-name: tests.admission.test_chain -*-
"""
Tests for L{kubetwist.admission.chain}: the admission chain (upstream C{admission/chain.go})
bound to one request runs every plugin's C{admit} in order, then every C{validate}, for the
operations each plugin handles, with the request's attributes.
"""

from __future__ import annotations

from twisted.internet.defer import Deferred
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.admission.chain import AdmissionChain, Attributes
from kubetwist.registry.rest import ResourceSpec
from kubetwist.runtime import errors
from tests.support import KubeTestCase

SPEC = ResourceSpec("", "v1", "configmaps", "ConfigMap", "configmap")


class Recorder:
    """A plugin that records what it sees; C{operations} are those it handles."""

    def __init__(self, name: str, log: list, operations=("CREATE", "UPDATE"),
                 mutating: bool = True, refuse: bool = False) -> None:
        self.name = name
        self.log = log
        self.operations = operations
        self.refuse = refuse
        if mutating:
            self.admit = self._admit

    def handles(self, operation: str) -> bool:
        return operation in self.operations

    async def _admit(self, a: Attributes) -> None:
        self.log.append(("admit", self.name, a.operation))
        a.object.setdefault("metadata", {}).setdefault("labels", {})[self.name] = "x"

    async def validate(self, a: Attributes) -> None:
        self.log.append(("validate", self.name, a.operation))
        if self.refuse:
            raise errors.new_forbidden("", "configmaps", a.name, "refused")


class ChainTests(SynchronousTestCase):
    def wait(self, coro):
        return self.successResultOf(Deferred.fromCoroutine(coro))

    def test_order(self) -> None:
        """Mutation runs plugin by plugin in chain order, validation likewise, each phase
        only for the plugins that have it."""
        log: list = []
        chain = AdmissionChain([Recorder("a", log), Recorder("b", log, mutating=False),
                                Recorder("c", log)])
        admission = chain.for_request(SPEC, "", "default", "cm", None, False)
        obj = {"metadata": {"name": "cm"}}
        self.wait(admission.mutate("CREATE", obj, None))
        self.wait(admission.validate("CREATE", obj, None))
        self.assertEqual(log, [("admit", "a", "CREATE"), ("admit", "c", "CREATE"),
                               ("validate", "a", "CREATE"), ("validate", "b", "CREATE"),
                               ("validate", "c", "CREATE")])
        self.assertEqual(obj["metadata"]["labels"], {"a": "x", "c": "x"})

    def test_handles(self) -> None:
        """A plugin is skipped for operations it does not handle."""
        log: list = []
        chain = AdmissionChain([Recorder("a", log, operations=("DELETE",)), Recorder("b", log)])
        admission = chain.for_request(SPEC, "", "default", "cm", None, False)
        self.wait(admission.validate("DELETE", {}, {}))
        self.assertEqual(log, [("validate", "a", "DELETE")])

    def test_refusal_stops_the_chain(self) -> None:
        """The first refusal is the request's error; later plugins do not run."""
        log: list = []
        chain = AdmissionChain([Recorder("a", log, refuse=True), Recorder("b", log)])
        admission = chain.for_request(SPEC, "", "default", "cm", None, False)
        err = self.failureResultOf(Deferred.fromCoroutine(
            admission.validate("CREATE", {"metadata": {"name": "cm"}}, None)),
            errors.StatusError).value
        self.assertEqual((err.code, err.message),
                         (403, 'configmaps "cm" is forbidden: refused'))
        self.assertEqual(log, [("validate", "a", "CREATE")])

    def test_attributes(self) -> None:
        """Plugins see the request's resource, subresource, namespace, user and dry-run flag,
        the new and old objects, and the object's name when the URL has none (a create)."""
        seen: list = []

        class Spy:
            name = "spy"

            def handles(self, operation):
                return True

            async def validate(self, a):
                seen.append(a)

        user = object()
        admission = AdmissionChain([Spy()]).for_request(SPEC, "status", "ns", "", user, True)
        new, old = {"metadata": {"name": "from-body"}}, {"metadata": {}}
        self.wait(admission.validate("UPDATE", new, old))
        (a,) = seen
        self.assertEqual((a.operation, a.spec, a.subresource, a.namespace, a.name, a.dry_run),
                         ("UPDATE", SPEC, "status", "ns", "from-body", True))
        self.assertIs(a.object, new)
        self.assertIs(a.old_object, old)
        self.assertIs(a.user, user)

    def test_empty_chain(self) -> None:
        """No plugins: both phases pass."""
        admission = AdmissionChain([]).for_request(SPEC, "", "ns", "x", None, False)
        self.wait(admission.mutate("CREATE", {}, None))
        self.wait(admission.validate("CREATE", {}, None))


class OptionsThroughServerTests(KubeTestCase):
    """Admission sees each request's options object (upstream C{Attributes.GetOperationOptions},
    an AdmissionReview's C{request.options})."""

    def setUp(self) -> None:
        super().setUp()
        self.seen: list = []
        seen = self.seen

        class Options:
            def handles(self, operation: str) -> bool:
                return True

            def validate(self, a: Attributes) -> None:
                seen.append((a.operation, a.options))

        self.kube.admission.internal.append(Options())

    def test_options_by_operation(self) -> None:
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
        base = "/api/v1/namespaces/default/configmaps"
        self.assertEqual(self.request(
            "POST", base + "?fieldManager=me&fieldValidation=Strict", cm)[0], 201)
        self.assertEqual(self.request("PUT", base + "/a?dryRun=All", cm)[0], 200)
        self.assertEqual(self.request("DELETE", base + "/a?propagationPolicy=Orphan")[0], 200)
        self.assertEqual(self.seen, [
            ("CREATE", {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1",
                        "fieldManager": "me", "fieldValidation": "Strict"}),
            ("UPDATE", {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1",
                        "dryRun": ["All"]}),
            ("DELETE", {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                        "propagationPolicy": "Orphan"}),
        ])
