# -*- test-case-name: tests.test_hygiene -*-
"""
Repository hygiene: every C{test-case-name} line names a test module that exists, every
module of the package carries one, nothing stray sits in the repository root, and tests find
C{../shared} one way (L{tests.support.shared_dir}).
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from tests import support
from tests.support import repository_root, shared_dir

#: The Emacs-style line trial reads (C{trial --testmodule}), with its module list.
TEST_CASE_NAME = re.compile(r"^#\s*-\*-\s*test-case-name:\s*(?P<names>[\w.,\s]+?)\s*-\*-\s*$")

#: The directories whose Python files are checked.
SOURCE_DIRS = ("kubetwist", "tests", "twisted", "benchmarks")


def python_files(root: Path) -> list[Path]:
    """Every C{.py} file of L{SOURCE_DIRS} below C{root}, sorted."""
    files: list[Path] = []
    for top in SOURCE_DIRS:
        files.extend(p for p in (root / top).rglob("*.py") if "_trial_temp" not in p.parts)
    return sorted(files)


def test_case_names(path: Path) -> list[str] | None:
    """
    The modules named by C{path}'s C{test-case-name} line (trial reads it in the first lines
    only), or L{None} when there is none.
    """
    with open(path, encoding="utf-8") as f:
        head = [f.readline() for _ in range(3)]
    for line in head:
        match = TEST_CASE_NAME.match(line.strip())
        if match:
            return [n.strip() for n in match.group("names").split(",") if n.strip()]
    return None


def module_exists(root: Path, dotted: str) -> bool:
    """Whether C{dotted} is a module or package of the tree at C{root}."""
    base = root.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


class TestCaseNameTests(SynchronousTestCase):
    """The C{test-case-name} lines."""

    def test_every_line_resolves(self) -> None:
        """Every C{test-case-name} names modules that exist in this tree (and import)."""
        root = repository_root()
        missing = {}
        for path in python_files(root):
            for name in test_case_names(path) or []:
                if not module_exists(root, name):
                    missing[str(path.relative_to(root))] = name
        self.assertEqual(missing, {})

    def test_named_modules_import(self) -> None:
        """The named test modules are importable (trial can run them)."""
        root = repository_root()
        names = {n for p in python_files(root) for n in (test_case_names(p) or [])}
        self.assertTrue(names)
        unimportable = sorted(n for n in names if importlib.util.find_spec(n) is None)
        self.assertEqual(unimportable, [])

    def test_every_package_module_has_one(self) -> None:
        """Every non-empty module of C{kubetwist} starts with a C{test-case-name} line."""
        root = repository_root()
        without = [str(p.relative_to(root)) for p in sorted((root / "kubetwist").rglob("*.py"))
                   if p.stat().st_size and test_case_names(p) is None]
        self.assertEqual(without, [])

    def test_parser(self) -> None:
        """The parser reads trial's line, with one or several modules, and nothing else."""
        path = Path(self.mktemp())
        path.write_text("# -*- test-case-name: tests.a, tests.b -*-\n\"\"\"doc\"\"\"\n")
        self.assertEqual(test_case_names(path), ["tests.a", "tests.b"])
        path.write_text("\"\"\"test-case-name: tests.a\"\"\"\n")
        self.assertIsNone(test_case_names(path))
        self.assertTrue(module_exists(repository_root(), "tests.test_hygiene"))
        self.assertTrue(module_exists(repository_root(), "tests.registry"))
        self.assertFalse(module_exists(repository_root(), "tests.registry.test_nothing_here"))


class RootTests(SynchronousTestCase):
    """The repository root holds sources and metadata only."""

    def test_no_build_artefacts(self) -> None:
        """No wheel, sdist or egg is committed next to the sources."""
        root = repository_root()
        stray = sorted(p.name for p in root.iterdir()
                       if p.suffix in (".whl", ".egg") or p.name.endswith(".tar.gz"))
        self.assertEqual(stray, [])


class SharedDirTests(SynchronousTestCase):
    """L{shared_dir}: C{$KUBETWIST_SHARED}, else the repository's sibling C{shared}."""

    def setUp(self) -> None:
        old = os.environ.pop(support.SHARED_ENV, None)
        if old is not None:
            self.addCleanup(os.environ.__setitem__, support.SHARED_ENV, old)
        else:
            self.addCleanup(os.environ.pop, support.SHARED_ENV, None)

    def test_environment_wins(self) -> None:
        """C{$KUBETWIST_SHARED} names the directory; paths below it are joined."""
        base = Path(self.mktemp())
        (base / "golden").mkdir(parents=True)
        os.environ[support.SHARED_ENV] = str(base)
        self.assertEqual(shared_dir(), base)
        self.assertEqual(shared_dir("golden"), base / "golden")

    def test_missing_fails(self) -> None:
        """A path that does not exist is an AssertionError naming it and the variable."""
        os.environ[support.SHARED_ENV] = str(Path(self.mktemp()))
        with self.assertRaises(AssertionError) as caught:
            shared_dir("manifests")
        self.assertIn("manifests", str(caught.exception))
        self.assertIn(support.SHARED_ENV, str(caught.exception))

    def test_default_is_sibling(self) -> None:
        """Without the variable, C{shared} is the sibling of the repository root."""
        expected = repository_root().parent / "shared"
        if expected.exists():
            self.assertEqual(shared_dir(), expected)
        else:
            self.assertRaises(AssertionError, shared_dir)

    def test_tests_use_the_helper(self) -> None:
        """No test module builds its own path to C{shared/} (one way to find it)."""
        root = repository_root()
        pattern = re.compile(r"""["']shared["']\s*,\s*["'](golden|manifests|upstream)|"""
                             r"""/\s*["']shared["']|["']/work/|KUBETWIST_(SHARED_DIR|GOLDEN)""")
        offenders = sorted(
            str(p.relative_to(root)) for p in (root / "tests").rglob("*.py")
            if p.name not in ("support.py", "test_hygiene.py")
            and pattern.search(p.read_text(encoding="utf-8")))
        self.assertEqual(offenders, [])
