# -*- test-case-name: tests.controlplane.test_garbagecollector,tests.controlplane.test_podgc -*-
"""
The scheduling shared by kubetwist's sweeping controllers (the garbage collector and the pod
garbage collector): a C{twisted.application} service that runs one sweep at start, then one
every C{interval} seconds, and one at once when L{SweepService.trigger} is called (after the
running sweep, if any). Sweeps never overlap; a failed sweep is logged and the schedule goes on.
Stopping cancels the pending call and the running sweep.  The schedule is the one periodic
service of L{kubetwist.apimachinery.wait}, shared with the storage compactor.

Upstream's controllers are informer-driven work queues in kube-controller-manager; kubetwist's
are periodic and triggered sweeps over the registry stores (see each controller's module).
"""

from __future__ import annotations

from typing import Any

from kubetwist.apimachinery.wait import PeriodicService


class SweepService(PeriodicService):
    """
    Runs C{self.sweep()} (an C{async} method of the subclass) on C{clock}: at start, then
    every C{interval} seconds after the previous sweep ended, and at once on C{trigger}
    (the schedule of L{PeriodicService}).

    @ivar clock: C{IReactorTime} the sweeps are scheduled on.
    @ivar interval: seconds between periodic sweeps.
    """

    activity = "sweep"
    run_at_start = True

    async def sweep(self) -> Any:
        """One pass; the subclass's work."""
        raise AssertionError(f"{type(self).__name__} must define sweep()")

    async def run_once(self) -> Any:
        return await self.sweep()
