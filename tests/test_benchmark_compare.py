"""
Tests for the pure parts of C{benchmarks/compare_upstream.py} (the side-by-side runner is run
by hand, never here): its arguments, the ratios (upstream the denominator) and the table.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "compare_upstream.py"


def load():
    spec = importlib.util.spec_from_file_location("compare_upstream", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


class CompareUpstreamTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.m = load()

    def test_defaults(self):
        """The issue's load: 32 concurrent, 1,000 objects listed 4 at a time, 200 × 100."""
        args = self.m.parse_args([])
        self.assertEqual((args.concurrency, args.objects, args.list_concurrency, args.watchers,
                          args.updates, args.embedded, args.profile_dir),
                         (32, 1000, 4, 200, 100, False, None))

    def test_options(self):
        args = self.m.parse_args(["--duration", "2.5", "--embedded", "--profile-dir", "/p",
                                  "--watchers", "10"])
        self.assertEqual((args.duration, args.embedded, args.profile_dir, args.watchers),
                         (2.5, True, "/p", 10))

    def test_non_positive_refused(self):
        self.assertRaises(SystemExit, self.m.parse_args, ["--objects", "0"])
        self.assertRaises(SystemExit, self.m.parse_args, ["--bogus"])

    def test_ratio(self):
        """Rates: kubetwist / upstream; durations and memory: upstream / kubetwist."""
        self.assertAlmostEqual(self.m.ratio(True, 652, 2069), 0.315, places=3)
        self.assertAlmostEqual(self.m.ratio(False, 3.04, 1.62), 0.533, places=3)
        self.assertAlmostEqual(self.m.ratio(False, 141, 474), 3.36, places=2)
        self.assertIsNone(self.m.ratio(True, 1.0, None))
        self.assertIsNone(self.m.ratio(True, 1.0, 0.0))
        self.assertIsNone(self.m.ratio(False, 0.0, 1.0))

    def test_format_value(self):
        self.assertEqual([self.m.format_value(v, u) for v, u in [
            (2069.4, "/s"), (32.71, "/s"), (1.624, "s"), (474.2, "MB"), (None, "/s")]],
            ["2,069/s", "32.7/s", "1.62 s", "474 MB", ""])

    def test_table(self):
        """The issue's table: one row per metric, ratios per kubetwist column, "better"
        wording for memory and start-up."""
        results = self.m.Results(
            upstream={"create": 2069, "get": 3296, "watch": 1.62, "rss": 474, "ready": 4.0},
            etcd={"create": 652, "get": 831, "watch": 3.04, "rss": 141},
            embedded={"create": 827, "ready": 0.76})
        text = self.m.table(results, self.m.parse_args([]))
        lines = text.splitlines()
        self.assertEqual(lines[0], "| metric | kube-apiserver | kubetwist on etcd | ratio | "
                                   "kubetwist embedded | ratio |")
        self.assertEqual(len(lines), 2 + len(self.m.METRICS))
        self.assertIn("| CREATE ConfigMap, 32 concurrent | 2,069/s | 652/s | 0.32× | 827/s | "
                      "0.40× |", lines)
        self.assertIn("| watch fan-out 200 × 100, seconds (lower is better) | 1.62 s | 3.04 s | "
                      "0.53× |  |  |", lines)
        self.assertIn("| RSS after the run | 474 MB | 141 MB | 3.4× better |  |  |", lines)
        self.assertIn("| start to ready | 4.00 s |  |  | 0.76 s | 5.3× better |", lines)
        self.assertIn("| LIST 1,000, `resourceVersion=0`, 4 concurrent |  |  |  |  |  |", lines)

    def test_table_without_embedded(self):
        results = self.m.Results(upstream={"get": 100.0}, etcd={"get": 50.0})
        lines = self.m.table(results, self.m.parse_args([])).splitlines()
        self.assertEqual(lines[1], "| --- | --- | --- | --- |")
        self.assertIn("| GET one ConfigMap, 32 concurrent | 100/s | 50/s | 0.50× |", lines)


class ParseWrkTests(SynchronousTestCase):
    REPORT = """Running 10s test @ https://127.0.0.1:1/api/v1/namespaces
  2 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    10.00ms    1.00ms  20.00ms   90.00%
  1000 requests in 10.00s, 1.00MB read
Requests/sec:    100.50
Transfer/sec:    102.40KB
"""

    def test_rate(self) -> None:
        """The C{Requests/sec} figure."""
        self.assertEqual(load().parse_wrk(self.REPORT), 100.5)

    def test_failures_refused(self) -> None:
        """Non-2xx answers or socket errors make the run fail, not a rate."""
        module = load()
        for extra in ("  Non-2xx or 3xx responses: 3\n",
                      "  Socket errors: connect 0, read 1, write 0, timeout 0\n"):
            with self.assertRaises(RuntimeError):
                module.parse_wrk(self.REPORT + extra)
        with self.assertRaises(RuntimeError):
            module.parse_wrk("nothing")
