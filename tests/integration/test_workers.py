# -*- test-case-name: tests.integration.test_workers -*-
"""
C{twistd kubeapi --workers 3} on a real etcd: one API whichever worker a connection lands on.

Which worker serves a connection is read from the kernel, not from the server: the test finds
the server side of its own TCP connection in C{/proc/net/tcp} and the process holding that
socket in C{/proc/<pid>/fd} (no header or metric of the server says which worker it is).
Nothing sleeps to guess timing: every wait polls with a deadline.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import ssl
import time
from typing import Any

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import (
    EtcdProcess,
    KubeAPIProcess,
    class_fixture,
    class_units,
    etcd_skip_reason,
    unique_name,
)
from tests.integration.test_storage import (
    CLEAN_EXIT,
    DEADLINE,
    RawWatch,
    configmap,
    poll,
    ready_count,
)

#: the number of workers of the class's server
WORKERS = 3


def children(pid: int) -> list[int]:
    """The process ids of C{pid}'s children (Linux C{/proc/<pid>/task/<pid>/children})."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def socket_inode(server_port: int, client_port: int) -> str | None:
    """The inode of the server side of the loopback TCP connection from C{client_port} to
    C{server_port} (C{/proc/net/tcp}: local and remote addresses in hex, inode column 10)."""
    local, remote = f"0100007F:{server_port:04X}", f"0100007F:{client_port:04X}"
    with open("/proc/net/tcp") as f:
        for line in f.read().splitlines()[1:]:
            fields = line.split()
            if fields[1] == local and fields[2] == remote:
                return fields[9]
    return None


def owner(pids: list[int], server_port: int, client_port: int) -> int | None:
    """Which of C{pids} holds the server side of the connection from C{client_port}."""
    inode = socket_inode(server_port, client_port)
    if inode is None:
        return None
    target = f"socket:[{inode}]"
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                        return pid
                except OSError:
                    continue
        except OSError:
            continue
    return None


def listeners(server: KubeAPIProcess) -> dict[str, int | None]:
    """C{{inode: pid}} of every socket listening on the server's port (a failure's detail)."""
    port = f"0100007F:{server.port:04X}"
    with open("/proc/net/tcp") as f:
        inodes = [line.split()[9] for line in f.read().splitlines()[1:]
                  if line.split()[1] == port and line.split()[3] == "0A"]
    out: dict[str, int | None] = {}
    for inode in inodes:
        out[inode] = None
        for pid in worker_pids(server):
            try:
                if any(os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]"
                       for fd in os.listdir(f"/proc/{pid}/fd")):
                    out[inode] = pid
            except OSError:
                continue
    return out


