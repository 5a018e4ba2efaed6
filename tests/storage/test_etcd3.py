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

from treq.client import HTTPClient
from twisted.internet import reactor
from twisted.trial.unittest import TestCase
from twisted.web.client import Agent, HTTPConnectionPool

from kubetwist.storage.etcd3 import Etcd3Storage
from kubetwist.storage.interfaces import UnreachableError
from tests.storage.contract import StorageContractMixin, pod

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
    """A throwaway single-member etcd: C{start()} blocks until its gateway answers."""

    def __init__(self) -> None:
        self.data_dir = tempfile.mkdtemp(prefix="kubetwist-etcd-")
        self.client_port = free_port()
        self.peer_port = free_port()
        self.url = f"http://127.0.0.1:{self.client_port}"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 30.0) -> None:
        if ETCD is None:
            raise RuntimeError("etcd is not on PATH but CI is set: the etcd tests must run")
        peer = f"http://127.0.0.1:{self.peer_port}"
        self.log = open(os.path.join(self.data_dir, "etcd.log"), "wb")
        self.process = subprocess.Popen(
            [ETCD, "--name", "test", "--data-dir", os.path.join(self.data_dir, "data"),
             "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", f"test={peer}", "--logger", "zap", "--log-outputs", "stderr"],
            stdout=self.log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"etcd exited with {self.process.returncode}; see {self.log.name}")
            try:
                request = urllib.request.Request(
                    self.url + "/v3/maintenance/status", data=b"{}", method="POST"
                )
                with urllib.request.urlopen(request, timeout=1) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("etcd did not become ready in time")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if getattr(self, "log", None) is not None:
            self.log.close()
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

    def client(self) -> HTTPClient:
        pool = HTTPConnectionPool(reactor, persistent=True)
        self.addCleanup(pool.closeCachedConnections)
        return HTTPClient(Agent(reactor, pool=pool))

    def new_store(self, client: HTTPClient, endpoints: list[str] | None = None,
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
        """A watch that cannot connect sends one ERROR and closes."""
        dead = f"http://127.0.0.1:{free_port()}"
        store = self.new_store(self.client(), [dead])
        watch = store.watch("/registry/pods", "5", recursive=True)
        events = []
        watch.subscribe(events.append)
        await watch.done
        self.assertEqual([e.type for e in events], ["ERROR"])
        self.assertEqual(events[0].object["code"], 500)
