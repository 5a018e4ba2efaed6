# -*- test-case-name: tests.aggregator.test_server -*-
"""
The aggregator, front of the chain: upstream C{k8s.io/kube-aggregator/pkg/apiserver}
(C{apiregistration.k8s.io/v1} APIService objects) and its
C{autoregister} controller (a local APIService for every built-in group-version, labelled
C{kube-aggregator.kubernetes.io/automanaged: onstart}).

An APIService with C{spec.service} takes its group-version out of the local chain: the
aggregator's director proxies every request under C{/apis/<group>/<version>} to it
(L{kubetwist.aggregator.proxy}) once the availability controller
(L{kubetwist.aggregator.controllers}) has found it C{Available} (503 C{service unavailable}
before), lists its group in C{/apis} (legacy, from the APIServices, and aggregated, from the
backend's discovery) in C{groupPriorityMinimum}/C{versionPriority} order, and merges its
OpenAPI documents into C{/openapi/v2} and C{/openapi/v3}.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Optional

from twisted.internet import defer
from twisted.logger import Logger
from twisted.web.server import NOT_DONE_YET

from kubetwist.apis.printers import age
from kubetwist.endpoints.discovery import GROUP_PRIORITY
from kubetwist.registry.rest import ResourceSpec, Strategy, TableConvertor
from kubetwist.runtime import errors
from kubetwist.runtime import field as fe
from kubetwist.server.apigroup import APIGroupInfo, install_api_group
from kubetwist.server.genericapiserver import Director, GenericAPIServer

log = Logger()

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


@dataclass
class AggregatorConfig:
    """
    The aggregator's flags.

    @ivar routing: upstream C{--enable-aggregator-routing} (kubetwist's default C{True}: a
        Service resolves to an endpoint's address, not to its ClusterIP).
    @ivar client_certificate: the C{PrivateCertificate} of C{--proxy-client-cert-file} and
        C{--proxy-client-key-file}, or C{None}.
    @ivar reactor: the reactor the proxy and the discovery checks connect with (C{None}: the
        aggregator's clock, which must then be a reactor).
    @ivar header_names: the L{HeaderNames <kubetwist.aggregator.proxy.HeaderNames>} of the
        user (default upstream's C{X-Remote-*}).
    """

    routing: bool = True
    client_certificate: Any = None
    reactor: Any = None
    header_names: Any = None


def load_proxy_client_certificate(cert_file: str, key_file: str) -> Any:
    """The front-proxy client certificate of C{--proxy-client-cert-file} and
    C{--proxy-client-key-file} as a C{PrivateCertificate} (C{None} when neither is given).

    @raise ValueError: only one of the two is given, or they cannot be read."""
    from twisted.internet import ssl

    if not cert_file and not key_file:
        return None
    if not cert_file or not key_file:
        raise ValueError("--proxy-client-cert-file and --proxy-client-key-file must be "
                         "given together")
    with open(cert_file, "rb") as f:
        cert = f.read()
    with open(key_file, "rb") as f:
        key = f.read()
    return ssl.PrivateCertificate.loadPEM(cert + b"\n" + key)


_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def kube_version_key(name: str) -> tuple:
    """apimachinery C{CompareKubeAwareVersionStrings} as a sort key, highest first."""
    m = _KUBE_VERSION.match(name)
    if not m:
        return (3, 0, 0, name)
    rank = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (rank, -int(m.group(1)), -int(m.group(3) or 0), name)


def _sorted_group_versions(apiservices: list[dict]) -> list[tuple[str, int, list[str]]]:
    """
    Upstream C{SortedByGroupAndVersion}: C{[(group, priority, [versions])]}, groups by
    their highest C{groupPriorityMinimum} (then name), versions by C{versionPriority}
    (then kube-aware order).
    """
    by_group: dict[str, list[dict]] = {}
    for o in apiservices:
        by_group.setdefault((o.get("spec") or {}).get("group", ""), []).append(o)
    out = []
    for g, items in by_group.items():
        prio = max(int((o.get("spec") or {}).get("groupPriorityMinimum") or 0) for o in items)
        items.sort(key=lambda o: (-int((o.get("spec") or {}).get("versionPriority") or 0),
                                  kube_version_key((o.get("spec") or {}).get("version", ""))))
        out.append((g, prio, [(o.get("spec") or {}).get("version", "") for o in items]))
    out.sort(key=lambda t: (-t[1], t[0]))
    return out


class _RemoteMixin:
    """Proxying, availability and the discovery merge (methods of L{Aggregator})."""

    def configure(self: Any, stores: Any, config: Optional[AggregatorConfig] = None,
                  checker: Any = None, proxy: Any = None) -> None:
        """
        Wire the informers, the availability controller and the proxy (called by
        C{assemble} once the kube-apiserver's stores exist).

        @param stores: C{{(group, resource): Store}} of the chain.
        @param checker: a discovery checker (default L{DiscoveryChecker
            <kubetwist.aggregator.controllers.DiscoveryChecker>}).
        @param proxy: the proxy (default L{Proxy <kubetwist.aggregator.proxy.Proxy>}).
        """
        from kubetwist.aggregator.controllers import (
            AvailabilityController,
            DiscoveryChecker,
            Informers,
        )
        from kubetwist.aggregator.proxy import Proxy
        from kubetwist.apimachinery.meta import now_rfc3339

        self.config = config or AggregatorConfig()
        reactor = self.config.reactor or self.clock
        all_stores = dict(stores)
        all_stores[(GROUP, "apiservices")] = self.apiservices
        self.informers = Informers(all_stores, self.clock, self._apiservice_event,
                                   self._service_event)
        resolver = self.informers.resolver(self.config.routing)
        self.resolver = resolver
        status_store = self.apiservices.for_subresource(STRATEGIES["apiservices/status"])

        async def update_status(name: str, transform: Any) -> Any:
            async def t(current: Optional[dict]) -> dict:
                return transform(current)

            return await status_store.update("", name, t)

        self.availability = AvailabilityController(
            self.clock, self.informers, update_status, lambda: now_rfc3339(self.clock),
            checker or DiscoveryChecker(reactor, resolver.resolve,
                                        self.config.client_certificate),
            self.documents)
        from kubetwist.aggregator.proxy import HeaderNames

        self.proxy = proxy or Proxy(reactor, resolver.resolve, self.config.client_certificate,
                                    self.availability.backend_failed,
                                    header_names=self.config.header_names or HeaderNames())

    def _apiservice_event(self: Any, key: Optional[tuple]) -> None:
        self._remote_index = None
        if key is not None and self.informers.apiservice(key[1]) is None:
            self._forget_documents()
        if self.availability is not None:
            self.availability.apiservice_changed(key)

    def _forget_documents(self: Any) -> None:
        live = set(self.remote_index())
        for gv in list(self.documents.discovery) + list(self.documents.v3) + \
                list(self.documents.v2):
            if gv not in live:
                self.documents.forget(gv)

    def _service_event(self: Any, key: Optional[tuple]) -> None:
        if self.availability is not None:
            self.availability.service_changed(key)

    async def _start_informers(self: Any) -> None:
        if self.informers is not None:
            await self.informers.start()

    async def _start_availability(self: Any) -> None:
        if self.informers is not None:
            await self.informers.start()
            if not self.availability.running:
                self.availability.start()

    async def _synced(self: Any) -> None:
        if self.informers is not None:
            await self.informers.start()

    def remote_index(self: Any) -> dict:
        """C{{(group, version): APIService}} of the APIServices with C{spec.service}."""
        if self._remote_index is None:
            index = {}
            for o in (self.informers.remote_apiservices() if self.informers else []):
                spec = o.get("spec") or {}
                index[(spec.get("group", ""), spec.get("version", ""))] = o
            self._remote_index = index
        return self._remote_index

    def remote_groups(self: Any) -> list[tuple[str, int, list[str]]]:
        """The groups served (at least partly) by extension servers, in upstream's order:
        C{[(group, groupPriorityMinimum, [versions by versionPriority])]}."""
        return _sorted_group_versions(list(self.remote_index().values()))

    def proxy_request(self: Any, request: Any, apiservice: dict) -> None:
        """Upstream C{proxyHandler.ServeHTTP} for a remote APIService."""
        from kubetwist.aggregator.controllers import is_available
        from kubetwist.aggregator.proxy import target_of, write_text_error
        from kubetwist.endpoints.request import context_of

        if not is_available(apiservice) or self.proxy is None:
            write_text_error(request, 503, "service unavailable")
            return
        user = context_of(request).user
        if user is None:
            write_text_error(request, 500, "missing user")
            return

        def failed(f: Any) -> None:
            log.failure("proxying {path} failed", f, path=request.path)
            if not request.startedWriting:
                write_text_error(request, 503, f.getErrorMessage())

        defer.ensureDeferred(
            self.proxy.serve(request, target_of(apiservice), user)).addErrback(failed)

    # --- discovery -------------------------------------------------------------------------------
    def install_discovery(self: Any, front: GenericAPIServer) -> None:
        """C{/apis}, legacy and aggregated, over the local chain and the extension servers
        (upstream's C{apisHandler} and aggregated discovery manager)."""
        from kubetwist.endpoints import discovery, negotiation
        from kubetwist.endpoints.responses import funnel, write_body, write_object
        from kubetwist.runtime import codec

        async def apis(request: Any) -> None:
            out = negotiation.negotiate_discovery(request)
            agg = out.version if out.kind == "aggregated" else ""
            local = front.all_groups()
            remote = self.remote_groups()
            priority = {g: discovery.GROUP_PRIORITY.get(g, 1000) for g in local}
            versions: dict[str, list[str]] = {g: list(vs) for g, vs in local.items()}
            for g, prio, vs in remote:
                priority[g] = max(priority.get(g, 0), prio) if g in local else prio
                versions[g] = vs + [v for v in versions.get(g, []) if v not in vs]
            order = sorted(versions, key=lambda g: (-priority[g], g))
            if not agg:
                groups = []
                for g in order:
                    grp = discovery.api_group(g, versions[g])
                    groups.append({k: grp[k] for k in ("name", "versions", "preferredVersion")})
                write_object(request, 200, {"kind": "APIGroupList", "apiVersion": "v1",
                                            "groups": groups}, out.media)
                return
            gvs = front.all_group_versions()
            local_doc = {g: {v: gvs[f"/apis/{g}/{v}"].discovery() for v in vs
                             if f"/apis/{g}/{v}" in gvs} for g, vs in local.items()}
            doc = discovery.aggregated_discovery(local_doc, agg)
            items = {(it["metadata"].get("name") or ""): it for it in doc["items"]}
            index = self.remote_index()
            from kubetwist.aggregator.controllers import is_available

            for g, _, vs in remote:
                entries = []
                for v in vs:
                    found = self.documents.version_discovery((g, v))
                    if found is None:
                        continue
                    entries.append({**found, "freshness": "Current"
                                    if is_available(index[(g, v)]) else "Stale"})
                if not entries:
                    continue
                item = items.get(g)
                if item is None:
                    items[g] = {"metadata": {"name": g, "creationTimestamp": None},
                                "versions": entries}
                else:
                    have = {e["version"] for e in entries}
                    item["versions"] = entries + [e for e in item["versions"]
                                                  if e["version"] not in have]
            doc["items"] = [items[g] for g in order if g in items]
            request.setHeader(b"Vary", b"Accept")
            write_body(request, 200, codec.encode(doc, out.media, out.pretty),
                       out.content_type)

        front.mux["/apis"] = funnel(apis)
        front.remote_openapi = self.documents


class Aggregator(_RemoteMixin):
    """The front server: serves APIServices, registers the local ones of the chain, and
    proxies the remote ones (see the module docstring)."""

    def __init__(self, storage: Any, clock: Any, delegate: GenericAPIServer,
                 admission: Any) -> None:
        self.clock = clock
        self.server = GenericAPIServer("kube-aggregator", clock, delegate)
        info = APIGroupInfo(GROUP, VERSION, [APISERVICES], STRATEGIES,
                            {"apiservices": f"/registry/{GROUP}/apiservices"})
        self.stores = install_api_group(self.server, info, storage, clock, admission)
        self.apiservices = self.stores["apiservices"]
        self.config = AggregatorConfig()
        self.informers: Any = None
        self.availability: Any = None
        self.proxy: Any = None
        from kubetwist.aggregator.controllers import RemoteDocuments

        self.documents = RemoteDocuments()
        self._remote_index: Optional[dict] = None
        self.server._director = AggregatorDirector(self.server, self)
        self.server.add_post_start_hook("start-kube-aggregator-informers",
                                        self._start_informers)
        self.server.add_post_start_hook("apiservice-status-local-available-controller",
                                        self._start_availability)
        self.server.add_post_start_hook("apiservice-status-remote-available-controller",
                                        self._start_availability)
        self.server.add_post_start_hook("apiservice-registration-controller", self.autoregister)
        self.server.add_post_start_hook("apiservice-discovery-controller", self._synced)
        self.server.add_post_start_hook("apiservice-openapi-controller", self._synced)
        self.server.add_post_start_hook("apiservice-openapiv3-controller", self._synced)

    def local_group_versions(self) -> list[tuple[str, str]]:
        """C{(group, version)} of everything the local chain serves."""
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
        """Mark a local APIService C{Available} (C{Local})."""
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


class AggregatorDirector(Director):
    """
    The front server's director: requests for the group-version of a remote APIService go
    to its extension server (upstream registers a proxy handler at C{/apis/<g>/<v>} for every
    APIService), C{/apis/<group>} of a group served only remotely is answered from the
    APIServices (upstream C{apiGroupHandler}); everything else as any server's director.
    """

    def __init__(self, server: GenericAPIServer, aggregator: Any) -> None:
        super().__init__(server)
        self.aggregator = aggregator

    def render(self, request: Any) -> Any:
        """Proxy, answer C{/apis/<remote group>}, or hand on to the generic director."""
        path = request.path.decode("utf-8", "replace")
        segments = path.split("/")
        if len(segments) >= 3 and segments[1] == "apis" and self.aggregator.informers:
            index = self.aggregator.remote_index()
            if index:
                if len(segments) >= 4 and (segments[2], segments[3]) in index:
                    self.aggregator.proxy_request(request, index[(segments[2], segments[3])])
                    return NOT_DONE_YET
                if (len(segments) == 3 or (len(segments) == 4 and segments[3] == "")) \
                        and segments[2] not in self.server.all_groups():
                    for g, _, versions in self.aggregator.remote_groups():
                        if g == segments[2]:
                            from kubetwist.endpoints import discovery
                            from kubetwist.server.genericapiserver import _write_discovery

                            _write_discovery(request, discovery.api_group(g, versions))
                            return NOT_DONE_YET
        return super().render(request)
