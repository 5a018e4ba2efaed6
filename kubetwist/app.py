# -*- test-case-name: tests.test_app,tests.test_app_assemble -*-
"""
The composition root, next to L{kubetwist.tap}: the process-level service tree, upstream
C{cmd/kube-apiserver/app/server.go CreateServerChain}
and C{k8s.io/apiserver/pkg/server/genericapiserver.go PrepareRun/Run} (lifecycle signals:
readiness, shutdown delay, listener close, drain, watches end).

L{KubeAPIService} (a MultiService) owns: the storage, the chain aggregator -> kube-apiserver ->
apiextensions-apiserver behind one L{HandlerChain}, the HTTPS listener, and each server's
post-start hooks (started once the listener is up).  C{READY=1} goes to systemd when every
hook has finished; C{STOPPING=1} when shutdown begins.  With C{--workers N} the service is
worker 0 and starts the others once it listens (L{kubetwist.server.workers}).
"""

from __future__ import annotations

import os
import platform
import socket
import sys
from dataclasses import dataclass
from typing import Any, Optional

from twisted.application.service import MultiService
from twisted.internet import defer, task
from twisted.logger import Logger

from kubetwist import authorization
from kubetwist.authorization import options as authorization_options
from kubetwist.server.channel import KubeSite
from kubetwist.server.healthz import HealthCheck, install_generic_checks
from kubetwist.server.reuseport import secure_endpoint

log = Logger()


class ShuttingDown(Exception):
    """The server is shutting down."""


