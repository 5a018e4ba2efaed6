"""
Shared pieces of the hand-run benchmarks: the machine description, real processes (a throwaway
etcd and C{twistd -n kubeapi} on free loopback ports, through the integration-test harness),
HTTPS client contexts, per-process CPU and memory readings from C{/proc}, and result output.

Nothing here is part of the test suite, and no test imports it.  Every benchmark runs with the
virtualenv's interpreter from the repository root, e.g. C{python benchmarks/bench_get.py}.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import datetime
import json
import os
import platform
import shlex
import ssl
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Self

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.integration.harness import EtcdProcess, KubeAPIProcess

#: The namespace the benchmarks create their objects in.
NAMESPACE = "bench"


# --------------------------------------------------------------------------------------------
# The machine and the tree


def machine() -> dict:
    """
    What the numbers were measured on: C{nproc}, the C{Mem:} line of C{free -h}, the CPU model,
    the Python version, the date (UTC), the command, the git revision and whether the Cacher
    exists and is wired into C{twistd kubeapi}.
    """
    model = "unknown"
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem = ""
    load = ""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["free", "-h"], capture_output=True, text=True, check=False).stdout
        mem = next((line for line in out.splitlines() if line.startswith("Mem:")), "")
    import kubetwist

    tree = Path(kubetwist.__file__).resolve().parent.parent
    revision = ""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        revision = subprocess.run(
            ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(tree), "status", "--porcelain", "--", "kubetwist"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        if revision and dirty:
            revision += " + uncommitted changes"
    if tree != ROOT:
        revision = f"{revision} (kubetwist imported from another tree)".strip()
    with contextlib.suppress(OSError), open("/proc/loadavg", encoding="ascii") as f:
        load = " ".join(f.read().split()[:3])
    run_py = tree / "kubetwist" / "server" / "run.py"
    wired = run_py.is_file() and "Cacher" in run_py.read_text(encoding="utf-8")
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": " ".join(shlex.quote(a) for a in ["python", *sys.argv]),
        "nproc": os.cpu_count(),
        "memory": " ".join(mem.split()),
        "cpu": model,
        "python": platform.python_version(),
        "git": revision,
        "loadavg_at_end": load,
        "cacher_present": (tree / "kubetwist" / "storage" / "cacher").is_dir(),
        "cacher_wired": wired,
    }


# --------------------------------------------------------------------------------------------
# /proc readings


_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process C{pid} so far, in seconds."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def rss_bytes(pid: int) -> int:
    """Resident set size (C{VmRSS}) of process C{pid}, in bytes."""
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


class CPUMeter:
    """CPU seconds used by some processes between L{start} and L{stop}, per process name."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = {name: pid for name, pid in pids.items() if pid}
        self.before: dict[str, float] = {}
        self.wall = 0.0

    def start(self) -> None:
        self.before = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        self.before["client"] = time.process_time()
        self.wall = time.monotonic()

    def stop(self) -> dict[str, float]:
        """Fraction of one core each process used over the interval (1.0 = one full core)."""
        wall = time.monotonic() - self.wall
        used = {name: cpu_seconds(pid) - self.before[name] for name, pid in self.pids.items()}
        used["client"] = time.process_time() - self.before["client"]
        return {name: round(seconds / wall, 2) for name, seconds in used.items()}


# --------------------------------------------------------------------------------------------
# Processes


