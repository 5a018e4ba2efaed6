# -*- test-case-name: tests.integration.test_server -*-
"""
The server process itself, driven from outside: authentication by C{--token-auth-file},
C{--write-kubeconfig}, systemd readiness through C{$NOTIFY_SOCKET}, and the installed C{twistd}
plugin with its command line (upstream C{cmd/kube-apiserver/app/options}: flag names, defaults
and start-up errors).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time

import yaml
from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import (
    SYSTEM_NAMESPACES,
    KubeAPIProcess,
    ServerFixture,
    ServerTestMixin,
    class_units,
    free_port,
    kubectl,
    venv_binary,
)

TOKEN = "31ada4fd-adec-460c-809a-9e56ceb75269"


class TokenAuthTests(ServerTestMixin, SynchronousTestCase):
    """
    A server started with C{--token-auth-file}, C{--write-kubeconfig} and C{NOTIFY_SOCKET}.
    """

    @classmethod
    def start_fixture(cls) -> ServerFixture:
        work = tempfile.mkdtemp(prefix="kubetwist-it-token-")
        token_file = os.path.join(work, "tokens.csv")
        with open(token_file, "w", encoding="utf-8") as f:
            f.write(f'{TOKEN},alice,1001,"developers,qa"\n')
        notify_path = os.path.join(work, "notify.sock")
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        notify.setblocking(False)
        server = KubeAPIProcess(
            # authentication is what this class tests: the token user may do everything
            extra_args=[f"--token-auth-file={token_file}", "--authorization-mode=AlwaysAllow"],
            env={"NOTIFY_SOCKET": notify_path},
            kubeconfig=os.path.join(work, "not-yet", "custom.kubeconfig"),
        )
        try:
            server.start()
        except BaseException:
            server.cleanup()
            notify.close()
            shutil.rmtree(work, ignore_errors=True)
            raise
        return ServerFixture(server, notify=notify, work_dir=work)

    def wait_notification(self, state: bytes, timeout: float = 15.0) -> list[bytes]:
        """
        Read the datagrams sent to C{$NOTIFY_SOCKET} until one has the line C{state}.

        @return: the states read (each datagram split into its lines).
        @raise FailTest: none came within C{timeout} seconds.
        """
        seen: list[bytes] = []
        deadline = time.monotonic() + timeout
        sock = self.fixture.notify
        while time.monotonic() < deadline:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                seen.extend(sock.recv(4096).split(b"\n"))
            except (TimeoutError, BlockingIOError):
                break
            if state in seen:
                return seen
        self.fail(
            f"no {state!r} on NOTIFY_SOCKET within {timeout}s; got {seen!r}\n"
            + self.server.log_tail(20)
        )

    def test_token_authenticates(self) -> None:
        """A bearer token from C{--token-auth-file} authenticates (no client certificate)."""
        response = self.server.request("GET", "/api/v1/namespaces", client_cert=False, token=TOKEN)
        self.assertEqual(response.status, 200, response.body)
        self.assertEqual(response.json()["kind"], "NamespaceList")

    def test_wrong_token(self) -> None:
        """An unknown bearer token gets 401 Unauthorized."""
        response = self.server.request(
            "GET", "/api/v1/namespaces", client_cert=False, token="not-" + TOKEN
        )
        self.assertStatus(response, 401, "Unauthorized")

    def test_kubectl_with_token(self) -> None:
        """C{kubectl} with a token-only kubeconfig lists the system namespaces."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "alice",
            "clusters": [
                {
                    "name": "kubetwist",
                    "cluster": {
                        "server": self.server.url,
                        "certificate-authority": self.server.ca_file,
                    },
                }
            ],
            "users": [{"name": "alice", "user": {"token": TOKEN}}],
            "contexts": [{"name": "alice", "context": {"cluster": "kubetwist", "user": "alice"}}],
        }
        path = self.temp_file(yaml.safe_dump(config))
        out = kubectl(
            "get", "ns", "-o", "name", kubeconfig=path, env={"KUBECACHEDIR": self.server.cache_dir}
        ).stdout.split()
        for name in SYSTEM_NAMESPACES:
            self.assertIn(f"namespace/{name}", out)

    def test_write_kubeconfig(self) -> None:
        """
        C{--write-kubeconfig PATH} writes the admin kubeconfig there (mode 0600), creating its
        directory.
        """
        self.assertTrue(self.server.kubeconfig.endswith("/not-yet/custom.kubeconfig"))
        self.assertEqual(os.stat(self.server.kubeconfig).st_mode & 0o777, 0o600)
        self.assertFalse(os.path.exists(os.path.join(self.server.data_dir, "admin.kubeconfig")))
        out = self.server.kubectl("get", "ns", "default", "-o", "name").stdout
        self.assertEqual(out.strip(), "namespace/default")

    def test_sd_notify(self) -> None:
        """
        With C{$NOTIFY_SOCKET} set the server sends C{READY=1} once ready and C{STOPPING=1}
        when SIGTERM stops it.
        """
        self.wait_notification(b"READY=1")
        self.server.stop()
        self.wait_notification(b"STOPPING=1", timeout=1)
        self.server.start()
        self.wait_notification(b"READY=1")


