"""
GET throughput of one flunder through the aggregator's proxy vs directly from the wardle
server (issue 13): C{twistd kubeapi} with the front-proxy flags, C{twistd wardle}
(examples/wardle) in a network namespace registered by an APIService, and N concurrent
workers on N keep-alive HTTPS HTTP/1.1 connections (aiohttp) presenting the admin client
certificate to each (through the proxy: kubeapi authenticates and authorizes it and the
wardle server trusts the front proxy's headers; directly: the wardle server authenticates it
against the main server's client CA).  Phases alternate.  Upstream's proxy costs about 10%.

Needs root (ip netns) and the aggregator's proxy.

    python benchmarks/bench_wardle_proxy.py [--duration 10] [--concurrency 8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import ssl
import time

import aiohttp
from common import CPUMeter, closed_loop, report, timed

from tests.integration.test_wardle import FLUNDERS, flunder, start_aggregated


class _Owner:
    """What L{start_aggregated} registers its cleanups with."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self.stack = stack

    def addCleanup(self, f, *args) -> None:  # noqa: N802 -- trial's name
        self.stack.callback(f, *args)


async def phase(url: str, context: ssl.SSLContext, duration: float, concurrency: int,
                pids: dict) -> tuple[float, dict]:
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=context)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(worker: int, seq: int) -> None:
            async with session.get(url, headers={"Accept": "application/json"}) as response:
                body = await response.read()
                if response.status != 200:
                    raise RuntimeError(f"GET answered {response.status}: {body[:200]!r}")

        meter = CPUMeter(pids)
        meter.start()
        count, elapsed = await closed_loop(duration, concurrency, one)
        return count / elapsed, meter.stop()


def available(cluster) -> bool:
    doc = json.loads(cluster.kubectl("get", "apiservice", "v1alpha1.wardle.example.com",
                                     "-o", "json").stdout)
    return any(c["type"] == "Available" and c["status"] == "True"
               for c in (doc.get("status") or {}).get("conditions") or [])


async def main(args: argparse.Namespace) -> None:
    with contextlib.ExitStack() as stack:
        with timed("start kubeapi and wardle"):
            ns, cluster, wardle = start_aggregated(_Owner(stack))
            deadline = time.monotonic() + 60
            while not available(cluster):
                if time.monotonic() > deadline:
                    raise RuntimeError("the APIService did not become available")
                time.sleep(0.5)
        kube = cluster.kube
        created = kube.request("POST", FLUNDERS, flunder("target"))
        assert created.status == 201, created.body
        path = FLUNDERS + "/target"
        proxied = ssl.create_default_context(cafile=kube.ca_file)
        proxied.load_cert_chain(kube.admin_cert_file, kube.admin_key_file)
        direct = ssl.create_default_context(cafile=wardle.ca_file)
        direct.load_cert_chain(kube.admin_cert_file, kube.admin_key_file)
        proxy_url = f"https://127.0.0.1:{kube.port}{path}"
        direct_url = f"https://{wardle.address}:{wardle.port}{path}"
        pids = {"kubeapi": kube.process.pid, "wardle": wardle.process.pid}
        with timed("warm-up"):
            await phase(proxy_url, proxied, 1.0, args.concurrency, pids)
            await phase(direct_url, direct, 1.0, args.concurrency, pids)
        rows = []
        for _ in range(args.rounds):
            p, p_cpu = await phase(proxy_url, proxied, args.duration, args.concurrency, pids)
            d, d_cpu = await phase(direct_url, direct, args.duration, args.concurrency, pids)
            rows.append({"proxied_per_s": round(p, 1), "proxied_cpu": p_cpu,
                         "direct_per_s": round(d, 1), "direct_cpu": d_cpu})
            print(f"  round: proxied {p:.0f}/s cpu {p_cpu} | direct {d:.0f}/s cpu {d_cpu}",
                  flush=True)
        p = sum(r["proxied_per_s"] for r in rows) / len(rows)
        d = sum(r["direct_per_s"] for r in rows) / len(rows)
        ratio = round(p / d, 3)
        report("flunder GET through the aggregator vs direct", {
            "concurrency": args.concurrency, "duration_s": args.duration,
            "transport": "HTTPS, HTTP/1.1 keep-alive (aiohttp), admin client certificate",
            "proxied_gets_per_s": round(p, 1), "direct_gets_per_s": round(d, 1),
            "rounds": rows,
        }, "proxied GETs/s / direct GETs/s (upstream: ~0.9)", ratio, None)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    asyncio.run(main(parser.parse_args()))
