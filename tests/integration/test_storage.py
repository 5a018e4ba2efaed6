# -*- test-case-name: tests.integration.test_storage -*-
"""
The storage backends under faults, with real processes: an informer-style list+watch through
an etcd restart; fast 503s and failing C{/readyz} while etcd is down; a watch at a compacted
resourceVersion (C{--etcd-compaction-interval}); two C{twistd kubeapi} processes on one etcd
serving one consistent API, also sharing one port (C{--reuse-port}); watches across a kubeapi
restart (the Python client, kubectl); kubeapi on an etcd that serves TLS with client
certificates; and the embedded store refusing a second writer.

Nothing here sleeps to guess timing: every wait polls with a deadline.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import shutil
import signal
import ssl
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import (
    EtcdProcess,
    KubeAPIProcess,
    ServerFixture,
    _terminate,
    class_fixture,
    class_units,
    etcd_skip_reason,
    unique_name,
)

#: How long any one wait in these tests may take, in seconds.
DEADLINE = 30.0


def poll(check: Callable[[], Any], what: str, timeout: float = DEADLINE,
         interval: float = 0.05) -> Any:
    """Call C{check()} until it returns a true value (returned); fail after C{timeout} s."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            value = check()
            if value:
                return value
            last = value
        except (OSError, http.client.HTTPException, ssl.SSLError) as e:
            last = e
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what} (last: {last!r})")
        time.sleep(interval)


#: twistd ends a SIGTERM shutdown by re-raising the signal: -15 is a clean exit too.
CLEAN_EXIT = (0, -signal.SIGTERM)


def ready_count(server: KubeAPIProcess) -> int:
    """How many times the server's log (appended across restarts) says it became ready."""
    try:
        with open(server.log_path, "rb") as f:
            return f.read().count(b"kubetwist is ready")
    except OSError:
        return 0


def wait_own_ready(server: KubeAPIProcess, before: int) -> None:
    """
    Wait until the server's own log reports readiness once more than C{before} times (with
    C{--reuse-port} its C{/readyz} poll may have been answered by another process).
    """
    poll(lambda: ready_count(server) > before, f"{server.log_path} to say it is ready")


class RestartableEtcd(EtcdProcess):
    """An L{EtcdProcess} that can be stopped and started again with its data."""

    def halt(self) -> None:
        """SIGTERM etcd and wait for it; keep its data, ports and log."""
        if self.process is not None:
            _terminate(self.process, 10)
            self.process = None


class RawWatch:
    """
    A raw HTTP watch (C{GET ...?watch=1}) read line by line on a thread: the events land in
    L{events} as decoded JSON; L{ended} is set when the server closes the stream.
    """

    def __init__(self, server: KubeAPIProcess, path: str) -> None:
        context = ssl.create_default_context(cafile=server.ca_file)
        context.load_cert_chain(server.admin_cert_file, server.admin_key_file)
        self.connection = http.client.HTTPSConnection("127.0.0.1", server.port,
                                                      context=context, timeout=DEADLINE * 4)
        self.connection.request("GET", path, headers={"Accept": "application/json"})
        self.response = self.connection.getresponse()
        self.status = self.response.status
        self.events: queue.Queue = queue.Queue()
        self.ended = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            while True:
                line = self.response.readline()
                if not line:
                    break
                if line.strip():
                    self.events.put(json.loads(line))
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            # AttributeError: http.client's reader when close() ran under it on the test thread
            pass
        finally:
            self.ended.set()

    def next(self, timeout: float = DEADLINE) -> dict:
        """The next event; fail if none arrives in C{timeout} seconds."""
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no watch event within {timeout}s") from None

    def close(self) -> None:
        try:
            self.connection.sock.shutdown(2)
        except (OSError, AttributeError):
            pass
        self.connection.close()


def configmap(name: str, **data: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                       "data": data}).encode()


