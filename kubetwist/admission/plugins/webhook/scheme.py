# -*- test-case-name: tests.admission.test_webhook -*-
"""
Equivalent resources and conversions for C{matchPolicy: Equivalent}: upstream's
C{EquivalentResourceMapper} (C{runtime.EquivalentResourceRegistry}: resources are equivalent
when they share their storage, e.g. C{autoscaling/v1} and C{autoscaling/v2}
C{horizontalpodautoscalers}, C{v1} and C{events.k8s.io/v1} C{events}, the served versions
of a custom resource) and the scheme's conversions and defaulting of
C{admission.NewVersionedAttributes}.

kubetwist reads them from the installed group-versions of the whole server chain (built-in
kinds and custom resources alike): each resource's L{Store
<kubetwist.registry.generic.store.Store>} has a storage key root (equivalence), a strategy
(defaulting) and, for a version that is not the storage version, a C{ConvertingStorage}
whose converter goes to and from the storage version (which may answer with a Deferred: a
CRD conversion webhook).  Duck-typed: the admission layer imports nothing above it.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Optional

__all__ = ["Scheme"]

GVR = tuple[str, str, str]
GVK = tuple[str, str, str]


async def _settled(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


class _Entry:
    def __init__(self, res: Any) -> None:
        spec = res.spec
        self.gvr: GVR = (spec.group, spec.version, spec.resource)
        self.gvk: GVK = (spec.group, spec.version, spec.kind)
        self.store = res.storage
        self.subresources = set(getattr(res, "subresources", {}) or {})
        self.key_root = getattr(self.store, "key_root", None)
        storage = getattr(self.store, "storage", None)
        self.converter = getattr(storage, "converter", None)
        #: a custom resource's pruning to its schema (its handlers' C{prune_unknown})
        self.prune = getattr(getattr(res, "handlers", None), "prune_unknown", None)


class Scheme:
    """
    @param group_versions: C{() -> {prefix: APIGroupVersion}} of the whole chain (upstream
        registers them as it installs each group-version); C{None}: no equivalents (every
        resource stands alone, no conversion).
    """

    def __init__(self, group_versions: Optional[Callable[[], dict]] = None) -> None:
        self.group_versions = group_versions
        self._fingerprint: tuple = ()
        self._by_gvr: dict[GVR, _Entry] = {}
        self._by_root: dict[str, list[_Entry]] = {}

    def _index(self) -> None:
        if self.group_versions is None:
            return
        gvs = self.group_versions()
        fingerprint = tuple(id(v) for v in gvs.values())
        if fingerprint == self._fingerprint:
            return
        by_gvr: dict[GVR, _Entry] = {}
        by_root: dict[str, list[_Entry]] = {}
        for agv in gvs.values():
            for res in list(getattr(agv, "resources", {}).values()):
                if not getattr(res, "has_storage", True):
                    continue
                e = _Entry(res)
                if e.key_root is None:
                    continue
                by_gvr[e.gvr] = e
                by_root.setdefault(e.key_root, []).append(e)
        self._by_gvr, self._by_root, self._fingerprint = by_gvr, by_root, fingerprint

    def equivalents(self, gvr: GVR, subresource: str) -> list[tuple[GVR, GVK]]:
        """Upstream C{EquivalentResourcesFor} with C{KindFor}: the resources sharing
        C{gvr}'s storage that serve C{subresource}, each with its kind, C{gvr} itself
        included."""
        self._index()
        entry = self._by_gvr.get(gvr)
        if entry is None:
            return []
        return [(e.gvr, e.gvk) for e in self._by_root.get(entry.key_root, [])
                if not subresource or subresource in e.subresources]

    async def convert(self, obj: Optional[dict], source: GVR, target: GVR) -> Optional[dict]:
        """
        C{obj} (in C{source}'s version) in C{target}'s version, through the storage version
        (a new dict; C{obj} itself when the versions are the same or unknown).

        @raise StatusError: a conversion webhook's failure (500).
        """
        if obj is None or source == target:
            return obj
        self._index()
        src, dst = self._by_gvr.get(source), self._by_gvr.get(target)
        if src is None or dst is None:
            return obj
        out = obj
        if src.converter is not None:
            out = await _settled(src.converter.to_storage(out))
        if dst.converter is not None:
            out = await _settled(dst.converter.from_storage(out))
        if out is obj:
            out = dict(obj)
        return out

    def prune(self, gvr: GVR, obj: dict) -> None:
        """Drop the fields a custom resource's schema does not know, in place (built-in
        kinds are pruned by their type definitions instead)."""
        self._index()
        e = self._by_gvr.get(gvr)
        if e is not None and e.prune is not None:
            e.prune(obj)

    def default(self, gvr: GVR, obj: dict) -> None:
        """The scheme defaulting of C{gvr}'s version (upstream C{ObjectDefaulter.Default})
        on C{obj}, in place."""
        self._index()
        e = self._by_gvr.get(gvr)
        strategy = getattr(e.store, "strategy", None) if e is not None else None
        fn = getattr(strategy, "default", None)
        if fn is not None:
            fn(obj)
