# -*- test-case-name: tests.flowcontrol.test_queueset -*-
"""
Fair queuing of one priority level: upstream
C{k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing/queueset/queueset.go}.

A L{QueueSet} is in one of three modes, as upstream's C{QueuingConfig}:

 - exempt (C{queues < 0}): every request executes at once (counted, never limited);
 - reject (C{queues == 0}, C{limitResponse.type: Reject}): a request executes at once when
   its seats fit under the concurrency limit (or nothing executes and it needs more seats
   than the limit), else it is rejected;
 - queuing (C{queues > 0}): a request's flow hash is dealt a hand of C{handSize} queues
   (L{Dealer <kubetwist.flowcontrol.shufflesharding.Dealer>}) and it joins the hand's queue
   with the least waiting work; it is rejected when every seat is in use and that queue
   already holds C{queueLengthLimit} requests.  Requests leave the queues by upstream's fair
   queuing: virtual time C{R} advances at C{min(seats requested, limit) / active queues}
   seat-seconds per second, and the next request dispatched is the oldest of the queue whose
   oldest request would finish first in virtual time (C{nextDispatchR + work}), with
   upstream's round-robin tie-break; a request's work is C{seats * 3ms} (upstream's initial
   estimated service duration), and a queue is credited back when a request finishes faster.

Every request asks for one seat unless told otherwise (upstream's width estimation of LISTs
and mutating requests is not done).  Dispatching a waiting request is announced on the next
reactor turn (C{clock.callLater(0)}), so that one finished request does not run the next one's
handler on its own stack.
"""

from __future__ import annotations

import collections
from typing import Any, Optional

from twisted.internet.defer import Deferred

from kubetwist.flowcontrol.borrowing import Integrator
from kubetwist.flowcontrol.shufflesharding import Dealer

__all__ = ["ESTIMATED_SERVICE_DURATION", "QueueSet", "QueuingConfig", "Request"]

#: Flows whose hands are remembered per queue set (cleared when full).
_HAND_CACHE_SIZE = 4096

#: Upstream's initial C{estimatedServiceDuration}, seconds.
ESTIMATED_SERVICE_DURATION = 0.003


class QueuingConfig:
    """
    Upstream C{fq.QueuingConfig}.

    @ivar queues: C{-1} exempt, C{0} reject, else the desired number of queues.
    @ivar hand_size: queues dealt per flow.
    @ivar queue_length_limit: requests a queue may hold while every seat is busy.
    """

    def __init__(self, name: str, queues: int = 0, hand_size: int = 0,
                 queue_length_limit: int = 0) -> None:
        self.name = name
        self.queues = queues
        self.hand_size = hand_size
        self.queue_length_limit = queue_length_limit


class _Queue:
    def __init__(self, index: int) -> None:
        self.index = index
        self.waiting: collections.deque[Request] = collections.deque()
        self.executing: set[Request] = set()
        self.seats_in_use = 0
        self.next_dispatch_r = 0.0
        #: the seats of the waiting requests (their work, upstream's
        #: C{QueueSum().TotalWorkSum}, is this times the estimated service duration)
        self.waiting_seats = 0

    def empty(self) -> bool:
        return not self.waiting and not self.executing


class Request:
    """
    One request admitted to (or waiting in) a L{QueueSet}.

    @ivar state: C{"waiting"}, C{"executing"}, C{"cancelled"} or C{"finished"}.
    @ivar seats: seats it occupies while executing.
    @ivar flow_distinguisher: the distinguisher of its flow (C{""} without queues).
    @ivar fs_name: the name of the FlowSchema that classified it.
    """

    def __init__(self, qs: "QueueSet", seats: int, fs_name: str, flow_distinguisher: str,
                 queue: Optional[_Queue], arrival_r: float) -> None:
        self.qs = qs
        self.seats = seats
        self.fs_name = fs_name
        self.flow_distinguisher = flow_distinguisher
        self.queue = queue
        self.arrival_r = arrival_r
        self.state = "waiting"
        self.start_time = 0.0
        self._decision: Optional[Deferred] = None
        self._decided: Optional[bool] = None

    @property
    def work(self) -> float:
        """Upstream C{totalWork}: seat-seconds."""
        return self.seats * ESTIMATED_SERVICE_DURATION

    @property
    def executing(self) -> bool:
        return self.state == "executing"

    def wait(self) -> Deferred:
        """
        A Deferred firing C{True} when the request may execute, C{False} when it was
        cancelled while waiting (L{cancel}); fires on a later reactor turn than the decision.
        """
        d: Deferred = Deferred()
        if self._decided is not None:
            d.callback(self._decided)
        else:
            self._decision = d
        return d

    def _decide(self, value: bool) -> None:
        self._decided = value
        d, self._decision = self._decision, None
        if d is not None:
            self.qs.clock.callLater(0, d.callback, value)

    def cancel(self) -> None:
        """Give up waiting (the queue wait limit passed, or the client went away); a no-op
        once the request executes.  Upstream counts it rejected."""
        if self.state != "waiting":
            return
        self.qs._cancel(self)

    def finish(self) -> None:
        """The request's work is done: free its seats and dispatch what fits (idempotent)."""
        if self.state != "executing":
            return
        self.qs._finish(self)


