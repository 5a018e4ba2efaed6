# -*- test-case-name: tests.storage -*-
"""
The storage seam: upstream C{k8s.io/apiserver/pkg/storage} (C{interfaces.go}, C{errors.go}).

Objects cross this seam as JSON-shaped dicts.  A backend stores an object's JSON without
C{metadata.resourceVersion} and sets C{metadata.resourceVersion} to the revision (as a decimal
string) of the write that produced it on everything it returns.  Every method returns a
C{Deferred}; no method blocks the reactor.

Keys are absolute strings such as C{/registry/configmaps/default/web}; the C{--etcd-prefix} is the
backend's business (it is prepended by the backend, never by callers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from twisted.internet.interfaces import IPushProducer
from zope.interface import Attribute, Interface, implementer

#: The annotation of the BOOKMARK that ends a watch-list's initial events (KEP-3157, upstream
#: C{metav1.InitialEventsAnnotationKey}).
INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end"


# --- errors (upstream storage.StorageError codes) ----------------------------------------------

class StorageError(Exception):
    """Base of storage failures; C{key} is the key involved, C{revision} the revision if known."""

    def __init__(self, key: str = "", revision: int = 0, message: str = "") -> None:
        self.key = key
        self.revision = revision
        super().__init__(message or f"{type(self).__name__}: {key}")


class KeyNotFoundError(StorageError):
    """The key does not exist (C{ErrCodeKeyNotFound}); the API answers 404 NotFound."""


class KeyExistsError(StorageError):
    """Create of a key that exists (C{ErrCodeKeyExists}); the API answers 409 AlreadyExists."""


class ResourceVersionConflictError(StorageError):
    """
    A C{Preconditions.resource_version} did not match (C{ErrCodeResourceVersionConflicts});
    the API answers 409 Conflict with upstream's optimistic-lock message.
    """


class InvalidObjError(StorageError):
    """
    A C{Preconditions.uid} did not match (C{ErrCodeInvalidObj}); the API answers 409 Conflict
    with C{message} (C{Precondition failed: UID in precondition: a, UID in object meta: b}).
    """


class ResourceVersionExpiredError(StorageError):
    """
    A resourceVersion older than the oldest retained revision (compacted); the API answers
    410 C{Expired} with C{message} (C{too old resource version: 5 (12)}).

    @ivar continue_token: for a list continued from a compacted revision, the token that lists
        the rest at the latest revision (upstream C{handleCompactedErrorForPaging}: its
        C{rv} is -1); the API puts it in the Status's C{metadata.continue}.  C{""} otherwise.
    """

    def __init__(self, key: str = "", revision: int = 0, message: str = "",
                 continue_token: str = "") -> None:
        super().__init__(key, revision, message)
        self.continue_token = continue_token


class TooLargeResourceVersionError(StorageError):
    """
    A resourceVersion newer than the store's current revision; the API answers 504 C{Timeout}
    with upstream's C{Too large resource version} message and cause C{ResourceVersionTooLarge}.
    """


class UnreachableError(StorageError):
    """The backend cannot be reached (C{ErrCodeUnreachable}); the API answers 503."""


class InvalidContinueError(StorageError):
    """A continue token that cannot be decoded; the API answers 400 BadRequest."""


class InternalError(StorageError):
    """
    Upstream C{storage.InternalError}: a value read from (or written to) the backend could not
    be transformed (decrypted, decoded).  C{str()} is the bare C{reason}, as upstream's
    C{InternalError.Error()}; the API answers 500 C{InternalError}
    (C{Internal error occurred: <reason>}, upstream C{storeerr.Interpret*Error}).
    """

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(key, message=reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


# --- requests and results ---------------------------------------------------------------------

@dataclass(frozen=True)
class Preconditions:
    """Upstream C{storage.Preconditions}: C{uid} and/or C{resource_version} the object must have."""

    uid: Optional[str] = None
    resource_version: Optional[str] = None

    def check(self, key: str, obj: dict) -> None:
        """Raise L{InvalidObjError} / L{ResourceVersionConflictError} when C{obj} differs."""
        meta = obj.get("metadata") or {}
        if self.uid is not None and self.uid != meta.get("uid", ""):
            raise InvalidObjError(
                key,
                message=(
                    f"Precondition failed: UID in precondition: {self.uid}, "
                    f"UID in object meta: {meta.get('uid', '')}"
                ),
            )
        if (
            self.resource_version is not None
            and self.resource_version != meta.get("resourceVersion", "")
        ):
            raise ResourceVersionConflictError(
                key,
                message=(
                    f"Precondition failed: ResourceVersion in precondition: "
                    f"{self.resource_version}, ResourceVersion in object meta: "
                    f"{meta.get('resourceVersion', '')}"
                ),
            )


class SelectionPredicate:
    """
    Which objects a list or watch wants (upstream C{storage.SelectionPredicate}).

    @param matcher: C{obj -> bool}, or C{None} for "everything".
    """

    def __init__(self, matcher: Optional[Callable[[dict], bool]] = None) -> None:
        self._matcher = matcher

    def empty(self) -> bool:
        return self._matcher is None

    def matches(self, obj: dict) -> bool:
        return self._matcher is None or bool(self._matcher(obj))


EVERYTHING = SelectionPredicate()


@dataclass
class ListResult:
    """
    One page of a list.

    @ivar items: the objects, each with C{metadata.resourceVersion} set, in key order.
    @ivar resource_version: the revision the page was read at, as a string.
    @ivar continue_token: opaque token for the next page, or C{""} when this is the last.
    @ivar remaining_item_count: how many more keys follow (when known and no predicate
        filtered), else C{None}.
    @ivar keys: the backend key of each item (same order), when the backend reports them
        (the Cacher fills its cache from them), else C{None}.
    @ivar encoded: each item encoded (same order), from the Cacher's C{get_list_encoded};
        C{None} from C{get_list}.
    """

    items: list[dict]
    resource_version: str
    continue_token: str = ""
    remaining_item_count: Optional[int] = None
    keys: Optional[list[str]] = field(default=None, repr=False, compare=False)
    encoded: Optional[list[bytes]] = field(default=None, repr=False, compare=False)


@dataclass
class WatchEvent:
    """
    One watch event: C{type} in C{ADDED MODIFIED DELETED BOOKMARK ERROR}; C{object} is the
    object (for DELETED: its last state with C{resourceVersion} set to the delete's revision;
    for ERROR: a C{metav1.Status} dict; for BOOKMARK: C{{"metadata": {"resourceVersion": "N",
    "annotations"?: {...}}}}, meaning every change up to revision N has been sent).

    C{key} is the object's backend key (with the backend's prefix) when the producer knows it
    (the key-value backends set it; the Cacher keys its cache by it); it is not part of
    equality.

    C{memo} is set by the Cacher on the events of a watch asked for with C{share_objects}:
    C{object} is then the cache's own object (to be read, never changed) and C{memo} a dict
    shared by every watcher of the same change, C{{(flavor, type): frame bytes}}, so that an
    event is encoded once per output format whatever the number of watchers.
    """

    type: str
    object: dict
    key: Optional[str] = field(default=None, repr=False, compare=False)
    memo: Optional[dict] = field(default=None, repr=False, compare=False)


@implementer(IPushProducer)
class Watch:
    """
    A stream of L{WatchEvent}s from a producer (a backend) to one consumer (an HTTP watch).

    The producer calls L{send} and finally L{close}; the consumer calls L{subscribe} once and
    may call L{stop} at any time (client gone, timeout).  Events sent before L{subscribe} are
    buffered.  L{stop} calls the producer's C{on_stop} once, so the backend can release its
    resources (an etcd watch, a listener registration).

    Flow control (optional, used by the Cacher): a L{Watch} is an C{IPushProducer}, so the
    consumer may register it with its transport.  L{pauseProducing} / L{resumeProducing} call
    the producer's C{on_pause} / C{on_resume}; a producer that passes them sends only while
    L{accepting} and keeps its own bounded backlog otherwise (C{on_resume} is also called once
    L{subscribe} has run).  Producers that pass neither ignore flow control.

    Progress (optional, upstream C{RequestWatchProgress}): L{request_progress} asks the producer
    for a BOOKMARK event whose C{resourceVersion} N promises that every change up to N has been
    sent; it returns C{False} when the producer has no C{on_progress}.

    @ivar done: a C{Deferred} fired with C{None} when the stream ends, from either side.
    """

    def __init__(self, on_stop: Optional[Callable[[], Any]] = None,
                 on_pause: Optional[Callable[[], Any]] = None,
                 on_resume: Optional[Callable[[], Any]] = None,
                 on_progress: Optional[Callable[[], Any]] = None) -> None:
        from twisted.internet.defer import Deferred

        self._on_stop = on_stop
        self._on_pause = on_pause
        self._on_resume = on_resume
        self._on_progress = on_progress
        self._consumer: Optional[Callable[[WatchEvent], Any]] = None
        self._buffer: list[WatchEvent] = []
        self.ended = False
        self.paused = False
        self.done: Deferred = Deferred()

    @property
    def accepting(self) -> bool:
        """Whether the consumer takes events now: subscribed, not paused, not ended."""
        return self._consumer is not None and not self.paused and not self.ended

    # flow control (IPushProducer, called by the consumer's transport)
    def pauseProducing(self) -> None:
        if self.ended or self.paused:
            return
        self.paused = True
        if self._on_pause is not None:
            self._on_pause()

    def resumeProducing(self) -> None:
        if self.ended or not self.paused:
            return
        self.paused = False
        if self._consumer is not None and self._on_resume is not None:
            self._on_resume()

    def stopProducing(self) -> None:
        self.stop()

    def request_progress(self) -> bool:
        """Ask for a progress BOOKMARK; C{False} when the producer does not support it."""
        if self._on_progress is None or self.ended:
            return False
        self._on_progress()
        return True

    # producer side
    def send(self, event: WatchEvent) -> None:
        if self.ended:
            return
        if self._consumer is None:
            self._buffer.append(event)
        else:
            self._consumer(event)

    def close(self) -> None:
        """The producer has no more events."""
        if self.ended:
            return
        if self._consumer is None:
            # deliver buffered events first, then end on subscribe
            self._buffer.append(None)  # type: ignore[arg-type]
            return
        self._end()

    # consumer side
    def subscribe(self, consumer: Callable[[WatchEvent], Any]):
        """Start delivery to C{consumer}; returns L{done}."""
        self._consumer = consumer
        buffered, self._buffer = self._buffer, []
        for ev in buffered:
            if ev is None:
                self._end()
                break
            if self.ended:
                break
            consumer(ev)
        if not self.ended and not self.paused and self._on_resume is not None:
            self._on_resume()
        return self.done

    def stop(self) -> None:
        """The consumer no longer wants events; idempotent."""
        self._end()

    def _end(self) -> None:
        if self.ended:
            return
        self.ended = True
        self._buffer = []
        on_stop, self._on_stop = self._on_stop, None
        if on_stop is not None:
            on_stop()
        self.done.callback(None)


class IStorage(Interface):
    """
    Upstream C{storage.Interface}.  All methods return Deferreds; failures are the
    L{StorageError} subclasses above.
    """

    def get(key: str, resource_version: str = "", ignore_not_found: bool = False):
        """
        Fire with the object at C{key} (C{resource_version} C{""}/C{"0"}: latest; C{"N"}: at
        least as new as N, else L{TooLargeResourceVersionError}).  Missing key:
        L{KeyNotFoundError}, or C{None} when C{ignore_not_found}.
        """

    def get_list(
        key: str,
        recursive: bool = True,
        resource_version: str = "",
        resource_version_match: str = "",
        limit: int = 0,
        continue_token: str = "",
        predicate: SelectionPredicate = EVERYTHING,
    ):
        """
        Fire with a L{ListResult} of the objects under prefix C{key} (C{recursive}: C{key} is a
        prefix, a C{/} is appended when missing) that match C{predicate}.

        C{resource_version}/C{resource_version_match} follow the API conventions: C{""} is a
        consistent read of the latest; C{"0"} any; C{match="Exact"} reads at exactly that
        revision (L{ResourceVersionExpiredError} if compacted); C{"NotOlderThan"} (the default
        for a non-zero version) at least that new.  C{limit} > 0 pages; C{continue_token} resumes
        from a previous page at that page's revision.
        """

    def create(key: str, obj: dict):
        """
        Store C{obj} at C{key} if the key does not exist (else L{KeyExistsError}).  Fire with
        the stored object, C{metadata.resourceVersion} set to the write's revision.
        """

    def delete(key: str, preconditions: Optional[Preconditions] = None,
               validate_deletion: Optional[Callable] = None):
        """
        Delete C{key} atomically, if C{preconditions} hold and C{validate_deletion(current)}
        (which may return a Deferred) does not raise; retried on a concurrent change.  Fire with
        the deleted object (its last state).  L{KeyNotFoundError} if missing.
        """

    def guaranteed_update(key: str, try_update: Callable,
                          preconditions: Optional[Preconditions] = None,
                          ignore_not_found: bool = False):
        """
        Read-modify-write with compare-and-swap on the key's modification revision, retried on
        conflict (upstream C{GuaranteedUpdate}).

        C{try_update(current)} gets the current object (a fresh deep copy, with
        C{resourceVersion}; C{None} when missing and C{ignore_not_found}) and returns the new
        object or a Deferred of it; it may raise to abort (the error propagates).  If the new
        object serialises identically to the current one nothing is written and the current
        object is returned.  Fire with the stored object.
        """

    def watch(key: str, resource_version: str = "", recursive: bool = False,
              predicate: SelectionPredicate = EVERYTHING):
        """
        Return a L{Watch} (not a Deferred) of changes under C{key}.

        C{resource_version} C{""} or C{"0"}: first an ADDED event per existing object, then every
        change after that snapshot.  C{"N"}: every change with revision > N; if N is compacted,
        one ERROR event (410 Expired Status) and the watch closes.  Objects that stop matching the
        predicate are sent as DELETED, objects that start matching as ADDED (upstream's watch
        filtering).
        """

    def count(key: str):
        """Fire with the number of keys under prefix C{key}."""

    def current_revision():
        """Fire with the store's current revision (an C{int})."""

    def stop():
        """Release connections/threads; fire when done."""

    name = Attribute("A short name for /readyz and logs: C{etcd}, C{sqlite}.")


