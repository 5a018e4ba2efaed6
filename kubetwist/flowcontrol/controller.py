# -*- test-case-name: tests.flowcontrol.test_controller -*-
"""
The API Priority and Fairness configuration and request admission: upstream
C{k8s.io/apiserver/pkg/util/flowcontrol/apf_controller.go} (C{lockAndDigestConfigObjects},
C{startRequest}) and C{apf_filter.go}.

L{ConfigController.digest} takes every PriorityLevelConfiguration and FlowSchema (v1 wire
dicts, defaulted as stored) and builds the configuration requests are classified by:

 - a priority level whose spec is broken (upstream C{queueSetCompleterForPL}: the
   C{Limited}/C{Exempt} unions, the C{exempt} name only for the C{Exempt} type, a queuing
   config no dealer exists for) is ignored; a missing C{exempt} or C{catch-all} level is
   imagined from the mandatory objects;
 - a FlowSchema naming no usable level is dangling and ignored; the others are ordered by
   C{matchingPrecedence}, then name; a missing C{exempt} FlowSchema is imagined in front, a
   missing C{catch-all} at the end;
 - each level's nominal limit is C{ceil(serverConcurrencyLimit * nominalConcurrencyShares
   / sum of all shares)}, where the server's limit is C{--max-requests-inflight +
   --max-mutating-requests-inflight}; it may lend C{round(nominal * lendablePercent / 100)}
   seats and borrow C{round(nominal * borrowingLimitPercent / 100)} (the whole server's limit
   when unset).  A new level starts at C{nominal - lendable / 2}; at every digest and every
   L{BORROWING_ADJUSTMENT_PERIOD <kubetwist.flowcontrol.borrowing.BORROWING_ADJUSTMENT_PERIOD>}
   seconds the current limits are recomputed from the levels' seat demand
   (L{update_borrowing <ConfigController.update_borrowing>}, upstream
   C{updateBorrowingLocked});
 - a level that disappears while requests wait or execute in it keeps serving them (and
   counts its shares) until it is idle at a later digest (upstream's quiescing).

L{ConfigController.classify} finds a request's FlowSchema (the first that matches, else the
C{catch-all}), its level, and, for a level with more than one queue, the flow distinguisher
(C{ByUser}: the user name, C{ByNamespace}: the namespace) and the flow's hash (SHA-256 of the
FlowSchema name, a zero byte and the distinguisher, first 8 bytes little-endian).
"""

from __future__ import annotations

import copy
import hashlib
import math
from dataclasses import dataclass, field
from typing import Any, Optional

from twisted.logger import Logger

from kubetwist.flowcontrol.borrowing import (
    BORROWING_ADJUSTMENT_PERIOD,
    AllocationItem,
    SeatDemandStats,
    _go_round,
    compute_concurrency_allocation,
)
from kubetwist.flowcontrol.dropped import DroppedRequestsTracker
from kubetwist.flowcontrol.queueset import QueueSet, QueuingConfig, Request
from kubetwist.flowcontrol.rules import FlowSchemaMatcher

__all__ = ["Classification", "ConfigController", "PriorityLevelState", "hash_flow_id"]

log = Logger()


_FLOW_HASHES: dict[tuple[str, str], int] = {}
_FLOW_HASH_CACHE_SIZE = 4096


def hash_flow_id(fs_name: str, distinguisher: str) -> int:
    """Upstream C{hashFlowID}: an unsigned 64-bit integer (remembered for the flows seen
    lately)."""
    key = (fs_name, distinguisher)
    value = _FLOW_HASHES.get(key)
    if value is not None:
        return value
    if len(_FLOW_HASHES) >= _FLOW_HASH_CACHE_SIZE:
        _FLOW_HASHES.clear()
    digest = hashlib.sha256(fs_name.encode() + b"\x00" + distinguisher.encode()).digest()
    value = _FLOW_HASHES[key] = int.from_bytes(digest[:8], "little")
    return value


