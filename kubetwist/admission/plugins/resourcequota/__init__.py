# -*- test-case-name: tests.admission.test_resourcequota -*-
"""
ResourceQuota: the admission plugin (L{admission}), the quota evaluators (L{evaluators}) and
resource-list arithmetic (L{resources}); the status controller that keeps C{status.used}
current is L{kubetwist.controlplane.resourcequota}.
"""

from __future__ import annotations

from typing import Any

from kubetwist.admission.plugins.resourcequota.admission import (
    QuotaAccessor,
    ResourceQuota,
    check_request,
)
from kubetwist.admission.plugins.resourcequota.evaluators import Registry, calculate_usage

__all__ = ["QuotaAccessor", "Registry", "ResourceQuota", "calculate_usage", "check_request",
           "new_plugin"]


def new_plugin(ctx: Any) -> ResourceQuota:
    """
    The plugin from a L{PluginContext <kubetwist.admission.registry.PluginContext>}: the
    ResourceQuota store of C{ctx.stores} over C{ctx.storage}, C{ctx.config("ResourceQuota")}
    (a C{ResourceQuotaConfiguration} dict) and C{ctx.clock}.  Without a ResourceQuota store
    there are no quotas, and only C{limitedResources} can refuse.
    """
    store = ctx.stores.get(("", "resourcequotas"))
    storage = ctx.storage
    if storage is None and store is not None:
        storage = store.storage
    return ResourceQuota(QuotaAccessor(store, storage, ctx.clock), ctx.config("ResourceQuota"),
                         ctx.clock)
