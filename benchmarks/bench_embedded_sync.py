"""
Create throughput of the embedded store with C{--embedded-sync=normal} (SQLite
C{synchronous=NORMAL}, the default) against C{--embedded-sync=full} (C{synchronous=FULL}: the WAL
is synced at every commit): ConfigMaps created through kubetwist (HTTPS, N concurrent clients on
N keep-alive HTTP/1.1 connections), one fresh server per mode, phases alternating so drift in
disk speed hits both; plus, for scale, raw SQLite commits/s (one 400-byte insert per
transaction, WAL) in each mode in the benchmark process, on the same file system.  No target:
the figures say what durability across power loss costs on this disk.

    python benchmarks/bench_embedded_sync.py [--duration 10] [--concurrency 8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sqlite3
import tempfile
import time

import aiohttp
from common import NAMESPACE, CPUMeter, client_ssl, closed_loop, report, timed

from tests.integration.harness import KubeAPIProcess

MODES = ("normal", "full")


async def phase(server: KubeAPIProcess, duration: float, concurrency: int,
                names: itertools.count) -> tuple[float, dict]:
    url = f"{server.url}/api/v1/namespaces/{NAMESPACE}/configmaps"
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=client_ssl(server))
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(worker: int, seq: int) -> None:
            body = json.dumps({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": f"cm-{next(names)}", "labels": {"app": "bench"}},
                "data": {"key": "value", "other": "x" * 32},
            })
            async with session.post(
                url, data=body, headers={"Content-Type": "application/json"}
            ) as response:
                await response.read()
                if response.status != 201:
                    raise RuntimeError(f"create answered {response.status}")

        meter = CPUMeter({"kubeapi": server.process.pid})
        meter.start()
        count, elapsed = await closed_loop(duration, concurrency, one)
        return count / elapsed, meter.stop()


def raw_commits_per_s(mode: str, count: int = 2000) -> float:
    """Commits/s of one-row transactions on a fresh WAL database in the temporary directory
    (where the servers' data directories are) with C{PRAGMA synchronous=<mode>}."""
    directory = tempfile.mkdtemp(prefix="kubetwist-sync-")
    path = os.path.join(directory, "raw.db")
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={mode.upper()}")
        conn.execute("CREATE TABLE t (v BLOB)")
        start = time.monotonic()
        for _ in range(count):
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO t VALUES (?)", (b"x" * 400,))
            conn.execute("COMMIT")
        return count / (time.monotonic() - start)
    finally:
        conn.close()
        for name in os.listdir(directory):
            os.unlink(os.path.join(directory, name))
        os.rmdir(directory)


async def main(args: argparse.Namespace) -> None:
    raw = {mode: round(raw_commits_per_s(mode)) for mode in MODES}
    print(f"  raw SQLite: normal {raw['normal']} commits/s | full {raw['full']} commits/s",
          flush=True)
    servers = {mode: KubeAPIProcess(extra_args=[f"--embedded-sync={mode}"]) for mode in MODES}
    try:
        for server in servers.values():
            server.start()
            body = json.dumps({"apiVersion": "v1", "kind": "Namespace",
                               "metadata": {"name": NAMESPACE}}).encode()
            server.request("POST", "/api/v1/namespaces", body)
        names = {mode: itertools.count() for mode in MODES}
        with timed("warm-up"):
            for mode in MODES:
                await phase(servers[mode], 2.0, args.concurrency, names[mode])
        rows = []
        for _ in range(args.rounds):
            row = {}
            for mode in MODES:
                rate, cpu = await phase(servers[mode], args.duration, args.concurrency,
                                        names[mode])
                row[f"{mode}_per_s"] = round(rate, 1)
                row[f"{mode}_cpu"] = cpu
            rows.append(row)
            print(f"  round: normal {row['normal_per_s']:.0f}/s | full {row['full_per_s']:.0f}/s",
                  flush=True)
        normal = sum(r["normal_per_s"] for r in rows) / len(rows)
        full = sum(r["full_per_s"] for r in rows) / len(rows)
        report(
            "embedded store create throughput, synchronous NORMAL vs FULL",
            {"concurrency": args.concurrency, "duration_s": args.duration,
             "raw_sqlite_commits_per_s": raw,
             "normal_creates_per_s": round(normal, 1), "full_creates_per_s": round(full, 1),
             "rounds": rows},
            "none (full / normal reported)", round(full / normal, 3), None,
        )
    finally:
        for server in servers.values():
            server.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    asyncio.run(main(parser.parse_args()))
