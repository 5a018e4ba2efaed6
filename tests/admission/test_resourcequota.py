# -*- test-case-name: tests.admission.test_resourcequota -*-
"""
Tests for L{kubetwist.admission.plugins.resourcequota}: the evaluators (pods, services,
claims, object counts), scopes and scope selectors, upstream's refusal messages, dry run,
the compare-and-swap status charge and its retries, C{limitedResources}.
"""

from __future__ import annotations

import copy

from twisted.internet.defer import ensureDeferred
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.admission.interfaces import Attributes
from kubetwist.admission.plugins.resourcequota import resources as rq
from kubetwist.admission.plugins.resourcequota.admission import (
    QuotaAccessor,
    ResourceQuota,
    check_request,
)
from kubetwist.admission.plugins.resourcequota.evaluators import (
    ObjectCountEvaluator,
    PersistentVolumeClaimEvaluator,
    PodEvaluator,
    Registry,
    ServiceEvaluator,
    calculate_usage,
)
from kubetwist.apis.core import register as core
from kubetwist.registry.generic.store import Store
from kubetwist.registry.rest import ResourceSpec
from kubetwist.runtime.errors import StatusError
from kubetwist.storage.sqlite import SQLiteStorage
from tests.support import FakeReactorClock, InlinePool

PODS = ResourceSpec("", "v1", "pods", "Pod", "pod")
SERVICES = ResourceSpec("", "v1", "services", "Service", "service")
SECRETS = ResourceSpec("", "v1", "secrets", "Secret", "secret")
PVCS = ResourceSpec("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim",
                    "persistentvolumeclaim")


def _wire(rl: dict) -> dict:
    return rq.wire_list(rl)


def pod(name: str = "p", requests: dict | None = None, limits: dict | None = None,
        **spec) -> dict:
    resources = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    body = {"containers": [{"name": "c", "image": "i", "resources": resources}]}
    body.update(spec)
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": body}


def quota(name: str, hard: dict, used: dict | None = None, rv: str = "1", **spec) -> dict:
    status = {"hard": dict(hard)}
    if used is not None:
        status["used"] = used
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv},
            "spec": {"hard": dict(hard), **spec}, "status": status}


def create(spec: ResourceSpec, obj: dict, dry_run: bool = False) -> Attributes:
    return Attributes.for_spec("CREATE", spec, namespace="ns",
                               name=obj["metadata"].get("name", ""), obj=obj, dry_run=dry_run)


