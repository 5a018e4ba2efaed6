# -*- test-case-name: tests.admission.test_noderestriction -*-
"""
The C{NodeRestriction} plugin: upstream C{plugin/pkg/admission/noderestriction}
(C{admission.go}), off by default as upstream.

A request of a node (user C{system:node:<name>} in group C{system:nodes}, the identity the
Node authorizer knows, L{node_identity <kubetwist.authorization.node.node_identity>}) may
only: create and delete mirror pods bound to itself (owned by its Node, referencing no service
account, secret, configmap, cluster trust bundle, claim or resource claim); update the status
of and evict pods bound to itself; create and modify its own Node, without a
C{configSource}, without changing taints and without setting labels outside the kubelet's set
(C{node-restriction.kubernetes.io/} labels and unknown C{kubernetes.io}/C{k8s.io} labels are
refused); update only C{status.capacity} and C{status.conditions} of claims; request tokens
bound to pods on itself; touch its own Lease in C{kube-node-lease} and its own CSINode.
"""

from __future__ import annotations

import copy
from typing import Any, Awaitable, Callable, Optional

from zope.interface import implementer

from kubetwist.admission.interfaces import IMutationInterface
from kubetwist.admission.plugins.common import forbidden
from kubetwist.authorization.node import node_identity
from kubetwist.runtime import errors

__all__ = ["NodeRestriction", "forbidden_labels"]

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
NODE_LEASE_NAMESPACE = "kube-node-lease"
LABEL_NAMESPACE_NODE_RESTRICTION = "node-restriction.kubernetes.io"
#: Upstream C{kubeletapis.kubeletLabels}.
KUBELET_LABELS = frozenset({
    "kubernetes.io/hostname", "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type",
    "kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/os", "beta.kubernetes.io/arch",
})
KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")

Getter = Callable[..., Awaitable[Optional[dict]]]


def _label_namespace(key: str) -> str:
    return key.split("/", 1)[0] if "/" in key else ""


def _in_namespace(namespace: str, domain: str) -> bool:
    return namespace == domain or namespace.endswith("." + domain)


def is_kubelet_label(key: str) -> bool:
    """Upstream C{kubeletapis.IsKubeletLabel}."""
    if key in KUBELET_LABELS:
        return True
    ns = _label_namespace(key)
    return any(_in_namespace(ns, d) for d in KUBELET_LABEL_NAMESPACES)


def forbidden_labels(new: dict, old: dict) -> list[str]:
    """Upstream C{getModifiedLabels} + C{getForbiddenLabels}: the labels added, removed or
    changed that a node may not set, sorted."""
    modified = {k for k in set(new) | set(old) if new.get(k) != old.get(k) or
                (k in new) != (k in old)}
    out = set()
    for key in modified:
        ns = _label_namespace(key)
        if _in_namespace(ns, LABEL_NAMESPACE_NODE_RESTRICTION):
            out.add(key)
        if (_in_namespace(ns, "kubernetes.io") or _in_namespace(ns, "k8s.io")) \
                and not is_kubelet_label(key):
            out.add(key)
    return sorted(out)