class PackagingTests(SynchronousTestCase):
    """The installed C{twistd} plugin and its command line."""

    FLAGS = (
        "--etcd-servers",
        "--etcd-prefix",
        "--secure-port",
        "--bind-address",
        "--cert-dir",
        "--tls-cert-file",
        "--tls-private-key-file",
        "--client-ca-file",
        "--token-auth-file",
        "--service-cluster-ip-range",
        "--service-node-port-range",
        "--authorization-mode",
        "--max-requests-inflight",
        "--max-mutating-requests-inflight",
        "--request-timeout",
        "--shutdown-delay-duration",
        "--data-dir",
        "--write-kubeconfig",
    )

    def twistd(self, *args: str) -> subprocess.CompletedProcess:
        """Run the virtualenv's C{twistd} with C{args} in a temporary directory."""
        work = tempfile.mkdtemp(prefix="kubetwist-it-cli-")
        self.addCleanup(shutil.rmtree, work, True)
        return subprocess.run(
            [venv_binary("twistd"), *args],
            check=False,
            capture_output=True,
            text=True,
            cwd=work,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )

    def test_plugin_listed(self) -> None:
        """C{twistd --help} lists the C{kubeapi} plugin."""
        result = self.twistd("--help")
        self.assertRegex(result.stdout, r"(?m)^\s+kubeapi\s")

    def test_flags_listed(self) -> None:
        """C{twistd kubeapi --help} lists every flag of the issue."""
        result = self.twistd("kubeapi", "--help")
        self.assertEqual(result.returncode, 0, result.stderr)
        for flag in self.FLAGS:
            self.assertIn(flag, result.stdout)

    def test_bad_flag_value(self) -> None:
        """
        A bad flag value fails at start (non-zero exit) with an error naming the flag and no
        traceback.
        """
        for args, flag in [
            (["--secure-port=notaport"], "secure-port"),
            (["--authorization-mode=Bogus"], "authorization-mode"),
            (["--service-node-port-range=9-3"], "service-node-port-range"),
        ]:
            result = self.twistd("-n", "--pidfile=", "kubeapi", "--data-dir=data", *args)
            output = result.stdout + result.stderr
            self.assertNotEqual(result.returncode, 0, output)
            self.assertNotIn("Traceback", output)
            last = [line for line in output.splitlines() if line.strip()][-1]
            self.assertIn(flag, last, output)

    def test_start_failure_exit_code(self) -> None:
        """
        A server that cannot start (its --tls-cert-file does not exist) exits non-zero with an
        error line and no traceback.
        """
        result = self.twistd(
            "-n",
            "--pidfile=",
            "kubeapi",
            "--data-dir=data",
            f"--secure-port={free_port()}",
            "--bind-address=127.0.0.1",
            "--tls-cert-file=missing.crt",
            "--tls-private-key-file=missing.key",
        )
        output = result.stdout + result.stderr
        self.assertNotEqual(result.returncode, 0, output)
        self.assertNotIn("Traceback", output)
        self.assertIn("missing.crt", output)


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
