# -*- test-case-name: tests.aggregator.test_server -*-
"""
The aggregator, front of the chain: upstream C{k8s.io/kube-aggregator/pkg/apiserver}
(C{apiregistration.k8s.io/v1} APIService objects) and its
C{autoregister} controller (a local APIService for every built-in group-version, labelled
C{kube-aggregator.kubernetes.io/automanaged: onstart}).  Proxying to APIServices backed by a
Service is not done yet: such APIServices are stored and reported unavailable.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

from kubetwist.apis.printers import age
from kubetwist.endpoints.discovery import GROUP_PRIORITY
from kubetwist.registry.rest import ResourceSpec, Strategy, TableConvertor
from kubetwist.runtime import errors
from kubetwist.runtime import field as fe
from kubetwist.server.apigroup import APIGroupInfo, install_api_group
from kubetwist.server.genericapiserver import GenericAPIServer

GROUP, VERSION = "apiregistration.k8s.io", "v1"
APISERVICES = ResourceSpec(GROUP, VERSION, "apiservices", "APIService", "apiservice",
                           namespaced=False, categories=["api-extensions"],
                           subresources=["status"])


def _validate(obj: dict) -> list:
    from kubetwist.apimachinery.validation import validate_object_meta
    from kubetwist.runtime.field import Path

    errs = validate_object_meta(obj.get("metadata") or {}, False, _name_ok, Path("metadata"))
    spec = obj.get("spec") or {}
    name = (obj.get("metadata") or {}).get("name", "")
    version, group = spec.get("version", ""), spec.get("group", "")
    if not version:
        errs.append(fe.required("spec.version", ""))
    expected = f"{version}.{group}"
    if name and name != expected:
        errs.append(fe.invalid("metadata.name", name,
                               f'must be `spec.version+"."+spec.group`: "{expected}"'))
    return errs


def _name_ok(name: str, prefix: bool) -> list[str]:
    """Upstream's APIService name rule: a valid path segment (C{path.IsValidPathSegmentName})."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    for bad in ("/", "%"):
        if bad in name:
            return [f"may not contain '{bad}'"]
    return []


def _default(obj: dict) -> None:
    """Upstream C{SetDefaults_ServiceReference}: C{spec.service.port} 443."""
    svc = (obj.get("spec") or {}).get("service")
    if isinstance(svc, dict) and svc.get("port") is None:
        svc["port"] = 443


def _prepare_create(obj: dict) -> None:
    obj["status"] = obj.get("status") or {}


def _prepare_update(new: dict, old: dict) -> None:
    new["status"] = copy.deepcopy(old.get("status") or {})


def _prepare_status_update(new: dict, old: dict) -> None:
    new["spec"] = copy.deepcopy(old.get("spec") or {})


def _available(obj: dict) -> str:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Available":
            if c.get("status") == "True":
                return "True"
            return f"{c.get('status')} ({c.get('reason', '')})"
    return "Unknown"


def _row(obj: dict) -> list:
    spec = obj.get("spec") or {}
    svc = spec.get("service")
    service = f"{svc.get('namespace', '')}/{svc.get('name', '')}" if svc else "Local"
    return [obj["metadata"]["name"], service, _available(obj),
            age(obj["metadata"].get("creationTimestamp"))]


APISERVICE_TABLE = TableConvertor(
    columns=[
        {"name": "Name", "type": "string", "format": "name",
         "description": "Name is the name of the apiservice.", "priority": 0},
        {"name": "Service", "type": "string", "format": "",
         "description": "The reference to the service that hosts this API endpoint.",
         "priority": 0},
        {"name": "Available", "type": "string", "format": "",
         "description": "Whether this service is available.", "priority": 0},
        {"name": "Age", "type": "string", "format": "",
         "description": "CreationTimestamp is a timestamp representing the server time when "
         "this object was created. It is not guaranteed to be set in happens-before order "
         "across separate operations. Clients may not set this value. It is represented in "
         "RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. "
         "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
         "api-conventions.md#metadata", "priority": 0},
    ],
    row=_row,
)

