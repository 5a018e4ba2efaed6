# -*- test-case-name: tests.authorization.test_rbac -*-
"""
Policy rules: matching a request against a C{PolicyRule} and comparing rule sets, as upstream
C{pkg/apis/rbac/v1/evaluation_helpers.go} (C{VerbMatches}, C{APIGroupMatches},
C{ResourceMatches}, C{ResourceNameMatches}, C{NonResourceURLMatches}, C{CompactString}),
C{plugin/pkg/auth/authorizer/rbac} (C{RuleAllows}), C{k8s.io/component-helpers/auth/rbac/
validation} (C{Covers}, C{BreakdownRule}) and C{pkg/registry/rbac/validation/policy_compact.go}
(C{CompactRules}).

A rule is its wire form, a dict C{{"verbs": [...], "apiGroups": [...], "resources": [...],
"resourceNames": [...], "nonResourceURLs": [...]}} (absent keys are empty lists).  The
authorizer matches L{CompiledRule}s, the same rule with its lists turned into sets once.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from kubetwist.runtime import gofmt

__all__ = [
    "CompiledRule", "breakdown_rule", "compact_rules", "compact_string", "covers",
    "rule_allows",
]

_ALL = "*"


def _list(rule: dict, key: str) -> list[str]:
    value = rule.get(key)
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


class CompiledRule:
    """
    One C{PolicyRule} ready for matching (upstream C{RuleAllows} over it).

    @ivar rule: the wire form it was made from (not copied; never mutated).
    """

    __slots__ = ("rule", "verbs", "all_verbs", "groups", "all_groups", "resources",
                 "all_resources", "star_subresources", "names", "urls", "url_prefixes",
                 "all_urls")

    def __init__(self, rule: dict) -> None:
        self.rule = rule
        verbs = _list(rule, "verbs")
        self.verbs = frozenset(verbs)
        self.all_verbs = _ALL in self.verbs
        self.groups = frozenset(_list(rule, "apiGroups"))
        self.all_groups = _ALL in self.groups
        resources = _list(rule, "resources")
        self.resources = frozenset(resources)
        self.all_resources = _ALL in self.resources
        # "*/scale" matches any resource's "scale" subresource
        self.star_subresources = frozenset(r[2:] for r in resources if r.startswith("*/"))
        names = _list(rule, "resourceNames")
        self.names: Optional[frozenset] = frozenset(names) if names else None
        urls = _list(rule, "nonResourceURLs")
        self.all_urls = _ALL in urls
        self.urls = frozenset(urls)
        self.url_prefixes = tuple(u.rstrip("*") for u in urls if u.endswith("*"))

    def allows(self, attributes: Any) -> bool:
        """Upstream C{RuleAllows}: whether this rule permits C{attributes} (an
        L{Attributes <kubetwist.authorization.authorizer.Attributes>})."""
        if not (self.all_verbs or attributes.verb in self.verbs):
            return False
        if attributes.resource_request:
            if not (self.all_groups or attributes.api_group in self.groups):
                return False
            sub = attributes.subresource
            if not self.all_resources:
                combined = f"{attributes.resource}/{sub}" if sub else attributes.resource
                if combined not in self.resources and not (sub and sub in
                                                           self.star_subresources):
                    return False
            return self.names is None or attributes.name in self.names
        if self.all_urls:
            return True
        path = attributes.path
        if path in self.urls:
            return True
        return any(path.startswith(p) for p in self.url_prefixes)


def rule_allows(attributes: Any, rule: dict) -> bool:
    """Upstream C{RuleAllows} for one wire-form rule."""
    return CompiledRule(rule).allows(attributes)


def compact_string(rule: dict) -> str:
    """
    Upstream C{CompactString}: C{{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}}
    (only the non-empty fields, Go's C{%q} of each list).
    """
    parts = []
    for key, label in (("apiGroups", "APIGroups"), ("resources", "Resources"),
                       ("nonResourceURLs", "NonResourceURLs"),
                       ("resourceNames", "ResourceNames"), ("verbs", "Verbs")):
        values = _list(rule, key)
        if values:
            parts.append(f"{label}:[{' '.join(gofmt.quote(v) for v in values)}]")
    return "{" + ", ".join(parts) + "}"


def breakdown_rule(rule: dict) -> list[dict]:
    """Upstream C{BreakdownRule}: the rule as rules of one group, resource, verb and name
    each (non-resource URLs: one URL and verb each)."""
    out: list[dict] = []
    verbs = _list(rule, "verbs")
    names = _list(rule, "resourceNames")
    for group in _list(rule, "apiGroups"):
        for resource in _list(rule, "resources"):
            for verb in verbs:
                if names:
                    for name in names:
                        out.append({"apiGroups": [group], "resources": [resource],
                                    "verbs": [verb], "resourceNames": [name]})
                else:
                    out.append({"apiGroups": [group], "resources": [resource],
                                "verbs": [verb]})
    for url in _list(rule, "nonResourceURLs"):
        for verb in verbs:
            out.append({"nonResourceURLs": [url], "verbs": [verb]})
    return out


def _resource_covers_all(owner: list[str], covered: list[str]) -> bool:
    owned = set(owner)
    if _ALL in owned or owned.issuperset(covered):
        return True
    for path in covered:
        if path in owned:
            continue
        if "/" not in path:
            return False
        if "*/" + path.split("/", 1)[1] not in owned:
            return False
    return True


def _url_covers(owner: str, sub: str) -> bool:
    return owner == sub or (owner.endswith("*") and sub.startswith(owner.rstrip("*")))


def _rule_covers(owner: dict, sub: dict) -> bool:
    """Upstream C{ruleCovers}: C{owner} (any rule) covers C{sub} (a broken-down rule)."""
    owner_verbs = set(_list(owner, "verbs"))
    if not (_ALL in owner_verbs or owner_verbs.issuperset(_list(sub, "verbs"))):
        return False
    owner_groups = set(_list(owner, "apiGroups"))
    if not (_ALL in owner_groups or owner_groups.issuperset(_list(sub, "apiGroups"))):
        return False
    if not _resource_covers_all(_list(owner, "resources"), _list(sub, "resources")):
        return False
    owner_urls = _list(owner, "nonResourceURLs")
    for path in _list(sub, "nonResourceURLs"):
        if not any(_url_covers(o, path) for o in owner_urls):
            return False
    owner_names = _list(owner, "resourceNames")
    sub_names = _list(sub, "resourceNames")
    if not sub_names:
        return not owner_names
    return not owner_names or set(owner_names).issuperset(sub_names)


def covers(owner_rules: Iterable[dict], servant_rules: Iterable[dict]) -> tuple[bool, list[dict]]:
    """
    Upstream C{validation.Covers}: whether C{owner_rules} permit everything C{servant_rules}
    do, and the broken-down servant rules they do not cover (in order).
    """
    owners = list(owner_rules)
    uncovered = []
    for servant in servant_rules:
        for sub in breakdown_rule(servant):
            if not any(_rule_covers(o, sub) for o in owners):
                uncovered.append(sub)
    return not uncovered, uncovered


def _simple_key(rule: dict) -> Optional[tuple]:
    """Upstream C{isSimpleResourceRule}: one group, one resource, at most one name, verbs,
    and nothing else."""
    names = _list(rule, "resourceNames")
    if len(names) > 1 or _list(rule, "nonResourceURLs"):
        return None
    groups, resources = _list(rule, "apiGroups"), _list(rule, "resources")
    if len(groups) != 1 or len(resources) != 1:
        return None
    if any(k not in ("apiGroups", "resources", "verbs", "resourceNames") for k in rule
           if rule[k]):
        return None
    return (groups[0], resources[0], bool(names), names[0] if names else "")


def compact_rules(rules: Iterable[dict]) -> list[dict]:
    """
    Upstream C{CompactRules}: simple rules (one group, resource and at most one name) that
    differ only in verbs become one rule with the verbs appended in order; others stay as
    they are (the merged ones follow the others, as upstream appends them last).
    """
    compacted: list[dict] = []
    simple: dict[tuple, dict] = {}
    for rule in rules:
        key = _simple_key(rule)
        if key is None:
            compacted.append(rule)
        elif key in simple:
            simple[key]["verbs"] = simple[key]["verbs"] + _list(rule, "verbs")
        else:
            simple[key] = {k: list(v) for k, v in rule.items() if isinstance(v, list)}
            simple[key]["verbs"] = _list(rule, "verbs")
    return compacted + list(simple.values())
