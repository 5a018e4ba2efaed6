# -*- test-case-name: tests.server.test_reuseport -*-
"""
The secure listener, optionally shared between processes with C{SO_REUSEPORT}.

Upstream kube-apiserver scales one process over every core with goroutines; a Twisted process
runs Python on one core, so kubetwist uses all cores by running several C{twistd kubeapi}
processes on one etcd.  With C{--reuse-port} each of them binds the same C{--secure-port} with
C{SO_REUSEPORT}; the kernel spreads new connections over the listening processes, so clients
see one server (upstream C{k8s.io/apiserver/pkg/server/options.SecureServingOptions} has no
such flag; it is kubetwist's).  The socket is made here and handed to the reactor with
C{adoptStreamPort}; TLS (with its ALPN protocols) wraps the site as C{listenSSL} would.
"""

from __future__ import annotations

import socket
from typing import Any

from twisted.internet.defer import Deferred, execute, fail, succeed
from twisted.internet.interfaces import IStreamServerEndpoint
from twisted.protocols.tls import TLSMemoryBIOFactory
from zope.interface import implementer


@implementer(IStreamServerEndpoint)
class ReusePortSSLServerEndpoint:
    """
    A TLS TCP server endpoint whose socket has C{SO_REUSEPORT} (and C{SO_REUSEADDR}) set.

    @param reactor: an C{IReactorSocket} (it adopts the listening socket).
    @param port: the TCP port.
    @param context_factory: the server's TLS context factory (as for C{listenSSL}).
    @param interface: the address to bind (C{""} or C{0.0.0.0}: every IPv4 address; an IPv6
        address binds IPv6).
    @param backlog: the listen queue length.
    """

    def __init__(self, reactor: Any, port: int, context_factory: Any, interface: str = "",
                 backlog: int = 50) -> None:
        self._reactor = reactor
        self._port = port
        self._context_factory = context_factory
        self._interface = interface
        self._backlog = backlog

    def listen(self, factory: Any) -> Deferred:
        """Bind, listen and adopt; fires with the C{IListeningPort} or fails with C{OSError}."""
        family = socket.AF_INET6 if ":" in self._interface else socket.AF_INET
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            return fail()
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((self._interface, self._port))
            sock.listen(self._backlog)
            sock.setblocking(False)
            wrapped = TLSMemoryBIOFactory(self._context_factory, False, factory,
                                          clock=self._reactor)
            port = self._reactor.adoptStreamPort(sock.fileno(), family, wrapped)
        except Exception:  # noqa: BLE001 -- any failure is the listen Deferred's failure
            return fail()
        finally:
            # the reactor listens on its own duplicate of the descriptor
            sock.close()
        return succeed(port)


@implementer(IStreamServerEndpoint)
class SSLServerEndpoint:
    """
    What Twisted's C{SSL4ServerEndpoint} does (C{listenTCP} of a C{TLSMemoryBIOFactory}),
    with the TLS layer's timer on C{reactor}: C{listenSSL} gives it the global reactor, which
    a server on a reactor of its own (L{kubetwist.testing}'s, in a thread) never runs, so its
    small writes would never be flushed.
    """

    def __init__(self, reactor: Any, port: int, context_factory: Any, interface: str = "",
                 backlog: int = 50) -> None:
        self._reactor = reactor
        self._port = port
        self._context_factory = context_factory
        self._interface = interface
        self._backlog = backlog

    def listen(self, factory: Any) -> Deferred:
        """Fires with the C{IListeningPort}, or fails with C{CannotListenError}."""
        wrapped = TLSMemoryBIOFactory(self._context_factory, False, factory,
                                      clock=self._reactor)
        return execute(self._reactor.listenTCP, self._port, wrapped, backlog=self._backlog,
                       interface=self._interface)


def secure_endpoint(reactor: Any, options: dict, context_factory: Any) -> Any:
    """
    The endpoint C{--secure-port}/C{--bind-address} listen on: with C{--reuse-port}, a
    L{ReusePortSSLServerEndpoint}, else an L{SSLServerEndpoint}.
    """
    if options.get("reuse-port"):
        return ReusePortSSLServerEndpoint(reactor, options["secure-port"], context_factory,
                                          interface=options["bind-address"])
    return SSLServerEndpoint(reactor, options["secure-port"], context_factory,
                             interface=options["bind-address"])
