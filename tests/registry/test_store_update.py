"""
Tests for L{kubetwist.registry.generic.store.Store.update} without C{metadata.resourceVersion}
(upstream C{Store.Update}: C{doUnconditionalUpdate} and the strategies'
C{AllowUnconditionalUpdate}).
"""

from __future__ import annotations

from twisted.internet.defer import Deferred
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.coordination import register as coordination
from kubetwist.apis.core import register as core
from kubetwist.registry.generic.store import Store
from kubetwist.runtime import errors
from kubetwist.storage.sqlite import SQLiteStorage
from tests.support import FakeReactorClock, InlinePool

#: The resources whose upstream strategy answers C{AllowUnconditionalUpdate() == false}
#: (their subresources share the strategy), as kube-apiserver v1.32 answers a PUT without
#: C{metadata.resourceVersion}: recorded against the reference server, one PUT per resource
#: it serves, and read in C{pkg/registry/<group>/<resource>/strategy.go},
#: C{apiextensions-apiserver/pkg/registry/customresource{,definition}/strategy.go} and
#: C{kube-aggregator/pkg/registry/apiservice/strategy.go}.  Every other built-in resource
#: allows it.
UPSTREAM_CONDITIONAL_ONLY = frozenset({
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"),
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
    ("apiextensions.k8s.io", "customresourcedefinitions"),
    ("apiregistration.k8s.io", "apiservices"),
    ("coordination.k8s.io", "leases"),
    ("node.k8s.io", "runtimeclasses"),
    ("policy", "poddisruptionbudgets"),
    ("storage.k8s.io", "csidrivers"),
    ("storage.k8s.io", "csinodes"),
    ("storage.k8s.io", "csistoragecapacities"),
    ("storage.k8s.io", "volumeattachments"),
})


def _all_strategies():
    """C{(group, "resource[/subresource]", Strategy)} of every built-in resource kubetwist
    serves: the kube-apiserver groups, apiextensions and the aggregator."""
    from kubetwist.aggregator import server as aggregator
    from kubetwist.apiextensions import server as apiextensions
    from kubetwist.controlplane.instance import core_group_infos

    out = []
    for info in core_group_infos():
        for name, strategy in info.strategies.items():
            out.append((info.group, name, strategy))
    for name, strategy in apiextensions.STRATEGIES.items():
        out.append(("apiextensions.k8s.io", name, strategy))
    for name, strategy in aggregator.STRATEGIES.items():
        out.append(("apiregistration.k8s.io", name, strategy))
    return out


class AllowUnconditionalUpdateTableTests(SynchronousTestCase):
    """Every strategy's C{allow_unconditional_update} is upstream's."""

    def test_every_builtin_resource(self):
        """Each built-in resource and subresource with a strategy allows an update without a
        resourceVersion exactly when upstream's strategy does."""
        from kubetwist.registry.rest import Strategy

        checked = 0
        wrong = []
        for group, name, strategy in _all_strategies():
            if not isinstance(strategy, Strategy):
                continue  # a REST factory (scale, binding, ...), not a Store strategy
            expected = (group, name.split("/")[0]) not in UPSTREAM_CONDITIONAL_ONLY
            checked += 1
            if strategy.allow_unconditional_update != expected:
                wrong.append((group, name, strategy.allow_unconditional_update))
        self.assertEqual(wrong, [])
        self.assertGreater(checked, 60)

    def test_table_names_served_resources(self):
        """Every resource of the table is one kubetwist serves (no stale rows)."""
        served = {(g, n.split("/")[0]) for g, n, _ in _all_strategies()}
        self.assertEqual(UPSTREAM_CONDITIONAL_ONLY - served, set())

    def test_custom_resources(self):
        """Custom resources and their status need a resourceVersion (upstream
        C{customResourceStrategy.AllowUnconditionalUpdate} is false)."""
        from kubetwist.apiextensions.customresource import CRVersion, make_strategies

        crd = {"metadata": {"name": "widgets.example.com"},
               "spec": {"group": "example.com", "scope": "Namespaced",
                        "names": {"plural": "widgets", "kind": "Widget"},
                        "versions": [{"name": "v1", "served": True, "storage": True}]}}
        main, status = make_strategies(CRVersion(
            crd=crd, group="example.com", version="v1", kind="Widget", namespaced=True,
            schema=None, status_enabled=True, scale=None))
        self.assertFalse(main.allow_unconditional_update)
        self.assertFalse(status.allow_unconditional_update)


