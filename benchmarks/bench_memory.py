"""
Resident memory of 50,000 small ConfigMaps held in the watch cache: the growth of the
C{twistd kubeapi} process's RSS (C{VmRSS}) between an idle, warmed-up server and the same server
once its cache holds the objects, against the serialized size of those objects (the sum of the
values kubetwist stores in etcd, i.e. each object's JSON).  Target: RSS growth <= 2x.

The objects are written straight into etcd through the gateway (in kubetwist's stored form,
copied from one ConfigMap created through the API) so that loading takes seconds; the server
learns of them through its etcd watch (the Cacher's reflector) and a C{resourceVersion=0} LIST
that waits until the cache has them all.

In the same run, as a reference for what any cache of decoded objects costs, this process
measures (with C{tracemalloc}) the Python heap taken by the same 50,000 objects decoded with
C{orjson.loads}, and by the 50,000 stored byte strings.

    python benchmarks/bench_memory.py [--objects 50000]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import gc
import itertools
import json
import time
import tracemalloc
import uuid

import aiohttp
import orjson
from common import NAMESPACE, Cluster, report, rss_bytes, timed


def object_value(template: dict, n: int) -> tuple[str, bytes]:
    obj = json.loads(json.dumps(template))
    obj["metadata"]["name"] = f"cm-{n:05d}"
    obj["metadata"]["uid"] = str(uuid.uuid4())
    obj["data"] = {"key": f"value-{n}", "other": "x" * 32}
    return f"/registry/configmaps/{NAMESPACE}/cm-{n:05d}", orjson.dumps(obj)


async def load_etcd(cluster: Cluster, template: dict, count: int, concurrency: int = 32) -> int:
    """Put C{count} objects into etcd; returns the total size of the stored values."""
    url = f"{cluster.etcd.url}/v3/kv/put"
    names = itertools.count()
    total = [0]
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as s:

        async def worker() -> None:
            while (n := next(names)) < count:
                key, value = object_value(template, n)
                total[0] += len(value)
                body = json.dumps(
                    {
                        "key": base64.b64encode(key.encode()).decode(),
                        "value": base64.b64encode(value).decode(),
                    }
                )
                async with s.post(url, data=body) as r:
                    await r.read()
                    if r.status != 200:
                        raise RuntimeError(f"etcd put answered {r.status}")

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return total[0]


def list_count(cluster: Cluster, resource_version: str = "0") -> tuple[int, int]:
    """(ConfigMaps named cm-* in the LIST, response bytes)."""
    response = cluster.server.request(
        "GET",
        f"/api/v1/namespaces/{NAMESPACE}/configmaps?resourceVersion={resource_version}",
        timeout=120,
    )
    if response.status != 200:
        raise RuntimeError(f"LIST answered {response.status}: {response.body[:300]!r}")
    items = orjson.loads(response.body)["items"]
    return sum(1 for i in items if i["metadata"]["name"].startswith("cm-")), len(response.body)


def settled_rss(pid: int, seconds: float = 3.0) -> int:
    """The RSS of C{pid} once it has stopped changing by more than 1 MiB for a second."""
    deadline = time.monotonic() + seconds * 5
    last = rss_bytes(pid)
    stable_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = rss_bytes(pid)
        if abs(now - last) > 1 << 20:
            stable_since = time.monotonic()
        last = now
        if time.monotonic() - stable_since >= 1.0:
            break
    return last


def heap_of(build) -> int:
    """Bytes of Python heap kept alive by C{build()}'s result (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = build()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    return after - before


async def main(args: argparse.Namespace) -> None:
    with Cluster() as cluster:
        cluster.create_namespace()
        server = cluster.server
        pid = server.process.pid
        created = server.request(
            "POST",
            f"/api/v1/namespaces/{NAMESPACE}/configmaps",
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "template", "labels": {"app": "bench"}},
                    "data": {"key": "value"},
                }
            ).encode(),
        )
        assert created.status == 201, created.body
        raw = cluster.etcd_get_raw(f"/registry/configmaps/{NAMESPACE}/template")
        assert raw is not None
        template = orjson.loads(raw)
        for _ in range(3):  # warm every code path the measurement will take
            list_count(cluster)
            list_count(cluster, "")
        rss_before = settled_rss(pid)
        with timed(f"put {args.objects} configmaps into etcd"):
            stored_bytes = await load_etcd(cluster, template, args.objects)
        with timed("wait until a resourceVersion=0 LIST has them all"):
            deadline = time.monotonic() + 120
            while True:
                seen, response_bytes = await asyncio.to_thread(list_count, cluster)
                if seen == args.objects or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.5)
        if seen != args.objects:
            raise RuntimeError(f"the LIST shows {seen} of {args.objects} objects")
        rss_after = settled_rss(pid)
        growth = rss_after - rss_before

        values = [object_value(template, n)[1] for n in range(args.objects)]
        dicts_heap = heap_of(lambda: [orjson.loads(v) for v in values])
        bytes_heap = heap_of(lambda: [bytes(bytearray(v)) for v in values])  # fresh copies
        ratio = round(growth / stored_bytes, 2)
        report(
            "cache memory",
            {
                "objects": args.objects,
                "stored_bytes": stored_bytes,
                "stored_bytes_per_object": round(stored_bytes / args.objects, 1),
                "list_response_bytes": response_bytes,
                "rss_before_mib": round(rss_before / 2**20, 1),
                "rss_after_mib": round(rss_after / 2**20, 1),
                "rss_growth_mib": round(growth / 2**20, 1),
                "in_process_reference": {
                    "decoded_dicts_heap_mib": round(dicts_heap / 2**20, 1),
                    "decoded_dicts_x_stored": round(dicts_heap / stored_bytes, 2),
                    "bytes_objects_heap_mib": round(bytes_heap / 2**20, 1),
                    "bytes_objects_x_stored": round(bytes_heap / stored_bytes, 2),
                },
            },
            "kubeapi RSS growth / stored bytes <= 2",
            ratio,
            ratio <= 2.0,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=50000)
    asyncio.run(main(parser.parse_args()))
