"""
Tests for L{kubetwist.apimachinery.wait.PeriodicService}, the one schedule of the storage
compactor (L{kubetwist.storage.compaction.CompactorService}) and the storage object counter.
"""

from __future__ import annotations

from twisted.internet.defer import Deferred
from twisted.internet.task import Clock
from twisted.logger import globalLogPublisher
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apimachinery.wait import PeriodicService
from kubetwist.storage.compaction import CompactorService


class Recorder(PeriodicService):
    """Records the time of each round; a round waits on C{self.gate} when one is set."""

    name = "recorder"
    activity = "recording"

    def __init__(self, clock: Clock, interval: float, at_start: bool = False) -> None:
        super().__init__(clock, interval)
        self.run_at_start = at_start
        self.rounds: list[float] = []
        self.gate: Deferred | None = None
        self.fail_next = False

    async def run_once(self) -> None:
        self.rounds.append(self.clock.seconds())
        if self.gate is not None:
            await self.gate
        if self.fail_next:
            self.fail_next = False
            raise RuntimeError("boom")


class PeriodicServiceTests(SynchronousTestCase):
    """The schedule: first round, sliding interval, triggers, failures, stop."""

    def setUp(self) -> None:
        self.clock = Clock()

    def test_shared_by_compactor(self):
        """The compactor is this one service (its first round one interval after start)."""
        self.assertTrue(issubclass(CompactorService, PeriodicService))
        self.assertFalse(CompactorService.run_at_start)

    def test_first_round_after_one_interval(self):
        """Without C{run_at_start} the first round is one interval after start."""
        service = Recorder(self.clock, 10)
        service.startService()
        self.clock.advance(9)
        self.assertEqual(service.rounds, [])
        self.clock.pump([1, 10, 10])
        self.assertEqual(service.rounds, [10, 20, 30])
        service.stopService()
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_first_round_at_start(self):
        """With C{run_at_start} the first round runs at once."""
        service = Recorder(self.clock, 10, at_start=True)
        service.startService()
        self.clock.advance(0)
        self.assertEqual(service.rounds, [0])
        self.clock.advance(10)
        self.assertEqual(service.rounds, [0, 10])
        service.stopService()

    def test_interval_slides_after_a_slow_round(self):
        """The next round starts one interval after the previous one ended."""
        service = Recorder(self.clock, 10)
        service.gate = Deferred()
        service.startService()
        self.clock.advance(10)
        self.clock.advance(7)
        gate, service.gate = service.gate, None
        gate.callback(None)
        self.clock.advance(9)
        self.assertEqual(service.rounds, [10])
        self.clock.advance(1)
        self.assertEqual(service.rounds, [10, 27])
        service.stopService()

    def test_trigger_runs_at_once_and_after_the_running_round(self):
        """A trigger runs a round now; during a round it runs one more right after it."""
        service = Recorder(self.clock, 100)
        service.startService()
        service.trigger()
        self.clock.advance(0)
        self.assertEqual(service.rounds, [0])
        service.gate = Deferred()
        service.trigger()
        self.clock.advance(5)
        self.assertEqual(service.rounds, [0, 5])
        service.trigger()
        service.trigger()
        gate, service.gate = service.gate, None
        gate.callback(None)
        self.clock.advance(0)
        self.assertEqual(service.rounds, [0, 5, 5])
        self.clock.advance(100)
        self.assertEqual(service.rounds, [0, 5, 5, 105])
        service.stopService()

    def test_trigger_when_stopped(self):
        """A stopped service ignores triggers."""
        service = Recorder(self.clock, 10)
        service.trigger()
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_failed_round_is_logged_and_schedule_goes_on(self):
        """A failing round is logged with the label and activity; the next one still runs."""
        logged: list = []
        globalLogPublisher.addObserver(logged.append)
        self.addCleanup(globalLogPublisher.removeObserver, logged.append)
        service = Recorder(self.clock, 10)
        service.fail_next = True
        service.startService()
        self.clock.pump([10, 10])
        self.assertEqual(service.rounds, [10, 20])
        self.assertEqual([(e["name"], e["activity"], e["reason"]) for e in logged
                          if e.get("activity") == "recording"],
                         [("recorder", "recording", "boom")])
        service.stopService()

    def test_disabled_interval(self):
        """An interval of 0 schedules no periodic round; a trigger still runs one."""
        service = Recorder(self.clock, 0)
        service.startService()
        self.assertEqual(self.clock.getDelayedCalls(), [])
        service.trigger()
        self.clock.advance(0)
        self.assertEqual(service.rounds, [0])
        self.assertEqual(self.clock.getDelayedCalls(), [])
        service.stopService()

    def test_stop_cancels_running_round(self):
        """Stopping cancels the running round and schedules nothing more."""
        service = Recorder(self.clock, 10)
        gate = service.gate = Deferred()
        service.startService()
        self.clock.advance(10)
        service.stopService()
        self.assertTrue(gate.called)  # cancelled: the round's await got CancelledError
        self.assertIsNone(service._round)
        self.assertEqual(self.clock.getDelayedCalls(), [])
