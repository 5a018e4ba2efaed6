"""
Build kubetwist's documentation: the Sphinx user guide and reference pages (``docs/``), then
pydoctor's API reference of the ``kubetwist`` package into ``<out>/api/``; any warning of
either fails the build (exit status 1).

Usage: ``python tools/build_docs.py OUTPUT_DIR [--only sphinx|api]``
"""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sphinx(out: str) -> int:
    """The Sphinx HTML build of ``docs/`` into ``out``, warnings as errors."""
    return subprocess.call([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q",
                            "-b", "html", os.path.join(ROOT, "docs"), out])


def api(out: str) -> int:
    """pydoctor over ``kubetwist/`` into ``out/api``, warnings as errors."""
    from kubetwist import __version__

    return subprocess.call([
        sys.executable, "-m", "pydoctor", "--quiet", "--project-name=kubetwist",
        f"--project-version={__version__}", "--docformat=epytext",
        "--warnings-as-errors", f"--html-output={os.path.join(out, 'api')}",
        os.path.join(ROOT, "kubetwist")])


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    out = os.path.abspath(argv[0])
    only = argv[2] if len(argv) > 2 and argv[1] == "--only" else ""
    status = 0
    if only in ("", "sphinx"):
        status |= sphinx(out)
    if only in ("", "api"):
        status |= api(out)
    return 1 if status else 0


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main(sys.argv[1:]))
