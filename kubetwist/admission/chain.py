# -*- test-case-name: tests.admission.test_chain -*-
"""
Admission: upstream C{k8s.io/apiserver/pkg/admission} (C{chain.go}, C{attributes.go}).

A plugin may implement C{admit} (mutating) and/or C{validate}; the chain runs every plugin's
C{admit} in order, then (after the strategy's validation) every C{validate}.  A plugin refuses
by raising a L{kubetwist.runtime.errors.StatusError} (usually 403 Forbidden or 404 NotFound).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Protocol

from kubetwist.registry.generic.store import Admission
from kubetwist.registry.rest import ResourceSpec


@dataclass
class Attributes:
    """
    Upstream C{admission.Attributes}.

    @ivar operation: C{CREATE UPDATE DELETE CONNECT}.
    @ivar object: the new object (mutable in C{admit}); for DELETE the existing one.
    @ivar old_object: the stored object for UPDATE/DELETE, else L{None}.
    """

    operation: str
    spec: ResourceSpec
    subresource: str
    namespace: str
    name: str
    object: Optional[dict]
    old_object: Optional[dict]
    user: Any
    dry_run: bool


class AdmissionPlugin(Protocol):
    """A plugin: C{name}, C{handles(operation)}, and C{async admit}/C{async validate}."""

    name: str

    def handles(self, operation: str) -> bool: ...


class AdmissionChain:
    """The ordered plugins of C{--enable-admission-plugins}."""

    def __init__(self, plugins: list[Any]) -> None:
        self.plugins = plugins

    def for_request(
        self, spec: ResourceSpec, subresource: str, namespace: str, name: str, user: Any,
        dry_run: bool,
    ) -> Admission:
        """Bind the chain to one request: the L{Admission} the Store calls."""

        def attrs(operation: str, obj: dict, old: Optional[dict]) -> Attributes:
            return Attributes(
                operation, spec, subresource, namespace,
                name or (obj or {}).get("metadata", {}).get("name", ""),
                obj, old, user, dry_run,
            )

        async def mutate(operation: str, obj: dict, old: Optional[dict]) -> None:
            a = attrs(operation, obj, old)
            for p in self.plugins:
                if hasattr(p, "admit") and p.handles(operation):
                    await p.admit(a)

        async def validate(operation: str, obj: dict, old: Optional[dict]) -> None:
            a = attrs(operation, obj, old)
            for p in self.plugins:
                if hasattr(p, "validate") and p.handles(operation):
                    await p.validate(a)

        return Admission(mutate=mutate, validate=validate)
