# -*- test-case-name: tests.test_benchmark_compare -*-
"""
Side by side: the same loads against kube-apiserver v1.32 (C{../shared/upstream/run-upstream.sh})
and C{twistd kubeapi}, each on a fresh etcd of the same binary (the C{etcd.xz} shipped beside
run-upstream.sh, unpacked once into its cache), printed as the table of issue 14 with ratios
(kube-apiserver is the denominator; every ratio reads "times as good": rates are
kubetwist / upstream, durations and memory upstream / kubetwist).

The servers run one after the other, never together (kubetwist on etcd, then optionally
kubetwist on its embedded store, then kube-apiserver), so they do not share the cores with each
other.  Both are reached the same way: HTTPS, HTTP/1.1, the same client certificate (kubetwist's
generated admin certificate; kube-apiserver trusts kubetwist's CA through
C{--client-ca-file}).  The loads are those of the other benchmarks: L{bench_create}'s closed
loop of creates, L{bench_get}'s GET phase, L{bench_list}'s populate, L{bench_watch}'s raw
watchers and rounds, L{common.closed_loop}.  C{--profile-dir DIR} runs each metric once more,
uncounted, under py-spy (kubetwist only) and keeps C{DIR/<metric>.txt}.

Run by hand from the repository root, never in CI (minutes; starts real processes)::

    python benchmarks/compare_upstream.py [--embedded] [--duration 10] [--profile-dir /tmp/prof]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM_DIR = ROOT.parent / "shared" / "upstream"

#: C{(key, label, unit, higher_is_better)} of the table's rows, in order.
METRICS: list[tuple[str, str, str, bool]] = [
    ("create", "CREATE ConfigMap, {concurrency} concurrent", "/s", True),
    ("get", "GET one ConfigMap, {concurrency} concurrent", "/s", True),
    ("list_rv0", "LIST {objects:,}, `resourceVersion=0`, {list_concurrency} concurrent", "/s",
     True),
    ("list_consistent", "LIST {objects:,}, consistent", "/s", True),
    ("list_limit", "LIST `limit=100`, consistent", "/s", True),
    ("list_table", "LIST as Table", "/s", True),
    ("watch", "watch fan-out {watchers} × {updates}, seconds (lower is better)", "s", False),
    ("rss", "RSS after the run", "MB", False),
    ("ready", "start to ready", "s", False),
]

#: The rows whose ratio reads C{N× better} when above 1.
BETTER_WORDED = ("rss", "ready")

#: The list requests of the C{list_*} metrics: C{(query, Accept)}.
LIST_QUERIES = {
    "list_rv0": ("?resourceVersion=0", "application/json"),
    "list_consistent": ("", "application/json"),
    "list_limit": ("?limit=100", "application/json"),
    "list_table": ("", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"),
}


# --------------------------------------------------------------------------------------------
# Pure parts: arguments, ratios, the table


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    """
    The runner's options.

    @raise SystemExit: unknown option or a value that is not positive (argparse's exit 2).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per rate phase")
    parser.add_argument("--concurrency", type=int, default=32, help="CREATE/GET workers")
    parser.add_argument("--objects", type=int, default=1000, help="ConfigMaps listed")
    parser.add_argument("--list-concurrency", type=int, default=4)
    parser.add_argument("--watchers", type=int, default=200)
    parser.add_argument("--updates", type=int, default=100)
    parser.add_argument("--embedded", action="store_true",
                        help="also measure kubetwist on its embedded store")
    parser.add_argument("--no-upstream", action="store_true",
                        help="measure kubetwist only (no ratios)")
    parser.add_argument("--profile-dir", default=None,
                        help="py-spy profile of kubetwist per metric into this folder")
    parser.add_argument("--base-port", type=int, default=39150,
                        help="kube-apiserver's etcd client port; peer and secure ports follow")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    parser.add_argument("--load", choices=("wrk", "python"), default="wrk",
                        help="the load tool of the rate metrics: wrk (C, as the issue's hey; "
                        "`apt-get install wrk`) or the Python asyncio client")
    parser.add_argument("--workers", type=int, default=None,
                        help="kubetwist's --workers on etcd (default: its own default, one "
                        "per core; the embedded store always runs one)")
    args = parser.parse_args(argv)
    for name in ("duration", "concurrency", "objects", "list_concurrency", "watchers",
                 "updates"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive")
    return args


def ratio(higher_is_better: bool, kubetwist: Optional[float],
          upstream: Optional[float]) -> Optional[float]:
    """
    How many times as good kubetwist is, upstream the denominator: C{kubetwist / upstream}
    for rates, C{upstream / kubetwist} for durations and memory; C{None} when either is
    missing or the divisor is 0.
    """
    if kubetwist is None or upstream is None:
        return None
    num, den = (kubetwist, upstream) if higher_is_better else (upstream, kubetwist)
    if den == 0:
        return None
    return num / den


def format_value(value: Optional[float], unit: str) -> str:
    """C{2,069/s}, C{32.7/s}, C{1.62 s}, C{474 MB}; empty when C{value} is C{None}."""
    if value is None:
        return ""
    if unit == "/s":
        return f"{value:,.0f}/s" if value >= 100 else f"{value:.3g}/s"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "MB":
        return f"{value:,.0f} MB"
    return f"{value:g}{unit}"


def format_ratio(value: Optional[float], key: str) -> str:
    """C{0.32×}; memory and start-up as C{3.4× better} when kubetwist is ahead (as the issue
    writes them)."""
    if value is None:
        return ""
    if key in BETTER_WORDED and value >= 1:
        return f"{value:.1f}× better"
    return f"{value:.2f}×"


@dataclass
class Results:
    """
    Measurements by column: C{upstream}, C{etcd} (kubetwist on etcd), C{embedded}; each
    C{{metric key: value}} in the units of L{METRICS}.
    """

    upstream: dict[str, float] = field(default_factory=dict)
    etcd: dict[str, float] = field(default_factory=dict)
    embedded: dict[str, float] = field(default_factory=dict)


def table(results: Results, args: argparse.Namespace) -> str:
    """
    The issue's Markdown table: C{metric | kube-apiserver | kubetwist on etcd | ratio |
    kubetwist embedded | ratio} (the embedded columns only when measured).
    """
    embedded = bool(results.embedded)
    head = ["metric", "kube-apiserver", "kubetwist on etcd", "ratio"]
    if embedded:
        head += ["kubetwist embedded", "ratio"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    names = vars(args)
    for key, label, unit, better in METRICS:
        up = results.upstream.get(key)
        row = [label.format(**names), format_value(up, unit)]
        for column in ([results.etcd, results.embedded] if embedded else [results.etcd]):
            mine = column.get(key)
            row += [format_value(mine, unit), format_ratio(ratio(better, mine, up), key)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The servers


def upstream_etcd_binary() -> str:
    """The etcd of C{../shared/upstream} (unpacked into run-upstream.sh's cache if needed)."""
    cache = Path(os.environ.get("UPSTREAM_CACHE", Path.home() / ".cache/kubetwist-upstream"))
    binary = cache / "bin" / "etcd"
    packed = UPSTREAM_DIR / "etcd.xz"
    if not binary.exists() or packed.stat().st_mtime > binary.stat().st_mtime:
        binary.parent.mkdir(parents=True, exist_ok=True)
        tmp = binary.with_suffix(".tmp")
        with open(tmp, "wb") as out:
            subprocess.run(["xz", "-dc", str(packed)], stdout=out, check=True)
        tmp.chmod(0o755)
        tmp.rename(binary)
    return str(binary)


class _UpstreamServer:
    """What the bench load functions read from C{cluster.server}."""

    def __init__(self, port: int, pid: int) -> None:
        self.port = port
        self.url = f"https://127.0.0.1:{port}"
        self.process = type("P", (), {"pid": pid})()


class UpstreamCluster:
    """
    kube-apiserver and its etcd from run-upstream.sh on C{base_port}, C{base_port + 1},
    C{base_port + 2}, in a temporary state folder; the client presents C{credentials}'
    admin certificate (kube-apiserver is given their CA as C{--client-ca-file}).
    Quacks like L{common.Cluster} for the load functions.
    """

    def __init__(self, base_port: int, credentials: dict[str, str]) -> None:
        self.base_port = base_port
        self.credentials = credentials
        self.work = tempfile.mkdtemp(prefix="kubetwist-compare-up-")
        self.env = dict(
            os.environ, STATE_DIR=f"{self.work}/state", RUN_DIR=f"{self.work}/run",
            KUBECONFIG_OUT=f"{self.work}/kubeconfig", ETCD_CLIENT_PORT=str(base_port),
            ETCD_PEER_PORT=str(base_port + 1), SECURE_PORT=str(base_port + 2),
            EXTRA_APISERVER_ARGS=f"--client-ca-file={credentials['ca']}")
        self.server: Any = None
        self.started_in = 0.0

    def __enter__(self) -> UpstreamCluster:
        start = time.monotonic()
        subprocess.run([str(UPSTREAM_DIR / "run-upstream.sh")], env=self.env, check=True)
        self.started_in = time.monotonic() - start
        pid = int(Path(self.work, "run", "kube-apiserver.pid").read_text().strip())
        self.etcd_pid = int(Path(self.work, "run", "etcd.pid").read_text().strip())
        self.server = _UpstreamServer(self.base_port + 2, pid)
        return self

    def __exit__(self, *exc: object) -> None:
        subprocess.run([str(UPSTREAM_DIR / "stop-upstream.sh")], env=self.env, check=False)
        shutil.rmtree(self.work, ignore_errors=True)

    @property
    def pids(self) -> dict[str, int]:
        return {"kubeapi": self.server.process.pid, "etcd": self.etcd_pid}

    def client_ssl(self) -> Any:
        import ssl

        context = ssl.create_default_context(cafile=f"{self.work}/run/ca.crt")
        context.load_cert_chain(self.credentials["cert"], self.credentials["key"])
        context.set_alpn_protocols(["http/1.1"])
        return context


async def _request(cluster: Any, method: str, path: str, body: Any = None,
                   accept: str = "application/json") -> tuple[int, bytes]:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=1, ssl=cluster.client_ssl())
    async with aiohttp.ClientSession(connector=connector) as session:
        data = json.dumps(body) if body is not None else None
        async with session.request(method, cluster.server.url + path, data=data, headers={
                "Content-Type": "application/json", "Accept": accept}) as response:
            return response.status, await response.read()


async def _rate(cluster: Any, path: str, accept: str, duration: float,
                concurrency: int) -> float:
    """GETs/s of C{path} with C{concurrency} keep-alive connections (L{common.closed_loop})."""
    import aiohttp
    from common import closed_loop

    connector = aiohttp.TCPConnector(limit=concurrency, ssl=cluster.client_ssl())
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(worker: int, seq: int) -> None:
            async with session.get(cluster.server.url + path,
                                   headers={"Accept": accept}) as response:
                body = await response.read()
                if response.status != 200:
                    raise RuntimeError(f"GET {path} answered {response.status}: {body[:200]!r}")

        count, elapsed = await closed_loop(duration, concurrency, one)
    return count / elapsed


#: The bearer token both servers accept for the wrk loads (kube-apiserver's from
#: run-upstream.sh's token file; kubetwist is given the same through C{--token-auth-file}).
TOKEN = "upstream-admin-token-0123456789"

_WRK_SCRIPT = """
wrk.method = "{method}"
wrk.body = {body}
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "{accept}"
wrk.headers["Authorization"] = "Bearer {token}"
"""


def parse_wrk(output: str) -> float:
    """
    Requests per second from wrk's report; every answer must have been 2xx and no socket
    error may have happened.

    @raise RuntimeError: C{Non-2xx or 3xx responses} or C{Socket errors} in the report, or
        no C{Requests/sec} line.
    """
    if "Non-2xx or 3xx responses" in output or "Socket errors" in output:
        raise RuntimeError(f"wrk saw failed requests:\n{output}")
    for line in output.splitlines():
        if line.startswith("Requests/sec:"):
            return float(line.split()[1])
    raise RuntimeError(f"no rate in wrk's report:\n{output}")


def wrk_rate(url: str, duration: float, connections: int, method: str = "GET",
             body: Optional[dict] = None, accept: str = "application/json") -> float:
    """
    C{method url} at C{connections} kept-alive HTTPS connections for C{duration} seconds with
    wrk (two threads), authenticated with L{TOKEN}; requests per second.
    """
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(_WRK_SCRIPT.format(method=method, accept=accept, token=TOKEN,
                                   body="nil" if body is None
                                   else "[[" + json.dumps(body) + "]]"))
        script = f.name
    try:
        done = subprocess.run(
            ["wrk", "-t2", f"-c{connections}", f"-d{max(1, round(duration))}s", "--timeout", "10s",
             "-s", script, url], capture_output=True, text=True, check=True)
    finally:
        os.unlink(script)
    return parse_wrk(done.stdout)


async def measure(cluster: Any, args: argparse.Namespace, pid: int,
                  profile: Optional[str] = None) -> dict[str, float]:
    """
    Every metric of L{METRICS} but C{ready} against C{cluster}; with C{profile} (a folder),
    each load runs once more under py-spy on C{pid}.
    """
    import itertools

    import aiohttp
    import bench_create
    import bench_get
    import bench_list
    import bench_watch
    from bench_memory import settled_rss
    from common import NAMESPACE, profiled

    out: dict[str, float] = {}
    code, body = await _request(cluster, "POST", "/api/v1/namespaces", {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    if code not in (201, 409):
        raise RuntimeError(f"cannot create the namespace: {code} {body[:200]!r}")

    def again(metric: str, seconds: float) -> Any:
        path = os.path.join(profile, f"{metric}.txt") if profile else None
        return profiled(path, pid, seconds)

    names = itertools.count()
    cms = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    if args.load == "wrk":
        # CREATE with generateName, as the issue measures it
        body = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"generateName": "bench-"}, "data": {"key": "value"}}

        def creates() -> float:
            return wrk_rate(cluster.server.url + cms, args.duration, args.concurrency, "POST",
                            body)

        out["create"] = creates()
        if profile:
            with again("create", args.duration):
                creates()
    else:
        out["create"], _ = await bench_create.kubetwist_phase(
            cluster, args.duration, args.concurrency, names)
        if profile:
            with again("create", args.duration):
                await bench_create.kubetwist_phase(cluster, args.duration, args.concurrency,
                                                   names)

    await _request(cluster, "POST", cms, {"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": "target"},
                                          "data": {"key": "value"}})
    code, expected = await _request(cluster, "GET", f"{cms}/target")
    url = f"{cluster.server.url}{cms}/target"

    async def gets() -> float:
        if args.load == "wrk":
            return wrk_rate(url, args.duration, args.concurrency)
        rate, _ = await bench_get.phase(url, cluster.client_ssl(), args.duration,
                                        args.concurrency, expected, cluster.pids)
        return rate

    out["get"] = await gets()
    if profile:
        with again("get", args.duration):
            await gets()

    # a namespace of exactly --objects ConfigMaps for the lists
    list_ns = f"{NAMESPACE}-list"
    await _request(cluster, "POST", "/api/v1/namespaces", {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": list_ns}})
    bench_list.NAMESPACE = list_ns
    await bench_list.populate(cluster, args.objects)
    for metric, (query, accept) in LIST_QUERIES.items():
        path = f"/api/v1/namespaces/{list_ns}/configmaps{query}"

        async def lists(path: str = path, accept: str = accept) -> float:
            if args.load == "wrk":
                return wrk_rate(cluster.server.url + path, args.duration,
                                args.list_concurrency, accept=accept)
            return await _rate(cluster, path, accept, args.duration, args.list_concurrency)

        out[metric] = await lists()
        if profile:
            with again(metric, args.duration):
                await lists()

    async def fan_out() -> float:
        # start where an informer starts: the list's resourceVersion (the object's own may be
        # older than the watch window after the loads above, and a 410 ends the watch)
        code, body = await _request(
            cluster, "GET", f"{cms}?fieldSelector=metadata.name%3Dtarget")
        rv = json.loads(body)["metadata"]["resourceVersion"]
        watchers = await bench_watch.open_watchers(cluster, args.watchers, rv)
        connector = aiohttp.TCPConnector(limit=1, ssl=cluster.client_ssl())
        try:
            async with aiohttp.ClientSession(connector=connector) as session:
                start = time.perf_counter()
                lost = 0
                for n in range(args.updates):
                    _, _, _, missed = await bench_watch.round_(
                        session, url, watchers, f"{time.time_ns()}-{n}", 30.0)
                    lost += missed
                elapsed = time.perf_counter() - start
        finally:
            for transport, _ in watchers:
                transport.close()
        if lost:
            print(f"  [watch: {lost} deliveries missing]", flush=True)
        return elapsed

    out["watch"] = await fan_out()
    if profile:
        with again("watch", out["watch"] + 5):
            await fan_out()
    # every process of the server (the workers too)
    out["rss"] = sum(settled_rss(p) for role, p in cluster.pids.items()
                     if role.startswith("kubeapi")) / 1e6
    return out


def kubetwist_cluster(embedded: bool, extra_args: tuple[str, ...] = ()) -> Any:
    """L{common.Cluster} on the upstream etcd binary, or on the embedded store, with more
    C{kubeapi} flags."""
    from common import Cluster

    from tests.integration.harness import KubeAPIProcess

    if embedded:
        class Embedded(Cluster):
            def __enter__(self) -> Any:
                self.server = KubeAPIProcess(etcd_url=None, extra_args=extra_args)
                start = time.monotonic()
                self.server.start()
                self.server_ready_in = time.monotonic() - start
                return self

            def close(self) -> None:
                if self.server is not None:
                    self.server.cleanup()
                shutil.rmtree(self.etcd.data_dir, ignore_errors=True)  # never started

            @property
            def pids(self) -> dict[str, int]:
                return {"kubeapi": self.server.process.pid}

        return Embedded()
    cluster = Cluster(extra_args)
    cluster.etcd.binary = upstream_etcd_binary()
    return cluster


def run(args: argparse.Namespace) -> Results:
    """Measure each server in turn (see the module docstring)."""
    import asyncio

    from common import machine

    results = Results()
    keep = tempfile.mkdtemp(prefix="kubetwist-compare-creds-")
    try:
        columns = [("etcd", False)] + ([("embedded", True)] if args.embedded else [])
        tokens = os.path.join(keep, "tokens.csv")
        with open(tokens, "w", encoding="utf-8") as f:
            f.write(f'{TOKEN},bench-admin,bench-admin,"system:masters"\n')
        extra = (f"--token-auth-file={tokens}",)
        # on etcd the server's own default, one worker per core (the harness runs one
        # unless told); the embedded store has a single writer
        workers = args.workers or len(os.sched_getaffinity(0))
        for column, embedded in columns:
            cluster = kubetwist_cluster(
                embedded, extra if embedded else extra + (f"--workers={workers}",))
            with cluster:
                ready = cluster.server_ready_in
                server = cluster.server
                for name, src in (("ca", server.ca_file), ("cert", server.admin_cert_file),
                                  ("key", server.admin_key_file)):
                    shutil.copy(src, os.path.join(keep, name))
                profile = None
                if args.profile_dir:
                    profile = os.path.join(args.profile_dir, column)
                    os.makedirs(profile, exist_ok=True)
                got = asyncio.run(measure(cluster, args, server.process.pid, profile))
                got["ready"] = ready
                setattr(results, column, got)
        if not args.no_upstream:
            creds = {name: os.path.join(keep, name) for name in ("ca", "cert", "key")}
            with UpstreamCluster(args.base_port, creds) as cluster:
                got = asyncio.run(measure(cluster, args, cluster.server.process.pid))
                got["ready"] = cluster.started_in
                results.upstream = got
    finally:
        shutil.rmtree(keep, ignore_errors=True)
    print(table(results, args))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": machine(), "args": vars(args), "upstream": results.upstream,
                       "etcd": results.etcd, "embedded": results.embedded}, f, indent=2)
    return results


def main(argv: Optional[list[str]] = None) -> None:
    args = parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    run(args)


if __name__ == "__main__":
    main()