def _labels(obj: Optional[dict]) -> dict:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def _pod_references(pod: dict) -> tuple[bool, bool, bool]:
    """(secrets, configmaps, cluster trust bundles) a pod references (upstream
    C{VisitPodSecretNames}, C{VisitPodConfigmapNames}, all containers)."""
    spec = pod.get("spec") or {}
    secrets = bool(spec.get("imagePullSecrets"))
    configmaps = bundles = False
    for v in spec.get("volumes") or []:
        v = v or {}
        if isinstance(v.get("secret"), dict):
            secrets = True
        if isinstance(v.get("configMap"), dict):
            configmaps = True
        for k in ("azureFile", "cephfs", "cinder", "flexVolume", "rbd", "scaleIO", "iscsi",
                  "storageos", "csi"):
            src = v.get(k) or {}
            if isinstance(src, dict) and (src.get("secretRef") or src.get("secretName")
                                          or src.get("nodePublishSecretRef")):
                secrets = True
        for s in (v.get("projected") or {}).get("sources") or []:
            s = s or {}
            secrets = secrets or isinstance(s.get("secret"), dict)
            configmaps = configmaps or isinstance(s.get("configMap"), dict)
            bundles = bundles or s.get("clusterTrustBundle") is not None
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            for e in (c or {}).get("env") or []:
                ref = (e or {}).get("valueFrom") or {}
                secrets = secrets or isinstance(ref.get("secretKeyRef"), dict)
                configmaps = configmaps or isinstance(ref.get("configMapKeyRef"), dict)
            for f in (c or {}).get("envFrom") or []:
                secrets = secrets or isinstance((f or {}).get("secretRef"), dict)
                configmaps = configmaps or isinstance((f or {}).get("configMapRef"), dict)
    return secrets, configmaps, bundles


