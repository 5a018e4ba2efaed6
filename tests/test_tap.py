"""twistd kubeapi's command line: kube-apiserver's flag names, defaults and value checks."""

import io
import os
import sys

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.tap import KUBERNETES_VERSION, Options, parse_duration


class OptionsTests(SynchronousTestCase):
    def parse(self, *args):
        o = Options()
        o.parseOptions(list(args))
        return o

    def refused(self, *args) -> str:
        err = io.StringIO()
        self.patch(sys, "stderr", err)
        with self.assertRaises(SystemExit) as caught:
            self.parse(*args)
        self.assertEqual(caught.exception.code, 1)
        lines = err.getvalue().splitlines()
        self.assertEqual(len(lines), 1, lines)
        return lines[0]

    def test_defaults(self):
        """Defaults are kube-apiserver's, plus kubetwist's data dir and kubeconfig."""
        o = self.parse()
        self.assertEqual(o["secure-port"], 6443)
        self.assertEqual(o["etcd-prefix"], "/registry")
        self.assertEqual(o["etcd-servers"], [])
        self.assertEqual(o["service-node-port-range"], (30000, 32767))
        self.assertEqual(o["request-timeout"], 60.0)
        self.assertEqual(o["authorization-mode"], ["Node", "RBAC"])
        self.assertTrue(o["write-kubeconfig"].endswith("kubetwist-data/admin.kubeconfig"))

    def test_bad_values_are_one_line_errors(self):
        """A bad value prints one line and exits 1."""
        self.assertEqual(self.refused("--secure-port=abc"),
                         'Error: invalid value "abc" for --secure-port: must be an integer')
        self.assertIn("--service-cluster-ip-range", self.refused("--service-cluster-ip-range=x"))
        self.assertIn("Bogus", self.refused("--authorization-mode=Bogus"))
        self.assertIn("not a valid port range", self.refused("--service-node-port-range=9-1"))
        self.assertIn("etcd-servers", self.refused("--etcd-servers=localhost:2379"))
        self.assertIn("duration", self.refused("--request-timeout=soon"))

    def test_workers(self):
        """--workers: one per usable core on etcd, 1 on the embedded store (single writer, so
        more is refused); several workers share the port (reuse-port); the hidden
        --worker-index stays below --workers; the kubeapi arguments are kept for the
        workers."""
        etcd = "--etcd-servers=http://127.0.0.1:2379"
        o = self.parse(etcd)
        self.assertEqual((o["workers"], o["worker-index"]),
                         (len(os.sched_getaffinity(0)), 0))
        self.assertEqual(o["argv"], [etcd])
        self.assertEqual(self.parse()["workers"], 1)
        self.assertIs(self.parse()["reuse-port"], False)
        o = self.parse(etcd, "--workers=3", "--worker-index=2")
        self.assertEqual((o["workers"], o["worker-index"], o["reuse-port"]), (3, 2, True))
        self.assertIs(self.parse(etcd, "--workers=1")["reuse-port"], False)
        self.assertEqual(self.parse("--workers=1")["workers"], 1)
        self.assertEqual(self.refused("--workers=2"),
                         "Error: --workers=2 needs --etcd-servers: the embedded store in "
                         "--data-dir has a single writer (one process holds its lock); use "
                         "--workers=1 or etcd")
        self.assertEqual(self.refused(etcd, "--workers=0"),
                         "Error: --workers=0 must be at least 1")
        self.assertEqual(self.refused(etcd, "--workers=many"),
                         'Error: invalid value "many" for --workers: must be an integer')
        self.assertEqual(self.refused(etcd, "--workers=2", "--worker-index=2"),
                         "Error: --worker-index=2 must be below --workers=2")
        self.assertIn("--workers=", Options().getUsage())
        self.assertNotIn("worker-index", Options().getUsage())

    def test_enable_priority_and_fairness(self):
        """--enable-priority-and-fairness: true by default, Go's boolean spellings, and the
        two in-flight limits must leave it some seats (upstream BuildPriorityAndFairness)."""
        self.assertIs(self.parse()["enable-priority-and-fairness"], True)
        self.assertIs(self.parse("--enable-priority-and-fairness=false")[
            "enable-priority-and-fairness"], False)
        self.assertIs(self.parse("--enable-priority-and-fairness=T")[
            "enable-priority-and-fairness"], True)
        self.assertEqual(self.refused("--enable-priority-and-fairness=maybe"),
                         'Error: invalid argument "maybe" for "--enable-priority-and-fairness" '
                         'flag: strconv.ParseBool: parsing "maybe": invalid syntax')
        self.assertEqual(self.refused("--max-requests-inflight=0",
                                      "--max-mutating-requests-inflight=0"),
                         "Error: invalid configuration: MaxRequestsInFlight=0 and "
                         "MaxMutatingRequestsInFlight=0; they must add up to something positive")
        o = self.parse("--max-requests-inflight=0", "--max-mutating-requests-inflight=0",
                       "--enable-priority-and-fairness=false")
        self.assertEqual(o["max-requests-inflight"], 0)

    def test_aggregator_flags(self):
        """--enable-aggregator-routing is true by default here (upstream: false); the proxy
        client certificate and key come together."""
        self.assertIs(self.parse()["enable-aggregator-routing"], True)
        self.assertIs(self.parse("--enable-aggregator-routing=false")[
            "enable-aggregator-routing"], False)
        self.assertEqual(self.refused("--enable-aggregator-routing=maybe"),
                         'Error: invalid argument "maybe" for "--enable-aggregator-routing" '
                         'flag: strconv.ParseBool: parsing "maybe": invalid syntax')
        self.assertEqual(self.refused("--proxy-client-cert-file=/x.crt"),
                         "Error: --proxy-client-cert-file and --proxy-client-key-file must be "
                         "given together")

    def test_embedded_sync(self):
        """--embedded-sync is normal (SQLite's synchronous=NORMAL, as before) unless full."""
        self.assertEqual(self.parse()["embedded-sync"], "normal")
        self.assertEqual(self.parse("--embedded-sync=full")["embedded-sync"], "full")
        self.assertEqual(self.refused("--embedded-sync=off"),
                         'Error: invalid --embedded-sync "off": want normal or full')

    def test_durations(self):
        """Go durations parse into seconds."""
        self.assertEqual(parse_duration("1m0s"), 60.0)
        self.assertEqual(parse_duration("1h2m3s"), 3723.0)
        self.assertEqual(parse_duration("500ms"), 0.5)
        self.assertEqual(parse_duration("0"), 0.0)

    def test_help_groups(self):
        """--help groups flags as kube-apiserver does."""
        text = Options().getUsage()
        for title in ("Etcd flags:", "Secure serving flags:", "Authentication flags:",
                      "Authorization flags:", "Generic flags:", "kubetwist flags:"):
            self.assertIn(title, text)
        self.assertLess(text.index("--etcd-servers"), text.index("--secure-port"))



