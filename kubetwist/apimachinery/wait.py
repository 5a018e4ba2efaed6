# -*- test-case-name: tests.apimachinery.test_wait -*-
"""
Periodic work as a C{twisted.application} service: upstream C{k8s.io/apimachinery/pkg/util/wait}
(C{Until}, C{NonSlidingUntil}'s sliding sibling), the loop under the storage compactor
(C{storagebackend/factory/etcd3.go}) and under the storage object counter.

One L{PeriodicService} runs one round (C{run_once}, a coroutine) at a time: the first at start
or one interval after it, each next one C{interval} seconds after the previous ended (sliding, as
C{wait.Until}), and one at once when L{PeriodicService.trigger} is called (after the running
round, if any).  A failed round is logged and the schedule goes on.  Stopping cancels the
pending call and the running round.
"""

from __future__ import annotations

from typing import Any, Optional

from twisted.application.service import Service
from twisted.internet.defer import CancelledError, Deferred
from twisted.logger import Logger
from twisted.python.failure import Failure

_log = Logger()


class PeriodicService(Service):
    """
    The schedule of a periodic task; subclasses define L{run_once}.

    @cvar activity: what one round does, for the log of a failed round (C{sweep},
        C{compaction}): C{<label>: <activity> failed: <reason>}.
    @cvar run_at_start: the first round runs at L{startService} (C{True}) or one C{interval}
        later (C{False}, upstream C{wait.Until} after a first C{time.After}).
    @ivar clock: C{IReactorTime} the rounds are scheduled on.
    @ivar interval: seconds between the end of a round and the start of the next; 0 or less
        disables the periodic rounds (L{trigger} still runs one).
    """

    activity = "round"
    run_at_start = False

    def __init__(self, clock: Any, interval: float) -> None:
        self.clock = clock
        self.interval = interval
        self._call: Any = None
        self._round: Optional[Deferred] = None
        self._again = False

    async def run_once(self) -> Any:
        """One round: the subclass's work (a coroutine)."""
        raise NotImplementedError(f"{type(self).__name__} must define run_once()")

    def label(self) -> str:
        """The name of this task in logs (the service's C{name} by default)."""
        return self.name or type(self).__name__

    # --- IService -----------------------------------------------------------------------------
    def startService(self) -> None:
        super().startService()
        if self.run_at_start:
            self._schedule(0)
        elif self.interval > 0:
            self._schedule(self.interval)

    def stopService(self) -> Any:
        super().stopService()
        call, self._call = self._call, None
        if call is not None and call.active():
            call.cancel()
        current, self._round = self._round, None
        if current is not None:
            current.cancel()
        return None

    # --- scheduling ---------------------------------------------------------------------------
    def trigger(self, obj: Any = None) -> None:
        """
        Run a round at once, or right after the running one; C{obj} is ignored, so this can
        be a registry Store hook.  Nothing happens while the service is stopped.
        """
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
        d = self._round = Deferred.fromCoroutine(self.run_once())

        def done(result: Any) -> None:
            if self._round is d:
                self._round = None
            if isinstance(result, Failure) and not result.check(CancelledError):
                _log.error("{name}: {activity} failed: {reason}", name=self.label(),
                           activity=self.activity, reason=result.getErrorMessage())
            if self.running and self._call is None:
                if self._again:
                    self._schedule(0)
                elif self.interval > 0:
                    self._schedule(self.interval)

        d.addBoth(done)
