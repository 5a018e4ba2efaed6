# -*- test-case-name: tests.aggregator.test_proxy -*-
"""
The aggregator's proxy to extension API servers: upstream C{kube-aggregator}
C{pkg/apiserver/handler_proxy.go} over C{k8s.io/apimachinery/pkg/util/proxy}
(C{UpgradeAwareHandler}) and client-go's C{transport.SetAuthProxyHeaders}.

Every request for the group-version of an APIService with C{spec.service} is sent, after the
front's filters (authentication, authorization, flow control) have run, to an endpoint of that
Service over TLS verified with C{spec.caBundle} for C{<service>.<namespace>.svc} (nothing
verified with C{insecureSkipTLSVerify}), presenting the front-proxy client certificate
(C{--proxy-client-cert-file}) and the user in C{X-Remote-User}, C{X-Remote-Group} and
C{X-Remote-Extra-<key>}.

Bodies stream both ways with bounded memory: the request body from twisted.web's spooled
C{request.content} through a C{FileBodyProducer}, the response through an C{IProtocol} that
writes each chunk as it arrives, registered as the client request's push producer (a slow
client pauses the backend's connection).  An C{Upgrade} request (exec, attach, port-forward
over SPDY or WebSocket) on HTTP/1.1 goes over a raw TLS connection: the backend's
C{101 Switching Protocols} is written to the client as is, then bytes are relayed both ways
until either side closes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable, Optional

from twisted.internet import defer, protocol, ssl
from twisted.internet.endpoints import HostnameEndpoint, connectProtocol, wrapClientTLS
from twisted.internet.interfaces import IPushProducer
from twisted.logger import Logger
from twisted.web import http
from twisted.web.client import Agent, FileBodyProducer, HTTPConnectionPool, ResponseDone
from twisted.web.http import PotentialDataLoss
from twisted.web.http_headers import Headers
from zope.interface import implementer

from kubetwist.egress.client import ServerNamePolicy

__all__ = ["ProxyTarget", "Proxy", "identity_headers", "write_text_error", "is_upgrade"]

log = Logger()

#: Hop-by-hop headers (Go's C{net/http/httputil} C{hopHeaders}), never forwarded.
HOP_HEADERS = frozenset(h.lower() for h in (
    b"Connection", b"Proxy-Connection", b"Keep-Alive", b"Proxy-Authenticate",
    b"Proxy-Authorization", b"Te", b"Trailer", b"Transfer-Encoding", b"Upgrade"))

#: Headers the front consumed (authentication, impersonation) or that carry identity, which
#: the proxy replaces (upstream's filters delete them; C{SetAuthProxyHeaders} resets the rest).
IDENTITY_HEADERS = frozenset((b"authorization", b"x-remote-user", b"x-remote-group",
                              b"x-remote-uid", b"host", b"content-length"))

#: How long a head of a backend's answer to an Upgrade may be (bytes).
MAX_HEAD = 1 << 20

_TCHAR = set(b"!#$&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _escape_extra_key(key: str) -> str:
    """client-go C{headerKeyEscape}: bytes not legal in a header name (and C{%}) as C{%XX}."""
    out = []
    for b in key.encode("utf-8"):
        out.append(chr(b) if b in _TCHAR else f"%{b:02X}")
    return "".join(out)


@dataclass(frozen=True)
class HeaderNames:
    """
    The request headers that carry the user to extension servers: the first name of the
    main server's C{--requestheader-username-headers}, C{--requestheader-group-headers} and
    C{--requestheader-extra-headers-prefix} (what the C{extension-apiserver-authentication}
    ConfigMap tells extension servers to read), upstream's C{X-Remote-User},
    C{X-Remote-Group} and C{X-Remote-Extra-} when those flags are not given (upstream
    always sends these three).

    @ivar strip: every configured user and group header name (lower case), never forwarded
        from the client.
    @ivar strip_prefixes: every configured extra prefix (lower case), likewise.
    """

    user: str = "X-Remote-User"
    group: str = "X-Remote-Group"
    extra_prefix: str = "X-Remote-Extra-"
    strip: tuple = ()
    strip_prefixes: tuple = ()

    @classmethod
    def from_options(cls, users: Any = (), groups: Any = (), extras: Any = ()) -> "HeaderNames":
        """From the three C{--requestheader-*} flags (lists, or comma-separated strings)."""
        def names(v: Any) -> list[str]:
            if isinstance(v, str):
                v = v.split(",")
            return [n.strip() for n in v or () if n and n.strip()]

        u, g, e = names(users), names(groups), names(extras)
        default = cls()
        return cls(u[0] if u else default.user, g[0] if g else default.group,
                   e[0] if e else default.extra_prefix,
                   tuple(n.lower() for n in u + g), tuple(n.lower() for n in e))


def identity_headers(user: Any, names: HeaderNames = HeaderNames()) -> list[tuple[bytes, bytes]]:
    """
    client-go C{SetAuthProxyHeaders} (without the uid, behind the alpha
    C{RemoteRequestHeaderUID} gate in v1.32): C{X-Remote-User}, one C{X-Remote-Group} per
    group, one C{X-Remote-Extra-<escaped key>} per extra value (the names of C{names}).

    @param user: a L{UserInfo <kubetwist.authentication.user.UserInfo>}.
    """
    out = [(names.user.encode("latin-1"), user.name.encode("utf-8"))]
    out += [(names.group.encode("latin-1"), g.encode("utf-8")) for g in user.groups]
    for key, values in (user.extra or {}).items():
        name = (names.extra_prefix + _escape_extra_key(key)).encode("latin-1")
        out += [(name, v.encode("utf-8")) for v in values]
    return out


def is_upgrade(request: Any) -> bool:
    """Upstream C{httpstream.IsUpgradeRequest}: a C{Connection} header naming C{Upgrade}."""
    for value in request.requestHeaders.getRawHeaders(b"connection", []):
        if b"upgrade" in [t.strip().lower() for t in value.split(b",")]:
            return True
    return False


def write_text_error(request: Any, code: int, message: str) -> None:
    """Go's C{http.Error}: C{text/plain; charset=utf-8}, C{nosniff}, the message and a
    newline (upstream C{proxyError} and the aggregator's C{responder.Error})."""
    if request.finished or getattr(request, "_disconnected", False):
        return
    body = (message + "\n").encode("utf-8")
    request.setResponseCode(code)
    request.responseHeaders.setRawHeaders(b"Content-Type", [b"text/plain; charset=utf-8"])
    request.responseHeaders.setRawHeaders(b"X-Content-Type-Options", [b"nosniff"])
    request.responseHeaders.setRawHeaders(b"Content-Length", [b"%d" % len(body)])
    request.write(body)
    request.finish()


def dial_error(err: BaseException, host: str, port: int) -> str:
    """A connection failure as Go's dialer words it (C{dial tcp H:P: connect: connection
    refused}); other failures as their message."""
    from twisted.internet import error as ierr

    addr = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if isinstance(err, ierr.ConnectionRefusedError):
        return f"dial tcp {addr}: connect: connection refused"
    if isinstance(err, (ierr.TimeoutError, defer.TimeoutError)):
        return f"dial tcp {addr}: i/o timeout"
    if isinstance(err, ierr.NoRouteError):
        return f"dial tcp {addr}: connect: no route to host"
    if isinstance(err, ierr.ConnectError):
        return f"dial tcp {addr}: {err.osError or err}".rstrip()
    name = err.__class__.__name__
    if name == "VerificationError":  # service_identity: the name is not in the certificate
        return "tls: failed to verify certificate: x509: certificate is not valid for the " \
               "service's name"
    if "certificate verify failed" in str(err):
        return "tls: failed to verify certificate: x509: certificate signed by unknown " \
               "authority"
    return str(err) or name


def _first_reason(err: BaseException) -> BaseException:
    """The first wrapped reason of Twisted's C{ResponseNeverReceived}/C{RequestGenerationFailed}
    (a connection's failure comes wrapped)."""
    reasons = getattr(err, "reasons", None)
    if reasons:
        return reasons[0].value
    return err


@dataclass(frozen=True)
class ProxyTarget:
    """
    Where an APIService's requests go (upstream C{proxyHandlingInfo}).

    @ivar name: the APIService's name.
    @ivar namespace: C{spec.service.namespace}.
    @ivar service: C{spec.service.name}.
    @ivar port: C{spec.service.port} (default 443).
    @ivar ca_bundle: C{spec.caBundle} as PEM bytes, or C{None}.
    @ivar insecure: C{spec.insecureSkipTLSVerify}.
    """

    name: str
    namespace: str
    service: str
    port: int = 443
    ca_bundle: Optional[bytes] = None
    insecure: bool = False

    @property
    def server_name(self) -> str:
        """C{<service>.<namespace>.svc}, the name the certificate must carry."""
        return f"{self.service}.{self.namespace}.svc"


def target_of(apiservice: dict) -> Optional[ProxyTarget]:
    """The L{ProxyTarget} of an APIService object (C{None} for a local one)."""
    import base64

    spec = apiservice.get("spec") or {}
    svc = spec.get("service")
    if not svc:
        return None
    ca = spec.get("caBundle")
    return ProxyTarget(
        name=(apiservice.get("metadata") or {}).get("name", ""),
        namespace=svc.get("namespace", ""), service=svc.get("name", ""),
        port=int(svc.get("port") or 443),
        ca_bundle=base64.b64decode(ca) if isinstance(ca, str) and ca else (ca or None),
        insecure=bool(spec.get("insecureSkipTLSVerify")))


def tls_policy(server_name: str, ca_bundle: Optional[bytes], insecure: bool,
               client_certificate: Any) -> ServerNamePolicy:
    """The client TLS of the proxy transport (upstream C{transport.TLSConfig}: C{ServerName},
    C{CAData}, C{Insecure}, C{CertData}/C{KeyData})."""
    root = None
    if ca_bundle and not insecure:
        begin = b"-----BEGIN CERTIFICATE-----"
        certs = [ssl.Certificate.loadPEM(begin + c) for c in ca_bundle.split(begin)[1:]]
        root = ssl.trustRootFromCertificates(certs) if certs else None
    return ServerNamePolicy(server_name, root, client_certificate, insecure)


@implementer(IPushProducer)
class _ResponseRelay(protocol.Protocol):
    """Writes a backend response's body to the client request as it arrives; the client's
    backpressure pauses the backend connection."""

    def __init__(self, request: Any, done: defer.Deferred) -> None:
        self.request = request
        self.done = done
        self.registered = False

    def connectionMade(self) -> None:
        if not self.request.finished and not getattr(self.request, "_disconnected", False):
            self.request.registerProducer(self, True)
            self.registered = True

    def dataReceived(self, data: bytes) -> None:
        if not self.request.finished and not getattr(self.request, "_disconnected", False):
            self.request.write(data)

    def connectionLost(self, reason: Any = protocol.connectionDone) -> None:
        req = self.request
        if self.registered:
            self.registered = False
            try:
                req.unregisterProducer()
            except Exception:  # the client went first
                pass
        if not req.finished and not getattr(req, "_disconnected", False):
            if reason.check(ResponseDone, PotentialDataLoss):
                req.finish()
            else:  # the backend broke off mid-body: so does the client's response
                _abort(req)
        if not self.done.called:
            self.done.callback(None)

    def pauseProducing(self) -> None:
        if self.transport is not None:
            self.transport.pauseProducing()

    def resumeProducing(self) -> None:
        if self.transport is not None:
            self.transport.resumeProducing()

    def stopProducing(self) -> None:
        if self.transport is not None:
            self.transport.stopProducing()


def _abort(request: Any) -> None:
    transport = getattr(request.channel, "transport", None) if request.channel else None
    if transport is not None:
        abort = getattr(transport, "abortConnection", None) or transport.loseConnection
        abort()


def forwarded_headers(request: Any, user: Any, names: HeaderNames = HeaderNames()) -> Headers:
    """
    The headers sent to the backend: the client's, less hop-by-hop, identity and C{Host};
    the user's C{X-Remote-*}; C{X-Forwarded-For} extended with the client's address (Go's
    C{ReverseProxy}).
    """
    out = Headers()
    connection_tokens: set[bytes] = set()
    for value in request.requestHeaders.getRawHeaders(b"connection", []):
        connection_tokens.update(t.strip().lower() for t in value.split(b",") if t.strip())
    for name, values in request.requestHeaders.getAllRawHeaders():
        low = name.lower()
        if low in HOP_HEADERS or low in IDENTITY_HEADERS or low in connection_tokens \
                or low.startswith(b"x-remote-extra-") or low.startswith(b"impersonate-"):
            continue
        text = low.decode("latin-1")
        if text in (names.user.lower(), names.group.lower()) or text in names.strip \
                or text.startswith(names.extra_prefix.lower()) \
                or any(text.startswith(n) for n in names.strip_prefixes):
            continue
        out.setRawHeaders(name, list(values))
    for name, value in identity_headers(user, names):
        out.addRawHeader(name, value)
    peer = request.getClientAddress()
    host = getattr(peer, "host", None)
    if host:
        prior = request.requestHeaders.getRawHeaders(b"x-forwarded-for", [])
        out.setRawHeaders(b"X-Forwarded-For",
                          [b", ".join(prior + [host.encode("latin-1")])])
    return out


class Proxy:
    """
    Sends requests to extension API servers.

    @param reactor: the reactor (TCP, TLS, time).
    @param resolve: C{async (namespace, name, port) -> Address}
        (L{ServiceResolver.resolve <kubetwist.egress.resolver.ServiceResolver.resolve>}).
    @param client_certificate: the front-proxy C{PrivateCertificate}
        (C{--proxy-client-cert-file}, C{--proxy-client-key-file}), or C{None}.
    @param on_backend_error: called with the APIService's name when its backend cannot be
        reached (the availability controller rechecks it).
    @param header_names: the L{HeaderNames} the user is sent in.
    """

    def __init__(self, reactor: Any, resolve: Callable[..., Any],
                 client_certificate: Any = None,
                 on_backend_error: Optional[Callable[[str], Any]] = None,
                 max_agents: int = 64, header_names: HeaderNames = HeaderNames()) -> None:
        self.header_names = header_names
        self.reactor = reactor
        self.resolve = resolve
        self.client_certificate = client_certificate
        self.on_backend_error = on_backend_error
        self.max_agents = max_agents
        self._agents: dict[tuple, tuple[Agent, HTTPConnectionPool]] = {}

    def agent(self, target: ProxyTarget) -> Agent:
        """One kept-alive Agent per (server name, CA bundle, insecure)."""
        key = (target.server_name, hashlib.sha256(target.ca_bundle or b"").hexdigest(),
               target.insecure)
        found = self._agents.get(key)
        if found is not None:
            return found[0]
        pool = HTTPConnectionPool(self.reactor, persistent=True)
        pool.maxPersistentPerHost = 32
        # a kept-alive connection the backend closed is retried for idempotent requests, as
        # Go's transport does
        pool.retryAutomatically = True
        agent = Agent(self.reactor, contextFactory=tls_policy(
            target.server_name, target.ca_bundle, target.insecure, self.client_certificate),
            pool=pool, connectTimeout=30)
        if len(self._agents) >= self.max_agents:
            oldest = next(iter(self._agents))
            self._agents.pop(oldest)[1].closeCachedConnections()
        self._agents[key] = (agent, pool)
        return agent

    def close(self) -> defer.Deferred:
        """Close every kept-alive connection."""
        agents, self._agents = list(self._agents.values()), {}
        return defer.gatherResults([p.closeCachedConnections() for _, p in agents])

    async def serve(self, request: Any, target: ProxyTarget, user: Any) -> None:
        """
        Answer C{request} from the backend of C{target} as C{user}.  Failures are written as
        upstream writes them: 503 C{service unavailable} when the Service resolves to no
        endpoint, 503 with the dial error when the backend cannot be reached.
        """
        try:
            address = await self.resolve(target.namespace, target.service, target.port)
        except Exception as e:
            log.warn("error resolving {ns}/{name}: {err}", ns=target.namespace,
                     name=target.service, err=e)
            write_text_error(request, 503, "service unavailable")
            return
        headers = forwarded_headers(request, user, self.header_names)
        if is_upgrade(request) and isinstance(request.channel, http.HTTPChannel):
            await self._upgrade(request, target, address, headers)
            return
        await self._plain(request, target, address, headers)

    async def _plain(self, request: Any, target: ProxyTarget, address: Any,
                     headers: Headers) -> None:
        url = f"https://{address.netloc}".encode("ascii") + request.uri
        body = None
        content = getattr(request, "content", None)
        if content is not None:
            content.seek(0, 2)
            size = content.tell()
            content.seek(0)
            if size or request.method in (b"POST", b"PUT", b"PATCH"):
                body = FileBodyProducer(content)
        try:
            response = await self.agent(target).request(request.method, url, headers, body)
        except Exception as e:
            reason = _first_reason(e)
            if self.on_backend_error is not None:
                self.on_backend_error(target.name)
            log.warn("proxy to {name} failed: {err}", name=target.name, err=reason)
            write_text_error(request, 503, dial_error(reason, address.host, address.port))
            return
        if request.finished or getattr(request, "_disconnected", False):
            response.deliverBody(_Discard())
            return
        request.setResponseCode(response.code, response.phrase)
        request.defaultContentType = None
        tokens: set[bytes] = set()
        for value in response.headers.getRawHeaders(b"connection", []):
            tokens.update(t.strip().lower() for t in value.split(b","))
        for name, values in response.headers.getAllRawHeaders():
            low = name.lower()
            if low in HOP_HEADERS or low in tokens:
                continue
            request.responseHeaders.setRawHeaders(name, list(values))
        done: defer.Deferred = defer.Deferred()
        relay = _ResponseRelay(request, done)
        request.notifyFinish().addErrback(lambda _: relay.stopProducing())
        response.deliverBody(relay)
        await done

    async def _upgrade(self, request: Any, target: ProxyTarget, address: Any,
                       headers: Headers) -> None:
        """Upstream C{UpgradeAwareHandler.tryUpgrade}: the request on a raw TLS connection;
        the answer's head and everything after it relayed as bytes."""
        for value in request.requestHeaders.getRawHeaders(b"connection", []):
            headers.setRawHeaders(b"Connection", [value])
        for value in request.requestHeaders.getRawHeaders(b"upgrade", []):
            headers.setRawHeaders(b"Upgrade", [value])
        body = b""
        if getattr(request, "content", None) is not None:
            request.content.seek(0)
            body = request.content.read()
        if body:
            headers.setRawHeaders(b"Content-Length", [b"%d" % len(body)])
        headers.setRawHeaders(b"Host", [address.netloc.encode("ascii")])
        head = [request.method + b" " + request.uri + b" HTTP/1.1"]
        for name, values in headers.getAllRawHeaders():
            head += [name + b": " + v for v in values]
        wire = b"\r\n".join(head) + b"\r\n\r\n" + body
        policy = tls_policy(target.server_name, target.ca_bundle, target.insecure,
                            self.client_certificate)
        endpoint = wrapClientTLS(
            policy.creatorForNetloc(target.server_name.encode(), address.port),
            HostnameEndpoint(self.reactor, address.host.encode("ascii"), address.port,
                             timeout=30))
        backend = _UpgradeBackend()
        try:
            await connectProtocol(endpoint, backend)
        except Exception as e:
            if self.on_backend_error is not None:
                self.on_backend_error(target.name)
            write_text_error(request, 503, dial_error(e, address.host, address.port))
            return
        backend.transport.write(wire)
        try:
            code, raw = await backend.head
        except Exception as e:
            write_text_error(request, 503, f"error proxying upgrade: {e}")
            return
        if request.finished or getattr(request, "_disconnected", False):
            backend.transport.loseConnection()
            return
        await hijack(request, backend, raw, switched=code == 101)


class _Discard(protocol.Protocol):
    def connectionLost(self, reason: Any = protocol.connectionDone) -> None:
        pass


class _UpgradeBackend(protocol.Protocol):
    """The backend side of an Upgrade: collects the answer's head, then relays."""

    def __init__(self) -> None:
        self.head: defer.Deferred = defer.Deferred()
        self.buffer = b""
        self.sink: Optional[Callable[[bytes], Any]] = None
        self.on_lost: Optional[Callable[[], Any]] = None

    def dataReceived(self, data: bytes) -> None:
        if self.sink is not None:
            self.sink(data)
            return
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_HEAD:
                self.transport.loseConnection()
            return
        raw, self.buffer = self.buffer, b""
        status = raw.split(b"\r\n", 1)[0].split(b" ")
        try:
            code = int(status[1])
        except (IndexError, ValueError):
            self.head.errback(ValueError("malformed HTTP response from the backend"))
            self.transport.loseConnection()
            return
        self.head.callback((code, raw))

    def connectionLost(self, reason: Any = protocol.connectionDone) -> None:
        if self.on_lost is not None:
            self.on_lost()
        elif not self.head.called:
            self.head.errback(reason)


@implementer(IPushProducer)
class _Valve:
    """A push producer pausing another transport (relay backpressure)."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport

    def pauseProducing(self) -> None:
        self.transport.pauseProducing()

    def resumeProducing(self) -> None:
        self.transport.resumeProducing()

    def stopProducing(self) -> None:
        self.transport.loseConnection()


def hijack(request: Any, backend: _UpgradeBackend, raw: bytes, switched: bool) -> defer.Deferred:
    """
    Take the client's HTTP/1.1 connection over from twisted.web (its C{HTTPChannel} stops
    parsing): write the backend's answer C{raw} (head and any bytes after it), then relay
    bytes both ways until either side closes (C{switched}); a refused upgrade's answer is
    relayed until the backend closes.  The request's C{notifyFinish} fires (as a lost
    connection) when the client connection closes.

    @return: a Deferred fired when the relay has ended.
    """
    done: defer.Deferred = defer.Deferred()
    channel = request.channel
    client = channel.transport
    original_lost = channel.connectionLost
    request.startedWriting = True  # nothing else may write a response now
    channel.setTimeout(None)
    buffered = b"".join(getattr(channel, "_dataBuffer", []))
    channel._dataBuffer = []

    def from_client(data: bytes) -> None:
        if switched:
            backend.transport.write(data)

    def client_lost(reason: Any = protocol.connectionDone) -> None:
        backend.transport.loseConnection()
        original_lost(reason)
        if not done.called:
            done.callback(None)

    def backend_lost() -> None:
        client.loseConnection()

    channel.dataReceived = from_client
    channel.rawDataReceived = from_client  # the rest of a read the parser is still in
    channel.connectionLost = client_lost
    backend.sink = client.write
    backend.on_lost = backend_lost
    client.write(raw)
    if backend.buffer:
        client.write(backend.buffer)
        backend.buffer = b""
    # backpressure: a full client pauses the backend (through the channel's request
    # producer), a full backend pauses the client
    try:
        request.registerProducer(_Valve(backend.transport), True)
    except (RuntimeError, ValueError):
        pass
    backend.transport.registerProducer(_Valve(client), True)
    if switched and buffered:
        backend.transport.write(buffered)
    producer = getattr(channel, "_networkProducer", None)
    if producer is not None:
        producer.resumeProducing()
    return done

