"""
Single-object GET throughput: C{GET /api/v1/namespaces/bench/configmaps/target} through
kubetwist against a bare C{twisted.web} resource (C{bare_server.py}) returning the very same
bytes over the same TLS setup (kubetwist's context factory and certificates), with the same
client: N concurrent workers on N keep-alive HTTPS HTTP/1.1 connections (aiohttp).  Phases
alternate.  Target: kubetwist / bare >= 0.5.

    python benchmarks/bench_get.py [--duration 10] [--concurrency 8] [--rounds 2]
        [--server-arg=--workers=2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile

import aiohttp
from common import (
    NAMESPACE,
    Cluster,
    CPUMeter,
    closed_loop,
    profiled,
    report,
    server_load_args,
    spawn,
    terminate,
    timed,
)

from tests.integration.harness import free_port


async def phase(
    url: str, ssl_context, duration: float, concurrency: int, expected: bytes, pids: dict
) -> tuple[float, dict]:
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=ssl_context)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(worker: int, seq: int) -> None:
            async with session.get(url, headers={"Accept": "application/json"}) as response:
                body = await response.read()
                if response.status != 200 or len(body) != len(expected):
                    raise RuntimeError(f"GET answered {response.status}: {body[:200]!r}")

        meter = CPUMeter(pids)
        meter.start()
        count, elapsed = await closed_loop(duration, concurrency, one)
        return count / elapsed, meter.stop()


async def main(args: argparse.Namespace) -> None:
    with Cluster(tuple(args.server_arg)) as cluster:
        cluster.create_namespace()
        server = cluster.server
        document = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "target", "labels": {"app": "bench"}},
            "data": {"key": "value", "other": "x" * 32},
        }
        created = server.request(
            "POST", f"/api/v1/namespaces/{NAMESPACE}/configmaps", json.dumps(document).encode()
        )
        assert created.status == 201, created.body
        path = f"/api/v1/namespaces/{NAMESPACE}/configmaps/target"
        body = server.request("GET", path).body
        fd, body_file = tempfile.mkstemp(prefix="kubetwist-bench-", suffix=".json")
        with os.fdopen(fd, "wb") as f:
            f.write(body)
        port = free_port()
        bare = spawn(
            os.path.join(os.path.dirname(__file__), "bare_server.py"),
            str(port),
            os.path.join(server.data_dir, "pki"),
            body_file,
        )
        try:
            context = cluster.client_ssl()
            kube_url = f"{server.url}{path}"
            bare_url = f"https://127.0.0.1:{port}{path}"
            kube_pids = cluster.pids
            bare_pids = {"bare": bare.pid}
            with timed("warm-up"):
                await phase(kube_url, context, 1.0, args.concurrency, body, kube_pids)
                await phase(bare_url, context, 1.0, args.concurrency, body, bare_pids)
            if args.profile:  # a separate, uncounted phase: py-spy slows its target
                with profiled(args.profile, server.process.pid, args.duration):
                    await phase(kube_url, context, args.duration, args.concurrency, body, kube_pids)
            rows = []
            for _ in range(args.rounds):
                k, k_cpu = await phase(
                    kube_url, context, args.duration, args.concurrency, body, kube_pids
                )
                b, b_cpu = await phase(
                    bare_url, context, args.duration, args.concurrency, body, bare_pids
                )
                rows.append(
                    {
                        "kubetwist_per_s": round(k, 1),
                        "kubetwist_cpu": k_cpu,
                        "bare_per_s": round(b, 1),
                        "bare_cpu": b_cpu,
                    }
                )
                print(
                    f"  round: kubetwist {k:.0f}/s cpu {k_cpu} | bare {b:.0f}/s cpu {b_cpu}",
                    flush=True,
                )
        finally:
            terminate(bare)
            os.remove(body_file)
        k = sum(r["kubetwist_per_s"] for r in rows) / len(rows)
        b = sum(r["bare_per_s"] for r in rows) / len(rows)
        ratio = round(k / b, 3)
        # requests per CPU-second of the serving process: robust when other load shares the cores
        k_eff = sum(r["kubetwist_per_s"] / max(r["kubetwist_cpu"]["kubeapi"], 0.01) for r in rows)
        b_eff = sum(r["bare_per_s"] / max(r["bare_cpu"]["bare"], 0.01) for r in rows)
        report(
            "single-object GET throughput",
            {
                "concurrency": args.concurrency,
                "duration_s": args.duration,
                "transport": "HTTPS, HTTP/1.1 keep-alive (aiohttp), admin client certificate",
                "body_bytes": len(body),
                "kubetwist_gets_per_s": round(k, 1),
                "bare_gets_per_s": round(b, 1),
                "per_server_cpu_second_ratio": round(k_eff / b_eff, 3),
                "rounds": rows,
            },
            "kubetwist GETs/s / bare twisted.web GETs/s >= 0.5",
            ratio,
            ratio >= 0.5,
        )


if __name__ == "__main__":
    asyncio.run(main(server_load_args(__doc__).parse_args()))
