# -*- test-case-name: tests.flowcontrol.test_rules -*-
"""
Whether a request matches a FlowSchema: upstream
C{k8s.io/apiserver/pkg/util/flowcontrol/rule.go}.

A FlowSchema matches when one of its C{rules} matches: one of the rule's C{subjects} names the
user (C{User} by name or C{*}, C{Group} by one of the user's groups or C{*}, C{ServiceAccount}
by namespace and name or C{*}), and, for a resource request, one of its C{resourceRules}
(verbs, apiGroups, resources with C{resource/subresource}, then C{clusterScope} for a request
without a namespace or C{namespaces} otherwise), for any other request one of its
C{nonResourceRules} (verbs, and C{nonResourceURLs}: C{*}, the exact path, or a prefix written
C{/prefix/*}).  The wildcards count only as a list's single member, as upstream's
C{containsString} assumes (validation enforces it).
"""

from __future__ import annotations

from typing import Any

__all__ = ["FlowSchemaMatcher", "matches_flow_schema"]

_SA_PREFIX = "system:serviceaccount:"


def _members(values: Any, wildcard: str) -> frozenset | None:
    """A rule list for L{_contains}-style lookups: C{None} for the lone wildcard."""
    values = list(values or [])
    if len(values) == 1 and values[0] == wildcard:
        return None
    return frozenset(values)


class FlowSchemaMatcher:
    """
    One FlowSchema's rules, compiled once (at configuration time) into set lookups; matches
    exactly as L{matches_flow_schema}.
    """

    def __init__(self, flow_schema: dict) -> None:
        self.rules = []
        for rule in (flow_schema.get("spec") or {}).get("rules") or []:
            users, groups, sas, sa_namespaces = set(), set(), set(), []
            for subject in rule.get("subjects") or []:
                kind = subject.get("kind")
                if kind == "User" and subject.get("user") is not None:
                    users.add(subject["user"].get("name"))
                elif kind == "Group" and subject.get("group") is not None:
                    groups.add(subject["group"].get("name"))
                elif kind == "ServiceAccount" and subject.get("serviceAccount") is not None:
                    sa = subject["serviceAccount"]
                    namespace, name = sa.get("namespace") or "", sa.get("name") or ""
                    if name == "*":
                        sa_namespaces.append(namespace)
                    else:
                        sas.add(f"{_SA_PREFIX}{namespace}:{name}")
            resource_rules = [
                (_members(r.get("verbs"), "*"), _members(r.get("apiGroups"), "*"),
                 _members(r.get("resources"), "*"), bool(r.get("clusterScope")),
                 _members(r.get("namespaces"), "*"))
                for r in rule.get("resourceRules") or []]
            non_resource_rules = [(_members(r.get("verbs"), "*"), r.get("nonResourceURLs") or [])
                                  for r in rule.get("nonResourceRules") or []]
            self.rules.append((users, "*" in users, groups, "*" in groups, sas, sa_namespaces,
                               resource_rules, non_resource_rules))

    def matches(self, info: Any, user: Any) -> bool:
        """Upstream C{matchesFlowSchema}."""
        for (users, any_user, groups, any_group, sas, sa_namespaces, resource_rules,
             non_resource_rules) in self.rules:
            name = user.name
            if not (any_user or name in users or any_group
                    or (groups and not groups.isdisjoint(user.groups)) or name in sas
                    or (sa_namespaces
                        and any(_sa_in_namespace(ns, name) for ns in sa_namespaces))):
                continue
            if info.is_resource_request:
                resource = info.resource
                if info.subresource:
                    resource = f"{resource}/{info.subresource}"
                for verbs, api_groups, resources, cluster_scope, namespaces in resource_rules:
                    if verbs is not None and info.verb not in verbs:
                        continue
                    if resources is not None and resource not in resources:
                        continue
                    if api_groups is not None and info.api_group not in api_groups:
                        continue
                    if not info.namespace:
                        if cluster_scope:
                            return True
                        continue
                    if namespaces is None or info.namespace in namespaces:
                        return True
            else:
                for verbs, urls in non_resource_rules:
                    if (verbs is None or info.verb in verbs) and _matches_url(urls, info.path):
                        return True
        return False


def matches_flow_schema(flow_schema: dict, info: Any, user: Any) -> bool:
    """
    Upstream C{matchesFlowSchema} (uncompiled: the reference L{FlowSchemaMatcher} keeps to).

    @param flow_schema: a FlowSchema (v1 wire dict).
    @param info: the request's L{RequestInfo <kubetwist.endpoints.requestinfo.RequestInfo>}.
    @param user: the request's L{UserInfo <kubetwist.authentication.user.UserInfo>}.
    """
    for rule in (flow_schema.get("spec") or {}).get("rules") or []:
        if _matches_policy_rule(rule, info, user):
            return True
    return False


def _matches_policy_rule(rule: dict, info: Any, user: Any) -> bool:
    if not any(_matches_subject(s, user) for s in rule.get("subjects") or []):
        return False
    if info.is_resource_request:
        return any(_matches_resource_rule(r, info) for r in rule.get("resourceRules") or [])
    return any(_matches_non_resource_rule(r, info) for r in rule.get("nonResourceRules") or [])


def _matches_subject(subject: dict, user: Any) -> bool:
    kind = subject.get("kind")
    if kind == "User":
        u = subject.get("user")
        return u is not None and u.get("name") in ("*", user.name)
    if kind == "Group":
        g = subject.get("group")
        if g is None:
            return False
        return g.get("name") == "*" or g.get("name") in user.groups
    if kind == "ServiceAccount":
        sa = subject.get("serviceAccount")
        if sa is None:
            return False
        namespace, name = sa.get("namespace") or "", sa.get("name") or ""
        if name == "*":
            return _sa_in_namespace(namespace, user.name)
        return user.name == f"{_SA_PREFIX}{namespace}:{name}"
    return False


def _sa_in_namespace(namespace: str, username: str) -> bool:
    """Upstream C{serviceAccountMatchesNamespace} (prefix checks, as upstream)."""
    if not username.startswith(_SA_PREFIX):
        return False
    rest = username[len(_SA_PREFIX):]
    if not rest.startswith(namespace):
        return False
    return rest[len(namespace):].startswith(":")


def _contains(x: str, values: list, wildcard: str) -> bool:
    """Upstream C{containsString}."""
    if len(values) == 1 and values[0] == wildcard:
        return True
    return x in values


def _matches_resource_rule(rule: dict, info: Any) -> bool:
    if not _contains(info.verb, rule.get("verbs") or [], "*"):
        return False
    resource = info.resource
    if info.subresource:
        resource = f"{resource}/{info.subresource}"
    if not _contains(resource, rule.get("resources") or [], "*"):
        return False
    if not _contains(info.api_group, rule.get("apiGroups") or [], "*"):
        return False
    if not info.namespace:
        return bool(rule.get("clusterScope"))
    return _contains(info.namespace, rule.get("namespaces") or [], "*")


def _matches_non_resource_rule(rule: dict, info: Any) -> bool:
    if not _contains(info.verb, rule.get("verbs") or [], "*"):
        return False
    return _matches_url(rule.get("nonResourceURLs") or [], info.path)


def _matches_url(urls: list, path: str) -> bool:
    """Upstream C{matchPolicyRuleNonResourceURL}."""
    for url in urls:
        if url == "*" or url == path:
            return True
        prefix = url[:-1] if url.endswith("*") else url
        if not prefix.endswith("/"):
            prefix += "/"
        if path.startswith(prefix):
            return True
    return False