class StorageServerMixin:
    """Helpers over the class's server(s)."""

    def make_namespace(self, server: KubeAPIProcess) -> str:
        name = unique_name("storage")
        response = server.request("POST", "/api/v1/namespaces", json.dumps({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}).encode())
        self.assertEqual(response.status, 201, response.body)
        return name

    def create_cm(self, server: KubeAPIProcess, ns: str, name: str, **data: str) -> dict:
        response = server.request("POST", f"/api/v1/namespaces/{ns}/configmaps",
                                  configmap(name, **data))
        self.assertEqual(response.status, 201, response.body)
        return response.json()

    def update_cm(self, server: KubeAPIProcess, ns: str, name: str, **data: str) -> dict:
        response = server.request("PATCH", f"/api/v1/namespaces/{ns}/configmaps/{name}",
                                  json.dumps({"data": data}).encode(),
                                  headers={"Content-Type": "application/merge-patch+json"})
        self.assertEqual(response.status, 200, response.body)
        return response.json()

    def list_rv(self, server: KubeAPIProcess, ns: str) -> str:
        response = server.request("GET", f"/api/v1/namespaces/{ns}/configmaps")
        self.assertEqual(response.status, 200, response.body)
        return response.json()["metadata"]["resourceVersion"]

    def watch(self, server: KubeAPIProcess, ns: str, rv: str) -> RawWatch:
        w = RawWatch(server, f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}")
        self.addCleanup(w.close)
        self.assertEqual(w.status, 200)
        return w

    def summary(self, event: dict) -> tuple[str, str, str]:
        meta = event["object"].get("metadata", {})
        return event["type"], meta.get("name", ""), meta.get("resourceVersion", "")


# --------------------------------------------------------------------------------------------