class Cluster:
    """
    A throwaway etcd and one C{twistd -n kubeapi} on it, both on free loopback ports.

    @ivar etcd: the L{EtcdProcess}.
    @ivar server: the L{KubeAPIProcess}.
    """

    def __init__(self, extra_args: tuple[str, ...] = ()) -> None:
        self.etcd = EtcdProcess()
        self.server: KubeAPIProcess | None = None
        self.extra_args = extra_args

    def __enter__(self) -> Self:
        self.etcd.start()
        self.server = KubeAPIProcess(etcd_url=self.etcd.url, extra_args=self.extra_args)
        try:
            start = time.monotonic()
            self.server.start()
            #: seconds from spawning C{twistd kubeapi} to C{/readyz} ok (polled every 0.1 s)
            self.server_ready_in = time.monotonic() - start
            self._wait_workers()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.server is not None:
            self.server.cleanup()
        self.etcd.stop()
        import shutil

        shutil.rmtree(self.etcd.data_dir, ignore_errors=True)

    def _wait_workers(self, timeout: float = 120.0) -> None:
        """With C{--workers=N} in the server's arguments: wait until every worker's log line
        says it is ready (the harness waits for one C{/readyz} only)."""
        workers = [int(a.split("=", 1)[1]) for a in self.extra_args if a.startswith("--workers=")]
        deadline = time.monotonic() + timeout
        while workers and time.monotonic() < deadline:
            with open(self.server.log_path, "rb") as f:
                if f.read().count(b"kubetwist is ready") >= workers[-1]:
                    return
            time.sleep(0.2)
        if workers:
            raise RuntimeError(f"not every one of {workers[-1]} workers was ready")

    def worker_pids(self) -> dict[str, int]:
        """The workers other than the supervisor (C{--workers}), as C{kubeapi-<n>}."""
        pid = self.server.process.pid
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                children = [int(p) for p in f.read().split()]
        except OSError:
            children = []
        return {f"kubeapi-{i}": child for i, child in enumerate(children, start=1)}

    @property
    def pids(self) -> dict[str, int]:
        """The process ids, by role (the workers of C{--workers} as C{kubeapi-<n>})."""
        return {"kubeapi": self.server.process.pid, "etcd": self.etcd.process.pid,
                **self.worker_pids()}

    def client_ssl(self) -> ssl.SSLContext:
        """A client context trusting the server's CA and presenting the admin certificate."""
        return client_ssl(self.server)

    def create_namespace(self, name: str = NAMESPACE) -> None:
        body = json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        response = self.server.request("POST", "/api/v1/namespaces", body.encode())
        if response.status not in (201, 409):
            raise RuntimeError(f"cannot create namespace {name}: {response.status} {response.body}")

    def etcd_get_raw(self, key: str) -> bytes | None:
        """The raw value of C{key} in etcd (through the gateway), or C{None}."""
        import http.client

        connection = http.client.HTTPConnection("127.0.0.1", self.etcd.client_port, timeout=10)
        try:
            body = json.dumps({"key": base64.b64encode(key.encode()).decode()})
            connection.request("POST", "/v3/kv/range", body=body)
            answer = json.loads(connection.getresponse().read())
        finally:
            connection.close()
        kvs = answer.get("kvs") or []
        return base64.b64decode(kvs[0]["value"]) if kvs else None


def client_ssl(server: KubeAPIProcess) -> ssl.SSLContext:
    """A client context trusting C{server}'s CA and presenting its admin certificate."""
    context = ssl.create_default_context(cafile=server.ca_file)
    context.load_cert_chain(server.admin_cert_file, server.admin_key_file)
    context.set_alpn_protocols(["http/1.1"])
    return context


