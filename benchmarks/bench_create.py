"""
Create throughput: ConfigMaps created through kubetwist (HTTPS, N concurrent clients on N
keep-alive HTTP/1.1 connections) against raw etcd puts of the same stored value through the
same etcd gRPC-JSON gateway (C{POST /v3/kv/put}, N keep-alive connections), side by side in one
run on one etcd.  Phases alternate (kubetwist, etcd, kubetwist, etcd, ...) so drift in etcd's
disk speed hits both.  Target: kubetwist / etcd >= 0.6.

    python benchmarks/bench_create.py [--duration 10] [--concurrency 8] [--rounds 2]
        [--server-arg=--workers=2]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import itertools
import json

import aiohttp
from common import (
    NAMESPACE,
    Cluster,
    CPUMeter,
    closed_loop,
    profiled,
    report,
    server_load_args,
    timed,
)

RAW_NAMESPACE = "bench-raw"


async def kubetwist_phase(
    cluster: Cluster, duration: float, concurrency: int, names: itertools.count
) -> tuple[float, dict]:
    url = f"{cluster.server.url}/api/v1/namespaces/{NAMESPACE}/configmaps"
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=cluster.client_ssl())
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(worker: int, seq: int) -> None:
            body = json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"cm-{next(names)}", "labels": {"app": "bench"}},
                    "data": {"key": "value", "other": "x" * 32},
                }
            )
            async with session.post(
                url, data=body, headers={"Content-Type": "application/json"}
            ) as response:
                await response.read()
                if response.status != 201:
                    raise RuntimeError(f"create answered {response.status}")

        meter = CPUMeter(cluster.pids)
        meter.start()
        count, elapsed = await closed_loop(duration, concurrency, one)
        return count / elapsed, meter.stop()


async def etcd_phase(
    cluster: Cluster, duration: float, concurrency: int, value: bytes, names: itertools.count
) -> tuple[float, dict]:
    url = f"{cluster.etcd.url}/v3/kv/put"
    encoded_value = base64.b64encode(value).decode()
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(worker: int, seq: int) -> None:
            key = f"/registry/configmaps/{RAW_NAMESPACE}/cm-{next(names)}"
            body = json.dumps(
                {"key": base64.b64encode(key.encode()).decode(), "value": encoded_value}
            )
            async with session.post(url, data=body) as response:
                await response.read()
                if response.status != 200:
                    raise RuntimeError(f"etcd put answered {response.status}")

        meter = CPUMeter(cluster.pids)
        meter.start()
        count, elapsed = await closed_loop(duration, concurrency, one)
        return count / elapsed, meter.stop()


async def main(args: argparse.Namespace) -> None:
    with Cluster(tuple(args.server_arg)) as cluster:
        cluster.create_namespace()
        names = itertools.count()
        raw_names = itertools.count()
        rows = []
        with timed("warm-up"):
            await kubetwist_phase(cluster, 2.0, args.concurrency, names)
        value = cluster.etcd_get_raw(f"/registry/configmaps/{NAMESPACE}/cm-0")
        assert value is not None, "kubetwist did not store cm-0 under the upstream key"
        await etcd_phase(cluster, 1.0, args.concurrency, value, raw_names)
        if args.profile:  # a separate, uncounted phase: py-spy slows its target
            with profiled(args.profile, cluster.server.process.pid, args.duration):
                await kubetwist_phase(cluster, args.duration, args.concurrency, names)
        for _ in range(args.rounds):
            k_rate, k_cpu = await kubetwist_phase(cluster, args.duration, args.concurrency, names)
            e_rate, e_cpu = await etcd_phase(
                cluster, args.duration, args.concurrency, value, raw_names
            )
            rows.append(
                {
                    "kubetwist_per_s": round(k_rate, 1),
                    "kubetwist_cpu": k_cpu,
                    "etcd_put_per_s": round(e_rate, 1),
                    "etcd_cpu": e_cpu,
                }
            )
            print(
                f"  round: kubetwist {k_rate:.0f}/s cpu {k_cpu} | etcd {e_rate:.0f}/s cpu {e_cpu}",
                flush=True,
            )
        k = sum(r["kubetwist_per_s"] for r in rows) / len(rows)
        e = sum(r["etcd_put_per_s"] for r in rows) / len(rows)
        ratio = round(k / e, 3)
        report(
            "create throughput",
            {
                "concurrency": args.concurrency,
                "duration_s": args.duration,
                "transport": "kubetwist: HTTPS HTTP/1.1 keep-alive (aiohttp); "
                "etcd: HTTP/1.1 keep-alive to the gRPC-JSON gateway (aiohttp)",
                "stored_value_bytes": len(value),
                "kubetwist_creates_per_s": round(k, 1),
                "etcd_puts_per_s": round(e, 1),
                "rounds": rows,
            },
            "kubetwist creates/s / etcd puts/s >= 0.6",
            ratio,
            ratio >= 0.6,
        )


if __name__ == "__main__":
    asyncio.run(main(server_load_args(__doc__).parse_args()))
