# -*- test-case-name: tests.apis.test_core_componentstatuses -*-
"""
core/v1 ComponentStatuses (deprecated since v1.19): upstream
C{pkg/registry/core/componentstatus} (C{rest.go}, C{validator.go}), the servers
C{pkg/registry/core/rest/storage_core.go} probes (C{controller-manager}, C{scheduler},
C{etcd-0}) and C{printComponentStatus} of C{pkg/printers/internalversion}.

Not a Store: nothing is stored.  Every C{get}/C{list} probes the components.  kubetwist runs
no kube-scheduler or kube-controller-manager, so their conditions are what upstream reports
when nothing listens on their default secure ports (10259, 10257) on 127.0.0.1: C{Healthy}
C{False} with the prober's connection error as the message.  C{etcd-0} is the storage's own
health check (the same probe as C{/readyz/etcd}): C{True}/C{ok}, or C{False} with the error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from twisted.internet import defer
from zope.interface import implementer

from kubetwist.apis.printers import column, name_column
from kubetwist.registry.generic.store import ListOptions
from kubetwist.registry.rest import IGetter, ILister, ResourceSpec, Strategy, TableConvertor
from kubetwist.runtime import errors

__all__ = [
    "COMPONENT_STATUS_STRATEGY",
    "COMPONENT_STATUS_TABLE",
    "DEPRECATION_WARNING",
    "ComponentStatusREST",
    "default_probes",
    "unreachable_probe",
]

#: The C{Warning} every request to the resource gets (upstream's deprecation filter, from the
#: kind's C{prerelease-lifecycle-gen:deprecated=1.19}).
DEPRECATION_WARNING = "v1 ComponentStatus is deprecated in v1.19+"

#: A probe: C{async () -> (status, message, error)} with C{status} one of C{True False
#: Unknown} (upstream C{Server.DoServerCheck} and C{ToConditionStatus}).
Probe = Callable[[], Awaitable[tuple[str, str, str]]]

#: Upstream C{ports.KubeControllerManagerPort} and C{DefaultKubeSchedulerPort}.
CONTROLLER_MANAGER_PORT = 10257
SCHEDULER_PORT = 10259


def unreachable_probe(port: int) -> Probe:
    """
    The answer of upstream's C{HttpServer} probe of C{https://127.0.0.1:<port>/healthz} when
    nothing listens there: the HTTP prober turns the client error into a failure whose data is
    the error text (C{Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259:
    connect: connection refused}), and no error.
    """
    url = f"https://127.0.0.1:{port}/healthz"
    message = f'Get "{url}": dial tcp 127.0.0.1:{port}: connect: connection refused'

    async def probe() -> tuple[str, str, str]:
        return "False", message, ""

    return probe


def storage_probe(storage: Any) -> Probe:
    """
    Upstream C{EtcdServer.DoServerCheck} over C{storage.check_health()}: C{("True", "ok",
    "")}, or C{("False", "", <error>)} when the check fails.
    """

    async def probe() -> tuple[str, str, str]:
        check = getattr(storage, "check_health", None)
        if check is None:
            return "True", "ok", ""
        try:
            await defer.maybeDeferred(check)
        except Exception as e:  # noqa: BLE001 -- any failure is the condition's error
            return "False", "", str(e) or type(e).__name__
        return "True", "ok", ""

    return probe


def default_probes(storage: Any) -> dict[str, Probe]:
    """Upstream C{componentStatusStorage.serversToValidate}, in kubectl's usual order."""
    return {
        "scheduler": unreachable_probe(SCHEDULER_PORT),
        "controller-manager": unreachable_probe(CONTROLLER_MANAGER_PORT),
        "etcd-0": storage_probe(storage),
    }


def _row(cs: dict) -> list:
    """Upstream C{printComponentStatus}: the C{Healthy} condition's status (C{Healthy} /
    C{Unhealthy}; C{Unknown} without one), message and error."""
    status, message, error = "Unknown", "", ""
    for cond in cs.get("conditions") or []:
        if cond.get("type") == "Healthy":
            status = "Healthy" if cond.get("status") == "True" else "Unhealthy"
            message = cond.get("message") or ""
            error = cond.get("error") or ""
            break
    return [(cs.get("metadata") or {}).get("name") or "", status, message, error]


#: Upstream C{componentStatusColumnDefinitions}.
COMPONENT_STATUS_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Status", "string", "Status of the component conditions"),
        column("Message", "string", "Message of the component conditions"),
        column("Error", "string", "Error of the component conditions"),
    ],
    row=_row,
)

#: Read-only: only the name, the field selectors and the table matter.
COMPONENT_STATUS_STRATEGY = Strategy(kind="ComponentStatus", namespaced=False,
                                     table=COMPONENT_STATUS_TABLE)


@implementer(IGetter, ILister)
class ComponentStatusREST:
    """
    Upstream C{componentstatus.REST}: C{get} and C{list} only, answering fresh probes.

    @ivar spec: the C{componentstatuses} resource row.
    @ivar strategy: L{COMPONENT_STATUS_STRATEGY}.
    @ivar probes: C{{name: Probe}}, in list order.
    """

    def __init__(self, spec: ResourceSpec, probes: dict[str, Probe]) -> None:
        self.spec = spec
        self.strategy = COMPONENT_STATUS_STRATEGY
        self.probes = probes

    async def _status(self, name: str, probe: Probe) -> dict:
        """Upstream C{getComponentStatus}: one C{Healthy} condition (empty C{message} and
        C{error} omitted)."""
        status, message, error = await probe()
        cond: dict[str, Any] = {"type": "Healthy", "status": status}
        if message:
            cond["message"] = message
        if error:
            cond["error"] = error
        return {"metadata": {"name": name, "creationTimestamp": None}, "conditions": [cond]}

    async def get(self, namespace: str, name: str, resource_version: str = "") -> dict:
        """
        Fire with C{{"kind": "ComponentStatus", "apiVersion": "v1", "metadata": {"name",
        "creationTimestamp": null}, "conditions": [{"type": "Healthy", ...}]}}.

        @raise StatusError: an unknown name is upstream's plain error, a 500 whose reason is
            empty (C{StatusReasonUnknown}): C{Component not found: <name>}.
        """
        probe = self.probes.get(name)
        if probe is None:
            err = errors.make_status(500, "", f"Component not found: {name}")
            del err.status["reason"]  # StatusReasonUnknown is "", omitted on the wire
            raise err
        return {"kind": "ComponentStatus", "apiVersion": "v1",
                **await self._status(name, probe)}

    async def list(self, namespace: str, options: ListOptions) -> dict:
        """
        Fire with C{{"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {},
        "items": [...]}}: every component, filtered by the label and field selectors (upstream
        C{componentStatusPredicate}; the objects have no labels); no resourceVersion.
        """
        items = []
        for name, probe in self.probes.items():
            status = await self._status(name, probe)
            if options.predicate.matches(status):
                items.append(status)
        return {"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {},
                "items": items}
