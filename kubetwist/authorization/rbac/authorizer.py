# -*- test-case-name: tests.authorization.test_rbac -*-
"""
The RBAC authorizer: upstream C{plugin/pkg/auth/authorizer/rbac/rbac.go} (C{Authorize},
C{RulesFor}) over an L{RBACIndex <kubetwist.authorization.rbac.resolver.RBACIndex>}.

A decision never touches storage: the rules that apply to a user in a namespace are resolved
from the in-memory indexes and kept (per user name, groups and namespace) until the next
change of any RBAC object.  Until the four kinds have been listed once, a decision waits for
that list (a Deferred); afterwards every answer is a fired Deferred.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.defer import Deferred, succeed
from zope.interface import implementer

from kubetwist.authorization.authorizer import (
    ALLOW,
    NO_OPINION,
    Attributes,
    IAuthorizer,
    IRuleResolver,
)
from kubetwist.authorization.rbac.resolver import RBACIndex, Visit, aggregate_error

__all__ = ["RBACAuthorizer", "MAX_CACHED_SUBJECTS"]

#: How many (user, groups, namespace) resolutions are kept between changes.
MAX_CACHED_SUBJECTS = 4096
#: How many decisions (per user and request attributes) are kept between changes.
MAX_CACHED_DECISIONS = 65536


@implementer(IAuthorizer, IRuleResolver)
class RBACAuthorizer:
    """
    @param index: the L{RBACIndex} to resolve from (started here).
    """

    def __init__(self, index: RBACIndex) -> None:
        self.index = index
        self._cache: dict[tuple, list[Visit]] = {}
        self._decisions: dict[tuple, tuple[str, str]] = {}
        self._generation = -1
        index.start()

    def _current(self) -> None:
        """Drop what was resolved before the last RBAC change."""
        if self._generation != self.index.generation:
            self._cache = {}
            self._decisions = {}
            self._generation = self.index.generation

    def _visits(self, user: Any, namespace: str) -> list[Visit]:
        self._current()
        key = (getattr(user, "name", "") or "", tuple(getattr(user, "groups", None) or ()),
               namespace)
        visits = self._cache.get(key)
        if visits is None:
            if len(self._cache) >= MAX_CACHED_SUBJECTS:
                self._cache.clear()
            visits = self._cache[key] = self.index.visit(user, namespace)
        return visits

    def decide(self, attributes: Attributes) -> tuple[str, str]:
        """
        Upstream C{RBACAuthorizer.Authorize}, synchronously: C{(ALLOW, 'RBAC: allowed by
        ClusterRoleBinding "x" of ClusterRole "y" to User "z"')} for the first rule that
        allows, else C{(NO_OPINION, "")}, or C{(NO_OPINION, "RBAC: <errors>")} when a binding
        that applies names a role that does not exist.  Decisions are remembered (per user,
        groups and request attributes) until the next RBAC change.
        """
        self._current()
        user = attributes.user
        key = (getattr(user, "name", "") or "", tuple(getattr(user, "groups", None) or ()),
               attributes.namespace, attributes.verb, attributes.api_group,
               attributes.resource, attributes.subresource, attributes.name, attributes.path,
               attributes.resource_request)
        decision = self._decisions.get(key)
        if decision is None:
            if len(self._decisions) >= MAX_CACHED_DECISIONS:
                self._decisions.clear()
            decision = self._decisions[key] = self._decide(attributes)
        return decision

    def _decide(self, attributes: Attributes) -> tuple[str, str]:
        errs: list[str] = []
        for description, compiled, err in self._visits(attributes.user, attributes.namespace):
            if err:
                errs.append(err)
                continue
            for rule in compiled:
                if rule.allows(attributes):
                    return ALLOW, f"RBAC: allowed by {description}"
        if errs:
            return NO_OPINION, f"RBAC: {aggregate_error(errs)}"
        return NO_OPINION, ""

    def authorize(self, attributes: Attributes) -> "Deferred[tuple[str, str]]":
        """L{decide} in a Deferred, once the indexes have been listed."""
        if self.index.synced:
            return succeed(self.decide(attributes))
        return self.index.wait_synced().addCallback(lambda _: self.decide(attributes))

    def rules_for(self, user: Any, namespace: str) -> tuple[list, list, bool, str]:
        """
        Upstream C{RBACAuthorizer.RulesFor}: the C{ResourceRule}s (rules with resources) and
        C{NonResourceRule}s (rules with non-resource URLs) of C{user} in C{namespace}, never
        incomplete, and the resolution errors as one text (C{""} when none).  Before the
        first list it answers no rules, incomplete.
        """
        if not self.index.synced:
            return [], [], True, ""
        resource: list[dict] = []
        non_resource: list[dict] = []
        errs: list[str] = []
        for _, compiled, err in self._visits(user, namespace):
            if err:
                errs.append(err)
            for c in compiled:
                rule = c.rule
                if rule.get("resources"):
                    r = {"verbs": list(rule.get("verbs") or []),
                         "apiGroups": list(rule.get("apiGroups") or []),
                         "resources": list(rule.get("resources") or [])}
                    if rule.get("resourceNames"):
                        r["resourceNames"] = list(rule["resourceNames"])
                    resource.append(r)
                if rule.get("nonResourceURLs"):
                    non_resource.append({"verbs": list(rule.get("verbs") or []),
                                         "nonResourceURLs": list(rule["nonResourceURLs"])})
        return resource, non_resource, False, aggregate_error(errs)
