"""
L{kubetwist.testing.KubeServer}: thread, reactor and subprocess modes, CRDs, the default
authorization, the mixin, and a teardown that leaves no thread, file, port or process.
"""

from __future__ import annotations

import os
import socket
import threading

from twisted.internet import threads
from twisted.trial.unittest import SynchronousTestCase, TestCase

from kubetwist.endpoints.installer import APIGroupVersion
from kubetwist.testing import KubeServer, KubeServerMixin, ServerStartError

HERE = os.path.dirname(os.path.abspath(__file__))
CRD = os.path.join(HERE, "widgets-crd.yaml")


def open_fds() -> set[str]:
    """This process's open file descriptors, by target (sockets, files)."""
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            out.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass
    return out


def refused(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


class ThreadModeTests(SynchronousTestCase):
    def test_lifecycle_leaves_nothing(self) -> None:
        """Started, the server is ready (/readyz ok) with the CRD served; stopped, no thread,
        descriptor, file or listening port is left."""
        threads_before = set(threading.enumerate())
        fds_before = open_fds()
        server = KubeServer([CRD]).start()
        try:
            self.assertTrue(server.url.startswith("https://127.0.0.1:"))
            self.assertEqual(server.request("GET", "/readyz"), (200, "ok"))
            code, body = server.request("GET", "/apis/example.kubetwist.dev/v1")
            self.assertEqual([r["name"] for r in body["resources"]],
                             ["widgets", "widgets/status"])
            with open(server.kubeconfig) as f:
                self.assertIn(server.url, f.read())
            from kubernetes import client

            names = [n.metadata.name for n in
                     client.CoreV1Api(server.api_client()).list_namespace().items]
            self.assertIn("kube-system", names)
            data_dir, port = server.data_dir, server.port
            self.assertFalse(refused(port))
        finally:
            server.stop()
        self.assertFalse(os.path.exists(data_dir))
        self.assertTrue(refused(port))
        self.assertEqual(set(threading.enumerate()) - threads_before, set())
        leaked = {fd for fd in open_fds() - fds_before if not fd.startswith("/proc")}
        self.assertEqual(leaked, set())

    def test_default_authorization(self) -> None:
        """Node,RBAC as the server's default: a client without credentials is anonymous and
        refused; the admin (system:masters) is allowed."""
        import http.client
        import json
        import ssl

        with KubeServer() as server:
            context = ssl.create_default_context(cafile=server.ca_file)
            connection = http.client.HTTPSConnection("127.0.0.1", server.port,
                                                     context=context)
            connection.request("GET", "/api/v1/namespaces")
            response = connection.getresponse()
            body = json.loads(response.read())
            connection.close()
            self.assertEqual((response.status, body["reason"]), (403, "Forbidden"))
            self.assertIn('User "system:anonymous" cannot list resource "namespaces"',
                          body["message"])
            code, _ = server.request("GET", "/api/v1/namespaces")
            self.assertEqual(code, 200)

    def test_flags(self) -> None:
        """C{args} are kubeapi flags; a refused CRD fails the start and cleans up."""
        with KubeServer(args=["--service-cluster-ip-range=10.96.0.0/16"]) as server:
            code, body = server.request("GET", "/api/v1/namespaces/default/services/kubernetes")
            self.assertEqual((code, body["spec"]["clusterIP"]), (200, "10.96.0.1"))
        bad = os.path.join(self.mktemp())
        with open(bad, "w") as f:
            f.write("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                    "metadata: {name: bad}\nspec: {}\n")
        server = KubeServer([bad])
        with self.assertRaises(ServerStartError) as caught:
            server.start()
        self.assertIn("CRD bad refused (422)", str(caught.exception))
        self.assertIsNone(server.data_dir)

    def test_port_taken(self) -> None:
        """A port taken between the free-port probe and the listen: another port is tried."""
        from kubetwist.testing import server as module

        blocker = socket.socket()
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        self.addCleanup(blocker.close)
        ports = [blocker.getsockname()[1]]
        real = module._free_port
        self.patch(module, "_free_port", lambda: ports.pop() if ports else real())
        with KubeServer() as server:
            self.assertNotEqual(server.port, blocker.getsockname()[1])
            self.assertEqual(server.request("GET", "/readyz"), (200, "ok"))

    def test_call(self) -> None:
        """C{call} runs on the reactor's thread."""
        with KubeServer() as server:
            self.assertIs(server.call(threading.current_thread), server._thread)


class SubprocessModeTests(SynchronousTestCase):
    def test_subprocess(self) -> None:
        """C{mode="subprocess"}: a twistd kubeapi child, ready, then gone."""
        server = KubeServer([CRD], mode="subprocess").start()
        try:
            process, data_dir = server.process, server.data_dir
            self.assertEqual(server.request("GET", "/readyz"), (200, "ok"))
            code, _ = server.request(
                "GET", "/apis/example.kubetwist.dev/v1/namespaces/default/widgets")
            self.assertEqual(code, 200)
        finally:
            server.stop()
        self.assertIsNotNone(process.returncode)
        self.assertTrue(refused(server.port))
        self.assertFalse(os.path.exists(data_dir))


class ReactorModeTests(TestCase):
    """C{mode="reactor"}: in trial's reactor; the test's reactor is left clean."""

    async def test_in_reactor(self) -> None:
        from twisted.internet import reactor

        server = KubeServer([CRD], mode="reactor")
        await server.start_in_reactor(reactor)
        try:
            code, body = await threads.deferToThread(server.request, "GET", "/readyz")
            self.assertEqual((code, body), (200, "ok"))
            code, _ = await threads.deferToThread(
                server.request, "POST", "/apis/example.kubetwist.dev/v1/namespaces/default/"
                "widgets", {"apiVersion": "example.kubetwist.dev/v1", "kind": "Widget",
                            "metadata": {"name": "w"}, "spec": {"size": 1}})
            self.assertEqual(code, 201)
        finally:
            await server.stop_in_reactor()
        self.assertIsNone(server.data_dir)


class MixinTests(KubeServerMixin, SynchronousTestCase):
    """The tests of a mixin class share one server."""

    seen: list = []

    def test_one(self) -> None:
        self.check()

    def test_two(self) -> None:
        self.check()

    def check(self) -> None:
        from kubernetes import client

        MixinTests.seen.append(self.kube)
        self.assertEqual(len(set(map(id, MixinTests.seen))), 1)
        core = client.CoreV1Api(self.api_client)
        self.assertEqual(core.read_namespace("default").metadata.name, "default")


class LazyRouteBuilderTests(SynchronousTestCase):
    """The installer's routes compile their URL builders on first use, with the same
    result as werkzeug's eager ones."""

    def test_build_and_match(self) -> None:
        from werkzeug.routing import Map, Rule

        agv = APIGroupVersion("apps", "v1")
        rule_text = "/namespaces/<namespace>/deployments/<name>"

        @agv.app.route(rule_text, methods=["GET"])
        def get(request, namespace, name):
            return None

        adapter = agv.app.url_map.bind("kubetwist.test")
        self.assertEqual(adapter.match("/namespaces/ns/deployments/d", "GET"),
                         ("get", {"namespace": "ns", "name": "d"}))
        eager = Map([Rule(rule_text, endpoint="get", methods=["GET"])]).bind("kubetwist.test")
        values = {"namespace": "a b", "name": "d", "extra": "1"}
        self.assertEqual(adapter.build("get", values), eager.build("get", values))
        self.assertEqual(adapter.build("get", values), "/namespaces/a%20b/deployments/d?extra=1")
