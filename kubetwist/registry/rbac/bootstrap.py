# -*- test-case-name: tests.registry.test_rbac_bootstrap -*-
"""
The C{rbac/bootstrap-roles} post-start hook: upstream C{pkg/registry/rbac/rest/
storage_rbac.go} (C{PolicyData.EnsureRBACPolicy}): every ClusterRole, ClusterRoleBinding,
Role and RoleBinding of the bootstrap policy (L{bootstrap_policy
<kubetwist.authorization.rbac.bootstrap.bootstrap_policy>}) is created when missing and
reconciled when present (L{reconcile_role
<kubetwist.authorization.rbac.bootstrap.reconcile_role>}, L{reconcile_binding
<kubetwist.authorization.rbac.bootstrap.reconcile_binding>}), straight through the registry
Stores (no admission, as upstream's loopback client in C{system:masters}).
"""

from __future__ import annotations

from typing import Any

from kubetwist.authorization.rbac.bootstrap import (
    bootstrap_policy,
    reconcile_binding,
    reconcile_role,
)
from kubetwist.registry.generic.store import ListOptions
from kubetwist.runtime import errors

__all__ = ["GROUP", "ensure_rbac_policy"]

GROUP = "rbac.authorization.k8s.io"
_KINDS = [("clusterRoles", "clusterroles", reconcile_role),
          ("roles", "roles", reconcile_role),
          ("clusterRoleBindings", "clusterrolebindings", reconcile_binding),
          ("roleBindings", "rolebindings", reconcile_binding)]


async def _ensure_namespace(namespaces: Any, name: str) -> None:
    """Upstream C{tryEnsureNamespace}: create the namespace of a bootstrap Role if missing."""
    if namespaces is None:
        return
    try:
        await namespaces.create("", {"apiVersion": "v1", "kind": "Namespace",
                                     "metadata": {"name": name}})
    except errors.StatusError as e:
        if e.code != 409:
            raise


async def ensure_rbac_policy(stores: dict) -> None:
    """
    One pass over the bootstrap policy (the hook retries the whole pass on failure).

    @param stores: C{{(group, resource): Store}} of the chain (the four RBAC kinds and
        C{("", "namespaces")}).
    """
    policy = bootstrap_policy()
    namespaces = stores.get(("", "namespaces"))
    ensured: set[str] = set()
    for key, resource, reconcile in _KINDS:
        store = stores[(GROUP, resource)]
        listed = await store.list("", ListOptions())
        stored = {((o.get("metadata") or {}).get("namespace") or "",
                   o["metadata"]["name"]): o for o in listed.get("items") or []}
        for expected in policy[key]:
            meta = expected["metadata"]
            ns, name = meta.get("namespace") or "", meta["name"]
            op, obj = reconcile(stored.get((ns, name)), expected)
            if op == "none":
                continue
            if ns and ns not in ensured:
                await _ensure_namespace(namespaces, ns)
                ensured.add(ns)
            if op == "recreate":
                try:
                    await store.delete(ns, name, {})
                except errors.StatusError as e:
                    if e.code != 404:
                        raise
                op = "create"
            if op == "create":
                try:
                    await store.create(ns, obj)
                except errors.StatusError as e:
                    # created meanwhile: the next pass (the hook's retry) reconciles it
                    if e.code != 409:
                        raise
                continue

            async def replace(current: Any, obj: dict = obj) -> dict:
                # obj keeps the listed resourceVersion: a change since the list is a 409
                # Conflict, and the hook's retry reconciles again
                return obj

            await store.update(ns, name, replace)
