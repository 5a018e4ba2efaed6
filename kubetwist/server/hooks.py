# -*- test-case-name: tests.server.test_genericapiserver -*-
"""
PostStartHooks as services: upstream C{k8s.io/apiserver/pkg/server/hooks.go}.

A hook is a named C{IService}: C{startService} (synchronous, as Twisted wants) *starts* the hook's
coroutine and returns; the hook's end is reported through C{PostStartHookService.done}, which
the C{/readyz/poststarthook/<name>} check reads.  A failing hook is retried on the injected clock
(upstream treats a hook error as fatal; kubetwist keeps serving and reports not-ready instead).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Optional

from twisted.application.service import MultiService, Service
from twisted.internet.defer import Deferred, ensureDeferred
from twisted.logger import Logger

from kubetwist.server.healthz import HealthCheck

log = Logger()


class HookNotFinished(Exception):
    """The hook has not completed yet."""


class PostStartHookService(Service):
    """
    Runs C{hook()} once the server is serving.

    @param hook: C{async () -> None}.
    @param clock: C{IReactorTime}, for retries.
    @param retry_seconds: pause between failed attempts, in seconds.
    """

    def __init__(self, name: str, hook: Callable[[], Awaitable[None]], clock: Any,
                 retry_seconds: float = 1.0) -> None:
        self.setName(name)
        self.hook = hook
        self.clock = clock
        self.retry_seconds = retry_seconds
        self.finished = False
        self.last_error: Optional[str] = "not finished"
        self._call = None
        self._running: Optional[Deferred] = None

    def startService(self) -> None:
        super().startService()
        self._attempt()

    def _attempt(self) -> None:
        self._call = None
        if not self.running:
            return
        self._running = ensureDeferred(self.hook())
        self._running.addCallbacks(self._ok, self._failed)

    def _ok(self, _: Any) -> None:
        self.finished = True
        self.last_error = None
        self._running = None

    def _failed(self, failure: Any) -> None:
        self._running = None
        self.last_error = failure.getErrorMessage()
        if self.running:
            log.warn("post-start hook {name} failed, retrying: {err}", name=self.name,
                     err=self.last_error)
            self._call = self.clock.callLater(self.retry_seconds, self._attempt)

    def stopService(self) -> Any:
        super().stopService()
        if self._call is not None and self._call.active():
            self._call.cancel()
        if self._running is not None:
            self._running.cancel()
        return None

    def health_check(self) -> HealthCheck:
        """The C{poststarthook/<name>} check: fails until the hook has completed."""

        def check() -> None:
            if not self.finished:
                raise HookNotFinished(self.last_error or "not finished")

        return HealthCheck(f"poststarthook/{self.name}", check)


class PostStartHooks(MultiService):
    """The MultiService of a server's post-start hooks; children start after the listener."""

    def add_hook(self, name: str, hook: Callable[[], Awaitable[None]],
                 clock: Any) -> PostStartHookService:
        svc = PostStartHookService(name, hook, clock)
        svc.setServiceParent(self)
        return svc

    def checks(self) -> list[HealthCheck]:
        return [svc.health_check() for svc in self]  # type: ignore[attr-defined]
