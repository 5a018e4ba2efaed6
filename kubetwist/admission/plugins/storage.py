# -*- test-case-name: tests.admission.test_builtin -*-
"""
The storage plugins: C{DefaultStorageClass} (upstream
C{plugin/pkg/admission/storage/storageclass/setdefault}), C{StorageObjectInUseProtection}
(C{.../storage/storageobjectinuseprotection}) and C{PersistentVolumeClaimResize}
(C{.../storage/persistentvolume/resize}).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Optional

from zope.interface import implementer

from kubetwist.admission.interfaces import IMutationInterface, IValidationInterface
from kubetwist.admission.plugins.common import forbidden, is_core
from kubetwist.runtime.quantity import QuantityError, parse_quantity

__all__ = ["DefaultStorageClass", "PersistentVolumeClaimResize", "StorageObjectInUseProtection",
           "default_class"]

Lister = Callable[[], Awaitable[list[dict]]]

#: Upstream C{v1.BetaStorageClassAnnotation}.
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
IS_DEFAULT_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
BETA_IS_DEFAULT_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class"
PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"


def _annotations(obj: dict) -> dict:
    return (obj.get("metadata") or {}).get("annotations") or {}


def newest_first(classes: list[dict]) -> list[dict]:
    """Upstream's order among several default classes: newest C{creationTimestamp} first,
    then by name (RFC 3339 timestamps of one format compare as text)."""
    def key(c: dict) -> tuple:
        meta = c.get("metadata") or {}
        return meta.get("creationTimestamp") or "", meta.get("name") or ""
    by_name = sorted(classes, key=lambda c: (c.get("metadata") or {}).get("name") or "")
    return sorted(by_name, key=lambda c: key(c)[0], reverse=True)


def default_class(classes: list[dict]) -> Optional[dict]:
    """Upstream C{util.GetDefaultClass}: the default StorageClass (annotated
    C{storageclass.kubernetes.io/is-default-class: "true"} or its beta form), newest first."""
    defaults = [c for c in classes
                if _annotations(c).get(IS_DEFAULT_ANNOTATION) == "true"
                or _annotations(c).get(BETA_IS_DEFAULT_ANNOTATION) == "true"]
    return newest_first(defaults)[0] if defaults else None


def claim_class(pvc: dict) -> str:
    """Upstream C{GetPersistentVolumeClaimClass}: the beta annotation, else
    C{spec.storageClassName}, else C{""}."""
    ann = _annotations(pvc)
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return ann[BETA_STORAGE_CLASS_ANNOTATION]
    return (pvc.get("spec") or {}).get("storageClassName") or ""


@implementer(IMutationInterface)
class DefaultStorageClass:
    """A claim created without a class (no C{spec.storageClassName}, no beta annotation) gets
    the default StorageClass's name, when there is one."""

    name = "DefaultStorageClass"

    def __init__(self, list_classes: Lister) -> None:
        self.list_classes = list_classes

    def handles(self, operation: str) -> bool:
        return operation == "CREATE"

    async def admit(self, a: Any) -> None:
        if not is_core(a, "persistentvolumeclaims") or not isinstance(a.object, dict):
            return
        spec = a.object.setdefault("spec", {})
        if BETA_STORAGE_CLASS_ANNOTATION in _annotations(a.object) \
                or spec.get("storageClassName") is not None:
            return
        found = default_class(await self.list_classes())
        if found is not None:
            spec["storageClassName"] = found["metadata"]["name"]


@implementer(IMutationInterface)
class StorageObjectInUseProtection:
    """New claims get the C{kubernetes.io/pvc-protection} finalizer, new volumes the
    C{kubernetes.io/pv-protection} finalizer (which kubetwist's protection controller removes
    once the object is no longer in use, as kube-controller-manager's do)."""

    name = "StorageObjectInUseProtection"

    def handles(self, operation: str) -> bool:
        return operation == "CREATE"

    async def admit(self, a: Any) -> None:
        if is_core(a, "persistentvolumeclaims"):
            finalizer = PVC_PROTECTION_FINALIZER
        elif is_core(a, "persistentvolumes"):
            finalizer = PV_PROTECTION_FINALIZER
        else:
            return
        if not isinstance(a.object, dict):
            return
        meta = a.object.setdefault("metadata", {})
        finalizers = meta.get("finalizers") or []
        if finalizer not in finalizers:
            meta["finalizers"] = [*finalizers, finalizer]


def _storage(pvc: dict) -> Any:
    raw = (((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
    try:
        return parse_quantity(raw).value if raw is not None else 0
    except QuantityError:
        return 0


@implementer(IValidationInterface)
class PersistentVolumeClaimResize:
    """Growing a claim's C{spec.resources.requests.storage} needs a bound claim of a
    StorageClass with C{allowVolumeExpansion: true}."""

    name = "PersistentVolumeClaimResize"

    def __init__(self, list_classes: Lister) -> None:
        self.list_classes = list_classes

    def handles(self, operation: str) -> bool:
        return operation == "UPDATE"

    async def validate(self, a: Any) -> None:
        """
        @raise StatusError: 403 C{Only bound persistent volume claims can be expanded}, or
            C{only dynamically provisioned pvc can be resized and the storageclass that
            provisions the pvc must support resize}.
        """
        if not is_core(a, "persistentvolumeclaims") or not isinstance(a.object, dict) \
                or not isinstance(a.old_object, dict):
            return
        if _storage(a.object) <= _storage(a.old_object):
            return
        if ((a.old_object.get("status") or {}).get("phase")) != "Bound":
            raise forbidden(a, "Only bound persistent volume claims can be expanded")
        if not await self._allow_resize(a.object, a.old_object):
            raise forbidden(a, "only dynamically provisioned pvc can be resized and the "
                               "storageclass that provisions the pvc must support resize")

    async def _allow_resize(self, pvc: dict, old: dict) -> bool:
        name, old_name = claim_class(pvc), claim_class(old)
        if not name or not old_name or name != old_name:
            return False
        for sc in await self.list_classes():
            if (sc.get("metadata") or {}).get("name") == name:
                return sc.get("allowVolumeExpansion") is True
        return False
