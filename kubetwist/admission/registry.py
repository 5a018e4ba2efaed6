# -*- test-case-name: tests.admission.test_registry -*-
"""
The admission plugin registry and the plugin selection of C{--enable-admission-plugins} /
C{--disable-admission-plugins}: upstream C{k8s.io/kubernetes/pkg/kubeapiserver/options/plugins.go}
(C{AllOrderedPlugins}, C{DefaultOffAdmissionPlugins}) and
C{k8s.io/apiserver/pkg/server/options/admission.go} (C{enabledPluginNames}, C{Validate}).

Every name kube-apiserver v1.32 knows is recognised, in upstream's order.  A name whose plugin
kubetwist has not built yet (L{PLUGINS} maps it to C{None}) is accepted and enabled as a
no-op: the server starts with the same flags as kube-apiserver, and the plugin's checks are
simply not made (L{not_implemented} lists them).  A name kube-apiserver does not know fails at
start with upstream's error (C{enable-admission-plugins plugin "X" is unknown}).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable, Mapping, Optional

from kubetwist.admission.plugins.always import AlwaysAdmit, AlwaysDeny
from kubetwist.admission.plugins.defaulttolerationseconds import DefaultTolerationSeconds
from kubetwist.admission.plugins.namespacelifecycle import NamespaceLifecycle
from kubetwist.admission.plugins.podsecurity import PodSecurity
from kubetwist.admission.plugins.policy.plugin import (
    new_plugin as new_validating_admission_policy,
)
from kubetwist.admission.plugins.priority import Priority
from kubetwist.admission.plugins.serviceaccount import ServiceAccount
from kubetwist.runtime.errors import StatusError

#: Upstream C{AllOrderedPlugins} of v1.32: every plugin, in the order the chain runs them.
ALL_ORDERED_PLUGINS: tuple[str, ...] = (
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    # webhook, resourcequota, and deny plugins must go at the end
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
)

#: Upstream C{DefaultOffAdmissionPlugins()} of v1.32: known, but off unless enabled.
DEFAULT_OFF_PLUGINS: frozenset[str] = frozenset({
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "NodeRestriction",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodNodeSelector",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "OwnerReferencesPermissionEnforcement",
    "DenyServiceExternalIPs",
    "AlwaysDeny",
})


@dataclass
class PluginContext:
    """
    What plugins are built from (upstream's plugin initializers: informers, clients).

    @ivar stores: C{{(group, resource): storage}} of the installed resources (objects with
        C{async get(namespace, name, resource_version="")}).
    @ivar list_items: C{storage -> coroutine of [object]}: every stored object of a resource
        (upstream's listers).
    @ivar configs: C{{plugin name: configuration}}: each plugin's configuration object (a
        dict, e.g. a C{PodSecurityConfiguration}) from C{--admission-control-config-file}
        (upstream's C{AdmissionConfiguration}); a plugin with none is absent.
    @ivar storage: the raw L{IStorage <kubetwist.storage.interfaces.IStorage>} (for plugins
        that keep state of their own, such as the quota controller), or C{None}.
    @ivar clock: the reactor (C{IReactorTime} at least), or C{None}.
    @ivar authorizer: the chain's L{IAuthorizer
        <kubetwist.authorization.authorizer.IAuthorizer>}; set by the composition root after
        the plugins are built, so read it at request time, not in a factory.
    @ivar resolver: the L{ServiceResolver <kubetwist.egress.resolver.ServiceResolver>} that
        turns a C{service} reference into an address (webhooks), or C{None}.
    @ivar add_post_start_hook: C{(name, hook) -> None}: register a post-start hook
        (C{hook() -> Deferred | None}, run once the server listens; upstream's
        C{PostStartHook}) for background work a plugin needs (watching configuration,
        keeping quota status); C{None} in unit tests that need none.
    """

    stores: Mapping[tuple[str, str], Any] = field(default_factory=dict)
    list_items: Optional[Callable[[Any], Awaitable[list[dict]]]] = None
    configs: Mapping[str, Any] = field(default_factory=dict)
    storage: Any = None
    clock: Any = None
    authorizer: Any = None
    resolver: Any = None
    add_post_start_hook: Optional[Callable[[str, Callable[[], Any]], None]] = None
    #: C{() -> {prefix: APIGroupVersion}} of the whole server chain (equivalent resources,
    #: conversion and defaulting for webhooks' C{matchPolicy: Equivalent}), or C{None}
    group_versions: Optional[Callable[[], Mapping[str, Any]]] = None
    #: C{(apiVersion, kind) -> store or None}: the store of any served kind, custom
    #: resources included (policy params); set by the composition root
    find_store: Optional[Callable[[str, str], Any]] = None
    #: C{(group, resource) -> [(version, kind)]}: every served version of a resource
    #: (C{matchPolicy: Equivalent}); set by the composition root
    equivalents: Optional[Callable[[str, str], Any]] = None

    def config(self, name: str) -> Optional[Any]:
        """The configuration of plugin C{name} (see C{configs}), or C{None}."""
        return self.configs.get(name)

    def getter(self, group: str, resource: str) -> Callable[..., Awaitable[Optional[dict]]]:
        """C{(name, namespace="") -> coroutine of object or None} over one resource (None
        when not installed or not found)."""
        store = self.stores.get((group, resource))

        async def get(name: str, namespace: str = "") -> Optional[dict]:
            if store is None:
                return None
            try:
                return await store.get(namespace, name)
            except StatusError as e:
                if e.code == 404:
                    return None
                raise

        return get

    def lister(self, group: str, resource: str) -> Callable[[], Awaitable[list[dict]]]:
        """C{() -> coroutine of [object]} over one resource (empty when not installed)."""
        store = self.stores.get((group, resource))

        async def items() -> list[dict]:
            if store is None or self.list_items is None:
                return []
            return await self.list_items(store)

        return items


def _webhook() -> Any:
    from kubetwist.admission.plugins import webhook

    return webhook


def _builtin(module: str, name: str) -> Any:
    """C{kubetwist.admission.plugins.<module>.<name>}, imported when a plugin is built."""
    import importlib

    return getattr(importlib.import_module("kubetwist.admission.plugins." + module), name)


#: C{name -> factory(context) -> plugin}; C{None}: recognised, not built yet (a no-op).
PLUGINS: dict[str, Optional[Callable[[PluginContext], Any]]] = {
    name: None for name in ALL_ORDERED_PLUGINS}
PLUGINS.update({
    "AlwaysAdmit": lambda ctx: AlwaysAdmit(),
    "AlwaysDeny": lambda ctx: AlwaysDeny(),
    "NamespaceLifecycle": lambda ctx: NamespaceLifecycle(ctx.stores[("", "namespaces")]),
    "ServiceAccount": lambda ctx: ServiceAccount(ctx.stores.get(("", "serviceaccounts"))),
    "Priority": lambda ctx: Priority(ctx.lister("scheduling.k8s.io", "priorityclasses")),
    "DefaultTolerationSeconds": lambda ctx: DefaultTolerationSeconds(),
    "PodSecurity": lambda ctx: PodSecurity(ctx.config("PodSecurity"), ctx.stores.get(
        ("", "namespaces")), ctx.lister("", "pods")),
    "MutatingAdmissionWebhook": lambda ctx: _webhook().new_mutating(ctx),
    "ValidatingAdmissionWebhook": lambda ctx: _webhook().new_validating(ctx),
    "ValidatingAdmissionPolicy": lambda ctx: new_validating_admission_policy(ctx),
    "LimitRanger": lambda ctx: _builtin("limitranger", "LimitRanger")(
        ctx.lister("", "limitranges")),
    "NodeRestriction": lambda ctx: _builtin("noderestriction", "NodeRestriction")(
        ctx.getter("", "pods"), ctx.getter("", "nodes")),
    "TaintNodesByCondition": lambda ctx: _builtin("nodetaint", "TaintNodesByCondition")(),
    "DefaultStorageClass": lambda ctx: _builtin("storage", "DefaultStorageClass")(
        ctx.lister("storage.k8s.io", "storageclasses")),
    "StorageObjectInUseProtection": lambda ctx: _builtin(
        "storage", "StorageObjectInUseProtection")(),
    "PersistentVolumeClaimResize": lambda ctx: _builtin(
        "storage", "PersistentVolumeClaimResize")(ctx.lister("storage.k8s.io", "storageclasses")),
    "RuntimeClass": lambda ctx: _builtin("runtimeclass", "RuntimeClass")(
        ctx.getter("node.k8s.io", "runtimeclasses")),
    "CertificateApproval": lambda ctx: _builtin("certificates", "CertificateApproval")(
        lambda: ctx.authorizer),
    "CertificateSigning": lambda ctx: _builtin("certificates", "CertificateSigning")(
        lambda: ctx.authorizer),
    "CertificateSubjectRestriction": lambda ctx: _builtin(
        "certificates", "CertificateSubjectRestriction")(),
    "DefaultIngressClass": lambda ctx: _builtin("defaultingressclass", "DefaultIngressClass")(
        ctx.lister("networking.k8s.io", "ingressclasses")),
    "ResourceQuota": lambda ctx: __import__(
        "kubetwist.admission.plugins.resourcequota", fromlist=["new_plugin"]).new_plugin(ctx),
})


def default_enabled_plugins() -> list[str]:
    """Upstream C{defaultEnabledPluginNames}: the default-on plugins, in order."""
    return [p for p in ALL_ORDERED_PLUGINS if p not in DEFAULT_OFF_PLUGINS]


def validate_plugin_names(enable: Iterable[str], disable: Iterable[str]) -> list[str]:
    """
    Upstream C{AdmissionOptions.Validate}: one error text per unknown name
    (C{enable-admission-plugins plugin "X" is unknown}, then the disable ones), then
    C{[A B] in enable-admission-plugins and disable-admission-plugins overlapped} for names
    in both.
    """
    known = set(ALL_ORDERED_PLUGINS)
    errs = [f'enable-admission-plugins plugin "{p}" is unknown' for p in enable if p not in known]
    errs += [f'disable-admission-plugins plugin "{p}" is unknown'
             for p in disable if p not in known]
    both = sorted(set(enable) & set(disable))
    if both:
        errs.append(f"[{' '.join(both)}] in enable-admission-plugins and "
                    "disable-admission-plugins overlapped")
    return errs


def enabled_plugin_names(enable: Iterable[str] = (), disable: Iterable[str] = ()) -> list[str]:
    """
    Upstream C{enabledPluginNames}: in L{ALL_ORDERED_PLUGINS} order, every plugin that is not
    off (default-off or disabled), a plugin both enabled and disabled being on.
    """
    enabled = set(enable)
    off = (set(DEFAULT_OFF_PLUGINS) | set(disable)) - enabled
    return [p for p in ALL_ORDERED_PLUGINS if p not in off]


def not_implemented(names: Iterable[str]) -> list[str]:
    """The names among C{names} that are recognised no-ops (see the module docstring)."""
    return [n for n in names if PLUGINS.get(n) is None]


def new_plugins(names: Iterable[str], context: PluginContext) -> list[Any]:
    """
    The plugins of C{names} (already validated and ordered), built from C{context}; the
    recognised no-ops are left out.

    @raise KeyError: an unknown name.
    """
    out = []
    for name in names:
        factory = PLUGINS[name]
        if factory is not None:
            out.append(factory(context))
    return out
