# -*- test-case-name: tests.flowcontrol.test_borrowing -*-
"""
Seat borrowing between priority levels: upstream
C{k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing/integrator.go} (the time-weighted seat
demand of a level), C{conc_alloc.go} (C{computeConcurrencyAllocation}) and the seat demand
statistics of C{apf_controller.go}.

Every C{BORROWING_ADJUSTMENT_PERIOD} seconds (and at every configuration change) each level's
seat demand since the last adjustment (seats executing plus seats waiting, integrated over
time: average, standard deviation, high watermark) is smoothed, and the server's seats are
divided among the non-exempt levels, each between its lower bound (its nominal limit minus
what it lends, raised to its demand's high watermark up to its nominal limit) and its upper
bound (nominal plus what it may borrow), in proportion to its smoothed demand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["BORROWING_ADJUSTMENT_PERIOD", "SEAT_DEMAND_SMOOTHING", "AllocationItem",
           "Integrator", "IntegratorResults", "SeatDemandStats",
           "compute_concurrency_allocation"]

#: Upstream C{borrowingAdjustmentPeriod}, seconds.
BORROWING_ADJUSTMENT_PERIOD = 10.0
#: Upstream C{seatDemandSmoothingCoefficient} (a half-life of 5 minutes).
SEAT_DEMAND_SMOOTHING = 0.977

_MIN_TARGET = 0.001
_EPSILON = 0.0000001


@dataclass
class IntegratorResults:
    """Upstream C{IntegratorResults}: seconds, time-weighted average and standard deviation
    (NaN without elapsed time), min and max."""

    duration: float = 0.0
    average: float = math.nan
    deviation: float = math.nan
    min: float = 0.0
    max: float = 0.0


class Integrator:
    """Upstream C{integrator}: the time integral of a value set now and then.

    @param clock: C{IReactorTime}.
    """

    def __init__(self, clock: Any) -> None:
        self.clock = clock
        self.last_time = clock.seconds()
        self.x = 0.0
        self.elapsed = self.integral_x = self.integral_xx = 0.0
        self.min = self.max = 0.0

    def _update(self) -> None:
        now = self.clock.seconds()
        dt = now - self.last_time
        self.last_time = now
        self.elapsed += dt
        self.integral_x += self.x * dt
        self.integral_xx += self.x * self.x * dt

    def set(self, x: float) -> None:
        """The value from now on."""
        self._update()
        self.x = x
        self.min = min(self.min, x)
        self.max = max(self.max, x)

    def results(self) -> IntegratorResults:
        """Upstream C{GetResults}."""
        self._update()
        out = IntegratorResults(self.elapsed, min=self.min, max=self.max)
        if self.elapsed > 0:
            avg = self.integral_x / self.elapsed
            variance = self.integral_xx / self.elapsed - avg * avg
            out.average = avg
            out.deviation = math.sqrt(variance) if variance >= 0 else math.nan
        return out

    def reset(self) -> IntegratorResults:
        """Upstream C{Reset}: the results so far; a new interval starts at the current
        value."""
        out = self.results()
        self.elapsed = self.integral_x = self.integral_xx = 0.0
        self.min = self.max = self.x
        return out


@dataclass
class SeatDemandStats:
    """Upstream C{seatDemandStats}."""

    avg: float = 0.0
    std_dev: float = 0.0
    high_watermark: int = 0
    smoothed: float = 0.0

    def update(self, obs: IntegratorResults) -> None:
        """Upstream C{seatDemandStats.update}."""
        self.high_watermark = _go_round(obs.max)
        if obs.duration <= 0:
            return
        deviation = 0.0 if math.isnan(obs.deviation) else obs.deviation
        self.avg, self.std_dev = obs.average, deviation
        envelope = obs.average + deviation
        self.smoothed = max(envelope, SEAT_DEMAND_SMOOTHING * self.smoothed
                            + (1 - SEAT_DEMAND_SMOOTHING) * envelope)


def _go_round(x: float) -> int:
    """Go's C{math.Round}: half away from zero."""
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


@dataclass
class AllocationItem:
    """Upstream C{allocProblemItem}."""

    target: float
    lower_bound: float
    upper_bound: float