class KubeAPIService(MultiService):
    """
    @param reactor: the reactor (listening, threads, time).
    @param options: the parsed L{kubetwist.tap.Options} as a dict.
    @param version: the Kubernetes gitVersion reported by C{/version}.
    """

    def __init__(self, reactor: Any, options: dict, version: str) -> None:
        super().__init__()
        self.reactor = reactor
        self.options = options
        self.version = version
        self.shutting_down = False
        self.port: Any = None
        self.chain: Any = None
        self.storage: Any = None
        self.front: Any = None
        self._pool: Any = None

    # --- building ------------------------------------------------------------------------------
    def version_info(self) -> dict:
        major, minor = self.version.lstrip("v").split(".")[:2]
        return {
            "major": major, "minor": minor, "gitVersion": self.version,
            "gitCommit": "kubetwist", "gitTreeState": "clean",
            "buildDate": "2026-11-21T00:00:00Z",
            "goVersion": f"python{platform.python_version()}",
            "compiler": platform.python_implementation().lower(),
            "platform": f"{sys.platform}/{platform.machine().replace('x86_64', 'amd64')}",
        }

    def _advertise_address(self) -> str:
        o = self.options
        if o["advertise-address"]:
            return o["advertise-address"]
        if o["bind-address"] not in ("0.0.0.0", "::") and \
                not o["bind-address"].startswith("127."):
            return o["bind-address"]
        return host_address()

    def _client_host(self) -> str:
        bind = self.options["bind-address"]
        if bind in ("0.0.0.0", "::"):
            return "127.0.0.1"
        return f"[{bind}]" if ":" in bind else bind

    def _secure_data_dir(self) -> None:
        """The data directory (embedded store, CA key, admin kubeconfig) is the owner's alone:
        created 0700, or changed to 0700 with a warning in the log."""
        from kubetwist.storage.sqlite import secure_directory

        warning = secure_directory(self.options["data-dir"])
        if warning:
            log.warn("{problem}", problem=warning)

    def build_storage(self) -> Any:
        """
        The storage backend (etcd3 over the gateway, with TLS when configured, or the
        embedded store, locked to this process) and its compactor, a child service on the
        reactor (upstream C{--etcd-compaction-interval}).

        @raise kubetwist.storage.sqlite.DataDirInUseError: another process uses C{--data-dir}.
        """
        from kubetwist.storage.compaction import DEFAULT_COMPACTION_INTERVAL, CompactorService
        from kubetwist.storage.value import with_encryption_config

        o = self.options
        encryption = o.get("encryption-provider-config")
        if o["etcd-servers"]:
            from kubetwist.storage.etcd3 import Etcd3Storage, new_etcd_client

            client, self._pool = new_etcd_client(
                self.reactor, o.get("etcd-cafile", ""), o.get("etcd-certfile", ""),
                o.get("etcd-keyfile", ""),
            )
            storage = with_encryption_config(Etcd3Storage(
                self.reactor, client, o["etcd-servers"], o["etcd-prefix"]), encryption)
        else:
            from kubetwist.storage.sqlite import SQLiteStorage

            self._secure_data_dir()
            storage = with_encryption_config(SQLiteStorage(
                self.reactor, os.path.join(o["data-dir"], "state.db"), o["etcd-prefix"],
                lock_path=os.path.join(o["data-dir"], "state.db.lock"),
                sync=o.get("embedded-sync", "normal")), encryption)
        self.compactor = CompactorService(
            storage, self.reactor,
            o.get("etcd-compaction-interval", DEFAULT_COMPACTION_INTERVAL),
        )
        self.compactor.setServiceParent(self)
        return storage

    def build(self) -> None:
        """Certificates, storage, the server chain and the filter chain (no listening yet)."""
        from kubetwist.aggregator.proxy import HeaderNames
        from kubetwist.aggregator.server import AggregatorConfig, load_proxy_client_certificate
        from kubetwist.apis import printers
        from kubetwist.authentication.tokenfile import TokenFileAuthenticator
        from kubetwist.controlplane.clusterauthenticationtrust import (
            from_options as cluster_authentication_info,
        )
        from kubetwist.controlplane.instance import ControlPlaneConfig
        from kubetwist.server.certs import ensure_serving_certs
        from kubetwist.server.kubeconfig import write_kubeconfig
        from kubetwist.server.tls import server_context_factory

        o = self.options
        printers.set_clock(self.reactor.seconds)
        self._secure_data_dir()
        advertise = self._advertise_address()
        ips = [advertise]
        if o["bind-address"] not in ("0.0.0.0", "::"):
            ips.append(o["bind-address"])
        certs = ensure_serving_certs(
            o["cert-dir"], [socket.gethostname()], ips,
            service_cidr=o["service-cluster-ip-range"],
        )
        cert_file, key_file = certs.cert_file, certs.key_file
        if o["tls-cert-file"]:
            cert_file, key_file = o["tls-cert-file"], o["tls-private-key-file"]
        extra_cas = [o["client-ca-file"]] if o["client-ca-file"] else []
        if o.get("requestheader-client-ca-file"):  # the TLS layer accepts the proxy's CA too
            extra_cas.append(o["requestheader-client-ca-file"])
        self.tls = server_context_factory(cert_file, key_file, certs.client_ca_files(extra_cas))
        tokens = []
        if o["token-auth-file"]:
            tokens.append(TokenFileAuthenticator.from_file(o["token-auth-file"]))
        sa_tokens = self.service_account_tokens()
        sa_authenticator = sa_tokens.authenticator(self.reactor)
        tokens.append(sa_authenticator)
        from kubetwist.authentication.options import build_authentication

        self.authentication = build_authentication(
            o, self.reactor, self.tls.client_ca_certs, tokens, sa_authenticator)
        authenticator = self.authentication.authenticator
        with open(certs.ca_cert_file) as f:
            ca_pem = f.read()

        from kubetwist.storage.cacher import Cacher

        # the watch cache in front of the backend (upstream's Cacher): lists at
        # resourceVersion 0 / NotOlderThan and all watches are served from memory
        self.storage = Cacher(self.build_storage(), self.reactor)
        self.authentication.set_storage(self.storage)  # SA lookup, bootstrap tokens
        from kubetwist.audit import from_options as audit_from_options

        self.audit = audit_from_options(o, self.reactor)
        if self.audit is not None:
            self.audit.backend.run()
        parts = assemble(
            self.storage, self.reactor,
            ControlPlaneConfig(
                service_cidr=o["service-cluster-ip-range"],
                node_port_range=o["service-node-port-range"],
                advertise_address=advertise, secure_port=o["secure-port"],
                root_ca_pem=ca_pem, min_request_timeout=o["min-request-timeout"],
                admission_plugins=o.get("admission-plugins"),
                admission_configs=o.get("admission-configs"),
                enable_priority_and_fairness=o.get("enable-priority-and-fairness", True),
                cluster_authentication=cluster_authentication_info(
                    o, certs.client_ca_files([o["client-ca-file"]] if o["client-ca-file"]
                                             else [])),
            ),
            authenticator=authenticator,
            authorizer=authorization_options.build_authorizer(
                o,
                authorization.AuthorizerConfig(storage=self.storage, reactor=self.reactor,
                                               options=o)),
            version_info=self.version_info(),
            server_address=f"{advertise}:{o['secure-port']}",
            shutdown_check=self._shutdown_check,
            max_requests_inflight=o["max-requests-inflight"],
            max_mutating_requests_inflight=o["max-mutating-requests-inflight"],
            request_timeout=o["request-timeout"],
            service_account_tokens=sa_tokens,
            cors_allowed_origins=o.get("cors-allowed-origins") or [],
            hsts_directives=o.get("strict-transport-security-directives") or [],
            audit=self.audit,
            aggregator_config=AggregatorConfig(
                routing=o.get("enable-aggregator-routing", True), reactor=self.reactor,
                header_names=HeaderNames.from_options(
                    o.get("requestheader-username-headers"),
                    o.get("requestheader-group-headers"),
                    o.get("requestheader-extra-headers-prefix")),
                client_certificate=load_proxy_client_certificate(
                    o.get("proxy-client-cert-file", ""), o.get("proxy-client-key-file", ""))),
        )
        self.front, self.kube, self.chain = parts.front, parts.kube, parts.chain
        if o.get("worker-index", 0):
            return  # worker 0 wrote the kubeconfig before starting the others
        os.makedirs(os.path.dirname(o["write-kubeconfig"]), exist_ok=True)
        write_kubeconfig(
            o["write-kubeconfig"], f"https://{self._client_host()}:{o['secure-port']}",
            certs.ca_cert_file, certs.admin_cert_file, certs.admin_key_file,
        )

    def service_account_tokens(self) -> Any:
        """
        The L{ServiceAccountTokenConfig
        <kubetwist.registry.core.serviceaccount_token.ServiceAccountTokenConfig>} of the
        C{--service-account-*} and C{--api-audiences} flags; with no key files, the key pair
        generated once in C{--cert-dir}.
        """
        from kubetwist.authentication.serviceaccount_keys import load_service_account_keys
        from kubetwist.registry.core.serviceaccount_token import ServiceAccountTokenConfig

        o = self.options
        keys = load_service_account_keys(o.get("service-account-signing-key-file", ""),
                                         o.get("service-account-key-file") or [], o["cert-dir"])
        issuers = o.get("service-account-issuer") or \
            ["https://kubernetes.default.svc.cluster.local"]
        return ServiceAccountTokenConfig(
            issuer=issuers[0], signing_key=keys.signing_key, public_keys=keys.public_keys,
            audiences=list(o.get("api-audiences") or []),
            max_expiration_seconds=int(o.get("service-account-max-token-expiration") or 0),
            jwks_uri=o.get("service-account-jwks-uri", ""), extra_issuers=issuers[1:])

    def _shutdown_check(self) -> None:
        if self.shutting_down:
            raise ShuttingDown("process is shutting down")

    # --- lifecycle -----------------------------------------------------------------------------
    def setServiceParent(self, parent: Any) -> Any:
        """
        Join C{parent} (twistd's application); set the process's log verbosity and give
        the application the klog observer of C{--logging-format}, which twistd's logger
        then uses (C{ILogObserver} component) instead of its own format.
        """
        from twisted.logger import ILogObserver

        from kubetwist.server.logs import VERBOSITY, KlogObserver

        VERBOSITY.set(int(self.options.get("v") or 0))
        if hasattr(parent, "setComponent"):
            parent.setComponent(ILogObserver, KlogObserver(
                fmt=self.options.get("logging-format") or "text"))
        return super().setServiceParent(parent)

    def startService(self) -> None:
        super().startService()
        if self.options.get("worker-index", 0):  # a worker ends with its supervisor
            from kubetwist.server.workers import stop_on_parent_exit

            self.parent_watch = stop_on_parent_exit(self.reactor)
        try:
            self.build()
        except Exception as e:
            from kubetwist.storage.sqlite import DataDirInUseError

            if not isinstance(e, DataDirInUseError):
                log.failure("kubetwist failed to start")
            self._fatal(f"kubetwist: cannot start: {e}")
            return
        from kubetwist.endpoints import offload

        # large bodies are decoded and patched on the reactor's thread pool
        offload.configure(self.reactor, self.reactor.getThreadPool())
        site = KubeSite(self.chain, reactor=self.reactor)
        site.displayTracebacks = False
        site.noisy = False
        # no access-log line per request: kube-apiserver logs requests only at high verbosity
        site.log = lambda request: None
        endpoint = secure_endpoint(self.reactor, self.options, self.tls)
        d = endpoint.listen(site)
        d.addCallbacks(self._listening, self._listen_failed)

    def _listen_failed(self, failure: Any) -> None:
        self._fatal(f"kubetwist: cannot listen on {self.options['bind-address']}:"
                    f"{self.options['secure-port']}: {failure.getErrorMessage()}")

    def _fatal(self, message: str) -> None:
        """A start-up failure: one line on stderr, then stop and exit with status 1 once the
        reactor has shut down (twistd itself would exit 0; kube-apiserver exits non-zero)."""
        print(message, file=sys.stderr)
        sys.stderr.flush()
        self.reactor.addSystemEventTrigger("after", "shutdown", os._exit, 1)
        if getattr(self.reactor, "running", False):
            self.reactor.stop()
        else:
            self.reactor.callWhenRunning(self.reactor.stop)

    def _listening(self, port: Any) -> None:
        self.port = port
        log.info("kubetwist serving securely on {addr}", addr=port.getHost())
        from kubetwist.server import workers

        index, count = self.options.get("worker-index", 0), self.options.get("workers", 1)
        for server in self.front.chain():
            if index:  # kube-controller-manager's controllers run in worker 0 only
                workers.skip_singleton_hooks(server.hooks)
            server.hooks.setServiceParent(self)
        if index == 0 and count > 1:  # data dir, certificates, port ready: the others now
            self.supervisor = workers.WorkerSupervisor(
                self.reactor, self.options.get("argv") or [], count,
                workers.passed_twistd_args(sys.argv), grace=workers.default_grace(self.options))
            self.supervisor.startService()
        self._wait_ready()

    def _wait_ready(self) -> None:
        from kubetwist.server.sdnotify import notify

        hooks = [h for s in self.front.chain() for h in s.hooks]
        if all(h.finished for h in hooks):
            log.info("kubetwist is ready")
            notify("READY=1")
            from kubetwist.server.sdnotify import Watchdog

            self.watchdog = Watchdog(self.reactor)
            self.watchdog.start()
            return
        self.reactor.callLater(0.1, self._wait_ready)

    def stopService(self) -> Any:
        """Upstream's graceful termination: not ready, delay, stop listening, drain, stop."""
        return defer.ensureDeferred(self._stop())

    async def _stop(self) -> None:
        from kubetwist.server.sdnotify import notify

        self.shutting_down = True
        notify("STOPPING=1")
        supervisor = getattr(self, "supervisor", None)  # the workers stop alongside
        workers_stopped = supervisor.stopService() if supervisor is not None else None
        if getattr(self, "watchdog", None) is not None:
            self.watchdog.stop()
        delay = self.options.get("shutdown-delay-duration", 0)
        if delay and self.port is not None:
            await task.deferLater(self.reactor, delay, lambda: None)
        if self.port is not None:
            await self.port.stopListening()
        if self.chain is not None:
            for request in list(self.chain.long_running):
                try:
                    if not request.finished:
                        request.finish()
                except Exception:
                    pass
            deadline = self.reactor.seconds() + max(self.options.get("request-timeout", 60), 1)
            while self.chain.active and self.reactor.seconds() < deadline:
                await task.deferLater(self.reactor, 0.05, lambda: None)
        await defer.maybeDeferred(super().stopService)
        if workers_stopped is not None:
            await workers_stopped
        if getattr(self, "audit", None) is not None:
            await defer.maybeDeferred(self.audit.backend.shutdown)
        if self.storage is not None:
            await self.storage.stop()
        if self._pool is not None:
            await self._pool.closeCachedConnections()