class EtcdFaultTests(StorageServerMixin, SynchronousTestCase):
    """One kubeapi on one etcd that the tests stop and start again."""

    skip = etcd_skip_reason()

    @staticmethod
    def start_fixture() -> ServerFixture:
        etcd = RestartableEtcd()
        etcd.start()
        server = KubeAPIProcess(etcd_url=etcd.url)
        try:
            server.start()
        except BaseException:
            server.cleanup()
            etcd.stop()
            raise
        return ServerFixture(server, etcd)

    def setUp(self) -> None:
        self.fixture = class_fixture(self, type(self).start_fixture, ServerFixture.close)
        self.server, self.etcd = self.fixture.server, self.fixture.etcd

    def test_informer_through_etcd_restart(self) -> None:
        """
        A list+watch keeps its stream while etcd is down; meanwhile reads and writes fail at
        once with 503 ServiceUnavailable, C{/readyz} and C{/healthz} fail their etcd checks
        (reason withheld, logged); after etcd is back the next writes arrive on the same
        watch with nothing lost or repeated, and C{/readyz} passes again.
        """
        ns = self.make_namespace(self.server)
        w = self.watch(self.server, ns, self.list_rv(self.server, ns))
        a = self.create_cm(self.server, ns, "a", n="1")
        self.assertEqual(self.summary(w.next()), ("ADDED", "a", a["metadata"]["resourceVersion"]))

        self.etcd.halt()
        self.addCleanup(lambda: self.etcd.process is None and self.etcd.start())
        started = time.monotonic()
        read = self.server.request("GET", f"/api/v1/namespaces/{ns}/configmaps/a")
        write = self.server.request("POST", f"/api/v1/namespaces/{ns}/configmaps",
                                    configmap("never"))
        for response in (read, write):
            self.assertEqual(response.status, 503, response.body)
            status = response.json()
            self.assertEqual((status["kind"], status["status"], status["reason"], status["code"]),
                             ("Status", "Failure", "ServiceUnavailable", 503))
        self.assertLess(time.monotonic() - started, 60, "requests must not hang")
        readyz = poll(lambda: (r := self.server.request("GET", "/readyz?verbose")).status == 500
                      and r, "/readyz to fail")
        self.assertIn(b"[-]etcd failed: reason withheld\n", readyz.body)
        self.assertIn(b"[-]etcd-readiness failed: reason withheld\n", readyz.body)
        self.assertTrue(readyz.body.endswith(b"readyz check failed\n"), readyz.body)
        healthz = self.server.request("GET", "/healthz?verbose")
        self.assertEqual(healthz.status, 500)
        self.assertIn(b"[-]etcd failed: reason withheld\n", healthz.body)
        poll(lambda: "etcd check failed: error getting data from etcd" in self.server.log_tail(400),
             "the log to say why the etcd check failed")
        self.assertFalse(w.ended.is_set())

        self.etcd.start()
        b = poll(lambda: (r := self.server.request(
            "POST", f"/api/v1/namespaces/{ns}/configmaps", configmap("b"))).status == 201
            and r.json(), "a write after etcd is back")
        a2 = self.update_cm(self.server, ns, "a", n="2")
        self.assertEqual([self.summary(w.next()), self.summary(w.next())], [
            ("ADDED", "b", b["metadata"]["resourceVersion"]),
            ("MODIFIED", "a", a2["metadata"]["resourceVersion"]),
        ])
        self.assertTrue(w.events.empty())
        poll(lambda: self.server.request("GET", "/readyz").status == 200, "/readyz to pass")

    def kubectl_watch(self, ns: str) -> tuple[subprocess.Popen, queue.Queue]:
        """
        C{kubectl get configmaps -w --watch-only -o name}, its output lines in a queue, once
        its watch is established (a marker ConfigMap updated until kubectl prints it).
        """
        process = self.server.kubectl_popen("get", "configmaps", "-n", ns, "-w",
                                            "--watch-only", "-o", "name")
        self.addCleanup(lambda: process.poll() is None and _terminate(process, 5))
        lines: queue.Queue = queue.Queue()

        def read() -> None:
            for line in process.stdout:
                lines.put(line.strip())

        threading.Thread(target=read, daemon=True).start()
        self.create_cm(self.server, ns, "marker", n="0") if self.server.request(
            "GET", f"/api/v1/namespaces/{ns}/configmaps/marker").status == 404 else None
        n = [0]

        def printed() -> bool:
            n[0] += 1
            self.update_cm(self.server, ns, "marker", n=str(n[0]))
            try:
                while True:
                    if lines.get(timeout=0.2) == "configmap/marker":
                        return True
            except queue.Empty:
                return False

        poll(printed, "kubectl's watch to print the marker", interval=0)
        return process, lines

    def test_watches_across_kubeapi_restart(self) -> None:
        """
        The Python client's C{Watch().stream}, restarted informer-style from its last
        resourceVersion when the connection fails (re-listing on 410, as a reflector does
        when the restarted server's watch cache begins after that resourceVersion), sees every
        change across a kubeapi restart exactly once; C{kubectl get -w} ends cleanly (exit 0) when
        the server stops,
        as against kube-apiserver, and a new one works after the restart.
        """
        from kubernetes import client as k8s
        from kubernetes import watch as k8s_watch

        ns = self.make_namespace(self.server)
        self.create_cm(self.server, ns, "before")
        rv = self.list_rv(self.server, ns)
        seen: queue.Queue = queue.Queue()
        stop = threading.Event()

        known = {"before"}

        def informer() -> None:
            nonlocal rv
            api = self.server.api_client()
            try:
                v1 = k8s.CoreV1Api(api)
                w = k8s_watch.Watch()
                while not stop.is_set():
                    try:
                        for event in w.stream(v1.list_namespaced_config_map, ns,
                                              resource_version=rv, _request_timeout=DEADLINE):
                            obj = event["object"]
                            rv = obj.metadata.resource_version
                            known.add(obj.metadata.name)
                            seen.put((event["type"], obj.metadata.name, rv))
                            if stop.is_set():
                                w.stop()
                    except k8s.ApiException as e:
                        # 410: the server's watch cache (re)started after the client's
                        # resourceVersion, as kube-apiserver's after a restart: re-list as a
                        # reflector does, objects not seen yet becoming ADDED, then watch on
                        if e.status != 410:
                            if stop.wait(0.1):
                                return
                            continue
                        listed = v1.list_namespaced_config_map(ns)
                        for item in listed.items:
                            if item.metadata.name not in known:
                                known.add(item.metadata.name)
                                seen.put(("ADDED", item.metadata.name,
                                          item.metadata.resource_version))
                        rv = listed.metadata.resource_version
                    except Exception:  # noqa: BLE001 -- connection refused while restarting
                        if stop.wait(0.1):
                            return
            finally:
                api.close()

        thread = threading.Thread(target=informer, daemon=True)
        thread.start()

        def end_informer() -> None:
            stop.set()
            # one more event wakes the stream, which then sees the stop
            self.update_cm(self.server, ns, "before", woken="yes")
            thread.join(DEADLINE)

        self.addCleanup(end_informer)

        def until(name: str) -> list[tuple[str, str, str]]:
            got = []
            deadline = time.monotonic() + DEADLINE
            while not got or got[-1][1] != name:
                got.append(seen.get(timeout=max(0.01, deadline - time.monotonic())))
            return got

        one = self.create_cm(self.server, ns, "one")
        events = until("one")
        kubectl, _ = self.kubectl_watch(ns)
        self.assertIn(self.server.restart(), CLEAN_EXIT)
        self.assertEqual(kubectl.wait(timeout=DEADLINE), 0)
        two = self.create_cm(self.server, ns, "two")
        events += until("two")
        mine = [e for e in events if e[1] != "marker"]
        self.assertEqual(mine, [("ADDED", "one", one["metadata"]["resourceVersion"]),
                                ("ADDED", "two", two["metadata"]["resourceVersion"])])
        revisions = [int(e[2]) for e in events]
        self.assertEqual(revisions, sorted(set(revisions)))
        self.kubectl_watch(ns)


