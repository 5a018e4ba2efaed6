# -*- test-case-name: tests.controlplane.test_storageprotection -*-
"""
The PVC and PV protection controllers: after upstream C{pkg/controller/volume/pvcprotection}
and C{pkg/controller/volume/pvprotection} (kube-controller-manager), the other half of the
C{StorageObjectInUseProtection} admission plugin, which gives every new claim the
C{kubernetes.io/pvc-protection} finalizer and every new volume the
C{kubernetes.io/pv-protection} finalizer.  kubetwist runs no controller manager, so without
this a deleted claim or volume would stay C{Terminating} for ever.

Each sweep removes the finalizer of:

  - a claim marked for deletion that no pod uses: a pod uses a claim when it is scheduled
    (C{spec.nodeName}), not finished (phase neither C{Succeeded} nor C{Failed}) and names the
    claim in a C{persistentVolumeClaim} volume, or in a generic ephemeral volume
    (C{<pod>-<volume>});
  - a volume marked for deletion that is not C{Bound}.

Sweeps run every second, at once when a claim or volume is marked for deletion or a pod is
deleted.
"""

from __future__ import annotations

from typing import Any, Optional

from twisted.logger import Logger

from kubetwist.controlplane.sweeper import SweepService
from kubetwist.registry.generic.store import ListOptions, Store
from kubetwist.runtime import errors

log = Logger()

PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"
DEFAULT_INTERVAL = 1.0


def pod_uses_claim(pod: dict, claim: str) -> bool:
    """Upstream C{podUsesPVC} (for a pod of the claim's namespace)."""
    spec = pod.get("spec") or {}
    if not spec.get("nodeName"):
        return False
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    pod_name = (pod.get("metadata") or {}).get("name", "")
    for v in spec.get("volumes") or []:
        v = v or {}
        if ((v.get("persistentVolumeClaim") or {}).get("claimName")) == claim:
            return True
        if v.get("ephemeral") is not None and f"{pod_name}-{v.get('name', '')}" == claim:
            return True
    return False


def _marked(obj: dict, finalizer: str) -> bool:
    meta = obj.get("metadata") or {}
    return bool(meta.get("deletionTimestamp")) and finalizer in (meta.get("finalizers") or [])


class StorageProtection(SweepService):
    """
    Removes the protection finalizers of claims and volumes no longer in use (see the module
    docstring).

    @param claims: the persistentvolumeclaims Store.
    @param volumes: the persistentvolumes Store, or C{None}.
    @param pods: the pods Store.
    """

    name = "storage-protection-controller"

    def __init__(self, claims: Store, volumes: Optional[Store], pods: Store, clock: Any,
                 interval: float = DEFAULT_INTERVAL) -> None:
        super().__init__(clock, interval)
        self.claims, self.volumes, self.pods = claims, volumes, pods
        claims.on_marked_for_deletion.append(self.trigger)
        if volumes is not None:
            volumes.on_marked_for_deletion.append(self.trigger)
        pods.after_delete.append(self.trigger)

    async def _release(self, store: Store, obj: dict, finalizer: str) -> bool:
        meta = obj["metadata"]

        async def transform(current: Optional[dict]) -> dict:
            if current is None or current["metadata"].get("uid") != meta.get("uid"):
                raise errors.new_not_found(store.spec.group, store.spec.resource, meta["name"])
            new = dict(current)
            new["metadata"] = dict(current["metadata"])
            new["metadata"]["finalizers"] = [
                f for f in current["metadata"].get("finalizers") or [] if f != finalizer]
            return new

        try:
            await store.update(meta.get("namespace", ""), meta["name"], transform)
        except errors.StatusError as e:
            if e.code not in (404, 409):
                log.warn("storage protection: {msg}", msg=e.message)  # noqa: G010
            return False
        return True

    async def sweep(self) -> list[str]:
        """One pass; fires with C{pvc/<ns>/<name>} and C{pv/<name>} of the objects
        released."""
        released: list[str] = []
        claims = [c for c in (await self.claims.list("", ListOptions()))["items"]
                  if _marked(c, PVC_PROTECTION_FINALIZER)]
        if claims:
            pods = (await self.pods.list("", ListOptions()))["items"]
            for c in claims:
                meta = c["metadata"]
                ns = meta.get("namespace", "")
                if any((p.get("metadata") or {}).get("namespace") == ns
                       and pod_uses_claim(p, meta["name"]) for p in pods):
                    continue
                if await self._release(self.claims, c, PVC_PROTECTION_FINALIZER):
                    released.append(f"pvc/{ns}/{meta['name']}")
        if self.volumes is not None:
            for v in (await self.volumes.list("", ListOptions()))["items"]:
                if not _marked(v, PV_PROTECTION_FINALIZER):
                    continue
                if (v.get("status") or {}).get("phase") == "Bound":
                    continue
                if await self._release(self.volumes, v, PV_PROTECTION_FINALIZER):
                    released.append(f"pv/{v['metadata']['name']}")
        return released