@dataclass
class Assembled:
    """The parts of one assembled server chain."""

    front: Any
    kube: Any
    aggregator: Any
    apiextensions: Any
    chain: Any


def assemble(storage: Any, clock: Any, config: Any, *, authenticator: Any, authorizer: Any,
             version_info: dict, server_address: str, shutdown_check: Any = None,
             max_requests_inflight: int = 400, max_mutating_requests_inflight: int = 200,
             request_timeout: float = 60.0, service_account_tokens: Any = None,
             cors_allowed_origins: Any = (), hsts_directives: Any = (),
             audit: Any = None, aggregator_config: Any = None) -> Assembled:
    """
    Upstream C{CreateServerChain}: apiextensions-apiserver <- kube-apiserver <- aggregator,
    one admission chain, discovery/health/version/OpenAPI on the front, and the filter chain
    in front of the aggregator's director.  Used by the process and by the tests alike.

    @param service_account_tokens: a C{ServiceAccountTokenConfig} (the token subresource and
        OIDC discovery); its authenticator belongs in C{authenticator}.
    @param cors_allowed_origins: C{--cors-allowed-origins} patterns.
    @param hsts_directives: C{--strict-transport-security-directives}.
    @param audit: the L{AuditConfig <kubetwist.audit.AuditConfig>} of the C{--audit-*} flags.
    @param aggregator_config: the L{AggregatorConfig
        <kubetwist.aggregator.server.AggregatorConfig>} (proxy client certificate, routing).
    """
    from kubetwist.aggregator.server import Aggregator
    from kubetwist.apiextensions.server import APIExtensionsServer
    from kubetwist.controlplane.instance import KubeAPIServer
    from kubetwist.server.filters.chain import HandlerChainConfig, build_handler_chain
    from kubetwist.server.genericapiserver import install_health_routes
    from kubetwist.server.openapi import install_openapi

    apiextensions = APIExtensionsServer(storage, clock, admission=None)
    kube = KubeAPIServer(storage, clock, config, delegate=apiextensions.server,
                         extra_namespaced_stores=apiextensions.namespaced_stores,
                         service_account_tokens=service_account_tokens)
    _share_admission(apiextensions.server, kube.admission)
    _install_review_groups(kube.server, clock, authenticator, authorizer, service_account_tokens)
    _install_rbac_escalation_check(kube.admission, storage, clock, authorizer)
    kube.admission_context.authorizer = authorizer
    kube.admission_context.find_store = lambda av, kind: _custom_resource_store(
        apiextensions, av, kind)
    if kube.policy_status is not None:
        kube.policy_status.checker.fallback = _custom_resource_schemas(apiextensions)
    aggregator = Aggregator(storage, clock, kube.server, kube.admission)
    # custom resources installed later use the same admission; their group-versions get
    # APIServices (upstream crdregistration)
    apiextensions.set_admission(kube.admission)
    apiextensions.apiservice_sync = aggregator.sync_crd_apiservices
    front = aggregator.server
    kube.admission_context.equivalents = lambda group, resource: _served_versions(
        front, group, resource)
    front.install_discovery_routes(lambda: server_address)
    aggregator.configure(kube.stores, aggregator_config)
    aggregator.install_discovery(front)
    install_health_routes(front, version_info)
    install_openapi(front, version_info["gitVersion"])

    install_generic_checks(front, storage)
    if shutdown_check is not None:
        front.readiness_checks.append(HealthCheck("shutdown", shutdown_check))
    from kubetwist.server.metrics import APIServerMetrics, install_metrics_route

    metrics = APIServerMetrics(clock)
    install_metrics_route(front, metrics)
    from kubetwist.server.logs import install_debug_flags

    install_debug_flags(front)

    for plugin in kube.admission.plugins:  # plugins' own metrics (PodSecurity's pod_security_*)
        if hasattr(getattr(plugin, "metrics", None), "collect"):
            metrics.registry.register(plugin.metrics)

    webhooks = getattr(kube.admission_context, "_admission_webhooks", None)
    if webhooks is not None:
        webhooks.metrics.register_on(metrics.registry)
    from kubetwist.admission.metrics import AdmissionMetrics

    kube.admission.metrics = AdmissionMetrics(metrics.registry)
    flow_control = None
    if getattr(config, "enable_priority_and_fairness", True):
        from kubetwist.apis.flowcontrol.controller import new_config_controller

        flow_control = new_config_controller(
            clock, max_requests_inflight + max_mutating_requests_inflight)
        if kube.apf_status is not None:
            kube.apf_status.consumer = flow_control
    chain = build_handler_chain(front.director(), HandlerChainConfig(
        clock=clock, authenticator=authenticator, authorizer=authorizer, metrics=metrics,
        max_requests_inflight=max_requests_inflight,
        max_mutating_requests_inflight=max_mutating_requests_inflight,
        request_timeout=request_timeout,
        cors_allowed_origins=list(cors_allowed_origins), hsts_directives=list(hsts_directives),
        audit=audit,
        flow_control=flow_control,
    ))
    return Assembled(front, kube, aggregator, apiextensions, chain)