class QueueSet:
    """
    @param clock: C{IReactorTime}.
    @param config: the L{QueuingConfig}.
    @param concurrency_limit: seats (upstream's current concurrency limit of the level).
    @ivar executing: requests executing; C{seats_in_use}, C{waiting} likewise.
    @ivar dispatched: requests dispatched so far; C{rejected} (including C{timed_out}),
        C{timed_out} (cancelled while waiting) likewise.
    """

    def __init__(self, clock: Any, config: QueuingConfig, concurrency_limit: int) -> None:
        self.clock = clock
        self.config = QueuingConfig(config.name)
        self.concurrency_limit = 0
        self.dealer: Optional[Dealer] = None
        self.queues: list[_Queue] = []
        self.current_r = 0.0
        self.last_real_time = clock.seconds()
        self.robin_index = -1
        self.enqueues = 0
        self.executing = 0
        self.seats_in_use = 0
        self.waiting = 0
        self.dispatched = 0
        self.rejected = 0
        self.timed_out = 0
        # upstream's getVirtualTimeRatioLocked sums over every queue; these totals are kept
        # as requests move instead
        self._active_queues = 0
        self._queued_seats = 0
        # the queues holding waiters (upstream scans every queue per dispatch)
        self._waiting_queues: set[_Queue] = set()
        self.seats_waiting = 0
        #: seats executing plus seats waiting, over time (the input of seat borrowing)
        self.seat_demand = Integrator(clock)
        self.configure(config, concurrency_limit)

    # --- configuration ---------------------------------------------------------------------
    @staticmethod
    def check_config(config: QueuingConfig) -> Optional[Dealer]:
        """
        Upstream C{checkConfig}: the dealer of a queuing config.

        @raise ValueError: the queues and hand size admit no dealer.
        """
        if config.queues <= 0:
            return None
        return Dealer(config.queues, config.hand_size)

    def configure(self, config: QueuingConfig, concurrency_limit: int) -> None:
        """
        Upstream C{setConfiguration}: new queuing parameters and limit; queues are added,
        never dropped while they hold requests.

        @raise ValueError: see L{check_config}.
        """
        dealer = self.check_config(config)
        self._sync_time()
        if config.queues > 0:
            while len(self.queues) < config.queues:
                self.queues.append(_Queue(len(self.queues)))
        else:
            config = QueuingConfig(config.name, config.queues, self.config.hand_size,
                                   self.config.queue_length_limit)
        self.config = config
        self.concurrency_limit = concurrency_limit
        self.dealer = dealer
        self._hands: dict[int, list[int]] = {}
        self._dispatch_as_much_as_possible()
        self._note_demand()

    def is_idle(self) -> bool:
        """Nothing waits and nothing executes."""
        return self.waiting == 0 and self.executing == 0

    # --- requests --------------------------------------------------------------------------
    def start_request(self, hash_value: int = 0, seats: int = 1, fs_name: str = "",
                      flow_distinguisher: str = "") -> Optional[Request]:
        """
        Upstream C{StartRequest}.

        @return: C{None} when rejected; else a L{Request}, executing at once or waiting (see
            L{Request.wait}).
        """
        self._sync_time()
        if self.config.queues < 1:
            if not self._can_accommodate(seats):
                self.rejected += 1
                return None
            req = Request(self, seats, fs_name, flow_distinguisher, None, self.current_r)
            self._start_executing(req)
            req._decided = True
            self._note_demand()
            return req
        queue = self.queues[self._shuffle_shard(hash_value)]
        req = Request(self, seats, fs_name, flow_distinguisher, queue, self.current_r)
        if self.seats_in_use >= self.concurrency_limit and \
                len(queue.waiting) >= self.config.queue_length_limit:
            self.rejected += 1
            return None
        if queue.empty():
            queue.next_dispatch_r = self.current_r
            self._active_queues += 1
        queue.waiting.append(req)
        queue.waiting_seats += req.seats
        self._waiting_queues.add(queue)
        self.waiting += 1
        self.seats_waiting += req.seats
        self._queued_seats += req.seats
        self._bound_next_dispatch(queue)
        self._dispatch_as_much_as_possible()
        self._note_demand()
        return req

    def _shuffle_shard(self, hash_value: int) -> int:
        """Upstream C{shuffleShardLocked}: the hand's queue with the least waiting work,
        starting at a rotating offset."""
        assert self.dealer is not None
        hand = self._hands.get(hash_value)
        if hand is None:
            if len(self._hands) >= _HAND_CACHE_SIZE:
                self._hands.clear()
            hand = self._hands[hash_value] = self.dealer.deal(hash_value)
        offset = self.enqueues % len(hand)
        self.enqueues += 1
        best, best_seats = -1, -1
        for i in range(len(hand)):
            idx = hand[(offset + i) % len(hand)]
            seats = self.queues[idx].waiting_seats
            if best < 0 or seats < best_seats:
                best, best_seats = idx, seats
        return best

    def _can_accommodate(self, seats: int) -> bool:
        """Upstream C{canAccommodateSeatsLocked}."""
        if self.config.queues < 0:
            return True
        if seats > self.concurrency_limit:
            return self.executing == 0
        return self.seats_in_use + seats <= self.concurrency_limit

    def _start_executing(self, req: Request) -> None:
        req.state = "executing"
        req.start_time = self.clock.seconds()
        self.executing += 1
        self.seats_in_use += req.seats
        self.dispatched += 1
        if req.queue is not None:
            req.queue.executing.add(req)
            req.queue.seats_in_use += req.seats

    def _dispatch_as_much_as_possible(self) -> None:
        while self.waiting and self.seats_in_use < self.concurrency_limit and self._dispatch():
            pass

    def _dispatch(self) -> bool:
        """Upstream C{dispatchLocked} with C{findDispatchQueueToBoundLocked}."""
        nq = len(self.queues)
        best: Optional[_Queue] = None
        best_finish, best_index = float("inf"), -1
        # upstream visits every queue from robinIndex+1 round to robinIndex itself (where
        # robinIndex ends up), keeping the first strictly smallest finish; only queues with
        # waiters count, visited in that order
        start = self.robin_index + 1
        for queue in sorted(self._waiting_queues, key=lambda q: (q.index - start) % nq):
            finish = queue.next_dispatch_r + queue.waiting[0].work
            if finish < best_finish:
                best, best_finish, best_index = queue, finish, queue.index
        if best is None:
            return False
        req = best.waiting[0]
        if not self._can_accommodate(req.seats):
            return False
        best.waiting.popleft()
        best.waiting_seats -= req.seats
        if not best.waiting:
            self._waiting_queues.discard(best)
        self.robin_index = best_index
        self.waiting -= 1
        self.seats_waiting -= req.seats
        self._start_executing(req)
        best.next_dispatch_r += req.work
        self._bound_next_dispatch(best)
        req._decide(True)
        return True

    def _bound_next_dispatch(self, queue: _Queue) -> None:
        """Upstream C{boundNextDispatchLocked}: never before the oldest waiter's arrival."""
        if queue.waiting and queue.next_dispatch_r < queue.waiting[0].arrival_r:
            queue.next_dispatch_r = queue.waiting[0].arrival_r

    def _cancel(self, req: Request) -> None:
        self._sync_time()
        queue = req.queue
        assert queue is not None
        queue.waiting.remove(req)
        queue.waiting_seats -= req.seats
        if not queue.waiting:
            self._waiting_queues.discard(queue)
        req.state = "cancelled"
        self.waiting -= 1
        self.seats_waiting -= req.seats
        self._queued_seats -= req.seats
        if queue.empty():
            self._active_queues -= 1
        self.rejected += 1
        self.timed_out += 1
        self._bound_next_dispatch(queue)
        self._note_demand()
        req._decide(False)

    def _finish(self, req: Request) -> None:
        """Upstream C{finishRequestAndDispatchAsMuchAsPossible}."""
        self._sync_time()
        req.state = "finished"
        self.executing -= 1
        self.seats_in_use -= req.seats
        queue = req.queue
        if queue is not None:
            queue.executing.discard(req)
            queue.seats_in_use -= req.seats
            self._queued_seats -= req.seats
            if queue.empty():
                self._active_queues -= 1
            actual = self.clock.seconds() - req.start_time
            queue.next_dispatch_r -= req.seats * (ESTIMATED_SERVICE_DURATION - actual)
            self._bound_next_dispatch(queue)
            self._remove_queue_if_empty(queue)
        self._dispatch_as_much_as_possible()
        self._note_demand()

    def _note_demand(self) -> None:
        self.seat_demand.set(float(self.seats_in_use + self.seats_waiting))

    def _remove_queue_if_empty(self, queue: _Queue) -> None:
        """Upstream C{removeQueueIfEmptyLocked}: shrink towards fewer desired queues."""
        if len(self.queues) > self.config.queues and queue.empty() and \
                queue.index < len(self.queues) and self.queues[queue.index] is queue:
            del self.queues[queue.index]
            for q in self.queues[queue.index:]:
                q.index -= 1
            if self.robin_index >= queue.index:
                self.robin_index -= 1

    # --- virtual time ----------------------------------------------------------------------
    def _sync_time(self) -> None:
        """Upstream C{syncTimeLocked}: advance C{R} by the ratio times the real time."""
        now = self.clock.seconds()
        elapsed = now - self.last_real_time
        self.last_real_time = now
        self.current_r += self._virtual_time_ratio() * max(0.0, elapsed)

    def _virtual_time_ratio(self) -> float:
        """Upstream C{getVirtualTimeRatioLocked}: C{min(seats in use or waiting in the queues,
        limit) / non-empty queues}."""
        if self._active_queues <= 0:
            return 0.0
        return min(self._queued_seats, self.concurrency_limit) / self._active_queues
