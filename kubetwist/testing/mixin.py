# -*- test-case-name: tests.testing.test_server -*-
"""
L{KubeServerMixin}: a L{KubeServer} for C{unittest} and trial test cases.
"""

from __future__ import annotations

import atexit
from typing import Any, ClassVar, Sequence

from kubetwist.testing.server import KubeServer

__all__ = ["KubeServerMixin"]


class _Shared:
    """A server shared by the tests of one class, stopped after the last of them."""

    def __init__(self, remaining: int) -> None:
        self.remaining = remaining
        self.server: Any = None
        self.error: BaseException | None = None


class KubeServerMixin:
    """
    Put before C{unittest.TestCase} or trial's C{TestCase} in the bases; C{setUp} then gives
    each test C{self.kube}, a started L{KubeServer} (thread mode: call it from the test's
    thread), and C{self.api_client}, an official C{kubernetes} C{ApiClient} for the admin.

    By default the tests of a class share one server, started by the first test's C{setUp}
    and stopped after the last test of the class (or at interpreter exit, when only some of
    them ran); objects made by one test are seen by the next, so use distinct names or
    namespaces.  Set C{kubetwist_per_test = True} for a fresh server per test.

    Class attributes: C{kubetwist_crds} (CRD files or directories, installed before the
    first test), C{kubetwist_args} (more C{kubeapi} flags), C{kubetwist_mode}
    (C{"thread"} or C{"subprocess"}).

    @raise AssertionError: (from C{setUp}) the server did not start; every test of the class
        fails with the same message.
    """

    kubetwist_crds: ClassVar[Sequence[str]] = ()
    kubetwist_args: ClassVar[Sequence[str]] = ()
    kubetwist_mode: ClassVar[str] = "thread"
    kubetwist_per_test: ClassVar[bool] = False
    _kubetwist_shared: ClassVar[dict[type, _Shared]] = {}

    def _kubetwist_new(self) -> KubeServer:
        return KubeServer(self.kubetwist_crds, mode=self.kubetwist_mode,
                          args=self.kubetwist_args).start()

    def setUp(self) -> None:
        super().setUp()  # type: ignore[misc]
        if self.kubetwist_per_test:
            server = self._kubetwist_new()
            self.addCleanup(server.stop)  # type: ignore[attr-defined]
        else:
            server = self._kubetwist_class_server()
        self.kube = server
        self.api_client = server.api_client()

    def _kubetwist_class_server(self) -> KubeServer:
        cls = type(self)
        shared = KubeServerMixin._kubetwist_shared.get(cls)
        if shared is None:
            names = [n for n in dir(cls) if n.startswith("test") and callable(getattr(cls, n))]
            shared = KubeServerMixin._kubetwist_shared[cls] = _Shared(len(names))
            try:
                shared.server = self._kubetwist_new()
            except Exception as e:  # noqa: BLE001 - reported to every test of the class
                shared.error = e
            else:
                atexit.register(shared.server.stop)

        def release() -> None:
            shared.remaining -= 1
            if shared.remaining <= 0 and shared.server is not None:
                server, shared.server = shared.server, None
                atexit.unregister(server.stop)
                server.stop()
                KubeServerMixin._kubetwist_shared.pop(cls, None)

        self.addCleanup(release)  # type: ignore[attr-defined]
        if shared.error is not None:
            raise AssertionError(f"the kubetwist server of {cls.__name__} did not start: "
                                 f"{shared.error}")
        return shared.server
