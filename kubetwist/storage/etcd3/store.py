# -*- test-case-name: tests.storage.test_etcd3,tests.storage.test_etcd3_gateway -*-
"""
etcd v3 through its gRPC-JSON gateway: upstream C{k8s.io/apiserver/pkg/storage/etcd3}
(C{store.go}, C{watcher.go}) over the HTTP/JSON form of the C{etcdserverpb} API.

Wire rules of the gateway: keys and values are base64; int64 fields are JSON strings; zero values
are omitted from responses (C{succeeded} absent when a txn failed, C{kvs} absent when empty,
C{count} absent when 0, an event's C{type} absent for PUT).  Errors come back as
C{{"error": str, "message": str, "code": grpc-code}}.

Transactions are upstream's (C{OptimisticPut}/C{OptimisticDelete} of
C{k8s.io/apiserver/pkg/storage/etcd3} and etcd's C{client/v3/kubernetes}):
  - create: C{compare mod_revision(key) == 0 then put};
  - update: C{compare mod_revision(key) == rev then put else range(key)};
  - delete: C{compare mod_revision(key) == rev then delete_range(key, prev_kv) else range(key)}.

A watch is one long-lived C{POST /v3/watch} whose response body is newline-delimited JSON
C{{"result": WatchResponse}}; stopping the watch aborts that HTTP connection.

Faults, as etcd's C{clientv3} behaves under upstream's store: every unary call has a short
deadline (C{request_timeout}) and is tried on each endpoint in turn (the one that answered is
preferred afterwards; a change only while it was certainly not sent, so no txn is applied
twice); when none answers the call fails with L{UnreachableError} (the API's 503).
An established watch survives an etcd outage: it reconnects with exponential backoff on the
injected clock and resumes from the revision after the last one it delivered (or the last
progress notification), so no event is lost or repeated; only a compacted gap ends it, with the
410 C{Expired} ERROR.  A watch that cannot reach etcd when it starts ends at once with a 504
C{Timeout} ERROR.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson
from twisted.internet import error as ierror
from twisted.internet.defer import CancelledError, Deferred
from twisted.internet.defer import TimeoutError as DeferredTimeoutError
from twisted.internet.protocol import Protocol
from twisted.logger import Logger
from twisted.web import client as webclient
from zope.interface import implementer

from kubetwist.runtime.errors import new_internal_error, new_timeout
from kubetwist.storage.compaction import COMPACT_REV_KEY, CompactTxnResult, ICompactable
from kubetwist.storage.continuetoken import (
    CompactedError,
    FutureRevisionError,
    key_bytes,
    key_text,
    parse_resource_version,
)
from kubetwist.storage.etcd3.client import ResponseTooLarge
from kubetwist.storage.interfaces import (
    EVERYTHING,
    IStorage,
    SelectionPredicate,
    StorageError,
    UnreachableError,
    Watch,
    WatchEvent,
)
from kubetwist.storage.kv import (
    KeyValue,
    KVStorageBase,
    RangeChunk,
    RawEvent,
    TxnResult,
    bad_request_status,
    error_watch,
    expired_watch_status,
    transform_event,
)

_log = Logger()

#: Failures that mean "this endpoint cannot be reached": try the next one.
_CONNECTION_ERRORS = (
    ierror.ConnectError,
    ierror.DNSLookupError,
    ierror.TimeoutError,
    ierror.ConnectionLost,
    ierror.ConnectionClosed,
    CancelledError,
    DeferredTimeoutError,
    webclient.ResponseNeverReceived,
    webclient.ResponseFailed,
    webclient.RequestTransmissionFailed,
)

#: Failures after which a request certainly never reached etcd: only then is a change (a txn,
#: a compaction) tried on the next endpoint, as C{clientv3}'s retry interceptor does
#: (C{isSafeRetryMutableRPC}); reads are tried on every endpoint.
_NOT_SENT_ERRORS = (ierror.ConnectError, ierror.DNSLookupError)

_COMPACTED = "required revision has been compacted"
_FUTURE = "required revision is a future revision"

#: gRPC codes after which etcd's client tries another member: C{Unavailable} (no leader,
#: server stopped, request timed out) and C{DeadlineExceeded}.
_UNAVAILABLE_CODES = (14, 4)
#: gRPC codes of a watch stream error that a reconnect cannot cure.
_FATAL_WATCH_CODES = (3, 7, 11, 12, 16)

#: Reconnect backoff of an established watch, in seconds: first delay, factor, ceiling.
WATCH_BACKOFF_INITIAL = 0.1
WATCH_BACKOFF_FACTOR = 2.0
WATCH_BACKOFF_MAX = 3.0

#: Upstream C{storagebackend.DefaultHealthcheckTimeout}, seconds.
HEALTHCHECK_TIMEOUT = 2.0


class EtcdError(StorageError):
    """
    An error answer of the gateway: C{code} is the gRPC code, C{message} etcd's message
    (e.g. C{etcdserver: mvcc: required revision has been compacted}).
    """

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        super().__init__(message=message)


def b64(data: bytes | str) -> str:
    """Base64 text of C{data} (str keys are UTF-8 encoded)."""
    if isinstance(data, str):
        data = key_bytes(data)
    return base64.b64encode(data).decode("ascii")


def unb64(text: str) -> bytes:
    return base64.b64decode(text)


def parse_kv(kv: dict) -> KeyValue:
    """A gateway C{mvccpb.KeyValue} (absent fields are zero) as a L{KeyValue}."""
    return KeyValue(
        key_text(unb64(kv.get("key", ""))),
        unb64(kv.get("value", "")),
        int(kv.get("mod_revision", 0)),
        int(kv.get("create_revision", 0)),
    )


def header_revision(response: dict) -> int:
    return int((response.get("header") or {}).get("revision", 0))


def compare_mod(key: str, revision: int) -> dict:
    """A C{Compare} of C{mod_revision(key) == revision}."""
    return {"target": "MOD", "key": b64(key), "mod_revision": str(revision), "result": "EQUAL"}


def compare_version(key: str, version: int) -> dict:
    """A C{Compare} of C{version(key) == version} (0: the key does not exist)."""
    return {"target": "VERSION", "key": b64(key), "version": str(version), "result": "EQUAL"}


@implementer(IStorage, ICompactable)
class Etcd3Storage(KVStorageBase):
    """
    L{IStorage} on etcd v3 through the gRPC-JSON gateway.

    @param reactor: for request timeouts (C{IReactorTime}).
    @param client: a L{kubetwist.storage.etcd3.client.GatewayClient} (unary calls through its
        C{unary}, watches through its C{post}), or a C{treq.HTTPClient} (or C{StubTreq}) for
        both; the store owns no pool of it.
    @param endpoints: base URLs such as C{http://127.0.0.1:2379}; on a connection failure the
        next one is tried, and the one that answered is preferred afterwards.
    @param prefix: prepended to caller keys (upstream C{--etcd-prefix}).
    @param request_timeout: seconds one attempt of a unary call (request and whole answer) may
        take on one endpoint before it counts as unreachable and the next endpoint is tried;
        also the deadline of a watch's connect.
    """

    name = "etcd"

    def __init__(self, reactor: Any, client: Any, endpoints: list[str],
                 prefix: str = "/registry", request_timeout: float = 5.0) -> None:
        super().__init__(prefix)
        if not endpoints:
            raise ValueError("at least one etcd endpoint is required")
        self._reactor = reactor
        self._client = client
        #: L{GatewayClient.unary} when the client has it, else calls go through C{post}
        self._unary = getattr(client, "unary", None)
        self._endpoints = [e.rstrip("/") for e in endpoints]
        self._current = 0
        self._timeout = request_timeout
        self._watches: set[_EtcdWatch] = set()
        #: the newest revision known to be compacted (by this process or, as read from
        #: C{compact_rev_key} or a watch, by another); 0 until known
        self.compact_revision = 0
        self._health_started: float | None = None
        self._health_error: Exception | None = UnreachableError(
            message="etcd client connection not yet established"
        )

    # -- HTTP ------------------------------------------------------------------------------
    def _endpoint_order(self) -> list[int]:
        n = len(self._endpoints)
        return [(self._current + i) % n for i in range(n)]

    async def _call(self, path: str, body: dict, timeout: float | None = None,
                    retry_unavailable: bool = False) -> dict:
        """
        POST C{body} as JSON to C{path} on the first endpoint that answers, each attempt
        bounded by C{timeout} seconds (default: the store's C{request_timeout}).

        @param retry_unavailable: also try the next endpoint when etcd answers C{Unavailable}
            or C{DeadlineExceeded} (only for calls that change nothing, as etcd's client);
            such a call is also sent again when a reused connection turns out closed.
        @raise UnreachableError: no endpoint answered in time (a change is tried on the next
            endpoint only when it was certainly not sent: a refused or failed connect).
        @raise EtcdError: etcd answered with an error.
        """
        data = orjson.dumps(body)
        last: BaseException | None = None
        unary = self._unary
        for index in self._endpoint_order():
            if unary is not None:
                request = unary(self._endpoints[index], path, data, retry_unavailable)
            else:
                request = Deferred.fromCoroutine(self._post(self._endpoints[index] + path, data))
            attempt = with_deadline(request, timeout or self._timeout, self._reactor)
            try:
                code, content = await attempt
            except _CONNECTION_ERRORS as e:
                last = e
                if retry_unavailable or isinstance(e, _NOT_SENT_ERRORS):
                    continue
                # a change that may have reached etcd is not sent to another member
                break
            except ResponseTooLarge as e:
                raise EtcdError(8, str(e)) from None
            try:
                parsed = orjson.loads(content) if content else {}
            except orjson.JSONDecodeError:
                raise EtcdError(2, f"etcd: unparseable answer (HTTP {code})") from None
            if not isinstance(parsed, dict):
                raise EtcdError(2, f"etcd: unexpected answer (HTTP {code})")
            if "error" in parsed or code != 200:
                message = parsed.get("message") or parsed.get("error") or f"HTTP {code}"
                error = EtcdError(_int(parsed.get("code", 2)), str(message))
                if error.code in _UNAVAILABLE_CODES:
                    if retry_unavailable:
                        last = error
                        continue
                    raise UnreachableError(message=f"etcd: {message}") from None
                self._current = index
                raise error
            self._current = index
            return parsed
        raise UnreachableError(
            message=f"etcd: no endpoint reachable ({', '.join(self._endpoints)}): "
            f"{_describe(last)}"
        )

    async def _post(self, url: str, data: bytes) -> tuple[int, bytes]:
        response = await self._client.post(
            url, data=data, headers={b"Content-Type": [b"application/json"]},
            reactor=self._reactor,
        )
        return response.code, await response.content()

    async def _range_call(self, body: dict) -> dict:
        try:
            return await self._call("/v3/kv/range", body, retry_unavailable=True)
        except EtcdError as e:
            text = str(e)
            if _COMPACTED in text:
                compacted = await self._compact_revision_hint()
                raise CompactedError(revision=compacted, message=text) from None
            if _FUTURE in text:
                raise FutureRevisionError(message=text) from None
            raise

    async def _compact_revision_hint(self) -> int:
        """etcd does not say where it compacted in range errors; 0 when unknown."""
        return 0

    # -- primitives ------------------------------------------------------------------------
    async def _get_kv(self, key: str) -> tuple[KeyValue | None, int]:
        response = await self._range_call({"key": b64(key)})
        kvs = response.get("kvs") or []
        return (parse_kv(kvs[0]) if kvs else None), header_revision(response)

    async def _range(self, start: str, end: str, revision: int, limit: int) -> RangeChunk:
        body: dict[str, Any] = {"key": b64(start), "range_end": b64(end)}
        if limit > 0:
            body["limit"] = str(limit)
        if revision > 0:
            body["revision"] = str(revision)
        response = await self._range_call(body)
        kvs = [parse_kv(kv) for kv in response.get("kvs") or []]
        return RangeChunk(kvs, int(response.get("count", 0)), header_revision(response))

    async def _txn(self, compare: dict, success: dict, failure: dict | None) -> TxnResult:
        body: dict[str, Any] = {"compare": [compare], "success": [success]}
        if failure is not None:
            body["failure"] = [failure]
        response = await self._call("/v3/kv/txn", body)
        revision = header_revision(response)
        if response.get("succeeded"):
            return TxnResult(True, revision)
        current = None
        for answer in response.get("responses") or []:
            kvs = (answer.get("response_range") or {}).get("kvs") or []
            if kvs:
                current = parse_kv(kvs[0])
        return TxnResult(False, revision, current)

    async def _put(self, key: str, value: bytes, expected_mod_revision: int,
                   get_on_failure: bool) -> TxnResult:
        return await self._txn(
            compare_mod(key, expected_mod_revision),
            {"request_put": {"key": b64(key), "value": b64(value)}},
            {"request_range": {"key": b64(key)}} if get_on_failure else None,
        )

    async def _delete_kv(self, key: str, expected_mod_revision: int) -> TxnResult:
        return await self._txn(
            compare_mod(key, expected_mod_revision),
            {"request_delete_range": {"key": b64(key), "prev_kv": True}},
            {"request_range": {"key": b64(key)}},
        )

    async def _count(self, start: str, end: str) -> int:
        response = await self._range_call(
            {"key": b64(start), "range_end": b64(end), "count_only": True}
        )
        return int(response.get("count", 0))

    async def _current_revision(self) -> int:
        response = await self._range_call({"key": b64(self._prefix or "/"), "count_only": True})
        return header_revision(response)

    # -- watch ------------------------------------------------------------------------------
    def watch(self, key: str, resource_version: str = "", recursive: bool = False,
              predicate: SelectionPredicate = EVERYTHING) -> Watch:
        """
        L{IStorage.watch} (upstream etcd3 C{watcher.Watch}): C{""}/C{"0"} lists first (ADDED
        events) and watches from that list's revision + 1; C{"N"} watches from N + 1.  A
        compacted start revision gives one ERROR (410 Expired) and the watch closes; a lost
        connection closes the watch.
        """
        try:
            revision = parse_resource_version(resource_version)
            start, end = self._watch_range(key, recursive)
        except StorageError as e:
            return error_watch(bad_request_status(str(e)))
        ew = _EtcdWatch(self, start, end, revision, predicate)
        self._watches.add(ew)
        ew.start()
        return ew.watch

    # -- extras ----------------------------------------------------------------------------
    def compact(self, revision: int) -> Deferred:
        """C{POST /v3/kv/compaction}; fires with C{revision}."""

        async def run() -> int:
            await self._call("/v3/kv/compaction", {"revision": str(revision), "physical": True})
            self.saw_compaction(revision)
            return revision

        return Deferred.fromCoroutine(run())

    def compact_txn(self, expected_version: int, revision: int) -> Deferred:
        """
        L{ICompactable.compact_txn}: upstream C{etcd3.Compact}'s transaction on the
        unprefixed key C{compact_rev_key} (one per etcd cluster, shared by every API server):
        C{compare version == expected_version then put str(revision) else get}.
        """

        async def run() -> CompactTxnResult:
            key = COMPACT_REV_KEY
            response = await self._call("/v3/kv/txn", {
                "compare": [compare_version(key, expected_version)],
                "success": [{"request_put": {"key": b64(key), "value": b64(str(revision))}}],
                "failure": [{"request_range": {"key": b64(key)}}],
            })
            current = header_revision(response)
            if response.get("succeeded"):
                return CompactTxnResult(True, expected_version + 1, current, revision)
            version, value = 0, 0
            for answer in response.get("responses") or []:
                kvs = (answer.get("response_range") or {}).get("kvs") or []
                if kvs:
                    version = _int(kvs[0].get("version", 0))
                    value = _int(unb64(kvs[0].get("value", "")).decode("ascii", "replace"))
            self.saw_compaction(value)
            return CompactTxnResult(False, version, current, value)

        return Deferred.fromCoroutine(run())

    def saw_compaction(self, revision: int) -> None:
        """Record that etcd was compacted at C{revision} (L{compact_revision} only grows)."""
        self.compact_revision = max(self.compact_revision, revision)

    def check_health(self) -> Deferred:
        """
        Upstream's etcd health probe (C{storagebackend/factory/etcd3.go}): a read of
        C{<prefix>/health} within 2 seconds, at most one probe per second; a rate-limited
        check answers with the last probe's result.  Fails with L{UnreachableError}
        (C{error getting data from etcd: ...}) while etcd cannot answer.
        """

        async def run() -> None:
            now = self._reactor.seconds()
            started = self._health_started
            if started is not None and now - started < HEALTHCHECK_TIMEOUT / 2:
                if self._health_error is not None:
                    raise self._health_error
                return
            self._health_started = now
            try:
                await self._call("/v3/kv/range", {"key": b64(self._prefix + "/health")},
                                 timeout=HEALTHCHECK_TIMEOUT, retry_unavailable=True)
            except (StorageError, *_CONNECTION_ERRORS) as e:
                reason = str(e)
                reason = reason.removeprefix("etcd: ")
                error = UnreachableError(message=f"error getting data from etcd: {reason}")
                if self._health_started == now:
                    self._health_error = error
                raise error from None
            if self._health_started == now:
                self._health_error = None

        return Deferred.fromCoroutine(run())

    def stop(self) -> Deferred:
        """Stop every watch (aborting their connections); the HTTP pool is the caller's."""
        for ew in list(self._watches):
            ew.watch.stop()
        self._watches.clear()
        return Deferred.fromCoroutine(_none())


def with_deadline(d: Deferred, seconds: float, clock: Any) -> Deferred:
    """
    C{d}, cancelled after C{seconds} on C{clock}; then it fails with
    C{twisted.internet.defer.TimeoutError} whatever the cancelled operation raised.
    """

    def timed_out(result: Any, timeout: float) -> Any:
        raise DeferredTimeoutError(f"no answer within {timeout}s")

    return d.addTimeout(seconds, clock, onTimeoutCancel=timed_out)


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _describe(error: BaseException | None) -> str:
    """A short text for a connection failure (the class name when it has no message)."""
    if error is None:
        return "no endpoint tried"
    if isinstance(error, (CancelledError, DeferredTimeoutError)):
        return "context deadline exceeded"
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class _EtcdWatch:
    """
    One etcd watch stream feeding one L{Watch}, reconnecting through outages.

    @ivar last_revision: every event up to this revision has been delivered (or skipped by the
        predicate); a reconnect asks etcd for the events from C{last_revision + 1}.
    @ivar established: a stream was opened once; from then on a lost connection reconnects
        instead of ending the watch.
    """

    def __init__(self, store: Etcd3Storage, start: str, end: str | None, revision: int,
                 predicate: SelectionPredicate) -> None:
        self.store = store
        self.start_key = start
        self.end_key = end
        self.revision = revision
        self.last_revision = revision
        self.predicate = predicate
        self.watch = Watch(on_stop=self._on_stop)
        self.established = False
        self.delay = WATCH_BACKOFF_INITIAL
        self._pending: Deferred | None = None
        self._transport: Any = None
        self._receiver: _LineReceiver | None = None
        self._timer: Any = None

    def start(self) -> None:
        self._go(self._run())

    def _go(self, coroutine: Any) -> None:
        d = Deferred.fromCoroutine(coroutine)
        d.addErrback(self._failed)

    def _on_stop(self) -> None:
        self.store._watches.discard(self)
        timer, self._timer = self._timer, None
        if timer is not None and timer.active():
            timer.cancel()
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.cancel()
        self._drop_transport()

    def _drop_transport(self) -> None:
        receiver, self._receiver = self._receiver, None
        if receiver is not None:
            receiver.owner = None
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.stopProducing()

    def _failed(self, failure: Any) -> None:
        if self.watch.ended:
            return
        if failure.check(UnreachableError, *_CONNECTION_ERRORS):
            if self.established:
                self._schedule_reconnect(failure.value)
                return
            _log.warn("etcd watch of {key} could not start: {reason}", key=self.start_key,
                      reason=str(failure.value))
            self.watch.send(WatchEvent("ERROR", new_timeout(
                "etcd is unreachable: the watch could not be started", 1).status))
        else:
            _log.failure("etcd watch of {key} failed", failure, key=self.start_key)
            self.watch.send(WatchEvent("ERROR", new_internal_error(str(failure.value)).status))
        self._close()

    def _close(self) -> None:
        self.store._watches.discard(self)
        self._drop_transport()
        self.watch.close()

    def _send(self, event: RawEvent) -> None:
        try:
            out = transform_event(self.store.event_from_storage(event), self.predicate)
        except Exception as e:  # noqa: BLE001 -- undecryptable value, raising predicate
            self.watch.send(WatchEvent("ERROR", new_internal_error(str(e)).status))
            self._close()
            return
        if out is not None:
            self.watch.send(out)

    async def _run(self) -> None:
        if self.revision == 0:
            end = self.end_key if self.end_key is not None else self.start_key + "\x00"
            chunk = await self._await(self.store._range(self.start_key, end, 0, 0))
            if self.watch.ended:
                return
            for kv in chunk.kvs:
                self._send(RawEvent(kv.key, kv.mod_revision, kv.value, None, is_created=True))
            self.last_revision = chunk.revision
        await self._connect()

    async def _connect(self) -> None:
        """Open the stream from C{last_revision + 1} on the first endpoint that answers."""
        store = self.store
        create: dict[str, Any] = {
            "key": b64(self.start_key),
            "start_revision": str(self.last_revision + 1),
            "prev_kv": True,
            "progress_notify": True,
        }
        if self.end_key is not None:
            create["range_end"] = b64(self.end_key)
        body = orjson.dumps({"create_request": create})
        last: BaseException | None = None
        for index in store._endpoint_order():
            if self.watch.ended:
                return
            d = store._client.post(
                store._endpoints[index] + "/v3/watch", data=body,
                headers={b"Content-Type": [b"application/json"]},
                unbuffered=True, reactor=store._reactor,
            )
            d = with_deadline(d, store._timeout, store._reactor)
            try:
                response = await self._await(d)
            except _CONNECTION_ERRORS as e:
                if self.watch.ended:
                    return
                last = e
                continue
            if self.watch.ended:
                return
            self.established = True
            self._receiver = _LineReceiver(self)
            response.deliverBody(self._receiver)
            return
        raise UnreachableError(
            message=f"etcd: no endpoint reachable for watch: {_describe(last)}"
        )

    def _schedule_reconnect(self, reason: Any) -> None:
        if self.watch.ended or self._timer is not None:
            return
        self._drop_transport()
        # the first loss is news; the retries of a long outage are not
        emit = _log.info if self.delay == WATCH_BACKOFF_INITIAL else _log.debug
        emit("etcd watch of {key} lost ({reason}); reconnecting from revision {rev} in {delay}s",
             key=self.start_key, reason=str(reason), rev=self.last_revision + 1, delay=self.delay)
        self._timer = self.store._reactor.callLater(self.delay, self._reconnect)
        self.delay = min(self.delay * WATCH_BACKOFF_FACTOR, WATCH_BACKOFF_MAX)

    def _reconnect(self) -> None:
        self._timer = None
        if not self.watch.ended:
            self._go(self._connect())

    async def _await(self, d: Any) -> Any:
        if not isinstance(d, Deferred):
            d = Deferred.fromCoroutine(d)
        self._pending = d
        try:
            return await d
        finally:
            self._pending = None

    # called by _LineReceiver
    def connected(self, transport: Any) -> None:
        if self.watch.ended:
            transport.stopProducing()
        else:
            self._transport = transport

    def line(self, raw: bytes) -> None:
        if self.watch.ended or not raw.strip():
            return
        try:
            message = orjson.loads(raw)
        except orjson.JSONDecodeError:
            self.watch.send(WatchEvent(
                "ERROR", new_internal_error("etcd watch: unparseable response").status
            ))
            self._close()
            return
        if "error" in message:
            error = message["error"]
            if isinstance(error, dict):
                text = error.get("message", "")
                code = _int(error.get("grpc_code", error.get("code", 2)))
            else:
                text, code = str(error), _int(message.get("code", 2))
            if code not in _FATAL_WATCH_CODES and _COMPACTED not in text:
                self._schedule_reconnect(f"etcd watch: {text}")
                return
            self.watch.send(WatchEvent("ERROR", new_internal_error(f"etcd watch: {text}").status))
            self._close()
            return
        result = message.get("result") or {}
        compacted = int(result.get("compact_revision", 0))
        if compacted:
            self.store.saw_compaction(compacted)
            self.watch.send(WatchEvent(
                "ERROR", expired_watch_status(self.last_revision, compacted)
            ))
            self._close()
            return
        if result.get("created"):
            self.delay = WATCH_BACKOFF_INITIAL
        events = result.get("events") or []
        if not events and not result.get("created") and not result.get("canceled"):
            # a progress notification: every event up to the header revision was sent
            self.last_revision = max(self.last_revision, header_revision(result))
        for event in events:
            kv = event.get("kv") or {}
            prev = event.get("prev_kv")
            deleted = event.get("type", "PUT") == "DELETE"
            mod = int(kv.get("mod_revision", 0))
            if mod <= self.last_revision:
                continue
            created = not deleted and int(kv.get("create_revision", 0)) == mod
            if not created and prev is None:
                # upstream: "etcd event received with PrevKv=nil" ends the watch
                self.watch.send(WatchEvent("ERROR", new_internal_error(
                    "etcd event received with PrevKv=nil").status))
                self._close()
                return
            self._send(RawEvent(
                key_text(unb64(kv.get("key", ""))), mod,
                None if deleted else unb64(kv.get("value", "")),
                unb64(prev.get("value", "")) if prev is not None else None,
                is_created=created, is_deleted=deleted,
            ))
            if self.watch.ended:
                return
            self.last_revision = mod
        if result.get("canceled"):
            self._close()

    def lost(self, reason: Any = None) -> None:
        self._transport = None
        self._receiver = None
        if self.watch.ended:
            return
        why = reason.getErrorMessage() if reason is not None else "connection closed"
        self._schedule_reconnect(why)


class _LineReceiver(Protocol):
    """
    Splits a streamed body into lines (buffering partial ones) for an L{_EtcdWatch}.  The
    gateway ends every message with a newline, so an unterminated line at the end of the
    stream was cut off: it is dropped, and the reconnect asks for its events again.
    """

    def __init__(self, owner: _EtcdWatch) -> None:
        self.owner: _EtcdWatch | None = owner
        self._buffer = b""

    def connectionMade(self) -> None:
        if self.owner is not None:
            self.owner.connected(self.transport)

    def dataReceived(self, data: bytes) -> None:
        self._buffer += data
        while b"\n" in self._buffer and self.owner is not None:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self.owner.line(line)

    def connectionLost(self, reason: Any = None) -> None:
        owner, self.owner = self.owner, None
        self._buffer = b""
        if owner is not None:
            owner.lost(reason)


async def _none() -> None:
    return None
