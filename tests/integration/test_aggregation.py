# -*- test-case-name: tests.integration.test_aggregation -*-
"""
Issue 13's aggregation acceptance (items 1-4) with real processes: a C{twistd kubeapi} (default
flags: RBAC, aggregator routing) with a front-proxy client certificate, and a small HTTPS
extension server (L{tests.integration.aggregated_backend}) inside a network namespace, behind a
Service without selector whose Endpoints and EndpointSlice name the namespace's address (upstream
validation refuses loopback endpoints).  Requests through the aggregator reach the backend with
the user's identity, a watch streams, an Upgrade is relayed, RBAC at the front refuses, and
stopping the backend turns the APIService unavailable (503) until it is started again.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import KubeAPIProcess, ServerFixture, ServerTestMixin, class_units
from tests.netns import skip_reason
from tests.pki import CA

GROUP, VERSION = "example.kubetwist.io", "v1"
THINGS = f"/apis/{GROUP}/{VERSION}/namespaces/default/things"
BACKEND = os.path.join(os.path.dirname(__file__), "aggregated_backend.py")


def eventually(probe, timeout: float, interval: float = 0.25):
    """C{probe()} until it returns a true value or C{timeout} seconds passed (its last
    value)."""
    deadline = time.monotonic() + timeout
    while True:
        result = probe()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(interval)


class AggregationFixture(ServerFixture):
    """The kube-apiserver, the backend's namespace and certificates."""

    ns: object = None
    backend: object = None
    files: dict = None  # type: ignore[assignment]
    ca: CA = None  # type: ignore[assignment]

    def start_backend(self) -> None:
        self.backend = self.ns.popen(
            [sys.executable, BACKEND, self.ns.address, "443", self.files["serving.crt"],
             self.files["serving.key"], self.files["proxy-ca.crt"]],
            stdout=open(os.path.join(self.work_dir, "backend.log"), "ab"),
            stderr=subprocess.STDOUT)

        def listening() -> bool:
            try:
                socket.create_connection((self.ns.address, 443), timeout=1).close()
                return True
            except OSError:
                return False

        if not eventually(listening, 30):
            raise AssertionError("the backend did not start")

    def stop_backend(self) -> None:
        self.backend.terminate()
        self.backend.wait(10)

    def close(self) -> None:
        if self.ns is not None:
            self.ns.close()
        super().close()


