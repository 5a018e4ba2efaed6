"""
Tests for L{kubetwist.apis.discovery}: EndpointSlice port defaults, validation messages and
paths as kube-apiserver v1.32 writes them, the v1 topology drop, the printer row, and the
HTTP round trip through discovery.k8s.io/v1.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.discovery import endpointslices as eps
from kubetwist.apis.discovery.register import ENDPOINT_SLICE_TABLE
from tests.support import KubeTestCase


def _slice(name="web-abc", addr="IPv4", endpoints=None, ports=None) -> dict:
    obj = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
           "metadata": {"name": name, "namespace": "default"}, "addressType": addr,
           "endpoints": endpoints if endpoints is not None else [
               {"addresses": ["10.0.0.1"], "conditions": {"ready": True}}]}
    if ports is not None:
        obj["ports"] = ports
    return obj


def _messages(errs) -> list[str]:
    return [e.error() for e in errs]


class EndpointSliceTests(SynchronousTestCase):
    def test_port_defaults(self):
        """Ports get name "" and protocol TCP."""
        obj = _slice(ports=[{"port": 80}])
        eps.default_endpoint_slice(obj)
        self.assertEqual(obj["ports"], [{"port": 80, "name": "", "protocol": "TCP"}])

    def test_address_type_required(self):
        """A missing addressType is required; an unknown one unsupported."""
        obj = _slice(addr="")
        self.assertEqual(_messages(eps.validate_endpoint_slice(obj)),
                         ["addressType: Required value"])
        obj = _slice(addr="IPv5")
        self.assertEqual(_messages(eps.validate_endpoint_slice(obj)), [
            'addressType: Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"'])

    def test_addresses(self):
        """An endpoint needs an address; IPv4 slices refuse IPv6 and loopback addresses."""
        obj = _slice(endpoints=[{"addresses": []}, {"addresses": ["::1"]},
                                {"addresses": ["127.0.0.1"]}])
        self.assertEqual(_messages(eps.validate_endpoint_slice(obj)), [
            "endpoints[0].addresses: Required value: must contain at least 1 address",
            'endpoints[1].addresses[0]: Invalid value: "::1": must be a valid IPv4 address',
            'endpoints[1].addresses[0]: Invalid value: "::1": may not be in the loopback range '
            "(127.0.0.0/8, ::1/128)",
            'endpoints[2].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback '
            "range (127.0.0.0/8, ::1/128)",
        ])

    def test_duplicate_port_names(self):
        """Two ports with the same name are a Duplicate value."""
        obj = _slice(ports=[{"name": "http", "port": 80, "protocol": "TCP"},
                            {"name": "http", "port": 81, "protocol": "TCP"}])
        self.assertEqual(_messages(eps.validate_endpoint_slice(obj)),
                         ['ports[1].name: Duplicate value: "http"'])

    def test_topology_dropped(self):
        """v1 writes drop deprecatedTopology."""
        obj = _slice(endpoints=[{"addresses": ["10.0.0.1"],
                                 "deprecatedTopology": {"kubernetes.io/hostname": "n1"}}])
        eps.prepare_endpoint_slice_for_create(obj)
        self.assertEqual(obj["endpoints"], [{"addresses": ["10.0.0.1"]}])
        self.assertEqual(obj["metadata"]["generation"], 1)

    def test_row(self):
        """Ports and endpoints columns list at most three, then '+ N more...'."""
        obj = _slice(ports=[{"port": 80}, {"name": "x"}],
                     endpoints=[{"addresses": ["10.0.0.%d" % i]} for i in range(1, 5)])
        self.assertEqual(ENDPOINT_SLICE_TABLE.row(obj)[:4], [
            "web-abc", "IPv4", "80,x", "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more..."])
        self.assertEqual(ENDPOINT_SLICE_TABLE.row(_slice(endpoints=[]))[2:4],
                         ["<unset>", "<unset>"])


class DiscoveryHTTPTests(KubeTestCase):
    def test_create(self):
        """POST an EndpointSlice: port defaults and generation 1."""
        code, body, _ = self.request(
            "POST", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
            _slice(ports=[{"port": 80}]))
        self.assertEqual(code, 201)
        self.assertEqual(body["ports"], [{"name": "", "port": 80, "protocol": "TCP"}])
        self.assertEqual(body["metadata"]["generation"], 1)

    def test_address_type_immutable(self):
        """Changing addressType on update is refused."""
        path = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
        code, body, _ = self.request("POST", path, _slice())
        self.assertEqual(code, 201)
        body["addressType"] = "FQDN"
        body["endpoints"] = [{"addresses": ["a.example.com"]}]
        code, out, _ = self.request("PUT", path + "/web-abc", body)
        self.assertEqual((code, out["message"]), (422, (
            'EndpointSlice.discovery.k8s.io "web-abc" is invalid: addressType: Invalid value: '
            '"FQDN": field is immutable')))
