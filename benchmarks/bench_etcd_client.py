"""
The etcd gateway client: C{treq} (the client kubetwist used before) against the lean
L{kubetwist.storage.etcd3.client.GatewayClient}, on one local etcd.

    python benchmarks/bench_etcd_client.py [--duration 3 --rounds 2 --base-port 41010]

For each client, concurrency 1 and 16, and two levels -- C{raw} (one C{POST /v3/kv/range}
of one key and its whole answer, nothing parsed) and C{store} (C{Etcd3Storage.get} of the
same key: the request JSON, the answer's JSON and base64, the stored object's decoding) --
it runs C{duration} seconds of back-to-back calls (C{concurrency} loops on the reactor) and
prints calls/s and the benchmark process's CPU per call (C{time.process_time()} over calls, in
microseconds: all of this process's threads; etcd runs in its own process).  Phases
alternate between the clients, C{rounds} times, and the best round of each is kept.

It also measures C{deferToThread} of a no-op (the thread hop a blocking client such as
C{grpcio}'s would cost per call from the reactor), at the same two concurrencies.  With
C{--grpc-python}, C{bench_etcd_grpc.py} (C{grpcio}, etcd's native gRPC) then runs on the same
etcd and key with that interpreter.

etcd listens on C{base-port} (client) and C{base-port + 1} (peer).  Prints one
C{RESULT {json}} line at the end.  Not part of the test suite.
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import time
from pathlib import Path

from common import ROOT, cpu_seconds, machine  # noqa: F401  (puts the repository on sys.path)
from treq.client import HTTPClient
from twisted.internet import defer, reactor, task
from twisted.internet.threads import deferToThread
from twisted.web.client import Agent, HTTPConnectionPool

from kubetwist.storage.etcd3 import Etcd3Storage, new_etcd_client
from tests.integration.harness import EtcdProcess

KEY = "/registry/configmaps/bench/one"
#: a stored ConfigMap of about 1 KiB, as kubetwist writes it
VALUE = {
    "apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {"name": "one", "namespace": "bench",
                 "uid": "5f0c9d3e-6f0e-4c59-9a53-0d4a3c1c1e11",
                 "creationTimestamp": "2026-11-26T14:00:00Z",
                 "labels": {"app": "bench", "tier": "storage"},
                 "managedFields": [{"manager": "kubectl", "operation": "Update",
                                    "apiVersion": "v1", "time": "2026-11-26T14:00:00Z",
                                    "fieldsType": "FieldsV1",
                                    "fieldsV1": {"f:data": {"f:a": {}, "f:b": {}}}}]},
    "data": {"a": "x" * 400, "b": "y" * 300},
}


def treq_client() -> tuple[HTTPClient, HTTPConnectionPool]:
    pool = HTTPConnectionPool(reactor, persistent=True)
    pool.maxPersistentPerHost = 16
    return HTTPClient(Agent(reactor, pool=pool)), pool


#: etcd's process id, for its CPU per call
ETCD_PID = 0


async def run_phase(call, concurrency: int, duration: float) -> dict:
    """
    C{concurrency} loops of C{await call()} for C{duration} seconds: calls, calls/s, this
    process's CPU per call and etcd's (microseconds), this process's CPU share of wall time.
    """
    stop_at = time.monotonic() + duration
    calls = 0

    async def loop() -> None:
        nonlocal calls
        while time.monotonic() < stop_at:
            await call()
            calls += 1

    etcd0 = cpu_seconds(ETCD_PID)
    cpu0, wall0 = time.process_time(), time.monotonic()
    await defer.gatherResults([defer.Deferred.fromCoroutine(loop())
                               for _ in range(concurrency)])
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    etcd = cpu_seconds(ETCD_PID) - etcd0
    return {"calls": calls, "per_s": calls / wall, "cpu_us_per_call": 1e6 * cpu / calls,
            "etcd_cpu_us_per_call": 1e6 * etcd / calls, "cpu_share": cpu / wall}


async def main(args: argparse.Namespace) -> None:
    etcd = EtcdProcess()
    etcd.client_port, etcd.peer_port = args.base_port, args.base_port + 1
    etcd.url = f"http://127.0.0.1:{etcd.client_port}"
    etcd.start()
    global ETCD_PID
    ETCD_PID = etcd.process.pid
    try:
        await measure(args, etcd.url)
    finally:
        etcd.stop()


async def measure(args: argparse.Namespace, url: str) -> None:
    lean, lean_pool = new_etcd_client(reactor)
    old, old_pool = treq_client()
    lean_store = Etcd3Storage(reactor, lean, [url], prefix="")
    old_store = Etcd3Storage(reactor, old, [url], prefix="")
    await lean_store.create(KEY, VALUE)
    key = {"key": base64.b64encode(KEY.encode()).decode()}
    body = json.dumps(key).encode()

    async def old_raw() -> None:
        response = await old.post(url + "/v3/kv/range", data=body,
                                  headers={b"Content-Type": [b"application/json"]})
        await response.content()

    def lean_raw():
        return lean.unary(url, "/v3/kv/range", body, True)

    def noop() -> None:
        return None

    phases = {
        ("raw", "treq"): old_raw,
        ("raw", "lean"): lean_raw,
        ("store", "treq"): lambda: old_store.get(KEY),
        ("store", "lean"): lambda: lean_store.get(KEY),
        ("hop", "deferToThread"): lambda: deferToThread(noop),
    }
    best: dict[str, dict] = {}
    for concurrency in (1, 16):
        reactor.suggestThreadPoolSize(max(10, concurrency))
        for _ in range(args.rounds):
            for (level, name), call in phases.items():
                await run_phase(call, concurrency, 0.3)  # warm: connections, caches
                result = await run_phase(call, concurrency, args.duration)
                label = f"{level}/{name}/c{concurrency}"
                print(f"{label:28s} {result['per_s']:9.0f} calls/s "
                      f"{result['cpu_us_per_call']:7.1f} us CPU/call "
                      f"(etcd {result['etcd_cpu_us_per_call']:6.1f} us; "
                      f"CPU {100 * result['cpu_share']:.0f}% of wall)", flush=True)
                if label not in best or result["per_s"] > best[label]["per_s"]:
                    best[label] = result
    print("\nbest rounds:")
    for concurrency in (1, 16):
        for level in ("raw", "store"):
            t, n = best[f"{level}/treq/c{concurrency}"], best[f"{level}/lean/c{concurrency}"]
            print(f"{level:5s} c={concurrency:2d}: treq {t['per_s']:6.0f}/s "
                  f"{t['cpu_us_per_call']:6.1f} us  lean {n['per_s']:6.0f}/s "
                  f"{n['cpu_us_per_call']:6.1f} us  rate x{n['per_s'] / t['per_s']:.2f} "
                  f"CPU/call x{n['cpu_us_per_call'] / t['cpu_us_per_call']:.2f} "
                  f"(etcd {t['etcd_cpu_us_per_call']:.0f} / "
                  f"{n['etcd_cpu_us_per_call']:.0f} us)")
        hop = best[f"hop/deferToThread/c{concurrency}"]
        print(f"deferToThread(no-op) c={concurrency:2d}: {hop['per_s']:6.0f}/s "
              f"{hop['cpu_us_per_call']:6.1f} us CPU/call")
    await lean_store.stop()
    await old_store.stop()
    await lean_pool.closeCachedConnections()
    await old_pool.closeCachedConnections()
    grpc_best = None
    if args.grpc_python:
        # the same etcd, the same key, after the Twisted phases (never at the same time)
        script = str(Path(__file__).with_name("bench_etcd_grpc.py"))
        out = subprocess.run(
            [args.grpc_python, script, "--endpoint", url.removeprefix("http://"),
             "--etcd-pid", str(ETCD_PID),
             "--duration", str(args.duration), "--rounds", str(args.rounds)],
            capture_output=True, text=True, check=True).stdout
        print(out, end="", flush=True)
        grpc_best = json.loads(out.rsplit("RESULT ", 1)[1])
    print("RESULT " + json.dumps({"machine": machine(), "best": best, "grpc": grpc_best}),
          flush=True)


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--base-port", type=int, default=41010)
    parser.add_argument("--grpc-python", default="",
                        help="an interpreter with grpcio and aetcd: also run "
                             "bench_etcd_grpc.py on the same etcd")
    args = parser.parse_args()

    def run(_reactor):
        return defer.Deferred.fromCoroutine(main(args))

    task.react(run)


if __name__ == "__main__":
    cli()
