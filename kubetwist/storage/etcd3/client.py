# -*- test-case-name: tests.storage.test_etcd3_client,tests.storage.test_etcd3_tls -*-
"""
The HTTP client the etcd3 store talks to the gateway with: upstream
C{k8s.io/apiserver/pkg/storage/storagebackend/factory/etcd3.go} (C{newETCD3Client}: the
C{--etcd-cafile}, C{--etcd-certfile} and C{--etcd-keyfile} TLS settings).

For C{https://} endpoints the server certificate is verified against the CA file (or, without
one, the platform's trust store) and its name or IP address checked with C{service_identity};
a client certificate and key, when given, are presented for etcd's C{--client-cert-auth}.

Unary calls (C{/v3/kv/range}, C{/v3/kv/txn}, C{/v3/kv/compaction}, ... of etcd's gRPC-JSON
gateway, U{https://etcd.io/docs/v3.5/dev-guide/api_grpc_gateway/}) go through
L{GatewayClient.unary}: a few kept-alive HTTP/1.1 connections per endpoint, each request one
write of pre-encoded bytes, each answer read by a small parser (status line, headers,
C{Content-Length} or chunked body).  The per-call work of C{treq}/C{Agent} (URL objects, IDNA,
the pool's keys, the generic response parser and its producers) is gone.

The watch stream keeps using C{treq} (L{GatewayClient.post}): one long-lived request per watched
resource, so its per-call cost does not matter, and its reconnect logic in
L{kubetwist.storage.etcd3.store} is written and tested against C{treq}'s response and producer
interfaces.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit

from treq.client import HTTPClient
from twisted.internet import ssl
from twisted.internet.defer import Deferred, DeferredList, fail, succeed
from twisted.internet.endpoints import (
    HostnameEndpoint,
    TCP4ClientEndpoint,
    TCP6ClientEndpoint,
    wrapClientTLS,
)
from twisted.internet.error import ConnectionDone
from twisted.internet.protocol import Factory, Protocol
from twisted.python.failure import Failure
from twisted.web.client import (
    Agent,
    BrowserLikePolicyForHTTPS,
    HTTPConnectionPool,
    ResponseFailed,
    ResponseNeverReceived,
)
from twisted.web.iweb import IPolicyForHTTPS
from zope.interface import implementer

#: Upper bound of one answer's body, bytes: etcd's C{clientv3} default receive limit
#: (C{defaultMaxCallRecvMsgSize}, C{math.MaxInt32}) is for protobuf; the gateway's JSON with
#: base64 values is about 4/3 of it, and a Python process holding 2 GiB of one answer is lost
#: anyway, so the bound here is 1 GiB.
MAX_RESPONSE_BYTES = 1 << 30
#: Upper bound of the status line and headers of one answer, bytes.
MAX_HEAD_BYTES = 64 * 1024
#: Seconds a kept-alive connection may idle before it is closed instead of reused (checked
#: when the connection is next wanted; no timer runs).
IDLE_TIMEOUT = 60.0


class ResponseTooLarge(Exception):
    """
    An answer larger than the client's C{max_response_bytes}: the connection is aborted.
    The message is gRPC's (C{grpc: received message larger than max (N vs. M)}, code 8
    C{ResourceExhausted}), which the store reports as an C{EtcdError}.
    """


@implementer(IPolicyForHTTPS)
class EtcdTLSPolicy:
    """
    TLS for every C{https://} etcd endpoint: verify the server against C{trust_root} (the
    platform's store when C{None}) and the endpoint's host; present C{client_certificate}.

    @param trust_root: C{IOpenSSLTrustRoot}, e.g. an C{ssl.Certificate} of the CA.
    @param client_certificate: an C{ssl.PrivateCertificate}, or C{None}.
    """

    def __init__(self, trust_root: Any = None, client_certificate: Any = None) -> None:
        self.trust_root = trust_root
        self.client_certificate = client_certificate

    def creatorForNetloc(self, hostname: bytes, port: int) -> Any:
        """C{IPolicyForHTTPS}: the client TLS options for C{hostname:port}."""
        kwargs: dict[str, Any] = {}
        if self.trust_root is not None:
            kwargs["trustRoot"] = self.trust_root
        if self.client_certificate is not None:
            kwargs["clientCertificate"] = self.client_certificate
        return ssl.optionsForClientTLS(hostname.decode("ascii"), **kwargs)


def tls_policy(cafile: str = "", certfile: str = "", keyfile: str = "") -> IPolicyForHTTPS:
    """
    The TLS policy for C{--etcd-cafile}/C{--etcd-certfile}/C{--etcd-keyfile} (PEM files; the
    key may also be inside the certificate file).  Reads the files now (at start-up).

    @raise OSError: a file cannot be read.
    @raise ValueError: a file is not PEM of the expected kind.
    """
    if not (cafile or certfile or keyfile):
        return BrowserLikePolicyForHTTPS()
    trust_root = None
    if cafile:
        with open(cafile, "rb") as f:
            trust_root = ssl.Certificate.loadPEM(f.read())
    client_certificate = None
    if certfile:
        with open(certfile, "rb") as f:
            pem = f.read()
        if keyfile:
            with open(keyfile, "rb") as f:
                pem = pem + b"\n" + f.read()
        try:
            client_certificate = ssl.PrivateCertificate.loadPEM(pem)
        except Exception as e:  # noqa: BLE001 -- OpenSSL raises its own error types
            raise ValueError(f"cannot load the etcd client certificate and key: {e}") from None
    return EtcdTLSPolicy(trust_root, client_certificate)


def new_etcd_client(reactor: Any, cafile: str = "", certfile: str = "", keyfile: str = "",
                    max_persistent_per_host: int = 16,
                    ) -> tuple[GatewayClient, GatewayClient]:
    """
    A L{GatewayClient} for L{kubetwist.storage.etcd3.Etcd3Storage}, with the TLS settings of
    L{tls_policy}.  The caller closes it with C{closeCachedConnections()} at shutdown.

    @return: C{(client, pool)}: the same object twice (the shape of the C{treq} client and
        C{HTTPConnectionPool} pair this function used to return).
    @raise OSError: see L{tls_policy}.
    @raise ValueError: see L{tls_policy}.
    """
    client = GatewayClient(reactor, tls_policy(cafile, certfile, keyfile),
                           max_persistent_per_host=max_persistent_per_host)
    return client, client


class GatewayClient:
    """
    POSTs JSON to etcd's gRPC-JSON gateway over kept-alive HTTP/1.1 connections.

    Connections: at most C{max_persistent_per_host} idle ones are kept per endpoint (the most
    recently used is reused first); more are opened while more calls run at once.  A kept
    connection idle longer than C{idle_timeout} seconds is closed when next wanted.

    Retries: a call is never sent twice unless that is safe.  When a reused connection dies
    before any byte of the answer arrived (the server closed it while idle), an C{idempotent}
    call (a read) is sent once more on a new connection; any other call (a txn, a delete,
    a compaction) fails, since etcd may have applied it.  Before a non-idempotent call is
    written on a reused connection its socket is peeked, without blocking, for a close (or,
    under TLS, any record) that the reactor has not read yet; such a connection is dropped and
    a new one used.

    @param reactor: C{IReactorTCP} and C{IReactorTime}.
    @param tls: the C{IPolicyForHTTPS} for C{https://} endpoints (L{tls_policy}).
    @param max_response_bytes: larger answers fail with L{ResponseTooLarge}.
    """

    def __init__(self, reactor: Any, tls: IPolicyForHTTPS | None = None,
                 max_persistent_per_host: int = 16,
                 max_response_bytes: int = MAX_RESPONSE_BYTES,
                 idle_timeout: float = IDLE_TIMEOUT) -> None:
        self._reactor = reactor
        self._tls = tls if tls is not None else BrowserLikePolicyForHTTPS()
        self.max_persistent_per_host = max_persistent_per_host
        self.max_response_bytes = max_response_bytes
        self.idle_timeout = idle_timeout
        self._endpoints: dict[str, _Endpoint] = {}
        self._watch_pool: HTTPConnectionPool | None = None
        self._watch_client: HTTPClient | None = None
        self._closed = False

    # -- unary calls ---------------------------------------------------------------------------
    def unary(self, base: str, path: str, body: bytes, idempotent: bool = False) -> Deferred:
        """
        C{POST base+path} with the JSON C{body}.

        The Deferred has no deadline of its own: the caller cancels it (the store's
        C{request_timeout}), which aborts the connection; it then fails with
        C{CancelledError}.

        @param base: an endpoint URL, C{http://host:port} or C{https://host:port}.
        @param path: e.g. C{/v3/kv/range}.
        @param idempotent: the call changes nothing (a range, a status): it may be sent again
            on a new connection when a reused one turns out to be closed.
        @return: a Deferred firing with C{(status code, body bytes)} whatever the status.
        @raise twisted.internet.error.ConnectError: the endpoint refused or could not be
            reached (certainly not sent).
        @raise ResponseNeverReceived: the connection ended (or the TLS handshake failed)
            before any byte of the answer; the reasons are inside, as with C{treq}.
        @raise ResponseFailed: the connection ended inside the answer, or the answer is not
            HTTP/1.x.
        @raise ResponseTooLarge: the answer exceeds C{max_response_bytes}.
        """
        endpoint = self._endpoints.get(base)
        if endpoint is None:
            endpoint = self.endpoint_for(base)
        data = endpoint.request_bytes(path, body)
        connection = endpoint.idle_connection(stale_check=not idempotent)
        if connection is None:
            return endpoint.connect().addCallback(_send, data)
        d = connection.send(data)
        if idempotent:
            d.addErrback(_retry_fresh, endpoint, data)
        return d

    def endpoint_for(self, base: str) -> _Endpoint:
        """
        The connections and request templates of C{base} (made on first use).  Its
        C{endpoint} attribute is the C{IStreamClientEndpoint} new connections come from.

        @raise ValueError: C{base} is not an C{http://} or C{https://} URL with a host.
        """
        endpoint = self._endpoints.get(base)
        if endpoint is None:
            endpoint = self._endpoints[base] = _Endpoint(self, base)
        return endpoint

    # -- the watch stream -----------------------------------------------------------------------
    def treq(self) -> HTTPClient:
        """The C{treq} client (same TLS policy) on a pool of its own, made when first used."""
        if self._watch_client is None:
            self._watch_pool = HTTPConnectionPool(self._reactor, persistent=True)
            self._watch_pool.maxPersistentPerHost = self.max_persistent_per_host
            agent = Agent(self._reactor, contextFactory=self._tls, pool=self._watch_pool)
            self._watch_client = HTTPClient(agent)
        return self._watch_client

    def post(self, url: str, **kwargs: Any) -> Deferred:
        """C{treq.HTTPClient.post} through L{treq} (the watch streams: C{unbuffered})."""
        return self.treq().post(url, **kwargs)

    def __getattr__(self, name: str) -> Any:
        # the rest of treq's HTTPClient (get, put, request, ...), as the client this
        # module used to return offered
        if name in _TREQ_METHODS:
            return getattr(self.treq(), name)
        raise AttributeError(name)

    def closeCachedConnections(self) -> Deferred:
        """
        Close every idle connection (and the watch pool's); calls still running keep their
        connection until they end, then close it.  Fires when the idle ones are closed.
        """
        self._closed = True
        waits = []
        for endpoint in self._endpoints.values():
            idle, endpoint.idle = endpoint.idle, []
            for connection in idle:
                waits.append(connection.close())
        if self._watch_pool is not None:
            waits.append(self._watch_pool.closeCachedConnections())
        return DeferredList(waits).addCallback(lambda _: None)

    def connection_count(self) -> int:
        """Idle kept-alive connections, all endpoints (for tests and metrics)."""
        return sum(len(e.idle) for e in self._endpoints.values())


_TREQ_METHODS = frozenset({"get", "put", "patch", "head", "delete", "request"})


def _send(connection: _Connection, data: bytes) -> Deferred:
    return connection.send(data)


def _retry_fresh(failure: Failure, endpoint: _Endpoint, data: bytes) -> Any:
    """Send C{data} again on a new connection when a reused one was found closed."""
    if not getattr(failure.value, "stale", False):
        return failure
    return endpoint.connect().addCallback(_send, data)


class _Endpoint:
    """One etcd endpoint: its address, request templates and idle connections."""

    def __init__(self, client: GatewayClient, base: str) -> None:
        url = urlsplit(base)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an http(s) etcd endpoint: {base!r}")
        self.client = client
        self.host = url.hostname
        self.port = url.port or (443 if url.scheme == "https" else 80)
        self.path_prefix = url.path.rstrip("/")
        host_header = url.netloc.rsplit("@", 1)[-1]
        self.host_header = host_header.encode("ascii")
        self.heads: dict[str, bytes] = {}
        self.idle: list[_Connection] = []
        reactor = client._reactor
        try:
            address = ipaddress.ip_address(self.host)
        except ValueError:
            address = None
        if address is None:
            endpoint: Any = HostnameEndpoint(reactor, self.host, self.port)
        elif address.version == 4:
            endpoint = TCP4ClientEndpoint(reactor, self.host, self.port)
        else:
            endpoint = TCP6ClientEndpoint(reactor, self.host, self.port)
        if url.scheme == "https":
            creator = client._tls.creatorForNetloc(self.host.encode("ascii"), self.port)
            endpoint = wrapClientTLS(creator, endpoint)
        self.endpoint = endpoint
        self.factory = Factory.forProtocol(lambda: _Connection(self))

    def request_bytes(self, path: str, body: bytes) -> bytes:
        """The whole request: the constant head for C{path}, the length and C{body}."""
        head = self.heads.get(path)
        if head is None:
            head = self.heads[path] = (
                b"POST " + (self.path_prefix + path).encode("ascii") + b" HTTP/1.1\r\n"
                b"Host: " + self.host_header + b"\r\n"
                b"Content-Type: application/json\r\n"
                b"Accept: application/json\r\n"
                b"Content-Length: "
            )
        return b"%b%d\r\n\r\n%b" % (head, len(body), body)

    def connect(self) -> Deferred:
        """A new connection (C{_Connection}); fails with C{ConnectError} and the like."""
        return self.endpoint.connect(self.factory)

    def idle_connection(self, stale_check: bool) -> _Connection | None:
        """The most recently released idle connection still usable, or C{None}."""
        idle = self.idle
        if not idle:
            return None
        now = self.client._reactor.seconds()
        while idle:
            connection = idle.pop()
            if now - connection.released > self.client.idle_timeout or (
                    stale_check and connection.peer_closed()):
                connection.close()
                continue
            return connection
        return None

    def release(self, connection: _Connection) -> None:
        """Keep C{connection} for the next call, or close it when enough are kept."""
        if self.client._closed or len(self.idle) >= self.client.max_persistent_per_host:
            connection.close()
            return
        connection.released = self.client._reactor.seconds()
        self.idle.append(connection)

    def discard(self, connection: _Connection) -> None:
        try:
            self.idle.remove(connection)
        except ValueError:
            pass


_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_END, _TRAILER, _TO_EOF, _DONE = range(8)


class _Connection(Protocol):
    """
    One HTTP/1.1 connection to the gateway, one call at a time (no pipelining).

    @ivar served: answers read on it; a connection with C{served > 0} is a reused one.
    """

    def __init__(self, endpoint: _Endpoint) -> None:
        self.endpoint = endpoint
        self.max_body = endpoint.client.max_response_bytes
        self.served = 0
        self.released = 0.0
        self.d: Deferred | None = None
        self.lost = False
        self._closing: Deferred | None = None
        self._state = _DONE
        self._buffer = b""
        self._parts: list[bytes] = []
        self._size = 0
        self._remaining = 0
        self._code = 0
        self._keep_alive = True
        self._received = False

    def connectionMade(self) -> None:
        try:
            self.transport.setTcpNoDelay(True)
        except Exception:  # noqa: BLE001 -- not a TCP transport (tests)
            pass

    # -- requests ------------------------------------------------------------------------------
    def send(self, data: bytes) -> Deferred:
        if self.lost:
            # closed between connect and send: certainly not sent
            return fail(ConnectionDone("etcd closed the connection before the request"))
        self.d = d = Deferred(self._cancel)
        self._state = _HEAD
        self._buffer = b""
        self._received = False
        self.transport.write(data)
        return d

    def _cancel(self, d: Deferred) -> None:
        self.d = None
        self.abort()

    def abort(self) -> None:
        self.endpoint.discard(self)
        self._state = _DONE
        if not self.lost:
            self.transport.abortConnection()

    def close(self) -> Deferred:
        """Close politely; fires when the connection is gone."""
        if self.lost:
            return succeed(None)
        closing = self._closing
        if closing is None:
            closing = self._closing = Deferred()
            self.transport.loseConnection()
        return closing

    def peer_closed(self) -> bool:
        """
        Whether the socket already has an end of stream (or any byte, which an idle HTTP/1.1
        connection must not have; under TLS, etcd's close_notify before its FIN) the reactor
        has not read yet.  C{False} when no socket is found under the transport.
        """
        sock = None
        transport = self.transport
        for _ in range(3):  # TCP, or TLS over TCP
            handle = getattr(transport, "getHandle", None)
            sock = handle() if handle is not None else None
            if isinstance(sock, socket.socket):
                break
            transport = getattr(transport, "transport", None)
        if not isinstance(sock, socket.socket):
            return False
        try:
            sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError:
            return True
        return True

    # -- answers -------------------------------------------------------------------------------
    def dataReceived(self, data: bytes) -> None:
        if self.d is None:
            # nothing was asked: an HTTP/1.1 server must not talk now
            self.abort()
            return
        self._received = True
        if self._state == _LENGTH:
            # the common case of a large body: collect without re-buffering
            size = len(data)
            if size < self._remaining:
                self._parts.append(data)
                self._remaining -= size
                return
            self._parts.append(data[:self._remaining])
            rest = data[self._remaining:]
            self._remaining = 0
            self._finish(b"".join(self._parts), rest)
            return
        self._buffer += data
        try:
            self._parse()
        except _ProtocolError as e:
            self._fail(ResponseFailed([Failure(e)]))
        except ResponseTooLarge as e:
            self._fail(e)

    def _parse(self) -> None:
        while True:
            state = self._state
            buffer = self._buffer
            if state == _HEAD:
                end = buffer.find(b"\r\n\r\n")
                if end < 0:
                    if len(buffer) > MAX_HEAD_BYTES:
                        raise ResponseTooLarge(
                            f"etcd answer headers larger than {MAX_HEAD_BYTES} bytes")
                    return
                self._buffer = buffer[end + 4:]
                self._head(buffer[:end])
            elif state == _LENGTH:
                if len(buffer) < self._remaining:
                    self._parts.append(buffer)
                    self._remaining -= len(buffer)
                    self._buffer = b""
                    return
                self._parts.append(buffer[:self._remaining])
                rest = buffer[self._remaining:]
                self._remaining = 0
                self._buffer = b""
                self._finish(b"".join(self._parts), rest)
                return
            elif state == _CHUNK_SIZE:
                end = buffer.find(b"\r\n")
                if end < 0:
                    if len(buffer) > 1024:
                        raise _ProtocolError("chunk size line too long")
                    return
                text = buffer[:end].split(b";", 1)[0].strip()
                try:
                    size = int(text, 16)
                except ValueError:
                    raise _ProtocolError(f"bad chunk size {text[:20]!r}") from None
                if size < 0:
                    raise _ProtocolError("negative chunk size")
                self._buffer = buffer[end + 2:]
                if size == 0:
                    self._state = _TRAILER
                else:
                    self._grow(size)
                    self._remaining = size
                    self._state = _CHUNK_DATA
            elif state == _CHUNK_DATA:
                if not buffer:
                    return
                take = buffer[:self._remaining]
                self._parts.append(take)
                self._remaining -= len(take)
                self._buffer = buffer[len(take):]
                if self._remaining == 0:
                    self._state = _CHUNK_END
            elif state == _CHUNK_END:
                if len(buffer) < 2:
                    return
                if buffer[:2] != b"\r\n":
                    raise _ProtocolError("chunk not followed by CRLF")
                self._buffer = buffer[2:]
                self._state = _CHUNK_SIZE
            elif state == _TRAILER:
                end = buffer.find(b"\r\n")
                if end < 0:
                    if len(buffer) > MAX_HEAD_BYTES:
                        raise ResponseTooLarge("etcd answer trailers too large")
                    return
                self._buffer = buffer[end + 2:]
                if end == 0:
                    rest, self._buffer = self._buffer, b""
                    self._finish(b"".join(self._parts), rest)
                    return
            elif state == _TO_EOF:
                if buffer:
                    self._grow(len(buffer))
                    self._parts.append(buffer)
                    self._buffer = b""
                return
            else:
                return

    def _grow(self, size: int) -> None:
        self._size += size
        if self._size > self.max_body:
            raise ResponseTooLarge(
                f"grpc: received message larger than max ({self._size} vs. {self.max_body})")

    def _head(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        status = lines[0].split(b" ", 2)
        if len(status) < 2 or not status[0].startswith(b"HTTP/1."):
            raise _ProtocolError(f"not an HTTP/1.x answer: {lines[0][:40]!r}")
        try:
            code = int(status[1])
        except ValueError:
            raise _ProtocolError(f"bad status line {lines[0][:40]!r}") from None
        length = -1
        chunked = False
        keep_alive = status[0] == b"HTTP/1.1"
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    raise _ProtocolError("bad Content-Length") from None
                if length < 0:
                    raise _ProtocolError("bad Content-Length")
            elif name == b"transfer-encoding":
                chunked = value.strip().lower().endswith(b"chunked")
            elif name == b"connection":
                token = value.strip().lower()
                if token == b"close":
                    keep_alive = False
                elif token == b"keep-alive":
                    keep_alive = True
        if 100 <= code < 200:
            return  # an interim answer: the real one follows (state stays _HEAD)
        self._code = code
        self._keep_alive = keep_alive
        self._parts = []
        self._size = 0
        if chunked:
            self._state = _CHUNK_SIZE
        elif code in (204, 304):
            self._remaining = 0
            self._state = _LENGTH
            if length <= 0:
                length = 0
        elif length >= 0:
            self._grow(length)
            self._remaining = length
            self._state = _LENGTH
        else:
            self._keep_alive = False
            self._state = _TO_EOF
            return
        if self._state == _LENGTH and length == 0:
            rest, self._buffer = self._buffer, b""
            self._finish(b"", rest)

    def _finish(self, body: bytes, rest: bytes) -> None:
        d, self.d = self.d, None
        self._state = _DONE
        self._parts = []
        self.served += 1
        if rest:
            self.abort()  # bytes nobody asked for: this connection cannot be trusted
        elif not self._keep_alive:
            self.close()
        else:
            self.endpoint.release(self)
        if d is not None:
            d.callback((self._code, body))

    def _fail(self, error: Exception) -> None:
        d, self.d = self.d, None
        self.abort()
        if d is not None:
            d.errback(Failure(error))

    def connectionLost(self, reason: Failure = None) -> None:  # type: ignore[assignment]
        self.lost = True
        self.endpoint.discard(self)
        closing, self._closing = self._closing, None
        d, self.d = self.d, None
        state, self._state = self._state, _DONE
        if d is not None:
            if state == _TO_EOF and reason is not None and reason.check(ConnectionDone):
                d.callback((self._code, b"".join(self._parts)))
            elif not self._received:
                error = ResponseNeverReceived([reason])
                # a reused connection ended unanswered: the server closed it while idle
                error.stale = self.served > 0
                d.errback(Failure(error))
            else:
                d.errback(Failure(ResponseFailed([reason])))
        if closing is not None:
            closing.callback(None)


class _ProtocolError(Exception):
    """The answer is not the HTTP/1.1 this parser reads."""


__all__ = [
    "EtcdTLSPolicy",
    "GatewayClient",
    "ResponseTooLarge",
    "new_etcd_client",
    "tls_policy",
]
