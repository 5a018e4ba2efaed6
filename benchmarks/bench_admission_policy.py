"""
The cost of one ValidatingAdmissionPolicy on creates: ConfigMap creates/s through one
C{twistd kubeapi} on etcd (N keep-alive HTTPS HTTP/1.1 connections, aiohttp) with no policy
and with one policy + binding matching every ConfigMap create (two validations, one with a
C{messageExpression}, and one variable, all passing), phases alternating in the same process
(the policy is created and deleted between phases; a probe object the policy refuses shows
when it is in force).  Reported: the throughput ratio with policy / without.

    python benchmarks/bench_admission_policy.py [--duration 10] [--concurrency 8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time

import aiohttp
from common import NAMESPACE, Cluster, CPUMeter, closed_loop, report, timed

ARG = "/apis/admissionregistration.k8s.io/v1"
POLICY = {
    "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
    "metadata": {"name": "bench"},
    "spec": {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": [{
            "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
            "resources": ["configmaps"]}]},
        "variables": [{"name": "labels", "expression":
                       "has(object.metadata.labels) ? object.metadata.labels : {}"}],
        "validations": [
            {"expression": "!('deny' in variables.labels)", "message": "denied"},
            {"expression": "!has(object.data) || object.data.size() < 100",
             "messageExpression": "'too many keys: ' + string(object.data.size())"}],
    },
}
BINDING = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "bench"},
    "spec": {"policyName": "bench", "validationActions": ["Deny"]},
}


def probe_code(cluster: Cluster, names: itertools.count) -> int:
    """Create a ConfigMap the policy refuses; its status code (422 when in force)."""
    body = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"probe-{next(names)}", "labels": {"deny": "yes"}}}
    return cluster.server.request(
        "POST", f"/api/v1/namespaces/{NAMESPACE}/configmaps", json.dumps(body).encode(),
        {"Content-Type": "application/json"}).status


def set_policy(cluster: Cluster, on: bool, names: itertools.count) -> None:
    """Create or delete the policy and binding; wait (bounded) until requests see it."""
    for path, doc in ((f"{ARG}/validatingadmissionpolicies", POLICY),
                      (f"{ARG}/validatingadmissionpolicybindings", BINDING)):
        if on:
            response = cluster.server.request("POST", path, json.dumps(doc).encode(),
                                              {"Content-Type": "application/json"})
        else:
            response = cluster.server.request("DELETE", f"{path}/bench")
        if response.status not in (200, 201):
            raise RuntimeError(f"{path}: {response.status} {response.body!r}")
    deadline = time.monotonic() + 10
    while (probe_code(cluster, names) == 422) != on:
        if time.monotonic() > deadline:
            raise RuntimeError("the policy change did not take effect within 10 s")
        time.sleep(0.05)


async def create_phase(cluster: Cluster, duration: float, concurrency: int,
                       names: itertools.count) -> tuple[float, dict]:
    url = f"{cluster.server.url}/api/v1/namespaces/{NAMESPACE}/configmaps"
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=cluster.client_ssl())
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(worker: int, seq: int) -> None:
            body = json.dumps({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": f"cm-{next(names)}", "labels": {"app": "bench"}},
                "data": {"key": "value", "other": "x" * 32}})
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


async def main(args: argparse.Namespace) -> None:
    with Cluster() as cluster:
        cluster.create_namespace()
        names = itertools.count()
        rows = []
        with timed("warm-up"):
            await create_phase(cluster, 2.0, args.concurrency, names)
            set_policy(cluster, True, names)
            await create_phase(cluster, 2.0, args.concurrency, names)
            set_policy(cluster, False, names)
        for _ in range(args.rounds):
            plain, plain_cpu = await create_phase(cluster, args.duration, args.concurrency,
                                                  names)
            set_policy(cluster, True, names)
            policy, policy_cpu = await create_phase(cluster, args.duration, args.concurrency,
                                                    names)
            set_policy(cluster, False, names)
            rows.append({"no_policy_per_s": round(plain, 1), "no_policy_cpu": plain_cpu,
                         "one_policy_per_s": round(policy, 1), "one_policy_cpu": policy_cpu})
            print(f"  round: no policy {plain:.0f}/s | one policy {policy:.0f}/s", flush=True)
        p = sum(r["no_policy_per_s"] for r in rows) / len(rows)
        v = sum(r["one_policy_per_s"] for r in rows) / len(rows)
        ratio = round(v / p, 3)
        report("create throughput with one ValidatingAdmissionPolicy",
               {"concurrency": args.concurrency, "duration_s": args.duration,
                "no_policy_creates_per_s": round(p, 1),
                "one_policy_creates_per_s": round(v, 1), "rounds": rows},
               "creates/s with one policy / without (no target set)", ratio, None)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    asyncio.run(main(parser.parse_args()))
