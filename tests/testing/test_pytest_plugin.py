"""
pytest suites run by trial (the project's test command): the kubetwist pytest plugin's own
cases (C{tests/testing/pytest_cases}), the documented example (C{examples/pytest_fixture}) and
the kopf operator's tests (C{examples/kopf_operator/tests}), each in a pytest subprocess that
must pass.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata

from twisted.trial.unittest import SynchronousTestCase

from tests.support import repository_root

ROOT = repository_root()
PLUGIN = "kubetwist.testing.pytest_plugin"


def plugin_installed() -> bool:
    """Whether pytest loads the plugin by itself (kubetwist installed: the pytest11 entry
    point); else the run names it with C{-p}."""
    return any(ep.value == PLUGIN for ep in metadata.entry_points(group="pytest11"))


def run_pytest(directory: str, *args: str) -> tuple[int, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")]
                                                      if p])
    env.pop("KUBECONFIG", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    if not plugin_installed():
        command[3:3] = ["-p", PLUGIN]
    result = subprocess.run(command, cwd=str(ROOT / directory), env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, timeout=600)
    return result.returncode, result.stdout.decode("utf-8", "replace")


class PytestSuites(SynchronousTestCase):
    def check(self, directory: str, passed: int) -> None:
        code, output = run_pytest(directory)
        self.assertEqual(code, 0, output[-6000:])
        self.assertIn(f"{passed} passed", output)

    def test_plugin_cases(self) -> None:
        """The fixtures of the plugin: scopes, CRD markers, indirect parameters, client."""
        self.check("tests/testing/pytest_cases", 6)

    def test_documented_example(self) -> None:
        """docs/testing.md's ten-line example: a Deployment, created and watched."""
        self.check("examples/pytest_fixture", 1)

    def test_kopf_operator(self) -> None:
        """The kopf operator of examples/kopf_operator: ConfigMap, status, finalizer, timer."""
        self.check("examples/kopf_operator", 1)

    def test_failure_is_seen(self) -> None:
        """A failing pytest test fails the run (this runner cannot pass a broken suite)."""
        path = self.mktemp()
        os.makedirs(path)
        with open(os.path.join(path, "test_fails.py"), "w") as f:
            f.write("def test_fails(kubetwist_server):\n"
                    "    assert kubetwist_server.request('GET', '/readyz') == (500, 'no')\n")
        code, output = run_pytest(os.path.abspath(path))
        self.assertEqual(code, 1, output)
        self.assertIn("1 failed", output)
