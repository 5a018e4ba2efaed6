"""
Network namespaces for tests whose backend must sit behind Endpoints (which may not name
loopback addresses, as upstream validates): a namespace with a veth pair on a private /30
(C{10.213.N.0/30}: the host side C{.1}, the namespace side C{.2}), processes started inside
it, and everything removed afterwards.  Traffic stays on this machine.

Needs root (tests and CI run as root) and C{ip}; L{skip_reason} says why a machine cannot.
Several test processes (C{trial -j}) may create namespaces at once: C{N} is claimed
atomically by creating the namespace C{kubetwist-N}, which fails when another process has it.
Each namespace records its creator's process id in L{OWNERS}; one whose creator has died
without removing it (a test worker killed at the end of a run) is removed by the next
L{NetworkNamespace} made, so none pile up on a machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any, Optional, Sequence

from tests.support import die_with_parent

#: C{N} of C{10.213.N.0/30} and of the names; the third octet (the /30 is C{N*4}'s block
#: inside C{10.213.0.0/16}: C{10.213.(N // 64).((N % 64) * 4)/30}).
_RANGE = range(1, 4000)
_PREFIX = "kubetwist-"
#: where each namespace's creator pid is written (a tmpfs: gone at reboot with the namespaces)
OWNERS = "/run/kubetwist-netns"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap_stale() -> list[str]:
    """Remove the namespaces (and their veth pairs) whose recorded creator is no longer
    running; return their names."""
    removed = []
    try:
        names = os.listdir(OWNERS)
    except OSError:
        return removed
    for name in names:
        path = os.path.join(OWNERS, name)
        try:
            with open(path) as f:
                pid = int(f.read().strip() or 0)
        except (OSError, ValueError):
            continue
        if pid and _alive(pid):
            continue
        number = name[len(_PREFIX):]
        _run("link", "del", f"kth{number}", check=False)
        _run("netns", "del", name, check=False)
        try:
            os.unlink(path)
        except OSError:
            pass
        removed.append(name)
    return removed


def skip_reason() -> Optional[str]:
    """Why network namespaces cannot be made here (L{None}: they can)."""
    if shutil.which("ip") is None:
        return "needs the ip command (iproute2)"
    if os.geteuid() != 0:
        return "needs root for ip netns"
    return None


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *argv], check=check, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


class NetworkNamespace:
    """
    One namespace, its veth pair and /30.

    @ivar name: the namespace's name (C{kubetwist-N}).
    @ivar host_address: the host side's address (the API server reaches the namespace from
        it, and processes inside reach the host at it).
    @ivar address: the namespace side's address (where a backend inside listens).
    """

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen] = []
        reap_stale()
        for n in _RANGE:
            if _run("netns", "add", f"{_PREFIX}{n}", check=False).returncode == 0:
                break
        else:
            raise RuntimeError("no free network namespace number")
        self.number = n
        self.name = f"{_PREFIX}{n}"
        os.makedirs(OWNERS, exist_ok=True)
        with open(os.path.join(OWNERS, self.name), "w") as f:
            f.write(str(os.getpid()))
        base = (n % 64) * 4
        net = f"10.213.{n // 64}"
        self.host_address, self.address = f"{net}.{base + 1}", f"{net}.{base + 2}"
        self.host_link, self.inner_link = f"kth{n}", f"ktn{n}"
        try:
            _run("link", "add", self.host_link, "type", "veth", "peer", "name", self.inner_link)
            _run("link", "set", self.inner_link, "netns", self.name)
            _run("addr", "add", f"{self.host_address}/30", "dev", self.host_link)
            _run("link", "set", self.host_link, "up")
            self.exec_ip("addr", "add", f"{self.address}/30", "dev", self.inner_link)
            self.exec_ip("link", "set", self.inner_link, "up")
            self.exec_ip("link", "set", "lo", "up")
        except BaseException:
            self.close()
            raise

    def exec_ip(self, *argv: str) -> None:
        subprocess.run(["ip", "netns", "exec", self.name, "ip", *argv], check=True,
                       capture_output=True, stdin=subprocess.DEVNULL)

    def popen(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen:
        """Start C{argv} inside the namespace (killed with the test process, and by
        L{close})."""
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        kwargs.setdefault("preexec_fn", die_with_parent)
        p = subprocess.Popen(["ip", "netns", "exec", self.name, *argv], **kwargs)
        self.processes.append(p)
        return p

    def close(self) -> None:
        """Stop the processes started inside, remove the veth pair and the namespace."""
        for p in self.processes:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.processes = []
        _run("link", "del", self.host_link, check=False)
        _run("netns", "del", self.name, check=False)
        try:
            os.unlink(os.path.join(OWNERS, self.name))
        except OSError:
            pass


def new_network_namespace(test: Any) -> NetworkNamespace:
    """A L{NetworkNamespace} removed at C{test}'s cleanup; skips C{test} where none can be
    made."""
    from twisted.trial.unittest import SkipTest

    reason = skip_reason()
    if reason:
        raise SkipTest(reason)
    ns = NetworkNamespace()
    test.addCleanup(ns.close)
    return ns
