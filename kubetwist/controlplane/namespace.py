# -*- test-case-name: tests.controlplane.test_namespace -*-
"""
Namespace lifecycle controllers: upstream C{pkg/registry/core/namespace/storage} (delete marks
the namespace Terminating while C{spec.finalizers} is not empty), C{pkg/controller/namespace}
(deletes the namespace's content, then removes the C{kubernetes} finalizer through
C{finalize}), and C{pkg/controller/serviceaccount} + C{root-ca-cert-publisher} (a C{default}
ServiceAccount and the C{kube-root-ca.crt} ConfigMap in every namespace).
"""

from __future__ import annotations

from typing import Any, Optional

from twisted.logger import Logger

from kubetwist.registry.generic.store import ListOptions, Store
from kubetwist.runtime import errors

log = Logger()


class NamespaceController:
    """
    @param namespaces: the namespaces Store.
    @param namespaced_stores: callable returning every namespaced Store of the whole chain
        (custom resources included), evaluated at cleanup time.
    """

    def __init__(self, namespaces: Store, namespaced_stores: Any, clock: Any,
                 serviceaccounts: Optional[Store] = None, configmaps: Optional[Store] = None,
                 root_ca_pem: str = "") -> None:
        self.namespaces = namespaces
        self.namespaced_stores = namespaced_stores
        self.clock = clock
        self.serviceaccounts = serviceaccounts
        self.configmaps = configmaps
        self.root_ca_pem = root_ca_pem
        namespaces.mark_deleting = self._mark_terminating
        namespaces.on_marked_for_deletion.append(self._schedule)
        namespaces.after_create.append(self.populate)
        self._busy: set[str] = set()

    @staticmethod
    def _mark_terminating(ns: dict) -> None:
        ns.setdefault("status", {})["phase"] = "Terminating"

    def _schedule(self, ns: dict) -> None:
        name = ns["metadata"]["name"]
        self.clock.callLater(0, self._run, name)

    def _run(self, name: str) -> None:
        from twisted.internet.defer import ensureDeferred

        d = ensureDeferred(self.finalize(name))
        d.addErrback(lambda f: log.failure("namespace {name} cleanup failed", f, name=name))

    async def finalize(self, name: str) -> None:
        """Delete everything in namespace C{name}, then drop its C{kubernetes} finalizer."""
        if name in self._busy:
            return
        self._busy.add(name)
        try:
            for store in self.namespaced_stores():
                lst = await store.list(name, ListOptions())
                for item in lst["items"]:
                    try:
                        await store.delete(name, item["metadata"]["name"], {
                            "gracePeriodSeconds": 0, "propagationPolicy": "Background"})
                    except errors.StatusError as e:
                        if e.code != 404:
                            raise

            async def drop(current: Optional[dict]) -> dict:
                if current is None:
                    raise errors.new_not_found("", "namespaces", name)
                fins = [f for f in (current.get("spec") or {}).get("finalizers", [])
                        if f != "kubernetes"]
                current.setdefault("spec", {})["finalizers"] = fins
                if not fins:
                    current["spec"].pop("finalizers")
                return current

            from kubetwist.apis.core.register import STRATEGIES

            finalize = self.namespaces.for_subresource(STRATEGIES["namespaces/finalize"])
            try:
                await finalize.update("", name, drop)
            except errors.StatusError as e:
                if e.code != 404:
                    raise
        finally:
            self._busy.discard(name)

    async def resume(self) -> None:
        """Finish the cleanup of namespaces left Terminating (after a restart)."""
        lst = await self.namespaces.list("", ListOptions())
        for ns in lst["items"]:
            if ns.get("metadata", {}).get("deletionTimestamp"):
                await self.finalize(ns["metadata"]["name"])
            else:
                await self.populate(ns)

    async def populate(self, ns: dict) -> None:
        """Create the C{default} ServiceAccount and C{kube-root-ca.crt} in a new namespace."""
        name = ns["metadata"]["name"]
        if self.serviceaccounts is not None:
            await _ensure(self.serviceaccounts, name, {
                "apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": "default", "namespace": name},
            })
        if self.configmaps is not None and self.root_ca_pem:
            await _ensure(self.configmaps, name, {
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "kube-root-ca.crt", "namespace": name,
                             "annotations": {"kubernetes.io/description": (
                                 "Contains a CA bundle that can be used to verify the "
                                 "kube-apiserver when using internal endpoints such as the "
                                 "internal service IP or kubernetes.default.svc. No other usage "
                                 "is guaranteed across distributions of Kubernetes clusters.")}},
                "data": {"ca.crt": self.root_ca_pem},
            })


async def _ensure(store: Store, namespace: str, obj: dict) -> None:
    try:
        await store.create(namespace, obj)
    except errors.StatusError as e:
        if e.code not in (409, 403):
            raise
