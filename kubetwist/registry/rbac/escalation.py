# -*- test-case-name: tests.registry.test_rbac_escalation -*-
"""
RBAC escalation prevention: upstream C{pkg/registry/rbac/{role,clusterrole,rolebinding,
clusterrolebinding}/policybased/storage.go}, C{pkg/registry/rbac/escalation_check.go} and
C{ConfirmNoEscalation} of C{pkg/registry/rbac/validation/rule.go}.

Upstream wraps the four RBAC storages so that, after mutating admission and before the
strategy's validation, a create or update by a user outside C{system:masters} is refused
unless:

  - Role/ClusterRole: the user may C{escalate} the resource, or already holds every
    permission of the role's rules (and, for an C{aggregationRule}, everything:
    C{must have cluster-admin privileges to use the aggregationRule});
  - RoleBinding/ClusterRoleBinding: the user may C{bind} the referenced role, or already
    holds every permission of its rules (a missing role is a 404 of the binding resource).

kubetwist's strategies do not see the request, so this is an internal step of the admission
chain (L{RBACEscalationCheck}, after the plugins in the mutating phase, where upstream's
check runs), with the user from the admission L{Attributes
<kubetwist.admission.interfaces.Attributes>}.  The user's rules come from the shared
L{RBACIndex <kubetwist.authorization.rbac.RBACIndex>}.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from zope.interface import implementer

from kubetwist.admission.interfaces import CREATE, UPDATE, IMutationInterface
from kubetwist.authentication.user import SYSTEM_PRIVILEGED_GROUP
from kubetwist.authorization.authorizer import ALLOW, Attributes
from kubetwist.authorization.rbac import (
    aggregate_error,
    compact_rules,
    compact_string,
    covers,
)
from kubetwist.runtime import errors, gofmt

__all__ = ["RBACEscalationCheck", "FULL_AUTHORITY", "escalation_message"]

GROUP = "rbac.authorization.k8s.io"
_ROLES = ("roles", "clusterroles")
_BINDINGS = ("rolebindings", "clusterrolebindings")

#: Upstream C{fullAuthority}: what an aggregationRule needs.
FULL_AUTHORITY = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                  {"verbs": ["*"], "nonResourceURLs": ["*"]}]

#: Metadata that never matters to the check (upstream C{IsOnlyMutatingGCFields} and the
#: fields the server sets).
_GC_META = ("ownerReferences", "finalizers", "selfLink", "deletionTimestamp",
            "deletionGracePeriodSeconds", "resourceVersion", "managedFields", "generation")


def _go_groups(groups: Any) -> str:
    """Go's C{%q} of a C{[]string}: C{["a" "b"]}."""
    return "[" + " ".join(gofmt.quote(g) for g in groups or []) + "]"


def escalation_message(user: Any, missing: list[dict], resolution_errors: list[str]) -> str:
    """
    Upstream C{ConfirmNoEscalation}'s error: C{user "u" (groups=["g"]) is attempting to grant
    RBAC permissions not currently held:} and the compacted missing rules, one per line,
    sorted; C{; resolution errors: [<errors>]} when resolving the user's rules failed.
    """
    lines = sorted({compact_string(r) for r in compact_rules(missing)})
    msg = (f"user {gofmt.quote(getattr(user, 'name', '') or '')} "
           f"(groups={_go_groups(getattr(user, 'groups', None))}) is attempting to grant "
           "RBAC permissions not currently held:\n" + "\n".join(lines))
    if resolution_errors:
        msg += f"; resolution errors: [{aggregate_error(resolution_errors)}]"
    return msg


def _only_gc_fields(new: dict, old: Any) -> bool:
    """Upstream C{IsOnlyMutatingGCFields}: C{new} equals C{old} but for the GC's fields."""
    if not isinstance(old, dict):
        return False

    def stripped(obj: dict) -> dict:
        out = copy.deepcopy(obj)
        meta = out.get("metadata") if isinstance(out.get("metadata"), dict) else {}
        out["metadata"] = {k: v for k, v in meta.items() if k not in _GC_META and v}
        return {k: v for k, v in out.items() if v not in (None, [], {}) or k == "metadata"}

    return stripped(new) == stripped(old)