class IWatchCache(Interface):
    """
    A storage that serves watches itself with upstream's watch options (the Cacher,
    L{kubetwist.storage.cacher.Cacher}): periodic bookmarks, watch-list and flow control.
    The registry passes these options only to a storage that provides this interface.
    """

    def watch(key: str, resource_version: str = "", recursive: bool = False,
              predicate: SelectionPredicate = EVERYTHING, allow_watch_bookmarks: bool = False,
              send_initial_events: Optional[bool] = None, timeout: Optional[float] = None):
        """
        L{IStorage.watch} plus: C{allow_watch_bookmarks} (BOOKMARK events carrying the
        cache's resourceVersion about every minute and shortly before C{timeout}),
        C{send_initial_events} (KEP-3157: the state as ADDED events, then a BOOKMARK annotated
        L{INITIAL_EVENTS_END_ANNOTATION}), C{timeout} (seconds until the consumer will end
        the watch).  The returned L{Watch} honours flow control: a consumer that pauses it for
        too long has it closed (the client re-lists).
        """


def strip_resource_version(obj: dict) -> dict:
    """Return a shallow copy of C{obj} whose metadata has no C{resourceVersion} (for storing)."""
    meta = obj.get("metadata")
    if not meta or "resourceVersion" not in meta:
        return obj
    out = dict(obj)
    out["metadata"] = {k: v for k, v in meta.items() if k != "resourceVersion"}
    return out


def with_resource_version(obj: dict, revision: int) -> dict:
    """Set C{metadata.resourceVersion} to C{str(revision)} in place; return C{obj}."""
    obj.setdefault("metadata", {})["resourceVersion"] = str(revision)
    return obj
