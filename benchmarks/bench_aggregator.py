"""
GET throughput through the aggregator's proxy: C{GET /apis/example.kubetwist.io/v1/namespaces/
default/things/one} sent to C{twistd kubeapi} (authentication, authorization, flow control,
then the proxy to the extension server over TLS with the front-proxy certificate) against the
same GET sent straight to the extension server (the test backend of
C{tests/integration/aggregated_backend.py}, in a network namespace, with the front-proxy
certificate and the C{X-Remote-*} headers the proxy would add), with the same client (and, for
reference, a GET of a Namespace served by kubeapi itself): N concurrent workers on N
keep-alive HTTPS HTTP/1.1 connections (aiohttp).  Phases alternate.  Needs root (a network
namespace).  Upstream's proxy costs about 10%.

    python benchmarks/bench_aggregator.py [--duration 10] [--concurrency 8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import ssl
import sys
import tempfile

import aiohttp
from common import CPUMeter, client_ssl, closed_loop, report, timed

from tests.integration.harness import KubeAPIProcess
from tests.integration.test_aggregation import AggregationFixture, _register, eventually
from tests.netns import NetworkNamespace
from tests.pki import CA

PATH = "/apis/example.kubetwist.io/v1/namespaces/default/things/one"


async def phase(url: str, context: ssl.SSLContext, duration: float, concurrency: int,
                headers: dict, pids: dict) -> tuple[float, dict]:
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=context)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(worker: int, seq: int) -> None:
            async with session.get(url, headers=headers) as response:
                body = await response.read()
                if response.status != 200:
                    raise RuntimeError(f"GET answered {response.status}: {body[:200]!r}")

        meter = CPUMeter(pids)
        meter.start()
        count, elapsed = await closed_loop(duration, concurrency, one)
        return count / elapsed, meter.stop()


async def main(args: argparse.Namespace) -> None:
    work = tempfile.mkdtemp(prefix="kubetwist-bench-agg-")
    proxy_ca = CA("front-proxy-ca")
    proxy = proxy_ca.issue("front-proxy-client", client=True)
    serving_ca = CA("backend-ca")
    serving = serving_ca.issue("backend", dns_names=["backend.default.svc"])
    paths = {}
    for name, data in {"proxy-ca.crt": proxy_ca.cert, "proxy.crt": proxy.cert,
                       "proxy.key": proxy.key, "serving.crt": serving.cert,
                       "serving.key": serving.key, "serving-ca.crt": serving_ca.cert}.items():
        paths[name] = os.path.join(work, name)
        with open(paths[name], "wb") as f:
            f.write(data)
    server = KubeAPIProcess(extra_args=[f"--proxy-client-cert-file={paths['proxy.crt']}",
                                        f"--proxy-client-key-file={paths['proxy.key']}"])
    fixture = AggregationFixture(server, work_dir=work)
    fixture.files = paths
    try:
        with timed("start"):
            server.start()
            fixture.ns = NetworkNamespace()
            fixture.start_backend()
            _register(server, fixture.ns.address, serving_ca.cert)
            ok = eventually(lambda: server.request("GET", PATH).status == 200, 60)
            if not ok:
                raise RuntimeError("the APIService did not become available")
        kube_context = client_ssl(server)
        direct_context = ssl.create_default_context(cafile=paths["serving-ca.crt"])
        direct_context.check_hostname = False
        direct_context.load_cert_chain(paths["proxy.crt"], paths["proxy.key"])
        direct_context.set_alpn_protocols(["http/1.1"])
        kube_url = f"{server.url}{PATH}"
        direct_url = f"https://{fixture.ns.address}:443{PATH}"
        accept = {"Accept": "application/json"}
        direct_headers = {**accept, "X-Remote-User": "system:admin",
                          "X-Remote-Group": "system:masters"}
        kube_pids = {"kubeapi": server.process.pid, "backend": fixture.backend.pid}
        backend_pids = {"backend": fixture.backend.pid}
        with timed("warm-up"):
            await phase(kube_url, kube_context, 1.0, args.concurrency, accept, kube_pids)
            await phase(direct_url, direct_context, 1.0, args.concurrency, direct_headers,
                        backend_pids)
        local_url = f"{server.url}/api/v1/namespaces/default"
        rows = []
        for _ in range(args.rounds):
            k, k_cpu = await phase(kube_url, kube_context, args.duration, args.concurrency,
                                   accept, kube_pids)
            d, d_cpu = await phase(direct_url, direct_context, args.duration, args.concurrency,
                                   direct_headers, backend_pids)
            n, n_cpu = await phase(local_url, kube_context, args.duration, args.concurrency,
                                   accept, {"kubeapi": server.process.pid})
            rows.append({"aggregator_per_s": round(k, 1), "aggregator_cpu": k_cpu,
                         "direct_per_s": round(d, 1), "direct_cpu": d_cpu,
                         "local_get_per_s": round(n, 1), "local_get_cpu": n_cpu})
            print(f"  round: through the aggregator {k:.0f}/s cpu {k_cpu} | direct {d:.0f}/s "
                  f"cpu {d_cpu} | local GET {n:.0f}/s cpu {n_cpu}", flush=True)
    finally:
        fixture.close()
    k = sum(r["aggregator_per_s"] for r in rows) / len(rows)
    d = sum(r["direct_per_s"] for r in rows) / len(rows)
    n = sum(r["local_get_per_s"] for r in rows) / len(rows)
    ratio = round(k / d, 3)
    report("GET through the aggregator proxy", {
        "concurrency": args.concurrency, "duration_s": args.duration,
        "transport": "HTTPS, HTTP/1.1 keep-alive (aiohttp); aggregator -> backend: HTTPS "
                     "keep-alive with the front-proxy certificate",
        "aggregator_gets_per_s": round(k, 1), "direct_gets_per_s": round(d, 1),
        "local_namespace_gets_per_s": round(n, 1),
        "rounds": rows}, "aggregator GETs/s / direct GETs/s (upstream: ~0.9)", ratio, None)


if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("needs root (a network namespace)")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    asyncio.run(main(parser.parse_args()))
