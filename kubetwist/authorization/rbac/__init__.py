# -*- test-case-name: tests.authorization.test_rbac -*-
"""
Role-based access control: upstream C{plugin/pkg/auth/authorizer/rbac} and the rule resolver
of C{pkg/registry/rbac/validation}.

Importing this package registers the C{RBAC} mode in L{MODE_FACTORIES
<kubetwist.authorization.MODE_FACTORIES>}: its factory gives the L{RBACAuthorizer} over the
process's shared L{RBACIndex} of the config's storage (see L{index_for}).
"""

from __future__ import annotations

import weakref
from typing import Any

from zope.interface import implementer

from kubetwist.authorization.authorizer import NO_OPINION, IAuthorizer
from kubetwist.authorization.rbac.authorizer import RBACAuthorizer
from kubetwist.authorization.rbac.resolver import RBACIndex, aggregate_error, lister_not_found
from kubetwist.authorization.rbac.rules import (
    CompiledRule,
    breakdown_rule,
    compact_rules,
    compact_string,
    covers,
    rule_allows,
)

__all__ = [
    "CompiledRule", "RBACAuthorizer", "RBACIndex", "aggregate_error", "breakdown_rule",
    "compact_rules", "compact_string", "covers", "index_for", "lister_not_found",
    "rule_allows",
]

# by id(storage), holding the indexes weakly: an index refers to its storage, so a
# WeakKeyDictionary would keep every storage alive
_INDEXES: "weakref.WeakValueDictionary[int, RBACIndex]" = weakref.WeakValueDictionary()


def index_for(storage: Any, clock: Any) -> RBACIndex:
    """
    The one L{RBACIndex} of C{storage} (created on first use, not started): the RBAC
    authorizer and the registry's escalation checks share it, so the four kinds are watched
    once per process.  It lives as long as something uses it.
    """
    index = _INDEXES.get(id(storage))
    if index is None or index.storage is not storage:
        index = RBACIndex(storage, clock)
        _INDEXES[id(storage)] = index
    return index


def _rbac(config: Any) -> RBACAuthorizer:
    """The C{RBAC} mode (upstream C{modes.ModeRBAC}): needs C{config.storage}."""
    if config.storage is None:
        raise ValueError("authorization-mode RBAC needs the server's storage")
    return RBACAuthorizer(index_for(config.storage, config.reactor))


@implementer(IAuthorizer)
class _NoOpinion:
    """Stands in for the C{Node} authorizer where it is not built: no opinion, no reason
    (what upstream's Node authorizer answers for every user that is not a node)."""

    def authorize(self, attributes: Any) -> Any:
        from twisted.internet.defer import succeed

        return succeed((NO_OPINION, ""))


def _register() -> None:
    from kubetwist.authorization import MODE_FACTORIES

    MODE_FACTORIES["RBAC"] = _rbac
    MODE_FACTORIES.setdefault("Node", lambda config: _NoOpinion())


_register()
