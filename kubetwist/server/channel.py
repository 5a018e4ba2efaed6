# -*- test-case-name: tests.server.test_channel -*-
"""
The HTTP connection of the secure port: Twisted's HTTP/1.1 and HTTP/2 channels with Go's
header limits, as kube-apiserver's C{http.Server} has them (C{MaxHeaderBytes: 1 << 20} in
C{k8s.io/apiserver/pkg/server/secure_serving.go}).

Twisted's defaults are much smaller: 16 KiB for the request line and all headers of HTTP/1.1
(C{HTTPChannel.totalHeadersSize}, C{LineReceiver.MAX_LENGTH}; past it the connection is dropped
without an answer) and 64 KiB for an HTTP/2 header list (C{h2}'s
C{SETTINGS_MAX_HEADER_LIST_SIZE}), so a long label selector (10,000 terms, 118 KB of URL)
never got an answer.  Here:

  - HTTP/1.1 takes a request line and headers of up to L{MAX_HEADER_BYTES} plus 4096 bytes,
    CRLFs included (Go's C{initialReadLimitSize}; measured on kube-apiserver v1.32: 1052672
    bytes answer, 1052673 get 431), and answers Go's C{431 Request Header Fields Too Large}
    beyond, then closes;
  - HTTP/2 advertises and enforces a header list of L{MAX_HEADER_BYTES} plus 320 (Go's
    C{adjustHTTP1MaxHeaderSize}: ten headers' 32-byte overhead); beyond, the connection ends
    with a GOAWAY (Go answers that stream 431, which C{h2} cannot do).
"""

from __future__ import annotations

from typing import Any

import h2.settings
from twisted.web import http
from twisted.web._http2 import H2Connection
from twisted.web.server import Site

#: Go's C{http.DefaultMaxHeaderBytes}, kube-apiserver's C{MaxHeaderBytes}: 1 MiB.
MAX_HEADER_BYTES = 1 << 20

#: The most bytes of request line and headers (CRLFs and the blank line included) an HTTP/1.1
#: request may have: net/http reads C{MaxHeaderBytes + 4096}.
HTTP1_HEADER_LIMIT = MAX_HEADER_BYTES + 4096

#: The HTTP/2 C{SETTINGS_MAX_HEADER_LIST_SIZE} (names, values and 32 bytes per field), as
#: C{golang.org/x/net/http2} derives it from C{MaxHeaderBytes}.
H2_HEADER_LIST_LIMIT = MAX_HEADER_BYTES + 10 * 32

#: Go's answer to an HTTP/1.1 request whose headers are too large (C{net/http} C{serve}).
TOO_LARGE_RESPONSE = (b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                      b"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
                      b"431 Request Header Fields Too Large")

#: How long the connection stays open after the 431, in seconds, so the client can read it
#: while it is still sending (Go's C{closeWriteAndWait}, C{rstAvoidanceDelay}).
CLOSE_DELAY = 0.5


class KubeHTTPChannel(http.HTTPChannel):
    """An HTTP/1.1 channel with Go's header limit and its 431 answer."""

    MAX_LENGTH = HTTP1_HEADER_LIMIT
    totalHeadersSize = HTTP1_HEADER_LIMIT
    # Go counts header bytes, not headers
    maxHeaders = HTTP1_HEADER_LIMIT

    _tooLarge = False

    def lineReceived(self, line: bytes) -> None:
        if self._tooLarge:
            return
        # Twisted counts lines without their CRLF; net/http counts every byte it reads
        if self._receivedHeaderSize + len(line) + 2 > HTTP1_HEADER_LIMIT:
            self._headersTooLarge()
            return
        self._receivedHeaderSize += 2
        super().lineReceived(line)

    def lineLengthExceeded(self, line: bytes) -> None:
        self._headersTooLarge()

    def _headersTooLarge(self) -> None:
        """Answer 431, ignore what else arrives, close after L{CLOSE_DELAY}."""
        self._tooLarge = True
        self.clearLineBuffer()
        self.dataReceived = lambda data: None  # type: ignore[method-assign]
        self.transport.write(TOO_LARGE_RESPONSE)
        self.setTimeout(None)
        self.callLater(CLOSE_DELAY, self.loseConnection)


class KubeH2Connection(H2Connection):
    """An HTTP/2 connection that takes header lists of up to L{H2_HEADER_LIST_LIMIT}."""

    def __init__(self, reactor: Any = None) -> None:
        super().__init__(reactor)
        settings = dict(self.conn.local_settings.items())
        settings[h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE] = H2_HEADER_LIST_LIMIT
        # the initial SETTINGS frame carries these; the decoder enforces the limit at once,
        # before the client acknowledges them
        self.conn.local_settings = h2.settings.Settings(client=False, initial_values=settings)
        self.conn.decoder.max_header_list_size = H2_HEADER_LIST_LIMIT


class KubeChannelProtocol(http._GenericHTTPChannelProtocol):
    """
    Twisted's ALPN switch between HTTP/1.1 and HTTP/2 (C{_GenericHTTPChannelProtocol}), with
    L{KubeH2Connection} for C{h2}.
    """

    def dataReceived(self, data: bytes) -> None:
        if self._negotiatedProtocol is None:
            negotiated = getattr(self._channel.transport, "negotiatedProtocol", None)
            if negotiated == b"h2":
                network_producer = self._channel._networkProducer
                network_producer.unregisterProducer()
                self._channel.setTimeout(None)
                transport = self._channel.transport
                self._channel = KubeH2Connection(getattr(self._factory, "reactor", None))
                self._channel.requestFactory = self._requestFactory
                self._channel.site = self._site
                self._channel.factory = self._factory
                self._channel.timeOut = self._timeOut
                self._channel.callLater = self._callLater
                self._channel.makeConnection(transport)
                network_producer.registerProducer(self._channel, True)
                self._negotiatedProtocol = negotiated
        super().dataReceived(data)


def _protocol(factory: http.HTTPFactory) -> KubeChannelProtocol:
    return KubeChannelProtocol(KubeHTTPChannel())


class KubeSite(Site):
    """The C{Site} of the secure port: L{KubeHTTPChannel} and L{KubeH2Connection}."""

    protocol = _protocol  # type: ignore[assignment]