def _install_review_groups(server: Any, clock: Any, authenticator: Any, authorizer: Any,
                           service_account_tokens: Any) -> None:
    """The create-only review groups, which need the chain's authenticator and authorizer:
    C{authentication.k8s.io/v1} (TokenReview, SelfSubjectReview) and C{authorization.k8s.io/v1}
    (the access and rules reviews)."""
    from kubetwist.apis.authentication import reviews as authn_reviews
    from kubetwist.apis.authorization import reviews as authz_reviews
    from kubetwist.endpoints.review import install_reviews

    sa = service_account_tokens
    install_reviews(server, authn_reviews.GROUP, authn_reviews.VERSION, authn_reviews.review_rests(
        authenticator, sa.api_audiences if sa is not None else (),
        sa.issuers if sa is not None else (), clock.seconds), clock)
    install_reviews(server, authz_reviews.GROUP, authz_reviews.VERSION,
                    authz_reviews.review_rests(authorizer), clock)


def _install_rbac_escalation_check(admission: Any, storage: Any, clock: Any,
                                   authorizer: Any) -> None:
    """RBAC escalation prevention on Role/Binding writes (upstream's policy-based RBAC
    storage), an internal admission step that needs the chain's authorizer."""
    from kubetwist.authorization.rbac import index_for
    from kubetwist.registry.rbac.escalation import RBACEscalationCheck

    admission.internal.append(RBACEscalationCheck(authorizer, lambda: index_for(storage, clock)))



