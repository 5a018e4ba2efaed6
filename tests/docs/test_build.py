"""
The documentation builds without a warning: the Sphinx user guide and reference pages
(C{docs/}) and pydoctor's API reference of the package, as C{tools/build_docs.py} builds them
(both treat warnings as errors).

This module lives in C{tests/docs/} so that trial reaches it early: the API reference is the
suite's longest single test, and C{trial -j} hands out tests in name order, so a long test
near the end of the order would keep one worker busy alone after the other has finished.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile

from twisted.trial.unittest import SkipTest, TestCase

from tests.support import repository_root


def _build(only: str) -> tuple[int, str, str]:
    if not all(importlib.util.find_spec(m) for m in ("sphinx", "myst_parser", "pydoctor")):
        if os.environ.get("CI"):
            raise AssertionError("CI must have the docs tools (the test extra installs them)")
        raise SkipTest("needs sphinx, myst-parser and pydoctor (the test extra)")
    out = tempfile.mkdtemp(prefix="kubetwist-docs-")
    root = repository_root()
    result = subprocess.run(
        [sys.executable, str(root / "tools" / "build_docs.py"), out, "--only", only],
        capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(root)}, cwd=str(root))
    return result.returncode, out, result.stdout + result.stderr


class DocsTests(TestCase):
    def test_user_guide(self) -> None:
        """The Sphinx build has no warning, and the flags page is generated from the
        code's Options (a flag added to C{tap.py} appears without editing the page)."""
        import shutil

        code, out, output = _build("sphinx")
        self.addCleanup(shutil.rmtree, out, True)
        self.assertEqual(code, 0, output)
        with open(os.path.join(out, "guide", "flags.html"), encoding="utf-8") as f:
            flags = f.read()
        from kubetwist.tap import Options

        for param in Options.optParameters:
            self.assertIn(f"--{param[0]}", flags)
        self.assertTrue(os.path.exists(os.path.join(out, "guide", "test-fixture.html")))

    def test_api_reference(self) -> None:
        """pydoctor documents the package without a warning (bad epytext, broken links)."""
        import shutil

        code, out, output = _build("api")
        self.addCleanup(shutil.rmtree, out, True)
        self.assertEqual(code, 0, output)
        self.assertTrue(os.path.exists(os.path.join(out, "api", "index.html")))
        self.assertTrue(os.path.exists(
            os.path.join(out, "api", "kubetwist.testing.html"))
            or os.path.exists(os.path.join(out, "api", "kubetwist.app.html")))
