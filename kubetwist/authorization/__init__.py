# -*- test-case-name: tests.authorization.test_authorizer -*-
"""
Authorizers: upstream C{k8s.io/apiserver/pkg/authorization} (C{authorizerfactory}:
AlwaysAllow, AlwaysDeny, privileged groups; C{union}) and the union of
C{--authorization-mode}.

Every authorizer provides L{IAuthorizer} (C{authorize(attributes) -> Deferred of (decision,
reason)}, see L{kubetwist.authorization.authorizer}); the ones that list rules provide
L{IRuleResolver} too.  Members of C{system:masters} are always allowed (upstream's
privileged-group authorizer, placed first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from twisted.internet import defer
from zope.interface import implementer

from kubetwist.authorization.authorizer import (
    ALLOW,
    DECISIONS,
    DENY,
    NO_OPINION,
    Attributes,
    IAuthorizer,
    IRuleResolver,
)

__all__ = [
    "ALLOW", "DENY", "NO_OPINION", "DECISIONS", "Attributes", "IAuthorizer",
    "IRuleResolver", "AlwaysAllow", "AlwaysDeny", "PrivilegedGroups", "UnionAuthorizer",
    "from_modes", "forbidden_message", "AuthorizerConfig", "MODE_FACTORIES",
    "validate_modes",
]


@implementer(IAuthorizer, IRuleResolver)
class AlwaysAllow:
    """Upstream C{authorizerfactory.NewAlwaysAllowAuthorizer}."""

    def authorize(self, attributes: Attributes) -> "defer.Deferred[tuple[str, str]]":
        return defer.succeed((ALLOW, ""))

    def rules_for(self, user: Any, namespace: str) -> tuple[list, list, bool, str]:
        """Upstream C{alwaysAllowAuthorizer.RulesFor}: everything, on every path."""
        return ([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                [{"verbs": ["*"], "nonResourceURLs": ["*"]}], False, "")


@implementer(IAuthorizer, IRuleResolver)
class AlwaysDeny:
    """Upstream C{authorizerfactory.NewAlwaysDenyAuthorizer} (no opinion, with a reason)."""

    def authorize(self, attributes: Attributes) -> "defer.Deferred[tuple[str, str]]":
        return defer.succeed((NO_OPINION, "Everything is forbidden."))

    def rules_for(self, user: Any, namespace: str) -> tuple[list, list, bool, str]:
        """Upstream C{alwaysDenyAuthorizer.RulesFor}: no rules, complete."""
        return [], [], False, ""


@implementer(IAuthorizer)
class PrivilegedGroups:
    """Upstream C{authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)}."""

    def __init__(self, groups: Sequence[str] = ("system:masters",)) -> None:
        self.groups = frozenset(groups)

    def authorize(self, attributes: Attributes) -> "defer.Deferred[tuple[str, str]]":
        groups = getattr(attributes.user, "groups", None) or []
        if any(g in self.groups for g in groups):
            return defer.succeed((ALLOW, ""))
        return defer.succeed((NO_OPINION, ""))


@implementer(IAuthorizer, IRuleResolver)
class UnionAuthorizer:
    """
    Upstream C{union.New}: the first authorizer with an opinion (allow or deny) decides and
    later ones are not asked; with no opinion at all, the reasons of every member are joined
    with a newline.  An evaluation error of a member (a third element of its answer) is
    collected the same way (upstream aggregates them: C{[e1, e2]} for more than one) and
    answered as C{(decision, reason, error)}; the authorization filter turns an error without
    an allow into a 500.
    """

    def __init__(self, authorizers: Sequence[Any]) -> None:
        self.authorizers = list(authorizers)

    def authorize(self, attributes: Attributes) -> "defer.Deferred[tuple[str, str]]":
        """@return: a Deferred of C{(decision, reason)}; see the class docstring."""
        return defer.ensureDeferred(self._authorize(attributes))

    async def _authorize(self, attributes: Attributes) -> tuple:
        reasons: list[str] = []
        errors: list[str] = []
        for a in self.authorizers:
            result = await a.authorize(attributes)
            decision, reason = result[0], result[1]
            err = result[2] if len(result) > 2 else ""
            if err:
                errors.append(str(err))
            if decision in (ALLOW, DENY):
                return (decision, reason, err) if err else (decision, reason)
            if reason:
                reasons.append(reason)
        if errors:
            error = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
            return NO_OPINION, "\n".join(reasons), error
        return NO_OPINION, "\n".join(reasons)

    def rules_for(self, user: Any, namespace: str) -> tuple[list, list, bool, str]:
        """
        Upstream C{rules.NewRuleResolvers}' union, over the members that provide
        L{IRuleResolver} (the privileged-group authorizer does not, as upstream):
        C{(resource_rules, non_resource_rules, incomplete, evaluation_error)}, the rules
        concatenated, incomplete if any member is, errors joined as an aggregate (C{[e1, e2]}
        for more than one).
        """
        resource: list = []
        non_resource: list = []
        incomplete = False
        errs: list[str] = []
        for a in self.authorizers:
            if not IRuleResolver.providedBy(a):
                continue
            rr, nr, inc, err = a.rules_for(user, namespace)
            resource += rr
            non_resource += nr
            incomplete = incomplete or inc
            if err and err not in errs:
                errs.append(err)
        error = errs[0] if len(errs) == 1 else ("[" + ", ".join(errs) + "]" if errs else "")
        return resource, non_resource, incomplete, error


@dataclass(frozen=True)
class AuthorizerConfig:
    """
    What a mode's factory may build its authorizer from (upstream
    C{authorizer.Config}): C{storage} (the chain's L{IStorage
    <kubetwist.storage.interfaces.IStorage>}, the Cacher in a running server), C{reactor}
    (clock and scheduling) and C{options} (the parsed flags, a mapping of flag name to value).
    Every field may be C{None} in unit tests of the modes that need none of them.
    """

    storage: Any = None
    reactor: Any = None
    options: Any = None


def _always_allow(config: AuthorizerConfig) -> Any:
    return AlwaysAllow()


def _always_deny(config: AuthorizerConfig) -> Any:
    return AlwaysDeny()


#: C{--authorization-mode} name -> factory C{(AuthorizerConfig) -> IAuthorizer}; a mode
#: module registers itself here (upstream C{modes.AuthorizationModeChoices}).
MODE_FACTORIES: dict[str, Callable[[AuthorizerConfig], Any]] = {
    "AlwaysAllow": _always_allow,
    "AlwaysDeny": _always_deny,
}


def from_modes(modes: list[str], config: AuthorizerConfig | None = None) -> UnionAuthorizer:
    """
    Build the union for C{--authorization-mode} (a list of mode names, in order), behind the
    privileged-group authorizer; each mode's authorizer comes from L{MODE_FACTORIES} given
    C{config}.

    @raise ValueError: an unknown mode (C{authorization-mode "X" is not a valid mode}).
    """
    validate_modes(modes)
    config = config or AuthorizerConfig()
    out: list[Any] = [PrivilegedGroups()]
    for m in modes:
        out.append(MODE_FACTORIES[m](config))
    return UnionAuthorizer(out)


def validate_modes(modes: list[str]) -> None:
    """
    Check C{--authorization-mode}'s names without building anything (the flag check at start).

    @raise ValueError: an unknown mode (upstream's C{authorization-mode "X" is not a valid
        mode}).
    """
    for m in modes:
        if m not in MODE_FACTORIES:
            raise ValueError(f'authorization-mode "{m}" is not a valid mode')


def forbidden_message(attributes: Attributes, reason: str) -> str:
    """
    Upstream C{responsewriters.forbiddenMessage}: the 403 message for C{attributes}, with
    C{": <reason>"} appended when there is a reason.
    """
    username = getattr(attributes.user, "name", "") or ""
    if not attributes.resource_request:
        return f'User "{username}" cannot {attributes.verb} path "{attributes.path}"'
    resource = attributes.resource
    if attributes.subresource:
        resource = f"{resource}/{attributes.subresource}"
    if attributes.namespace:
        msg = (f'User "{username}" cannot {attributes.verb} resource "{resource}" in API group '
               f'"{attributes.api_group}" in the namespace "{attributes.namespace}"')
    else:
        msg = (f'User "{username}" cannot {attributes.verb} resource "{resource}" in API group '
               f'"{attributes.api_group}" at the cluster scope')
    if reason:
        msg += f": {reason}"
    return msg


# the modes beyond AlwaysAllow/AlwaysDeny register themselves in MODE_FACTORIES
from kubetwist.authorization import modes as _modes  # noqa: E402,F401
from kubetwist.authorization import rbac as _rbac  # noqa: E402,F401