STRATEGIES = {
    "apiservices": Strategy(kind="APIService", group=GROUP, namespaced=False, default=_default,
                            prepare_for_create=_prepare_create, prepare_for_update=_prepare_update,
                            validate=_validate, validate_update=lambda n, o: _validate(n),
                            table=APISERVICE_TABLE, allow_unconditional_update=False),
    "apiservices/status": Strategy(kind="APIService", group=GROUP, namespaced=False,
                                   prepare_for_update=_prepare_status_update,
                                   table=APISERVICE_TABLE,
                                   allow_unconditional_update=False),
}


#: Upstream C{apiVersionPriorities} (C{pkg/controlplane/apiserver/aggregator.go}) where the
#: version priority of a local group-version is not 15.
VERSION_PRIORITY = {("", "v1"): 1, ("autoscaling", "v2"): 30,
                    ("flowcontrol.apiserver.k8s.io", "v1"): 21}


def _autoregistered_fields(group: str) -> dict:
    """The C{fieldsV1} of the APIService the C{autoregister} controller creates (its client's
    create as field manager C{kube-apiserver})."""
    spec = {"f:group": {}} if group else {}
    spec.update({"f:groupPriorityMinimum": {}, "f:version": {}, "f:versionPriority": {}})
    return {"f:metadata": {"f:labels": {".": {},
                                        "f:kube-aggregator.kubernetes.io/automanaged": {}}},
            "f:spec": spec}


