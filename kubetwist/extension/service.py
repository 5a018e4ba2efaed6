# -*- test-case-name: tests.integration.test_wardle -*-
"""
The process of an extension API server: upstream C{GenericAPIServer.PrepareRun().Run()} with
C{RecommendedOptions.ApplyTo} (self-signed serving certificates, storage, delegated
authentication and authorization), as a Twisted C{MultiService}.

L{ExtensionAPIService} starts in this order: serving certificates (C{--tls-cert-file}, else
generated once in C{--cert-dir}: a CA, whose C{ca.crt} is the C{caBundle} an APIService
names, and a serving certificate for C{localhost}, the host's name and addresses), the storage
(etcd3 over the gateway with C{--etcd-servers}, else the embedded store in C{--data-dir}) behind
the watch cache, then -- asynchronously, as upstream reads the ConfigMap before serving -- the
delegated authentication and authorization, the server (L{assemble_extension}), the HTTPS
listener (client certificates of the client and front-proxy CAs accepted) and the post-start
hooks.  A start-up failure prints one line and exits 1.  Shutdown: not ready, the
C{--shutdown-delay-duration}, stop listening, end watches, drain, stop the storage.
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any, Callable, Optional

from twisted.application.service import MultiService
from twisted.internet import defer, task
from twisted.internet.interfaces import IOpenSSLServerConnectionCreator
from twisted.logger import Logger
from zope.interface import implementer

from kubetwist.extension.delegated import (
    DelegationError,
    build_delegated_authentication,
    build_delegated_authorizer,
)
from kubetwist.extension.server import ExtensionConfig, assemble_extension

log = Logger()

__all__ = ["ExtensionAPIService", "StartError", "SwappableTLS"]


class StartError(Exception):
    """An expected start-up failure: one line, no traceback."""


#: How often the trust published in the ConfigMap is read again, in seconds (upstream's
#: controllers follow it with a watch).
TRUST_RELOAD_SECONDS = 60.0


@implementer(IOpenSSLServerConnectionCreator)
class SwappableTLS:
    """
    The listener's TLS, rebuilt when the trusted client CAs change (upstream's dynamic
    serving: each connection gets the current C{tls.Config}).

    @param build: C{client CAs -> ServerTLSContextFactory}.
    """

    def __init__(self, build: Callable[[list], Any], client_cas: list) -> None:
        self.build = build
        self.current = build(client_cas)

    def swap(self, client_cas: list) -> None:
        """New connections verify client certificates against C{client_cas}."""
        self.current = self.build(client_cas)

    def getContext(self) -> Any:  # noqa: N802 -- twisted.internet.ssl.ContextFactory
        return self.current.getContext()

    def serverConnectionForTLS(self, tlsProtocol: Any) -> Any:  # noqa: N802 -- Twisted's
        return self.current.serverConnectionForTLS(tlsProtocol)


class ExtensionAPIService(MultiService):
    """
    @param reactor: the reactor.
    @param options: parsed L{ExtensionServerOptions
        <kubetwist.extension.options.ExtensionServerOptions>}.
    @param config: what the server serves; a callable C{() -> ExtensionConfig} is called once
        the storage exists.
    @param client_factory: C{WebhookTarget -> treq client} for the delegated calls (tests).
    """

    def __init__(self, reactor: Any, options: Any, config: ExtensionConfig | Callable[[], Any],
                 client_factory: Optional[Callable] = None) -> None:
        super().__init__()
        self.reactor = reactor
        self.options = options
        self.config = config
        self.client_factory = client_factory
        self.shutting_down = False
        self.port: Any = None
        self.extension: Any = None
        self.storage: Any = None
        self.ready: defer.Deferred = defer.Deferred()
        self._pool: Any = None

    # --- building ------------------------------------------------------------------------------
    def _serving_certs(self) -> tuple[str, str]:
        from kubetwist.server.certs import ensure_serving_certs

        o = self.options
        if o["tls-cert-file"]:
            return o["tls-cert-file"], o["tls-private-key-file"]
        ips = [o["bind-address"]] if o["bind-address"] not in ("0.0.0.0", "::") else []
        certs = ensure_serving_certs(os.path.abspath(o["cert-dir"]), [socket.gethostname()],
                                     ips)
        return certs.cert_file, certs.key_file

    def build_storage(self) -> Any:
        """The backend (etcd3 with C{--etcd-servers}, else the embedded store) behind the
        watch cache.

        @raise kubetwist.storage.sqlite.DataDirInUseError: another process uses C{--data-dir}.
        """
        from kubetwist.storage.cacher import Cacher

        o = self.options
        if o["etcd-servers"]:
            from kubetwist.storage.etcd3 import Etcd3Storage, new_etcd_client

            client, self._pool = new_etcd_client(self.reactor, o["etcd-cafile"],
                                                 o["etcd-certfile"], o["etcd-keyfile"])
            backend = Etcd3Storage(self.reactor, client, o["etcd-servers"], o["etcd-prefix"])
        else:
            from kubetwist.storage.sqlite import SQLiteStorage, secure_directory

            warning = secure_directory(o["data-dir"])
            if warning:
                log.warn("{problem}", problem=warning)
            backend = SQLiteStorage(
                self.reactor, os.path.join(o["data-dir"], "state.db"), o["etcd-prefix"],
                lock_path=os.path.join(o["data-dir"], "state.db.lock"))
        return Cacher(backend, self.reactor)

    async def build(self) -> None:
        """Delegated authentication and authorization, then the server (no listening)."""
        from kubetwist.server.tls import ServerTLSContextFactory, load_certificates

        o = self.options
        cert_file, key_file = self._serving_certs()
        self.storage = self.build_storage()
        authentication = await build_delegated_authentication(
            self.reactor, o.authentication_options(), self.client_factory)
        authorizer = build_delegated_authorizer(self.reactor, o.authorization_options(),
                                                self.client_factory)
        config = self.config if isinstance(self.config, ExtensionConfig) else self.config()
        names = o.get("admission-plugins")
        if names is not None:
            plugins = [p for p in config.admission_plugins if p[0] in names]
            core = o.get("kubeconfig") or o["authentication-kubeconfig"]
            if "NamespaceLifecycle" in names and core:
                from kubetwist.extension.namespaces import namespace_lifecycle

                try:
                    plugins.insert(0, namespace_lifecycle(self.reactor, core,
                                                          self.client_factory))
                except ValueError as e:
                    raise StartError(f"failed to load the core kubeconfig: {e}") from None
            elif "NamespaceLifecycle" in names:
                log.warn("No kubeconfig of the core server: NamespaceLifecycle is off")
            config.admission_plugins = plugins
        host = o["bind-address"] if o["bind-address"] not in ("0.0.0.0", "::") else "127.0.0.1"
        self.extension = assemble_extension(
            self.storage, self.reactor, config, authenticator=authentication.authenticator,
            authorizer=authorizer, server_address=f"{host}:{o['secure-port']}",
            shutdown_check=self._shutdown_check,
            max_requests_inflight=o["max-requests-inflight"],
            max_mutating_requests_inflight=o["max-mutating-requests-inflight"],
            request_timeout=o["request-timeout"], min_request_timeout=o["min-request-timeout"])
        from cryptography.hazmat.primitives import serialization

        with open(key_file, "rb") as f:
            key = serialization.load_pem_private_key(f.read(), password=None)
        chain = load_certificates(cert_file)
        self.authentication = authentication
        self.tls = SwappableTLS(
            lambda cas: ServerTLSContextFactory(chain, key, cas), authentication.client_cas)

    def _shutdown_check(self) -> None:
        if self.shutting_down:
            raise RuntimeError("process is shutting down")

    # --- lifecycle -----------------------------------------------------------------------------
    def startService(self) -> None:
        super().startService()
        d = defer.ensureDeferred(self._start())
        d.addErrback(self._start_failed)

    async def _start(self) -> None:
        from kubetwist.endpoints import offload
        from kubetwist.server.channel import KubeSite
        from kubetwist.server.reuseport import secure_endpoint

        await self.build()
        offload.configure(self.reactor, self.reactor.getThreadPool())
        site = KubeSite(self.extension.chain)
        site.displayTracebacks = False
        site.noisy = False
        site.log = lambda request: None
        endpoint = secure_endpoint(self.reactor, self.options, self.tls)
        try:
            self.port = await endpoint.listen(site)
        except Exception as e:  # noqa: BLE001 -- reported as the start-up failure
            raise StartError(f"cannot listen on {self.options['bind-address']}:"
                               f"{self.options['secure-port']}: {e}") from None
        log.info("Serving securely on {addr}", addr=self.port.getHost())
        self.extension.server.hooks.setServiceParent(self)
        if self.authentication.reload is not None:
            self._reloading = task.LoopingCall(self._reload_trust)
            self._reloading.clock = self.reactor
            self._reloading.start(TRUST_RELOAD_SECONDS, now=False)
        self.ready.callback(self.port)

    async def _reload(self) -> None:
        if await self.authentication.reload():
            self.tls.swap(self.authentication.client_cas)

    def _reload_trust(self) -> Any:
        """Read the ConfigMap again; new CAs reach the next TLS connections."""

        def failed(failure: Any) -> None:
            log.warn("unable to reload configmap/extension-apiserver-authentication: {err}",
                     err=failure.getErrorMessage())

        return defer.ensureDeferred(self._reload()).addErrback(failed)

    def _start_failed(self, failure: Any) -> None:
        from kubetwist.storage.sqlite import DataDirInUseError

        if not failure.check(DataDirInUseError, DelegationError, StartError):
            log.failure("the extension API server failed to start", failure)
        print(f"Error: {failure.getErrorMessage()}", file=sys.stderr)
        sys.stderr.flush()
        self.reactor.addSystemEventTrigger("after", "shutdown", os._exit, 1)
        if getattr(self.reactor, "running", False):
            self.reactor.stop()
        else:
            self.reactor.callWhenRunning(self.reactor.stop)

    def stopService(self) -> Any:
        """Upstream's graceful termination: not ready, delay, stop listening, drain, stop."""
        return defer.ensureDeferred(self._stop())

    async def _stop(self) -> None:
        self.shutting_down = True
        if getattr(self, "_reloading", None) is not None and self._reloading.running:
            self._reloading.stop()
        delay = self.options.get("shutdown-delay-duration", 0)
        if delay and self.port is not None:
            await task.deferLater(self.reactor, delay, lambda: None)
        if self.port is not None:
            await self.port.stopListening()
        chain = self.extension.chain if self.extension is not None else None
        if chain is not None:
            for request in list(chain.long_running):
                try:
                    if not request.finished:
                        request.finish()
                except Exception:  # noqa: BLE001 -- the connection may be gone already
                    pass
            deadline = self.reactor.seconds() + max(self.options.get("request-timeout", 60), 1)
            while chain.active and self.reactor.seconds() < deadline:
                await task.deferLater(self.reactor, 0.05, lambda: None)
        await defer.maybeDeferred(super().stopService)
        if self.storage is not None:
            await self.storage.stop()
        if self._pool is not None:
            await self._pool.closeCachedConnections()
