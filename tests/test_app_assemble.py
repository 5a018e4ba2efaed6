"""
Tests for L{kubetwist.app}: the composition root (upstream C{CreateServerChain}): the
three servers delegate aggregator -> kube-apiserver -> apiextensions behind one handler chain,
with health, version and discovery on the front, and the storage health checks.
"""

from __future__ import annotations

import ipaddress

from twisted.internet import defer
from twisted.python.failure import Failure
from twisted.trial.unittest import SynchronousTestCase

from kubetwist import app as run
from kubetwist.server.healthz import storage_health_check
from tests.support import KubeTestCase


class AssembleTests(KubeTestCase):
    """L{run.assemble}, as the test chain (and the process) builds it."""

    def test_delegation_order(self) -> None:
        """The front server is the aggregator's; its delegates are kube-apiserver's, then
        apiextensions-apiserver's."""
        self.assertIs(self.front, self.aggregator.server)
        self.assertEqual(list(self.front.chain()),
                         [self.aggregator.server, self.kube.server,
                          self.apiextensions.server])

    def test_each_server_answers_its_groups(self) -> None:
        """Each group is served through the one chain, whichever server holds it."""
        for path, kind in (("/apis/apiregistration.k8s.io/v1", "APIResourceList"),
                           ("/api/v1", "APIResourceList"),
                           ("/apis/apps/v1", "APIResourceList"),
                           ("/apis/apiextensions.k8s.io/v1", "APIResourceList")):
            code, body, _ = self.request("GET", path)
            self.assertEqual((code, body["kind"]), (200, kind), path)

    def test_unknown_path_is_404_status(self) -> None:
        """A path no server serves falls through to a 404."""
        code, _, _ = self.request("GET", "/apis/nothing.example.com/v1/widgets")
        self.assertEqual(code, 404)

    def test_health_and_version(self) -> None:
        """The front serves /healthz (with the storage check), /readyz and /version."""
        code, body, _ = self.request("GET", "/healthz?verbose")
        self.assertEqual(code, 200)
        for check in ("[+]ping ok", "[+]log ok", "[+]etcd ok"):
            self.assertIn(check, body)
        code, body, _ = self.request("GET", "/readyz?verbose")
        self.assertEqual(code, 200)
        self.assertIn("[+]etcd-readiness ok", body)
        self.assertIn("[+]shutdown ok", body)
        code, body, _ = self.request("GET", "/version")
        self.assertEqual((code, body["gitVersion"]), (200, "v1.32.0"))

    def test_shutdown_fails_readiness(self) -> None:
        """The shutdown check makes /readyz fail while /healthz stays up."""
        self.shutting_down = True
        self.assertEqual(self.request("GET", "/readyz")[0], 500)
        self.assertEqual(self.request("GET", "/healthz")[0], 200)

    def test_one_admission_chain(self) -> None:
        """The stored resources of kube-apiserver and apiextensions-apiserver share
        kube-apiserver's admission chain.  (The create-only review groups, installed after
        the sharing, have none yet: upstream's review REST runs createValidation.)"""
        handlers = [res.handlers for server in (self.kube.server, self.apiextensions.server)
                    for path, agv in server.group_versions.items()
                    if not path.startswith(("/apis/authentication.k8s.io",
                                            "/apis/authorization.k8s.io"))
                    for res in agv.resources.values()]
        self.assertTrue(handlers)
        self.assertTrue(all(h.admission is self.kube.admission for h in handlers))


class StorageHealthCheckTests(SynchronousTestCase):
    """L{kubetwist.server.healthz.storage_health_check}."""

    def test_without_probe(self) -> None:
        """A storage without C{check_health} is healthy."""
        self.assertIsNone(storage_health_check(object(), "etcd")())

    def test_probe_result(self) -> None:
        """The probe's Deferred is the check's; a failure stays a failure."""
        class Healthy:
            def check_health(self):
                return defer.succeed(None)

        class Broken:
            def check_health(self):
                raise RuntimeError("no quorum")

        self.assertIsNone(self.successResultOf(storage_health_check(Healthy(), "etcd")()))
        failure = self.failureResultOf(storage_health_check(Broken(), "etcd")())
        self.assertIsInstance(failure, Failure)
        self.assertEqual(failure.getErrorMessage(), "no quorum")
        self.flushLoggedErrors(RuntimeError)


class HostAddressTests(SynchronousTestCase):
    def test_is_an_ipv4_address(self) -> None:
        """host_address answers an IPv4 address (the default route's interface's, else one
        of the host name's, else loopback)."""
        self.assertEqual(ipaddress.ip_address(run.host_address()).version, 4)


class VersionInfoTests(SynchronousTestCase):
    def test_version_info(self) -> None:
        """C{/version}'s fields from the gitVersion, with Go's field names."""
        info = run.KubeAPIService(None, {}, "v1.32.0").version_info()
        self.assertEqual((info["major"], info["minor"], info["gitVersion"]),
                         ("1", "32", "v1.32.0"))
        self.assertEqual(set(info), {"major", "minor", "gitVersion", "gitCommit",
                                     "gitTreeState", "buildDate", "goVersion", "compiler",
                                     "platform"})
