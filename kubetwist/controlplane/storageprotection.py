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

The controller reacts to events, as upstream's informers: one L{Informer
<kubetwist.authorization.rbac.informer.Informer>} each of claims, volumes and pods.  A claim or
volume marked for deletion is looked at when its event arrives, the marked claims of a
namespace when one of its pods changes or goes; a claim the pods seen say is unused is checked
with a fresh list of its namespace's pods before release (upstream C{askAPIServer}).  Every
C{interval} seconds (5 minutes) the marked objects are looked at again from memory.
"""

from __future__ import annotations

from typing import Any, Optional

from twisted.logger import Logger

from kubetwist.authorization.rbac.informer import Informer
from kubetwist.controlplane.sweeper import SweepService
from kubetwist.registry.generic.store import ListOptions, Store
from kubetwist.runtime import errors

log = Logger()

PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"
#: seconds between two passes over every marked claim and volume (from memory)
DEFAULT_INTERVAL = 300.0


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
        #: C{(namespace, name)} of the marked claims, and C{("", name)} of the marked volumes,
        #: to look at in the next pass
        self.dirty_claims: set[tuple[str, str]] = set()
        self.dirty_volumes: set[tuple[str, str]] = set()
        #: C{(namespace, name)} of every claim marked for deletion with the finalizer
        self.marked_claims: set[tuple[str, str]] = set()
        self._last_full = -1.0
        self.informers: dict[str, Informer] = {}

    def startService(self) -> None:
        super().startService()
        stores = {"claims": (self.claims, self._claim_changed),
                  "pods": (self.pods, self._pod_changed)}
        if self.volumes is not None:
            stores["volumes"] = (self.volumes, self._volume_changed)
        for name, (store, callback) in stores.items():
            self.informers[name] = Informer(store.storage, self.clock, store.prefix(""),
                                            callback)
            self.informers[name].start()

    def stopService(self) -> Any:
        for informer in self.informers.values():
            informer.stop()
        self.informers = {}
        return super().stopService()

    def _items(self, name: str) -> dict[tuple[str, str], dict]:
        informer = self.informers.get(name)
        return informer.items if informer is not None else {}

    def _claim_changed(self, key: Optional[tuple[str, str]]) -> None:
        items = self._items("claims")
        if key is None:
            self.marked_claims = set()
        for k in (items if key is None else [key]):
            if _marked(items.get(k) or {}, PVC_PROTECTION_FINALIZER):
                self.marked_claims.add(k)
                self.dirty_claims.add(k)
            else:
                self.marked_claims.discard(k)
        if self.dirty_claims:
            self.trigger()

    def _volume_changed(self, key: Optional[tuple[str, str]]) -> None:
        items = self._items("volumes")
        keys = items if key is None else [key]
        self.dirty_volumes.update(k for k in keys
                                  if _marked(items.get(k) or {}, PV_PROTECTION_FINALIZER))
        if self.dirty_volumes:
            self.trigger()

    def _pod_changed(self, key: Optional[tuple[str, str]]) -> None:
        # a pod that changes or goes may release the marked claims of its namespace
        self.dirty_claims.update(k for k in self.marked_claims if key is None or k[0] == key[0])
        if self.dirty_claims:
            self.trigger()

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
        """One pass over the claims and volumes events marked (all marked ones once per
        C{interval}); fires with C{pvc/<ns>/<name>} and C{pv/<name>} of the objects
        released."""
        for informer in list(self.informers.values()):
            await informer.wait_synced()
        now = self.clock.seconds()
        if self._last_full < 0 or now - self._last_full >= self.interval:
            self._last_full = now
            self.dirty_claims.update(self._items("claims"))
            self.dirty_volumes.update(self._items("volumes"))
        dirty_claims, self.dirty_claims = self.dirty_claims, set()
        dirty_volumes, self.dirty_volumes = self.dirty_volumes, set()
        released: list[str] = []
        claims, pods = self._items("claims"), self._items("pods")
        for key in sorted(dirty_claims):
            c = claims.get(key)
            if c is None or not _marked(c, PVC_PROTECTION_FINALIZER):
                continue
            ns, name = key
            if any(k[0] == ns and pod_uses_claim(p, name) for k, p in pods.items()):
                continue
            # the pods seen may lag behind: ask the storage (upstream askAPIServer)
            fresh = (await self.pods.list(ns, ListOptions()))["items"]
            if any(pod_uses_claim(p, name) for p in fresh):
                continue
            if await self._release(self.claims, c, PVC_PROTECTION_FINALIZER):
                released.append(f"pvc/{ns}/{name}")
        volumes = self._items("volumes")
        for key in sorted(dirty_volumes):
            v = volumes.get(key)
            if v is None or not _marked(v, PV_PROTECTION_FINALIZER):
                continue
            if (v.get("status") or {}).get("phase") == "Bound":
                continue
            if await self._release(self.volumes, v, PV_PROTECTION_FINALIZER):
                released.append(f"pv/{v['metadata']['name']}")
        return released
