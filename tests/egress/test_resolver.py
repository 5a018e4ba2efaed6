"""Tests for L{kubetwist.egress.resolver}."""

from __future__ import annotations

import random

from twisted.internet.defer import ensureDeferred
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.egress.resolver import Address, ServiceResolver
from kubetwist.runtime.errors import StatusError


def _svc(name: str = "hook", ports: list | None = None, **spec) -> dict:
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("clusterIP", "10.0.0.9")
    spec["ports"] = ports if ports is not None else [
        {"name": "https", "port": 443, "targetPort": 8443}]
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": spec}


def _slice(addresses: list, port: int = 8443, name: str = "https", ready=None,
           family: str = "IPv4") -> dict:
    eps = [{"addresses": [a], **({"conditions": {"ready": ready}} if ready is not None else {})}
           for a in addresses]
    return {"addressType": family, "endpoints": eps, "ports": [{"name": name, "port": port}]}


class ResolverTests(SynchronousTestCase):
    def resolver(self, svc=None, slices=(), endpoints=None, routing=True) -> ServiceResolver:
        async def get_service(ns, name):
            return svc

        async def list_slices(ns, name):
            return list(slices)

        async def get_endpoints(ns, name):
            return endpoints

        return ServiceResolver(get_service, list_slices, get_endpoints, routing,
                               random.Random(1))

    def resolve(self, r: ServiceResolver, port: int = 443):
        return self.successResultOf(ensureDeferred(r.resolve("ns", "hook", port)))

    def failure(self, r: ServiceResolver, port: int = 443) -> StatusError:
        return self.failureResultOf(ensureDeferred(r.resolve("ns", "hook", port)),
                                    StatusError).value

    def test_endpoint_slice(self) -> None:
        """The service port's name selects the slice port; the address is a ready endpoint,
        the server name C{<svc>.<ns>.svc}."""
        r = self.resolver(_svc(), [_slice(["10.213.1.2"])])
        self.assertEqual(self.resolve(r), Address("10.213.1.2", 8443, "hook.ns.svc"))
        self.assertEqual(self.resolve(r).netloc, "10.213.1.2:8443")

    def test_not_ready_skipped(self) -> None:
        r = self.resolver(_svc(), [_slice(["10.213.1.6"], ready=False), _slice(["10.213.1.2"])])
        for _ in range(5):
            self.assertEqual(self.resolve(r).host, "10.213.1.2")

    def test_no_ready_endpoint(self) -> None:
        e = self.failure(self.resolver(_svc(), [_slice(["10.213.1.6"], ready=False)]))
        self.assertEqual((e.code, e.reason, e.message),
                         (503, "ServiceUnavailable",
                          'no endpoints available for service "hook"'))

    def test_other_port_name(self) -> None:
        e = self.failure(self.resolver(_svc(), [_slice(["10.213.1.2"], name="metrics")]))
        self.assertEqual(e.code, 503)

    def test_no_such_service_port(self) -> None:
        e = self.failure(self.resolver(_svc(), [_slice(["10.213.1.2"])]), port=444)
        self.assertEqual((e.code, e.message),
                         (503, 'no service port 444 found for service "hook"'))

    def test_missing_service(self) -> None:
        e = self.failure(self.resolver(None))
        self.assertEqual((e.code, e.reason, e.message),
                         (404, "NotFound", 'services "hook" not found'))

    def test_endpoints_fallback(self) -> None:
        """Without slices, the v1 Endpoints subsets are read."""
        eps = {"subsets": [{"addresses": [{"ip": "10.213.1.2"}],
                            "ports": [{"name": "https", "port": 9443}]}]}
        r = self.resolver(_svc(), [], eps)
        self.assertEqual(self.resolve(r), Address("10.213.1.2", 9443, "hook.ns.svc"))
        self.assertEqual(self.failure(self.resolver(_svc(), [], None)).code, 503)

    def test_unnamed_port(self) -> None:
        r = self.resolver(_svc(ports=[{"port": 443, "targetPort": 8443}]),
                          [_slice(["10.213.1.2"], name="")])
        self.assertEqual(self.resolve(r).port, 8443)

    def test_unsupported_type(self) -> None:
        e = self.failure(self.resolver(_svc(type="ExternalName"), [_slice(["10.213.1.2"])]))
        self.assertEqual(e.code, 500)
        self.assertIn('unsupported service type "ExternalName"', e.message)

    def test_cluster_ip(self) -> None:
        """Without routing the ClusterIP and the service port are used (C{ResolveCluster})."""
        r = self.resolver(_svc(), routing=False)
        self.assertEqual(self.resolve(r), Address("10.0.0.9", 443, "hook.ns.svc"))
        e = self.failure(self.resolver(_svc(clusterIP="None"), routing=False))
        self.assertIn('cannot route to service with ClusterIP "None"', e.message)
        r = self.resolver(_svc(type="ExternalName", externalName="hooks.example"),
                          routing=False)
        self.assertEqual(self.resolve(r, 8443).netloc, "hooks.example:8443")

    def test_preferred_family(self) -> None:
        """Slices of the Service's first IP family are tried first."""
        r = self.resolver(_svc(ipFamilies=["IPv6"]),
                          [_slice(["10.213.1.2"]), _slice(["fd00::2"], family="IPv6")])
        self.assertEqual(self.resolve(r).netloc, "[fd00::2]:8443")
