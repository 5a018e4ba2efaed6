# -*- test-case-name: tests.testing.test_server -*-
"""
L{KubeServer}: a complete kubetwist API server for a test, the Python counterpart of
controller-runtime's C{envtest}.

The server is the one C{twistd kubeapi} runs (L{kubetwist.app.KubeAPIService}, assembled by
L{kubetwist.app.assemble}): the embedded store in a temporary directory, certificates generated
in it, the default C{Node,RBAC} authorization and admission plugins, and a kubeconfig whose
user is the generated admin (C{system:masters}).  Three ways to run it:

  - C{mode="thread"} (the default): a private reactor in a background thread of the test
    process; the test's own code (synchronous or asyncio) calls it over HTTPS.  L{start} and
    L{KubeServer.stop} block; the private reactor and its thread end with L{KubeServer.stop}.
  - C{mode="reactor"}: in the caller's reactor, for trial tests
    (L{KubeServer.start_in_reactor}/L{KubeServer.stop_in_reactor} return Deferreds).
  - C{mode="subprocess"}: a C{twistd -n kubeapi} child process, for tests that need a process
    of their own (a crash, signals, a separate Python).

Whatever the mode, L{KubeServer.stop} leaves no thread, file, port or child process behind.
The ready server answers C{/readyz} C{ok}: every post-start hook (RBAC bootstrap, priority and
fairness configuration, system namespaces, CRD controllers) has finished.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Iterable, Optional, Sequence

from twisted.internet import defer

from kubetwist.app import KubeAPIService

__all__ = ["KubeServer", "ServerStartError", "load_crds"]

#: The modes of L{KubeServer}.
MODES = ("thread", "reactor", "subprocess")


class ServerStartError(Exception):
    """The server did not become ready (the message says why; for a subprocess, its log)."""


def _free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _new_reactor() -> Any:
    """A reactor of the platform's best kind, not installed as the global one."""
    try:
        from twisted.internet.epollreactor import EPollReactor

        return EPollReactor()
    except ImportError:  # pragma: no cover - not Linux
        from twisted.internet.selectreactor import SelectReactor

        return SelectReactor()


def _write_service_account_key(path: str) -> None:
    """An ECDSA P-256 service-account signing key (ES256 tokens): generating and loading it
    takes a millisecond, where the server's own default, RSA 2048, takes a tenth of a
    second or more."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)


def _close_reactor(reactor: Any) -> None:
    """Close a stopped private reactor's descriptors (its waker's pipe, its poller) now
    rather than whenever the garbage collector gets to them."""
    waker = getattr(reactor, "waker", None)
    if waker is not None:
        reactor.removeReader(waker)
        waker.connectionLost(None)
        reactor.waker = None
    poller = getattr(reactor, "_poller", None)
    if poller is not None and hasattr(poller, "close"):
        poller.close()


class _TrackedReactor:
    """
    The caller's reactor as the server sees it (reactor mode): everything passes through,
    and the timed calls the server makes are remembered, so that L{cancel_pending} can
    cancel those still pending once the server has stopped (controllers schedule their
    re-watches when the store closes their watches); trial then finds its reactor clean.
    """

    def __init__(self, reactor: Any) -> None:
        self._reactor = reactor
        self._calls: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reactor, name)

    def callLater(self, delay: float, f: Any, *args: Any, **kwargs: Any) -> Any:
        call = self._reactor.callLater(delay, f, *args, **kwargs)
        if len(self._calls) > 256:
            self._calls = [c for c in self._calls if c.active()]
        self._calls.append(call)
        return call

    def cancel_pending(self) -> None:
        for call in self._calls:
            if call.active():
                call.cancel()
        self._calls = []


def load_crds(paths: Iterable[str]) -> list[dict]:
    """
    The CustomResourceDefinitions of YAML or JSON files (several documents a file; other
    kinds are skipped).

    @param paths: file paths, or directories (their C{.yaml}, C{.yml} and C{.json} files,
        sorted by name).
    @raise OSError: a path cannot be read.
    @raise yaml.YAMLError: a file is not YAML.
    """
    import yaml

    files: list[str] = []
    for path in paths:
        path = os.fspath(path)
        if os.path.isdir(path):
            files.extend(os.path.join(path, n) for n in sorted(os.listdir(path))
                         if n.endswith((".yaml", ".yml", ".json")))
        else:
            files.append(path)
    crds = []
    for name in files:
        with open(name, encoding="utf-8") as f:
            for doc in yaml.safe_load_all(f):
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    crds.append(doc)
    return crds


class _InlinePool:
    """A thread pool stand-in that makes L{SQLiteStorage} run each call inline, on the
    reactor's thread (its C{synchronous} switch)."""

    synchronous = True

    def stop(self) -> None:
        pass


