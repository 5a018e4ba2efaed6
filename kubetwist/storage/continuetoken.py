# -*- test-case-name: tests.storage.test_continuetoken -*-
"""
What both key-value backends share: upstream C{k8s.io/apiserver/pkg/storage} (C{continue.go},
C{interfaces.go} C{ValidateListOptions}/C{PrepareKey}) and the backend-independent half of
C{pkg/storage/etcd3/store.go} (C{GetList} paging, C{GuaranteedUpdate}, C{conditionalDelete}) and
C{watcher.go} (event filtering).

L{KVStorageBase} implements L{IStorage} on top of five primitives a backend provides (a point
read, a range read at a revision, an optimistic put, an optimistic delete, a watch); the
algorithms above them (retry loops, predicate-filtered paging, continue tokens, resourceVersion
checks) are written once here so both backends behave identically.
"""

from __future__ import annotations

import base64
import binascii
import inspect
import json
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Optional

import orjson
from twisted.internet.defer import Deferred

from kubetwist.runtime.errors import new_bad_request, new_resource_expired
from kubetwist.storage.interfaces import (
    EVERYTHING,
    InvalidContinueError,
    KeyExistsError,
    KeyNotFoundError,
    ListResult,
    Preconditions,
    ResourceVersionExpiredError,
    SelectionPredicate,
    StorageError,
    TooLargeResourceVersionError,
    Watch,
    WatchEvent,
    strip_resource_version,
    with_resource_version,
)

#: Upstream C{maxLimit}: the largest page a filtered list asks the backend for.
MAX_LIMIT = 10000

#: Upstream etcd3 C{expired}: the message of an exact list at a compacted revision.
LIST_EXPIRED_MESSAGE = "The resourceVersion for the provided list is too old."

#: Upstream etcd3 C{inconsistentContinue}: the message of a continue at a compacted revision.
INCONSISTENT_CONTINUE_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list."
)


class InvalidResourceVersionError(InvalidContinueError):
    """
    A resourceVersion that is not a decimal revision (upstream answers 400 BadRequest
    C{invalid resource version: ...}); a subclass of L{InvalidContinueError} so the API maps it
    to 400 the same way.
    """


class CompactedError(StorageError):
    """Backend primitive failure: the requested revision was compacted (C{revision}: compact)."""


class FutureRevisionError(StorageError):
    """Backend primitive failure: the requested revision is newer than the store's."""


# --- keys ----------------------------------------------------------------------------------------

def normalize_prefix(prefix: str) -> str:
    """C{"/registry/"} or C{"registry"} -> C{"/registry"}; C{""} or C{"/"} -> C{""}."""
    stripped = prefix.strip("/")
    return "/" + stripped if stripped else ""


def prepare_key(prefix: str, key: str, recursive: bool = False) -> str:
    """
    The backend key of caller key C{key} (upstream C{storage.PrepareKey} plus the etcd prefix).

    C{prefix} is a L{normalize_prefix} result.  A key that already starts with C{prefix + "/"}
    is taken as-is (so C{/registry/pods/a} and C{/pods/a} name the same key under the default
    prefix); otherwise C{prefix} is prepended.  C{recursive} appends a C{/} when missing, so
    C{/pods/a} never matches C{/pods/ab/x}.

    @raise ValueError: for empty keys and keys with C{.} or C{..} segments (upstream
        C{invalid key: "..."} / C{empty key: "..."}).
    """
    if key in ("..", ".") or key.startswith(("../", "./")) or key.endswith(("/..", "/.")) \
            or "/../" in key or "/./" in key:
        raise ValueError(f"invalid key: {json.dumps(key)}")
    if key in ("", "/"):
        raise ValueError(f"empty key: {json.dumps(key)}")
    if not key.startswith("/"):
        key = "/" + key
    if recursive and not key.endswith("/"):
        key += "/"
    if prefix and not (key.startswith(prefix + "/")):
        key = prefix + key
    return key


def prefix_range_end(prefix: bytes) -> bytes:
    """etcd's C{GetPrefixRangeEnd}: the smallest key greater than every key starting C{prefix}."""
    end = bytearray(prefix)
    for i in range(len(end) - 1, -1, -1):
        if end[i] < 0xFF:
            end[i] += 1
            return bytes(end[: i + 1])
    return b"\x00"  # whole keyspace


