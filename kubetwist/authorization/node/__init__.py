# -*- test-case-name: tests.authorization.test_node -*-
"""
The C{Node} authorization mode: upstream C{plugin/pkg/auth/authorizer/node}
(C{node_authorizer.go}) of v1.32, with C{AuthorizeNodeWithSelectors} on (its v1.32 default).

Requests of a node (user C{system:node:<name>} in group C{system:nodes}, upstream
C{nodeidentifier}) for secrets, configmaps, persistent volume claims and volumes, resource
claims, volume attachments and service account tokens are allowed only when the graph
(L{kubetwist.authorization.node.graph}) links the object to that node through a pod bound to
it; leases and CSINodes only under the node's own name, Node objects only its own for reads,
pods through the graph or a C{spec.nodeName=<node>} field selector.  Anything else a node asks
is checked against upstream's static node rules (C{bootstrappolicy.NodeRules}).  Every refusal
is a no opinion with upstream's reason (C{no relationship found between node 'n1' and this
object}), so a later authorizer (RBAC) may still allow; requests of other users get a no
opinion without reason.
"""

from __future__ import annotations

from typing import Any, Optional

from twisted.internet import defer
from zope.interface import implementer

from kubetwist.authorization.authorizer import (
    ALLOW,
    NO_OPINION,
    Attributes,
    IAuthorizer,
    IRuleResolver,
)
from kubetwist.authorization.node import graph as g

__all__ = ["NodeAuthorizer", "NODE_RULES", "node_identity", "rules_allow"]

NODE_USER_PREFIX = "system:node:"
NODES_GROUP = "system:nodes"
#: Upstream C{api.NamespaceNodeLease}.
NODE_LEASE_NAMESPACE = "kube-node-lease"


def _rule(verbs: str, group: str, resources: str) -> dict:
    return {"verbs": verbs.split(), "apiGroups": [group], "resources": resources.split()}


#: Upstream C{bootstrappolicy.NodeRules()} of v1.32 (the C{system:node} ClusterRole's rules).
NODE_RULES = [
    _rule("create", "authentication.k8s.io", "tokenreviews"),
    _rule("create", "authorization.k8s.io", "localsubjectaccessreviews subjectaccessreviews"),
    _rule("get list watch", "", "services"),
    _rule("create get list watch", "", "nodes"),
    _rule("patch update", "", "nodes/status"),
    _rule("patch update", "", "nodes"),
    _rule("create patch update", "", "events"),
    _rule("get list watch", "", "pods"),
    _rule("create delete", "", "pods"),
    _rule("patch update", "", "pods/status"),
    _rule("create", "", "pods/eviction"),
    _rule("get list watch", "", "configmaps secrets"),
    _rule("get", "", "persistentvolumeclaims persistentvolumes"),
    _rule("get", "", "endpoints"),
    _rule("create get list watch", "certificates.k8s.io", "certificatesigningrequests"),
    _rule("create delete get patch update", "coordination.k8s.io", "leases"),
    _rule("get", "storage.k8s.io", "volumeattachments"),
    _rule("create", "", "serviceaccounts/token"),
    _rule("get patch update", "", "persistentvolumeclaims/status"),
    _rule("get list watch", "storage.k8s.io", "csidrivers"),
    _rule("create delete get patch update", "storage.k8s.io", "csinodes"),
    _rule("get list watch", "node.k8s.io", "runtimeclasses"),
]


def node_identity(user: Any) -> tuple[str, bool]:
    """
    Upstream C{nodeidentifier.NodeIdentity}: C{(node name, is a node)}; a user named
    C{system:node:<name>} in group C{system:nodes}.
    """
    if user is None:
        return "", False
    name = getattr(user, "name", "") or ""
    if not name.startswith(NODE_USER_PREFIX):
        return "", False
    if NODES_GROUP not in (getattr(user, "groups", None) or []):
        return "", False
    return name[len(NODE_USER_PREFIX):], True


