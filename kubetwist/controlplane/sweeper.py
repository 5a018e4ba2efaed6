# -*- test-case-name: tests.controlplane.test_garbagecollector,tests.controlplane.test_podgc -*-
"""
The scheduling shared by kubetwist's sweeping controllers (the garbage collector and the pod
garbage collector): a C{twisted.application} service that runs one sweep at start, then one
every C{interval} seconds, and one at once when L{SweepService.trigger} is called (after the
running sweep, if any). Sweeps never overlap; a failed sweep is logged and the schedule goes on.
Stopping cancels the pending call and the running sweep.

Upstream's controllers are informer-driven work queues in kube-controller-manager; kubetwist's
are periodic and triggered sweeps over the registry stores (see each controller's module).
"""

from __future__ import annotations

from typing import Any

from twisted.application.service import Service
from twisted.internet.defer import CancelledError, Deferred
from twisted.logger import Logger
from twisted.python.failure import Failure

log = Logger()


class SweepService(Service):
    """
    Runs C{self.sweep()} (an C{async} method of the subclass) on C{clock}.

    @ivar clock: C{IReactorTime} the sweeps are scheduled on.
    @ivar interval: seconds between periodic sweeps.
    """

    def __init__(self, clock: Any, interval: float) -> None:
        self.clock = clock
        self.interval = interval
        self._call: Any = None
        self._round: Deferred | None = None
        self._again = False

    async def sweep(self) -> Any:
        """One pass; the subclass's work."""
        raise AssertionError(f"{type(self).__name__} must define sweep()")

    def startService(self) -> None:
        super().startService()
        self._schedule(0)

    def stopService(self) -> Any:
        super().stopService()
        call, self._call = self._call, None
        if call is not None and call.active():
            call.cancel()
        current, self._round = self._round, None
        if current is not None:
            current.cancel()
        return None

    def trigger(self, obj: Any = None) -> None:
        """Sweep at once (after the running sweep, if one is running); C{obj} is ignored, so
        this can be a Store hook."""
        if not self.running:
            return
        if self._round is not None:
            self._again = True
            return
        if self._call is not None and self._call.active():
            self._call.cancel()
        self._schedule(0)

    def _schedule(self, delay: float) -> None:
        self._call = self.clock.callLater(delay, self._tick)

    def _tick(self) -> None:
        self._call = None
        self._again = False
        d = self._round = Deferred.fromCoroutine(self.sweep())

        def done(result: Any) -> None:
            if self._round is d:
                self._round = None
            if isinstance(result, Failure) and not result.check(CancelledError):
                log.error("{name} sweep failed: {reason}", name=self.name,
                          reason=result.getErrorMessage())
            if self.running and self._call is None:
                self._schedule(0 if self._again else self.interval)

        d.addBoth(done)