class PodEvaluatorTests(SynchronousTestCase):
    """Upstream C{core.podEvaluator}."""

    def test_usage(self) -> None:
        """Requests and limits become cpu/memory, requests.*, limits.*; pods and count/pods."""
        usage = PodEvaluator().usage(pod(requests={"cpu": "100m", "memory": "64Mi"},
                                         limits={"cpu": "200m", "example.com/gpu": "1"}))
        self.assertEqual(_wire(usage), {
            "count/pods": "1", "cpu": "100m", "limits.cpu": "200m", "memory": "64Mi",
            "pods": "1", "requests.cpu": "100m", "requests.memory": "64Mi"})

    def test_extended_and_init(self) -> None:
        """Extended resources are charged as requests.<name>; an init container's larger
        request wins over the containers' sum; sidecars add to it."""
        p = pod(requests={"cpu": "100m", "example.com/dongle": "2"})
        p["spec"]["initContainers"] = [
            {"name": "i", "image": "i", "resources": {"requests": {"cpu": "500m"}}},
            {"name": "s", "image": "i", "restartPolicy": "Always",
             "resources": {"requests": {"cpu": "50m"}}}]
        usage = _wire(PodEvaluator().usage(p))
        self.assertEqual(usage["requests.example.com/dongle"], "2")
        self.assertEqual(usage["requests.cpu"], "500m")

    def test_terminal_pods_count_only_objects(self) -> None:
        """A Succeeded pod charges count/pods only."""
        p = pod(requests={"cpu": "1"})
        p["status"] = {"phase": "Succeeded"}
        self.assertEqual(_wire(PodEvaluator().usage(p)), {"count/pods": "1"})

    def test_past_grace(self) -> None:
        """A pod past its deletion grace period is not charged compute resources."""
        p = pod()
        p["metadata"].update(deletionTimestamp="2023-11-14T22:13:20Z",
                             deletionGracePeriodSeconds=30)
        self.assertIn("pods", PodEvaluator().usage(p, 1_700_000_000.0))
        self.assertNotIn("pods", PodEvaluator().usage(p, 1_700_000_031.0))

    def test_scopes(self) -> None:
        """Terminating, BestEffort, PriorityClass (Exists, In, NotIn), cross-namespace."""
        ev = PodEvaluator()
        best, burst = pod(), pod(requests={"cpu": "1"})
        term = pod(activeDeadlineSeconds=10)
        self.assertTrue(ev.matches_scope({"scopeName": "BestEffort"}, best))
        self.assertFalse(ev.matches_scope({"scopeName": "BestEffort"}, burst))
        self.assertTrue(ev.matches_scope({"scopeName": "NotBestEffort"}, burst))
        self.assertTrue(ev.matches_scope({"scopeName": "Terminating"}, term))
        self.assertTrue(ev.matches_scope({"scopeName": "NotTerminating"}, best))
        high = pod(priorityClassName="high")
        sel = {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}
        self.assertTrue(ev.matches_scope(sel, high))
        self.assertFalse(ev.matches_scope(sel, best))
        self.assertTrue(ev.matches_scope({**sel, "operator": "NotIn"}, best))
        self.assertTrue(ev.matches_scope({"scopeName": "PriorityClass",
                                          "operator": "Exists"}, high))
        cross = pod(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "k", "namespaces": ["other"]}]}})
        self.assertTrue(ev.matches_scope({"scopeName": "CrossNamespacePodAffinity"}, cross))
        self.assertFalse(ev.matches_scope({"scopeName": "CrossNamespacePodAffinity"}, best))

    def test_matching_resources(self) -> None:
        """Pod names, hugepages and requests.<extended>; not services."""
        self.assertEqual(PodEvaluator().matching_resources(
            ["services", "pods", "requests.hugepages-2Mi", "requests.example.com/x", "cpu"]),
            ["cpu", "pods", "requests.hugepages-2Mi", "requests.example.com/x"])


class OtherEvaluatorTests(SynchronousTestCase):
    def test_service(self) -> None:
        """NodePort services charge their ports; LoadBalancers one balancer too."""
        ev = ServiceEvaluator()
        svc = {"metadata": {"name": "s"}, "spec": {"type": "LoadBalancer",
                                                    "ports": [{"port": 1}, {"port": 2}]}}
        self.assertEqual(_wire(ev.usage(svc)), {
            "count/services": "1", "services": "1", "services.loadbalancers": "1",
            "services.nodeports": "2"})
        svc["spec"]["type"] = "ClusterIP"
        self.assertEqual(_wire(ev.usage(svc))["services.nodeports"], "0")

    def test_claim(self) -> None:
        """Claims charge count, storage, and the same by storage class."""
        claim = {"metadata": {"name": "c"}, "spec": {
            "storageClassName": "gold", "resources": {"requests": {"storage": "1Gi"}}}}
        self.assertEqual(_wire(PersistentVolumeClaimEvaluator().usage(claim)), {
            "count/persistentvolumeclaims": "1",
            "gold.storageclass.storage.k8s.io/persistentvolumeclaims": "1",
            "gold.storageclass.storage.k8s.io/requests.storage": "1Gi",
            "persistentvolumeclaims": "1", "requests.storage": "1Gi"})

    def test_object_count(self) -> None:
        """count/<resource>.<group>, and the legacy alias."""
        self.assertEqual(_wire(ObjectCountEvaluator("apps", "replicasets").usage({})),
                         {"count/replicasets.apps": "1"})
        self.assertEqual(Registry().get("", "secrets").matching_resources(
            ["secrets", "count/secrets", "pods"]), ["count/secrets", "secrets"])
        self.assertIsNone(Registry().get("", "events"))

    def test_calculate_usage(self) -> None:
        """Every hard name an evaluator charges is counted (zero included), in scope (object
        counts match no scope, so a scoped quota counts no secrets, as upstream)."""
        items = {"pods": [pod("a", requests={"cpu": "1"}), pod("b", activeDeadlineSeconds=5)],
                 "secrets": [{"metadata": {"name": "s"}}]}

        async def list_items(ev):
            return items.get(ev.group_resource[1], [])

        q = quota("q", {"pods": "5", "requests.cpu": "2", "secrets": "3", "unknown": "1"},
                  scopes=["NotTerminating"])
        d = ensureDeferred(
            calculate_usage(q, Registry(), list_items))
        usage, errs = self.successResultOf(d)
        self.assertEqual(errs, [])
        self.assertEqual(_wire(usage), {"pods": "1", "requests.cpu": "1", "secrets": "0"})
        del q["spec"]["scopes"]
        usage, _ = self.successResultOf(ensureDeferred(calculate_usage(q, Registry(),
                                                                       list_items)))
        self.assertEqual(_wire(usage), {"pods": "2", "requests.cpu": "1", "secrets": "1"})


