"""
ResourceQuota admission cost: ConfigMap create throughput (HTTPS, N concurrent keep-alive
clients) in a namespace with a ResourceQuota that counts ConfigMaps (every create charges
C{status.used} with a compare-and-swap write, one at a time per namespace, as upstream) against
a namespace without one (the plugin only looks the namespace up), on one server over one
etcd, phases alternating.  Reported: the ratio quota / no quota.

    python benchmarks/bench_quota.py [--duration 10] [--concurrency 8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json

import aiohttp
from common import NAMESPACE, Cluster, CPUMeter, closed_loop, report, timed

QUOTA_NAMESPACE = "bench-quota"


async def phase(cluster: Cluster, namespace: str, duration: float, concurrency: int,
                names: itertools.count) -> tuple[float, dict]:
    url = f"{cluster.server.url}/api/v1/namespaces/{namespace}/configmaps"
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=cluster.client_ssl())
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(worker: int, seq: int) -> None:
            body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                               "metadata": {"name": f"cm-{next(names)}"},
                               "data": {"key": "value"}})
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


async def wait_for_status(cluster: Cluster) -> None:
    for _ in range(100):
        r = cluster.server.request(
            "GET", f"/api/v1/namespaces/{QUOTA_NAMESPACE}/resourcequotas/q")
        if r.status == 200 and (r.json().get("status") or {}).get("used"):
            return
        await asyncio.sleep(0.1)
    raise RuntimeError("the quota controller did not fill status.used")


async def main(args: argparse.Namespace) -> None:
    with Cluster() as cluster:
        cluster.create_namespace()
        cluster.create_namespace(QUOTA_NAMESPACE)
        quota = json.dumps({"apiVersion": "v1", "kind": "ResourceQuota",
                            "metadata": {"name": "q"},
                            "spec": {"hard": {"configmaps": "1000000"}}})
        r = cluster.server.request(
            "POST", f"/api/v1/namespaces/{QUOTA_NAMESPACE}/resourcequotas", quota.encode())
        assert r.status == 201, r.body
        await wait_for_status(cluster)
        names = itertools.count()
        with timed("warm-up"):
            await phase(cluster, NAMESPACE, 2.0, args.concurrency, names)
            await phase(cluster, QUOTA_NAMESPACE, 2.0, args.concurrency, names)
        rows = []
        for _ in range(args.rounds):
            plain, plain_cpu = await phase(cluster, NAMESPACE, args.duration, args.concurrency,
                                           names)
            charged, charged_cpu = await phase(cluster, QUOTA_NAMESPACE, args.duration,
                                               args.concurrency, names)
            rows.append({"no_quota_per_s": round(plain, 1), "no_quota_cpu": plain_cpu,
                         "quota_per_s": round(charged, 1), "quota_cpu": charged_cpu})
            print(f"  round: no quota {plain:.0f}/s | quota {charged:.0f}/s", flush=True)
        p = sum(r["no_quota_per_s"] for r in rows) / len(rows)
        q = sum(r["quota_per_s"] for r in rows) / len(rows)
        ratio = round(q / p, 3)
        report("create throughput under a ResourceQuota",
               {"concurrency": args.concurrency, "duration_s": args.duration,
                "no_quota_creates_per_s": round(p, 1), "quota_creates_per_s": round(q, 1),
                "rounds": rows},
               "quota / no quota (recorded, no target)", ratio, None)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    asyncio.run(main(parser.parse_args()))
