# -*- test-case-name: tests.controlplane.test_clusterroleaggregation -*-
"""
The clusterrole-aggregation controller, which upstream runs in kube-controller-manager
(C{pkg/controller/clusterroleaggregation}): every ClusterRole with an C{aggregationRule} gets
as its C{rules} the union of the rules of the other ClusterRoles its
C{clusterRoleSelectors} select (roles in name order, each rule once, in first-seen order), so
C{admin}, C{edit} and C{view} pick up the roles labelled
C{rbac.authorization.k8s.io/aggregate-to-admin: "true"} (and C{-edit}, C{-view}), custom
resources' roles included.  kubetwist runs it in the server, as it runs the namespace and
garbage-collector controllers: nobody runs a controller manager beside it.

It follows ClusterRoles through the shared L{RBACIndex
<kubetwist.authorization.rbac.RBACIndex>} (the RBAC authorizer's informers): after any change
one pass runs (one pass for a burst of changes) over every aggregated role, writing only the
roles whose rules differ, through the registry Store (no admission, as upstream's controller
in C{system:masters}-like bootstrap rights).
"""

from __future__ import annotations

from typing import Any, Optional

from twisted.application.service import Service
from twisted.internet.defer import Deferred, ensureDeferred
from twisted.logger import Logger

from kubetwist.apimachinery.selectors import label_selector_from_dict
from kubetwist.runtime import errors

__all__ = ["ClusterRoleAggregationController", "aggregated_rules"]

log = Logger()


def aggregated_rules(role: dict, cluster_roles: list[dict]) -> list[dict]:
    """
    Upstream C{syncClusterRole}'s new rules for C{role} (which has an C{aggregationRule}):
    for each selector in order, the selected ClusterRoles other than C{role} in name order,
    each of their rules unless an equal rule is already there.

    @raise StatusError: 400 for a selector that is not a valid label selector.
    """
    rules: list[dict] = []
    name = (role.get("metadata") or {}).get("name")
    ordered = sorted(cluster_roles, key=lambda r: (r.get("metadata") or {}).get("name") or "")
    for selector in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []:
        matcher = label_selector_from_dict(selector if isinstance(selector, dict) else {})
        for other in ordered:
            meta = other.get("metadata") or {}
            if meta.get("name") == name or not matcher.matches(meta.get("labels") or {}):
                continue
            for rule in other.get("rules") or []:
                if rule not in rules:
                    rules.append(rule)
    return rules


class ClusterRoleAggregationController(Service):
    """
    @param index_source: C{() -> RBACIndex}, the shared index (started with this service).
    @param cluster_roles: the ClusterRole L{Store <kubetwist.registry.generic.store.Store>}.
    @param clock: C{IReactorTime}, for scheduling passes.
    """

    def __init__(self, index_source: Any, cluster_roles: Any, clock: Any) -> None:
        self.index_source = index_source
        self.cluster_roles = cluster_roles
        self.clock = clock
        self.index: Any = None
        self._scheduled: Any = None
        self._running: Optional[Deferred] = None
        self._dirty = False

    def startService(self) -> None:
        super().startService()
        if self.index is None:
            self.index = self.index_source()
            self.index.add_listener(self._changed)
        self.index.start()
        # the first pass at once: with a synchronous storage (the unit tests') the aggregated
        # roles are complete when the hook has started, as the bootstrap roles are
        if self._running is None:
            self._pass()

    def stopService(self) -> Any:
        """Stop; also the shared index's watches (this runs at shutdown, before the storage
        stops, so the informers do not relist against a stopped storage; the authorizer
        keeps answering from the last state)."""
        super().stopService()
        if self._scheduled is not None and self._scheduled.active():
            self._scheduled.cancel()
        self._scheduled = None
        if self.index is not None:
            self.index.stop()
        return None

    def _changed(self, kind: str) -> None:
        if kind == "clusterroles" and self.running:
            self.schedule()

    def schedule(self) -> None:
        """Run a pass soon (once for a burst of changes; again after a running one)."""
        if self._running is not None:
            self._dirty = True
            return
        if self._scheduled is None or not self._scheduled.active():
            self._scheduled = self.clock.callLater(0, self._pass)

    def _pass(self) -> None:
        self._scheduled = None

        def done(_: Any) -> None:
            self._running = None
            if self._dirty and self.running:
                self._dirty = False
                self.schedule()

        self._running = ensureDeferred(self.sync())
        self._running.addErrback(self._failed)
        self._running.addBoth(done)

    def _failed(self, failure: Any) -> None:
        log.failure("clusterrole aggregation failed; retrying", failure)
        if self.running:
            self.clock.callLater(1, self.schedule)

    async def sync(self) -> None:
        """One pass over every aggregated ClusterRole (after the index's first list)."""
        await self.index.wait_synced()
        roles = {r["metadata"]["name"]: r for r in self.index.cluster_roles()}
        aggregated = sorted(n for n, r in roles.items() if r.get("aggregationRule") is not None)
        # aggregated roles may select each other (admin selects edit, edit selects view):
        # repeat over this pass's own results until nothing changes, as upstream's work
        # queue converges through one sync per change
        for _ in range(len(aggregated) + 1):
            changed = False
            for name in aggregated:
                role = roles[name]
                try:
                    rules = aggregated_rules(role, list(roles.values()))
                except errors.StatusError:
                    continue
                if rules == (role.get("rules") or []):
                    continue
                await self._write(name, rules)
                roles[name] = {**role, "rules": rules}
                changed = True
            if not changed:
                break

    async def _write(self, name: str, rules: list[dict]) -> None:
        async def transform(current: Optional[dict]) -> dict:
            if current is None:
                raise errors.new_not_found("rbac.authorization.k8s.io", "clusterroles", name)
            current["rules"] = rules
            return current

        try:
            await self.cluster_roles.update("", name, transform)
        except errors.StatusError as e:
            if e.code == 409:
                self._dirty = True
            elif e.code != 404:
                raise


def install_aggregation(server: Any, storage: Any, stores: dict, clock: Any) -> Any:
    """
    Build the controller over the shared RBAC index of C{storage} and the ClusterRole Store
    of C{stores}, started by the post-start hook C{start-clusterrole-aggregation-controller}
    of C{server} (a L{ServiceHook <kubetwist.controlplane.garbagecollector.ServiceHook>}).

    @return: the L{ClusterRoleAggregationController}.
    """
    from kubetwist.authorization.rbac import index_for
    from kubetwist.controlplane.garbagecollector import ServiceHook

    controller = ClusterRoleAggregationController(
        lambda: index_for(storage, clock),
        stores[("rbac.authorization.k8s.io", "clusterroles")], clock)
    ServiceHook("start-clusterrole-aggregation-controller", controller,
                clock).setServiceParent(server.hooks)
    return controller