def _default_route_address() -> Optional[str]:
    """The IPv4 address of the default route's interface (Linux C{/proc/net/route} and
    C{SIOCGIFADDR}), as upstream C{utilnet.ChooseHostInterface}; C{None} if unknown."""
    try:
        import fcntl
        import struct

        with open("/proc/net/route") as f:
            lines = f.read().splitlines()[1:]
        for line in lines:
            fields = line.split()
            if len(fields) > 2 and fields[1] == "00000000":
                iface = fields[0].encode()[:15]
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                    packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", iface))
                return socket.inet_ntoa(packed[20:24])
    except OSError:
        return None
    return None


def host_address() -> str:
    """The address to advertise: the default route's interface, else the first non-loopback
    IPv4 address of the host name, else C{127.0.0.1}."""
    ip = _default_route_address()
    if ip:
        return ip
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            ip = info[4][0]
            if not ip.startswith("127."):
                return ip
    except OSError:
        pass
    return "127.0.0.1"


def _custom_resource_store(apiextensions: Any, api_version: str, kind: str) -> Any:
    """The store of the served custom resource of C{kind} in C{api_version}'s group (the
    params of admission policies), or C{None}."""
    group, _, version = api_version.rpartition("/")
    for name, versions in apiextensions.served.items():
        spec = (apiextensions.crd_objects.get(name) or {}).get("spec") or {}
        if spec.get("group") == group and (spec.get("names") or {}).get("kind") == kind \
                and version in versions:
            return versions[version].store
    return None


