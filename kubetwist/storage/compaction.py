# -*- test-case-name: tests.storage.test_compaction -*-
"""
Periodic compaction of a storage backend's history: upstream
C{k8s.io/apiserver/pkg/storage/etcd3/compact.go} (C{compactor}, C{Compact}).

The key C{compact_rev_key} (not under C{--etcd-prefix}: one per etcd cluster) holds the last
compacted revision; its I{version} (how many times it was written) is a logical clock shared
by every API server of the cluster.  Every interval each server runs one transaction::

    if version(compact_rev_key) == <the version this server last saw>
    then put compact_rev_key = <the revision this server saw one interval ago>
    else get compact_rev_key

The server whose transaction succeeds compacts at that revision (except on the very first
round, the bootstrap); the others learn the new version and the current revision and try
again one interval later.  So one server compacts per interval, history of the last interval
is kept (watchers that fell behind by less than that can resume), and when the compacting
server dies another takes over within two intervals.

The embedded SQLite store provides the same two primitives (L{ICompactable}), so the one
L{CompactorService} serves both backends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from twisted.internet.defer import Deferred
from twisted.logger import Logger
from zope.interface import Attribute, Interface

from kubetwist.apimachinery.wait import PeriodicService

_log = Logger()

#: Upstream C{compactRevKey}.
COMPACT_REV_KEY = "compact_rev_key"

#: Upstream kube-apiserver's C{--etcd-compaction-interval} default, seconds.
DEFAULT_COMPACTION_INTERVAL = 300.0


@dataclass(frozen=True)
class CompactTxnResult:
    """
    The answer of one compaction transaction.

    @ivar succeeded: the compare held and C{compact_rev_key} was written.
    @ivar version: C{compact_rev_key}'s version after the transaction (the logical time).
    @ivar revision: the store's current revision (the transaction's header revision).
    @ivar compacted: the revision C{compact_rev_key} names (what was or is to be compacted);
        0 when unknown.
    """

    succeeded: bool
    version: int
    revision: int
    compacted: int = 0


class ICompactable(Interface):
    """A backend whose history can be compacted with upstream's C{compact_rev_key} scheme."""

    name = Attribute("The backend's name, for logs (C{etcd}, C{sqlite}).")

    def compact_txn(expected_version: int, revision: int) -> Deferred:
        """
        Compare C{version(compact_rev_key) == expected_version}; if it holds, write
        C{str(revision)} to it (its version becomes C{expected_version + 1}), else read it.

        @return: a C{Deferred} firing with a L{CompactTxnResult}.
        @raise kubetwist.storage.interfaces.UnreachableError: the backend cannot be reached.
        """

    def compact(revision: int) -> Deferred:
        """
        Discard the history before C{revision}: afterwards reads and watches at an older
        revision fail with C{ResourceVersionExpired} (410).  Fires when done.
        """


class CompactorService(PeriodicService):
    """
    Upstream C{compactor} (its C{runCompactLoop}) as a L{PeriodicService}: the first round runs
    one C{interval} after C{startService}, each next one C{interval} after the previous ended
    (a failed round is logged and the loop goes on).

    @param storage: an L{ICompactable} backend.
    @param clock: C{IReactorTime} the rounds are scheduled on.
    @param interval: seconds between rounds; 0 disables compaction (as upstream).
    @ivar compact_revision: the newest revision known to be compacted (by this server or
        another: upstream C{CompactRevision()}); 0 until known.
    @ivar version: the logical time this server last saw (C{compact_rev_key}'s version).
    @ivar revision: the store revision seen at the last round (compacted at the next).
    """

    name = "storage-compactor"
    activity = "compaction"
    run_at_start = False

    def __init__(self, storage: Any, clock: Any,
                 interval: float = DEFAULT_COMPACTION_INTERVAL) -> None:
        super().__init__(clock, interval)
        self.storage = storage
        self.version = 0
        self.revision = 0
        self.compact_revision = 0

    def label(self) -> str:
        """The backend's name (C{etcd}, C{sqlite}) in logs."""
        return getattr(self.storage, "name", "storage")

    async def run_once(self) -> int:
        return await self.compact_once()

    async def compact_once(self) -> int:
        """
        One round of upstream C{Compact}: the transaction, then (when it succeeded and this is
        not the bootstrap round) the compaction at the revision seen one round ago.

        @return: the revision compacted in this round (0: none by this server).
        @raise kubetwist.storage.interfaces.UnreachableError: the backend is down; the logical
            time and revision are kept for the next round.
        """
        expected, previous = self.version, self.revision
        result: CompactTxnResult = await self.storage.compact_txn(expected, previous)
        self.version, self.revision = result.version, result.revision
        if not result.succeeded:
            self._seen(result.compacted)
            return 0
        if previous == 0:
            # upstream: "We don't compact on bootstrap."
            return 0
        await self.storage.compact(previous)
        _log.info("{name}: compacted revision {rev}",
                  name=getattr(self.storage, "name", "storage"), rev=previous)
        self._seen(previous)
        return previous

    def _seen(self, revision: int) -> None:
        if revision:
            self.compact_revision = max(self.compact_revision, revision)