class Aggregator:
    """The front server: serves APIServices and registers the local ones of the chain."""

    def __init__(self, storage: Any, clock: Any, delegate: GenericAPIServer,
                 admission: Any) -> None:
        self.clock = clock
        self.server = GenericAPIServer("kube-aggregator", clock, delegate)
        info = APIGroupInfo(GROUP, VERSION, [APISERVICES], STRATEGIES,
                            {"apiservices": f"/registry/{GROUP}/apiservices"})
        self.stores = install_api_group(self.server, info, storage, clock, admission)
        self.apiservices = self.stores["apiservices"]
        self.server.add_post_start_hook("apiservice-registration-controller", self.autoregister)

    def local_group_versions(self) -> list[tuple[str, str]]:
        out = []
        for s in self.server.chain():
            for g, versions in s.groups.items():
                for v in versions:
                    out.append((g, v))
        return out

    async def autoregister(self) -> None:
        """
        Create or refresh a local APIService for every group-version the chain serves but
        the aggregator's own (upstream C{autoregister}, with C{apiVersionPriorities}), as
        field manager C{kube-apiserver}.
        """
        from kubetwist.apimachinery.meta import now_rfc3339

        for g, v in self.local_group_versions():
            if g == GROUP:
                continue
            name = f"{v}.{g}"  # the core group's is "v1." upstream
            priority = GROUP_PRIORITY.get(g, 1000)
            desired = {
                "apiVersion": f"{GROUP}/{VERSION}", "kind": "APIService",
                "metadata": {"name": name,
                             "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"},
                             "managedFields": [{
                                 "manager": "kube-apiserver", "operation": "Update",
                                 "apiVersion": f"{GROUP}/{VERSION}",
                                 "time": now_rfc3339(self.clock), "fieldsType": "FieldsV1",
                                 "fieldsV1": _autoregistered_fields(g)}]},
                "spec": {"version": v, "groupPriorityMinimum": priority,
                         "versionPriority": VERSION_PRIORITY.get((g, v), 15)},
            }
            if g:
                desired["spec"]["group"] = g
            try:
                await self.apiservices.create("", desired)
            except errors.StatusError as e:
                if e.code != 409:
                    raise
                await self._refresh_spec(name, desired["spec"])
            await self.set_available(name)
        await self._remove_stale_onstart()

    async def _remove_stale_onstart(self) -> None:
        """APIServices labelled C{automanaged: onstart} for a group-version the chain no longer
        serves locally (or the aggregator's own) are deleted at start, as upstream's
        C{autoregister} does in its first sync."""
        from kubetwist.registry.generic.store import ListOptions

        local = {gv for gv in self.local_group_versions() if gv[0] != GROUP}
        lst = await self.apiservices.list("", ListOptions())
        for item in lst["items"]:
            meta = item.get("metadata") or {}
            spec = item.get("spec") or {}
            if (meta.get("labels") or {}).get("kube-aggregator.kubernetes.io/automanaged") \
                    != "onstart" or (spec.get("group", ""), spec.get("version", "")) in local:
                continue
            try:
                await self.apiservices.delete("", meta["name"])
            except errors.StatusError as e:
                if e.code != 404:
                    raise

    async def _refresh_spec(self, name: str, spec: dict) -> None:
        """An existing automanaged APIService whose spec differs from what the chain wants is
        updated (upstream C{autoregister} checks its APIServices against the desired ones)."""
        async def fix(current: dict | None) -> dict:
            if current is None:
                raise errors.new_not_found(GROUP, "apiservices", name)
            labels = (current.get("metadata") or {}).get("labels") or {}
            if labels.get("kube-aggregator.kubernetes.io/automanaged") == "onstart":
                current["spec"] = {**(current.get("spec") or {}), **spec}
            return current

        current = await self.apiservices._get_or_none(self.apiservices.key("", name))
        if current is not None and {k: (current.get("spec") or {}).get(k) for k in spec} != spec:
            await self.apiservices.update("", name, fix)

    async def sync_crd_apiservices(self, desired: set) -> None:
        """
        Upstream C{crdregistration} + C{autoregister} (sync mode): an APIService
        C{<version>.<group>} for every CRD group-version in C{desired} (labelled
        C{kube-aggregator.kubernetes.io/automanaged: "true"}, group priority 1000, version
        priority 100), and the removal of such APIServices whose group-version is gone.
        """
        from kubetwist.registry.generic.store import ListOptions

        label = "kube-aggregator.kubernetes.io/automanaged"
        for g, v in sorted(desired):
            name = f"{v}.{g}"
            want = {"group": g, "version": v, "groupPriorityMinimum": 1000,
                    "versionPriority": 100}

            async def fix(current: Optional[dict], want: dict = want, name: str = name) -> dict:
                if current is None:
                    raise errors.new_not_found(GROUP, "apiservices", name)
                current.setdefault("metadata", {}).setdefault("labels", {})[label] = "true"
                current["spec"] = {**(current.get("spec") or {}), **want}
                return current

            try:
                await self.apiservices.create("", {
                    "apiVersion": f"{GROUP}/{VERSION}", "kind": "APIService",
                    "metadata": {"name": name, "labels": {label: "true"}}, "spec": want})
            except errors.StatusError as e:
                if e.code != 409:
                    raise
                await self.apiservices.update("", name, fix)
            await self.set_available(name)
        local = set(self.local_group_versions())
        lst = await self.apiservices.list("", ListOptions())
        for item in lst["items"]:
            meta = item.get("metadata") or {}
            spec = item.get("spec") or {}
            gv = (spec.get("group", ""), spec.get("version", ""))
            if (meta.get("labels") or {}).get(label) == "true" and gv not in desired \
                    and gv not in local:
                try:
                    await self.apiservices.delete("", meta["name"])
                except errors.StatusError as e:
                    if e.code != 404:
                        raise

    async def set_available(self, name: str) -> None:
        from kubetwist.apimachinery.meta import now_rfc3339

        async def mark(current: Optional[dict]) -> dict:
            if current is None:
                raise errors.new_not_found(GROUP, "apiservices", name)
            status = current.setdefault("status", {})
            conds = [c for c in status.get("conditions", []) if c.get("type") != "Available"]
            old = [c for c in status.get("conditions", []) if c.get("type") == "Available"]
            if old and old[0].get("status") == "True":
                return current
            conds.append({"type": "Available", "status": "True", "reason": "Local",
                          "message": "Local APIServices are always available",
                          "lastTransitionTime": now_rfc3339(self.clock)})
            status["conditions"] = conds
            return current

        status_store = self.apiservices.for_subresource(STRATEGIES["apiservices/status"])
        await status_store.update("", name, mark)
