# -*- test-case-name: tests.server.test_filters -*-
"""
Authorizers: upstream C{k8s.io/apiserver/pkg/authorization} (C{authorizerfactory}:
AlwaysAllow, AlwaysDeny) and the union of C{--authorization-mode}.

An authorizer is C{authorize(user, info) -> (decision, reason)} with decision one of
C{"allow" "deny" "noopinion"}.  Members of C{system:masters} are always allowed (upstream's
privileged-group authorizer, placed first).
"""

from __future__ import annotations

from typing import Any

ALLOW, DENY, NO_OPINION = "allow", "deny", "noopinion"
MODES = ("AlwaysAllow", "AlwaysDeny")


class AlwaysAllow:
    def authorize(self, user: Any, info: Any) -> tuple[str, str]:
        return ALLOW, ""

    def rules_for(self, user: Any, namespace: str) -> tuple[list, list, bool, str]:
        """Upstream C{alwaysAllowAuthorizer.RulesFor}: everything, on every path."""
        return ([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                [{"verbs": ["*"], "nonResourceURLs": ["*"]}], False, "")


class AlwaysDeny:
    def authorize(self, user: Any, info: Any) -> tuple[str, str]:
        return NO_OPINION, "Everything is forbidden."

    def rules_for(self, user: Any, namespace: str) -> tuple[list, list, bool, str]:
        """Upstream C{alwaysDenyAuthorizer.RulesFor}: no rules, complete."""
        return [], [], False, ""


class PrivilegedGroups:
    """Upstream C{authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)}."""

    def authorize(self, user: Any, info: Any) -> tuple[str, str]:
        if "system:masters" in (getattr(user, "groups", None) or []):
            return ALLOW, ""
        return NO_OPINION, ""


class UnionAuthorizer:
    """The first authorizer with an opinion decides; reasons of the others are joined."""

    def __init__(self, authorizers: list[Any]) -> None:
        self.authorizers = authorizers

    def authorize(self, user: Any, info: Any) -> tuple[str, str]:
        reasons = []
        for a in self.authorizers:
            decision, reason = a.authorize(user, info)
            if decision in (ALLOW, DENY):
                return decision, reason
            if reason:
                reasons.append(reason)
        return NO_OPINION, ", ".join(reasons)

    def rules_for(self, user: Any, namespace: str) -> tuple[list, list, bool, str]:
        """
        Upstream C{rules.NewRuleResolvers}' union, over the members that resolve rules
        (a C{rules_for(user, namespace)} method; the privileged-group authorizer has none, as
        upstream): C{(resource_rules, non_resource_rules, incomplete, evaluation_error)}, the
        rules concatenated, incomplete if any member is, errors joined as an aggregate
        (C{[e1, e2]} for more than one).
        """
        resource: list = []
        non_resource: list = []
        incomplete = False
        errs: list[str] = []
        for a in self.authorizers:
            resolve = getattr(a, "rules_for", None)
            if resolve is None:
                continue
            rr, nr, inc, err = resolve(user, namespace)
            resource += rr
            non_resource += nr
            incomplete = incomplete or inc
            if err and err not in errs:
                errs.append(err)
        error = errs[0] if len(errs) == 1 else ("[" + ", ".join(errs) + "]" if errs else "")
        return resource, non_resource, incomplete, error


def from_modes(modes: list[str]) -> UnionAuthorizer:
    """Build the union for C{--authorization-mode} (comma list); unknown modes: ValueError."""
    out: list[Any] = [PrivilegedGroups()]
    for m in modes:
        if m == "AlwaysAllow":
            out.append(AlwaysAllow())
        elif m == "AlwaysDeny":
            out.append(AlwaysDeny())
        else:
            raise ValueError(
                f'authorization-mode "{m}" is not supported (supported: {", ".join(MODES)})'
            )
    return UnionAuthorizer(out)


def forbidden_message(user: Any, info: Any, reason: str) -> str:
    """Upstream C{responsewriters.forbiddenMessage}."""
    username = getattr(user, "name", "") or ""
    if not info.is_resource_request:
        return f'User "{username}" cannot {info.verb} path "{info.path}"'
    resource = info.resource
    if info.subresource:
        resource = f"{resource}/{info.subresource}"
    if info.namespace:
        msg = (f'User "{username}" cannot {info.verb} resource "{resource}" in API group '
               f'"{info.api_group}" in the namespace "{info.namespace}"')
    else:
        msg = (f'User "{username}" cannot {info.verb} resource "{resource}" in API group '
               f'"{info.api_group}" at the cluster scope')
    if reason:
        msg += f": {reason}"
    return msg
