"""
The cost of RBAC per request: single-object GET and ConfigMap CREATE throughput of a
non-admin user (a bearer token from C{--token-auth-file}, no client certificate) against two
servers, one started with C{--authorization-mode=AlwaysAllow}, the other with the default
C{Node,RBAC} and a RoleBinding granting that user get/create on ConfigMaps of the benchmark
namespace.  Each server has its own etcd; N concurrent workers on N keep-alive HTTPS HTTP/1.1
connections (aiohttp); phases alternate between the servers.  Target: RBAC GET throughput
>= 0.9x AlwaysAllow's.

Before the servers, an in-process measurement times one RBAC decision for that user (the
bootstrap policy plus the RoleBinding in the index; the first decision of a user resolves and
caches its bindings, later ones match the cached rules), which does not depend on the load of
a shared machine.

    python benchmarks/bench_authz.py [--duration 10] [--concurrency 8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import ssl
import statistics
import tempfile
import time
from typing import Any

import aiohttp
from common import NAMESPACE, Cluster, CPUMeter, closed_loop, report, timed

TOKEN = "bench-user-token-0123456789"
USER = "bench-user"


def client_context(cluster: Cluster) -> ssl.SSLContext:
    """Trust the server's CA; no client certificate (the user is the bearer token's)."""
    context = ssl.create_default_context(cafile=cluster.server.ca_file)
    context.set_alpn_protocols(["http/1.1"])
    return context


def prepare(cluster: Cluster) -> None:
    """The namespace, the target ConfigMap, and (harmless under AlwaysAllow) the user's
    Role and RoleBinding; waits until the user may GET."""
    cluster.create_namespace()
    server = cluster.server
    for path, doc in [
        (f"/api/v1/namespaces/{NAMESPACE}/configmaps",
         {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "target", "labels": {"app": "bench"}},
          "data": {"key": "value", "other": "x" * 32}}),
        (f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NAMESPACE}/roles",
         {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
          "metadata": {"name": "configmaps"},
          "rules": [{"verbs": ["get", "create"], "apiGroups": [""],
                     "resources": ["configmaps"]}]}),
        (f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NAMESPACE}/rolebindings",
         {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
          "metadata": {"name": "bench-user"},
          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                      "name": "configmaps"},
          "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                        "name": USER}]}),
    ]:
        answer = server.request("POST", path, json.dumps(doc).encode())
        assert answer.status == 201, answer.body
    deadline = time.monotonic() + 30
    while True:
        answer = server.request("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps/target",
                                client_cert=False, token=TOKEN)
        if answer.status == 200:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the user cannot GET: {answer.status} {answer.body[:300]!r}")
        time.sleep(0.2)


async def get_phase(cluster: Cluster, duration: float, concurrency: int) -> tuple[float, dict]:
    url = f"{cluster.server.url}/api/v1/namespaces/{NAMESPACE}/configmaps/target"
    headers = {"Accept": "application/json", "Authorization": f"Bearer {TOKEN}"}
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=client_context(cluster))
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(worker: int, seq: int) -> None:
            async with session.get(url, headers=headers) as response:
                await response.read()
                if response.status != 200:
                    raise RuntimeError(f"GET answered {response.status}")

        meter = CPUMeter(cluster.pids)
        meter.start()
        count, elapsed = await closed_loop(duration, concurrency, one)
        return count / elapsed, meter.stop()


async def create_phase(cluster: Cluster, duration: float, concurrency: int,
                       names: itertools.count) -> tuple[float, dict]:
    url = f"{cluster.server.url}/api/v1/namespaces/{NAMESPACE}/configmaps"
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=client_context(cluster))
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(worker: int, seq: int) -> None:
            body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                               "metadata": {"name": f"cm-{next(names)}"},
                               "data": {"key": "value", "other": "x" * 32}})
            async with session.post(url, data=body, headers=headers) as response:
                await response.read()
                if response.status != 201:
                    raise RuntimeError(f"create answered {response.status}")

        meter = CPUMeter(cluster.pids)
        meter.start()
        count, elapsed = await closed_loop(duration, concurrency, one)
        return count / elapsed, meter.stop()


def decision_cost(iterations: int = 100_000) -> dict:
    """Microseconds per RBAC decision in process, over the bootstrap policy plus the user's
    binding: a remembered decision, one matched against the user's resolved rules, and one
    resolving the user's bindings first."""
    from twisted.internet.task import Clock

    from kubetwist.authentication.user import UserInfo
    from kubetwist.authorization.authorizer import Attributes
    from kubetwist.authorization.rbac import RBACAuthorizer, RBACIndex
    from kubetwist.authorization.rbac.bootstrap import bootstrap_policy
    from kubetwist.storage.cacher import Cacher
    from kubetwist.storage.sqlite import SQLiteStorage

    class Inline:
        synchronous = True

        def stop(self) -> None:
            pass

    clock = Clock()
    storage = Cacher(SQLiteStorage(clock, ":memory:", threadpool=Inline()), clock)
    policy = bootstrap_policy()
    policy["roleBindings"].append({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "bench-user", "namespace": NAMESPACE},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "edit"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": USER}]})
    resources = {"clusterRoles": "clusterroles", "clusterRoleBindings": "clusterrolebindings",
                 "roles": "roles", "roleBindings": "rolebindings"}
    for key, resource in resources.items():
        for obj in policy[key]:
            meta = obj["metadata"]
            path = "/".join(p for p in (meta.get("namespace"), meta["name"]) if p)
            storage.create(f"/registry/{resource}/{path}", obj)
    # "edit" as the controller would aggregate it: the bootstrap aggregate-to-edit rules
    storage.guaranteed_update("/registry/clusterroles/edit", lambda cur: {
        **cur, "rules": [r for o in policy["clusterRoles"]
                         if o["metadata"]["name"] in ("system:aggregate-to-edit",
                                                      "system:aggregate-to-view")
                         for r in o["rules"]]})
    authorizer = RBACAuthorizer(RBACIndex(storage, clock))
    clock.advance(0)
    user = UserInfo(name=USER, groups=["system:authenticated"])
    attrs = Attributes(user=user, verb="get", namespace=NAMESPACE, api_version="v1",
                       resource="configmaps", name="target", resource_request=True)
    assert authorizer.decide(attrs)[0] == "allow", authorizer.decide(attrs)
    start = time.perf_counter()
    for _ in range(iterations):
        authorizer.decide(attrs)
    remembered = (time.perf_counter() - start) / iterations * 1e6
    start = time.perf_counter()
    for _ in range(iterations // 10):
        authorizer._decisions.clear()
        authorizer.decide(attrs)
    matching = (time.perf_counter() - start) / (iterations // 10) * 1e6
    start = time.perf_counter()
    for _ in range(iterations // 100):
        authorizer._decisions.clear()
        authorizer._cache.clear()
        authorizer.decide(attrs)
    resolving = (time.perf_counter() - start) / (iterations // 100) * 1e6
    return {"decision_us_remembered": round(remembered, 2),
            "decision_us_matching": round(matching, 2),
            "decision_us_resolving": round(resolving, 2)}


def chain_cost(requests: int = 1500, rounds: int = 3) -> dict:
    """
    CPU seconds (C{time.process_time}) per GET and per CREATE of the plain user through the
    whole in-process chain (authentication, authorization, handlers, the Cacher over
    in-memory SQLite, as the unit tests assemble it), AlwaysAllow against Node,RBAC, in
    alternating blocks of 100 requests with the garbage collector run between blocks; the
    medians of the blocks.  Robust against other load on a shared machine.
    """
    import json as _json

    from treq.testing import StubTreq

    from tests.support import FakeReactorClock, build_chain

    def chain(modes: tuple[str, ...]) -> tuple[Any, Any]:
        clock = FakeReactorClock()
        parts = build_chain(clock, modes)
        for server in parts["front"].chain():
            server.hooks.startService()
        clock.advance(1)
        return StubTreq(parts["chain"]), clock

    def call(treq: Any, clock: Any, method: str, path: str, body: Any, token: str) -> int:
        data = _json.dumps(body).encode() if body is not None else None
        d = treq.request(method, "https://kubetwist.test" + path, data=data, headers={
            "Authorization": [f"Bearer {token}"], "Content-Type": ["application/json"]})
        treq.flush()
        clock.advance(0)
        out: list = []
        d.addCallback(lambda r: out.append(r.code))
        return out[0]

    setups = {}
    for label, modes in (("always_allow", ("AlwaysAllow",)), ("rbac", ("Node", "RBAC"))):
        treq, clock = chain(modes)
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        assert call(treq, clock, "POST", "/api/v1/namespaces", ns, "admin-token") == 201
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "target"},
              "data": {"key": "value", "other": "x" * 32}}
        assert call(treq, clock, "POST", f"/api/v1/namespaces/{NAMESPACE}/configmaps", cm,
                    "admin-token") == 201
        rb = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
              "metadata": {"name": "jane"},
              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                          "name": "edit"},
              "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                            "name": "jane"}]}
        assert call(treq, clock, "POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/"
                    f"{NAMESPACE}/rolebindings", rb, "admin-token") == 201
        clock.advance(1)
        setups[label] = (treq, clock)
    path = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    names = itertools.count()
    samples: dict[str, list[float]] = {f"{label}_{op}": [] for label in setups
                                       for op in ("get", "create")}
    block = 100
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds * requests // block):
            for label, (treq, clock) in setups.items():
                start = time.process_time()
                for _ in range(block):
                    assert call(treq, clock, "GET", path + "/target", None,
                                "jane-token") == 200
                samples[f"{label}_get"].append((time.process_time() - start) / block)
                start = time.process_time()
                for _ in range(block // 5):
                    cm = {"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": f"cm-{next(names)}"}, "data": {"k": "v"}}
                    assert call(treq, clock, "POST", path, cm, "jane-token") == 201
                samples[f"{label}_create"].append((time.process_time() - start) / (block // 5))
            gc.collect()
    finally:
        gc.enable()
    per = {k: statistics.median(v) * 1e6 for k, v in samples.items()}
    return {
        "in_process_get_us": {k: round(v, 1) for k, v in per.items() if k.endswith("get")},
        "in_process_create_us": {k: round(v, 1) for k, v in per.items()
                                 if k.endswith("create")},
        "in_process_get_ratio": round(per["always_allow_get"] / per["rbac_get"], 3),
        "in_process_create_ratio": round(per["always_allow_create"] / per["rbac_create"], 3),
    }


async def main(args: argparse.Namespace) -> None:
    micro = decision_cost()
    print(f"  in process: {micro}", flush=True)
    micro.update(chain_cost())
    print(f"  in process chain: {micro}", flush=True)
    fd, token_file = tempfile.mkstemp(prefix="kubetwist-bench-tokens-", suffix=".csv")
    with os.fdopen(fd, "w") as f:
        f.write(f"{TOKEN},{USER},1001,\n")
    common = (f"--token-auth-file={token_file}",)
    try:
        with Cluster(common + ("--authorization-mode=AlwaysAllow",)) as allow, \
                Cluster(common) as rbac:
            with timed("setup"):
                prepare(allow)
                prepare(rbac)
            names = itertools.count()
            with timed("warm-up"):
                for cluster in (allow, rbac):
                    await get_phase(cluster, 1.0, args.concurrency)
                    await create_phase(cluster, 1.0, args.concurrency, names)
            rows = []
            for n in range(args.rounds):
                row = {}
                order = [("always_allow", allow), ("rbac", rbac)]
                # which server goes first alternates between rounds
                for label, cluster in (order if n % 2 == 0 else order[::-1]):
                    g, g_cpu = await get_phase(cluster, args.duration, args.concurrency)
                    c, c_cpu = await create_phase(cluster, args.duration, args.concurrency,
                                                  names)
                    row[f"{label}_get_per_s"] = round(g, 1)
                    row[f"{label}_get_per_cpu_s"] = round(g / max(g_cpu["kubeapi"], 0.01), 1)
                    row[f"{label}_create_per_s"] = round(c, 1)
                    row[f"{label}_create_per_cpu_s"] = round(
                        c / max(c_cpu["kubeapi"], 0.01), 1)
                rows.append(row)
                print(f"  round: {row}", flush=True)
    finally:
        os.remove(token_file)

    def mean(key: str) -> float:
        return sum(r[key] for r in rows) / len(rows)

    get_ratio = round(mean("rbac_get_per_s") / mean("always_allow_get_per_s"), 3)
    report(
        "RBAC cost per request (GET, CREATE)",
        {
            "concurrency": args.concurrency,
            "duration_s": args.duration,
            "transport": "HTTPS, HTTP/1.1 keep-alive (aiohttp), bearer token of a plain user",
            **micro,
            "get_ratio_rbac_over_always_allow": get_ratio,
            "get_per_cpu_s_ratio": round(mean("rbac_get_per_cpu_s")
                                         / mean("always_allow_get_per_cpu_s"), 3),
            "create_ratio_rbac_over_always_allow": round(
                mean("rbac_create_per_s") / mean("always_allow_create_per_s"), 3),
            "create_per_cpu_s_ratio": round(mean("rbac_create_per_cpu_s")
                                            / mean("always_allow_create_per_cpu_s"), 3),
            "rounds": rows,
        },
        "RBAC GETs/s / AlwaysAllow GETs/s >= 0.9",
        get_ratio,
        get_ratio >= 0.9,
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    asyncio.run(main(parser.parse_args()))
