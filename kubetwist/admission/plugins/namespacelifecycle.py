# -*- test-case-name: tests.admission.test_namespacelifecycle -*-
"""
The NamespaceLifecycle admission plugin: upstream
C{k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle}.

Refuses creating namespaced objects in a namespace that does not exist (404 NotFound
C{namespaces "x" not found}) or is terminating (403 Forbidden C{unable to create new content
in namespace x because it is being terminated}), and deleting the immortal namespaces
(C{default}, C{kube-system}, C{kube-public}).
"""

from __future__ import annotations

from typing import Any

from zope.interface import implementer

from kubetwist.admission.interfaces import IMutationInterface
from kubetwist.runtime import errors

IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")


@implementer(IMutationInterface)
class NamespaceLifecycle:
    """
    The plugin (see the module docstring).  It checks in C{admit}, the mutating phase, as
    upstream's C{Lifecycle.Admit} does: before the strategy's validation, so an invalid
    object in a missing namespace is 404, not 422.
    """

    name = "NamespaceLifecycle"

    def __init__(self, namespaces_store: Any) -> None:
        """
        @param namespaces_store: the namespaces storage (C{async get(namespace, name,
            resource_version)}).
        """
        self.namespaces = namespaces_store

    def handles(self, operation: str) -> bool:
        """Creates (in a namespace) and deletes (of namespaces)."""
        return operation in ("CREATE", "DELETE")

    async def _namespace(self, name: str) -> dict:
        """The namespace, read at resourceVersion "0" (the watch cache, as upstream's informer)
        and, when that misses, live from storage (upstream's live lookup of a namespace created
        a moment ago).

        @raise StatusError: 404 C{namespaces "x" not found}."""
        # the generic Store may hand out the watch cache's own object: only read here
        extra = {"shared": True} if hasattr(self.namespaces, "serves_encoded_lists") else {}
        for rv in ("0", ""):
            try:
                return await self.namespaces.get("", name, rv, **extra)
            except errors.StatusError as e:
                if e.code != 404:
                    raise
        raise errors.new_not_found("", "namespaces", name)

    async def admit(self, a: Any) -> None:
        """
        @raise StatusError: 404 C{namespaces "x" not found}; 403 for a terminating namespace
            or an immortal one being deleted.
        """
        if a.operation == "DELETE":
            if a.spec.resource == "namespaces" and not a.spec.group and \
                    a.name in IMMORTAL_NAMESPACES:
                raise errors.new_forbidden("", "namespaces", a.name,
                                           "this namespace may not be deleted")
            return
        if not a.spec.namespaced or not a.namespace:
            return
        if a.spec.resource in ("namespaces",) and not a.spec.group:
            return
        ns = await self._namespace(a.namespace)
        if (ns.get("status") or {}).get("phase") == "Terminating" or \
                ns.get("metadata", {}).get("deletionTimestamp"):
            if a.spec.resource == "events" and not a.spec.group:
                return
            raise errors.new_forbidden(
                a.spec.group, a.spec.resource, a.name,
                f"unable to create new content in namespace {a.namespace} because it is being "
                f"terminated",
            )