def compute_concurrency_allocation(required_sum: int,
                                   classes: list[AllocationItem]) -> tuple[list[float], float]:
    """
    Upstream C{computeConcurrencyAllocation}: values summing to C{required_sum}, each within
    its bounds, as close to proportional to the targets as the bounds allow.

    @return: C{(allocations, fair proportion)}.
    @raise ValueError: inconsistent bounds (upstream's errors).
    """
    if required_sum < 0:
        raise ValueError("negative sums are not supported")
    required = float(required_sum)
    low_sum = high_sum = target_sum = 0.0
    ub_min, ub_max = float(3.4028234663852886e38), -math.inf
    lb_min, lb_max = float(3.4028234663852886e38), -math.inf
    relative = []
    for idx, item in enumerate(classes):
        target = item.target
        if item.lower_bound < 0:
            raise ValueError(f"lower bound {idx} is {item.lower_bound} but negative lower "
                             f"bounds are not allowed")
        if target < item.lower_bound:
            raise ValueError(f"target {idx} is {target}, which is below its lower bound of "
                             f"{item.lower_bound}")
        if item.upper_bound < item.lower_bound:
            raise ValueError(f"upper bound {idx} is {item.upper_bound} but should not be less "
                             f"than the lower bound {item.lower_bound}")
        target = max(target, _MIN_TARGET)
        low_sum += item.lower_bound
        high_sum += item.upper_bound
        target_sum += target
        rel = (target, item.lower_bound / target, item.upper_bound / target)
        ub_min, ub_max = min(ub_min, rel[2]), max(ub_max, rel[2])
        lb_min, lb_max = min(lb_min, rel[1]), max(lb_max, rel[1])
        relative.append(rel)
    if lb_max > 1:
        raise ValueError(f"lbRange.max-1={lb_max - 1}, which is impossible because lbRange.max "
                         f"can not be greater than 1")
    if low_sum - required > _EPSILON:
        raise ValueError(f"lower bounds sum to {low_sum}, which is higher than the required "
                         f"sum of {required_sum}")
    if required - high_sum > _EPSILON:
        raise ValueError(f"upper bounds sum to {high_sum}, which is lower than the required "
                         f"sum of {required_sum}")
    if required_sum == 0:
        return [0.0] * len(classes), 0.0
    if low_sum - required > -_EPSILON:
        return [c.lower_bound for c in classes], lb_min
    if required - high_sum > -_EPSILON:
        return [c.upper_bound for c in classes], ub_max
    fair = required / target_sum
    if lb_max <= fair <= ub_min:
        return [rel[0] * fair for rel in relative], fair
    # bounds matter: walk the relative bounds in ascending order (upstream's sort of packed
    # indices: 2*i for the lower bound of item i, 2*i+1 for its upper bound)
    packed = sorted(range(2 * len(relative)),
                    key=lambda p: relative[p // 2][1] if p % 2 == 0 else relative[p // 2][2])
    sum_so_far, fair = low_sum, lb_min
    sensitive_target_sum = delta_target = 0.0
    sensitive = delta_classes = 0
    next_idx = 0
    while sum_so_far < required:
        while True:
            sensitive_target_sum += delta_target
            sensitive += delta_classes
            if next_idx >= len(packed):
                raise ValueError("impossible: ran out of bounds to consider in "
                                 "bound-constrained problem")
            p = packed[next_idx]
            item_idx, lower = p // 2, p % 2 == 0
            next_bound = relative[item_idx][1] if lower else relative[item_idx][2]
            if lower:
                delta_classes, delta_target = 1, relative[item_idx][0]
            else:
                delta_classes, delta_target = -1, -relative[item_idx][0]
            next_idx += 1
            if next_bound > fair:
                break
        if sensitive == 0:
            fair = next_bound
            continue
        next_prop = fair + (required - sum_so_far) / sensitive_target_sum
        if next_prop <= next_bound:
            fair = next_prop
            break
        sum_so_far += (next_bound - fair) * sensitive_target_sum
        fair = next_bound
    return [max(c.lower_bound, min(c.upper_bound, fair * rel[0]))
            for c, rel in zip(classes, relative, strict=True)], fair
