"""
Idle cost: the CPU and resident memory of a C{twistd kubeapi} that holds many objects and
serves no request.  Issue 14 ("cost that grows with the work, not with time") wants the idle
process under 2% of one core with ~8,000 objects: controllers that scan whole stores on a
timer (a garbage collector listing every store every few seconds) make the idle cost grow with
the object count.

The objects are C{--objects} ConfigMaps (every tenth owned by one of ten owner ConfigMaps, so
the garbage collector has a graph to keep) and C{--pods} pods bound to a node nobody
registered.  They are written before the server starts, in kubetwist's stored form (copied
from objects created through the API by a first server on the same store): into etcd through
its gateway (C{--store etcd}), or into the embedded store's file with kubetwist's own
L{SQLiteStorage} (C{--store embedded}).  The server then starts on them, is left alone for
C{--settle} seconds and then until a 5-second window uses under 5% of a core (its startup
lists, the collectors' first list), and its CPU seconds
(C{/proc/<pid>/stat}, user + system) are read over C{--seconds} seconds, with its RSS at the
end.

C{--tree DIR} runs the server from another checkout (e.g. C{git archive main | tar -x -C DIR})
to measure the code before a change; the objects are written by this tree's code.

    python benchmarks/bench_idle.py --store embedded --objects 10000 [--tree DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import copy
import json
import os
import shutil
import time
import uuid

import aiohttp
import orjson
from common import NAMESPACE, EtcdProcess, KubeAPIProcess, cpu_seconds, report, rss_bytes, timed

OWNERS = 10


def make_objects(cm_template: dict, pod_template: dict, objects: int,
                 pods: int) -> list[tuple[str, bytes]]:
    """C{(key, stored JSON)} of the owner ConfigMaps, the ConfigMaps and the pods."""
    out = []
    owners = []
    for n in range(OWNERS):
        obj = copy.deepcopy(cm_template)
        obj["metadata"].update(name=f"owner-{n}", uid=str(uuid.uuid4()))
        owners.append(obj["metadata"])
        out.append((f"/registry/configmaps/{NAMESPACE}/owner-{n}", orjson.dumps(obj)))
    for n in range(objects):
        obj = copy.deepcopy(cm_template)
        obj["metadata"].update(name=f"cm-{n:06d}", uid=str(uuid.uuid4()))
        obj["data"] = {"key": f"value-{n}", "other": "x" * 32}
        if n % 10 == 0:
            owner = owners[n // 10 % OWNERS]
            obj["metadata"]["ownerReferences"] = [{
                "apiVersion": "v1", "kind": "ConfigMap", "name": owner["name"],
                "uid": owner["uid"]}]
        out.append((f"/registry/configmaps/{NAMESPACE}/cm-{n:06d}", orjson.dumps(obj)))
    for n in range(pods):
        obj = copy.deepcopy(pod_template)
        obj["metadata"].update(name=f"pod-{n:05d}", uid=str(uuid.uuid4()))
        out.append((f"/registry/pods/{NAMESPACE}/pod-{n:05d}", orjson.dumps(obj)))
    return out


async def put_etcd(url: str, items: list[tuple[str, bytes]], concurrency: int = 32) -> None:
    it = iter(items)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as s:
        async def worker() -> None:
            for key, value in it:
                body = json.dumps({"key": base64.b64encode(key.encode()).decode(),
                                   "value": base64.b64encode(value).decode()})
                async with s.post(f"{url}/v3/kv/put", data=body) as r:
                    await r.read()
                    if r.status != 200:
                        raise RuntimeError(f"etcd put answered {r.status}")
        await asyncio.gather(*(worker() for _ in range(concurrency)))


def put_embedded(data_dir: str, items: list[tuple[str, bytes]]) -> None:
    """Write C{items} into the embedded store of C{data_dir} (no server running)."""
    from twisted.internet.task import Clock

    from kubetwist.storage.sqlite import SQLiteStorage
    from tests.support import InlinePool

    storage = SQLiteStorage(Clock(), os.path.join(data_dir, "state.db"), "/registry",
                            threadpool=InlinePool())
    failures = []
    for key, value in items:
        storage.create(key, orjson.loads(value)).addErrback(failures.append)
    storage.stop()
    if failures:
        raise RuntimeError(f"{len(failures)} writes failed: {failures[0]}")


def templates(server: KubeAPIProcess) -> tuple[dict, dict]:
    """A ConfigMap and a pod created through the API, as stored (server fields set)."""
    def post(path: str, body: dict) -> dict:
        r = server.request("POST", path, json.dumps(body).encode())
        if r.status not in (201, 409):
            raise RuntimeError(f"POST {path}: {r.status} {r.body[:300]!r}")
        r = server.request("GET", f"{path}/{body['metadata']['name']}")
        return orjson.loads(r.body)

    post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                "metadata": {"name": NAMESPACE}})
    cm = post(f"/api/v1/namespaces/{NAMESPACE}/configmaps", {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "template", "labels": {"app": "bench"}}, "data": {"k": "v"}})
    pod = post(f"/api/v1/namespaces/{NAMESPACE}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "template"},
        "spec": {"nodeName": "nowhere", "containers": [{"name": "c", "image": "busybox"}]}})
    for obj in (cm, pod):
        for field in ("resourceVersion", "managedFields"):
            obj["metadata"].pop(field, None)
    return cm, pod


def idle(pid: int, settle: float, seconds: float, quiet: float = 0.05,
         max_settle: float = 90.0) -> dict:
    """
    Wait C{settle} seconds, then until a 5-second window uses under C{quiet} of a core (the
    startup lists are over; at most C{max_settle} seconds in all), then read the CPU seconds
    used over C{seconds} and the RSS at the end.
    """
    start = time.monotonic()
    time.sleep(settle)
    while time.monotonic() - start < max_settle:
        before = cpu_seconds(pid)
        time.sleep(5)
        if (cpu_seconds(pid) - before) / 5 < quiet:
            break
    settled = time.monotonic() - start
    before, start = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    used, wall = cpu_seconds(pid) - before, time.monotonic() - start
    return {"settled_after_seconds": round(settled, 1), "cpu_seconds": round(used, 2),
            "wall_seconds": round(wall, 1),
            "core_fraction": round(used / wall, 4), "rss_mib": round(rss_bytes(pid) / 2**20, 1)}


def main(args: argparse.Namespace) -> None:
    env = {"PYTHONPATH": os.path.abspath(args.tree)} if args.tree else {}
    etcd = EtcdProcess() if args.store == "etcd" else None
    if etcd is not None:
        etcd.start()
    server = KubeAPIProcess(etcd_url=etcd.url if etcd else None, env=env)
    try:
        server.start()
        cm, pod = templates(server)
        items = make_objects(cm, pod, args.objects, args.pods)
        server.stop()
        with timed(f"write {len(items)} objects ({args.store})"):
            if etcd is not None:
                asyncio.run(put_etcd(etcd.url, items))
            else:
                put_embedded(server.data_dir, items)
        with timed("start the server on them"):
            server.start(timeout=600)
        # a GET (resourceVersion "") reads the store; a LIST would start the watch cache of
        # ConfigMaps, which an idle server without clients does not have
        last = f"cm-{args.objects - 1:06d}" if args.objects else "owner-0"
        r = server.request("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps/{last}")
        if r.status != 200:
            raise RuntimeError(f"the server does not serve ConfigMap {last}: {r.status}")
        result = idle(server.process.pid, args.settle, args.seconds)
    finally:
        server.cleanup()
        if etcd is not None:
            etcd.stop()
            shutil.rmtree(etcd.data_dir, ignore_errors=True)
    report("idle cost", {"store": args.store, "objects": args.objects, "pods": args.pods,
                         "tree": args.tree or "this tree", **result},
           "idle kubeapi <= 2% of one core with ~8,000 objects",
           result["core_fraction"], result["core_fraction"] <= 0.02)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=("embedded", "etcd"), default="embedded")
    parser.add_argument("--objects", type=int, default=10000)
    parser.add_argument("--pods", type=int, default=100)
    parser.add_argument("--settle", type=float, default=20.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--tree", default="", help="run the server from this checkout")
    main(parser.parse_args())