class VersionAndEntryPointTests(SynchronousTestCase):
    """C{--version} and C{python -m kubetwist}."""

    def test_version(self) -> None:
        """C{twistd kubeapi --version} names kubetwist's release and the API level, not
        Twisted's version."""
        from contextlib import redirect_stdout

        from kubetwist import __version__

        out = io.StringIO()
        with redirect_stdout(out):
            self.assertRaises(SystemExit, Options().parseOptions, ["--version"])
        self.assertEqual(out.getvalue(),
                         f"kubetwist {__version__} (Kubernetes {KUBERNETES_VERSION} API level)\n")

    def test_python_m(self) -> None:
        """C{python -m kubetwist} runs twistd's kubeapi plugin in the foreground."""
        import subprocess

        from kubetwist.__main__ import twistd_argv
        from tests.support import repository_root

        self.assertEqual(twistd_argv(["--secure-port", "1"]),
                         ["twistd", "--nodaemon", "--pidfile=", "kubeapi", "--secure-port", "1"])
        env = dict(os.environ, PYTHONPATH=str(repository_root()))
        result = subprocess.run([sys.executable, "-m", "kubetwist", "--version"], env=env,
                                capture_output=True, text=True, timeout=60,
                                stdin=subprocess.DEVNULL)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"(Kubernetes {KUBERNETES_VERSION} API level)", result.stdout)
