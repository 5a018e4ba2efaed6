# -*- test-case-name: tests.controlplane.test_instance -*-
"""
kube-apiserver's default admission plugins that kubetwist runs (upstream
C{pkg/kubeapiserver/options/plugins.go}, in upstream's order): NamespaceLifecycle,
ServiceAccount, Priority, DefaultTolerationSeconds.
"""

from __future__ import annotations

from typing import Any

from kubetwist.runtime import errors


class PodMutations:
    """
    The pod-mutating plugins as one: ServiceAccount (default account, token volume),
    Priority, DefaultTolerationSeconds; and ServiceAccount's check that the account exists
    (403 C{error looking up service account ns/name: serviceaccount "name" not found}).
    """

    name = "ServiceAccount,Priority,DefaultTolerationSeconds"

    def __init__(self, serviceaccounts: Any, priorityclasses: Any = None) -> None:
        self.serviceaccounts = serviceaccounts
        #: the scheduling.k8s.io PriorityClass Store the Priority plugin resolves names against
        self.priorityclasses = priorityclasses

    async def _priority_classes(self) -> dict[str, dict]:
        """Every stored PriorityClass by name (upstream reads them from an informer)."""
        if self.priorityclasses is None:
            return {}
        from kubetwist.registry.generic.store import ListOptions

        listed = await self.priorityclasses.list("", ListOptions())
        return {(pc.get("metadata") or {}).get("name", ""): pc
                for pc in listed.get("items") or []}

    def handles(self, operation: str) -> bool:
        return operation == "CREATE"

    @staticmethod
    def _is_pod(a: Any) -> bool:
        return a.spec.resource == "pods" and not a.spec.group and not a.subresource

    async def admit(self, a: Any) -> None:
        if not self._is_pod(a) or a.object is None:
            return
        from kubetwist.admission.plugins import defaulttolerationseconds, priority, serviceaccount

        serviceaccount.mutate_pod(a.object)
        classes = await self._priority_classes()
        priority.mutate_pod(a.object, get_priority_class=classes.get,
                            list_priority_classes=lambda: list(classes.values()))
        defaulttolerationseconds.mutate_pod(a.object)

    async def validate(self, a: Any) -> None:
        if not self._is_pod(a) or a.object is None or self.serviceaccounts is None:
            return
        spec = a.object.get("spec") or {}
        sa = spec.get("serviceAccountName") or "default"
        try:
            await self.serviceaccounts.get(a.namespace, sa)
        except errors.StatusError as e:
            if e.code != 404:
                raise
            name = a.object.get("metadata", {}).get("name", "")
            raise errors.new_forbidden(
                "", "pods", name,
                f'error looking up service account {a.namespace}/{sa}: serviceaccount "{sa}" '
                f'not found',
            ) from None