class _FixtureService(KubeAPIService):
    """
    The process's service with test-friendly changes: a start-up failure fails L{ready}
    instead of exiting the process; readiness is noticed within milliseconds (the process
    polls every 100 ms for C{READY=1}); and, with C{in_memory}, the embedded store is an
    in-memory SQLite database used inline on the reactor's thread (the unit tests' store)
    instead of a file used from a thread of its own.
    """

    def __init__(self, reactor: Any, options: dict, version: str,
                 in_memory: bool = True) -> None:
        super().__init__(reactor, options, version)
        self.in_memory = in_memory
        self.ready: defer.Deferred = defer.Deferred()
        self._poll: Any = None

    def build_storage(self) -> Any:
        o = self.options
        if not self.in_memory or o["etcd-servers"]:
            return super().build_storage()
        from kubetwist.storage.compaction import DEFAULT_COMPACTION_INTERVAL, CompactorService
        from kubetwist.storage.sqlite import SQLiteStorage
        from kubetwist.storage.value import with_encryption_config

        storage = with_encryption_config(
            SQLiteStorage(self.reactor, ":memory:", o["etcd-prefix"], threadpool=_InlinePool()),
            o.get("encryption-provider-config"))
        self.compactor = CompactorService(
            storage, self.reactor,
            o.get("etcd-compaction-interval", DEFAULT_COMPACTION_INTERVAL))
        self.compactor.setServiceParent(self)
        return storage

    def startService(self) -> None:
        super().startService()
        from kubetwist.endpoints import offload

        # offload's pool is process-wide; several fixture servers (or a fixture in a test
        # process) must not hand each other's work to a reactor that may have stopped
        offload.configure(None, None)

    def _fatal(self, message: str) -> None:
        if not self.ready.called:
            self.ready.errback(ServerStartError(message))

    def _wait_ready(self) -> None:
        self._poll = None
        hooks = [h for s in self.front.chain() for h in s.hooks]
        if all(h.finished for h in hooks):
            if not self.ready.called:
                self.ready.callback(self)
            return
        self._poll = self.reactor.callLater(0.002, self._wait_ready)

    def stopService(self) -> Any:
        if self._poll is not None and self._poll.active():
            self._poll.cancel()
        self._poll = None
        return super().stopService()


