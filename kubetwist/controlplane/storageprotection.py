# -*- test-case-name: tests.controlplane.test_storageprotection -*-
"""
The PVC and PV protection controllers: after upstream C{pkg/controller/volume/pvcprotection}
and C{pkg/controller/volume/pvprotection} (kube-controller-manager), the other half of the
C{StorageObjectInUseProtection} admission plugin, which gives every new claim the
C{kubernetes.io/pvc-protection} finalizer and every new volume the
C{kubernetes.io/pv-protection} finalizer.  kubetwist runs no controller manager, so without
this a deleted claim or volume would stay C{Terminating} for ever.

The controllers remove the finalizer of:

  - a claim marked for deletion that no pod uses: a pod uses a claim when it is scheduled
    (C{spec.nodeName}), not finished (phase neither C{Succeeded} nor C{Failed}) and names the
    claim in a C{persistentVolumeClaim} volume, or in a generic ephemeral volume
    (C{<pod>-<volume>});
  - a volume marked for deletion that is not C{Bound}.

They react to events (upstream's informers): L{Informer}s over the storage backend (see
L{backend_of <kubetwist.controlplane.garbagecollector.backend_of>}) of claims, volumes and
pods, keeping only what they read; an index from C{(namespace, claim)} to the pods using it
answers "in use" without a scan.  A claim is checked when it changes and when a pod that used
it changes or goes; a volume when it changes.  Nothing runs while nothing changes.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from twisted.application.service import Service
from twisted.internet.defer import Deferred
from twisted.logger import Logger

from kubetwist.authorization.rbac.informer import Informer
from kubetwist.controlplane.garbagecollector import backend_of
from kubetwist.registry.generic.store import Store
from kubetwist.runtime import errors

log = Logger()

PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"


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


def claims_used(pod: dict) -> frozenset[str]:
    """The claims C{pod} uses (L{pod_uses_claim}), as names in its namespace."""
    spec = pod.get("spec") or {}
    if not spec.get("nodeName"):
        return frozenset()
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return frozenset()
    pod_name = (pod.get("metadata") or {}).get("name", "")
    names = set()
    for v in spec.get("volumes") or []:
        v = v or {}
        claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
        if claim:
            names.add(claim)
        if v.get("ephemeral") is not None:
            names.add(f"{pod_name}-{v.get('name', '')}")
    return frozenset(names)


class _Protected(NamedTuple):
    """What the controller keeps of a claim or volume: its C{uid}, whether it is C{marked}
    (deleting with the protection finalizer) and whether it is C{bound} (phase C{Bound})."""

    uid: str
    marked: bool
    bound: bool


def _view(finalizer: str) -> Any:
    def view(obj: dict) -> _Protected:
        return _Protected((obj.get("metadata") or {}).get("uid", ""), _marked(obj, finalizer),
                          (obj.get("status") or {}).get("phase") == "Bound")
    return view


class StorageProtection(Service):
    """
    Removes the protection finalizers of claims and volumes no longer in use (see the module
    docstring).

    @param claims: the persistentvolumeclaims Store.
    @param volumes: the persistentvolumes Store, or C{None}.
    @param pods: the pods Store.
    @param clock: C{IReactorTime} the informers and releases run on.
    @ivar released: C{pvc/<ns>/<name>} and C{pv/<name>} of the objects released, most recent
        last (the last 100).
    """

    name = "storage-protection-controller"

    def __init__(self, claims: Store, volumes: Optional[Store], pods: Store, clock: Any) -> None:
        self.claims, self.volumes, self.pods = claims, volumes, pods
        self.clock = clock
        self.released: list[str] = []
        self.informers: dict[str, Informer] = {}
        #: (namespace, claim) -> keys of the pods using it
        self._users: dict[tuple[str, str], set[tuple[str, str]]] = {}
        self._uses: dict[tuple[str, str], frozenset[str]] = {}
        self._calls: set[Any] = set()

    # --- IService -----------------------------------------------------------------------------
    def startService(self) -> None:
        super().startService()

        def informer(store: Store, on_change: Any, transform: Any) -> Informer:
            return Informer(backend_of(store.storage), self.clock, store.prefix(""), on_change,
                            transform=transform)
        self.informers = {"pods": informer(self.pods, self._pod_changed, claims_used),
                          "claims": informer(self.claims, self._claim_changed,
                                             _view(PVC_PROTECTION_FINALIZER))}
        if self.volumes is not None:
            self.informers["volumes"] = informer(self.volumes, self._volume_changed,
                                                 _view(PV_PROTECTION_FINALIZER))
        for inf in self.informers.values():
            inf.start()

    def stopService(self) -> Any:
        super().stopService()
        for inf in self.informers.values():
            inf.stop()
        self.informers = {}
        for call in self._calls:
            if call.active():
                call.cancel()
        self._calls.clear()
        return None

    # --- events -------------------------------------------------------------------------------
    def _synced(self, *names: str) -> bool:
        return all(n in self.informers and self.informers[n].synced for n in names)

    def _pod_changed(self, key: Optional[tuple[str, str]]) -> None:
        pods = self.informers["pods"]
        if key is None:
            self._users.clear()
            self._uses.clear()
            for k in pods.items:
                self._index_pod(k)
            self._check_claims(list(self.informers["claims"].items)
                               if "claims" in self.informers else [])
            return
        freed = self._index_pod(key)
        self._check_claims([(key[0], name) for name in freed])

    def _index_pod(self, key: tuple[str, str]) -> frozenset[str]:
        """Update the index for pod C{key}; return the claims it no longer uses."""
        now = self.informers["pods"].items.get(key) or frozenset()
        before = self._uses.pop(key, frozenset())
        if now:
            self._uses[key] = now
        for name in before - now:
            users = self._users.get((key[0], name))
            if users is not None:
                users.discard(key)
                if not users:
                    del self._users[(key[0], name)]
        for name in now - before:
            self._users.setdefault((key[0], name), set()).add(key)
        return before - now

    def _claim_changed(self, key: Optional[tuple[str, str]]) -> None:
        claims = self.informers["claims"]
        self._check_claims(list(claims.items) if key is None else [key])

    def _check_claims(self, keys: list[tuple[str, str]]) -> None:
        if not self._synced("pods", "claims"):
            return
        claims = self.informers["claims"].items
        for key in keys:
            claim = claims.get(key)
            if claim is not None and claim.marked and not self._users.get(key):
                self._later(self.claims, key, claim.uid, PVC_PROTECTION_FINALIZER,
                            f"pvc/{key[0]}/{key[1]}")

    def _volume_changed(self, key: Optional[tuple[str, str]]) -> None:
        volumes = self.informers["volumes"]
        for k in (list(volumes.items) if key is None else [key]):
            volume = volumes.items.get(k)
            if volume is not None and volume.marked and not volume.bound:
                assert self.volumes is not None
                self._later(self.volumes, k, volume.uid, PV_PROTECTION_FINALIZER,
                            f"pv/{k[1]}")

    def _later(self, store: Store, key: tuple[str, str], uid: str, finalizer: str,
               label: str) -> None:
        """Release on the next reactor turn (not inside the watch event's delivery)."""
        def run() -> Optional[Deferred]:
            self._calls.discard(call)
            if finalizer == PVC_PROTECTION_FINALIZER and self._users.get(key):
                return None  # a pod started to use it meanwhile
            return Deferred.fromCoroutine(self._release(store, key, uid, finalizer, label))
        call = self.clock.callLater(0, run)
        self._calls.add(call)

    async def _release(self, store: Store, key: tuple[str, str], uid: str, finalizer: str,
                       label: str) -> bool:
        async def transform(current: Optional[dict]) -> dict:
            if current is None or current["metadata"].get("uid") != uid:
                raise errors.new_not_found(store.spec.group, store.spec.resource, key[1])
            if finalizer not in (current["metadata"].get("finalizers") or []):
                raise errors.new_conflict(store.spec.group, store.spec.resource, key[1],
                                          "already released")
            new = dict(current)
            new["metadata"] = dict(current["metadata"])
            new["metadata"]["finalizers"] = [
                f for f in current["metadata"].get("finalizers") or [] if f != finalizer]
            return new

        try:
            await store.update(key[0], key[1], transform)
        except errors.StatusError as e:
            if e.code not in (404, 409):
                log.warn("storage protection: {msg}", msg=e.message)  # noqa: G010
            return False
        self.released = self.released[-99:] + [label]
        return True
