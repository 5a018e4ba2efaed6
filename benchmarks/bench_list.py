"""
LIST of 5,000 ConfigMaps from the watch cache (C{GET .../configmaps?resourceVersion=0}, one
client, one keep-alive HTTPS HTTP/1.1 connection, requests back to back, time to the last byte)
against C{orjson.dumps} of the same list in this process (the list the server answered,
decoded once).  Target: dumps time / LIST time >= 0.5.

The 5,000 objects are created through kubetwist's API before the measurement.

    python benchmarks/bench_list.py [--objects 5000] [--iterations 30] [--profile FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import time

import aiohttp
import orjson
from common import NAMESPACE, Cluster, CPUMeter, profiled, report, timed


async def populate(cluster: Cluster, count: int, concurrency: int = 16) -> None:
    url = f"{cluster.server.url}/api/v1/namespaces/{NAMESPACE}/configmaps"
    names = itertools.count()
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=cluster.client_ssl())
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            while (n := next(names)) < count:
                body = json.dumps(
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {"name": f"cm-{n:05d}", "labels": {"app": "bench"}},
                        "data": {"key": "value", "other": "x" * 32},
                    }
                )
                async with session.post(
                    url, data=body, headers={"Content-Type": "application/json"}
                ) as r:
                    await r.read()
                    if r.status != 201:
                        raise RuntimeError(f"create answered {r.status}")

        await asyncio.gather(*(worker() for _ in range(concurrency)))


async def list_phase(
    cluster: Cluster, iterations: int, max_seconds: float, expected: int
) -> tuple[list[float], bytes, dict]:
    url = f"{cluster.server.url}/api/v1/namespaces/{NAMESPACE}/configmaps?resourceVersion=0"
    connector = aiohttp.TCPConnector(limit=1, ssl=cluster.client_ssl())
    times: list[float] = []
    body = b""
    async with aiohttp.ClientSession(connector=connector) as session:
        meter = CPUMeter(cluster.pids)
        meter.start()
        deadline = time.monotonic() + max_seconds
        for _ in range(iterations):
            start = time.perf_counter()
            async with session.get(url, headers={"Accept": "application/json"}) as response:
                body = await response.read()
            times.append(time.perf_counter() - start)
            if response.status != 200:
                raise RuntimeError(f"LIST answered {response.status}: {body[:300]!r}")
            if time.monotonic() > deadline:
                break
        cpu = meter.stop()
    items = orjson.loads(body)["items"]
    # kube-root-ca.crt may be there too (kubetwist publishes it in every namespace)
    if sum(1 for i in items if i["metadata"]["name"].startswith("cm-")) != expected:
        raise RuntimeError(f"LIST returned {len(items)} items, not {expected}")
    return times, body, cpu


def dumps_time(document: dict, iterations: int) -> float:
    """The median time of C{orjson.dumps(document)}, in seconds."""
    return median_time(lambda: orjson.dumps(document), iterations)


def median_time(work, iterations: int) -> float:
    """The median time of C{work()}, in seconds."""
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def python_floor(document: dict, iterations: int) -> dict:
    """
    In-process references for a cache that holds decoded dicts: one shallow copy per item
    (what a LIST does to stamp or strip fields) then C{orjson.dumps}; and C{orjson.loads} of
    every item's stored bytes then C{orjson.dumps} (a LIST that decodes per request).
    """
    items = document["items"]
    stored = [orjson.dumps(i) for i in items]

    def copy_then_dumps() -> None:
        orjson.dumps({**document, "items": [dict(i) for i in items]})

    def loads_then_dumps() -> None:
        orjson.dumps({**document, "items": [orjson.loads(b) for b in stored]})

    def join_bytes() -> None:
        b"".join([b'{"items":[', b",".join(stored), b"]}"])

    return {
        "copy_each_item_then_dumps_ms": round(1000 * median_time(copy_then_dumps, iterations), 2),
        "loads_each_item_then_dumps_ms": round(1000 * median_time(loads_then_dumps, iterations), 2),
        "join_stored_bytes_ms": round(1000 * median_time(join_bytes, iterations), 3),
    }


async def main(args: argparse.Namespace) -> None:
    with Cluster() as cluster:
        cluster.create_namespace()
        with timed(f"create {args.objects} configmaps through the API"):
            await populate(cluster, args.objects)
        with timed("warm-up"):
            await list_phase(cluster, 3, 60, args.objects)
        if args.profile:
            with profiled(args.profile, cluster.server.process.pid, 10):
                await list_phase(cluster, args.iterations, 10, args.objects)
        rows = []
        for _ in range(args.rounds):
            times, body, cpu = await list_phase(cluster, args.iterations, 30, args.objects)
            document = orjson.loads(body)
            dumps = dumps_time(document, max(20, args.iterations))
            rows.append(
                {
                    "list_median_ms": round(1000 * statistics.median(times), 2),
                    "list_min_ms": round(1000 * min(times), 2),
                    "lists": len(times),
                    "cpu": cpu,
                    "dumps_median_ms": round(1000 * dumps, 3),
                }
            )
            print(f"  round: {rows[-1]}", flush=True)
        list_ms = statistics.median(r["list_median_ms"] for r in rows)
        dumps_ms = statistics.median(r["dumps_median_ms"] for r in rows)
        ratio = round(dumps_ms / list_ms, 4)
        report(
            "LIST from cache",
            {
                "objects": args.objects,
                "response_bytes": len(body),
                "orjson_dumps_bytes": len(orjson.dumps(document)),
                "transport": "HTTPS, HTTP/1.1 keep-alive (aiohttp), one client, sequential",
                "list_median_ms": list_ms,
                "orjson_dumps_median_ms": dumps_ms,
                "in_process_reference": python_floor(document, 20),
                "rounds": rows,
            },
            "orjson.dumps time / LIST time >= 0.5",
            ratio,
            ratio >= 0.5,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=5000)
    parser.add_argument("--iterations", type=int, default=30, help="LISTs per round at most")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--profile",
        metavar="FILE",
        help="py-spy the kubeapi process during an extra, uncounted phase",
    )
    asyncio.run(main(parser.parse_args()))
