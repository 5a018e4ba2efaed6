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
           "new_plugin", "validate_configuration"]


def validate_configuration(config: Any) -> list[str]:
    """Upstream C{validation.ValidateConfiguration} of a C{ResourceQuotaConfiguration} dict:
    the error texts (every C{limitedResources} entry needs a C{resource})."""
    out = []
    for i, lr in enumerate((config or {}).get("limitedResources") or []):
        if not (lr or {}).get("resource"):
            out.append(f"limitedResources[{i}].resource: Required value")
    return out


def new_plugin(ctx: Any) -> ResourceQuota:
    """
    The plugin from a L{PluginContext <kubetwist.admission.registry.PluginContext>}: the
    ResourceQuota store of C{ctx.stores} over C{ctx.storage}, C{ctx.config("ResourceQuota")}
    (a C{ResourceQuotaConfiguration} dict) and C{ctx.clock}.  Without a ResourceQuota store
    there are no quotas, and only C{limitedResources} can refuse.

    @raise ValueError: a configuration upstream's C{ValidateConfiguration} refuses, with its
        text (C{limitedResources[0].resource: Required value}).
    """
    errs = validate_configuration(ctx.config("ResourceQuota"))
    if errs:
        raise ValueError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    store = ctx.stores.get(("", "resourcequotas"))
    storage = ctx.storage
    if storage is None and store is not None:
        storage = store.storage
    return ResourceQuota(QuotaAccessor(store, storage, ctx.clock), ctx.config("ResourceQuota"),
                         ctx.clock)
