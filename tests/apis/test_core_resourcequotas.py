"""Tests for L{kubetwist.apis.core.resourcequotas} and the resourcequotas HTTP surface."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core.register import STRATEGIES
from kubetwist.runtime import protobuf as pb
from kubetwist.runtime.field import aggregate_message
from tests.support import KubeTestCase


def _quota(**spec) -> dict:
    return {"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": "q", "namespace": "default"}, "spec": dict(spec)}


def _errs(obj: dict) -> str:
    st = STRATEGIES["resourcequotas"]
    st.default(obj)
    st.prepare_for_create(obj)
    errs = st.validate(obj)
    return aggregate_message(errs) if errs else ""


class ResourceQuotaStrategyTests(SynchronousTestCase):
    def test_create_clears_status(self) -> None:
        """The status is reset to {} on create; hard quantities are rounded up."""
        obj = _quota(hard={"cpu": "0.0001", "pods": "10"})
        obj["status"] = {"used": {"pods": "3"}}
        self.assertEqual(_errs(obj), "")
        self.assertEqual((obj["spec"]["hard"], obj["status"]), ({"cpu": "1m", "pods": "10"}, {}))

    def test_resource_names_and_values(self) -> None:
        """Non-quota resources, non-integer counts and negative values are refused."""
        self.assertEqual(
            _errs(_quota(hard={"storage": "1Gi", "pods": "1.5", "memory": "-1"})),
            '[spec.hard[memory]: Invalid value: "-1": must be greater than or equal to 0, '
            'spec.hard[pods]: Invalid value: 1500m: must be an integer, '
            'spec.hard[storage]: Invalid value: "storage": must be a standard resource for '
            'quota]')

    def test_scopes(self) -> None:
        """Conflicting and inapplicable scopes (identical messages are reported once)."""
        self.assertEqual(
            _errs(_quota(hard={"secrets": "1"}, scopes=["BestEffort", "NotBestEffort"])),
            '[spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", '
            '"NotBestEffort"}: unsupported scope applied to resource, spec.scopes: Invalid '
            'value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort"}: conflicting '
            'scopes]')

    def test_scope_selector(self) -> None:
        """Exists-only scopes and In without values."""
        sel = {"matchExpressions": [{"scopeName": "BestEffort", "operator": "In",
                                     "values": ["x"]},
                                    {"scopeName": "PriorityClass", "operator": "In"}]}
        self.assertEqual(
            _errs(_quota(scopeSelector=sel)),
            "[spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be "
            "'Exist' when scope is any of ResourceQuotaScopeTerminating, "
            "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
            "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity, "
            "spec.scopeSelector.matchExpressions.values: Required value: must be at least one "
            "value when `operator` is 'In' or 'NotIn' for scope selector]")

    def test_update_scopes_immutable(self) -> None:
        """Scopes may not change; a spec update keeps the stored status."""
        st = STRATEGIES["resourcequotas"]
        old = _quota(hard={"pods": "1"}, scopes=["BestEffort"])
        old["metadata"]["resourceVersion"] = "1"
        old["status"] = {"hard": {"pods": "1"}}
        new = _quota(hard={"pods": "2"})
        new["metadata"]["resourceVersion"] = "1"
        st.prepare_for_update(new, old)
        self.assertEqual(new["status"], {"hard": {"pods": "1"}})
        self.assertEqual(aggregate_message(st.validate_update(new, old)),
                         "spec.scopes: Invalid value: []core.ResourceQuotaScope(nil): "
                         "field is immutable")

    def test_table_row(self) -> None:
        """printResourceQuota: used/hard per resource, limits.* in the Limit cell."""
        obj = _quota()
        obj["status"] = {"hard": {"pods": "10", "limits.cpu": "2", "requests.cpu": "1"},
                         "used": {"pods": "3"}}
        self.assertEqual(STRATEGIES["resourcequotas"].table.row(obj)[2:],
                         ["pods: 3/10, requests.cpu: 0/1", "limits.cpu: 0/2"])

    def test_protobuf_round_trip(self) -> None:
        """A ResourceQuota (kubectl create quota sends protobuf) round-trips."""
        obj = _quota(hard={"pods": "10"}, scopeSelector={"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]})
        obj["metadata"]["creationTimestamp"] = None
        obj["status"] = {}
        self.assertEqual(pb.decode(pb.encode(obj)), obj)


class ResourceQuotaHTTPTests(KubeTestCase):
    def test_create_and_status(self) -> None:
        """Create clears status; the status subresource writes it, keeping the spec."""
        base = "/api/v1/namespaces/default/resourcequotas"
        code, out, _ = self.request("POST", base, _quota(hard={"pods": "10"}))
        self.assertEqual((code, out.get("status")), (201, {}))
        out["status"] = {"hard": {"pods": "10"}, "used": {"pods": "1"}}
        out["spec"] = {"hard": {"pods": "99"}}
        code, out, _ = self.request("PUT", base + "/q/status", out)
        self.assertEqual(code, 200, out)
        self.assertEqual((out["spec"], out["status"]["used"]), ({"hard": {"pods": "10"}},
                                                                 {"pods": "1"}))