@implementer(IMutationInterface)
class RBACEscalationCheck:
    """
    The escalation check of the four RBAC resources (see the module docstring).

    @param authorizer: the server's L{IAuthorizer
        <kubetwist.authorization.authorizer.IAuthorizer>} (asked for C{escalate} and
        C{bind}).
    @param index: C{() -> RBACIndex}, called only when rules must be compared.
    """

    name = "RBACEscalationCheck"

    def __init__(self, authorizer: Any, index: Callable[[], Any]) -> None:
        self.authorizer = authorizer
        self.index = index

    def handles(self, operation: str) -> bool:
        """Creates and updates."""
        return operation in (CREATE, UPDATE)

    async def admit(self, attrs: Any) -> None:
        """
        @raise StatusError: 403 C{Forbidden} (C{clusterroles.rbac.authorization.k8s.io "x" is
            forbidden: user "u" (groups=[...]) is attempting to grant RBAC permissions not
            currently held:...}); 404 C{NotFound} (a binding's role does not exist:
            C{rolebindings.rbac.authorization.k8s.io "role-name" not found}).
        """
        resource = attrs.resource.resource
        if attrs.resource.group != GROUP or attrs.subresource or attrs.object is None \
                or resource not in _ROLES + _BINDINGS:
            return
        user = attrs.user
        if user is None or SYSTEM_PRIVILEGED_GROUP in (getattr(user, "groups", None) or ()):
            return
        if attrs.operation == UPDATE and _only_gc_fields(attrs.object, attrs.old_object):
            return
        if resource in _ROLES:
            await self._check_role(attrs, resource, user)
        else:
            await self._check_binding(attrs, resource, user)

    async def _allowed(self, attributes: Attributes) -> bool:
        result = await self.authorizer.authorize(attributes)
        return result[0] == ALLOW

    def _not_found(self, resource: str) -> Callable[[str, str], str]:
        # upstream's registry getters name the resource of the request being served
        return lambda kind, name: f"{resource}.{GROUP} {gofmt.quote(name)} not found"

    async def _confirm(self, attrs: Any, resource: str, user: Any, rules: list[dict],
                       message: Callable[[list[dict], list[str]], str]) -> None:
        index = self.index()
        await index.wait_synced()
        owner, errs = index.rules_for(user, attrs.namespace, self._not_found(resource))
        ok, missing = covers(owner, rules)
        if not ok:
            raise errors.new_forbidden(GROUP, resource, _name(attrs), message(missing, errs))

    async def _check_role(self, attrs: Any, resource: str, user: Any) -> None:
        escalate = Attributes(
            user=user, verb="escalate", api_group=GROUP, api_version="*", resource=resource,
            name=attrs.name if attrs.operation == UPDATE else "", namespace=attrs.namespace,
            resource_request=True)
        if await self._allowed(escalate):
            return
        obj = attrs.object
        rules = [r for r in obj.get("rules") or [] if isinstance(r, dict)]
        await self._confirm(attrs, resource, user, rules,
                            lambda missing, errs: escalation_message(user, missing, errs))
        old = attrs.old_object if isinstance(attrs.old_object, dict) else {}
        if resource == "clusterroles" and (obj.get("aggregationRule") is not None
                                           or old.get("aggregationRule") is not None):
            await self._confirm(
                attrs, resource, user, FULL_AUTHORITY,
                lambda missing, errs: "must have cluster-admin privileges to use the "
                                      "aggregationRule")

    async def _check_binding(self, attrs: Any, resource: str, user: Any) -> None:
        ref = attrs.object.get("roleRef") if isinstance(attrs.object.get("roleRef"),
                                                        dict) else {}
        kind = ref.get("kind") or ""
        if kind in ("ClusterRole", "Role"):
            bind = Attributes(
                user=user, verb="bind", api_group=ref.get("apiGroup") or "", api_version="*",
                resource="clusterroles" if kind == "ClusterRole" else "roles",
                name=ref.get("name") or "", namespace=attrs.namespace, resource_request=True)
            if await self._allowed(bind):
                return
        index = self.index()
        await index.wait_synced()
        rules, _, err = index.role_reference_rules(ref, attrs.namespace,
                                                   self._not_found(resource))
        if err:
            if kind in ("ClusterRole", "Role"):
                raise errors.new_not_found(GROUP, resource, ref.get("name") or "")
            # upstream returns the resolver's plain error: a 500 with no reason, before
            # validation would refuse the kind
            raise errors.make_status(500, "", err)
        await self._confirm(attrs, resource, user, rules,
                            lambda missing, errs: escalation_message(user, missing, errs))


def _name(attrs: Any) -> str:
    meta = attrs.object.get("metadata") if isinstance(attrs.object.get("metadata"),
                                                       dict) else {}
    return meta.get("name") or attrs.name or ""