def gone(pid: int) -> bool:
    """The process has exited (no longer exists, or is a zombie nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


class Connection:
    """One keep-alive HTTPS connection (admin certificate) and the worker serving it."""

    def __init__(self, server: KubeAPIProcess) -> None:
        context = ssl.create_default_context(cafile=server.ca_file)
        context.load_cert_chain(server.admin_cert_file, server.admin_key_file)
        self.server = server
        self.connection = http.client.HTTPSConnection("127.0.0.1", server.port,
                                                      context=context, timeout=DEADLINE)
        self.connection.connect()
        self.port = self.connection.sock.getsockname()[1]
        self.pid: int | None = None

    def request(self, method: str, path: str, body: Any = None,
                content_type: str = "application/json") -> tuple[int, dict]:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
            if not isinstance(body, bytes):
                body = json.dumps(body).encode()
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        if self.pid is None:  # the server has surely accepted it now
            self.pid = owner(worker_pids(self.server), self.server.port, self.port)
        return response.status, json.loads(data) if data else {}

    def close(self) -> None:
        self.connection.close()


def worker_pids(server: KubeAPIProcess) -> list[int]:
    """Worker 0 (the supervisor twistd started) and its children, the other workers."""
    assert server.process is not None
    return [server.process.pid] + children(server.process.pid)


def watch_pid(server: KubeAPIProcess, w: RawWatch) -> int | None:
    return owner(worker_pids(server), server.port, w.connection.sock.getsockname()[1])


class WorkersFixture:
    """One etcd and one C{twistd kubeapi --workers 3} on it, every worker ready."""

    def __init__(self) -> None:
        self.etcd = EtcdProcess()
        self.server: KubeAPIProcess | None = None

    @classmethod
    def create(cls) -> WorkersFixture:
        fixture = cls()
        try:
            fixture.etcd.start()
            fixture.server = KubeAPIProcess(etcd_url=fixture.etcd.url,
                                            extra_args=[f"--workers={WORKERS}"])
            fixture.server.start()
            poll(lambda: ready_count(fixture.server) >= WORKERS, "every worker to be ready",
                 timeout=DEADLINE * 3)
        except BaseException:
            fixture.close()
            raise
        return fixture

    def close(self) -> None:
        if self.server is not None:
            self.server.cleanup()
        self.etcd.stop()


class WorkersTests(SynchronousTestCase):
    """Three workers of one server on one etcd."""

    skip = etcd_skip_reason()

    def setUp(self) -> None:
        self.fixture = class_fixture(self, WorkersFixture.create, WorkersFixture.close)
        self.server = self.fixture.server

    def namespace(self) -> str:
        name = unique_name("workers")
        response = self.server.request("POST", "/api/v1/namespaces", json.dumps({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}).encode())
        self.assertEqual(response.status, 201, response.body)
        return name

    def connect(self) -> Connection:
        c = Connection(self.server)
        self.addCleanup(c.close)
        return c

    def watch_on(self, path: str, wanted: Any) -> RawWatch:
        """A raw watch of C{path} on a connection whose worker's pid satisfies C{wanted}."""
        for _ in range(60):
            w = RawWatch(self.server, path)
            self.addCleanup(w.close)
            self.assertEqual(w.status, 200)
            if wanted(watch_pid(self.server, w)):
                return w
            w.close()
        self.fail(f"no watch of {path} landed on the worker wanted")

    def connect_avoiding(self, pid: int, ns: str) -> Connection:
        """A connection served by a worker other than C{pid}."""
        for _ in range(40):
            c = self.connect()
            c.request("GET", f"/api/v1/namespaces/{ns}")
            if c.pid != pid:
                return c
        self.fail(f"every connection landed on {pid}")

    def connections_on_every_worker(self, ns: str, count: int = 24) -> dict[int, Connection]:
        """C{{pid: connection}}: one connection per worker, found among C{count} new ones
        (the kernel hashes each to one worker's listener)."""
        by_pid: dict[int, Connection] = {}
        for _ in range(count):
            c = self.connect()
            status, _ = c.request("GET", f"/api/v1/namespaces/{ns}")
            self.assertEqual(status, 200)
            by_pid.setdefault(c.pid, c)
        self.assertEqual(sorted(by_pid), sorted(worker_pids(self.server)))
        return by_pid

    def test_writes_land_on_every_worker(self) -> None:
        """
        Creates through 24 connections are served by all three workers (told apart by the
        kernel's socket table); each is readable through every other worker with the same
        resourceVersion.
        """
        ns = self.namespace()
        served: dict[str, int] = {}
        rvs: dict[str, str] = {}
        for i in range(24):
            c = self.connect()
            status, body = c.request("POST", f"/api/v1/namespaces/{ns}/configmaps",
                                     configmap(f"cm-{i}", n=str(i)))
            self.assertEqual(status, 201, body)
            served[f"cm-{i}"] = c.pid
            rvs[f"cm-{i}"] = body["metadata"]["resourceVersion"]
        self.assertEqual(sorted(set(served.values())), sorted(worker_pids(self.server)),
                         f"served: {served}; listeners: {listeners(self.server)}")
        by_pid = self.connections_on_every_worker(ns)
        for c in by_pid.values():
            status, body = c.request("GET", f"/api/v1/namespaces/{ns}/configmaps")
            self.assertEqual(status, 200)
            self.assertEqual({i["metadata"]["name"]: i["metadata"]["resourceVersion"]
                              for i in body["items"] if i["metadata"]["name"] in rvs}, rvs)

    def test_watch_sees_writes_through_other_workers(self) -> None:
        """
        A watch served by one worker gets, in order and with their resourceVersions, the
        writes made through the two others.
        """
        ns = self.namespace()
        by_pid = self.connections_on_every_worker(ns)
        status, body = next(iter(by_pid.values())).request(
            "GET", f"/api/v1/namespaces/{ns}/configmaps")
        w = RawWatch(self.server, f"/api/v1/namespaces/{ns}/configmaps?watch=1&"
                                  f"resourceVersion={body['metadata']['resourceVersion']}")
        self.addCleanup(w.close)
        self.assertEqual(w.status, 200)
        watcher = watch_pid(self.server, w)
        others = [c for pid, c in by_pid.items() if pid != watcher]
        self.assertEqual(len(others), WORKERS - 1)
        written = []
        for i in range(6):
            c = others[i % 2]
            status, obj = c.request("POST", f"/api/v1/namespaces/{ns}/configmaps",
                                    configmap(f"w-{i}"))
            self.assertEqual(status, 201, obj)
            written.append(("ADDED", f"w-{i}", obj["metadata"]["resourceVersion"]))
        seen = []
        while len(seen) < len(written):
            event = w.next()
            seen.append((event["type"], event["object"]["metadata"]["name"],
                         event["object"]["metadata"]["resourceVersion"]))
        self.assertEqual(seen, written)
        self.assertEqual([int(rv) for _, _, rv in seen], sorted(int(rv) for _, _, rv in seen))

    def test_conflicts_across_workers(self) -> None:
        """
        Optimistic concurrency holds across workers: an update through one worker with the
        resourceVersion read through another succeeds once; the same update through a third
        worker then answers 409 Conflict.
        """
        ns = self.namespace()
        a, b, c = self.connections_on_every_worker(ns).values()
        status, obj = a.request("POST", f"/api/v1/namespaces/{ns}/configmaps",
                                configmap("shared", n="0"))
        self.assertEqual(status, 201, obj)
        status, first = b.request("PUT", f"/api/v1/namespaces/{ns}/configmaps/shared",
                                  {**obj, "data": {"n": "b"}})
        self.assertEqual(status, 200, first)
        status, stale = c.request("PUT", f"/api/v1/namespaces/{ns}/configmaps/shared",
                                  {**obj, "data": {"n": "c"}})
        self.assertEqual((status, stale["reason"]), (409, "Conflict"), stale)
        self.assertEqual(stale["message"],
                         'Operation cannot be fulfilled on configmaps "shared": the object has '
                         'been modified; please apply your changes to the latest version and '
                         'try again')
        status, now = a.request("GET", f"/api/v1/namespaces/{ns}/configmaps/shared")
        self.assertEqual((now["data"], now["metadata"]["resourceVersion"]),
                         ({"n": "b"}, first["metadata"]["resourceVersion"]))

    def test_garbage_collected_by_worker_0(self) -> None:
        """
        The garbage collector runs in worker 0 only: an owner deleted through another worker
        still has its dependent collected.
        """
        ns = self.namespace()
        worker = self.connect_avoiding(self.server.process.pid, ns)
        status, owner_cm = worker.request("POST", f"/api/v1/namespaces/{ns}/configmaps",
                                          configmap("owner"))
        self.assertEqual(status, 201, owner_cm)
        dependent = json.loads(configmap("dependent"))
        dependent["metadata"]["ownerReferences"] = [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
            "uid": owner_cm["metadata"]["uid"]}]
        status, body = worker.request("POST", f"/api/v1/namespaces/{ns}/configmaps", dependent)
        self.assertEqual(status, 201, body)
        status, body = worker.request("DELETE", f"/api/v1/namespaces/{ns}/configmaps/owner")
        self.assertEqual(status, 200, body)
        poll(lambda: self.server.request(
            "GET", f"/api/v1/namespaces/{ns}/configmaps/dependent").status == 404,
            "the dependent to be collected")

    def test_worker_restart_loses_no_event(self) -> None:
        """
        A worker killed with SIGKILL is started again by the supervisor; a watch it served
        ends, and resumed (through another worker) from its last resourceVersion it gets every
        write made meanwhile exactly once, in order; the restarted worker serves again.
        """
        ns = self.namespace()
        supervisor = self.server.process.pid
        status, body = self.connect().request("GET", f"/api/v1/namespaces/{ns}/configmaps")
        rv = body["metadata"]["resourceVersion"]
        for _ in range(40):  # a watch on a worker other than the supervisor
            w = RawWatch(self.server, f"/api/v1/namespaces/{ns}/configmaps?watch=1&"
                                      f"resourceVersion={rv}")
            self.addCleanup(w.close)
            victim = watch_pid(self.server, w)
            if victim not in (None, supervisor):
                break
            w.close()
        else:
            self.fail("no watch landed on a worker other than the supervisor")
        writer = self.connect_avoiding(victim, ns)
        written = []

        def write(name: str) -> None:
            status, obj = writer.request("POST", f"/api/v1/namespaces/{ns}/configmaps",
                                         configmap(name))
            self.assertEqual(status, 201, obj)
            written.append((name, obj["metadata"]["resourceVersion"]))

        write("before-0")
        write("before-1")
        seen = [(e["object"]["metadata"]["name"], e["object"]["metadata"]["resourceVersion"])
                for e in (w.next(), w.next())]
        self.assertEqual(seen, written)
        before = ready_count(self.server)
        others = set(children(supervisor)) - {victim}
        os.kill(victim, signal.SIGKILL)
        self.assertTrue(w.ended.wait(DEADLINE), "the watch did not end with its worker")
        for i in range(3):
            write(f"during-{i}")
        poll(lambda: len(children(supervisor)) == WORKERS - 1 and
             victim not in children(supervisor), "the supervisor to restart the worker")
        [restarted] = set(children(supervisor)) - others
        poll(lambda: ready_count(self.server) > before, "the restarted worker to be ready",
             timeout=DEADLINE * 2)
        path = f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={seen[-1][1]}"
        # resumed through a worker whose watch cache holds the history: the restarted one's
        # begins at its start, so (as a freshly started kube-apiserver) it may answer the old
        # resourceVersion with 410 Expired, after which a client lists again
        fresh = self.watch_on(path, lambda pid: pid == restarted)
        event = fresh.next()
        self.assertIn((event["type"], event["object"].get("code"),
                       event["object"]["metadata"].get("name")),
                      [("ERROR", 410, None), ("ADDED", None, "during-0")], event)
        fresh.close()
        resumed = self.watch_on(path, lambda pid: pid not in (None, restarted))
        write("after-0")
        while len(seen) < len(written):
            event = resumed.next()
            seen.append((event["object"]["metadata"]["name"],
                         event["object"]["metadata"]["resourceVersion"]))
        self.assertEqual(seen, written)
        self.assertTrue(resumed.events.empty())
        for _ in range(40):  # new connections reach the restarted worker
            c = self.connect()
            c.request("GET", f"/api/v1/namespaces/{ns}")
            if c.pid == restarted:
                break
        else:
            self.fail(f"no connection reached the restarted worker {restarted}")
        self.assertIn(f"(pid {victim}) exited with signal 9; restarting in",
                      self.server.log_tail(2000))


