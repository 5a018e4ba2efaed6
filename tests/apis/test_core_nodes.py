"""Tests for L{kubetwist.apis.core.nodes}, the Node table and the nodes HTTP surface."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core.register import STRATEGIES
from kubetwist.runtime import protobuf as pb
from kubetwist.runtime.field import aggregate_message
from tests.support import KubeTestCase


def _node(**spec) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": dict(spec)}


def _create(obj: dict) -> tuple[dict, str]:
    st = STRATEGIES["nodes"]
    st.default(obj)
    st.prepare_for_create(obj)
    errs = st.validate(obj)
    return obj, aggregate_message(errs) if errs else ""


class NodeStrategyTests(SynchronousTestCase):
    def test_status_kept_and_allocatable_defaulted(self) -> None:
        """A node keeps its status on create; allocatable defaults to capacity, rounded."""
        obj = _node()
        obj["status"] = {"capacity": {"cpu": "0.0001", "pods": "110"}}
        obj, errs = _create(obj)
        self.assertEqual(errs, "")
        self.assertEqual(obj["status"], {"capacity": {"cpu": "1m", "pods": "110"},
                                         "allocatable": {"cpu": "1m", "pods": "110"}})

    def test_pod_cidr_mirrors(self) -> None:
        """podCIDRs is filled from a lone podCIDR and podCIDR from podCIDRs."""
        obj, _ = _create(_node(podCIDR="10.0.0.0/24"))
        self.assertEqual(obj["spec"]["podCIDRs"], ["10.0.0.0/24"])
        obj, _ = _create(_node(podCIDRs=["10.1.0.0/24", "fd00::/64"]))
        self.assertEqual(obj["spec"]["podCIDR"], "10.1.0.0/24")

    def test_taints(self) -> None:
        """Taints: missing and unknown effects, duplicates by key and effect, at metadata.taints."""
        _, errs = _create(_node(taints=[
            {"key": "a", "effect": "NoSchedule"},
            {"key": "b"},
            {"key": "c", "effect": "Sometimes"},
            {"key": "a", "value": "x", "effect": "NoSchedule"},
        ]))
        self.assertEqual(errs, (
            '[metadata.taints[1].effect: Required value, '
            'metadata.taints[2].effect: Unsupported value: "Sometimes": supported values: '
            '"NoSchedule", "PreferNoSchedule", "NoExecute", '
            'metadata.taints[3]: Duplicate value: core.Taint{Key:"a", Value:"x", '
            'Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: '
            'taints must be unique by key and effect pair]'))

    def test_pod_cidrs_same_family(self) -> None:
        """Two pod CIDRs of one family are refused."""
        _, errs = _create(_node(podCIDRs=["10.0.0.0/24", "10.1.0.0/24"]))
        self.assertEqual(errs, 'spec.podCIDRs: Invalid value: []string{"10.0.0.0/24", '
                               '"10.1.0.0/24"}: may specify no more than one CIDR for each IP '
                               'family')

    def test_negative_capacity(self) -> None:
        """A negative capacity (copied to allocatable) is refused at status.capacity.<name>."""
        obj = _node()
        obj["status"] = {"capacity": {"memory": "-1"}}
        _, errs = _create(obj)
        self.assertEqual(errs, '[status.capacity.memory: Invalid value: "-1": must be greater '
                               'than or equal to 0, status.allocatable.memory: Invalid value: '
                               '"-1": must be greater than or equal to 0]')

    def test_update_immutables(self) -> None:
        """providerID and podCIDRs may only be set once; status is kept by a spec update."""
        old, _ = _create(_node(providerID="aws://1", podCIDRs=["10.0.0.0/24"]))
        old["metadata"]["resourceVersion"] = "1"
        old["status"] = {"phase": "Running"}
        new = _node(providerID="aws://2", podCIDRs=["10.9.0.0/24"])
        new["metadata"]["resourceVersion"] = "1"
        st = STRATEGIES["nodes"]
        st.default(new)
        st.prepare_for_update(new, old)
        self.assertEqual(new["status"], {"phase": "Running"})
        self.assertEqual(aggregate_message(st.validate_update(new, old)), (
            '[spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to '
            'valid, spec.providerID: Forbidden: node updates may not change providerID except '
            'from "" to valid]'))

    def test_field_attrs(self) -> None:
        """spec.unschedulable is a selectable field."""
        self.assertEqual(STRATEGIES["nodes"].attrs(_node(unschedulable=True)),
                         {"metadata.name": "n1", "spec.unschedulable": "true"})

    def test_table_row(self) -> None:
        """printNode: Ready condition, SchedulingDisabled, roles, version and wide columns."""
        obj = _node(unschedulable=True)
        obj["metadata"]["labels"] = {"node-role.kubernetes.io/control-plane": "",
                                     "kubernetes.io/role": "master"}
        obj["status"] = {"conditions": [{"type": "Ready", "status": "False"}],
                         "addresses": [{"type": "InternalIP", "address": "10.0.0.5"}],
                         "nodeInfo": {"kubeletVersion": "v1.32.0", "osImage": "Debian"}}
        row = STRATEGIES["nodes"].table.row(obj)
        self.assertEqual(row[:3], ["n1", "NotReady,SchedulingDisabled", "control-plane,master"])
        self.assertEqual(row[4:], ["v1.32.0", "10.0.0.5", "<none>", "Debian", "<unknown>",
                                   "<unknown>"])
        self.assertEqual([c["name"] for c in STRATEGIES["nodes"].table.columns],
                         ["Name", "Status", "Roles", "Age", "Version", "Internal-IP",
                          "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"])
        self.assertEqual(STRATEGIES["nodes"].table.row(_node())[1:3], ["Unknown", "<none>"])

    def test_protobuf_round_trip(self) -> None:
        """A Node encodes and decodes through the protobuf type tables."""
        obj = {"kind": "Node", "apiVersion": "v1",
               "metadata": {"name": "n1", "creationTimestamp": None},
               "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]},
               "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.5"}],
                          "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                          "nodeInfo": {"machineID": "m", "systemUUID": "", "bootID": "",
                                       "kernelVersion": "", "osImage": "",
                                       "containerRuntimeVersion": "", "kubeletVersion": "",
                                       "kubeProxyVersion": "", "operatingSystem": "linux",
                                       "architecture": "amd64"}}}
        self.assertEqual(pb.decode(pb.encode(obj)), obj)


class NodeHTTPTests(KubeTestCase):
    def test_create_status_and_field_selector(self) -> None:
        """Nodes are cluster-scoped, keep status on create, select on spec.unschedulable."""
        body = _node()
        body["status"] = {"capacity": {"cpu": "2"}}
        code, out, _ = self.request("POST", "/api/v1/nodes", body)
        self.assertEqual(code, 201, out)
        self.assertEqual(out["status"]["allocatable"], {"cpu": "2"})
        code, _, _ = self.request("POST", "/api/v1/nodes", dict(_node(unschedulable=True),
                                                                 metadata={"name": "n2"}))
        self.assertEqual(code, 201)
        code, out, _ = self.request("GET", "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue")
        self.assertEqual(code, 200)
        self.assertEqual([i["metadata"]["name"] for i in out["items"]], ["n2"])
        code, out, _ = self.request("GET", "/api/v1/nodes/n1/status")
        self.assertEqual((code, out["metadata"]["name"]), (200, "n1"))