def spawn(*args: str, ready_line: str = "READY", timeout: float = 30.0) -> subprocess.Popen:
    """
    Start C{python <args>} and wait until it prints C{ready_line} on stdout.

    @raise RuntimeError: it exits or does not get ready within C{timeout} seconds.
    """
    process = subprocess.Popen(
        [sys.executable, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        if line.strip() == ready_line:
            return process
    process.kill()
    process.wait()
    raise RuntimeError(f"{args} did not get ready (exit {process.returncode})")


def terminate(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 10 seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# --------------------------------------------------------------------------------------------
# Load generation


def server_load_args(doc: str) -> argparse.ArgumentParser:
    """
    The options of a closed-loop benchmark against one server (C{bench_get},
    C{bench_create}): C{--duration} (seconds per phase), C{--concurrency}, C{--rounds},
    C{--server-arg} (repeatable extra C{twistd kubeapi} flags) and C{--profile} (a py-spy
    file); the description is C{doc}'s first paragraph.
    """
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--server-arg",
        action="append",
        default=[],
        metavar="FLAG",
        help="one more twistd kubeapi flag, e.g. --server-arg=--workers=2 (repeatable)",
    )
    parser.add_argument(
        "--profile",
        metavar="FILE",
        help="py-spy the kubeapi process during the first kubetwist phase",
    )
    return parser


async def closed_loop(
    duration: float,
    concurrency: int,
    one: Callable[[int, int], Awaitable[None]],
) -> tuple[int, float]:
    """
    Run C{concurrency} workers, each calling C{await one(worker, sequence)} back to back, for
    C{duration} seconds (no new call starts after that).

    @return: (completed calls, elapsed seconds).
    """
    deadline = time.monotonic() + duration
    done = [0]

    async def worker(n: int) -> None:
        seq = 0
        while time.monotonic() < deadline:
            await one(n, seq)
            seq += 1
            done[0] += 1

    start = time.monotonic()
    await asyncio.gather(*(worker(n) for n in range(concurrency)))
    return done[0], time.monotonic() - start


def percentile(values: list[float], p: float) -> float:
    """The C{p}-th percentile (0..100) of C{values}, nearest-rank."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(0, min(len(ordered) - 1, round(p / 100.0 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def report(name: str, result: dict, target: str, ratio: float | None, met: bool | None) -> None:
    """Print the result as readable lines and one final C{RESULT <json>} line."""
    record = {
        "benchmark": name,
        "target": target,
        "ratio": ratio,
        "met": met,
        "machine": machine(),
        **result,
    }
    print(f"\n== {name}")
    for key, value in record.items():
        print(f"  {key}: {value}")
    print("RESULT " + json.dumps(record, sort_keys=True), flush=True)


@contextlib.contextmanager
def timed(label: str) -> Iterator[None]:
    """Print how long the block took (for setup phases)."""
    start = time.monotonic()
    yield
    print(f"  [{label}: {time.monotonic() - start:.1f}s]", flush=True)


# --------------------------------------------------------------------------------------------
# Profiling (py-spy, optional)


def start_profile(pid: int, seconds: float, out: str) -> subprocess.Popen | None:
    """
    C{py-spy record} of process C{pid} for C{seconds} into C{out} (collapsed stacks), or
    C{None} when py-spy is not installed next to the interpreter.
    """
    binary = os.path.join(os.path.dirname(sys.executable), "py-spy")
    if not os.access(binary, os.X_OK):
        print("  [py-spy is not installed: pip install py-spy]")
        return None
    return subprocess.Popen(
        [
            binary,
            "record",
            "-p",
            str(pid),
            "-d",
            str(int(seconds)),
            "-r",
            "200",
            "-f",
            "raw",
            "-o",
            out,
            "--nonblocking",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )


def summarize_profile(path: str, top: int = 25) -> str:
    """
    The C{top} functions of a collapsed-stack profile by inclusive and by self samples, as text
    (percentages of all samples; idle reactor time shows as C{epoll}/C{doPoll}).
    """
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    total = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            stack, _, count_text = line.rstrip("\n").rpartition(" ")
            if not stack:
                continue
            count = int(count_text)
            total += count
            frames = stack.split(";")
            for frame in set(frames):
                inclusive[frame] = inclusive.get(frame, 0) + count
            own[frames[-1]] = own.get(frames[-1], 0) + count
    lines = [f"samples: {total}", "inclusive:"]
    for frame, count in sorted(inclusive.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"  {100.0 * count / total:5.1f}%  {frame}")
    lines.append("self:")
    for frame, count in sorted(own.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"  {100.0 * count / total:5.1f}%  {frame}")
    return "\n".join(lines)


@contextlib.contextmanager
def profiled(out: str | None, pid: int, seconds: float) -> Iterator[None]:
    """
    Run the block while py-spy records process C{pid} into C{out} (nothing when C{out} is
    C{None}); afterwards print the summary (L{summarize_profile}).
    """
    process = start_profile(pid, seconds, out) if out else None
    try:
        yield
    finally:
        if process is not None:
            try:
                process.wait(seconds + 30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if os.path.exists(out):
                print(summarize_profile(out), flush=True)
