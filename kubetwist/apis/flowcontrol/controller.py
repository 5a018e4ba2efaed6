# -*- test-case-name: tests.apis.test_flowcontrol -*-
"""
The status half of the API Priority and Fairness config consumer: upstream
C{k8s.io/apiserver/pkg/util/flowcontrol/apf_controller.go} (C{digestConfigObjects}), started
by the post-start hook C{priority-and-fairness-config-consumer}.

Every FlowSchema carries a C{Dangling} condition saying whether the PriorityLevelConfiguration
it names exists (C{False}/C{Found} or C{True}/C{NotFound}); this controller keeps it so,
following both kinds through storage watches.  With API Priority and Fairness on, each pass
also hands both kinds to the request dispatcher, a L{ConfigController
<kubetwist.flowcontrol.controller.ConfigController>} (L{new_config_controller}; the
controller's C{consumer}), which decides what dangles: a FlowSchema whose level is missing or
unusable.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.defer import Deferred, ensureDeferred
from twisted.logger import Logger

from kubetwist.apimachinery.meta import now_rfc3339
from kubetwist.apis.flowcontrol import bootstrap
from kubetwist.apis.flowcontrol.fieldmanagers import CONSUMER_MANAGER, field_manager
from kubetwist.apis.flowcontrol.validation import default_flow_schema, default_priority_level
from kubetwist.flowcontrol.controller import ConfigController
from kubetwist.registry.generic.store import ListOptions
from kubetwist.runtime import errors

__all__ = ["FlowSchemaStatusController", "dangling_condition", "new_config_controller"]

log = Logger()


def new_config_controller(clock: Any, server_concurrency_limit: int) -> ConfigController:
    """
    The request dispatcher of API Priority and Fairness, imagining the defaulted mandatory
    objects while they are missing.

    @param server_concurrency_limit: C{--max-requests-inflight} plus
        C{--max-mutating-requests-inflight}.
    @raise ValueError: the limit is not positive.
    """
    pls = bootstrap.mandatory_priority_levels()
    fss = bootstrap.mandatory_flow_schemas()
    for pl in pls:
        default_priority_level(pl)
    for fs in fss:
        default_flow_schema(fs)
    return ConfigController(clock, server_concurrency_limit, pls, fss)


def dangling_condition(pl_name: str, exists: bool) -> tuple[str, str, str]:
    """Upstream's desired C{Dangling} condition: C{(status, reason, message)}."""
    ref = f'This FlowSchema references the PriorityLevelConfiguration object named "{pl_name}"'
    if exists:
        return "False", "Found", f"{ref} and it exists"
    return "True", "NotFound", f"{ref} but there is no such object"


