# -*- test-case-name: tests.testing.test_server -*-
"""
C{kubetwist.testing}: a complete kubetwist API server as a test fixture, the Python
counterpart of controller-runtime's C{envtest} (see C{docs/testing.md}).

  - L{KubeServer}: start and stop a server (in a background thread of the test process, in
    the caller's reactor, or as a C{twistd kubeapi} subprocess); a context manager.
  - L{KubeServerMixin}: a C{unittest}/trial C{TestCase} mixin, one server per test class.
  - the pytest plugin (C{kubetwist.testing.pytest_plugin}, registered through the C{pytest11}
    entry point): the C{kubetwist_server} fixture and its companions.
"""

from typing import Any

__all__ = ["KubeServer", "KubeServerMixin", "ServerStartError", "load_crds"]


def __getattr__(name: str) -> Any:
    # imported on first use: the pytest plugin loads this package in every pytest run, and
    # the server's modules take a second to import
    if name == "KubeServerMixin":
        from kubetwist.testing.mixin import KubeServerMixin

        return KubeServerMixin
    if name in ("KubeServer", "ServerStartError", "load_crds"):
        from kubetwist.testing import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