# --------------------------------------------------------------------------------------------


class TwoServersFixture:
    """One etcd and two kubeapi processes sharing certificates: A and B on their own ports."""

    def __init__(self) -> None:
        self.etcd = EtcdProcess()
        self.work_dir = tempfile.mkdtemp(prefix="kubetwist-it-two-")
        self.data_dir = os.path.join(self.work_dir, "data")
        self.servers: list[KubeAPIProcess] = []

    def server(self, port: int | None = None) -> KubeAPIProcess:
        process = KubeAPIProcess(data_dir=self.data_dir, etcd_url=self.etcd.url,
                                 extra_args=["--etcd-compaction-interval=1s",
                                             "--reuse-port=true"])
        if port is not None:
            process.port = port
            process.url = f"https://127.0.0.1:{port}"
        self.servers.append(process)
        return process

    def start(self) -> TwoServersFixture:
        self.etcd.start()
        self.a = self.server()
        self.a.start()
        self.b = self.server()
        self.b.start()
        return self

    def close(self) -> None:
        for process in reversed(self.servers):
            process.cleanup()
        self.etcd.stop()
        shutil.rmtree(self.work_dir, ignore_errors=True)

    @classmethod
    def create(cls) -> TwoServersFixture:
        fixture = cls()
        try:
            return fixture.start()
        except BaseException:
            fixture.close()
            raise