def _served_versions(front: Any, group: str, resource: str) -> list:
    """C{[(version, kind)]} of every served version of C{group}/C{resource}, built-in and
    custom (admission policies' C{matchPolicy: Equivalent})."""
    out = []
    for server in front.chain():
        for agv in list(server.group_versions.values()):
            res = agv.resources.get(resource) if agv.group == group else None
            if res is not None:
                out.append((agv.version, res.spec.kind))
    return out


def _custom_resource_schemas(apiextensions: Any) -> tuple:
    """C{(kinds, schemas)} resolvers over the served CRDs, for the type checking of
    ValidatingAdmissionPolicies: C{(group, version, resource) -> [kind]} and
    C{(group, version, kind) -> ({name: openAPIV3Schema}, name) or None}."""

    def crds() -> list:
        return [(c.get("spec") or {}) for c in apiextensions.crd_objects.values()]

    def served(spec: dict, version: str) -> Any:
        for v in spec.get("versions") or []:
            if v.get("name") == version and v.get("served"):
                return v
        return None

    def kinds(group: str, version: str, resource: str) -> list:
        return [(s.get("names") or {}).get("kind") for s in crds()
                if s.get("group") == group and (s.get("names") or {}).get("plural") == resource
                and served(s, version) is not None]

    def schemas(group: str, version: str, kind: str) -> Any:
        for s in crds():
            if s.get("group") == group and (s.get("names") or {}).get("kind") == kind:
                v = served(s, version)
                schema = ((v or {}).get("schema") or {}).get("openAPIV3Schema")
                if schema is not None:
                    return {kind: schema}, kind
        return None

    return kinds, schemas


def _share_admission(server: Any, admission: Any) -> None:
    """Point every resource handler of C{server} at the process-wide admission chain."""
    for agv in server.group_versions.values():
        for res in agv.resources.values():
            res.handlers.admission = admission
