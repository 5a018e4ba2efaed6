"""
Start-to-ready and teardown time of the L{kubetwist.testing} fixture server (thread mode),
median of N starts, for three variants:

  - C{memory}: the fixture's default (in-memory store used inline, lazy URL builders);
  - C{file}: the store in the temporary directory, on its own thread (C{in_memory=False});
  - C{eager-routes}: C{memory} with werkzeug's eager URL-builder compilation put back (what
    every assembled server paid before the lazy builders).

Each start is timed on the wall clock and on the process's CPU clock (all threads), which
the load of a shared machine inflates less.  Run from the repository root:

    python benchmarks/bench_fixture.py [--iterations 20] [--variants memory,file,eager-routes]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def measure(variant: str, iterations: int) -> dict:
    from klein import Klein

    from kubetwist.endpoints import installer
    from kubetwist.testing import KubeServer

    lazy = installer.new_route_app
    if variant == "eager-routes":
        installer.new_route_app = Klein
    try:
        starts, stops, cpus = [], [], []
        for _ in range(iterations):
            threads = threading.active_count()
            cpu, wall = time.process_time(), time.perf_counter()
            server = KubeServer(in_memory=(variant != "file")).start()
            starts.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            data_dir = server.data_dir
            wall = time.perf_counter()
            server.stop()
            stops.append(time.perf_counter() - wall)
            assert threading.active_count() == threads and not os.path.exists(data_dir)
    finally:
        installer.new_route_app = lazy
    return {"variant": variant, "iterations": iterations,
            "start_median_s": round(statistics.median(starts), 3),
            "start_cpu_median_s": round(statistics.median(cpus), 3),
            "start_min_s": round(min(starts), 3),
            "stop_median_s": round(statistics.median(stops), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--variants", default="memory,file,eager-routes")
    args = parser.parse_args()
    from kubetwist.testing import KubeServer

    KubeServer().start().stop()  # imports and first-use costs, not counted
    load = os.getloadavg()
    results = []
    for variant in args.variants.split(","):
        result = measure(variant, args.iterations)
        results.append(result)
        print(f"{variant:13s} start median {result['start_median_s']:.3f} s "
              f"(cpu {result['start_cpu_median_s']:.3f} s, min {result['start_min_s']:.3f} s)"
              f", teardown median {result['stop_median_s']:.3f} s", flush=True)
    print("RESULT " + json.dumps({"benchmark": "fixture", "cpus": os.cpu_count(),
                                  "loadavg_before": load, "loadavg_after": os.getloadavg(),
                                  "results": results}))


if __name__ == "__main__":
    main()