class SupervisorExitTests(SynchronousTestCase):
    """The workers end with their supervisor, however it ends."""

    skip = etcd_skip_reason()

    def setUp(self) -> None:
        self.etcd = EtcdProcess()
        self.etcd.start()
        self.addCleanup(self.etcd.stop)

    def start(self) -> KubeAPIProcess:
        server = KubeAPIProcess(etcd_url=self.etcd.url, extra_args=["--workers=2"])
        self.addCleanup(server.cleanup)
        server.start()
        poll(lambda: len(children(server.process.pid)) == 1, "worker 1 to start")
        return server

    def test_sigkill_of_the_supervisor(self) -> None:
        """Worker 1 stops by itself when its supervisor is killed with SIGKILL (its pipe
        from the supervisor closes); SIGTERM to a new supervisor stops both cleanly."""
        server = self.start()
        [worker] = children(server.process.pid)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(DEADLINE)
        server.process = None
        poll(lambda: gone(worker), "worker 1 to exit after its supervisor")
        with open(server.log_path) as f:
            self.assertIn("the supervisor (pid", f.read())
        server.start()
        poll(lambda: len(children(server.process.pid)) == 1, "worker 1 to start again")
        [worker] = children(server.process.pid)
        started = time.monotonic()
        self.assertIn(server.stop(), CLEAN_EXIT)
        self.assertTrue(gone(worker))
        self.assertLess(time.monotonic() - started, DEADLINE)


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