def key_bytes(key: str) -> bytes:
    """Encode a key for a backend (UTF-8; invalid surrogates round-trip)."""
    return key.encode("utf-8", "surrogateescape")


def key_text(raw: bytes) -> str:
    """Decode a backend key (inverse of L{key_bytes})."""
    return raw.decode("utf-8", "surrogateescape")


# --- continue tokens (upstream storage/continue.go) ------------------------------------------------

def _go_json(value: dict) -> bytes:
    """C{json.Marshal}'s bytes for a flat dict of str/int: compact, HTML-escaped, UTF-8."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text.encode("utf-8", "surrogateescape")


def _go_path_clean(path: str) -> str:
    """Go's C{path.Clean} for an absolute path."""
    out: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if out:
                out.pop()
            continue
        out.append(part)
    return "/" + "/".join(out)


def encode_continue(key: str, key_prefix: str, resource_version: int) -> str:
    """
    Upstream C{EncodeContinue}: unpadded URL-safe base64 of
    C{{"v":"meta.k8s.io/v1","rv":<int>,"start":"<key without key_prefix>"}}.

    @raise ValueError: C{key} does not start with C{key_prefix}.
    """
    if not key_prefix or not key.startswith(key_prefix):
        raise ValueError("unable to encode next field: the key and key prefix do not match")
    token = {"v": "meta.k8s.io/v1", "rv": resource_version, "start": key[len(key_prefix):]}
    return base64.urlsafe_b64encode(_go_json(token)).rstrip(b"=").decode("ascii")


