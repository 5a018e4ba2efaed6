# -*- test-case-name: tests.aggregator.test_proxy -*-
"""
The aggregator's proxy (L{kubetwist.aggregator.proxy}): identity headers as client-go sets
them, the headers forwarded, Go's error texts, the streaming response relay with backpressure,
and the Upgrade hijack of a real twisted.web HTTP/1.1 channel.
"""

from __future__ import annotations

import io

from twisted.internet import defer, error
from twisted.internet.address import IPv4Address
from twisted.internet.testing import StringTransport
from twisted.python.failure import Failure
from twisted.trial.unittest import SynchronousTestCase, TestCase
from twisted.web import http, resource, server
from twisted.web.client import ResponseDone
from twisted.web.http_headers import Headers
from twisted.web.test.requesthelper import DummyRequest

from kubetwist.aggregator import proxy as px
from kubetwist.authentication.user import UserInfo
from kubetwist.egress.resolver import Address
from kubetwist.runtime import errors


class HeaderTests(SynchronousTestCase):
    def test_identity_headers(self) -> None:
        """C{SetAuthProxyHeaders}: one header per group and extra value, extra keys escaped."""
        user = UserInfo("jane", uid="42", groups=["dev", "system:authenticated"],
                        extra={"scopes": ["a", "b"], "example.com/key%x y": ["v"]})
        self.assertEqual(px.identity_headers(user), [
            (b"X-Remote-User", b"jane"), (b"X-Remote-Group", b"dev"),
            (b"X-Remote-Group", b"system:authenticated"),
            (b"X-Remote-Extra-scopes", b"a"), (b"X-Remote-Extra-scopes", b"b"),
            (b"X-Remote-Extra-example.com%2Fkey%25x%20y", b"v")])

    def test_forwarded_headers(self) -> None:
        """Credentials, impersonation, client-sent identity and hop-by-hop headers are not
        forwarded; C{X-Forwarded-For} names the client."""
        req = DummyRequest([b""])
        req.client = IPv4Address("TCP", "203.0.113.5", 40000)
        for name, value in ((b"Authorization", b"Bearer x"), (b"Impersonate-User", b"root"),
                            (b"X-Remote-User", b"mallory"), (b"X-Remote-Extra-a", b"1"),
                            (b"Connection", b"keep-alive, X-Drop"), (b"X-Drop", b"1"),
                            (b"Accept", b"application/json"), (b"Content-Length", b"3"),
                            (b"X-Forwarded-For", b"192.0.2.1")):
            req.requestHeaders.setRawHeaders(name, [value])
        out = px.forwarded_headers(req, UserInfo("jane", groups=["g"]))
        self.assertEqual(sorted((k, v) for k, vs in out.getAllRawHeaders() for v in vs), [
            (b"Accept", b"application/json"), (b"X-Forwarded-For", b"192.0.2.1, 203.0.113.5"),
            (b"X-Remote-Group", b"g"), (b"X-Remote-User", b"jane")])

    def test_configured_header_names(self) -> None:
        """The main server's C{--requestheader-*} names (their first entries) carry the user;
        every configured name is stripped from the client's request."""
        names = px.HeaderNames.from_options(["X-User", "X-Other-User"], "X-Groups",
                                            ["X-Extra-"])
        self.assertEqual(px.identity_headers(UserInfo("jane", groups=["g"],
                                                      extra={"k": ["v"]}), names),
                         [(b"X-User", b"jane"), (b"X-Groups", b"g"), (b"X-Extra-k", b"v")])
        req = DummyRequest([b""])
        for name in (b"X-Other-User", b"X-User", b"X-Extra-a", b"X-Groups", b"X-Remote-User"):
            req.requestHeaders.setRawHeaders(name, [b"mallory"])
        out = px.forwarded_headers(req, UserInfo("jane"), names)
        self.assertEqual(list(out.getAllRawHeaders()), [(b"X-User", [b"jane"])])
        self.assertEqual(px.HeaderNames.from_options("", [], None), px.HeaderNames())

    def test_is_upgrade(self) -> None:
        req = DummyRequest([b""])
        self.assertFalse(px.is_upgrade(req))
        req.requestHeaders.setRawHeaders(b"Connection", [b"keep-alive, Upgrade"])
        self.assertTrue(px.is_upgrade(req))

    def test_dial_errors(self) -> None:
        self.assertEqual(px.dial_error(error.ConnectionRefusedError(), "10.0.0.1", 443),
                         "dial tcp 10.0.0.1:443: connect: connection refused")
        self.assertEqual(px.dial_error(error.TimeoutError(), "fd00::1", 8443),
                         "dial tcp [fd00::1]:8443: i/o timeout")

    def test_target_of(self) -> None:
        t = px.target_of({"metadata": {"name": "v1.x"}, "spec": {
            "service": {"namespace": "ns", "name": "api"}, "caBundle": "Q0E=",
            "insecureSkipTLSVerify": False}})
        self.assertEqual((t.name, t.server_name, t.port, t.ca_bundle, t.insecure),
                         ("v1.x", "api.ns.svc", 443, b"CA", False))
        self.assertIsNone(px.target_of({"metadata": {"name": "v1."}, "spec": {}}))