def _resource_matches(rule: dict, resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for r in rule.get("resources") or []:
        if r == "*" or r == combined:
            return True
        if subresource and r == "*/" + subresource:
            return True
    return False


def rules_allow(a: Attributes, rules: list[dict]) -> bool:
    """Upstream C{rbac.RulesAllow} (C{RuleAllows} for each rule)."""
    for rule in rules:
        verbs = rule.get("verbs") or []
        if "*" not in verbs and a.verb not in verbs:
            continue
        if a.resource_request:
            groups = rule.get("apiGroups") or []
            if "*" not in groups and a.api_group not in groups:
                continue
            if not _resource_matches(rule, a.resource, a.subresource):
                continue
            names = rule.get("resourceNames") or []
            if names and a.name not in names:
                continue
            return True
        for url in rule.get("nonResourceURLs") or []:
            if url == "*" or url == a.path or (url.endswith("*")
                                               and a.path.startswith(url[:-1])):
                return True
    return False


def _field_requirements(raw: str) -> list[tuple[str, str, str]]:
    out = []
    for part in (raw or "").split(","):
        for op in ("!=", "==", "="):
            key, sep, value = part.partition(op)
            if sep:
                out.append((key.strip(), "!=" if op == "!=" else "=", value.strip()))
                break
    return out


@implementer(IAuthorizer, IRuleResolver)
class NodeAuthorizer:
    """
    Upstream C{NodeAuthorizer} (see the module docstring).

    @param graph: the L{Graph <kubetwist.authorization.node.graph.Graph>} (kept by a
        L{GraphPopulator <kubetwist.authorization.node.graph.GraphPopulator>}).
    @param rules: the static node rules (L{NODE_RULES}).
    """

    def __init__(self, graph: Optional[g.Graph] = None, rules: Optional[list] = None) -> None:
        self.graph = graph if graph is not None else g.Graph()
        self.rules = NODE_RULES if rules is None else rules
        self.populator: Any = None

    def rules_for(self, user: Any, namespace: str) -> tuple[list, list, bool, str]:
        """Upstream C{RulesFor}: nodes' rules are not listed (incomplete, with an error)."""
        if node_identity(user)[1]:
            return [], [], True, "node authorizer does not support user rule resolution"
        return [], [], False, ""

    def authorize(self, attributes: Attributes) -> "defer.Deferred[tuple[str, str]]":
        """@return: a fired Deferred of C{(decision, reason)}."""
        return defer.succeed(self.decide(attributes))

    def decide(self, a: Attributes) -> tuple[str, str]:
        """The decision, synchronously (the graph is in memory)."""
        node, is_node = node_identity(a.user)
        if not is_node:
            return NO_OPINION, ""
        if not node:
            return NO_OPINION, f'unknown node for user "{a.user.name}"'
        if a.resource_request:
            key = (a.api_group, a.resource)
            if key == ("", "secrets"):
                return self._read_namespaced(node, g.SECRET, a)
            if key == ("", "configmaps"):
                return self._read_namespaced(node, g.CONFIGMAP, a)
            if key == ("", "persistentvolumeclaims"):
                if a.subresource == "status":
                    return self._status_update(node, g.PVC, a)
                return self._get(node, g.PVC, a)
            if key == ("", "persistentvolumes"):
                return self._get(node, g.PV, a)
            if key == ("resource.k8s.io", "resourceclaims"):
                return self._get(node, g.RESOURCECLAIM, a)
            if key == ("storage.k8s.io", "volumeattachments"):
                return self._get(node, g.VOLUMEATTACHMENT, a)
            if key == ("", "serviceaccounts"):
                return self._create_token(node, a)
            if key == ("coordination.k8s.io", "leases"):
                return self._lease(node, a)
            if key == ("storage.k8s.io", "csinodes"):
                return self._csinode(node, a)
            if key == ("", "nodes"):
                return self._node(node, a)
            if key == ("", "pods"):
                return self._pod(node, a)
        if rules_allow(a, self.rules):
            return ALLOW, ""
        return NO_OPINION, ""

    # upstream's authorize* helpers, same order of checks and reasons

    def _status_update(self, node: str, kind: str, a: Attributes) -> tuple[str, str]:
        if a.verb not in ("update", "patch"):
            return NO_OPINION, "can only get/update/patch this type"
        if a.subresource != "status":
            return NO_OPINION, "can only update status subresource"
        return self._authorize(node, kind, a)

    def _get(self, node: str, kind: str, a: Attributes) -> tuple[str, str]:
        if a.verb != "get":
            return NO_OPINION, "can only get individual resources of this type"
        if a.subresource:
            return NO_OPINION, "cannot get subresource"
        return self._authorize(node, kind, a)

    def _read_namespaced(self, node: str, kind: str, a: Attributes) -> tuple[str, str]:
        if a.verb not in ("get", "list", "watch"):
            return NO_OPINION, "can only read resources of this type"
        if a.subresource:
            return NO_OPINION, "cannot read subresource"
        if not a.namespace:
            return NO_OPINION, "can only read namespaced object of this type"
        return self._authorize(node, kind, a)

    def _authorize(self, node: str, kind: str, a: Attributes) -> tuple[str, str]:
        if not a.name:
            return NO_OPINION, "No Object name found"
        if self._has_path(node, kind, a.namespace, a.name):
            return ALLOW, ""
        return NO_OPINION, f"no relationship found between node '{node}' and this object"

    def _has_path(self, node: str, kind: str, namespace: str, name: str) -> bool:
        ns = namespace if kind not in (g.PV, g.VOLUMEATTACHMENT) else ""
        return self.graph.has_path((kind, ns, name), (g.NODE, "", node))

    def _create_token(self, node: str, a: Attributes) -> tuple[str, str]:
        if a.verb != "create" or not a.name:
            return NO_OPINION, "can only create tokens for individual service accounts"
        if a.subresource != "token":
            return NO_OPINION, "can only create token subresource of serviceaccount"
        if self._has_path(node, g.SERVICEACCOUNT, a.namespace, a.name):
            return ALLOW, ""
        return NO_OPINION, f"no relationship found between node '{node}' and this object"

    def _lease(self, node: str, a: Attributes) -> tuple[str, str]:
        if a.verb not in ("get", "create", "update", "patch", "delete"):
            return NO_OPINION, "can only get, create, update, patch, or delete a node lease"
        if a.namespace != NODE_LEASE_NAMESPACE:
            return NO_OPINION, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" ' \
                               "system namespace"
        if a.verb != "create" and a.name != node:
            return NO_OPINION, "can only access node lease with the same name as the " \
                               "requesting node"
        return ALLOW, ""

    def _csinode(self, node: str, a: Attributes) -> tuple[str, str]:
        if a.verb not in ("get", "create", "update", "patch", "delete"):
            return NO_OPINION, "can only get, create, update, patch, or delete a CSINode"
        if a.subresource:
            return NO_OPINION, "cannot authorize CSINode subresources"
        if a.verb != "create" and a.name != node:
            return NO_OPINION, "can only access CSINode with the same name as the requesting " \
                               "node"
        return ALLOW, ""

    def _node(self, node: str, a: Attributes) -> tuple[str, str]:
        if not a.subresource:
            if a.verb in ("create", "update", "patch"):
                return ALLOW, ""
            if a.verb in ("get", "list", "watch"):
                if a.name == node:
                    return ALLOW, ""
                if not a.name:
                    return NO_OPINION, f"node '{node}' cannot read all nodes, only its own " \
                                       "Node object"
                return NO_OPINION, f"node '{node}' cannot read '{a.name}', only its own Node " \
                                   "object"
        elif a.subresource == "status" and a.verb in ("update", "patch"):
            return ALLOW, ""
        return NO_OPINION, ""

    def _pod(self, node: str, a: Attributes) -> tuple[str, str]:
        if not a.subresource:
            if a.verb == "get":
                return self._get(node, g.POD, a)
            if a.verb in ("list", "watch"):
                for key, op, value in _field_requirements(a.field_selector):
                    if key == "spec.nodeName" and op == "=" and value == node:
                        return ALLOW, ""
                if a.name:
                    return self._authorize(node, g.POD, a)
                return NO_OPINION, "can only list/watch pods with spec.nodeName field selector"
            if a.verb in ("create", "delete"):
                return ALLOW, ""
        elif a.subresource == "status":
            if a.verb in ("update", "patch"):
                return ALLOW, ""
        elif a.subresource == "eviction":
            if a.verb == "create":
                return ALLOW, ""
        return NO_OPINION, ""


def _factory(config: Any) -> NodeAuthorizer:
    """
    The C{Node} mode: a L{NodeAuthorizer} whose graph is kept from C{config.storage}'s
    watches, started when the reactor runs (upstream starts its informers with the server).
    """
    authorizer = NodeAuthorizer()
    storage = getattr(config, "storage", None)
    reactor = getattr(config, "reactor", None)
    if storage is not None and reactor is not None:
        authorizer.populator = g.GraphPopulator(authorizer.graph, storage, reactor)
        if hasattr(reactor, "callWhenRunning"):
            reactor.callWhenRunning(authorizer.populator.start)
        else:  # a test clock
            authorizer.populator.start()
    return authorizer
