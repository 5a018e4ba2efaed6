# -*- test-case-name: tests.admission.test_webhook -*-
"""
The MutatingAdmissionWebhook and ValidatingAdmissionWebhook admission plugins: upstream
C{k8s.io/apiserver/pkg/admission/plugin/webhook} (C{mutating/plugin.go},
C{validating/plugin.go}, C{generic/webhook.go}).

Both read the stored C{admissionregistration.k8s.io/v1} configurations through
L{ConfigurationSource}s (an informer each, started by the post-start hook
C{start-kube-apiserver-admission-initializer}, or by the first request), select the webhooks
a request matches (L{kubetwist.admission.plugins.webhook.matching}) and call them over HTTPS
through L{kubetwist.egress} (C{url}, or C{service} resolved through the Service's
EndpointSlices/Endpoints, the certificate verified against C{caBundle} and
C{<service>.<namespace>.svc}); see L{kubetwist.admission.plugins.webhook.dispatch}.  Nothing
blocks the reactor: every call is asynchronous and bounded by the webhook's
C{timeoutSeconds}.

Requests on the admission configuration kinds themselves are never sent to webhooks; until
the configurations have been listed once, requests wait up to 10 seconds, then are refused
(403, C{... is forbidden: not yet ready to handle request}), as upstream's C{WaitForReady}.
"""

from __future__ import annotations

from typing import Any, Optional

from twisted.internet import defer
from zope.interface import implementer

from kubetwist.admission.interfaces import (
    OPERATIONS,
    IMutationInterface,
    IValidationInterface,
)
from kubetwist.admission.plugins.webhook import dispatch
from kubetwist.admission.plugins.webhook.matching import is_exempt
from kubetwist.admission.plugins.webhook.metrics import WebhookMetrics
from kubetwist.admission.plugins.webhook.scheme import Scheme
from kubetwist.admission.plugins.webhook.source import ConfigurationSource
from kubetwist.runtime import errors

__all__ = ["MutatingWebhook", "ValidatingWebhook", "WebhookMetrics", "new_mutating",
           "new_validating", "shared_state"]

GROUP = "admissionregistration.k8s.io"
#: Seconds a request waits for the first list of configurations (upstream C{WaitForReady}).
READY_TIMEOUT = 10
#: Upstream's post-start hook that starts the admission plugins' informers.
HOOK_NAME = "start-kube-apiserver-admission-initializer"


class _Shared:
    """What both plugins of one server share: the configuration sources, the namespace
    informer, the HTTPS clients, the scheme and the metrics."""

    def __init__(self, ctx: Any) -> None:
        from kubetwist.authorization.rbac.informer import Informer

        self.ctx = ctx
        self.clock = ctx.clock
        self.metrics = WebhookMetrics()
        clients = getattr(ctx, "webhook_clients", None)
        if clients is None:
            from kubetwist.egress.client import EgressClients

            clients = EgressClients(ctx.clock, ctx.resolver)
        self.clients = clients
        self.scheme = Scheme(getattr(ctx, "group_versions", None))
        self.sources: dict[bool, ConfigurationSource] = {}
        for mutating, resource in ((True, "mutatingwebhookconfigurations"),
                                   (False, "validatingwebhookconfigurations")):
            store = ctx.stores.get((GROUP, resource))
            root = getattr(store, "key_root", f"/registry/{resource}")
            self.sources[mutating] = ConfigurationSource(ctx.storage, ctx.clock, root + "/",
                                                         mutating)
        self.namespaces = ctx.stores.get(("", "namespaces"))
        self.namespace_informer: Optional[Informer] = None
        if ctx.storage is not None and self.namespaces is not None:
            self.namespace_informer = Informer(
                ctx.storage, ctx.clock, getattr(self.namespaces, "key_root",
                                                "/registry/namespaces") + "/", lambda _: None)
        self.dispatcher = dispatch.Dispatcher(self.clients, ctx.clock, self.scheme,
                                              self.namespace_labels, self.metrics)
        if ctx.add_post_start_hook is not None:
            try:
                ctx.add_post_start_hook(HOOK_NAME, self.start)
            except RuntimeError:  # another plugin registered upstream's hook: start lazily
                pass

    def start(self) -> Any:
        """Start the informers; a Deferred fired once the configurations are listed."""
        if self.namespace_informer is not None:
            self.namespace_informer.start()
        return defer.gatherResults([s.wait_synced() for s in self.sources.values()])

    async def namespace_labels(self, name: str) -> dict:
        """The labels of namespace C{name}: the informer's copy, else a live read (a
        namespace created a moment ago).

        @raise StatusError: 404 C{namespaces "x" not found}."""
        obj = None
        informer = self.namespace_informer
        if informer is not None:
            informer.start()
            obj = informer.items.get(("", name))
        if obj is None:
            if self.namespaces is None:
                raise errors.new_not_found("", "namespaces", name)
            obj = await self.namespaces.get("", name)
        return ((obj or {}).get("metadata") or {}).get("labels") or {}