@implementer(IMutationInterface)
class NodeRestriction:
    """
    @ivar get_pod: C{(name, namespace) -> coroutine of Pod or None}.
    @ivar get_node: C{(name) -> coroutine of Node or None}.
    """

    name = "NodeRestriction"

    def __init__(self, get_pod: Getter, get_node: Getter) -> None:
        self.get_pod = get_pod
        self.get_node = get_node

    def handles(self, operation: str) -> bool:
        return operation in ("CREATE", "UPDATE", "DELETE")

    async def admit(self, a: Any) -> None:
        """@raise StatusError: 403 with upstream's messages (see the module docstring); 404
        when a pod it must look at does not exist."""
        node, is_node = node_identity(a.user)
        if not is_node:
            return
        if not node:
            raise forbidden(a, f'could not determine node from user "{a.user.name}"')
        group, resource = a.resource.group, a.resource.resource
        if group == "" and resource == "pods":
            if a.subresource == "":
                await self._pod(node, a)
            elif a.subresource == "status":
                self._pod_status(node, a)
            elif a.subresource == "eviction":
                await self._pod_eviction(node, a)
            else:
                raise forbidden(a, f'unexpected pod subresource "{a.subresource}", only '
                                   "'status' and 'eviction' are allowed")
        elif group == "" and resource == "nodes":
            self._node(node, a)
        elif group == "" and resource == "persistentvolumeclaims":
            if a.subresource != "status":
                raise forbidden(a, "may only update PVC status")
            self._pvc_status(node, a)
        elif group == "" and resource == "serviceaccounts":
            await self._service_account(node, a)
        elif group == "coordination.k8s.io" and resource == "leases":
            self._lease(node, a)
        elif group == "storage.k8s.io" and resource == "csinodes":
            self._own_object(node, a, "can only access CSINode with the same name as the "
                                      "requesting node")

    async def _existing_pod(self, a: Any, name: str) -> dict:
        pod = await self.get_pod(name, a.namespace)
        if pod is None:
            raise errors.new_not_found("", "pods", name)
        return pod

    async def _pod(self, node: str, a: Any) -> None:
        if a.operation == "CREATE":
            await self._pod_create(node, a)
        elif a.operation == "DELETE":
            pod = await self._existing_pod(a, a.name)
            if (pod.get("spec") or {}).get("nodeName") != node:
                raise forbidden(a, f'node "{node}" can only delete pods with spec.nodeName set '
                                   "to itself")
        else:
            raise forbidden(a, f'unexpected operation "{a.operation}", node "{node}" can only '
                               "create and delete mirror pods")

    async def _pod_create(self, node: str, a: Any) -> None:
        pod = a.object or {}
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        if MIRROR_POD_ANNOTATION not in (meta.get("annotations") or {}):
            raise forbidden(a, f'pod does not have "{MIRROR_POD_ANNOTATION}" annotation, node '
                               f'"{node}" can only create mirror pods')
        if spec.get("nodeName") != node:
            raise forbidden(a, f'node "{node}" can only create pods with spec.nodeName set to '
                               "itself")
        owners = meta.get("ownerReferences") or []
        if len(owners) > 1:
            raise forbidden(a, f'node "{node}" can only create pods with a single owner '
                               "reference set to itself")
        if not owners:
            raise forbidden(a, f'node "{node}" can only create pods with an owner reference set '
                               "to itself")
        owner = owners[0] or {}
        if owner.get("apiVersion") != "v1" or owner.get("kind") != "Node" \
                or owner.get("name") != node:
            raise forbidden(a, f'node "{node}" can only create pods with an owner reference set '
                               "to itself")
        if not owner.get("controller"):
            raise forbidden(a, f'node "{node}" can only create pods with a controller owner '
                               "reference set to itself")
        if owner.get("blockOwnerDeletion"):
            raise forbidden(a, f'node "{node}" must not set blockOwnerDeletion on an owner '
                               "reference")
        node_obj = await self.get_node(node)
        if node_obj is None:
            raise errors.new_not_found("", "nodes", node)
        uid = (node_obj.get("metadata") or {}).get("uid", "")
        if owner.get("uid", "") != uid:
            raise forbidden(a, f"node {node} UID mismatch: expected {owner.get('uid', '')} got "
                               f"{uid}")
        if spec.get("serviceAccountName"):
            raise forbidden(a, f'node "{node}" can not create pods that reference a service '
                               "account")
        secrets, configmaps, bundles = _pod_references(pod)
        if secrets:
            raise forbidden(a, f'node "{node}" can not create pods that reference secrets')
        if configmaps:
            raise forbidden(a, f'node "{node}" can not create pods that reference configmaps')
        if bundles:
            raise forbidden(a, f'node "{node}" can not create pods that use '
                               "clustertrustbundles")
        if any((v or {}).get("persistentVolumeClaim") is not None
               for v in spec.get("volumes") or []):
            raise forbidden(a, f'node "{node}" can not create pods that reference '
                               "persistentvolumeclaims")
        if spec.get("resourceClaims"):
            raise forbidden(a, f'node "{node}" can not create pods that reference '
                               "resourceclaims")

    def _pod_status(self, node: str, a: Any) -> None:
        if a.operation != "UPDATE":
            raise forbidden(a, f'unexpected operation "{a.operation}"')
        old = a.old_object or {}
        if (old.get("spec") or {}).get("nodeName") != node:
            raise forbidden(a, f'node "{node}" can only update pod status for pods with '
                               "spec.nodeName set to itself")
        if _labels(old) != _labels(a.object):
            raise forbidden(a, f'node "{node}" cannot update labels through pod status')
        claims = ((a.object or {}).get("status") or {}).get("resourceClaimStatuses") or []
        if claims != ((old.get("status") or {}).get("resourceClaimStatuses") or []):
            raise forbidden(a, f'node "{node}" cannot update resource claim statues')

    async def _pod_eviction(self, node: str, a: Any) -> None:
        if a.operation != "CREATE":
            raise forbidden(a, f"unexpected operation {a.operation}")
        name = a.name or ((a.object or {}).get("metadata") or {}).get("name", "")
        if not name:
            raise errors.new_bad_request("could not determine pod from request data")
        pod = await self._existing_pod(a, name)
        if (pod.get("spec") or {}).get("nodeName") != node:
            raise forbidden(a, f"node {node} can only evict pods with spec.nodeName set to "
                               "itself")

    def _node(self, node: str, a: Any) -> None:
        if a.name != node:
            raise forbidden(a, f'node "{node}" is not allowed to modify node "{a.name}"')
        new = a.object or {}
        if a.operation == "CREATE":
            if (new.get("spec") or {}).get("configSource") is not None:
                raise forbidden(a, f'node "{node}" is not allowed to create pods with a non-nil '
                                   "configSource")
            bad = forbidden_labels(_labels(new), {})
            if bad:
                raise forbidden(a, f'node "{node}" is not allowed to set the following labels: '
                                   + ", ".join(bad))
        if a.operation == "UPDATE":
            old = a.old_object or {}
            nspec, ospec = new.get("spec") or {}, old.get("spec") or {}
            if nspec.get("configSource") is not None \
                    and nspec.get("configSource") != ospec.get("configSource"):
                raise forbidden(a, f'node "{node}" is not allowed to update configSource to a '
                                   "new non-nil configSource")
            if (nspec.get("taints") or []) != (ospec.get("taints") or []):
                raise forbidden(a, f'node "{node}" is not allowed to modify taints')
            bad = forbidden_labels(_labels(new), _labels(old))
            if bad:
                raise forbidden(a, "is not allowed to modify labels: " + ", ".join(bad))

    def _pvc_status(self, node: str, a: Any) -> None:
        if a.operation != "UPDATE":
            raise forbidden(a, f'unexpected operation "{a.operation}"')
        old, new = copy.deepcopy(a.old_object or {}), copy.deepcopy(a.object or {})
        for obj in (old, new):
            meta = obj.setdefault("metadata", {})
            meta.pop("resourceVersion", None)
            meta.pop("managedFields", None)
            status = obj.setdefault("status", {})
            for key in ("capacity", "conditions", "allocatedResourceStatuses",
                        "allocatedResources"):
                status.pop(key, None)
            if not status:
                obj.pop("status")
        if old != new:
            raise forbidden(a, f'node "{node}" is not allowed to update fields other than '
                               f"status.capacity and status.conditions: {_pvc_diff(old, new)}")

    async def _service_account(self, node: str, a: Any) -> None:
        if a.operation != "CREATE" or a.subresource != "token":
            return
        ref = ((a.object or {}).get("spec") or {}).get("boundObjectRef")
        if not isinstance(ref, dict) or ref.get("apiVersion") != "v1" \
                or ref.get("kind") != "Pod" or not ref.get("name"):
            raise forbidden(a, "node requested token not bound to a pod")
        if not ref.get("uid"):
            raise forbidden(a, "node requested token with a pod binding without a uid")
        pod = await self._existing_pod(a, ref["name"])
        if ref["uid"] != (pod.get("metadata") or {}).get("uid"):
            raise forbidden(a, f"the UID in the bound object reference ({ref['uid']}) does not "
                               "match the UID in record. The object might have been deleted "
                               "and then recreated")
        if (pod.get("spec") or {}).get("nodeName") != node:
            raise forbidden(a, "node requested token bound to a pod scheduled on a different "
                               "node")

    def _lease(self, node: str, a: Any) -> None:
        if a.namespace != NODE_LEASE_NAMESPACE:
            raise forbidden(a, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system '
                               "namespace")
        self._own_object(node, a, "can only access node lease with the same name as the "
                                  "requesting node")

    @staticmethod
    def _own_object(node: str, a: Any, message: str) -> None:
        if a.operation == "CREATE":
            name = ((a.object or {}).get("metadata") or {}).get("name", "")
        else:
            name = a.name
        if name != node:
            raise forbidden(a, message)


def _pvc_diff(old: dict, new: dict) -> str:
    """go-cmp's C{cmp.Diff} of the two claims (as upstream prints the pointers)."""
    try:
        from kubetwist.runtime import govalues

        t = govalues.internal_type("io.k8s.api.core.v1.PersistentVolumeClaim")
        text = govalues.cmp_diff(t, govalues.from_json(t, old), govalues.from_json(t, new))
    except Exception:  # noqa: BLE001 - the diff is informative only
        return ""
    return text.replace("core.PersistentVolumeClaim{", "&core.PersistentVolumeClaim{", 1)
