"""The composition root: L{kubetwist.app} (the process's service tree, and assemble)."""

from __future__ import annotations

import os

from twisted.internet import defer, reactor
from twisted.trial.unittest import SynchronousTestCase, TestCase

from kubetwist.app import KubeAPIService
from kubetwist.server.filters.chain import HandlerChain
from kubetwist.server.healthz import storage_health_check
from tests.support import KubeTestCase


class _Storage:
    def __init__(self, healthy: bool) -> None:
        self.healthy = healthy

    def check_health(self):
        return defer.succeed(None) if self.healthy else defer.fail(RuntimeError("down"))


class HealthCheckTests(SynchronousTestCase):
    def test_storage_health(self) -> None:
        """The etcd check passes with the storage's probe and fails (logged) with it."""
        self.successResultOf(storage_health_check(_Storage(True), "etcd")())
        self.failureResultOf(storage_health_check(_Storage(False), "etcd")(), RuntimeError)
        self.assertIsNone(storage_health_check(object(), "etcd")())


class VersionTests(SynchronousTestCase):
    def test_version_info(self) -> None:
        """/version's document comes from the version string."""
        info = KubeAPIService(None, {}, "v1.32.0").version_info()
        self.assertEqual((info["major"], info["minor"], info["gitVersion"]),
                         ("1", "32", "v1.32.0"))


class AssembleTests(KubeTestCase):
    def test_front_is_the_filter_chain(self) -> None:
        """assemble puts the handler chain in front of the aggregator's director, with the
        default admission plugins that kubetwist has built."""
        self.assertIsInstance(self.chain, HandlerChain)
        from kubetwist.admission import registry

        self.assertEqual([p.name for p in self.kube.admission.plugins],
                         [n for n in registry.default_enabled_plugins()
                          if registry.PLUGINS[n] is not None])
        self.assertEqual([p.name for p in self.kube.admission.plugins][:3],
                         ["NamespaceLifecycle", "LimitRanger", "ServiceAccount"])


class EmbeddedStoreTests(TestCase):
    """The process's embedded store: --embedded-sync, and a private data directory."""

    async def test_build_storage(self) -> None:
        from kubetwist.tap import Options

        data_dir = os.path.abspath(self.mktemp())
        options = Options()
        options.parseOptions([f"--data-dir={data_dir}", "--embedded-sync=full"])
        service = KubeAPIService(reactor, dict(options), "v1.32.0")
        storage = service.build_storage()
        self.addCleanup(storage.stop)
        await storage.ready
        self.assertEqual(storage._conn.execute("PRAGMA synchronous").fetchone()[0], 2)
        self.assertEqual(os.stat(os.path.join(data_dir, "state.db")).st_mode & 0o777, 0o600)