class TwoServersTests(StorageServerMixin, SynchronousTestCase):
    """Two kubeapi processes on one etcd (compaction every second)."""

    skip = etcd_skip_reason()

    def setUp(self) -> None:
        self.fixture = class_fixture(self, TwoServersFixture.create, TwoServersFixture.close)
        self.a, self.b = self.fixture.a, self.fixture.b

    def test_one_consistent_api(self) -> None:
        """
        Writes through A arrive on a watch through B (and the other way round) with the same
        resourceVersions; a read through either answers the same object.
        """
        ns = self.make_namespace(self.a)
        w = self.watch(self.b, ns, self.list_rv(self.b, ns))
        x = self.create_cm(self.a, ns, "x", n="1")
        self.assertEqual(self.summary(w.next()), ("ADDED", "x", x["metadata"]["resourceVersion"]))
        x2 = self.update_cm(self.b, ns, "x", n="2")
        self.assertEqual(self.summary(w.next()),
                         ("MODIFIED", "x", x2["metadata"]["resourceVersion"]))
        via_a = self.a.request("GET", f"/api/v1/namespaces/{ns}/configmaps/x").json()
        via_b = self.b.request("GET", f"/api/v1/namespaces/{ns}/configmaps/x").json()
        self.assertEqual(via_a, via_b)
        self.assertEqual(via_a["metadata"]["resourceVersion"], x2["metadata"]["resourceVersion"])
        stale = self.a.request("PUT", f"/api/v1/namespaces/{ns}/configmaps/x", json.dumps(
            {**x, "data": {"n": "3"}}).encode())
        self.assertEqual(stale.status, 409, stale.body)
        self.assertEqual(stale.json()["reason"], "Conflict")

    def test_watch_list_through_the_other_server(self) -> None:
        """
        Watch-list (KEP-3157) through B of what was written through A: the current objects as
        ADDED, then a BOOKMARK annotated C{k8s.io/initial-events-end: "true"}, then live
        changes.
        """
        ns = self.make_namespace(self.a)
        self.create_cm(self.a, ns, "one", n="1")
        self.create_cm(self.a, ns, "two", n="2")
        w = RawWatch(self.b, f"/api/v1/namespaces/{ns}/configmaps?watch=1&sendInitialEvents=true"
                             f"&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
        self.addCleanup(w.close)
        self.assertEqual(w.status, 200)
        initial = []
        while True:
            event = w.next()
            if event["type"] == "BOOKMARK":
                break
            initial.append(self.summary(event)[:2])
        self.assertEqual(sorted(initial), [("ADDED", "kube-root-ca.crt"), ("ADDED", "one"),
                                           ("ADDED", "two")])
        # kube-apiserver v1.32 also attaches the encoded empty list (the list blueprint)
        self.assertEqual(event["object"]["metadata"].get("annotations"), {
            "k8s.io/initial-events-end": "true",
            "kubernetes.io/initial-events-list-blueprint":
                "eyJraW5kIjoiQ29uZmlnTWFwTGlzdCIsImFwaVZlcnNpb24iOiJ2MSIsIm1ldGFkYXRhIjp7fSwiaXRl"
                "bXMiOm51bGx9Cg=="})
        updated = self.update_cm(self.a, ns, "one", n="3")
        event = w.next()
        while event["type"] == "BOOKMARK":
            event = w.next()
        self.assertEqual(self.summary(event),
                         ("MODIFIED", "one", updated["metadata"]["resourceVersion"]))

    def test_watch_at_compacted_resource_version(self) -> None:
        """
        With C{--etcd-compaction-interval=1s} old revisions go: an Exact list at them answers
        410 Expired, and a watch started there gets one ERROR event with a 410 Status.
        """
        ns = self.make_namespace(self.a)
        old = self.create_cm(self.a, ns, "c", n="0")["metadata"]["resourceVersion"]
        for i in range(1, 4):
            self.update_cm(self.a, ns, "c", n=str(i))

        def expired():
            # the watch from `old` starts at old+1: that revision must be gone too (while
            # it is not, a server may still replay from it, as etcd itself would)
            r = self.a.request("GET", f"/api/v1/namespaces/{ns}/configmaps?resourceVersion="
                                      f"{int(old) + 1}&resourceVersionMatch=Exact")
            return r.status == 410 and r

        gone = poll(expired, "the old revision to be compacted")
        self.assertEqual((gone.json()["reason"], gone.json()["code"]), ("Expired", 410))
        w = self.watch(self.b, ns, old)
        event = w.next()
        self.assertEqual((event["type"], event["object"]["kind"], event["object"]["code"],
                          event["object"]["reason"]), ("ERROR", "Status", 410, "Expired"))
        self.assertTrue(w.ended.wait(DEADLINE))

    def test_reuse_port(self) -> None:
        """
        A third process joins A's port with C{--reuse-port}; with A stopped, the port is still
        served (by it), on the same data; A then starts again beside it.
        """
        ns = self.make_namespace(self.a)
        self.create_cm(self.a, ns, "shared")
        c = self.fixture.server(port=self.a.port)
        try:
            c.start()
            wait_own_ready(c, 0)
            self.assertIn(self.a.stop(), CLEAN_EXIT)
            got = self.a.request("GET", f"/api/v1/namespaces/{ns}/configmaps/shared")
            self.assertEqual(got.status, 200, got.body)
            self.create_cm(self.a, ns, "through-c")
        finally:
            if self.a.process is None:
                before = ready_count(self.a)
                self.a.start()
                wait_own_ready(self.a, before)
            c.stop()
        self.assertEqual(self.a.request("GET", f"/api/v1/namespaces/{ns}/configmaps/through-c")
                         .status, 200)


# --------------------------------------------------------------------------------------------


class EmbeddedStoreLockTests(SynchronousTestCase):
    """The embedded store refuses a second process on its --data-dir."""

    def setUp(self) -> None:
        self.fixture = class_fixture(
            self, lambda: ServerFixture(_started(KubeAPIProcess())), ServerFixture.close)
        self.server = self.fixture.server

    def test_second_writer_refused(self) -> None:
        """A second kubeapi on the same --data-dir exits 1 with one clear line on stderr."""
        second = KubeAPIProcess(data_dir=self.server.data_dir)
        self.addCleanup(second.cleanup)
        result = subprocess.run(second.command(), capture_output=True, text=True, check=False,
                                timeout=DEADLINE * 2, stdin=subprocess.DEVNULL,
                                cwd=second.work_dir,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        # twistd -n sends what the process prints to stderr through its log, on stdout
        output = result.stdout + result.stderr
        lines = [line.split("] ", 1)[-1] for line in output.splitlines()
                 if "kubetwist: cannot start:" in line]
        expected = (
            f"kubetwist: cannot start: the embedded store in {self.server.data_dir} is in use "
            f"by process {self.server.process.pid} (lock state.db.lock); run one kubetwist per "
            "--data-dir, or several on one etcd (--etcd-servers)"
        )
        self.assertEqual(lines, [expected], output)
        self.assertEqual(result.returncode, 1, output)
        self.assertEqual(self.server.request("GET", "/readyz").status, 200)


def _started(server: KubeAPIProcess) -> KubeAPIProcess:
    try:
        server.start()
    except BaseException:
        server.cleanup()
        raise
    return server


# --------------------------------------------------------------------------------------------


class EtcdTLSFixture:
    """An etcd serving clients over TLS with client-certificate auth, and a kubeapi on it."""

    def __init__(self) -> None:
        from tests.storage.test_etcd3 import EtcdServer
        from tests.storage.test_etcd3_tls import TestPKI

        self.pki_dir = tempfile.mkdtemp(prefix="kubetwist-it-etcd-pki-")
        pki = TestPKI(self.pki_dir)
        serving = pki.issue("etcd-server", True, ips=("127.0.0.1",))
        self.client_cert = pki.issue("apiserver-etcd-client", False)
        self.ca_file = pki.ca_file
        self.etcd = EtcdServer(tls=(serving[0], serving[1], pki.ca_file),
                               client_cert=self.client_cert)
        self.server: KubeAPIProcess | None = None

    @classmethod
    def create(cls) -> EtcdTLSFixture:
        fixture = cls()
        try:
            fixture.etcd.start()
            fixture.server = KubeAPIProcess(etcd_url=fixture.etcd.url, extra_args=[
                f"--etcd-cafile={fixture.ca_file}",
                f"--etcd-certfile={fixture.client_cert[0]}",
                f"--etcd-keyfile={fixture.client_cert[1]}",
            ])
            fixture.server.start()
        except BaseException:
            fixture.close()
            raise
        return fixture

    def close(self) -> None:
        if self.server is not None:
            self.server.cleanup()
        self.etcd.stop()
        shutil.rmtree(self.pki_dir, ignore_errors=True)


class EtcdTLSTests(StorageServerMixin, SynchronousTestCase):
    """kubeapi on an https etcd with --etcd-cafile/--etcd-certfile/--etcd-keyfile."""

    skip = etcd_skip_reason()

    def setUp(self) -> None:
        self.fixture = class_fixture(self, EtcdTLSFixture.create, EtcdTLSFixture.close)
        self.server = self.fixture.server

    def test_serves_over_tls_etcd(self) -> None:
        """The server is ready (its etcd checks pass) and writes and watches work."""
        readyz = self.server.request("GET", "/readyz?verbose")
        self.assertIn(b"[+]etcd ok\n", readyz.body)
        ns = self.make_namespace(self.server)
        w = self.watch(self.server, ns, self.list_rv(self.server, ns))
        cm = self.create_cm(self.server, ns, "over-tls")
        self.assertEqual(self.summary(w.next()),
                         ("ADDED", "over-tls", cm["metadata"]["resourceVersion"]))

    def test_untrusted_etcd_refused(self) -> None:
        """
        With a CA that did not sign etcd's certificate the server never becomes ready, and
        its log says the certificate did not verify.
        """
        from tests.storage.test_etcd3_tls import TestPKI

        other = TestPKI(self.fixture.pki_dir, "other-ca")
        server = KubeAPIProcess(etcd_url=self.fixture.etcd.url, extra_args=[
            f"--etcd-cafile={other.ca_file}",
            f"--etcd-certfile={self.fixture.client_cert[0]}",
            f"--etcd-keyfile={self.fixture.client_cert[1]}",
        ])
        self.addCleanup(server.cleanup)
        server.wait_ready = lambda timeout=0: None  # start the process only
        server.start()
        poll(lambda: "certificate verify failed" in server.log_tail(400),
             "the log to report the failed verification")
        poll(lambda: os.path.exists(server.kubeconfig), "the kubeconfig")
        server._extract_credentials()
        readyz = poll(lambda: (r := server.request("GET", "/readyz?verbose")).status == 500
                      and r, "/readyz to answer")
        self.assertIn(b"[-]etcd failed: reason withheld\n", readyz.body)


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
