# -*- test-case-name: tests.test_tap -*-
"""
C{python -m kubetwist [flags]}: the API server in the foreground, the same as
C{twistd --nodaemon --pidfile= kubeapi [flags]} (the flags are kube-apiserver's; see
C{python -m kubetwist --help}).
"""

from __future__ import annotations

import sys
from typing import Optional, Sequence


def twistd_argv(args: Sequence[str]) -> list[str]:
    """The C{twistd} command line that runs C{args} (kube-apiserver flags) in the
    foreground, without a pid file (a supervisor such as systemd tracks the process)."""
    return ["twistd", "--nodaemon", "--pidfile=", "kubeapi", *args]


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Run twistd's C{kubeapi} plugin with C{argv} (default: this process's arguments)."""
    from twisted.scripts.twistd import run

    sys.argv = twistd_argv(sys.argv[1:] if argv is None else argv)
    run()


if __name__ == "__main__":
    main()
