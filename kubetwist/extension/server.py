# -*- test-case-name: tests.extension.test_server -*-
"""
An extension API server assembled from kubetwist's parts: upstream
C{k8s.io/apiserver/pkg/server} as a library (C{RecommendedConfig.Complete().New()},
C{InstallAPIGroup}, C{DefaultBuildHandlerChain}) the way C{k8s.io/sample-apiserver}'s
C{apiserver.go} uses it.

L{assemble_extension} builds, over one L{IStorage <kubetwist.storage.interfaces.IStorage>}:
one L{GenericAPIServer} (no delegate: unknown paths are 404) holding every group-version of
the L{ExtensionConfig}, a L{Store <kubetwist.registry.generic.store.Store>} per resource
(upstream's C{genericregistry.Store}), the admission chain of the config's plugins,
discovery (legacy and aggregated), C{/healthz} C{/livez} C{/readyz} (with the storage check
and every post-start hook), C{/version}, C{/openapi/v2} C{/openapi/v3} (derived from the
kinds' type definitions), C{/metrics}, and the same filter chain as kube-apiserver's
(L{build_handler_chain}) with the given authenticator and authorizer (see
L{kubetwist.extension.delegated}).  The process around it is
L{ExtensionAPIService <kubetwist.extension.service.ExtensionAPIService>}.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from kubetwist.admission.chain import AdmissionChain
from kubetwist.admission.registry import PluginContext
from kubetwist.server.apigroup import APIGroupInfo, install_api_group
from kubetwist.server.filters.chain import HandlerChainConfig, build_handler_chain
from kubetwist.server.genericapiserver import GenericAPIServer, install_health_routes
from kubetwist.server.healthz import HealthCheck, install_generic_checks

__all__ = ["ExtensionConfig", "ExtensionServer", "assemble_extension", "list_items",
           "version_info"]

#: C{PluginContext -> admission plugin} (see L{kubetwist.admission.interfaces}).
PluginFactory = Callable[[PluginContext], Any]


#: The post-start hooks every generic API server has (C{/readyz/poststarthook/<name>}).
GENERIC_POST_START_HOOKS = ("generic-apiserver-start-informers", "max-in-flight-filter",
                            "storage-object-count-tracker-hook")


async def _nothing() -> None:
    """A post-start hook with nothing to do in kubetwist."""


@dataclass
class ExtensionConfig:
    """
    What an extension API server serves (upstream C{RecommendedConfig} plus the server's own
    C{APIGroupInfo}s and admission plugins).

    @ivar name: the server's name (C{sample-apiserver}); names its post-start hooks.
    @ivar groups: one L{APIGroupInfo} per served group-version, preferred version first for
        each group (their C{key_roots} default to C{/<group>/<resource>}, under the storage's
        prefix, as upstream's C{ResourcePrefix}).
    @ivar admission_plugins: C{[(name, factory)]} in the order the chain runs them
        (upstream C{RecommendedPluginOrder}); a factory gets a L{PluginContext} whose
        C{stores} are this server's C{{(group, resource): Store}}.
    @ivar version_info: what C{/version} answers (upstream's C{EffectiveVersion}; see
        L{version_info}).
    @ivar openapi_title: the C{info.title} of the OpenAPI documents.
    @ivar openapi_version: their C{info.version}.
    @ivar post_start_hooks: C{[(name, hook)]} of the server's own background work
        (C{hook() -> Awaitable}), started once it listens.
    """

    name: str
    groups: Sequence[APIGroupInfo]
    admission_plugins: Sequence[tuple[str, PluginFactory]] = ()
    version_info: dict = field(default_factory=lambda: version_info("0", "0"))
    openapi_title: str = "Generic"
    openapi_version: str = "unversioned"
    post_start_hooks: Sequence[tuple[str, Callable[[], Any]]] = ()


def version_info(major: str, minor: str,
                 git_version: str = "v0.0.0-master+$Format:%H$") -> dict:
    """
    C{/version} of a server whose binary version is C{major.minor} (upstream
    C{EffectiveVersion.BinaryVersion().Info()} over an unstamped build's C{version.Get()}).
    """
    import platform
    import sys

    return {"major": major, "minor": minor, "gitVersion": git_version,
            "gitCommit": "$Format:%H$", "gitTreeState": "",
            "buildDate": "1970-01-01T00:00:00Z",
            "goVersion": f"python{platform.python_version()}",
            "compiler": platform.python_implementation().lower(),
            "platform": f"{sys.platform}/{platform.machine().replace('x86_64', 'amd64')}"}


async def list_items(store: Any) -> list[dict]:
    """Every object of C{store} (the admission plugins' lister, upstream's informers)."""
    from kubetwist.registry.generic.store import ListOptions

    listed = await store.list("", ListOptions())
    return list(listed.get("items") or [])


@dataclass
class ExtensionServer:
    """
    The parts of one assembled extension server.

    @ivar server: the L{GenericAPIServer}.
    @ivar stores: C{{(group, resource): Store}}.
    @ivar admission: the L{AdmissionChain}.
    @ivar chain: the L{HandlerChain <kubetwist.server.filters.chain.HandlerChain>}: the
        resource to serve (e.g. C{KubeSite(chain)} or C{StubTreq(chain)}).
    @ivar metrics: the L{APIServerMetrics <kubetwist.server.metrics.APIServerMetrics>}.
    """

    server: GenericAPIServer
    stores: dict
    admission: AdmissionChain
    chain: Any
    metrics: Any


def assemble_extension(storage: Any, clock: Any, config: ExtensionConfig, *,
                       authenticator: Any, authorizer: Any, server_address: str = "",
                       shutdown_check: Optional[Callable[[], None]] = None,
                       max_requests_inflight: int = 400,
                       max_mutating_requests_inflight: int = 200,
                       request_timeout: float = 60.0, min_request_timeout: int = 1800,
                       cors_allowed_origins: Sequence[str] = (),
                       process_metrics: bool = True) -> ExtensionServer:
    """
    Build the extension server of C{config} over C{storage} (see the module docstring).

    @param storage: an C{IStorage}, usually a L{Cacher <kubetwist.storage.cacher.Cacher>}
        over the etcd3 or embedded backend.
    @param clock: the reactor (C{IReactorTime}).
    @param authenticator: an C{IAuthenticator} (L{build_delegated_authentication
        <kubetwist.extension.delegated.build_delegated_authentication>}).
    @param authorizer: an C{IAuthorizer} (L{build_delegated_authorizer
        <kubetwist.extension.delegated.build_delegated_authorizer>}).
    @param server_address: the address legacy discovery advertises (C{host:port}).
    @param shutdown_check: raises while the process shuts down (C{/readyz} C{shutdown}).
    @param process_metrics: register the process collectors in C{/metrics} (off in tests
        that build several servers in one process).
    """
    from kubetwist.server.metrics import APIServerMetrics, install_metrics_route
    from kubetwist.server.openapi import install_openapi

    server = GenericAPIServer(config.name, clock)
    admission = AdmissionChain([])
    stores: dict[tuple[str, str], Any] = {}
    for info in config.groups:
        for spec in info.resources:
            info.key_roots.setdefault(spec.resource, f"/{info.group}/{spec.resource}")
        installed = install_api_group(server, info, storage, clock, admission,
                                      min_request_timeout)
        for resource, store in installed.items():
            stores[(info.group, resource)] = store
        _name_definitions(server, info)
    context = PluginContext(stores, list_items, storage=storage, clock=clock,
                            add_post_start_hook=server.add_post_start_hook)
    admission.plugins.extend(factory(context) for _, factory in config.admission_plugins)
    context.authorizer = authorizer
    server.install_discovery_routes(lambda: server_address)
    if "" not in server.groups:
        # upstream installs /api with the legacy (core) group only: here it is a 404
        server.mux.pop("/api", None)
        server.restful_paths.discard("/api")
    install_health_routes(server, config.version_info)
    install_openapi(server, config.openapi_version, config.openapi_title)
    install_generic_checks(server, storage)
    # upstream's informers have synced once the server listens (kubetwist has none to wait for)
    server.readiness_checks.append(HealthCheck("informer-sync", lambda: None))
    if shutdown_check is not None:
        server.readiness_checks.append(HealthCheck("shutdown", shutdown_check))
    # the generic server's own hooks (upstream GenericAPIServer.New and the in-flight filter)
    for name in GENERIC_POST_START_HOOKS:
        server.add_post_start_hook(name, _nothing)
    for name, hook in config.post_start_hooks:
        server.add_post_start_hook(name, hook)
    metrics = APIServerMetrics(clock, process_collectors=process_metrics)
    install_metrics_route(server, metrics)
    chain = build_handler_chain(server.director(), HandlerChainConfig(
        clock=clock, authenticator=authenticator, authorizer=authorizer, metrics=metrics,
        max_requests_inflight=max_requests_inflight,
        max_mutating_requests_inflight=max_mutating_requests_inflight,
        request_timeout=request_timeout, cors_allowed_origins=list(cors_allowed_origins)))
    return ExtensionServer(server, stores, admission, chain, metrics)



def _name_definitions(server: GenericAPIServer, info: APIGroupInfo) -> None:
    """The OpenAPI component names of the group's kinds: their registered type names
    (upstream's C{DefinitionNamer} over the Go package path), when they have one."""
    from kubetwist.runtime import types as typedefs

    agv = server.group_versions.get(f"/apis/{info.group}/{info.version}")
    if agv is None:
        return
    for res in agv.resources.values():
        s = res.spec
        name = typedefs.KINDS.get((s.group, s.version, s.kind))
        list_name = typedefs.KINDS.get((s.group, s.version, s.list_kind))
        if name is not None:
            res.definition_name = name
        if list_name is not None:
            res.list_definition_name = list_name