class FakeBackendTransport:
    def __init__(self) -> None:
        self.paused = 0
        self.resumed = 0
        self.stopped = False

    def pauseProducing(self) -> None:
        self.paused += 1

    def resumeProducing(self) -> None:
        self.resumed += 1

    def stopProducing(self) -> None:
        self.stopped = True


class FakeResponse:
    def __init__(self, code: int = 200, headers: dict | None = None) -> None:
        self.code, self.phrase = code, b"OK"
        self.headers = Headers({k: [v] for k, v in (headers or {}).items()})
        self.protocol = None

    def deliverBody(self, protocol) -> None:
        self.protocol = protocol
        protocol.makeConnection(FakeBackendTransport())


class FakeAgent:
    def __init__(self, result) -> None:
        self.result = result
        self.requests = []

    def request(self, method, url, headers, body):
        self.requests.append((method, url, headers, body))
        if isinstance(self.result, Exception):
            return defer.fail(self.result)
        return defer.succeed(self.result)


class StreamingRequest(DummyRequest):
    """A DummyRequest keeping a push producer (DummyRequest's own pulls in a loop)."""

    def registerProducer(self, producer, streaming) -> None:
        self.producer = producer

    def unregisterProducer(self) -> None:
        self.producer = None


def target() -> px.ProxyTarget:
    return px.ProxyTarget("v1.example.io", "default", "api", 443)


