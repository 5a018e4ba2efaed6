"""
etcd's native gRPC from Python, for comparison with the gateway client of
C{bench_etcd_client.py}: C{Range} of one key through C{grpcio}, with the C{etcdserverpb}
stubs that the C{aetcd} package ships (etcd publishes no maintained Python stubs on PyPI).

Needs an interpreter with C{grpcio} and C{aetcd} (not kubetwist's dependencies; e.g. a
separate virtualenv: C{pip install grpcio aetcd}) and a running etcd:

    python benchmarks/bench_etcd_grpc.py --endpoint 127.0.0.1:41010 [--duration 3]

Concurrency 1: blocking calls from one thread.  Concurrency 16: 16 calls kept in flight
with C{stub.Range.future} from one thread (no threads of ours; grpcio's own run its
completion queue).  Prints calls/s and this process's CPU per call (C{time.process_time()},
every thread) and one C{RESULT {json}} line.  Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import grpc
from aetcd.rpc import rpc_pb2, rpc_pb2_grpc

KEY = b"/registry/configmaps/bench/one"


#: etcd's process id (C{--etcd-pid}), for its CPU per call; 0: not measured
ETCD_PID = 0


def etcd_cpu() -> float:
    """etcd's user + system CPU seconds so far (0 without C{--etcd-pid})."""
    if not ETCD_PID:
        return 0.0
    with open(f"/proc/{ETCD_PID}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def blocking(stub, duration: float) -> dict:
    request = rpc_pb2.RangeRequest(key=KEY)
    calls = 0
    etcd0 = etcd_cpu()
    cpu0, wall0 = time.process_time(), time.monotonic()
    stop_at = wall0 + duration
    while time.monotonic() < stop_at:
        stub.Range(request, timeout=5)
        calls += 1
    return result(calls, cpu0, wall0, etcd0)


def pipelined(stub, duration: float, concurrency: int) -> dict:
    request = rpc_pb2.RangeRequest(key=KEY)
    calls = 0
    etcd0 = etcd_cpu()
    cpu0, wall0 = time.process_time(), time.monotonic()
    stop_at = wall0 + duration
    inflight = [stub.Range.future(request, timeout=5) for _ in range(concurrency)]
    while inflight:
        future = inflight.pop(0)
        future.result()
        calls += 1
        if time.monotonic() < stop_at:
            inflight.append(stub.Range.future(request, timeout=5))
    return result(calls, cpu0, wall0, etcd0)


def result(calls: int, cpu0: float, wall0: float, etcd0: float) -> dict:
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    return {"calls": calls, "per_s": calls / wall, "cpu_us_per_call": 1e6 * cpu / calls,
            "etcd_cpu_us_per_call": 1e6 * (etcd_cpu() - etcd0) / calls}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", default="127.0.0.1:41010")
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--etcd-pid", type=int, default=0)
    args = parser.parse_args()
    global ETCD_PID
    ETCD_PID = args.etcd_pid
    channel = grpc.insecure_channel(args.endpoint)
    stub = rpc_pb2_grpc.KVStub(channel)
    if not stub.Range(rpc_pb2.RangeRequest(key=KEY), timeout=5).kvs:
        stub.Put(rpc_pb2.PutRequest(key=KEY, value=b"x" * 1100), timeout=5)
    best: dict[str, dict] = {}
    for _ in range(args.rounds):
        for label, run in (("grpc/c1", lambda d: blocking(stub, d)),
                           ("grpc/c16", lambda d: pipelined(stub, d, 16))):
            run(0.3)
            out = run(args.duration)
            print(f"{label:10s} {out['per_s']:8.0f} calls/s {out['cpu_us_per_call']:7.1f} "
                  f"us CPU/call (etcd {out['etcd_cpu_us_per_call']:.1f} us)", flush=True)
            if label not in best or out["per_s"] > best[label]["per_s"]:
                best[label] = out
    channel.close()
    print("RESULT " + json.dumps(best), flush=True)


if __name__ == "__main__":
    main()
