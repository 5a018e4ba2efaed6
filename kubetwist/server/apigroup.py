# -*- test-case-name: tests.server.test_genericapiserver -*-
"""
APIGroupInfo: upstream C{k8s.io/apiserver/pkg/server/genericapiserver.go InstallAPIGroup}.

Turns a group's resource table (C{RESOURCES}, C{STRATEGIES} of a
C{kubetwist.apis.<group>.register} module) into Stores, subresource storages and an installed
L{APIGroupVersion}.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubetwist.endpoints.discovery import SUBRESOURCE_VERBS
from kubetwist.endpoints.handlers.rest import ResourceHandlers
from kubetwist.endpoints.installer import (
    APIGroupVersion,
    APIResource,
    RESTResourceHandlers,
)
from kubetwist.registry.generic.scale import ScaleREST
from kubetwist.registry.generic.store import Store
from kubetwist.registry.generic.versioned import ConvertingStorage
from kubetwist.registry.rest import ResourceSpec, Strategy, verbs_of


@dataclass
class APIGroupInfo:
    """
    One group-version to install.

    @ivar resources: the resource table rows.
    @ivar strategies: C{{"deployments": Strategy, "deployments/status": Strategy, ...}}.  A
        value may instead be a REST factory C{(parent Store or None, lookup) -> REST object}
        (C{lookup(resource)} returns a Store of this group-version, at request time): a
        subresource then is that object (the protocol of L{ScaleREST}: C{get}, C{update},
        C{patch}, C{create}, C{delete}), a resource is served by it with no Store (only
        C{create}, see L{RESTResourceHandlers}; upstream C{LegacyBindingREST}).
    @ivar key_roots: storage key roots differing from C{/registry/<resource>}.
    @ivar return_deleted: resources whose delete answers with the object.
    @ivar store_classes: resources whose Store is a subclass serving fewer verbs (upstream's
        per-resource REST types, e.g. namespaces without C{deletecollection}):
        C{{resource: Store subclass}}.
    @ivar converters: resources stored in another version (shared keys with the
        storage version's group-version): C{{resource: VersionConverter}}, see
        L{kubetwist.registry.generic.versioned}.
    @ivar storage_versions: C{{resource: (group, version)}} where upstream's storage version
        differs from the served one (discovery's C{storageVersionHash} is of that version).
    """

    group: str
    version: str
    resources: list[ResourceSpec]
    strategies: dict[str, Strategy]
    key_roots: dict[str, str] = field(default_factory=dict)
    return_deleted: set[str] = field(default_factory=set)
    store_classes: dict[str, type] = field(default_factory=dict)
    converters: dict[str, Any] = field(default_factory=dict)
    storage_versions: dict[str, tuple[str, str]] = field(default_factory=dict)


def patch_meta_for(group: str, kind: str, version: str | None = None) -> Any:
    """The strategic-merge-patch metadata of a built-in kind in C{version}, or C{None}."""
    from kubetwist.apimachinery.patchmeta import patch_meta_for as lookup

    return lookup(group, kind, version)


def install_api_group(server: Any, info: APIGroupInfo, storage: Any, clock: Any,
                      admission: Any, min_request_timeout: int = 1800) -> dict[str, Store]:
    """
    Build a L{Store} per resource, its C{status}/C{scale}/C{finalize} subresources, and install
    the group-version on C{server}.  Returns C{{resource: Store}}.
    """
    agv = APIGroupVersion(info.group, info.version)
    stores: dict[str, Store] = {}
    for spec in info.resources:
        strategy = info.strategies.get(spec.resource)
        if strategy is None:
            continue
        if not isinstance(strategy, Strategy):
            rest = strategy(None, stores.__getitem__)
            agv.install(APIResource(RESTResourceHandlers(spec, rest, admission), {},
                                    has_storage=False))
            continue
        converter = info.converters.get(spec.resource)
        store = info.store_classes.get(spec.resource, Store)(
            spec, strategy,
            storage if converter is None else ConvertingStorage(storage, converter), clock,
            key_root=info.key_roots.get(spec.resource),
            return_deleted_object=spec.resource in info.return_deleted,
        )
        stores[spec.resource] = store
        subs: dict[str, Any] = {}
        sub_verbs: dict[str, list[str]] = {}
        for sub in spec.subresources:
            sub_strategy = info.strategies.get(f"{spec.resource}/{sub}")
            if sub == "scale":
                subs[sub] = ScaleREST(store)
            elif isinstance(sub_strategy, Strategy):
                subs[sub] = store.for_subresource(sub_strategy)
            elif sub_strategy is not None:
                subs[sub] = sub_strategy(store, stores.__getitem__)
            else:
                continue
            # the verbs the subresource's REST object provides (upstream's installer asks
            # its storage); REST objects that declare no capability fall back to the table
            sub_verbs[sub] = verbs_of(subs[sub]) or SUBRESOURCE_VERBS.get(
                sub, ["get", "patch", "update"])
        handlers = ResourceHandlers(
            store, subs, admission, clock, min_request_timeout,
            patch_meta=patch_meta_for(spec.group, spec.kind, spec.version),
        )
        agv.install(APIResource(handlers, sub_verbs,
                                storage_version=info.storage_versions.get(spec.resource)))
    server.install_api_group_version(agv)
    return stores
