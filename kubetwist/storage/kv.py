# -*- test-case-name: tests.storage.test_sqlite -*-
"""
The shared IStorage implementation over an MVCC key-value backend: upstream
C{k8s.io/apiserver/pkg/storage/etcd3/store.go} (get, list with paging, create,
guaranteed_update, delete, count) written once for the etcd3 and SQLite backends, which
provide only the primitives of L{KVStorageBase}.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Optional

import orjson
from twisted.internet.defer import Deferred

from kubetwist.runtime.errors import new_bad_request, new_resource_expired

#: Upstream C{maxLimit}: the largest page a filtered list asks the backend for.
from kubetwist.storage.continuetoken import (
    INCONSISTENT_CONTINUE_MESSAGE,
    LIST_EXPIRED_MESSAGE,
    MAX_LIMIT,
    CompactedError,
    FutureRevisionError,
    encode_continue,
    key_bytes,
    key_text,
    normalize_prefix,
    parse_resource_version,
    prefix_range_end,
    prepare_key,
    too_large_error,
    validate_list_options,
)
from kubetwist.storage.interfaces import (
    EVERYTHING,
    KeyExistsError,
    KeyNotFoundError,
    ListResult,
    Preconditions,
    ResourceVersionExpiredError,
    SelectionPredicate,
    StorageError,
    Watch,
    WatchEvent,
    strip_resource_version,
    with_resource_version,
)
from kubetwist.storage.metrics import timed as _timed
from kubetwist.storage.value.transformer import InternalError, TransformError, quote

# --- backend primitives' shapes -------------------------------------------------------------------

@dataclass
class KeyValue:
    """One stored key: C{key} (absolute), C{value} (bytes), revisions as ints."""

    key: str
    value: bytes
    mod_revision: int
    create_revision: int = 0


@dataclass
class RangeChunk:
    """
    One range read: C{kvs} in key order, C{count} (keys in the whole range from its start,
    regardless of the limit), C{revision} the revision read at.
    """

    kvs: list[KeyValue]
    count: int
    revision: int


@dataclass
class TxnResult:
    """
    An optimistic write: C{succeeded}, C{revision} (the write's revision when it succeeded,
    else the store's), C{current} the key's current value when it failed (C{None}: missing).
    """

    succeeded: bool
    revision: int
    current: Optional[KeyValue] = None


@dataclass
class RawEvent:
    """Upstream etcd3 C{event}: one change read from the backend, before filtering."""

    key: str
    revision: int
    value: Optional[bytes]
    prev_value: Optional[bytes]
    is_created: bool = False
    is_deleted: bool = False


def decode_object(value: bytes, revision: int) -> dict:
    """The stored JSON C{value} as a dict with C{metadata.resourceVersion = str(revision)}."""
    return with_resource_version(orjson.loads(value), revision)


def encode_object(obj: dict) -> bytes:
    """The bytes stored for C{obj}: its JSON without C{metadata.resourceVersion}."""
    return orjson.dumps(strip_resource_version(obj))


def transform_event(event: RawEvent, predicate: SelectionPredicate) -> Optional[WatchEvent]:
    """
    Upstream etcd3 C{watchChan.transform}: a L{RawEvent} as the L{WatchEvent} a watcher with
    C{predicate} sees, or C{None}.  A modification that stops matching is DELETED (the old
    object), one that starts matching is ADDED; every object carries the event's revision.
    """
    if event.is_deleted:
        if event.prev_value is None:
            return None
        old = decode_object(event.prev_value, event.revision)
        return WatchEvent("DELETED", old, event.key) if predicate.matches(old) else None
    current = decode_object(event.value or b"{}", event.revision)
    if event.is_created:
        return WatchEvent("ADDED", current, event.key) if predicate.matches(current) else None
    if predicate.empty():
        return WatchEvent("MODIFIED", current, event.key)
    current_passes = predicate.matches(current)
    old = decode_object(event.prev_value, event.revision) if event.prev_value is not None else None
    old_passes = old is not None and predicate.matches(old)
    if current_passes and old_passes:
        return WatchEvent("MODIFIED", current, event.key)
    if current_passes:
        return WatchEvent("ADDED", current, event.key)
    if old_passes:
        return WatchEvent("DELETED", old, event.key)  # type: ignore[arg-type]
    return None


def expired_watch_status(resource_version: int, compact_revision: int) -> dict:
    """The ERROR event object of a watch from a compacted revision (410 C{Expired})."""
    return new_resource_expired(
        f"too old resource version: {resource_version} ({compact_revision})"
    ).status


def bad_request_status(message: str) -> dict:
    """The ERROR event object of a watch with invalid options (400 C{BadRequest})."""
    return new_bad_request(message).status


def error_watch(status: dict) -> Watch:
    """A L{Watch} that delivers one ERROR event with C{status} and closes."""
    w = Watch()
    w.send(WatchEvent("ERROR", status))
    w.close()
    return w


async def maybe_await(value: Any) -> Any:
    """Await C{value} if it is a Deferred or awaitable, else return it."""
    if isinstance(value, Deferred) or inspect.isawaitable(value):
        return await value
    return value


@dataclass
class _State:
    """Upstream C{objState}: the decoded object, its mod revision and stored bytes."""

    obj: Optional[dict]
    rev: int = 0
    data: Optional[bytes] = None
    stale: bool = False


# --- the shared IStorage implementation ---------------------------------------------------------

class KVStorageBase(ABC):
    """
    L{IStorage} over an MVCC key-value backend (upstream etcd3 C{store}).

    Subclasses set C{name} and implement the primitives C{_get_kv}, C{_range}, C{_put},
    C{_delete_kv}, C{_count} and C{watch}; all revisions are ints, keys absolute strings.

    Retry semantics (upstream): C{guaranteed_update} and C{delete} read the key, compute, then
    compare-and-swap on the key's mod revision; a failed swap returns the current value, and
    the loop re-runs C{try_update}/preconditions/C{validate_deletion} against it, indefinitely.
    """

    name = "kv"

    #: Encryption at rest (upstream C{value.Transformer} per resource): a
    #: L{kubetwist.storage.value.ResourceTransformers} applied to every value written to and
    #: read from the backend, or C{None} to store values as they are.
    transformer: Any = None

    def __init__(self, prefix: str = "/registry") -> None:
        self._prefix = normalize_prefix(prefix)

    # value transformation ---------------------------------------------------------------------
    def _from_storage(self, key: str, value: bytes, listing: bool = False) -> tuple[bytes, bool]:
        """
        C{(plaintext, stale)} of the stored C{value} of backend C{key}.

        @raise InternalError: it cannot be decrypted (500 C{InternalError}; in a list
            C{unable to transform key "<key>": <reason>}, as upstream).
        """
        if self.transformer is None:
            return value, False
        try:
            return self.transformer.from_storage(key, value, self._prefix)
        except TransformError as e:
            reason = f"unable to transform key {quote(key)}: {e}" if listing else str(e)
            raise InternalError(key, reason) from None

    def _to_storage(self, key: str, data: bytes) -> bytes:
        """The bytes the backend keeps for C{data} at C{key} (L{InternalError} on failure)."""
        if self.transformer is None:
            return data
        try:
            return self.transformer.to_storage(key, data, self._prefix)
        except TransformError as e:
            raise InternalError(key, str(e)) from None

    def event_from_storage(self, event: RawEvent) -> RawEvent:
        """
        C{event} with its values decrypted, for L{transform_event} (the same event when there
        is no transformer).  Backends call it on every event they read.

        @raise InternalError: a value cannot be decrypted (the watch ends with an ERROR event).
        """
        if self.transformer is None:
            return event
        value = prev = None
        if event.value is not None:
            value = self._from_storage(event.key, event.value)[0]
        if event.prev_value is not None:
            prev = self._from_storage(event.key, event.prev_value)[0]
        return RawEvent(event.key, event.revision, value, prev, event.is_created,
                        event.is_deleted)

    # primitives ---------------------------------------------------------------------------
    @abstractmethod
    async def _get_kv(self, key: str) -> tuple[Optional[KeyValue], int]:
        """Fire with C{(kv or None, store revision)} for the latest state of C{key}."""
        ...

    @abstractmethod
    async def _range(self, start: str, end: str, revision: int, limit: int) -> RangeChunk:
        """
        Read keys in C{[start, end)} at C{revision} (0: latest), at most C{limit} (0: all).

        @raise CompactedError: C{revision} compacted.
        @raise FutureRevisionError: C{revision} newer than the store.
        """
        ...

    @abstractmethod
    async def _put(self, key: str, value: bytes, expected_mod_revision: int,
                   get_on_failure: bool) -> TxnResult:
        """Put if the key's mod revision is C{expected_mod_revision} (0: key absent)."""
        ...

    @abstractmethod
    async def _delete_kv(self, key: str, expected_mod_revision: int) -> TxnResult:
        """Delete if the key's mod revision is C{expected_mod_revision}; return current on
        failure."""
        ...

    @abstractmethod
    async def _count(self, start: str, end: str) -> int:
        ...

    @abstractmethod
    async def _current_revision(self) -> int:
        ...

    # helpers ------------------------------------------------------------------------------
    def _key(self, key: str, recursive: bool = False) -> str:
        try:
            return prepare_key(self._prefix, key, recursive)
        except ValueError as e:
            raise StorageError(key, message=str(e)) from None

    @staticmethod
    def _range_end(key_prefix: str) -> str:
        return key_text(prefix_range_end(key_bytes(key_prefix)))

    def _state(self, kv: Optional[KeyValue]) -> _State:
        if kv is None:
            return _State(None)
        data, stale = self._from_storage(kv.key, kv.value)
        return _State(decode_object(data, kv.mod_revision), kv.mod_revision, data, stale)

    async def _current_state(self, key: str, ignore_not_found: bool) -> _State:
        kv, _ = await self._get_kv(key)
        if kv is None and not ignore_not_found:
            raise KeyNotFoundError(key)
        return self._state(kv)

    # IStorage -----------------------------------------------------------------------------
    def get(self, key: str, resource_version: str = "", ignore_not_found: bool = False) -> Deferred:
        return _timed("get", key, Deferred.fromCoroutine(
            self._get(key, resource_version, ignore_not_found)))

    async def _get(self, key: str, resource_version: str, ignore_not_found: bool):
        full = self._key(key)
        minimum = parse_resource_version(resource_version)
        kv, revision = await self._get_kv(full)
        if minimum > revision:
            raise too_large_error(minimum, revision)
        if kv is None:
            if ignore_not_found:
                return None
            raise KeyNotFoundError(full)
        return decode_object(self._from_storage(full, kv.value)[0], kv.mod_revision)

    def create(self, key: str, obj: dict) -> Deferred:
        return _timed("create", key, Deferred.fromCoroutine(self._create(key, obj)))

    async def _create(self, key: str, obj: dict) -> dict:
        full = self._key(key)
        data = encode_object(obj)
        result = await self._put(full, self._to_storage(full, data), 0, False)
        if not result.succeeded:
            raise KeyExistsError(full)
        return decode_object(data, result.revision)

    def guaranteed_update(self, key: str, try_update: Callable,
                          preconditions: Optional[Preconditions] = None,
                          ignore_not_found: bool = False) -> Deferred:
        return _timed("update", key, Deferred.fromCoroutine(
            self._guaranteed_update(key, try_update, preconditions, ignore_not_found)
        ))

    async def _guaranteed_update(self, key, try_update, preconditions, ignore_not_found):
        full = self._key(key)
        state = await self._current_state(full, ignore_not_found)
        while True:
            if preconditions is not None:
                preconditions.check(full, state.obj or {})
            current = orjson.loads(state.data) if state.data is not None else None
            if current is not None:
                with_resource_version(current, state.rev)
            updated = await maybe_await(try_update(current))
            data = encode_object(updated)
            if state.data is not None and data == state.data and not state.stale:
                return decode_object(state.data, state.rev)
            result = await self._put(full, self._to_storage(full, data), state.rev, True)
            if not result.succeeded:
                if result.current is None and not ignore_not_found:
                    raise KeyNotFoundError(full)
                state = self._state(result.current)
                continue
            return decode_object(data, result.revision)

    def delete(self, key: str, preconditions: Optional[Preconditions] = None,
               validate_deletion: Optional[Callable] = None) -> Deferred:
        return _timed("delete", key, Deferred.fromCoroutine(
            self._delete(key, preconditions, validate_deletion)))

    async def _delete(self, key, preconditions, validate_deletion):
        full = self._key(key)
        state = await self._current_state(full, False)
        while True:
            if preconditions is not None:
                preconditions.check(full, state.obj)  # type: ignore[arg-type]
            if validate_deletion is not None:
                await maybe_await(validate_deletion(decode_object(state.data, state.rev)))
            result = await self._delete_kv(full, state.rev)
            if not result.succeeded:
                if result.current is None:
                    raise KeyNotFoundError(full)
                state = self._state(result.current)
                continue
            return decode_object(state.data, result.revision)  # type: ignore[arg-type]

    def get_list(self, key: str, recursive: bool = True, resource_version: str = "",
                 resource_version_match: str = "", limit: int = 0, continue_token: str = "",
                 predicate: SelectionPredicate = EVERYTHING) -> Deferred:
        return _timed("list", key, Deferred.fromCoroutine(self._get_list(
            key, recursive, resource_version, resource_version_match, limit, continue_token,
            predicate,
        )))

    async def _get_list(self, key, recursive, resource_version, resource_version_match, limit,
                        continue_token, predicate) -> ListResult:
        key_prefix = self._key(key, recursive)
        limit = max(0, int(limit or 0))
        with_rev, continue_key, from_continue = validate_list_options(
            key_prefix, recursive, resource_version, resource_version_match, limit,
            continue_token,
        )
        minimum = 0 if from_continue else parse_resource_version(resource_version)
        paging = limit > 0 and recursive
        items: list[dict] = []
        item_keys: list[str] = []
        last_key: Optional[str] = None
        has_more = False
        count = 0
        start = continue_key or key_prefix
        end = self._range_end(key_prefix)
        fetch_limit = limit if paging else 0
        while True:
            try:
                if recursive:
                    chunk = await self._range(start, end, with_rev, fetch_limit)
                else:
                    chunk = await self._range(key_prefix, key_prefix + "\x00", with_rev, 0)
            except CompactedError as e:
                raise self._list_compacted(e, from_continue, start, key_prefix) from None
            except FutureRevisionError:
                current = await self._current_revision()
                raise too_large_error(with_rev, current) from None
            if with_rev == 0:
                if minimum > chunk.revision:
                    raise too_large_error(minimum, chunk.revision)
                with_rev = chunk.revision
            chunk_more = len(chunk.kvs) < chunk.count
            count = chunk.count
            limit_reached = False
            for kv in chunk.kvs:
                if paging and len(items) >= limit:
                    limit_reached = True
                    break
                last_key = kv.key
                obj = decode_object(self._from_storage(kv.key, kv.value, True)[0], kv.mod_revision)
                if predicate.matches(obj):
                    items.append(obj)
                    item_keys.append(kv.key)
            has_more = chunk_more or limit_reached
            if limit_reached or not chunk_more or not chunk.kvs:
                break
            if paging and len(items) >= limit:
                break
            start = chunk.kvs[-1].key + "\x00"
            if fetch_limit < MAX_LIMIT:
                fetch_limit = min(fetch_limit * 2, MAX_LIMIT)
        token = ""
        remaining: Optional[int] = None
        if has_more and last_key is not None:
            token = encode_continue(last_key + "\x00", key_prefix, with_rev)
            if predicate.empty():
                remaining = count - limit
        return ListResult(items, str(with_rev), token, remaining, item_keys)

    def _list_compacted(self, error: CompactedError, from_continue: bool, start: str,
                        key_prefix: str) -> ResourceVersionExpiredError:
        if not from_continue:
            return ResourceVersionExpiredError(
                key_prefix, error.revision, message=LIST_EXPIRED_MESSAGE
            )
        # upstream puts a token for the rest at the latest revision (rv -1) into the Status
        return ResourceVersionExpiredError(
            key_prefix, error.revision, message=INCONSISTENT_CONTINUE_MESSAGE,
            continue_token=encode_continue(start, key_prefix, -1),
        )

    def count(self, key: str) -> Deferred:
        full = self._key(key, recursive=True)
        return _timed("count", key, Deferred.fromCoroutine(
            self._count(full, self._range_end(full))))

    def current_revision(self) -> Deferred:
        return Deferred.fromCoroutine(self._current_revision())

    def _watch_range(self, key: str, recursive: bool) -> tuple[str, Optional[str]]:
        """C{(start, end)} of a watch; C{end} is C{None} for a single key."""
        if recursive:
            full = self._key(key, recursive=True)
            return full, self._range_end(full)
        return self._key(key), None
