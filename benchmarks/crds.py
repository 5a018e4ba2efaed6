"""
CRD installation cost, by hand (not a test): for each CRD of C{shared/manifests/crds/}, the
time from C{kubectl apply --server-side} to C{Established}, and the server's resident memory
(VmRSS) growth, on a fresh C{twistd -n kubeapi} over the embedded store.

    python benchmarks/crds.py

Prints one line per CRD and the totals; results go in docs/performance.md.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.integration.harness import KubeAPIProcess, shared_dir


def rss_kib(pid: int) -> int:
    """The process's resident set size, in KiB (Linux C{/proc/<pid>/status})."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def established(server: KubeAPIProcess, name: str) -> bool:
    response = server.request(
        "GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    if response.status != 200:
        return False
    for cond in (json.loads(response.body).get("status") or {}).get("conditions") or []:
        if cond["type"] == "Established" and cond["status"] == "True":
            return True
    return False


def main() -> None:
    files = sorted((shared_dir() / "manifests" / "crds").glob("*.yaml"))
    server = KubeAPIProcess()
    server.start()
    try:
        pid = server.process.pid
        time.sleep(1)
        base = rss_kib(pid)
        print(f"baseline RSS {base / 1024:.1f} MiB")
        total = 0.0
        for path in files:
            group, rest = path.name.split("_", 1)
            name = f"{rest[:-len('.yaml')]}.{group}"
            before = rss_kib(pid)
            start = time.monotonic()
            server.kubectl("apply", "--server-side", "-f", str(path))
            while not established(server, name):
                if time.monotonic() - start > 60:
                    raise SystemExit(f"{name} not Established in 60 s")
                time.sleep(0.01)
            elapsed = time.monotonic() - start
            # the OpenAPI document is built on first read: include it, as kubectl explain does
            server.kubectl("explain", name.split(".")[0] + ".spec")
            after = rss_kib(pid)
            total += elapsed
            size = os.path.getsize(path)
            print(f"{name:45} {size / 1024:7.0f} KiB  established {elapsed * 1000:6.0f} ms  "
                  f"RSS +{(after - before) / 1024:5.1f} MiB")
        print(f"total {total:.2f} s; RSS {base / 1024:.1f} -> {rss_kib(pid) / 1024:.1f} MiB")
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
