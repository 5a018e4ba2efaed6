# -*- test-case-name: tests.test_lint -*-
"""
Lint: C{ruff check} (the rule set of C{pyproject.toml}: pyflakes, pycodestyle errors and
warnings, bugbear, isort) passes over the whole repository, so CI (which runs this suite)
runs it too.
"""

from __future__ import annotations

import os
import subprocess
import sys

from twisted.trial.unittest import SynchronousTestCase

from tests.support import repository_root


def _ruff() -> str:
    """The C{ruff} installed next to the interpreter running the tests (the test extra)."""
    path = os.path.join(os.path.dirname(sys.executable), "ruff")
    if not os.access(path, os.X_OK):
        raise AssertionError(f"ruff is not installed next to {sys.executable}; "
                             "install the test extra: pip install '.[test]'")
    return path


class RuffTests(SynchronousTestCase):
    """The repository passes its own lint configuration."""

    def test_ruff_check(self) -> None:
        """C{ruff check} finds nothing (its findings are the failure message)."""
        result = subprocess.run([_ruff(), "check", "--output-format", "concise", "."],
                                cwd=repository_root(), capture_output=True, text=True,
                                timeout=300)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
