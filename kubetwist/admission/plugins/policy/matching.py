# -*- test-case-name: tests.admission.test_policy -*-
"""
Request matching of policies and bindings: upstream
C{k8s.io/apiserver/pkg/admission/plugin/policy/matching} (C{Matches},
C{matchesResourceRules}) over C{k8s.io/apiserver/pkg/admission/plugin/webhook/predicates}
(C{rules.Matcher}, the namespace and object selector matchers).

C{matchPolicy: Equivalent} matches a request on another version of the same group and
resource when the rule names that version and kubetwist serves it (C{equivalents}); the
object is not converted (kubetwist keeps one wire form per resource).
"""

from __future__ import annotations

from typing import Awaitable, Callable, Iterable, Optional

from kubetwist.admission.interfaces import Attributes, GroupVersionKind, GroupVersionResource
from kubetwist.apimachinery.selectors import label_selector_from_dict
from kubetwist.runtime import errors

__all__ = ["Match", "matches"]

#: C{(group, resource) -> [(version, kind)]}: the served versions of a resource.
Equivalents = Callable[[str, str], Iterable[tuple[str, str]]]


class Match:
    """A match: the resource and kind the rule named (upstream's C{matchResource},
    C{matchKind}, which differ from the request's under C{Equivalent})."""

    def __init__(self, resource: GroupVersionResource, kind: GroupVersionKind) -> None:
        self.resource = resource
        self.kind = kind


def _split(res: str) -> tuple[str, str]:
    name, _, sub = res.partition("/")
    return name, sub


def rule_matches(rule: dict, a: Attributes, resource: GroupVersionResource) -> bool:
    """
    Upstream C{rules.Matcher.Matches}: scope, operations, apiGroups, apiVersions and
    resources (C{*}, C{*/*}, C{pods/*}, C{*/status}) of one C{RuleWithOperations}.
    """
    scope = rule.get("scope") or "*"
    is_namespace = resource.group == "" and resource.resource == "namespaces"
    if scope == "Namespaced" and (is_namespace or not a.namespace):
        return False
    if scope == "Cluster" and not (is_namespace or not a.namespace):
        return False
    ops = rule.get("operations") or []
    if "*" not in ops and a.operation not in ops:
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and resource.group not in groups:
        return False
    versions = rule.get("apiVersions") or []
    if "*" not in versions and resource.version not in versions:
        return False
    for res in rule.get("resources") or []:
        name, sub = _split(res)
        if (name == "*" or name == resource.resource) and (sub == "*" or sub == a.subresource):
            return True
    return False


def _rules_match(rules: list, a: Attributes, resource: GroupVersionResource) -> bool:
    for rule in rules or []:
        if not rule_matches(rule, a, resource):
            continue
        names = rule.get("resourceNames") or []
        if not names:
            return True
        name = a.name or ((a.object or {}).get("metadata") or {}).get("name") or ""
        if name in names:
            return True
    return False


def matches_resource_rules(rules: list, match_policy: str, a: Attributes,
                           equivalents: Optional[Equivalents]) -> Optional[Match]:
    """Upstream C{matchesResourceRules}: the match, or C{None}."""
    if _rules_match(rules, a, a.resource):
        return Match(a.resource, a.kind)
    if match_policy == "Exact" or equivalents is None:
        return None
    for version, kind in equivalents(a.resource.group, a.resource.resource):
        if version == a.resource.version:
            continue
        gvr = GroupVersionResource(a.resource.group, version, a.resource.resource)
        if _rules_match(rules, a, gvr):
            return Match(gvr, GroupVersionKind(a.kind.group, version, kind))
    return None


def _labels(obj: Optional[dict]) -> Optional[dict]:
    if obj is None:
        return None
    return (obj.get("metadata") or {}).get("labels") or {}


async def _namespace_matches(selector: Optional[dict], a: Attributes,
                             get_namespace: Callable[[str], Awaitable[Optional[dict]]]) -> bool:
    """Upstream C{namespace.Matcher.MatchNamespaceSelector}."""
    is_namespace = a.resource.group == "" and a.resource.resource == "namespaces"
    if not a.namespace and not is_namespace:
        return True
    parsed = label_selector_from_dict(selector if selector is not None else {})
    if parsed.empty():
        return True
    if is_namespace and a.operation in ("CREATE", "UPDATE") and a.object is not None:
        labels = _labels(a.object)
    elif is_namespace and a.operation == "DELETE" and a.old_object is not None:
        labels = _labels(a.old_object)
    else:
        ns = await get_namespace(a.namespace or a.name)
        if ns is None:
            raise errors.new_not_found("", "namespaces", a.namespace or a.name)
        labels = _labels(ns)
    return parsed.matches(labels or {})


def _object_matches(selector: Optional[dict], a: Attributes) -> bool:
    """Upstream C{object.Matcher.MatchObjectSelector}: the new or the old object."""
    parsed = label_selector_from_dict(selector if selector is not None else {})
    if parsed.empty():
        return True
    return any(o is not None and parsed.matches(_labels(o))
               for o in (a.object, a.old_object))


async def matches(match_resources: Optional[dict], a: Attributes,
                  get_namespace: Callable[[str], Awaitable[Optional[dict]]],
                  equivalents: Optional[Equivalents] = None,
                  is_binding: bool = False) -> Optional[Match]:
    """
    Upstream C{Matcher.Matches} (and C{BindingMatches}: a binding without
    C{matchResources} matches everything; empty C{resourceRules} match every resource).

    @return: the L{Match}, or C{None}.
    @raise StatusError: 404 NotFound for a namespace that does not exist (a selector to
        check), as upstream.
    """
    if match_resources is None:
        return Match(a.resource, a.kind) if is_binding else None
    ns_error = None
    try:
        if not await _namespace_matches(match_resources.get("namespaceSelector"), a,
                                        get_namespace):
            return None
    except errors.StatusError as e:
        ns_error = e
    if not _object_matches(match_resources.get("objectSelector"), a):
        return None
    policy = match_resources.get("matchPolicy") or "Equivalent"
    if matches_resource_rules(match_resources.get("excludeResourceRules") or [], policy, a,
                              equivalents):
        return None
    rules = match_resources.get("resourceRules")
    if not rules:
        found: Optional[Match] = Match(a.resource, a.kind)
    else:
        found = matches_resource_rules(rules or [], policy, a, equivalents)
    if found is None:
        return None
    if ns_error is not None:
        raise ns_error
    return found