class KubeServer:
    """
    One kubetwist API server for tests; see the module docstring for the modes.

    Use it as a context manager (C{with KubeServer() as server:}), or call L{start} and
    L{stop} (L{start_in_reactor} and L{stop_in_reactor} in C{mode="reactor"}).

    @ivar url: C{https://127.0.0.1:<port>}, once started.
    @ivar kubeconfig: path of the admin kubeconfig (client certificate of C{system:masters}).
    @ivar ca_file: the CA certificate (PEM) that verifies the serving certificate.
    @ivar client_cert_file: the admin client certificate (PEM); C{client_key_file} its key.
    @ivar data_dir: the server's directory (store, certificates, kubeconfig); removed by
        L{stop} unless it was given.
    @ivar service: the L{KubeAPIService} (thread and reactor modes); touch it only on the
        reactor's thread (L{call}).
    @ivar reactor: the reactor serving (thread and reactor modes).
    """

    def __init__(self, crds: Sequence[str] = (), *, mode: str = "thread",
                 args: Sequence[str] = (), data_dir: Optional[str] = None,
                 in_memory: bool = True, timeout: float = 60.0) -> None:
        """
        @param crds: CRD files or directories (L{load_crds}) installed, and established and
            served, before the server counts as started.
        @param mode: C{"thread"}, C{"reactor"} or C{"subprocess"}.
        @param args: more C{twistd kubeapi} flags (e.g. C{["--authorization-mode=AlwaysAllow"]}).
        @param data_dir: keep the server's files there (kept after L{stop}); default a new
            temporary directory, removed by L{stop}.
        @param in_memory: (thread and reactor modes) keep the embedded store in memory,
            used on the reactor's thread; C{False}: in C{data_dir}, as the process does.
        @param timeout: seconds L{start} waits for readiness.
        @raise ValueError: an unknown C{mode}.
        """
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self.crds = [os.fspath(p) for p in crds]
        self.args = list(args)
        self.timeout = timeout
        self.in_memory = in_memory
        self._own_dir = data_dir is None
        self.data_dir = data_dir
        self.url = ""
        self.port = 0
        self.reactor: Any = None
        self.service: Any = None
        self.process: Optional[subprocess.Popen] = None
        self._thread: Optional[threading.Thread] = None
        self._clients: list[Any] = []
        self._started = False

    # --- paths -----------------------------------------------------------------------------
    @property
    def kubeconfig(self) -> str:
        return os.path.join(self.data_dir or "", "admin.kubeconfig")

    @property
    def ca_file(self) -> str:
        return os.path.join(self.data_dir or "", "pki", "ca.crt")

    @property
    def client_cert_file(self) -> str:
        return os.path.join(self.data_dir or "", "pki", "admin.crt")

    @property
    def client_key_file(self) -> str:
        return os.path.join(self.data_dir or "", "pki", "admin.key")

    def _prepare(self) -> list[str]:
        """Create the directory and the service-account key; the C{kubeapi} arguments."""
        if self.data_dir is None:
            self.data_dir = tempfile.mkdtemp(prefix="kubetwist-test-")
        os.makedirs(self.data_dir, mode=0o700, exist_ok=True)
        sa_key = os.path.join(self.data_dir, "sa.key")
        if not os.path.exists(sa_key):
            _write_service_account_key(sa_key)
        self.port = _free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        return [
            f"--secure-port={self.port}", "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1", f"--data-dir={self.data_dir}",
            f"--service-account-signing-key-file={sa_key}",
            f"--service-account-key-file={sa_key}",
            "--workers=1",  # one server process (on etcd the default is one per core)
        ] + self.args

    def _service(self, reactor: Any, argv: list[str]) -> _FixtureService:
        from kubetwist.tap import KUBERNETES_VERSION, Options

        options = Options()
        options.parseOptions(argv)
        return _FixtureService(reactor, options, KUBERNETES_VERSION, in_memory=self.in_memory)

    # --- thread mode -----------------------------------------------------------------------
    def start(self) -> "KubeServer":
        """
        Start the server and wait until it is ready and the CRDs are served (thread and
        subprocess modes).

        @return: C{self}.
        @raise ServerStartError: not ready within C{timeout} seconds, or the start failed;
            everything started is stopped again.
        """
        if self.mode == "reactor":
            raise RuntimeError("mode='reactor': use start_in_reactor()")
        if self._started:
            raise RuntimeError("the server is already started")
        self._started = True
        try:
            for attempt in range(3):
                try:
                    if self.mode == "thread":
                        self._start_thread()
                    else:
                        self._start_subprocess()
                    break
                except ServerStartError as e:
                    # the free port was taken between the probe and the listen: another one
                    if "cannot listen" not in str(e) or attempt == 2:
                        raise
                    self._stop_thread() if self.mode == "thread" else self._stop_subprocess()
            if self.crds:
                self.install_crds(self.crds)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_thread(self) -> None:
        argv = self._prepare()
        self.reactor = reactor = _new_reactor()
        self.service = service = self._service(reactor, argv)
        done = threading.Event()
        outcome: list[Any] = []

        def started(result: Any) -> None:
            outcome.append(result)
            done.set()

        def go() -> None:
            service.ready.addBoth(started)
            service.startService()

        reactor.callWhenRunning(go)
        self._thread = threading.Thread(
            target=reactor.run, kwargs={"installSignalHandlers": False},
            name=f"kubetwist-reactor-{self.port}", daemon=True)
        self._thread.start()
        if not done.wait(self.timeout):
            raise ServerStartError(f"kubetwist not ready after {self.timeout}s")
        result = outcome[0]
        if isinstance(result, Exception) or hasattr(result, "raiseException"):
            err = getattr(result, "value", result)
            raise ServerStartError(str(err)) from None

    def call(self, f: Any, *args: Any, **kwargs: Any) -> Any:
        """
        Run C{f(*args, **kwargs)} on the server's reactor thread and return its result
        (waiting for a Deferred result), for tests that inspect the server's objects.

        @raise RuntimeError: not in thread mode, or not started.
        """
        if self.mode != "thread" or self._thread is None:
            raise RuntimeError("call() needs a started server in thread mode")
        from twisted.internet import threads

        return threads.blockingCallFromThread(self.reactor, f, *args, **kwargs)

    def _stop_thread(self) -> None:
        reactor, thread = self.reactor, self._thread
        if reactor is None or thread is None:
            return

        def shutdown() -> None:
            d = defer.maybeDeferred(self.service.stopService) if self.service.running \
                else defer.succeed(None)
            d.addErrback(lambda f: None)
            d.addBoth(lambda _: reactor.stop())

        if thread.is_alive():
            reactor.callFromThread(shutdown)
            thread.join(self.timeout)
        if not thread.is_alive():
            _close_reactor(reactor)
        self._thread = None
        self.reactor = None

    # --- reactor mode ----------------------------------------------------------------------
    def start_in_reactor(self, reactor: Any = None) -> defer.Deferred:
        """
        Start in C{reactor} (default: the global one, trial's); a Deferred of C{self}, fired
        once ready and the CRDs are served.  The caller must wait for L{stop_in_reactor}'s
        Deferred before the test ends.
        """
        if reactor is None:
            from twisted.internet import reactor as global_reactor

            reactor = global_reactor
        if self._started:
            raise RuntimeError("the server is already started")
        self._started = True
        self.reactor = reactor
        self._tracked = _TrackedReactor(reactor)
        self.service = service = self._service(self._tracked, self._prepare())
        service.startService()

        def installed(_: Any) -> Any:
            if not self.crds:
                return self
            from twisted.internet import threads

            pool = reactor.getThreadPool()
            return threads.deferToThreadPool(reactor, pool, self.install_crds, self.crds) \
                .addCallback(lambda _: self)

        def failed(failure: Any) -> Any:
            return self.stop_in_reactor().addBoth(lambda _: failure)

        timeout = reactor.callLater(self.timeout, service.ready.cancel)
        service.ready.addBoth(lambda r: (timeout.cancel() if timeout.active() else None, r)[1])
        return service.ready.addCallback(installed).addErrback(failed)

    def stop_in_reactor(self) -> defer.Deferred:
        """Stop the server started by L{start_in_reactor}: a Deferred fired once stopped and
        its files removed."""
        service = self.service
        d = defer.succeed(None)
        if service is not None and service.running:
            d = defer.maybeDeferred(service.stopService)

        def stopped(_: Any) -> None:
            tracked = getattr(self, "_tracked", None)
            if tracked is not None:
                tracked.cancel_pending()
            self._cleanup()

        return d.addBoth(stopped)

    # --- subprocess mode -------------------------------------------------------------------
    def _start_subprocess(self) -> None:
        import kubetwist

        argv = self._prepare()
        root = os.path.dirname(os.path.dirname(os.path.abspath(kubetwist.__file__)))
        env = dict(os.environ)
        env.pop("NOTIFY_SOCKET", None)
        env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
        log_path = os.path.join(self.data_dir or "", "kubeapi.log")
        command = [sys.executable, "-c", "from twisted.scripts.twistd import run; run()",
                   "-n", "--pidfile=", "kubeapi"] + argv
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=self.data_dir, env=env, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + self.timeout
        last = "not started"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            if os.path.exists(self.kubeconfig):
                try:
                    code, body = self.request("GET", "/readyz", timeout=5)
                    if code == 200:
                        return
                    last = f"/readyz answered {code}"
                except (OSError, http.client.HTTPException) as e:
                    last = repr(e)
            time.sleep(0.01)
        with open(log_path, encoding="utf-8", errors="replace") as f:
            tail = "".join(f.readlines()[-40:])
        raise ServerStartError(f"twistd kubeapi not ready ({last}; exit code "
                               f"{self.process.poll()}); its log:\n{tail}")

    def _stop_subprocess(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(self.timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    # --- stopping --------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the server, close the clients handed out, remove the temporary directory.
        Idempotent."""
        if self.mode == "thread":
            self._stop_thread()
        elif self.mode == "subprocess":
            self._stop_subprocess()
        self._cleanup()

    def _cleanup(self) -> None:
        for client in self._clients:
            try:
                client.close()
            except Exception:  # noqa: BLE001 - best effort, the server is gone
                pass
        self._clients = []
        self.service = None
        if self._own_dir and self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = None
        self._started = False

    def __enter__(self) -> "KubeServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # --- clients ---------------------------------------------------------------------------
    def ssl_context(self) -> ssl.SSLContext:
        """A client TLS context: trusts the server's CA, presents the admin certificate."""
        context = ssl.create_default_context(cafile=self.ca_file)
        context.load_cert_chain(self.client_cert_file, self.client_key_file)
        return context

    def request(self, method: str, path: str, body: Any = None,
                headers: Optional[dict] = None, timeout: float = 30.0) -> tuple[int, Any]:
        """
        One blocking request as the admin (not on the reactor's thread in reactor mode).

        @param body: a dict (sent as JSON), bytes, or C{None}.
        @return: C{(status code, decoded JSON body, or the text when not JSON)}.
        @raise OSError: the server cannot be reached.
        """
        connection = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                                 context=self.ssl_context())
        try:
            h = {"Accept": "application/json"}
            data = body
            if body is not None and not isinstance(body, bytes):
                data = json.dumps(body).encode()
                h["Content-Type"] = "application/json"
            h.update(headers or {})
            connection.request(method, path, body=data, headers=h)
            response = connection.getresponse()
            raw = response.read()
        finally:
            connection.close()
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, raw.decode("utf-8", "replace")

    def api_client(self) -> Any:
        """
        An official C{kubernetes} client C{ApiClient} for the admin, closed by L{stop}
        (C{pip install kubetwist[testing]} brings the C{kubernetes} package).
        """
        from kubernetes import client

        configuration = client.Configuration()
        configuration.host = self.url
        configuration.ssl_ca_cert = self.ca_file
        configuration.cert_file = self.client_cert_file
        configuration.key_file = self.client_key_file
        api = client.ApiClient(configuration)
        self._clients.append(api)
        return api

    # --- CRDs ------------------------------------------------------------------------------
    def install_crds(self, paths: Iterable[str], timeout: Optional[float] = None) -> list[str]:
        """
        Create the CustomResourceDefinitions of C{paths} (an existing one of the same name is
        replaced) and wait until each is C{Established} and its served versions are in
        discovery.  Blocking: call it from the test's thread (in reactor mode, from a thread:
        L{start_in_reactor} does so for the constructor's C{crds}).

        @return: the CRDs' names.
        @raise ServerStartError: a CRD is refused (the Status message) or not served in time.
        """
        base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        names = []
        deadline = time.monotonic() + (timeout or self.timeout)
        crds = load_crds(paths)
        for crd in crds:
            name = crd["metadata"]["name"]
            names.append(name)
            code, body = self.request("POST", base, crd)
            if code == 409:
                code, current = self.request("GET", f"{base}/{name}")
                crd = dict(crd, metadata=dict(
                    crd["metadata"], resourceVersion=current["metadata"]["resourceVersion"]))
                code, body = self.request("PUT", f"{base}/{name}", crd)
            if code not in (200, 201):
                message = body.get("message") if isinstance(body, dict) else body
                raise ServerStartError(f"CRD {name} refused ({code}): {message}")
        for crd in crds:
            self._wait_served(crd, deadline)
        return names

    def _wait_served(self, crd: dict, deadline: float) -> None:
        base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        spec = crd["spec"]
        name = crd["metadata"]["name"]
        versions = [v["name"] for v in spec.get("versions", []) if v.get("served", True)]
        while True:
            code, body = self.request("GET", f"{base}/{name}")
            conditions = (body.get("status") or {}).get("conditions") or [] \
                if code == 200 else []
            established = any(c.get("type") == "Established" and c.get("status") == "True"
                              for c in conditions)
            if established and all(
                    self._discovered(spec["group"], v, spec["names"]["plural"])
                    for v in versions):
                return
            if time.monotonic() > deadline:
                raise ServerStartError(f"CRD {name} not established and served in time")
            time.sleep(0.005)

    def _discovered(self, group: str, version: str, plural: str) -> bool:
        code, body = self.request("GET", f"/apis/{group}/{version}")
        return code == 200 and any(r.get("name") == plural for r in body.get("resources", []))


def _die_with_parent() -> None:
    """C{preexec_fn}: the child gets SIGTERM when the test process dies (Linux)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