class ProxyTests(SynchronousTestCase):
    def proxy(self, agent: FakeAgent, resolve=None) -> px.Proxy:
        async def resolved(ns, name, port):
            return Address("10.213.0.2", 8443, f"{name}.{ns}.svc")

        self.failures = []
        p = px.Proxy(None, resolve or resolved, on_backend_error=self.failures.append)
        p.agent = lambda t: agent  # type: ignore[method-assign]
        return p

    def request(self, uri: bytes = b"/apis/example.io/v1/things?watch=true") -> DummyRequest:
        req = StreamingRequest(uri.split(b"?")[0].split(b"/")[1:])
        req.uri = uri
        req.method = b"GET"
        req.content = io.BytesIO(b"")
        req.requestHeaders.setRawHeaders(b"Authorization", [b"Bearer secret"])
        return req

    def test_streams_as_data_arrives(self) -> None:
        """Each chunk is written when it arrives; the client's backpressure pauses the
        backend; the end of the backend's body finishes the response."""
        response = FakeResponse(200, {b"Content-Type": b"application/json",
                                      b"Transfer-Encoding": b"chunked"})
        agent = FakeAgent(response)
        req = self.request()
        d = defer.ensureDeferred(self.proxy(agent).serve(req, target(), UserInfo("jane")))
        method, url, headers, body = agent.requests[0]
        self.assertEqual((method, url, body),
                         (b"GET", b"https://10.213.0.2:8443/apis/example.io/v1/things?watch=true",
                          None))
        self.assertIsNone(headers.getRawHeaders(b"authorization"))
        self.assertEqual(headers.getRawHeaders(b"x-remote-user"), [b"jane"])
        relay = response.protocol
        relay.dataReceived(b'{"type":"ADDED"}\n')
        self.assertEqual(req.written, [b'{"type":"ADDED"}\n'])
        self.assertEqual(req.finished, 0)
        self.assertIs(req.producer, relay)
        before = req.producer
        relay.pauseProducing()
        relay.resumeProducing()
        self.assertEqual((relay.transport.paused, relay.transport.resumed), (1, 1))
        relay.dataReceived(b'{"type":"MODIFIED"}\n')
        self.assertNoResult(d)
        relay.connectionLost(Failure(ResponseDone()))
        self.successResultOf(d)
        self.assertEqual(req.finished, 1)
        self.assertIsNotNone(before)
        self.assertIsNone(req.producer)
        self.assertEqual(len(req.written), 2)
        self.assertEqual(req.responseHeaders.getRawHeaders(b"content-type"),
                         [b"application/json"])
        self.assertIsNone(req.responseHeaders.getRawHeaders(b"transfer-encoding"))

    def test_client_gone_stops_backend(self) -> None:
        response = FakeResponse()
        req = self.request()
        defer.ensureDeferred(self.proxy(FakeAgent(response)).serve(req, target(),
                                                                   UserInfo("jane")))
        req.processingFailed(Failure(error.ConnectionLost()))
        self.assertTrue(response.protocol.transport.stopped)

    def test_backend_refused(self) -> None:
        """A backend that cannot be reached: 503 with Go's dial error, and the availability
        controller is told."""
        req = self.request()
        self.successResultOf(defer.ensureDeferred(self.proxy(
            FakeAgent(error.ConnectionRefusedError())).serve(req, target(), UserInfo("jane"))))
        self.assertEqual(req.responseCode, 503)
        self.assertEqual(b"".join(req.written),
                         b"dial tcp 10.213.0.2:8443: connect: connection refused\n")
        self.assertEqual(req.responseHeaders.getRawHeaders(b"content-type"),
                         [b"text/plain; charset=utf-8"])
        self.assertEqual(self.failures, ["v1.example.io"])

    def test_no_endpoint_is_service_unavailable(self) -> None:
        async def unresolvable(ns, name, port):
            raise errors.new_service_unavailable('no endpoints available for service "api"')

        req = self.request()
        agent = FakeAgent(FakeResponse())
        self.successResultOf(defer.ensureDeferred(self.proxy(agent, unresolvable).serve(
            req, target(), UserInfo("jane"))))
        self.assertEqual((req.responseCode, b"".join(req.written)),
                         (503, b"service unavailable\n"))
        self.assertEqual(agent.requests, [])


class UpgradeBackend(px._UpgradeBackend):
    pass


class HijackResource(resource.Resource):
    isLeaf = True

    def __init__(self, backend, raw=b"HTTP/1.1 101 Switching Protocols\r\n"
                 b"Upgrade: SPDY/3.1\r\n\r\n", switched=True) -> None:
        super().__init__()
        self.backend = backend
        self.raw, self.switched = raw, switched
        self.requests = []

    def render(self, request):
        self.requests.append(request)
        px.hijack(request, self.backend, self.raw, self.switched)
        return server.NOT_DONE_YET


