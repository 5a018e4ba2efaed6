# -*- test-case-name: tests.storage.test_etcd3 -*-
"""
The L{IStorage} contract against a real etcd (L{kubetwist.storage.etcd3.Etcd3Storage}).

One C{etcd} process per test class, on free loopback ports with a temporary data directory;
each test gets its own key prefix and HTTP connection pool.  Without C{etcd} on C{PATH} the
tests are skipped, unless C{CI} is set in the environment, where they fail.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

from twisted.internet import reactor
from twisted.internet.task import deferLater
from twisted.trial.unittest import TestCase

from kubetwist.storage.etcd3 import Etcd3Storage, new_etcd_client
from kubetwist.storage.etcd3.client import GatewayClient
from kubetwist.storage.interfaces import UnreachableError
from tests.storage.contract import StorageContractMixin, pod
from tests.support import die_with_parent

ETCD = shutil.which("etcd")
_SKIP = None if ETCD or os.environ.get("CI") else (
    "etcd is not on PATH (install etcd-server to run the etcd3 contract tests)"
)
_prefixes = itertools.count(1)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EtcdServer:
    """
    A throwaway single-member etcd: C{start()} blocks until its gateway answers.

    @param tls: C{(cert_file, key_file, ca_file)}: serve clients over https with
        C{--client-cert-auth} (client certificates signed by C{ca_file}).
    @param client_cert: C{(cert_file, key_file)} the readiness probe presents with C{tls}.
    """

    def __init__(self, tls: tuple[str, str, str] | None = None,
                 client_cert: tuple[str, str] | None = None) -> None:
        self.data_dir = tempfile.mkdtemp(prefix="kubetwist-etcd-")
        self.client_port = free_port()
        self.peer_port = free_port()
        self.tls = tls
        self.client_cert = client_cert
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self.client_port}"
        self.process: subprocess.Popen | None = None
        self.log = None

    def _probe_context(self):
        if not self.tls:
            return None
        import ssl

        context = ssl.create_default_context(cafile=self.tls[2])
        if self.client_cert:
            context.load_cert_chain(*self.client_cert)
        return context

    def start(self, timeout: float = 30.0) -> None:
        if ETCD is None:
            raise RuntimeError("etcd is not on PATH but CI is set: the etcd tests must run")
        peer = f"http://127.0.0.1:{self.peer_port}"
        self.log = open(os.path.join(self.data_dir, "etcd.log"), "ab")
        command = [ETCD, "--name", "test", "--data-dir", os.path.join(self.data_dir, "data"),
                   "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
                   "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                   "--initial-cluster", f"test={peer}", "--logger", "zap",
                   "--log-outputs", "stderr"]
        if self.tls:
            cert, key, ca = self.tls
            command += ["--cert-file", cert, "--key-file", key, "--trusted-ca-file", ca,
                        "--client-cert-auth"]
        # no inherited stdin: a trial -j worker's stdin is its pipe from the parent, which
        # waits for every holder of it to close before it ends
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
        context = self._probe_context()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"etcd exited with {self.process.returncode}; see "
                                   f"{self.log.name}")
            try:
                request = urllib.request.Request(
                    self.url + "/v3/maintenance/status", data=b"{}", method="POST"
                )
                with urllib.request.urlopen(request, timeout=1, context=context) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("etcd did not become ready in time")

    def halt(self) -> None:
        """Stop the process, keeping its data (L{start} brings the same member back)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if self.log is not None:
            self.log.close()
            self.log = None

    def stop(self) -> None:
        self.halt()
        shutil.rmtree(self.data_dir, ignore_errors=True)


class EtcdTestMixin:
    """
    Starts one etcd per test class; gives each test a client and a unique prefix.

    trial has no C{setUpClass}: the first C{setUp} of a class starts the server and the cleanup
    of the class's last test stops it (an C{atexit} hook covers partial runs).
    """

    skip = _SKIP

    @classmethod
    def _acquire(cls) -> EtcdServer:
        state = cls.__dict__.get("_etcd_state")
        if state is None:
            server = EtcdServer()
            atexit.register(server.stop)
            server.start()
            tests = [n for n in dir(cls) if n.startswith("test") and callable(getattr(cls, n))]
            state = cls._etcd_state = {"server": server, "remaining": len(tests)}
        return state["server"]

    @classmethod
    def _release(cls) -> None:
        state = cls.__dict__["_etcd_state"]
        state["remaining"] -= 1
        if state["remaining"] <= 0:
            state["server"].stop()
            atexit.unregister(state["server"].stop)

    def setUp(self) -> None:
        self.etcd = self._acquire()
        self.addCleanup(self._release)  # registered first, so it runs last
        self.prefix = f"/t{next(_prefixes)}/registry"

    def client(self) -> GatewayClient:
        client, pool = new_etcd_client(reactor)
        self.addCleanup(pool.closeCachedConnections)
        return client

    def new_store(self, client: GatewayClient, endpoints: list[str] | None = None,
                  prefix: str | None = None, **kwargs) -> Etcd3Storage:
        store = Etcd3Storage(reactor, client, endpoints or [self.etcd.url],
                             prefix=prefix or self.prefix, **kwargs)
        self.addCleanup(store.stop)
        return store


