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
"""

from __future__ import annotations

import base64
from typing import Any, Optional

import orjson
from twisted.internet import error as ierror
from twisted.internet.defer import CancelledError, Deferred
from twisted.internet.protocol import Protocol
from twisted.logger import Logger
from twisted.web import client as webclient
from twisted.web.http import PotentialDataLoss
from zope.interface import implementer

from kubetwist.runtime.errors import new_internal_error
from kubetwist.storage.continuetoken import (
    CompactedError,
    FutureRevisionError,
    key_bytes,
    key_text,
    parse_resource_version,
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
from kubetwist.storage.interfaces import (
    EVERYTHING,
    IStorage,
    SelectionPredicate,
    StorageError,
    UnreachableError,
    Watch,
    WatchEvent,
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
    webclient.ResponseNeverReceived,
    webclient.ResponseFailed,
    webclient.RequestTransmissionFailed,
)

_COMPACTED = "required revision has been compacted"
_FUTURE = "required revision is a future revision"


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


@implementer(IStorage)
class Etcd3Storage(KVStorageBase):
    """
    L{IStorage} on etcd v3 through the gRPC-JSON gateway.

    @param reactor: for request timeouts (C{IReactorTime}).
    @param client: a C{treq.HTTPClient} (or C{StubTreq}) the store owns no pool of.
    @param endpoints: base URLs such as C{http://127.0.0.1:2379}; on a connection failure the
        next one is tried, and the one that answered is preferred afterwards.
    @param prefix: prepended to caller keys (upstream C{--etcd-prefix}).
    @param request_timeout: seconds before a (non-watch) request counts as unreachable.
    """

    name = "etcd"

    def __init__(self, reactor: Any, client: Any, endpoints: list[str],
                 prefix: str = "/registry", request_timeout: float = 10.0) -> None:
        super().__init__(prefix)
        if not endpoints:
            raise ValueError("at least one etcd endpoint is required")
        self._reactor = reactor
        self._client = client
        self._endpoints = [e.rstrip("/") for e in endpoints]
        self._current = 0
        self._timeout = request_timeout
        self._watches: set[_EtcdWatch] = set()

    # -- HTTP ------------------------------------------------------------------------------
    def _endpoint_order(self) -> list[int]:
        n = len(self._endpoints)
        return [(self._current + i) % n for i in range(n)]

    async def _call(self, path: str, body: dict) -> dict:
        """
        POST C{body} as JSON to C{path} on the first endpoint that answers.

        @raise UnreachableError: no endpoint could be reached in time.
        @raise EtcdError: etcd answered with an error.
        """
        data = orjson.dumps(body)
        last: Optional[BaseException] = None
        for index in self._endpoint_order():
            url = self._endpoints[index] + path
            try:
                response = await self._client.post(
                    url, data=data, headers={b"Content-Type": [b"application/json"]},
                    reactor=self._reactor, timeout=self._timeout,
                )
                content = await response.content()
            except _CONNECTION_ERRORS as e:
                last = e
                continue
            self._current = index
            try:
                parsed = orjson.loads(content) if content else {}
            except orjson.JSONDecodeError:
                raise EtcdError(2, f"etcd: unparseable answer (HTTP {response.code})") from None
            if not isinstance(parsed, dict):
                raise EtcdError(2, f"etcd: unexpected answer (HTTP {response.code})")
            if "error" in parsed or response.code != 200:
                message = parsed.get("message") or parsed.get("error") or f"HTTP {response.code}"
                raise EtcdError(int(parsed.get("code", 2)), str(message))
            return parsed
        raise UnreachableError(
            message=f"etcd: no endpoint reachable ({', '.join(self._endpoints)}): {last!r}"
        )

    async def _range_call(self, body: dict) -> dict:
        try:
            return await self._call("/v3/kv/range", body)
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
    async def _get_kv(self, key: str) -> tuple[Optional[KeyValue], int]:
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

    async def _txn(self, compare: dict, success: dict, failure: Optional[dict]) -> TxnResult:
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
            return revision

        return Deferred.fromCoroutine(run())

    def check_health(self) -> Deferred:
        """C{POST /v3/maintenance/status}; fails with L{UnreachableError} when etcd is down."""

        async def run() -> None:
            try:
                await self._call("/v3/maintenance/status", {})
            except EtcdError as e:
                raise UnreachableError(message=f"etcd: {e}") from None

        return Deferred.fromCoroutine(run())

    def stop(self) -> Deferred:
        """Stop every watch (aborting their connections); the HTTP pool is the caller's."""
        for ew in list(self._watches):
            ew.watch.stop()
        self._watches.clear()
        return Deferred.fromCoroutine(_none())


class _EtcdWatch:
    """One etcd watch stream feeding one L{Watch}."""

    def __init__(self, store: Etcd3Storage, start: str, end: Optional[str], revision: int,
                 predicate: SelectionPredicate) -> None:
        self.store = store
        self.start_key = start
        self.end_key = end
        self.revision = revision
        self.predicate = predicate
        self.watch = Watch(on_stop=self._on_stop)
        self._pending: Optional[Deferred] = None
        self._transport: Any = None
        self._buffer = b""

    def start(self) -> None:
        d = Deferred.fromCoroutine(self._run())
        d.addErrback(self._failed)

    def _on_stop(self) -> None:
        self.store._watches.discard(self)
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.cancel()
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.stopProducing()

    def _failed(self, failure: Any) -> None:
        if self.watch.ended:
            return
        if not failure.check(UnreachableError, *_CONNECTION_ERRORS):
            _log.failure("etcd watch of {key} failed", failure, key=self.start_key)
        self.watch.send(WatchEvent("ERROR", new_internal_error(str(failure.value)).status))
        self._close()

    def _close(self) -> None:
        self.store._watches.discard(self)
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.stopProducing()
        self.watch.close()

    def _send(self, event: RawEvent) -> None:
        out = transform_event(event, self.predicate)
        if out is not None:
            self.watch.send(out)

    async def _run(self) -> None:
        store = self.store
        start_revision = self.revision + 1
        if self.revision == 0:
            end = self.end_key if self.end_key is not None else self.start_key + "\x00"
            chunk = await self._await(store._range(self.start_key, end, 0, 0))
            if self.watch.ended:
                return
            for kv in chunk.kvs:
                self._send(RawEvent(kv.key, kv.mod_revision, kv.value, None, is_created=True))
            start_revision = chunk.revision + 1
        create: dict[str, Any] = {
            "key": b64(self.start_key),
            "start_revision": str(start_revision),
            "prev_kv": True,
        }
        if self.end_key is not None:
            create["range_end"] = b64(self.end_key)
        body = orjson.dumps({"create_request": create})
        last: Optional[BaseException] = None
        for index in store._endpoint_order():
            if self.watch.ended:
                return
            try:
                response = await self._await(store._client.post(
                    store._endpoints[index] + "/v3/watch", data=body,
                    headers={b"Content-Type": [b"application/json"]},
                    unbuffered=True, reactor=store._reactor,
                ))
            except _CONNECTION_ERRORS as e:
                if self.watch.ended:
                    return
                last = e
                continue
            if self.watch.ended:
                return
            response.deliverBody(_LineReceiver(self))
            return
        raise UnreachableError(message=f"etcd: no endpoint reachable for watch: {last!r}")

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
            text = error.get("message", "") if isinstance(error, dict) else str(error)
            self.watch.send(WatchEvent("ERROR", new_internal_error(f"etcd watch: {text}").status))
            self._close()
            return
        result = message.get("result") or {}
        compacted = int(result.get("compact_revision", 0))
        if compacted:
            self.watch.send(WatchEvent("ERROR", expired_watch_status(self.revision, compacted)))
            self._close()
            return
        for event in result.get("events") or []:
            kv = event.get("kv") or {}
            prev = event.get("prev_kv")
            deleted = event.get("type", "PUT") == "DELETE"
            mod = int(kv.get("mod_revision", 0))
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
        if result.get("canceled"):
            self._close()

    def lost(self) -> None:
        self._transport = None
        if not self.watch.ended:
            self._close()


class _LineReceiver(Protocol):
    """Splits a streamed body into lines (buffering partial ones) for an L{_EtcdWatch}."""

    def __init__(self, owner: _EtcdWatch) -> None:
        self._owner = owner
        self._buffer = b""

    def connectionMade(self) -> None:
        self._owner.connected(self.transport)

    def dataReceived(self, data: bytes) -> None:
        self._buffer += data
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._owner.line(line)

    def connectionLost(self, reason: Any = None) -> None:
        if self._buffer.strip() and reason is not None and reason.check(
            webclient.ResponseDone, PotentialDataLoss
        ):
            line, self._buffer = self._buffer, b""
            self._owner.line(line)
        self._owner.lost()


async def _none() -> None:
    return None
