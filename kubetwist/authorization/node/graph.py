# -*- test-case-name: tests.authorization.test_node -*-
"""
The node authorizer's graph: upstream C{plugin/pkg/auth/authorizer/node} (C{graph.go},
C{graph_populator.go}).

Vertices are C{(type, namespace, name)}; edges point towards the node that may use an object:
C{secret/configmap/pvc/serviceaccount/resourceclaim -> pod -> node}, C{pv -> pvc},
C{secret -> pv}, C{pv -> volumeattachment -> node}.  Each object's own edges are kept by the
object that creates them (a pod owns its pod -> node edge and the edges into the pod), so an
update replaces them and a delete removes them.  L{GraphPopulator} keeps the graph from
storage watches of pods, persistent volumes and volume attachments, in memory and
asynchronously (a restarted watch rebuilds that kind from its initial ADDED events).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Iterator

from twisted.logger import Logger

__all__ = ["Graph", "GraphPopulator", "pod_references"]

log = Logger()

NODE = "node"
POD = "pod"
SECRET = "secret"
CONFIGMAP = "configmap"
PVC = "pvc"
PV = "pv"
SERVICEACCOUNT = "serviceAccount"
RESOURCECLAIM = "resourceclaim"
VOLUMEATTACHMENT = "volumeattachment"

Vertex = tuple  # (type, namespace, name)


class Graph:
    """
    Upstream C{Graph}: directed edges between vertices, grouped by the object that owns them.
    """

    def __init__(self) -> None:
        self.out: dict[Vertex, set[Vertex]] = defaultdict(set)
        self._refs: dict[tuple[Vertex, Vertex], int] = defaultdict(int)
        self.owned: dict[Vertex, list[tuple[Vertex, Vertex]]] = {}

    def set_owned_edges(self, owner: Vertex, edges: Iterable[tuple[Vertex, Vertex]]) -> None:
        """Replace the edges C{owner} contributes with C{edges}."""
        self.delete_owner(owner)
        edges = list(dict.fromkeys(edges))
        if not edges:
            return
        self.owned[owner] = edges
        for a, b in edges:
            self._refs[(a, b)] += 1
            self.out[a].add(b)

    def delete_owner(self, owner: Vertex) -> None:
        """Remove the edges C{owner} contributed."""
        for a, b in self.owned.pop(owner, []):
            self._refs[(a, b)] -= 1
            if self._refs[(a, b)] <= 0:
                del self._refs[(a, b)]
                self.out[a].discard(b)
                if not self.out[a]:
                    del self.out[a]

    def delete_kind(self, kind: str) -> None:
        """Forget every owner of type C{kind} (before a watch of that kind is rebuilt)."""
        for owner in [o for o in self.owned if o[0] == kind]:
            self.delete_owner(owner)

    def has_vertex(self, vertex: Vertex) -> bool:
        """Whether any edge starts or ends at C{vertex}."""
        if vertex in self.out:
            return True
        return any(vertex in targets for targets in self.out.values())

    def has_path(self, start: Vertex, target: Vertex) -> bool:
        """Upstream C{hasPathFrom}'s walk: a path from C{start} to C{target} (never through
        another node)."""
        seen = {start}
        stack = [start]
        while stack:
            v = stack.pop()
            for w in self.out.get(v, ()):
                if w == target:
                    return True
                if w in seen or w[0] == NODE:
                    continue
                seen.add(w)
                stack.append(w)
        return False


def _walk_secret_refs(obj: Any) -> Iterator[dict]:
    """Every C{*SecretRef}/C{secretRef} object under C{obj} (persistent volume sources)."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if isinstance(value, dict) and (key == "secretRef" or key.endswith("SecretRef")):
                yield value
            else:
                yield from _walk_secret_refs(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from _walk_secret_refs(item)


def pod_references(pod: dict) -> dict[str, set[str]]:
    """
    The objects a pod uses (upstream C{podutil.VisitPodSecretNames},
    C{VisitPodConfigmapNames}, and the volume and claim loops of C{AddPod}):
    C{{"secret": names, "configmap": names, "pvc": names, "serviceAccount": names,
    "resourceclaim": names}}, all in the pod's namespace.
    """
    spec = pod.get("spec") or {}
    name = (pod.get("metadata") or {}).get("name") or ""
    refs: dict[str, set[str]] = {SECRET: set(), CONFIGMAP: set(), PVC: set(),
                                 SERVICEACCOUNT: set(), RESOURCECLAIM: set()}
    for s in spec.get("imagePullSecrets") or []:
        if (s or {}).get("name"):
            refs[SECRET].add(s["name"])
    containers = ((spec.get("containers") or []) + (spec.get("initContainers") or [])
                  + (spec.get("ephemeralContainers") or []))
    for c in containers:
        c = c or {}
        for ef in c.get("envFrom") or []:
            ef = ef or {}
            if (ef.get("secretRef") or {}).get("name"):
                refs[SECRET].add(ef["secretRef"]["name"])
            if (ef.get("configMapRef") or {}).get("name"):
                refs[CONFIGMAP].add(ef["configMapRef"]["name"])
        for env in c.get("env") or []:
            source = (env or {}).get("valueFrom") or {}
            if (source.get("secretKeyRef") or {}).get("name"):
                refs[SECRET].add(source["secretKeyRef"]["name"])
            if (source.get("configMapKeyRef") or {}).get("name"):
                refs[CONFIGMAP].add(source["configMapKeyRef"]["name"])
    for vol in spec.get("volumes") or []:
        vol = vol or {}
        if (vol.get("secret") or {}).get("secretName"):
            refs[SECRET].add(vol["secret"]["secretName"])
        if (vol.get("configMap") or {}).get("name"):
            refs[CONFIGMAP].add(vol["configMap"]["name"])
        for src in (vol.get("projected") or {}).get("sources") or []:
            src = src or {}
            if (src.get("secret") or {}).get("name"):
                refs[SECRET].add(src["secret"]["name"])
            if (src.get("configMap") or {}).get("name"):
                refs[CONFIGMAP].add(src["configMap"]["name"])
        if (vol.get("azureFile") or {}).get("secretName"):
            refs[SECRET].add(vol["azureFile"]["secretName"])
        for key, value in vol.items():
            if key in ("secret", "configMap", "projected", "name"):
                continue
            for ref in _walk_secret_refs({key: value}):
                if ref.get("name"):
                    refs[SECRET].add(ref["name"])
        if (vol.get("persistentVolumeClaim") or {}).get("claimName"):
            refs[PVC].add(vol["persistentVolumeClaim"]["claimName"])
        if vol.get("ephemeral") is not None and vol.get("name"):
            refs[PVC].add(f"{name}-{vol['name']}")  # upstream ephemeral.VolumeClaimName
    if spec.get("serviceAccountName"):
        refs[SERVICEACCOUNT].add(spec["serviceAccountName"])
    for st in (pod.get("status") or {}).get("resourceClaimStatuses") or []:
        if (st or {}).get("resourceClaimName"):
            refs[RESOURCECLAIM].add(st["resourceClaimName"])
    return refs


def _meta(obj: dict) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "", meta.get("name") or ""


def pod_edges(pod: dict) -> list[tuple[Vertex, Vertex]]:
    """Upstream C{AddPod}: nothing for a pod not bound to a node."""
    ns, name = _meta(pod)
    node = (pod.get("spec") or {}).get("nodeName") or ""
    if not node or not name:
        return []
    pod_v = (POD, ns, name)
    edges = [(pod_v, (NODE, "", node))]
    for kind, names in pod_references(pod).items():
        for n in sorted(names):
            edges.append(((kind, ns, n), pod_v))
    return edges


def pv_edges(pv: dict) -> list[tuple[Vertex, Vertex]]:
    """Upstream C{AddPV}: C{pv -> pvc} of its claim, C{secret -> pv} of its sources."""
    _, name = _meta(pv)
    spec = pv.get("spec") or {}
    claim = spec.get("claimRef") or {}
    if not name or not claim.get("name"):
        return []
    pv_v = (PV, "", name)
    edges = [(pv_v, (PVC, claim.get("namespace") or "", claim["name"]))]
    for ref in _walk_secret_refs(spec):
        if ref.get("name"):
            edges.append(((SECRET, ref.get("namespace") or claim.get("namespace") or "",
                           ref["name"]), pv_v))
    azure = spec.get("azureFile") or {}
    if azure.get("secretName"):  # upstream: secretNamespace, else the claim's namespace
        edges.append(((SECRET, azure.get("secretNamespace") or claim.get("namespace") or "",
                       azure["secretName"]), pv_v))
    return edges


def va_edges(va: dict) -> list[tuple[Vertex, Vertex]]:
    """Upstream C{AddVolumeAttachment}: C{va -> node}, and C{pv -> va} for its volume."""
    _, name = _meta(va)
    spec = va.get("spec") or {}
    node = spec.get("nodeName") or ""
    if not name or not node:
        return []
    va_v = (VOLUMEATTACHMENT, "", name)
    edges = [(va_v, (NODE, "", node))]
    pv = (spec.get("source") or {}).get("persistentVolumeName")
    if pv:
        edges.append(((PV, "", pv), va_v))
    return edges


#: The watched kinds: (vertex type of the owner, storage key prefix, edge function).
WATCHES = (
    (POD, "/registry/pods/", pod_edges),
    (PV, "/registry/persistentvolumes/", pv_edges),
    (VOLUMEATTACHMENT, "/registry/volumeattachments/", va_edges),
)


class GraphPopulator:
    """
    Upstream C{AddGraphEventHandlers}: keep C{graph} from watches of C{storage} (an
    L{IStorage <kubetwist.storage.interfaces.IStorage>}); a watch that ends is started again
    after C{retry} seconds and its kind rebuilt.

    @param clock: an C{IReactorTime}.
    """

    def __init__(self, graph: Graph, storage: Any, clock: Any, retry: float = 1.0) -> None:
        self.graph = graph
        self.storage = storage
        self.clock = clock
        self.retry = retry
        self.watches: dict[str, Any] = {}
        self.stopped = False

    def start(self) -> None:
        """Start the watches (from an empty resource version: every object comes as ADDED)."""
        for kind, prefix, edges in WATCHES:
            self._watch(kind, prefix, edges)

    def stop(self) -> None:
        self.stopped = True
        for w in list(self.watches.values()):
            w.stop()

    def _watch(self, kind: str, prefix: str, edges: Any) -> None:
        if self.stopped:
            return
        from kubetwist.storage.interfaces import EVERYTHING

        self.graph.delete_kind(kind)
        try:
            w = self.storage.watch(prefix, "", True, EVERYTHING)
        except Exception:  # noqa: BLE001 -- a backend that cannot watch now: try again
            log.failure("node authorizer: cannot watch {prefix}", prefix=prefix)
            self.clock.callLater(self.retry, self._watch, kind, prefix, edges)
            return
        self.watches[kind] = w

        def on_event(ev: Any) -> None:
            if ev.type in ("BOOKMARK",):
                return
            if ev.type == "ERROR":
                w.stop()
                return
            try:
                ns, name = _meta(ev.object)
                owner = (kind, ns, name)
                if ev.type == "DELETED":
                    self.graph.delete_owner(owner)
                else:
                    self.graph.set_owned_edges(owner, edges(ev.object))
            except (AttributeError, TypeError, ValueError):
                # an object of an unexpected shape (written around the API): it links nothing
                log.failure("node authorizer: cannot read {kind} {key}", kind=kind, key=ev.key)
                if isinstance(ev.object, dict):
                    meta = ev.object.get("metadata")
                    if isinstance(meta, dict):
                        self.graph.delete_owner((kind, str(meta.get("namespace") or ""),
                                                 str(meta.get("name") or "")))

        def ended(_: Any) -> None:
            if not self.stopped and self.watches.get(kind) is w:
                self.clock.callLater(self.retry, self._watch, kind, prefix, edges)

        w.subscribe(on_event)
        w.done.addBoth(ended)