def shared_state(ctx: Any) -> _Shared:
    """The one L{_Shared} of a plugin context (made on first use)."""
    shared = getattr(ctx, "_admission_webhooks", None)
    if shared is None:
        shared = _Shared(ctx)
        ctx._admission_webhooks = shared
    return shared


class _Plugin:
    mutating = False
    name = ""

    def __init__(self, shared: _Shared) -> None:
        self.shared = shared
        self.source = shared.sources[self.mutating]
        self.dispatcher = shared.dispatcher

    def handles(self, operation: str) -> bool:
        """Every operation (upstream's handler: CREATE, UPDATE, DELETE, CONNECT)."""
        return operation in OPERATIONS

    async def _hooks(self, a: Any) -> list:
        if is_exempt(a.kind.group, a.kind.kind):
            return []
        if not self.source.synced:
            d = self.source.wait_synced()
            d.addTimeout(READY_TIMEOUT, self.shared.clock)
            try:
                await d
            except defer.TimeoutError:
                raise errors.new_forbidden(a.resource.group, a.resource.resource, a.name,
                                           "not yet ready to handle request") from None
        return self.source.webhooks()


@implementer(IMutationInterface)
class MutatingWebhook(_Plugin):
    """Upstream C{mutating.Plugin} (C{MutatingAdmissionWebhook})."""

    mutating = True
    name = "MutatingAdmissionWebhook"

    async def admit(self, a: Any) -> None:
        """Call the matching mutating webhooks in order (see
        L{dispatch.admit}).

        @raise StatusError: a refusal (see L{dispatch.admit})."""
        hooks = await self._hooks(a)
        if hooks:
            await dispatch.admit(self.dispatcher, hooks, a)


@implementer(IValidationInterface)
class ValidatingWebhook(_Plugin):
    """Upstream C{validating.Plugin} (C{ValidatingAdmissionWebhook})."""

    name = "ValidatingAdmissionWebhook"

    async def validate(self, a: Any) -> None:
        """Call the matching validating webhooks at once (see L{dispatch.validate}).

        @raise StatusError: a refusal (see L{dispatch.validate})."""
        hooks = await self._hooks(a)
        if hooks:
            await dispatch.validate(self.dispatcher, hooks, a)


def new_mutating(ctx: Any) -> MutatingWebhook:
    """The C{MutatingAdmissionWebhook} plugin of a L{PluginContext
    <kubetwist.admission.registry.PluginContext>}."""
    return MutatingWebhook(shared_state(ctx))


def new_validating(ctx: Any) -> ValidatingWebhook:
    """The C{ValidatingAdmissionWebhook} plugin of a L{PluginContext
    <kubetwist.admission.registry.PluginContext>}."""
    return ValidatingWebhook(shared_state(ctx))
