# -*- test-case-name: tests.admission.test_webhook -*-
"""
The webhook configurations in force: upstream C{k8s.io/apiserver/pkg/admission/configuration}
(C{mutating_webhook_manager.go}, C{validating_webhook_manager.go}) and the accessors of
C{webhook/accessors.go}.

A L{ConfigurationSource} keeps the stored Mutating- or ValidatingWebhookConfigurations in
memory with an informer (a list, then a watch of the storage: a new or changed configuration
is in force as soon as its watch event arrives) and hands out their webhooks as
L{WebhookAccessor}s, configurations sorted by name (webhooks in their configuration's order),
each accessor kept until its configuration changes (its selectors parsed and its match
conditions compiled once).
"""

from __future__ import annotations

from typing import Any, Optional

from twisted.internet.defer import Deferred, succeed

from kubetwist.admission.plugins.webhook.matching import MatchConditions, parse_selector
from kubetwist.authorization.rbac.informer import Informer

__all__ = ["ConfigurationSource", "WebhookAccessor"]


class WebhookAccessor:
    """
    One webhook of one configuration (upstream C{WebhookAccessor}), with the API's defaults.

    @ivar uid: C{<configuration>/<webhook name>/<n>} (C{n} counts equal names).
    @ivar configuration: the configuration's name.
    @ivar hook: the webhook as stored.
    @ivar mutating: a MutatingWebhook (C{admit}) or a ValidatingWebhook (C{validating}).
    """

    def __init__(self, uid: str, configuration: str, hook: dict, mutating: bool) -> None:
        self.uid = uid
        self.configuration = configuration
        self.hook = hook
        self.mutating = mutating
        self.name: str = hook.get("name") or ""
        self.rules: list = hook.get("rules") or []
        self.client_config: dict = hook.get("clientConfig") or {}
        self.fail_closed = (hook.get("failurePolicy") or "Fail") != "Ignore"
        self.equivalent = (hook.get("matchPolicy") or "Equivalent") == "Equivalent"
        self.side_effects: Optional[str] = hook.get("sideEffects")
        timeout = hook.get("timeoutSeconds")
        self.timeout: int = timeout if isinstance(timeout, int) and timeout > 0 else 10
        self.review_versions: list = hook.get("admissionReviewVersions") or ["v1beta1"]
        self.reinvoke = hook.get("reinvocationPolicy") == "IfNeeded"
        self.namespace_selector = parse_selector(hook.get("namespaceSelector"))
        self.object_selector = parse_selector(hook.get("objectSelector"))
        self._conditions: Optional[MatchConditions] = None

    @property
    def step(self) -> str:
        """The metrics' C{type} label (upstream C{admit} / C{validating})."""
        return "admit" if self.mutating else "validating"

    def match_conditions(self) -> Optional[MatchConditions]:
        """The compiled C{matchConditions}, or C{None} when there are none."""
        conditions = self.hook.get("matchConditions") or []
        if not conditions:
            return None
        if self._conditions is None:
            self._conditions = MatchConditions(conditions, self.fail_closed)
        return self._conditions


class ConfigurationSource:
    """
    @param storage: the raw L{IStorage <kubetwist.storage.interfaces.IStorage>} (the Cacher).
    @param clock: C{IReactorTime}.
    @param prefix: the configurations' key prefix (C{/registry/validatingwebhookconfigurations/}).
    @param mutating: whether these are MutatingWebhookConfigurations.
    """

    def __init__(self, storage: Any, clock: Any, prefix: str, mutating: bool) -> None:
        self.mutating = mutating
        #: no storage (unit tests of other plugins): no configurations, nothing to wait for
        self.informer: Optional[Informer] = None if storage is None else \
            Informer(storage, clock, prefix, self._changed)
        self._hooks: Optional[list[WebhookAccessor]] = None
        self._cache: dict[str, tuple[str, list[WebhookAccessor]]] = {}

    def start(self) -> None:
        """Begin listing and watching (idempotent)."""
        if self.informer is not None:
            self.informer.start()

    def stop(self) -> None:
        if self.informer is not None:
            self.informer.stop()

    @property
    def synced(self) -> bool:
        return self.informer is None or self.informer.synced

    def wait_synced(self) -> Deferred:
        """A Deferred fired once the configurations have been listed (starting if needed)."""
        if self.informer is None:
            return succeed(None)
        self.start()
        return self.informer.wait_synced()

    def _changed(self, key: Any) -> None:
        self._hooks = None

    def webhooks(self) -> list[WebhookAccessor]:
        """Every webhook, configurations sorted by name (upstream's deterministic order)."""
        if self._hooks is not None:
            return self._hooks
        if self.informer is None:
            return []
        configs = sorted(self.informer.items.values(),
                         key=lambda c: (c.get("metadata") or {}).get("name") or "")
        out: list[WebhookAccessor] = []
        cache: dict[str, tuple[str, list[WebhookAccessor]]] = {}
        for c in configs:
            meta = c.get("metadata") or {}
            name = meta.get("name") or ""
            rv = meta.get("resourceVersion") or ""
            cached = self._cache.get(name)
            if cached is not None and cached[0] == rv:
                accessors = cached[1]
            else:
                seen: dict[str, int] = {}
                accessors = []
                for h in c.get("webhooks") or []:
                    n = h.get("name") or ""
                    accessors.append(WebhookAccessor(f"{name}/{n}/{seen.get(n, 0)}", name, h,
                                                     self.mutating))
                    seen[n] = seen.get(n, 0) + 1
            cache[name] = (rv, accessors)
            out.extend(accessors)
        self._cache = cache
        self._hooks = out
        return out