class FlowSchemaStatusController:
    """
    Keeps every FlowSchema's C{Dangling} condition true to the stored priority levels.

    @param flow_schemas: the FlowSchema L{Store<kubetwist.registry.generic.store.Store>}.
    @param flow_schema_status: its C{status} subresource store (status writes keep the spec).
    @param priority_levels: the PriorityLevelConfiguration store.
    @param clock: C{IReactorTime}: C{lastTransitionTime}, and the scheduling of passes.
    @ivar consumer: the L{ConfigController <kubetwist.flowcontrol.controller.ConfigController>}
        fed with both kinds on every pass, or C{None} (API Priority and Fairness off).
    """

    def __init__(self, flow_schemas: Any, flow_schema_status: Any, priority_levels: Any,
                 clock: Any) -> None:
        self.flow_schemas = flow_schemas
        self.flow_schema_status = flow_schema_status
        self.priority_levels = priority_levels
        self.clock = clock
        self._scheduled: Any = None
        self._running: Deferred | None = None
        self._dirty = False
        self._watches: list[Any] = []
        self.consumer: Any = None
        self._field_manager = field_manager("FlowSchema", clock, "status")

    async def start(self) -> None:
        """One reconciliation, then follow changes of both kinds (the post-start hook)."""
        fss = await self.flow_schemas.list("", ListOptions())
        pls = await self.priority_levels.list("", ListOptions())
        await self._reconcile(fss["items"], pls["items"])
        self._follow(self.flow_schemas, fss["metadata"]["resourceVersion"])
        self._follow(self.priority_levels, pls["metadata"]["resourceVersion"])

    def _follow(self, store: Any, rv: str) -> None:
        watch = store.watch("", ListOptions(resource_version=rv))
        self._watches.append(watch)

        def on_event(event: Any) -> None:
            if event.type == "ERROR":
                watch.stop()
            elif event.type != "BOOKMARK":
                self.schedule()

        def ended(_: Any) -> None:
            if watch in self._watches:
                self._watches.remove(watch)
                # resync after a lost watch: a fresh list (as an informer relists)
                self.clock.callLater(1, self._refollow, store)

        watch.subscribe(on_event)
        watch.done.addBoth(ended)

    def _refollow(self, store: Any) -> None:
        async def run() -> None:
            listed = await store.list("", ListOptions())
            self._follow(store, listed["metadata"]["resourceVersion"])
            self.schedule()

        ensureDeferred(run()).addErrback(
            lambda f: (log.failure("APF watch resync failed", f),
                       self.clock.callLater(1, self._refollow, store)))

    def stop(self) -> None:
        """Stop following changes."""
        watches, self._watches = self._watches, []
        for watch in watches:
            watch.stop()

    def schedule(self) -> None:
        """Run a pass soon (one pass for a burst of events)."""
        if self._running is not None:
            self._dirty = True
            return
        if self._scheduled is None or not self._scheduled.active():
            self._scheduled = self.clock.callLater(0, self._pass)

    def _pass(self) -> None:
        self._scheduled = None

        async def run() -> None:
            fss = await self.flow_schemas.list("", ListOptions())
            pls = await self.priority_levels.list("", ListOptions())
            await self._reconcile(fss["items"], pls["items"])

        def done(result: Any) -> None:
            self._running = None
            if self._dirty:
                self._dirty = False
                self.schedule()

        self._running = ensureDeferred(run())
        self._running.addErrback(lambda f: log.failure("APF status pass failed", f))
        self._running.addBoth(done)

    async def _reconcile(self, flow_schemas: list[dict], priority_levels: list[dict]) -> None:
        """Write the C{Dangling} condition of every FlowSchema whose condition differs (the
        transition time is not compared)."""
        existing = {(pl.get("metadata") or {}).get("name") for pl in priority_levels}
        found: dict[str, bool] = {}
        if self.consumer is not None:
            found = self.consumer.digest(priority_levels, flow_schemas)
        for fs in flow_schemas:
            name = (fs.get("metadata") or {}).get("name") or ""
            pl_name = ((fs.get("spec") or {}).get("priorityLevelConfiguration") or {}).get(
                "name") or ""
            desired = dangling_condition(pl_name, found.get(name, pl_name in existing))
            if _current(fs) == desired:
                continue
            await self._write(name, pl_name, desired)

    async def _write(self, name: str, pl_name: str, desired: tuple[str, str, str]) -> None:
        status, reason, message = desired
        condition = {"type": "Dangling", "status": status,
                     "lastTransitionTime": now_rfc3339(self.clock), "reason": reason,
                     "message": message}

        async def transform(cur: dict | None) -> dict:
            if cur is None:
                raise errors.new_not_found(self.flow_schemas.spec.group,
                                           self.flow_schemas.spec.resource, name)
            # upstream: a forced server-side apply of the one condition on status
            applied = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
                       "metadata": {"name": name}, "status": {"conditions": [condition]}}
            return self._field_manager.apply(cur, applied, CONSUMER_MANAGER, True)

        try:
            await self.flow_schema_status.update("", name, transform)
        except errors.StatusError as e:
            if e.code not in (404, 409):
                raise


def _current(fs: dict) -> tuple[str, str, str] | None:
    for cond in (fs.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Dangling":
            return cond.get("status") or "", cond.get("reason") or "", cond.get("message") or ""
    return None
