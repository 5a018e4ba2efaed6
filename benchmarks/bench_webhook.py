"""
Create throughput with one validating admission webhook registered against none: ConfigMaps
created through kubetwist (HTTPS, N concurrent clients on N keep-alive connections) while a
ValidatingWebhookConfiguration sends every ConfigMap create to a fast local webhook (the
integration tests' HTTPS webhook process, C{/ok}: allowed at once), and while none is
registered.  Phases alternate (none, webhook, none, webhook, ...) on one server and etcd.
Reported: webhook creates/s / no-webhook creates/s (upstream pays one HTTPS round trip per
create too; no target).

    python benchmarks/bench_webhook.py [--duration 10] [--concurrency 8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import itertools
import json

from bench_create import kubetwist_phase
from common import Cluster, report, timed

from tests.integration.test_webhooks import WebhookProcess
from tests.pki import CA

CONFIG = "bench-webhook"


def register(cluster: Cluster, ca: CA, port: int) -> None:
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": CONFIG},
        "webhooks": [{
            "name": "ok.bench.example.com",
            "clientConfig": {"url": f"https://127.0.0.1:{port}/ok",
                             "caBundle": base64.b64encode(ca.cert).decode()},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["configmaps"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "failurePolicy": "Fail",
        }],
    }
    response = cluster.server.request(
        "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        json.dumps(body).encode())
    if response.status != 201:
        raise RuntimeError(f"cannot register the webhook: {response.status} {response.body}")


def unregister(cluster: Cluster) -> None:
    response = cluster.server.request(
        "DELETE",
        f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{CONFIG}")
    if response.status != 200:
        raise RuntimeError(f"cannot remove the webhook: {response.status} {response.body}")


async def main(args: argparse.Namespace) -> None:
    ca = CA("bench-webhook-ca")
    hook = WebhookProcess(ca)
    try:
        with Cluster() as cluster:
            cluster.create_namespace()
            names = itertools.count()
            with timed("warm-up"):
                await kubetwist_phase(cluster, 2.0, args.concurrency, names)
                register(cluster, ca, hook.port)
                await asyncio.sleep(1.0)
                await kubetwist_phase(cluster, 2.0, args.concurrency, names)
                unregister(cluster)
                await asyncio.sleep(1.0)
            rows = []
            for _ in range(args.rounds):
                n_rate, n_cpu = await kubetwist_phase(cluster, args.duration, args.concurrency,
                                                      names)
                register(cluster, ca, hook.port)
                await asyncio.sleep(1.0)  # the configuration is in force within a second
                w_rate, w_cpu = await kubetwist_phase(cluster, args.duration, args.concurrency,
                                                      names)
                unregister(cluster)
                await asyncio.sleep(1.0)
                rows.append({"none_per_s": round(n_rate, 1), "none_cpu": n_cpu,
                             "webhook_per_s": round(w_rate, 1), "webhook_cpu": w_cpu})
                print(f"  round: none {n_rate:.0f}/s cpu {n_cpu} | one validating webhook "
                      f"{w_rate:.0f}/s cpu {w_cpu}", flush=True)
            none = sum(r["none_per_s"] for r in rows) / len(rows)
            with_hook = sum(r["webhook_per_s"] for r in rows) / len(rows)
            ratio = round(with_hook / none, 3)
            report(
                "create throughput with one validating webhook",
                {"concurrency": args.concurrency, "duration_s": args.duration,
                 "webhook": "HTTPS on 127.0.0.1, a Twisted process answering allowed at once",
                 "none_creates_per_s": round(none, 1),
                 "webhook_creates_per_s": round(with_hook, 1), "rounds": rows},
                "none (reported)", ratio, None)
    finally:
        hook.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    asyncio.run(main(parser.parse_args()))