def _name(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("name") or ""


def _queuing_config(pl: dict) -> QueuingConfig:
    """
    Upstream C{queueSetCompleterForPL}'s checks and C{QueuingConfig}.

    @raise ValueError: the spec is broken for this package.
    """
    name, spec = _name(pl), pl.get("spec") or {}
    kind = spec.get("type")
    limited, exempt = spec.get("limited"), spec.get("exempt")
    if (kind == "Limited") != (limited is not None):
        raise ValueError("broken union structure at the top, for Limited")
    if (kind == "Exempt") != (exempt is not None):
        raise ValueError("broken union structure at the top, for Exempt")
    if (kind == "Exempt") != (name == "exempt"):
        raise ValueError("non-alignment between name and type")
    if limited is None:
        return QueuingConfig(name, -1)
    response = limited.get("limitResponse") or {}
    queuing = response.get("queuing")
    if (response.get("type") == "Reject") != (queuing is None):
        raise ValueError("broken union structure for limit response")
    if queuing is None:
        return QueuingConfig(name, 0)
    config = QueuingConfig(name, int(queuing.get("queues") or 0),
                           int(queuing.get("handSize") or 0),
                           int(queuing.get("queueLengthLimit") or 0))
    QueueSet.check_config(config)
    return config


def _commons(pl: dict) -> tuple[int, Optional[int], Optional[int]]:
    """Upstream C{plSpecCommons}: C{(nominalConcurrencyShares, lendablePercent,
    borrowingLimitPercent)} (an exempt level never has a borrowing limit)."""
    spec = pl.get("spec") or {}
    if spec.get("limited") is not None:
        part = spec["limited"]
        return (int(part.get("nominalConcurrencyShares") or 0), part.get("lendablePercent"),
                part.get("borrowingLimitPercent"))
    part = spec.get("exempt") or {}
    return int(part.get("nominalConcurrencyShares") or 0), part.get("lendablePercent"), None


def _shares(pl: dict) -> int:
    """Upstream C{plSpecCommons}'s C{nominalConcurrencyShares} (0 when unset)."""
    return _commons(pl)[0]


@dataclass
class PriorityLevelState:
    """
    One priority level in use.

    @ivar pl: the PriorityLevelConfiguration.
    @ivar queues: its L{QueueSet}.
    @ivar concurrency_limit: its current limit, seats (upstream C{currentCL}).
    @ivar nominal_cl: its nominal limit; C{min_cl}, C{max_cl}: what lending and borrowing
        allow.
    @ivar seat_demand: the L{SeatDemandStats <kubetwist.flowcontrol.borrowing.SeatDemandStats>}.
    @ivar quiescing: the object is gone; the level only drains.
    """

    pl: dict
    queues: QueueSet
    concurrency_limit: int = 0
    quiescing: bool = False
    nominal_cl: int = 0
    min_cl: int = 0
    max_cl: int = 0
    new: bool = True
    seat_demand: SeatDemandStats = field(default_factory=SeatDemandStats)

    @property
    def exempt(self) -> bool:
        return (self.pl.get("spec") or {}).get("type") == "Exempt"


@dataclass
class Classification:
    """
    A request's classification (upstream C{PriorityAndFairnessClassification} and more).

    @ivar flow_schema: the matching FlowSchema.
    @ivar priority_level: its L{PriorityLevelState}.
    @ivar flow_distinguisher: C{""} unless the level has more than one queue.
    @ivar hash_value: the flow's hash (C{0} likewise).
    """

    flow_schema: dict
    priority_level: PriorityLevelState
    flow_distinguisher: str = ""
    hash_value: int = 0

    @property
    def flow_schema_uid(self) -> str:
        return (self.flow_schema.get("metadata") or {}).get("uid") or ""

    @property
    def priority_level_uid(self) -> str:
        return (self.priority_level.pl.get("metadata") or {}).get("uid") or ""

    @property
    def priority_level_name(self) -> str:
        return _name(self.priority_level.pl)


class ConfigController:
    """
    Upstream C{configController}'s in-memory half (the objects come from L{digest}).

    @param clock: C{IReactorTime}.
    @param server_concurrency_limit: C{--max-requests-inflight} plus
        C{--max-mutating-requests-inflight}.
    @param mandatory_priority_levels: the defaulted C{exempt} and C{catch-all}
        PriorityLevelConfigurations (imagined while missing).
    @param mandatory_flow_schemas: the defaulted C{exempt} and C{catch-all} FlowSchemas.
    @ivar flow_schemas: the FlowSchemas in matching order.
    @ivar priority_levels: L{PriorityLevelState} by name.
    @ivar dropped: the L{DroppedRequestsTracker} (C{Retry-After}).
    @raise ValueError: C{server_concurrency_limit} is not positive (upstream refuses to start:
        the two in-flight flags must add up to something positive).
    """

    def __init__(self, clock: Any, server_concurrency_limit: int,
                 mandatory_priority_levels: list[dict], mandatory_flow_schemas: list[dict]) -> None:
        if server_concurrency_limit <= 0:
            raise ValueError("invalid configuration: MaxRequestsInFlight and "
                             "MaxMutatingRequestsInFlight must add up to something positive")
        self.clock = clock
        self.server_concurrency_limit = server_concurrency_limit
        self.mandatory_pls = {_name(p): copy.deepcopy(p) for p in mandatory_priority_levels}
        self.mandatory_fss = {_name(f): copy.deepcopy(f) for f in mandatory_flow_schemas}
        self.flow_schemas: list[dict] = []
        self._matchers: list[FlowSchemaMatcher] = []
        self.priority_levels: dict[str, PriorityLevelState] = {}
        self.dropped = DroppedRequestsTracker(clock)
        self.nominal_cl_sum = 0
        self.digest([], [])
        self._adjusting = clock.callLater(BORROWING_ADJUSTMENT_PERIOD, self._adjust)

    def _adjust(self) -> None:
        self._adjusting = self.clock.callLater(BORROWING_ADJUSTMENT_PERIOD, self._adjust)
        self.update_borrowing()

    def stop(self) -> None:
        """Stop the periodic borrowing adjustment."""
        if self._adjusting is not None and self._adjusting.active():
            self._adjusting.cancel()

    def digest(self, priority_levels: list[dict], flow_schemas: list[dict]) -> dict[str, bool]:
        """
        Upstream C{lockAndDigestConfigObjects}: replace the configuration.

        @return: for every given FlowSchema's name, whether its priority level was found
            (C{False}: the C{Dangling} condition is due).
        """
        old = self.priority_levels
        new: dict[str, PriorityLevelState] = {}
        share_sum = 0
        for pl in priority_levels:
            name = _name(pl)
            try:
                qcfg = _queuing_config(pl)
            except ValueError as e:
                log.warn("Ignoring PriorityLevelConfiguration object {name} because its spec "
                         "is broken: {err}", name=name, err=str(e))
                continue
            new[name] = self._level(old.get(name), pl, qcfg)
            share_sum += _shares(pl)

        found: dict[str, bool] = {}
        sequence, have_exempt_fs, have_catch_all_fs = [], False, False
        for fs in flow_schemas:
            name = _name(fs)
            pl_name = ((fs.get("spec") or {}).get("priorityLevelConfiguration") or {}).get(
                "name") or ""
            found[name] = pl_name in new
            if not found[name]:
                continue
            sequence.append(fs)
            have_exempt_fs = have_exempt_fs or name == "exempt"
            have_catch_all_fs = have_catch_all_fs or name == "catch-all"
        sequence.sort(key=lambda f: ((f.get("spec") or {}).get("matchingPrecedence") or 0,
                                     _name(f)))
        if not have_exempt_fs:
            sequence.insert(0, self.mandatory_fss["exempt"])
        if not have_catch_all_fs:
            sequence.append(self.mandatory_fss["catch-all"])

        # levels gone from the objects: drained before they are dropped; the mandatory ones
        # are imagined
        for name, state in old.items():
            if name in new:
                continue
            if name in self.mandatory_pls:
                if name not in {_name(p) for p in priority_levels}:
                    continue
            if state.queues.is_idle():
                continue
            state.quiescing = True
            new[name] = state
            share_sum += _shares(state.pl)
        for name, proto in self.mandatory_pls.items():
            if name not in new:
                pl = copy.deepcopy(proto)
                new[name] = self._level(old.get(name), pl, _queuing_config(pl))
                share_sum += _shares(pl)

        scl = self.server_concurrency_limit
        nominal_sum = 0
        for state in new.values():
            shares, lendable_pct, borrowing_pct = _commons(state.pl)
            nominal = 0
            if share_sum > 0:
                nominal = int(math.ceil(scl * shares / share_sum))
            lendable = _go_round(nominal * lendable_pct / 100) if lendable_pct is not None else 0
            borrowing = _go_round(nominal * borrowing_pct / 100) if borrowing_pct is not None \
                else scl
            state.nominal_cl, state.min_cl = nominal, nominal - lendable
            state.max_cl = nominal + borrowing
            if state.new:
                state.new = False
                state.seat_demand = SeatDemandStats()
                state.concurrency_limit = nominal - lendable // 2
            nominal_sum += nominal
        self.nominal_cl_sum = nominal_sum
        self.priority_levels = new
        self.flow_schemas = sequence
        self._matchers = [FlowSchemaMatcher(fs) for fs in sequence]
        self.update_borrowing()
        return found

    def update_borrowing(self) -> None:
        """
        Upstream C{updateBorrowingLocked}: each level's current limit from the seat demand
        seen since the last adjustment (an exempt level keeps what it used, the others share
        the rest of the nominal limits' sum by their smoothed demand, within their lending
        and borrowing bounds).
        """
        states = self.priority_levels
        items: list[AllocationItem] = []
        index: dict[str, int] = {}
        exempt_cl: dict[str, int] = {}
        min_cl_sum = min_current_sum = 0
        remaining = self.nominal_cl_sum
        for name, state in states.items():
            state.seat_demand.update(state.queues.seat_demand.reset())
            hw = state.seat_demand.high_watermark
            if state.exempt:
                exempt_cl[name] = max(state.min_cl, hw)
                remaining -= exempt_cl[name]
                continue
            min_current = max(state.min_cl, min(state.nominal_cl, hw))
            index[name] = len(items)
            items.append(AllocationItem(max(float(min_current), state.seat_demand.smoothed),
                                        float(min_current), float(state.max_cl)))
            min_cl_sum += state.min_cl
            min_current_sum += min_current
        if not items:
            return
        allocs: list[float] = []
        share_frac = 0.0
        if remaining <= min_cl_sum:
            pass
        elif remaining <= min_current_sum:
            share_frac = (remaining - min_cl_sum) / (min_current_sum - min_cl_sum)
        else:
            try:
                allocs, _ = compute_concurrency_allocation(self.nominal_cl_sum, items)
            except ValueError as e:
                log.error("Unable to derive new concurrency limits: {err}", err=str(e))
                allocs = [float(states[n].concurrency_limit) for n in index]
        for name, state in states.items():
            if name in exempt_cl:
                current = exempt_cl[name]
            elif remaining <= min_cl_sum:
                current = state.min_cl
            elif remaining <= min_current_sum:
                min_current = max(state.min_cl, min(state.nominal_cl,
                                                    state.seat_demand.high_watermark))
                current = state.min_cl + _go_round((min_current - state.min_cl) * share_frac)
            else:
                current = _go_round(allocs[index[name]])
            state.concurrency_limit = current
            state.queues.configure(state.queues.config, current)

    def _level(self, state: Optional[PriorityLevelState], pl: dict,
               qcfg: QueuingConfig) -> PriorityLevelState:
        if state is None:
            return PriorityLevelState(pl, QueueSet(self.clock, qcfg, 0))
        state.pl, state.quiescing = pl, False
        state.queues.configure(qcfg, state.concurrency_limit)
        return state

    def classify(self, info: Any, user: Any) -> Classification:
        """
        Upstream C{startRequest}'s classification.

        @param info: the L{RequestInfo <kubetwist.endpoints.requestinfo.RequestInfo>}.
        @param user: the L{UserInfo <kubetwist.authentication.user.UserInfo>}.
        """
        selected = None
        for fs, matcher in zip(self.flow_schemas, self._matchers, strict=True):
            if matcher.matches(info, user):
                selected = fs
                break
        if selected is None:
            selected = self.flow_schemas[-1]
            for fs in self.flow_schemas:
                if _name(fs) == "catch-all":
                    selected = fs
        spec = selected.get("spec") or {}
        state = self.priority_levels[(spec.get("priorityLevelConfiguration") or {})["name"]]
        distinguisher, hash_value = "", 0
        if state.queues.config.queues > 1:
            method = (spec.get("distinguisherMethod") or {}).get("type")
            if method == "ByUser":
                distinguisher = user.name
            elif method == "ByNamespace":
                distinguisher = info.namespace
            hash_value = hash_flow_id(_name(selected), distinguisher)
        return Classification(selected, state, distinguisher, hash_value)

    def start_request(self, classification: Classification, seats: int = 1) -> Optional[Request]:
        """
        Admit a classified request to its level's queues.

        @return: C{None} when rejected; else the
            L{Request <kubetwist.flowcontrol.queueset.Request>}, executing or waiting.
        """
        return classification.priority_level.queues.start_request(
            classification.hash_value, seats, _name(classification.flow_schema),
            classification.flow_distinguisher)

    def dropped_request(self, classification: Classification) -> int:
        """
        Record a request that was not served (rejected, or gave up waiting) and return the
        C{Retry-After} seconds to answer it with (upstream C{RecordDroppedRequest} then
        C{GetRetryAfter}).
        """
        name = classification.priority_level_name
        self.dropped.record_dropped_request(name)
        return self.dropped.retry_after(name)
