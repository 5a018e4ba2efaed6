# -*- test-case-name: tests.admission.test_registry -*-
"""
The admission plugin registry and the plugin selection of C{--enable-admission-plugins} /
C{--disable-admission-plugins}: upstream C{k8s.io/kubernetes/pkg/kubeapiserver/options/plugins.go}
(C{AllOrderedPlugins}, C{DefaultOffAdmissionPlugins}) and
C{k8s.io/apiserver/pkg/server/options/admission.go} (C{enabledPluginNames}, C{Validate}).

Every name kube-apiserver v1.32 knows is recognised, in upstream's order.  A name whose plugin
kubetwist has not built yet (L{PLUGINS} maps it to L{None}) is accepted and enabled as a
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
from kubetwist.admission.plugins.priority import Priority
from kubetwist.admission.plugins.serviceaccount import ServiceAccount

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
        that keep state of their own, such as the quota controller), or L{None}.
    @ivar clock: the reactor (C{IReactorTime} at least), or L{None}.
    @ivar authorizer: the chain's L{IAuthorizer
        <kubetwist.authorization.authorizer.IAuthorizer>}; set by the composition root after
        the plugins are built, so read it at request time, not in a factory.
    @ivar resolver: the L{ServiceResolver <kubetwist.egress.resolver.ServiceResolver>} that
        turns a C{service} reference into an address (webhooks), or L{None}.
    @ivar add_post_start_hook: C{(name, hook) -> None}: register a post-start hook
        (C{hook() -> Deferred | None}, run once the server listens; upstream's
        C{PostStartHook}) for background work a plugin needs (watching configuration,
        keeping quota status); L{None} in unit tests that need none.
    """

    stores: Mapping[tuple[str, str], Any] = field(default_factory=dict)
    list_items: Optional[Callable[[Any], Awaitable[list[dict]]]] = None
    configs: Mapping[str, Any] = field(default_factory=dict)
    storage: Any = None
    clock: Any = None
    authorizer: Any = None
    resolver: Any = None
    add_post_start_hook: Optional[Callable[[str, Callable[[], Any]], None]] = None

    def config(self, name: str) -> Optional[Any]:
        """The configuration of plugin C{name} (see C{configs}), or L{None}."""
        return self.configs.get(name)

    def lister(self, group: str, resource: str) -> Callable[[], Awaitable[list[dict]]]:
        """C{() -> coroutine of [object]} over one resource (empty when not installed)."""
        store = self.stores.get((group, resource))

        async def items() -> list[dict]:
            if store is None or self.list_items is None:
                return []
            return await self.list_items(store)

        return items


#: C{name -> factory(context) -> plugin}; L{None}: recognised, not built yet (a no-op).
PLUGINS: dict[str, Optional[Callable[[PluginContext], Any]]] = {
    name: None for name in ALL_ORDERED_PLUGINS}
PLUGINS.update({
    "AlwaysAdmit": lambda ctx: AlwaysAdmit(),
    "AlwaysDeny": lambda ctx: AlwaysDeny(),
    "NamespaceLifecycle": lambda ctx: NamespaceLifecycle(ctx.stores[("", "namespaces")]),
    "ServiceAccount": lambda ctx: ServiceAccount(ctx.stores.get(("", "serviceaccounts"))),
    "Priority": lambda ctx: Priority(ctx.lister("scheduling.k8s.io", "priorityclasses")),
    "DefaultTolerationSeconds": lambda ctx: DefaultTolerationSeconds(),
    "ResourceQuota": lambda ctx: __import__(
        "kubetwist.admission.plugins.resourcequota", fromlist=["new_plugin"]).new_plugin(ctx),
})


def default_enabled_plugins() -> list[str]:
    """Upstream C{defaultEnabledPluginNames}: the default-on plugins, in order."""
    return [p for p in ALL_ORDERED_PLUGINS if p not in DEFAULT_OFF_PLUGINS]


def validate_plugin_names(enable: Iterable[str], disable: Iterable[str]) -> list[str]:
    """
    Upstream C{AdmissionOptions.Validate}: one error text per unknown name
    (C{enable-admission-plugins plugin "X" is unknown}, then the disable ones).
    """
    known = set(ALL_ORDERED_PLUGINS)
    errs = [f'enable-admission-plugins plugin "{p}" is unknown' for p in enable if p not in known]
    errs += [f'disable-admission-plugins plugin "{p}" is unknown'
             for p in disable if p not in known]
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
