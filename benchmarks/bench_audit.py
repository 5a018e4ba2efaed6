"""
The cost of audit per request: GETs/s of one ConfigMap and ConfigMap creates/s through two
C{twistd kubeapi} processes on the same etcd, one without audit and one with
C{--audit-policy-file} (one rule: C{level: Metadata}) and C{--audit-log-path} (JSON lines to a
file, the default C{blocking} mode: a writer thread), same client (N keep-alive HTTPS
HTTP/1.1 connections, aiohttp); phases alternate.  Reported: the throughput ratio
audited / plain and the extra kubeapi CPU per request (microseconds), from the CPU each
process used.  Also, in this process: the audit work one request costs the reactor thread
(policy, event fields, two events encoded and queued for the writer thread), best of five runs,
at C{Metadata} and at C{RequestResponse} (with a ConfigMap as request and response object).

    python benchmarks/bench_audit.py [--duration 10] [--concurrency 8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import tempfile

import aiohttp
from common import NAMESPACE, Cluster, CPUMeter, client_ssl, closed_loop, report, timed

from tests.integration.harness import KubeAPIProcess

POLICY = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"
DOCUMENT = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "target", "labels": {"app": "bench"}},
            "data": {"key": "value", "other": "x" * 32}}


async def get_phase(server: KubeAPIProcess, duration: float, concurrency: int,
                    pid: int) -> tuple[float, float]:
    url = f"{server.url}/api/v1/namespaces/{NAMESPACE}/configmaps/target"
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=client_ssl(server))
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(worker: int, seq: int) -> None:
            async with session.get(url, headers={"Accept": "application/json"}) as response:
                await response.read()
                if response.status != 200:
                    raise RuntimeError(f"GET answered {response.status}")

        meter = CPUMeter({"kubeapi": pid})
        meter.start()
        count, elapsed = await closed_loop(duration, concurrency, one)
        return count / elapsed, meter.stop()["kubeapi"]


async def create_phase(server: KubeAPIProcess, duration: float, concurrency: int, pid: int,
                       names: itertools.count) -> tuple[float, float]:
    url = f"{server.url}/api/v1/namespaces/{NAMESPACE}/configmaps"
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=client_ssl(server))
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(worker: int, seq: int) -> None:
            body = json.dumps(dict(DOCUMENT, metadata={"name": f"cm-{next(names)}"}))
            async with session.post(url, data=body,
                                    headers={"Content-Type": "application/json"}) as response:
                await response.read()
                if response.status != 201:
                    raise RuntimeError(f"create answered {response.status}")

        meter = CPUMeter({"kubeapi": pid})
        meter.start()
        count, elapsed = await closed_loop(duration, concurrency, one)
        return count / elapsed, meter.stop()["kubeapi"]


class _NullSink:
    def write(self, data: bytes) -> None:
        pass

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def in_process_us(level: str, iterations: int = 5000, runs: int = 5) -> float:
    """Microseconds of reactor-thread audit work per request at C{level} (best run)."""
    import time

    from twisted.web.test.requesthelper import DummyRequest

    from kubetwist.audit.backends import LogBackend
    from kubetwist.audit.event import new_context
    from kubetwist.audit.policy import load_policy
    from kubetwist.authentication.user import UserInfo
    from kubetwist.endpoints.requestinfo import parse_request_info

    policy = load_policy(POLICY.replace("Metadata", level).encode())
    user = UserInfo("kubernetes-admin", groups=["system:masters", "system:authenticated"])
    path = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    info = parse_request_info("POST", path)
    request = DummyRequest([b""])
    request.uri, request.method = path.encode(), b"POST"
    request.requestHeaders.setRawHeaders(b"user-agent", [b"Python/3.11 aiohttp/3.9"])
    stored = dict(DOCUMENT, metadata=dict(DOCUMENT["metadata"], namespace=NAMESPACE,
                                          uid="6f1c7d8e-0000-4000-8000-000000000000",
                                          resourceVersion="12345",
                                          creationTimestamp="2026-01-01T00:00:00Z"))
    backend = LogBackend(_NullSink(), buffer_size=10 ** 7)
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(iterations):
            cfg = policy.evaluate(user, info)
            ac = new_context(cfg, request, "0b5e1c1e-7d5a-4a8e-9c1a-000000000000", user, info,
                             1.7e9)
            backend.process_events([ac.stage_event("RequestReceived", 1.7e9)])
            ac.log_request_object(DOCUMENT, "", "v1", "configmaps")
            ac.add_annotation("authorization.k8s.io/decision", "allow")
            ac.add_annotation("authorization.k8s.io/reason", "")
            ac.log_response_object(stored)
            ac.set_response_code(201)
            backend.process_events([ac.stage_event("ResponseComplete", 1.7e9 + 0.001)])
        best = min(best, (time.perf_counter() - start) / iterations * 1e6)
        while not backend.queue.empty():
            backend.queue.get_nowait()
    return round(best, 1)


async def main(args: argparse.Namespace) -> None:
    work = tempfile.mkdtemp(prefix="kubetwist-bench-audit-")
    policy = os.path.join(work, "policy.yaml")
    with open(policy, "w") as f:
        f.write(POLICY)
    log_path = os.path.join(work, "audit.log")
    names = itertools.count()
    try:
        with Cluster() as cluster:
            cluster.create_namespace()
            # two servers started alike on the cluster's etcd (the cluster's own, first server
            # is left idle: it differs from later ones in what its start-up did)
            plain = KubeAPIProcess(etcd_url=cluster.etcd.url)
            audited = KubeAPIProcess(etcd_url=cluster.etcd.url, extra_args=[
                f"--audit-policy-file={policy}", f"--audit-log-path={log_path}"])
            plain.start()
            audited.start()
            try:
                created = plain.request("POST", f"/api/v1/namespaces/{NAMESPACE}/configmaps",
                                        json.dumps(DOCUMENT).encode())
                assert created.status == 201, created.body
                servers = {"plain": (plain, plain.process.pid),
                           "audited": (audited, audited.process.pid)}
                with timed("warm-up"):
                    for server, pid in servers.values():
                        await get_phase(server, 1.0, args.concurrency, pid)
                        await create_phase(server, 1.0, args.concurrency, pid, names)
                rows = []
                for n in range(args.rounds):
                    row = {}
                    # alternate which server goes first, so order effects cancel out
                    order = list(servers.items())[::-1 if n % 2 else 1]
                    for verb, phase in (("get", get_phase), ("create", create_phase)):
                        for name, (server, pid) in order:
                            extra = (names,) if verb == "create" else ()
                            rate, cpu = await phase(server, args.duration, args.concurrency,
                                                    pid, *extra)
                            row[f"{verb}_{name}_per_s"] = round(rate, 1)
                            row[f"{verb}_{name}_cpu"] = cpu
                    rows.append(row)
                    print("  round: " + ", ".join(f"{k} {v}" for k, v in row.items()),
                          flush=True)
                log_lines = sum(1 for _ in open(log_path))
            finally:
                plain.cleanup()
                audited.cleanup()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def mean(key: str) -> float:
        return sum(r[key] for r in rows) / len(rows)

    result: dict = {"concurrency": args.concurrency, "duration_s": args.duration,
                    "policy": "one rule, level Metadata; --audit-log-path file, blocking mode",
                    "audit_log_lines": log_lines, "rounds": rows}
    result["in_process_us_per_request_metadata"] = in_process_us("Metadata")
    result["in_process_us_per_request_request_response"] = in_process_us("RequestResponse")
    ratios = {}
    for verb in ("get", "create"):
        p, a = mean(f"{verb}_plain_per_s"), mean(f"{verb}_audited_per_s")
        ratios[verb] = round(a / p, 3)
        # kubeapi CPU-seconds per request, in microseconds
        p_us = mean(f"{verb}_plain_cpu") / p * 1e6
        a_us = mean(f"{verb}_audited_cpu") / a * 1e6
        result[f"{verb}_plain_per_s"] = round(p, 1)
        result[f"{verb}_audited_per_s"] = round(a, 1)
        result[f"{verb}_ratio"] = ratios[verb]
        result[f"{verb}_cpu_us_per_request_plain"] = round(p_us)
        result[f"{verb}_cpu_us_per_request_audited"] = round(a_us)
        result[f"{verb}_audit_cost_cpu_us"] = round(a_us - p_us)
    report("audit cost per request (Metadata level, log file)", result,
           "audited / plain GETs/s and creates/s (reported, no target)",
           ratios["get"], None)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    asyncio.run(main(parser.parse_args()))