def decode_continue(token: str, key_prefix: str) -> tuple[str, int]:
    """
    Upstream C{DecodeContinue}: the absolute start key and the revision of C{token}.

    @raise InvalidContinueError: with upstream's C{continue key is not valid...} message.
    """
    generic = "continue key is not valid"
    try:
        raw = token.encode("ascii")
        raw = raw.replace(b"+", b"-").replace(b"/", b"_").rstrip(b"=")
        data = base64.urlsafe_b64decode(raw + b"=" * (-len(raw) % 4))
        parsed = json.loads(data.decode("utf-8", "surrogateescape"))
        if not isinstance(parsed, dict):
            raise ValueError("not an object")
    except (UnicodeError, binascii.Error, ValueError) as e:
        raise InvalidContinueError(message=f"{generic}: {e}") from None
    version = parsed.get("v", "")
    rv = parsed.get("rv", 0)
    start = parsed.get("start", "")
    if not isinstance(rv, int) or isinstance(rv, bool) or not isinstance(start, str):
        raise InvalidContinueError(message=f"{generic}: malformed token")
    if version != "meta.k8s.io/v1":
        raise InvalidContinueError(
            message=f"{generic}: server does not recognize this encoded version {version}"
        )
    if rv == 0:
        raise InvalidContinueError(
            message=f"{generic}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        )
    if not start:
        raise InvalidContinueError(
            message=f"{generic}: encoded start key empty (version meta.k8s.io/v1)"
        )
    key = start if start.startswith("/") else "/" + start
    if _go_path_clean(key) != key:
        raise InvalidContinueError(message=f"{generic}: {start}")
    return key_prefix + key[1:], rv


# --- resourceVersion and list options -------------------------------------------------------------

def parse_resource_version(resource_version: str) -> int:
    """
    Upstream C{APIObjectVersioner.ParseResourceVersion}: C{""} -> 0, C{"N"} -> N.

    @raise InvalidResourceVersionError: not a non-negative decimal integer.
    """
    if not resource_version:
        return 0
    if resource_version.isascii() and resource_version.isdigit():
        return int(resource_version)
    quoted = json.dumps(resource_version)
    raise InvalidResourceVersionError(
        message=(
            f"invalid resource version: resourceVersion: Invalid value: {quoted}: "
            f"strconv.ParseUint: parsing {quoted}: invalid syntax"
        )
    )


def too_large_error(minimum: int, current: int) -> TooLargeResourceVersionError:
    """Upstream C{NewTooLargeResourceVersionError} (message C{Too large resource version: N, current: M})."""
    return TooLargeResourceVersionError(
        revision=current,
        message=f"Too large resource version: {minimum}, current: {current}",
    )


def validate_list_options(
    key_prefix: str, recursive: bool, resource_version: str, resource_version_match: str,
    limit: int, continue_token: str,
) -> tuple[int, str, bool]:
    """
    Upstream C{storage.ValidateListOptions}.

    @return: C{(with_rev, continue_key, from_continue)}: the revision to read at (0: latest),
        the absolute key to resume from (C{""}: start of the prefix), and whether a continue
        token was given.
    @raise InvalidContinueError: bad token (message prefixed C{invalid continue token: }) or a
        resourceVersion given together with a continue token.
    @raise InvalidResourceVersionError: bad resourceVersion or match.
    """
    if recursive and continue_token:
        try:
            continue_key, continue_rv = decode_continue(continue_token, key_prefix)
        except InvalidContinueError as e:
            raise InvalidContinueError(message=f"invalid continue token: {e}") from None
        if resource_version not in ("", "0"):
            raise InvalidContinueError(
                message="specifying resource version is not allowed when using continue"
            )
        return (continue_rv if continue_rv > 0 else 0), continue_key, True
    if not resource_version:
        return 0, "", False
    parsed = parse_resource_version(resource_version)
    if resource_version_match == "NotOlderThan":
        return 0, "", False
    if resource_version_match == "Exact":
        return parsed, "", False
    if resource_version_match == "":
        if recursive and limit > 0 and parsed > 0:
            return parsed, "", False
        return 0, "", False
    raise InvalidResourceVersionError(
        message=f"unknown ResourceVersionMatch value: {resource_version_match}"
    )


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
    else the store's), C{current} the key's current value when it failed (L{None}: missing).
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
    C{predicate} sees, or L{None}.  A modification that stops matching is DELETED (the old
    object), one that starts matching is ADDED; every object carries the event's revision.
    """
    if event.is_deleted:
        if event.prev_value is None:
            return None
        old = decode_object(event.prev_value, event.revision)
        return WatchEvent("DELETED", old) if predicate.matches(old) else None
    current = decode_object(event.value or b"{}", event.revision)
    if event.is_created:
        return WatchEvent("ADDED", current) if predicate.matches(current) else None
    if predicate.empty():
        return WatchEvent("MODIFIED", current)
    current_passes = predicate.matches(current)
    old = decode_object(event.prev_value, event.revision) if event.prev_value is not None else None
    old_passes = old is not None and predicate.matches(old)
    if current_passes and old_passes:
        return WatchEvent("MODIFIED", current)
    if current_passes:
        return WatchEvent("ADDED", current)
    if old_passes:
        return WatchEvent("DELETED", old)  # type: ignore[arg-type]
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


# --- the shared IStorage implementation ---------------------------------------------------------

class KVStorageBase:
    """
    L{IStorage} over an MVCC key-value backend (upstream etcd3 C{store}).

    Subclasses set C{name} and implement the primitives C{_get_kv}, C{_range}, C{_put},
    C{_delete_kv}, C{_count} and C{watch}; all revisions are ints, keys absolute strings.

    Retry semantics (upstream): C{guaranteed_update} and C{delete} read the key, compute, then
    compare-and-swap on the key's mod revision; a failed swap returns the current value, and
    the loop re-runs C{try_update}/preconditions/C{validate_deletion} against it, indefinitely.
    """

    name = "kv"

    def __init__(self, prefix: str = "/registry") -> None:
        self._prefix = normalize_prefix(prefix)

    # primitives ---------------------------------------------------------------------------
    async def _get_kv(self, key: str) -> tuple[Optional[KeyValue], int]:
        """Fire with C{(kv or None, store revision)} for the latest state of C{key}."""
        raise NotImplementedError

    async def _range(self, start: str, end: str, revision: int, limit: int) -> RangeChunk:
        """
        Read keys in C{[start, end)} at C{revision} (0: latest), at most C{limit} (0: all).

        @raise CompactedError: C{revision} compacted.
        @raise FutureRevisionError: C{revision} newer than the store.
        """
        raise NotImplementedError

    async def _put(self, key: str, value: bytes, expected_mod_revision: int,
                   get_on_failure: bool) -> TxnResult:
        """Put if the key's mod revision is C{expected_mod_revision} (0: key absent)."""
        raise NotImplementedError

    async def _delete_kv(self, key: str, expected_mod_revision: int) -> TxnResult:
        """Delete if the key's mod revision is C{expected_mod_revision}; return current on failure."""
        raise NotImplementedError

    async def _count(self, start: str, end: str) -> int:
        raise NotImplementedError

    async def _current_revision(self) -> int:
        raise NotImplementedError

    # helpers ------------------------------------------------------------------------------
    def _key(self, key: str, recursive: bool = False) -> str:
        try:
            return prepare_key(self._prefix, key, recursive)
        except ValueError as e:
            raise StorageError(key, message=str(e)) from None

    @staticmethod
    def _range_end(key_prefix: str) -> str:
        return key_text(prefix_range_end(key_bytes(key_prefix)))

    @staticmethod
    def _state(kv: Optional[KeyValue]) -> _State:
        if kv is None:
            return _State(None)
        return _State(decode_object(kv.value, kv.mod_revision), kv.mod_revision, kv.value)

    async def _current_state(self, key: str, ignore_not_found: bool) -> _State:
        kv, _ = await self._get_kv(key)
        if kv is None and not ignore_not_found:
            raise KeyNotFoundError(key)
        return self._state(kv)

    # IStorage -----------------------------------------------------------------------------
    def get(self, key: str, resource_version: str = "", ignore_not_found: bool = False) -> Deferred:
        return Deferred.fromCoroutine(self._get(key, resource_version, ignore_not_found))

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
        return decode_object(kv.value, kv.mod_revision)

    def create(self, key: str, obj: dict) -> Deferred:
        return Deferred.fromCoroutine(self._create(key, obj))

    async def _create(self, key: str, obj: dict) -> dict:
        full = self._key(key)
        data = encode_object(obj)
        result = await self._put(full, data, 0, False)
        if not result.succeeded:
            raise KeyExistsError(full)
        return decode_object(data, result.revision)

    def guaranteed_update(self, key: str, try_update: Callable,
                          preconditions: Optional[Preconditions] = None,
                          ignore_not_found: bool = False) -> Deferred:
        return Deferred.fromCoroutine(
            self._guaranteed_update(key, try_update, preconditions, ignore_not_found)
        )

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
            if state.data is not None and data == state.data:
                return decode_object(state.data, state.rev)
            result = await self._put(full, data, state.rev, True)
            if not result.succeeded:
                if result.current is None and not ignore_not_found:
                    raise KeyNotFoundError(full)
                state = self._state(result.current)
                continue
            return decode_object(data, result.revision)

    def delete(self, key: str, preconditions: Optional[Preconditions] = None,
               validate_deletion: Optional[Callable] = None) -> Deferred:
        return Deferred.fromCoroutine(self._delete(key, preconditions, validate_deletion))

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
        return Deferred.fromCoroutine(self._get_list(
            key, recursive, resource_version, resource_version_match, limit, continue_token,
            predicate,
        ))

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
                obj = decode_object(kv.value, kv.mod_revision)
                if predicate.matches(obj):
                    items.append(obj)
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
        return ListResult(items, str(with_rev), token, remaining)

    def _list_compacted(self, error: CompactedError, from_continue: bool, start: str,
                        key_prefix: str) -> ResourceVersionExpiredError:
        if not from_continue:
            return ResourceVersionExpiredError(
                key_prefix, error.revision, message=LIST_EXPIRED_MESSAGE
            )
        expired = ResourceVersionExpiredError(
            key_prefix, error.revision, message=INCONSISTENT_CONTINUE_MESSAGE
        )
        # upstream puts a token for the rest at the latest revision (rv -1) into the Status
        expired.continue_token = encode_continue(start, key_prefix, -1)  # type: ignore[attr-defined]
        return expired

    def count(self, key: str) -> Deferred:
        full = self._key(key, recursive=True)
        return Deferred.fromCoroutine(self._count(full, self._range_end(full)))

    def current_revision(self) -> Deferred:
        return Deferred.fromCoroutine(self._current_revision())

    def _watch_range(self, key: str, recursive: bool) -> tuple[str, Optional[str]]:
        """C{(start, end)} of a watch; C{end} is L{None} for a single key."""
        if recursive:
            full = self._key(key, recursive=True)
            return full, self._range_end(full)
        return self._key(key), None