class HijackTests(SynchronousTestCase):
    def test_refused_upgrade(self) -> None:
        """A backend that does not switch: its answer reaches the client as is, nothing the
        client sends goes to the backend, and the backend's close closes the client."""
        backend = UpgradeBackend()
        backend_transport = StringTransport()
        backend.makeConnection(backend_transport)
        raw = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\n\r\n"
        site = server.Site(HijackResource(backend, raw, switched=False))
        channel = http.HTTPChannel()
        channel.requestFactory = server.Request
        channel.site = site
        client = StringTransport()
        channel.makeConnection(client)
        channel.dataReceived(b"POST /exec HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                             b"Upgrade: SPDY/3.1\r\n\r\n")
        backend.dataReceived(b"not allowed")
        channel.dataReceived(b"frames")
        self.assertEqual(client.value(), raw + b"not allowed")
        self.assertEqual(backend_transport.value(), b"")
        backend.connectionLost(Failure(error.ConnectionDone()))
        self.assertTrue(client.disconnecting)

    def test_relay_both_ways(self) -> None:
        """After the 101, bytes flow both ways unparsed (bytes the client sent early
        included); closing either side closes the other and ends the request."""
        backend = UpgradeBackend()
        backend_transport = StringTransport()
        backend.makeConnection(backend_transport)
        site = server.Site(HijackResource(backend))
        channel = http.HTTPChannel()
        channel.requestFactory = server.Request
        channel.site = site
        client = StringTransport()
        channel.makeConnection(client)
        channel.dataReceived(b"POST /exec HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                             b"Upgrade: SPDY/3.1\r\n\r\nearly")
        self.assertEqual(client.value(),
                         b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: SPDY/3.1\r\n\r\n")
        self.assertEqual(backend_transport.value(), b"early")
        channel.dataReceived(b"GET / HTTP/1.1\r\n")  # not parsed: relayed
        self.assertEqual(backend_transport.value(), b"earlyGET / HTTP/1.1\r\n")
        client.clear()
        backend.dataReceived(b"\x80\x03 frames")
        self.assertEqual(client.value(), b"\x80\x03 frames")
        request = site.resource.requests[0]
        finished = request.notifyFinish()
        backend.connectionLost(Failure(error.ConnectionDone()))
        self.assertTrue(client.disconnecting)
        channel.connectionLost(Failure(error.ConnectionDone()))
        self.assertTrue(backend_transport.disconnecting)
        self.failureResultOf(finished)


class TLSBackendTests(TestCase):
    """The proxy's TLS against a real loopback server: the certificate is verified with the
    APIService's CA bundle for C{<service>.<namespace>.svc} (nothing verified when
    C{insecureSkipTLSVerify}), and the front-proxy certificate is presented."""

    def setUp(self) -> None:
        from twisted.internet import reactor, ssl

        from tests.pki import CA

        self.reactor = reactor
        self.ca = CA("backend-ca")
        serving = self.ca.issue("api", dns_names=["api.default.svc"])
        proxy_ca = CA("front-proxy-ca")
        proxy_pair = proxy_ca.issue("front-proxy-client", client=True)
        self.client_certificate = ssl.PrivateCertificate.loadPEM(proxy_pair.pem)
        pc = ssl.PrivateCertificate.loadPEM(serving.pem)
        options = ssl.CertificateOptions(
            privateKey=pc.privateKey.original, certificate=pc.original, verify=True,
            caCerts=[ssl.Certificate.loadPEM(proxy_ca.cert).original],
            requireCertificate=True)
        seen = self.seen = []

        class Echo(resource.Resource):
            isLeaf = True

            def render(self, request):
                cert = request.channel.transport.getPeerCertificate()
                seen.append((cert.get_subject().CN,
                             request.requestHeaders.getRawHeaders(b"x-remote-user")))
                return b"hello"

        self.port = reactor.listenSSL(0, server.Site(Echo()), options, interface="127.0.0.1")
        self.addCleanup(self.port.stopListening)

    async def fetch(self, ca_bundle, insecure=False, service="api"):
        port = self.port.getHost().port

        async def resolve(ns, name, p):
            return Address("127.0.0.1", port, f"{name}.{ns}.svc")

        proxy = px.Proxy(self.reactor, resolve, self.client_certificate)
        self.addCleanup(proxy.close)
        req = StreamingRequest([b""])
        req.uri, req.method, req.content = b"/apis/x/v1", b"GET", io.BytesIO(b"")
        finished = req.notifyFinish()
        await proxy.serve(req, px.ProxyTarget("v1.x", "default", service, 443, ca_bundle,
                                              insecure), UserInfo("jane"))
        await finished
        return req.responseCode, b"".join(req.written)

    async def test_verified_with_ca_bundle(self) -> None:
        code, body = await self.fetch(self.ca.cert)
        self.assertEqual((code, body), (200, b"hello"))
        self.assertEqual(self.seen, [("front-proxy-client", [b"jane"])])

    async def test_wrong_ca_refused(self) -> None:
        from tests.pki import CA

        code, body = await self.fetch(CA("other").cert)
        self.assertEqual((code, body), (503, b"tls: failed to verify certificate: x509: "
                                             b"certificate signed by unknown authority\n"))
        self.assertEqual(self.seen, [])

    async def test_wrong_name_refused(self) -> None:
        """The certificate must name C{<service>.<namespace>.svc}, whatever the address."""
        code, body = await self.fetch(self.ca.cert, service="other")
        self.assertEqual(code, 503)
        self.assertTrue(body.startswith(b"tls: failed to verify certificate: x509: "), body)
        self.assertEqual(self.seen, [])

    async def test_insecure_skips_verification(self) -> None:
        from tests.pki import CA

        code, body = await self.fetch(CA("other").cert, insecure=True)
        self.assertEqual((code, body), (200, b"hello"))