class AggregationTests(ServerTestMixin, SynchronousTestCase):
    """One kube-apiserver and one backend for the class."""

    @classmethod
    def start_fixture(cls) -> ServerFixture:
        work = tempfile.mkdtemp(prefix="kubetwist-agg-")
        proxy_ca = CA("front-proxy-ca")
        proxy = proxy_ca.issue("front-proxy-client", client=True)
        serving_ca = CA("backend-ca")
        serving = serving_ca.issue("backend", dns_names=["backend.default.svc"])
        files = {"proxy-ca.crt": proxy_ca.cert, "proxy.crt": proxy.cert, "proxy.key": proxy.key,
                 "serving.crt": serving.cert, "serving.key": serving.key}
        paths = {}
        for name, data in files.items():
            paths[name] = os.path.join(work, name)
            with open(paths[name], "wb") as f:
                f.write(data)
        server = KubeAPIProcess(extra_args=[f"--proxy-client-cert-file={paths['proxy.crt']}",
                                            f"--proxy-client-key-file={paths['proxy.key']}"])
        fixture = AggregationFixture(server, work_dir=work)
        fixture.files = paths
        try:
            server.start()
            fixture.ns = _Holder.namespace()
            fixture.start_backend()
            _register(server, fixture.ns.address, serving_ca.cert)
        except BaseException:
            fixture.close()
            raise
        return fixture

    def setUp(self) -> None:
        reason = skip_reason()
        if reason:
            self.skipTest(reason)
        super().setUp()
        self.wait_available()

    # --- helpers ---------------------------------------------------------------
    def condition(self) -> dict:
        out = self.server.kubectl("get", "apiservice", f"{VERSION}.{GROUP}", "-o", "json").stdout
        for c in json.loads(out).get("status", {}).get("conditions", []):
            if c["type"] == "Available":
                return c
        return {}

    def wait_available(self, timeout: float = 60) -> None:
        ok = eventually(lambda: self.condition().get("status") == "True", timeout)
        self.assertTrue(ok, f"APIService not available: {self.condition()}\n"
                            f"{self.server.log_tail()}")

    def get_raw(self, path: str, check: bool = True):
        return self.server.kubectl("get", "--raw", path, check=check)

    # --- tests ---------------------------------------------------------------
    def test_get_reaches_backend_with_identity(self) -> None:
        """C{kubectl get --raw} through the aggregator: the backend sees the user in
        C{X-Remote-*}, the front-proxy certificate, and no C{Authorization}."""
        obj = json.loads(self.get_raw(f"{THINGS}/one").stdout)
        who = json.loads(self.server.kubectl("auth", "whoami", "-o", "json").stdout)
        info = who["status"]["userInfo"]
        self.assertEqual(obj["identity"]["user"], info["username"])
        self.assertEqual(sorted(obj["identity"]["groups"]), sorted(info["groups"]))
        self.assertEqual(obj["identity"]["proxyClient"], "front-proxy-client")
        self.assertFalse(obj["identity"]["authorization"])
        lst = json.loads(self.get_raw(THINGS).stdout)
        self.assertEqual([i["metadata"]["name"] for i in lst["items"]], ["one"])

    def test_request_body_reaches_backend(self) -> None:
        """A 1 MiB request body arrives whole, with its content type."""
        body = json.dumps({"kind": "Thing", "data": "x" * (1 << 20)}).encode()
        r = self.server.request("POST", THINGS, body)
        self.assertEqual(r.status, 201, r.body[:500])
        answer = r.json()
        self.assertEqual((answer["receivedBytes"], answer["contentType"]),
                         (len(body), "application/json"))

    def test_watch_streams(self) -> None:
        """A watch's first event arrives while the backend's response goes on."""
        p = self.server.kubectl_popen("get", "--raw", f"{THINGS}?watch=true")
        self.addCleanup(lambda: (p.kill(), p.wait()))
        first = p.stdout.readline()
        self.assertEqual(json.loads(first)["type"], "ADDED")
        second = p.stdout.readline()
        self.assertEqual(json.loads(second)["type"], "MODIFIED")
        self.assertIsNone(p.poll())

    def _upgrade(self, extra: bytes) -> None:
        context = ssl.create_default_context(cafile=self.server.ca_file)
        context.load_cert_chain(self.server.admin_cert_file, self.server.admin_key_file)
        context.set_alpn_protocols(["http/1.1"])
        raw = socket.create_connection(("127.0.0.1", self.server.port), timeout=30)
        conn = context.wrap_socket(raw, server_hostname="127.0.0.1")
        self.addCleanup(conn.close)
        conn.sendall(b"POST " + THINGS.encode() + b"/one/exec?command=cat HTTP/1.1\r\n"
                     b"Host: 127.0.0.1\r\nConnection: Upgrade\r\n" + extra + b"\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = conn.recv(4096)
            self.assertTrue(chunk, head)
            head += chunk
        head, _, rest = head.partition(b"\r\n\r\n")
        self.assertTrue(head.startswith(b"HTTP/1.1 101 "), head)
        seen = [line for line in head.split(b"\r\n") if line.startswith(b"X-Remote-Seen: ")]
        self.assertEqual(json.loads(seen[0][len(b"X-Remote-Seen: "):])["proxyClient"],
                         "front-proxy-client")
        for message in (b"hello", b"streams both ways"):
            conn.sendall(message)
            got = rest
            while len(got) < len(message):
                got += conn.recv(4096)
            rest = b""
            self.assertEqual(got, message.upper())

    def test_upgrade_spdy(self) -> None:
        """An exec-style SPDY Upgrade: the backend's 101, then bytes both ways."""
        self._upgrade(b"Upgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n")

    def test_upgrade_websocket(self) -> None:
        """A WebSocket Upgrade is relayed the same way."""
        self._upgrade(b"Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                      b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                      b"Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n")

    def test_rbac_at_the_front(self) -> None:
        """A ServiceAccount without rights gets the front's 403 Status."""
        self.server.kubectl("create", "serviceaccount", "nobody", "-n", "default", check=False)
        token = self.server.kubectl("create", "token", "nobody", "-n", "default").stdout.strip()
        r = self.server.request("GET", f"{THINGS}/one", client_cert=False, token=token)
        self.assertEqual(r.status, 403, r.body)
        self.assertEqual(r.json()["message"],
                         f'things.{GROUP} "one" is forbidden: User '
                         f'"system:serviceaccount:default:nobody" cannot get resource "things" '
                         f'in API group "{GROUP}" in the namespace "default"')

    def test_api_resources_and_discovery(self) -> None:
        """C{kubectl api-resources} lists the backend's resources (aggregated discovery);
        C{/apis} and C{/apis/<group>} name the group."""
        out = self.server.kubectl("api-resources", f"--api-group={GROUP}").stdout
        self.assertIn("things", out)
        self.assertIn("th", out)
        groups = json.loads(self.get_raw("/apis").stdout)["groups"]
        self.assertIn(GROUP, [g["name"] for g in groups])
        group = json.loads(self.get_raw(f"/apis/{GROUP}").stdout)
        self.assertEqual(group["preferredVersion"]["groupVersion"], f"{GROUP}/{VERSION}")

    def test_openapi_merged(self) -> None:
        """C{/openapi/v3} lists the backend's group-version; v2 has its definitions."""
        root = json.loads(eventually(
            lambda: (out := self.get_raw("/openapi/v3").stdout) and f"apis/{GROUP}/{VERSION}"
            in out and out, 60) or "{}")
        url = root["paths"][f"apis/{GROUP}/{VERSION}"]["serverRelativeURL"]
        doc = json.loads(self.get_raw(url).stdout)
        self.assertIn("io.kubetwist.example.v1.Thing", doc["components"]["schemas"])
        v2 = json.loads(self.get_raw("/openapi/v2").stdout)
        self.assertIn("io.kubetwist.example.v1.Thing", v2["definitions"])
        explained = self.server.kubectl("explain", "things.spec").stdout
        self.assertIn("color\t<string>", explained)
        self.assertIn("The color of the thing.", explained)

    def test_unavailable_then_recovers(self) -> None:
        """Stopping the backend: 503s, C{Available=False} with C{FailedDiscoveryCheck} within
        30 s; starting it again: available and served again."""
        self.fixture.stop_backend()
        stopped = time.monotonic()
        try:
            r = self.server.request("GET", f"{THINGS}/one")
            self.assertEqual(r.status, 503, r.body)
            cond = eventually(lambda: (c := self.condition()).get("status") == "False" and c,
                              30)
            self.assertTrue(cond, self.condition())
            self.assertLessEqual(time.monotonic() - stopped, 30)
            self.assertEqual(cond["reason"], "FailedDiscoveryCheck")
            self.assertIn(f"failing or missing response from https://"
                          f"{self.fixture.ns.address}:443/apis/{GROUP}/{VERSION}",
                          cond["message"])
            r = self.server.request("GET", f"{THINGS}/one")
            self.assertEqual((r.status, r.body), (503, b"service unavailable\n"))
            self.assertEqual(r.headers["content-type"], "text/plain; charset=utf-8")
        finally:
            self.fixture.start_backend()
        self.wait_available(60)
        self.assertEqual(self.condition()["reason"], "Passed")
        self.assertEqual(self.server.request("GET", f"{THINGS}/one").status, 200)


class _Holder:
    """Builds the network namespace outside a test (the fixture outlives one test)."""

    @staticmethod
    def namespace():
        from tests.netns import NetworkNamespace

        return NetworkNamespace()


def _register(server: KubeAPIProcess, address: str, ca: bytes) -> None:
    """Service without selector, Endpoints and EndpointSlice naming C{address}, and the
    APIService."""
    objects = [
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "backend", "namespace": "default"},
         "spec": {"ports": [{"port": 443, "targetPort": 443, "protocol": "TCP"}]}},
        {"apiVersion": "v1", "kind": "Endpoints",
         "metadata": {"name": "backend", "namespace": "default"},
         "subsets": [{"addresses": [{"ip": address}], "ports": [{"port": 443}]}]},
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {"name": "backend-1", "namespace": "default",
                      "labels": {"kubernetes.io/service-name": "backend"}},
         "addressType": "IPv4",
         "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
         "ports": [{"port": 443, "protocol": "TCP"}]},
        {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
         "metadata": {"name": f"{VERSION}.{GROUP}"},
         "spec": {"group": GROUP, "version": VERSION, "groupPriorityMinimum": 1000,
                  "versionPriority": 15, "caBundle": base64.b64encode(ca).decode(),
                  "service": {"namespace": "default", "name": "backend", "port": 443}}},
    ]
    server.kubectl("create", "-f", "-", input="\n".join(json.dumps(o) for o in objects))


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
