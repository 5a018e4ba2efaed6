"""The admission chain: phases, order, operations and the per-request binding."""

from __future__ import annotations

from twisted.internet import defer
from twisted.trial.unittest import SynchronousTestCase
from zope.interface import implementer

from kubetwist.admission.chain import AdmissionChain
from kubetwist.admission.interfaces import (
    Attributes,
    GroupVersionKind,
    GroupVersionResource,
    IMutationInterface,
    IValidationInterface,
)
from kubetwist.registry.rest import ResourceSpec

DEPLOYMENTS = ResourceSpec("apps", "v1", "deployments", "Deployment", "deployment")


@implementer(IMutationInterface, IValidationInterface)
class Recorder:
    """Records calls into a shared log; handles the given operations."""

    def __init__(self, name: str, log: list, operations=("CREATE",), later: bool = False):
        self.name = name
        self.log = log
        self.operations = operations
        self.later = later

    def handles(self, operation: str) -> bool:
        return operation in self.operations

    def admit(self, a: Attributes):
        self.log.append(("admit", self.name, a))
        a.object.setdefault("seen", []).append(self.name)
        return defer.succeed(None)

    async def validate(self, a: Attributes) -> None:
        self.log.append(("validate", self.name, a))


@implementer(IValidationInterface)
class ValidateOnly:
    name = "ValidateOnly"

    def __init__(self, log: list) -> None:
        self.log = log

    def handles(self, operation: str) -> bool:
        return True

    def validate(self, a: Attributes) -> None:
        self.log.append(("validate", self.name, a))


class ChainTests(SynchronousTestCase):
    def test_phases_in_order(self) -> None:
        """Mutations in order, then validations in order; internal steps last."""
        log: list = []
        chain = AdmissionChain([Recorder("a", log), ValidateOnly(log), Recorder("b", log)],
                               internal=[Recorder("internal", log)])
        bound = chain.for_request(DEPLOYMENTS, "", "ns", "", "user", True,
                                  {"CREATE": {"dryRun": ["All"]}})
        obj = {"metadata": {"name": "d"}}
        self.successResultOf(defer.ensureDeferred(bound.mutate("CREATE", obj, None)))
        self.successResultOf(defer.ensureDeferred(bound.validate("CREATE", obj, None)))
        self.assertEqual([(phase, name) for phase, name, _ in log], [
            ("admit", "a"), ("admit", "b"), ("admit", "internal"),
            ("validate", "a"), ("validate", "ValidateOnly"), ("validate", "b"),
            ("validate", "internal")])
        self.assertEqual(obj["seen"], ["a", "b", "internal"])
        a = log[0][2]
        self.assertEqual((a.kind, a.resource, a.namespace, a.name, a.user, a.dry_run,
                          a.options, a.operation), (
            GroupVersionKind("apps", "v1", "Deployment"),
            GroupVersionResource("apps", "v1", "deployments"), "ns", "d", "user", True,
            {"dryRun": ["All"]}, "CREATE"))

    def test_handles(self) -> None:
        """A plugin sees only the operations it handles."""
        log: list = []
        chain = AdmissionChain([Recorder("creates", log),
                                Recorder("deletes", log, operations=("DELETE",))])
        bound = chain.for_request(DEPLOYMENTS, "", "ns", "d", None, False)
        self.successResultOf(defer.ensureDeferred(bound.validate("DELETE", {}, {})))
        self.assertEqual([name for _, name, _ in log], ["deletes"])

    def test_plain_objects(self) -> None:
        """A step declaring no admission interface is taken by its methods."""
        log: list = []

        class Plain:
            name = "plain"

            def handles(self, operation):
                return True

            def validate(self, a):
                log.append(a.operation)

        bound = AdmissionChain([Plain()]).for_request(DEPLOYMENTS, "", "ns", "d", None, False)
        self.successResultOf(defer.ensureDeferred(bound.mutate("CREATE", {}, None)))
        self.successResultOf(defer.ensureDeferred(bound.validate("UPDATE", {}, {})))
        self.assertEqual(log, ["UPDATE"])