def _spec(resources, name):
    return next(r for r in resources if r.resource == name)


class UnconditionalUpdateTests(SynchronousTestCase):
    """Store.update of a body without C{metadata.resourceVersion}, over in-memory SQLite."""

    def setUp(self) -> None:
        self.clock = FakeReactorClock()
        self.clock.advance(1_700_000_000)
        self.storage = SQLiteStorage(self.clock, ":memory:", threadpool=InlinePool())
        self.cms = Store(_spec(core.RESOURCES, "configmaps"), core.STRATEGIES["configmaps"],
                         self.storage, self.clock)
        self.leases = Store(_spec(coordination.RESOURCES, "leases"),
                            coordination.STRATEGIES["leases"], self.storage, self.clock)

    def wait(self, coro):
        return self.successResultOf(Deferred.fromCoroutine(coro))

    def put(self, store, body):
        async def transform(current):
            return body
        return store.update("default", body["metadata"]["name"], transform)

    def test_configmap_without_resource_version(self):
        """A ConfigMap PUT without resourceVersion replaces the stored one, whatever its
        version (upstream doUnconditionalUpdate)."""
        created = self.wait(self.cms.create("default", {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c1", "namespace": "default"}, "data": {"a": "b"}}))
        out, was_created = self.wait(self.put(self.cms, {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"},
            "data": {"a": "c"}}))
        self.assertFalse(was_created)
        self.assertEqual(out["data"], {"a": "c"})
        self.assertEqual(out["metadata"]["uid"], created["metadata"]["uid"])
        self.assertGreater(int(out["metadata"]["resourceVersion"]),
                           int(created["metadata"]["resourceVersion"]))
        self.assertEqual(self.wait(self.cms.get("default", "c1"))["data"], {"a": "c"})

    def test_configmap_stale_resource_version_conflicts(self):
        """A resourceVersion that is given is still compared: a stale one is 409 Conflict."""
        created = self.wait(self.cms.create("default", {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c1", "namespace": "default"}}))
        self.wait(self.put(self.cms, {"metadata": {"name": "c1"}, "data": {"a": "1"}}))
        err = self.failureResultOf(Deferred.fromCoroutine(self.put(self.cms, {
            "metadata": {"name": "c1", "resourceVersion": created["metadata"]["resourceVersion"]},
            "data": {"a": "2"}})), errors.StatusError).value
        self.assertEqual(err.code, 409)
        self.assertEqual(err.status["reason"], "Conflict")

    def test_lease_needs_resource_version(self):
        """A Lease PUT without resourceVersion is upstream's 422, naming the resource (not the
        kind) and printing the uint64 zero as Go's C{%#v} does."""
        self.wait(self.leases.create("default", {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "l1", "namespace": "default"}, "spec": {}}))
        err = self.failureResultOf(Deferred.fromCoroutine(self.put(self.leases, {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "l1"}, "spec": {"holderIdentity": "x"}})),
            errors.StatusError).value
        self.assertEqual(err.code, 422)
        self.assertEqual(err.status["message"],
                         'leases.coordination.k8s.io "l1" is invalid: metadata.resourceVersion: '
                         'Invalid value: 0x0: must be specified for an update')
        self.assertEqual(err.status["details"], {
            "name": "l1", "group": "coordination.k8s.io", "kind": "leases",
            "causes": [{"reason": "FieldValueInvalid",
                        "message": "Invalid value: 0x0: must be specified for an update",
                        "field": "metadata.resourceVersion"}]})

    def test_admission_sees_the_body_then_the_stored_version(self):
        """Mutating admission sees the body as sent (no resourceVersion); validating
        admission sees it with the stored version, as upstream (UpdatedObject, then
        doUnconditionalUpdate, then BeforeUpdate and the validation)."""
        from kubetwist.registry.generic.store import Admission

        created = self.wait(self.cms.create("default", {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c1", "namespace": "default"}}))
        seen = []

        async def mutate(operation, obj, old):
            seen.append(("mutate", obj["metadata"].get("resourceVersion")))

        async def validate(operation, obj, old):
            seen.append(("validate", obj["metadata"].get("resourceVersion")))

        async def transform(current):
            return {"metadata": {"name": "c1"}, "data": {"a": "1"}}

        self.wait(self.cms.update("default", "c1", transform,
                                  Admission(mutate=mutate, validate=validate)))
        self.assertEqual(seen, [("mutate", None),
                                ("validate", created["metadata"]["resourceVersion"])])