class Etcd3ContractTests(EtcdTestMixin, StorageContractMixin, TestCase):
    """The contract against a real etcd through its gateway."""

    async def make_store(self) -> Etcd3Storage:
        self.http = self.client()
        return self.new_store(self.http)

    async def reopen_store(self, store: Etcd3Storage) -> Etcd3Storage:
        await store.stop()
        return self.new_store(self.client())


class Etcd3EndpointTests(EtcdTestMixin, TestCase):
    """Endpoint failover and unreachability against a real etcd."""

    async def test_failover_to_next_endpoint(self):
        """A refused first endpoint is skipped; the next one answers and is kept."""
        dead = f"http://127.0.0.1:{free_port()}"
        store = self.new_store(self.client(), [dead, self.etcd.url])
        created = await store.create("/registry/pods/ns/a", pod("a"))
        self.assertEqual(await store.get("/registry/pods/ns/a"), created)
        self.assertEqual(store._current, 1)

    async def test_all_endpoints_down(self):
        """With no reachable endpoint calls and check_health fail with UnreachableError."""
        dead = f"http://127.0.0.1:{free_port()}"
        store = self.new_store(self.client(), [dead])
        with self.assertRaises(UnreachableError):
            await store.get("/registry/pods/ns/a")
        with self.assertRaises(UnreachableError):
            await store.check_health()

    async def test_watch_all_endpoints_down(self):
        """A watch that cannot connect when it starts sends one ERROR (504 Timeout), closes."""
        dead = f"http://127.0.0.1:{free_port()}"
        store = self.new_store(self.client(), [dead])
        watch = store.watch("/registry/pods", "5", recursive=True)
        events = []
        watch.subscribe(events.append)
        await watch.done
        self.assertEqual([e.type for e in events], ["ERROR"])
        self.assertEqual((events[0].object["code"], events[0].object["reason"]),
                         (504, "Timeout"))


async def wait_for(predicate, timeout: float = 20.0, what: str = "condition") -> None:
    """Poll C{predicate()} on the reactor every 20 ms until true; fail after C{timeout} s."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await deferLater(reactor, 0.02, lambda: None)


class Etcd3RestartTests(EtcdTestMixin, TestCase):
    """A real etcd stopped and started again under a live store and watch."""

    async def test_watch_resumes_across_restart(self):
        """
        While etcd is down calls fail with UnreachableError and the watch stays open; once it
        is back the watch delivers the next write, with nothing lost or repeated.
        """
        store = self.new_store(self.client())
        first = await store.create("/registry/pods/ns/a", pod("a"))
        events: list = []
        watch = store.watch("/registry/pods", first["metadata"]["resourceVersion"],
                            recursive=True)
        watch.subscribe(events.append)
        second = await store.create("/registry/pods/ns/b", pod("b"))
        await wait_for(lambda: len(events) == 1, what="the first event")
        self.etcd.halt()
        with self.assertRaises(UnreachableError):
            await store.get("/registry/pods/ns/a")
        self.assertFalse(watch.ended)
        self.etcd.start()
        deadline = time.monotonic() + 20
        while True:
            try:
                third = await store.create("/registry/pods/ns/c", pod("c"))
                break
            except UnreachableError:
                if time.monotonic() > deadline:
                    raise
                await deferLater(reactor, 0.05, lambda: None)
        await wait_for(lambda: len(events) >= 2, what="the event after the restart")
        await deferLater(reactor, 0, lambda: None)
        self.assertEqual(
            [(e.type, e.object["metadata"]["name"], e.object["metadata"]["resourceVersion"])
             for e in events],
            [("ADDED", "b", second["metadata"]["resourceVersion"]),
             ("ADDED", "c", third["metadata"]["resourceVersion"])],
        )
        self.assertFalse(watch.ended)

    async def test_health_fails_while_down(self):
        """check_health fails with upstream's reason while etcd is down, passes after."""
        await self.new_store(self.client()).check_health()
        self.etcd.halt()
        with self.assertRaises(UnreachableError) as caught:
            await self.new_store(self.client()).check_health()
        self.assertEqual(
            str(caught.exception),
            f"error getting data from etcd: no endpoint reachable ({self.etcd.url}): "
            "ConnectionRefusedError: Connection was refused by other side: 111: "
            "Connection refused.",
        )
        self.etcd.start()
        await self.new_store(self.client()).check_health()
