# -*- test-case-name: tests.apis.test_core_componentstatuses -*-
"""
Serving core/v1 ComponentStatuses (L{ComponentStatusREST
<kubetwist.apis.core.componentstatuses.ComponentStatusREST>}): the generic handlers with
upstream's deprecation warning on every request and its 405 for C{?watch=true}.
"""

from __future__ import annotations

from typing import Any

from kubetwist.apis.core.componentstatuses import (
    DEPRECATION_WARNING,
    ComponentStatusREST,
    default_probes,
)
from kubetwist.endpoints.discovery import NO_STORAGE_VERSION
from kubetwist.endpoints.handlers import options as opts
from kubetwist.endpoints.handlers.rest import ResourceHandlers
from kubetwist.endpoints.installer import APIResource
from kubetwist.endpoints.request import context_of
from kubetwist.registry.rest import ResourceSpec
from kubetwist.runtime import errors

__all__ = ["ComponentStatusHandlers", "install_component_statuses"]


class ComponentStatusHandlers(ResourceHandlers):
    """The generic handlers over a L{ComponentStatusREST}, with the deprecation warning on
    every request and upstream's 405 for C{?watch=true} (no watcher)."""

    def _warn(self, request: Any) -> None:
        warnings = context_of(request).warnings
        if DEPRECATION_WARNING not in warnings:
            warnings.append(DEPRECATION_WARNING)

    async def get(self, request: Any, namespace: str, name: str) -> None:
        self._warn(request)
        return await super().get(request, namespace, name)

    async def list(self, request: Any, namespace: str) -> None:
        self._warn(request)
        if opts.bool_param(context_of(request).request_info.query, "watch"):
            raise errors.new_method_not_supported("", self.spec.resource, "watch")
        return await super().list(request, namespace)


def install_component_statuses(server: Any, spec: ResourceSpec, storage: Any, admission: Any,
                               clock: Any) -> ComponentStatusREST:
    """
    Serve C{spec} (the core C{componentstatuses} row, verbs C{get list}) on C{server}'s
    installed C{/api/v1} group-version.

    @raise KeyError: C{/api/v1} is not installed on C{server}.
    """
    rest = ComponentStatusREST(spec, default_probes(storage))
    handlers = ComponentStatusHandlers(rest, {}, admission, clock)  # type: ignore[arg-type]
    agv = server.group_versions["/api/v1"]
    agv.install(APIResource(handlers, storage_version=NO_STORAGE_VERSION))
    return rest
