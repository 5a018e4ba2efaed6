"""
Watch fan-out: N (default 1,000) watchers of one ConfigMap, each on its own HTTPS HTTP/1.1
connection (N TLS connections, one long-lived chunked response each), all in this process on
asyncio's event loop.  Each round updates the ConfigMap once (a JSON merge patch through a
separate connection) and records, per watcher, the time from just before the PATCH is sent to
the moment the bytes carrying the new value arrive on that watcher's socket.
Target: p99 of those delays over all watchers and rounds <= 100 ms.

    python benchmarks/bench_watch.py [--watchers 1000] [--rounds 20] [--profile FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from urllib.parse import quote

import aiohttp
from common import NAMESPACE, Cluster, CPUMeter, percentile, profiled, report, timed


class WatchProtocol(asyncio.Protocol):
    """
    One watch connection: sends the GET, then timestamps the arrival of the marker bytes of
    the round it is told to expect (the raw stream is searched; no parsing on the hot path).
    """

    def __init__(self, request: bytes) -> None:
        self.request = request
        self.tail = b""
        self.expect: bytes | None = None
        self.waiter: asyncio.Future | None = None
        self.arrival = 0.0
        self.closed = asyncio.get_running_loop().create_future()
        self.headers_seen = False

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.write(self.request)

    def arm(self, marker: bytes) -> asyncio.Future:
        self.expect = marker
        self.waiter = asyncio.get_running_loop().create_future()
        return self.waiter

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        if not self.headers_seen:
            self.headers_seen = True
            if not data.startswith(b"HTTP/1.1 200"):
                print("watch refused:", data[:300])
        window = self.tail + data
        self.tail = window[-64:]
        if self.expect is not None and self.expect in window:
            self.expect = None
            self.arrival = now
            if self.waiter is not None and not self.waiter.done():
                self.waiter.set_result(now)

    def connection_lost(self, exc) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError(f"watch closed: {exc}"))
        if not self.closed.done():
            self.closed.set_result(None)


async def open_watchers(
    cluster: Cluster, count: int, resource_version: str, parallel: int = 16
) -> list[tuple[asyncio.Transport, WatchProtocol]]:
    loop = asyncio.get_running_loop()
    context = cluster.client_ssl()
    selector = quote("metadata.name=target")
    path = (
        f"/api/v1/namespaces/{NAMESPACE}/configmaps?watch=1&fieldSelector={selector}"
        f"&resourceVersion={resource_version}&timeoutSeconds=600"
    )
    request = (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{cluster.server.port}\r\n"
        "Accept: application/json\r\nUser-Agent: kubetwist-bench\r\n\r\n"
    ).encode()
    gate = asyncio.Semaphore(parallel)
    out = []

    async def one() -> None:
        async with gate:
            transport, protocol = await loop.create_connection(
                lambda: WatchProtocol(request),
                "127.0.0.1",
                cluster.server.port,
                ssl=context,
                server_hostname="127.0.0.1",
            )
            out.append((transport, protocol))

    await asyncio.gather(*(one() for _ in range(count)))
    return out


async def update(session: aiohttp.ClientSession, url: str, marker: str) -> dict:
    async with session.patch(
        url,
        data=json.dumps({"data": {"seq": marker}}),
        headers={"Content-Type": "application/merge-patch+json"},
    ) as r:
        body = await r.json()
        if r.status != 200:
            raise RuntimeError(f"PATCH answered {r.status}: {body}")
        return body


async def round_(session, url: str, watchers, marker: str, timeout: float):
    waiters = [protocol.arm(f'"seq":"{marker}"'.encode()) for _, protocol in watchers]
    sent = time.perf_counter()
    await update(session, url, marker)
    acked = time.perf_counter()
    done, pending = await asyncio.wait(waiters, timeout=timeout)
    arrivals = [w.result() for w in done if w.exception() is None]
    for w in pending:
        w.cancel()
    delays = [a - sent for a in arrivals]
    first = min(arrivals, default=0.0)
    spread = [a - first for a in arrivals]
    return delays, spread, acked - sent, len(watchers) - len(delays)


async def main(args: argparse.Namespace) -> None:
    with Cluster() as cluster:
        cluster.create_namespace()
        server = cluster.server
        base = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
        created = server.request(
            "POST",
            base,
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "target"},
                    "data": {"seq": "initial"},
                }
            ).encode(),
        )
        assert created.status == 201, created.body
        rv = json.loads(created.body)["metadata"]["resourceVersion"]
        url = f"{server.url}{base}/target"
        connector = aiohttp.TCPConnector(limit=1, ssl=cluster.client_ssl())
        async with aiohttp.ClientSession(connector=connector) as session:
            with timed(f"open {args.watchers} watches"):
                watchers = await open_watchers(cluster, args.watchers, rv)
            try:
                with timed("warm-up round (every watch established)"):
                    delays, _, _, missed = await round_(session, url, watchers, "warm", 60.0)
                if missed:
                    raise RuntimeError(f"{missed} watchers never saw the warm-up update")
                if args.profile:
                    with profiled(args.profile, server.process.pid, 5):
                        deadline = time.monotonic() + 5
                        n = 0
                        while time.monotonic() < deadline:
                            await round_(session, url, watchers, f"profile-{n}", 10.0)
                            n += 1
                all_delays: list[float] = []
                all_spread: list[float] = []
                rounds = []
                missed_total = 0
                meter = CPUMeter(cluster.pids)
                meter.start()
                for n in range(args.rounds):
                    delays, spread, ack, missed = await round_(
                        session, url, watchers, f"round-{n}", args.timeout
                    )
                    missed_total += missed
                    all_delays += delays
                    all_spread += spread
                    rounds.append(
                        {
                            "write_ms": round(1000 * ack, 1),
                            "p50_ms": round(1000 * statistics.median(delays), 1),
                            "max_ms": round(1000 * max(delays), 1),
                            "missed": missed,
                        }
                    )
                    print(f"  round {n}: {rounds[-1]}", flush=True)
                    await asyncio.sleep(args.gap)
                cpu = meter.stop()
            finally:
                for transport, _ in watchers:
                    transport.abort()
        p99 = 1000 * percentile(all_delays, 99)
        met = p99 <= 100.0 and missed_total == 0
        report(
            "watch fan-out",
            {
                "watchers": args.watchers,
                "rounds": args.rounds,
                "transport": f"{args.watchers} HTTPS HTTP/1.1 connections, one watch each "
                "(asyncio protocols, one client process)",
                "delay": "arrival on the watcher's socket minus the moment the PATCH was sent",
                "p50_ms": round(1000 * percentile(all_delays, 50), 1),
                "p90_ms": round(1000 * percentile(all_delays, 90), 1),
                "p99_ms": round(p99, 1),
                "max_ms": round(1000 * max(all_delays), 1),
                "spread": "arrival minus the first arrival of the same round (the fan-out alone)",
                "spread_p50_ms": round(1000 * percentile(all_spread, 50), 1),
                "spread_p99_ms": round(1000 * percentile(all_spread, 99), 1),
                "write_median_ms": statistics.median(r["write_ms"] for r in rounds),
                "missed": missed_total,
                "cpu_during_rounds": cpu,
                "per_round": rounds,
            },
            "p99 delay <= 100 ms, no watcher misses an update",
            round(p99, 1),
            met,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--watchers", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--gap", type=float, default=0.2, help="seconds between rounds")
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds a round waits for every watcher"
    )
    parser.add_argument(
        "--profile",
        metavar="FILE",
        help="py-spy the kubeapi process during 5 extra, uncounted seconds",
    )
    asyncio.run(main(parser.parse_args()))
