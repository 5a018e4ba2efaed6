"""Seat borrowing: the seat-demand integrator, upstream's concurrency allocation, and a busy
level borrowing an idle level's seats."""

from __future__ import annotations

import math

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.flowcontrol.controller import new_config_controller
from kubetwist.authentication.user import UserInfo
from kubetwist.endpoints.requestinfo import parse_request_info
from kubetwist.flowcontrol.borrowing import (
    AllocationItem,
    Integrator,
    SeatDemandStats,
    compute_concurrency_allocation,
)
from tests.flowcontrol.test_controller import level, schema


class IntegratorTests(SynchronousTestCase):
    def test_moments(self) -> None:
        """Time-weighted average, standard deviation and extremes; a reset starts a new
        interval at the current value."""
        clock = Clock()
        igr = Integrator(clock)
        clock.advance(1)
        igr.set(2)
        clock.advance(1)
        r = igr.reset()
        self.assertEqual((r.duration, r.average, r.deviation, r.min, r.max), (2, 1, 1, 0, 2))
        r = igr.reset()
        self.assertEqual(r.duration, 0)
        self.assertTrue(math.isnan(r.average))
        self.assertEqual((r.min, r.max), (2, 2))

    def test_smoothing(self) -> None:
        """Demand stats: high watermark rounded, the envelope avg + deviation smoothed with a
        5-minute half-life, never below the latest envelope."""
        stats = SeatDemandStats()
        clock = Clock()
        igr = Integrator(clock)
        igr.set(10)
        clock.advance(10)
        stats.update(igr.reset())
        self.assertEqual((stats.high_watermark, stats.smoothed), (10, 10))
        igr.set(0)
        clock.advance(10)
        stats.update(igr.reset())
        self.assertAlmostEqual(stats.smoothed, 0.977 * 10)


class AllocationTests(SynchronousTestCase):
    def test_proportional_when_bounds_do_not_matter(self) -> None:
        allocs, fair = compute_concurrency_allocation(
            30, [AllocationItem(10, 0, 100), AllocationItem(20, 0, 100)])
        self.assertEqual((allocs, fair), ([10, 20], 1))

    def test_bounds(self) -> None:
        """A capped class gives its excess to the others; classes pinned to their lower
        bounds when the sum leaves no room; upstream's errors."""
        allocs, _ = compute_concurrency_allocation(
            30, [AllocationItem(10, 0, 5), AllocationItem(10, 0, 100)])
        self.assertEqual([round(a, 6) for a in allocs], [5, 25])
        allocs, _ = compute_concurrency_allocation(
            12, [AllocationItem(8, 8, 20), AllocationItem(6, 2, 20), AllocationItem(0, 0, 20)])
        # a zero target counts as 0.001 (upstream MinTarget)
        self.assertEqual([round(a, 2) for a in allocs], [8, 4, 0])
        self.assertEqual(compute_concurrency_allocation(
            3, [AllocationItem(1, 1, 1), AllocationItem(2, 2, 5)])[0], [1, 2])
        self.assertRaises(ValueError, compute_concurrency_allocation, 1,
                          [AllocationItem(5, 2, 9)])
        self.assertRaises(ValueError, compute_concurrency_allocation, 100,
                          [AllocationItem(5, 2, 9)])


class BorrowingTests(SynchronousTestCase):
    def test_busy_level_borrows_from_idle_one(self) -> None:
        """10 seats: a (1 share, lends nothing, may borrow) and b (1 share, lends all) have 2
        seats each, catch-all 8.  With a's demand at 6 for an adjustment period, a borrows b's
        seats (4), and two of its waiters run."""
        clock = Clock()
        ctl = new_config_controller(clock, 10)
        queued = {"type": "Queue", "queuing": {"queues": 1, "handSize": 1,
                                               "queueLengthLimit": 10}}
        b = level("b", 1, {"type": "Reject"})
        b["spec"]["limited"]["lendablePercent"] = 100
        ctl.digest([level("a", 1, queued), b], [schema("jane", "a", 10)])
        a = ctl.priority_levels["a"]
        # the digest itself adjusts: b, idle, lends its seats at once
        self.assertEqual((a.nominal_cl, a.concurrency_limit,
                          ctl.priority_levels["b"].concurrency_limit), (2, 2, 0))
        info = parse_request_info("GET", "/api/v1/pods", "")
        jane = UserInfo("jane", groups=["system:authenticated"])
        reqs = [ctl.start_request(ctl.classify(info, jane)) for _ in range(6)]
        self.assertEqual([r.executing for r in reqs], [True] * 2 + [False] * 4)
        clock.advance(10)
        self.assertEqual({n: s.concurrency_limit for n, s in ctl.priority_levels.items()},
                         {"a": 4, "b": 0, "catch-all": 8, "exempt": 0})
        self.assertEqual([r.executing for r in reqs], [True] * 4 + [False] * 2)
        ctl.stop()
