"""
Run every benchmark one after the other (each in its own process, each with its own etcd and
kubeapi) and write their C{RESULT} records to one JSON file.

    python benchmarks/run_all.py [--out results.json] [--profile-dir DIR]

With C{--profile-dir}, each benchmark also py-spies the kubeapi process in an extra, uncounted
phase and prints the hottest functions.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = ["bench_create.py", "bench_get.py", "bench_list.py", "bench_watch.py", "bench_memory.py"]
PROFILED = {"bench_create.py", "bench_get.py", "bench_list.py", "bench_watch.py"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="benchmark-results.json")
    parser.add_argument("--profile-dir")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per script")
    args = parser.parse_args()
    results = []
    for script in SCRIPTS:
        command = [sys.executable, os.path.join(HERE, script)]
        if args.profile_dir and script in PROFILED:
            os.makedirs(args.profile_dir, exist_ok=True)
            command += ["--profile", os.path.join(args.profile_dir, script[:-3] + ".txt")]
        print("$", " ".join(command[1:]), flush=True)
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=args.timeout, check=False
            )
        except subprocess.TimeoutExpired:
            print(f"  {script} did not finish in {args.timeout}s", flush=True)
            results.append({"benchmark": script, "error": "timeout"})
            continue
        print(done.stdout, done.stderr, sep="", flush=True)
        records = [
            json.loads(line[len("RESULT ") :])
            for line in done.stdout.splitlines()
            if line.startswith("RESULT ")
        ]
        results += records or [{"benchmark": script, "error": f"exit {done.returncode}"}]
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2, sort_keys=True)
    for r in results:
        print(f"{r['benchmark']:32} ratio {r.get('ratio')!s:>8}  target met: {r.get('met')}")


if __name__ == "__main__":
    main()
