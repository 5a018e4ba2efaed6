# -*- test-case-name: tests.registry.test_service -*-
"""
Tests for L{kubetwist.registry.core.service.ServiceAllocations}, through the whole server:
ClusterIP and NodePort allocation on create (real and dry run), carry-over on update, release
on delete, with the answers kube-apiserver v1.32 gives (recorded against it with
C{--service-cluster-ip-range=10.0.0.0/24}, the test chain's range).
"""

from __future__ import annotations

from tests.support import KubeTestCase

SERVICES = "/api/v1/namespaces/default/services"


def svc(name: str, **spec) -> dict:
    body = {"ports": [{"port": 80}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": body}


class ClusterIPTests(KubeTestCase):
    def create(self, obj: dict, query: str = "") -> tuple[int, dict]:
        code, body, _ = self.request("POST", SERVICES + query, obj)
        return code, body

    def test_dynamic_ip_in_range(self) -> None:
        """A ClusterIP service gets a free IP of the range, in clusterIP and clusterIPs."""
        code, body = self.create(svc("a"))
        self.assertEqual(code, 201)
        ip = body["spec"]["clusterIP"]
        self.assertTrue(ip.startswith("10.0.0.") and ip != "10.0.0.0", ip)
        self.assertEqual(body["spec"]["clusterIPs"], [ip])

    def test_requested_ip_taken(self) -> None:
        """A requested IP already in use is 422 printing clusterIPs as Go's %#v."""
        self.assertEqual(self.create(svc("a", clusterIP="10.0.0.50"))[0], 201)
        code, body = self.create(svc("b", clusterIP="10.0.0.50"))
        self.assertEqual((code, body["message"]), (
            422, 'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.50"}: '
                 'failed to allocate IP 10.0.0.50: provided IP is already allocated'))
        self.assertEqual(body["details"]["causes"], [{
            "reason": "FieldValueInvalid", "field": "spec.clusterIPs",
            "message": 'Invalid value: []string{"10.0.0.50"}: failed to allocate IP 10.0.0.50: '
                       'provided IP is already allocated'}])

    def test_requested_ip_out_of_range(self) -> None:
        code, body = self.create(svc("c", clusterIP="10.1.0.5"))
        self.assertEqual((code, body["message"]), (
            422, 'Service "c" is invalid: spec.clusterIPs: Invalid value: []string{"10.1.0.5"}: '
                 'failed to allocate IP 10.1.0.5: the provided IP (10.1.0.5) is not in the valid '
                 'range. The range of valid IPs is 10.0.0.0/24'))

    def test_dry_run(self) -> None:
        """A dry run reserves nothing and checks a requested IP's range only (upstream: "racy
        and not worth the effort"); an unrequested IP shows the range's base address."""
        code, body = self.create(svc("a", clusterIP="10.0.0.60"), "?dryRun=All")
        self.assertEqual((code, body["spec"]["clusterIP"]), (201, "10.0.0.60"))
        self.assertEqual(self.create(svc("a", clusterIP="10.0.0.60"))[0], 201)
        code, body = self.create(svc("b", clusterIP="10.0.0.60"), "?dryRun=All")
        self.assertEqual((code, body["spec"]["clusterIPs"]), (201, ["10.0.0.60"]))
        code, body = self.create(svc("c"), "?dryRun=All")
        self.assertEqual((code, body["spec"]["clusterIPs"]), (201, ["10.0.0.0"]))
        code, body = self.create(svc("d", clusterIP="10.1.0.60"), "?dryRun=All")
        self.assertEqual(code, 422)

    def test_delete_releases(self) -> None:
        """A deleted service's IP can be requested again."""
        self.create(svc("a", clusterIP="10.0.0.70"))
        self.assertEqual(self.request("DELETE", SERVICES + "/a")[0], 200)
        self.assertEqual(self.create(svc("b", clusterIP="10.0.0.70"))[0], 201)

    def test_update_keeps_ip(self) -> None:
        """A PUT without clusterIP keeps the allocated one."""
        _, created = self.create(svc("a"))
        body = svc("a")
        body["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
        code, updated, _ = self.request("PUT", SERVICES + "/a", body)
        self.assertEqual((code, updated["spec"]["clusterIPs"]),
                         (200, created["spec"]["clusterIPs"]))

    def test_headless(self) -> None:
        """clusterIP None allocates nothing."""
        code, body = self.create(svc("h", clusterIP="None"))
        self.assertEqual((code, body["spec"]["clusterIPs"]), (201, ["None"]))


class NodePortTests(KubeTestCase):
    def create(self, obj: dict, query: str = "") -> tuple[int, dict]:
        code, body, _ = self.request("POST", SERVICES + query, obj)
        return code, body

    def test_requested_port(self) -> None:
        """A requested node port is allocated once; a second request is 422."""
        ports = [{"port": 80, "nodePort": 30080}]
        code, body = self.create(svc("d", type="NodePort", ports=ports))
        self.assertEqual((code, body["spec"]["ports"][0]["nodePort"]), (201, 30080))
        code, body = self.create(svc("e", type="NodePort", ports=ports))
        self.assertEqual((code, body["message"]), (
            422, 'Service "e" is invalid: spec.ports[0].nodePort: Invalid value: 30080: '
                 'provided port is already allocated'))
        code, body = self.create(svc("e", type="NodePort", ports=ports), "?dryRun=All")
        self.assertEqual(code, 422)

    def test_port_out_of_range(self) -> None:
        code, body = self.create(svc("f", type="NodePort", ports=[{"port": 80, "nodePort": 80}]))
        self.assertEqual((code, body["message"]), (
            422, 'Service "f" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided '
                 'port is not in the valid range. The range of valid ports is 30000-32767'))

    def test_dynamic_port(self) -> None:
        """An unrequested node port is a free port of the range, kept across an update."""
        code, created = self.create(svc("n", type="NodePort"))
        port = created["spec"]["ports"][0]["nodePort"]
        self.assertTrue(30000 <= port <= 32767, port)
        body = svc("n", type="NodePort")
        body["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
        code, updated, _ = self.request("PUT", SERVICES + "/n", body)
        self.assertEqual((code, updated["spec"]["ports"][0]["nodePort"]), (200, port))

    def test_dry_run_dynamic_ports(self) -> None:
        """A dry run answers upstream's placeholder ports: 32769, then one past the highest
        port the operation took (even a requested one)."""
        ports = [{"port": 80, "name": "a"}, {"port": 81, "name": "b"}]
        code, body = self.create(svc("n", type="NodePort", ports=ports), "?dryRun=All")
        self.assertEqual((code, [p["nodePort"] for p in body["spec"]["ports"]]),
                         (201, [32769, 32770]))
        ports = [{"port": 80, "name": "a", "nodePort": 30100}, {"port": 81, "name": "b"}]
        code, body = self.create(svc("n", type="NodePort", ports=ports), "?dryRun=All")
        self.assertEqual((code, [p["nodePort"] for p in body["spec"]["ports"]]),
                         (201, [30100, 30101]))
        code, body = self.create(svc("n", type="NodePort", ports=ports))
        self.assertEqual(code, 201)
        self.assertNotEqual(body["spec"]["ports"][1]["nodePort"], 32769)