class CheckRequestTests(SynchronousTestCase):
    """Upstream C{CheckRequest}: charges and messages."""

    def test_charge(self) -> None:
        """A pod raises used of the quotas whose hard names it charges."""
        quotas = [quota("a", {"pods": "2", "requests.cpu": "1"},
                        {"pods": "1", "requests.cpu": "0"}),
                  quota("b", {"secrets": "1"}, {"secrets": "0"})]
        out = check_request(quotas, create(PODS, pod(requests={"cpu": "500m"})),
                            PodEvaluator(), [])
        self.assertEqual(_wire(out[0]), {"pods": "2", "requests.cpu": "500m"})
        self.assertIsNone(out[1])

    def test_exceeded(self) -> None:
        """Upstream's message: requested, used and limited of the exceeded names only."""
        quotas = [quota("q", {"pods": "2", "cpu": "4"}, {"pods": "2", "cpu": "1"})]
        with self.assertRaises(StatusError) as e:
            check_request(quotas, create(PODS, pod("p3", requests={"cpu": "1"})),
                          PodEvaluator(), [])
        self.assertEqual(e.exception.code, 403)
        self.assertEqual(e.exception.status["reason"], "Forbidden")
        self.assertEqual(e.exception.message, 'pods "p3" is forbidden: exceeded quota: q, '
                                              'requested: pods=1, used: pods=2, limited: pods=2')

    def test_must_specify(self) -> None:
        """A quota on cpu needs every container to ask for cpu."""
        quotas = [quota("q", {"limits.cpu": "4", "requests.memory": "1Gi"},
                        {"limits.cpu": "0", "requests.memory": "0"})]
        with self.assertRaises(StatusError) as e:
            check_request(quotas, create(PODS, pod()), PodEvaluator(), [])
        self.assertEqual(e.exception.message,
                         'pods "p" is forbidden: failed quota: q: must specify limits.cpu for: '
                         'c; requests.memory for: c')

    def test_status_unknown(self) -> None:
        """A quota whose used is not known yet refuses."""
        with self.assertRaises(StatusError) as e:
            check_request([quota("q", {"pods": "2"})], create(PODS, pod()), PodEvaluator(), [])
        self.assertEqual(e.exception.message,
                         'pods "p" is forbidden: status unknown for quota: q, resources: pods')

    def test_scoped_quota(self) -> None:
        """A BestEffort quota ignores a pod that asks for cpu."""
        quotas = [quota("q", {"pods": "0"}, {"pods": "0"}, scopes=["BestEffort"])]
        out = check_request(quotas, create(PODS, pod(requests={"cpu": "1"})),
                            PodEvaluator(), [])
        self.assertEqual(out, [None])
        with self.assertRaises(StatusError):
            check_request(quotas, create(PODS, pod()), PodEvaluator(), [])

    def test_service_update(self) -> None:
        """An update charges the difference only (ClusterIP to NodePort: the node ports)."""
        old = {"metadata": {"name": "s", "resourceVersion": "5"},
               "spec": {"type": "ClusterIP", "ports": [{"port": 1}]}}
        new = copy.deepcopy(old)
        new["spec"]["type"] = "NodePort"
        a = Attributes.for_spec("UPDATE", SERVICES, namespace="ns", name="s", obj=new, old=old)
        quotas = [quota("q", {"services": "1", "services.nodeports": "0"},
                        {"services": "1", "services.nodeports": "0"})]
        with self.assertRaises(StatusError) as e:
            check_request(quotas, a, ServiceEvaluator(), [])
        self.assertEqual(e.exception.message,
                         'services "s" is forbidden: exceeded quota: q, requested: '
                         'services.nodeports=1, used: services.nodeports=0, limited: '
                         'services.nodeports=0')

    def test_limited_resources(self) -> None:
        """limitedResources: a pod asking for what no quota covers is refused."""
        limited = [{"resource": "pods", "matchContains": ["cpu"]}]
        with self.assertRaises(StatusError) as e:
            check_request([], create(PODS, pod(requests={"cpu": "1"})), PodEvaluator(), limited)
        self.assertEqual(e.exception.message, 'pods "p" is forbidden: insufficient quota to '
                                              'consume: cpu,requests.cpu')
        self.assertEqual(check_request([], create(PODS, pod()), PodEvaluator(), limited), [])

    def test_limited_scopes(self) -> None:
        """A pod in a limited scope without a covering quota: upstream's 500."""
        limited = [{"resource": "pods", "matchScopes": [
            {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}]
        with self.assertRaises(StatusError) as e:
            check_request([], create(PODS, pod(priorityClassName="high")), PodEvaluator(),
                          limited)
        self.assertEqual(e.exception.code, 500)
        self.assertEqual(e.exception.message, "insufficient quota to match these scopes: "
                                              "[{PriorityClass In [high]}]")


class PluginTests(SynchronousTestCase):
    """The plugin over real storage: the CAS write, retries, dry run."""

    def setUp(self) -> None:
        self.clock = FakeReactorClock()
        self.clock.advance(1_700_000_000)
        self.storage = SQLiteStorage(self.clock, ":memory:", threadpool=InlinePool())
        spec = next(r for r in core.RESOURCES if r.resource == "resourcequotas")
        self.quotas = Store(spec, core.STRATEGIES["resourcequotas"], self.storage, self.clock)
        q = {"apiVersion": "v1", "kind": "ResourceQuota",
             "metadata": {"name": "q", "namespace": "ns"}, "spec": {"hard": {"secrets": "2"}}}
        self.successResultOf(ensureDeferred(
            self.quotas.create("ns", q)))
        self._set_used("0")
        self.accessor = QuotaAccessor(self.quotas, self.storage)
        self.plugin = ResourceQuota(self.accessor)

    def _set_used(self, value: str) -> None:
        def transform(cur):
            cur["status"] = {"hard": {"secrets": "2"}, "used": {"secrets": value}}
            return cur

        self.successResultOf(self.storage.guaranteed_update(
            self.quotas.key("ns", "q"), transform))

    def _stored(self) -> dict:
        return self.successResultOf(self.storage.get(self.quotas.key("ns", "q")))

    def _validate(self, dry_run: bool = False):
        from twisted.internet.defer import ensureDeferred

        secret = {"metadata": {"name": "s", "namespace": "ns"}}
        return ensureDeferred(self.plugin.validate(create(SECRETS, secret, dry_run)))

    def test_charges_stored_quota(self) -> None:
        """The quota's status.used is raised in storage."""
        self.successResultOf(self._validate())
        self.assertEqual(self._stored()["status"]["used"], {"secrets": "1"})

    def test_dry_run(self) -> None:
        """A dry run is checked, nothing written."""
        before = self._stored()["metadata"]["resourceVersion"]
        self.successResultOf(self._validate(dry_run=True))
        self.assertEqual(self._stored()["metadata"]["resourceVersion"], before)
        self._set_used("2")
        self.failureResultOf(self._validate(dry_run=True), StatusError)

    def test_conflict_retried(self) -> None:
        """A stale quota (someone else wrote since) is re-read and charged again."""
        stale = self.successResultOf(self.accessor.get_quotas("ns"))
        self._set_used("1")
        reads = []
        original = self.accessor.get_quotas

        async def get_quotas(namespace, live=False):
            reads.append(live)
            if not live:
                return copy.deepcopy(stale)
            return await original(namespace, live)

        self.accessor.get_quotas = get_quotas
        self.successResultOf(self._validate())
        self.assertEqual(reads, [False, True])
        self.assertEqual(self._stored()["status"]["used"], {"secrets": "2"})

    def test_conflict_gives_up(self) -> None:
        """After three retries the conflict is the answer (409, upstream's message)."""
        stale = self.successResultOf(self.accessor.get_quotas("ns"))
        self._set_used("1")

        async def get_quotas(namespace, live=False):
            return copy.deepcopy(stale)

        self.accessor.get_quotas = get_quotas
        f = self.failureResultOf(self._validate(), StatusError)
        self.assertEqual(f.value.code, 409)
        self.assertEqual(f.value.message, 'Operation cannot be fulfilled on resourcequotas "q": '
                                          'the object has been modified; please apply your '
                                          'changes to the latest version and try again')

    def test_other_namespace_and_namespaces(self) -> None:
        """Cluster-scoped requests and namespace creation are not checked."""
        from twisted.internet.defer import ensureDeferred

        ns = ResourceSpec("", "v1", "namespaces", "Namespace", "namespace", namespaced=False)
        a = Attributes.for_spec("CREATE", ns, name="x", obj={"metadata": {"name": "x"}})
        self.successResultOf(ensureDeferred(self.plugin.validate(a)))
        self.assertEqual(self._stored()["status"]["used"], {"secrets": "0"})


    def test_batch_one_write(self) -> None:
        """Three creates while the first charge is being written: the second and third are
        charged by one write; a fourth over the limit is refused in the same batch."""
        from twisted.internet.defer import Deferred

        self._set_used("0")
        writes: list[dict] = []
        gate: Deferred = Deferred()
        original = self.accessor.update_used

        async def update_used(quota, used):
            writes.append(rq.wire_list(used))
            if len(writes) == 1:
                await gate
            return await original(quota, used)

        self.accessor.update_used = update_used
        secrets = [{"metadata": {"name": f"s{i}", "namespace": "ns"}} for i in range(3)]
        first = ensureDeferred(self.plugin.validate(create(SECRETS, secrets[0])))
        second = ensureDeferred(self.plugin.validate(create(SECRETS, secrets[1])))
        third = ensureDeferred(self.plugin.validate(create(SECRETS, secrets[2])))
        self.assertNoResult(first)
        self.assertNoResult(second)
        gate.callback(None)
        self.successResultOf(first)
        self.successResultOf(second)
        f = self.failureResultOf(third, StatusError)
        self.assertEqual(f.value.message, 'secrets "s2" is forbidden: exceeded quota: q, '
                                          'requested: secrets=1, used: secrets=2, limited: '
                                          'secrets=2')
        self.assertEqual(writes, [{"secrets": "1"}, {"secrets": "2"}])
        self.assertEqual(self._stored()["status"]["used"], {"secrets": "2"})

class ConfigurationTests(SynchronousTestCase):
    """The plugin's C{ResourceQuotaConfiguration} (C{--admission-control-config-file})."""

    def test_invalid(self) -> None:
        """A limited resource without C{resource} stops the start with upstream's text."""
        from kubetwist.admission.plugins.resourcequota import new_plugin
        from kubetwist.admission.registry import PluginContext

        ctx = PluginContext(configs={"ResourceQuota": {
            "kind": "ResourceQuotaConfiguration",
            "limitedResources": [{"resource": "pods"}, {"matchContains": ["cpu"]}]}})
        with self.assertRaises(ValueError) as e:
            new_plugin(ctx)
        self.assertEqual(str(e.exception), "limitedResources[1].resource: Required value")

    def test_limited_from_config(self) -> None:
        """limitedResources reach the plugin."""
        from kubetwist.admission.plugins.resourcequota import new_plugin
        from kubetwist.admission.registry import PluginContext

        limited = [{"apiGroup": "", "resource": "pods", "matchContains": ["cpu"]}]
        plugin = new_plugin(PluginContext(configs={"ResourceQuota": {
            "limitedResources": limited}}))
        self.assertEqual(plugin.limited, limited)
        a = create(PODS, pod(requests={"cpu": "1"}))
        f = self.failureResultOf(ensureDeferred(plugin.validate(a)), StatusError)
        self.assertEqual(f.value.message, 'pods "p" is forbidden: insufficient quota to '
                                          'consume: cpu,requests.cpu')

