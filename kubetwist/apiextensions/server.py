# -*- test-case-name: tests.apiextensions.test_customresources -*-
"""
The apiextensions-apiserver, last of the chain: upstream C{k8s.io/apiextensions-apiserver}
(C{pkg/apiserver/apiserver.go}, C{pkg/registry/customresourcedefinition}).

It stores C{apiextensions.k8s.io/v1} CustomResourceDefinitions (validated and defaulted as
upstream; deleting one adds the C{customresourcecleanup.apiextensions.k8s.io} finalizer and a
C{Terminating} condition instead of deleting at once) and serves their custom resources: each
served version becomes an L{APIGroupVersion} installed on this server while it runs, rebuilt
whenever a CRD of its group changes and removed when none is left.  The CRD controllers
(L{kubetwist.apiextensions.controllers.CRDController}) run as the post-start hook
C{start-apiextensions-controllers}.

Wiring hooks set by the assembly: L{APIExtensionsServer.apiservice_sync} (the aggregator's
CRD registration) and L{APIExtensionsServer.conversion_client_factory} (the TLS client of
conversion webhooks).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from twisted.logger import Logger

from kubetwist.apiextensions import controllers as ctl
from kubetwist.apiextensions import openapi as crd_openapi
from kubetwist.apiextensions import validation as crdv
from kubetwist.apiextensions.conversion import converter_for
from kubetwist.apiextensions.customresource import (
    CRDGroupVersion,
    ServedVersion,
    build_version,
    kube_version_key,
)
from kubetwist.apimachinery.meta import now_rfc3339
from kubetwist.registry.generic.store import Store
from kubetwist.registry.rest import ResourceSpec, Strategy
from kubetwist.server.apigroup import APIGroupInfo, install_api_group
from kubetwist.server.genericapiserver import GenericAPIServer

log = Logger()

GROUP, VERSION = "apiextensions.k8s.io", "v1"
CRDS = ResourceSpec(GROUP, VERSION, "customresourcedefinitions", "CustomResourceDefinition",
                    "customresourcedefinition", namespaced=False, short_names=["crd", "crds"],
                    categories=["api-extensions"], subresources=["status"])


def _validate(obj: dict) -> list:
    return crdv.validate_crd(obj)


STRATEGIES = {
    "customresourcedefinitions": Strategy(
        kind="CustomResourceDefinition", group=GROUP, namespaced=False,
        default=crdv.default_crd,
        prepare_for_create=crdv.prepare_for_create, prepare_for_update=crdv.prepare_for_update,
        validate=_validate, validate_update=crdv.validate_crd_update,
        allow_unconditional_update=False),
    "customresourcedefinitions/status": Strategy(
        kind="CustomResourceDefinition", group=GROUP, namespaced=False,
        prepare_for_update=crdv.prepare_for_status_update,
        validate_update=crdv.validate_crd_status_update,
        allow_unconditional_update=False),
}


def _mark_terminating(crd: dict) -> None:
    """Upstream CRD registry C{Delete}: the cleanup finalizer and C{Terminating} (pending)."""
    meta = crd.setdefault("metadata", {})
    fins = list(meta.get("finalizers") or [])
    if ctl.FINALIZER not in fins:
        fins.append(ctl.FINALIZER)
    meta["finalizers"] = fins
    ctl.set_condition(crd, {
        "type": "Terminating", "status": "True", "reason": "InstanceDeletionPending",
        "message": "CustomResourceDefinition marked for deletion; CustomResource deletion will "
                   "begin soon"}, meta.get("deletionTimestamp", ""))


class CRDStore(Store):
    """The CRD Store: a delete never removes a CRD at once; it marks it (deletionTimestamp,
    finalizer, Terminating) and the finalizer controller finishes the job."""

    def has_pending_finalizers(self, obj: dict) -> bool:
        meta = obj.get("metadata") or {}
        return bool(meta.get("finalizers")) or not meta.get("deletionTimestamp")


class APIExtensionsServer:
    """
    The last server of the chain (its delegate is the 404).

    @ivar served: C{{crd_name: {version: ServedVersion}}}, what is being served.
    @ivar apiservice_sync: C{None} or C{async (set of (group, version)) -> None}, called with
        every CRD group-version after each change (the aggregator's C{crdregistration}).
    @ivar conversion_client_factory: C{ca_bundle -> treq HTTPClient} for conversion webhooks.
    """

    def __init__(self, storage: Any, clock: Any, admission: Any,
                 conversion_client_factory: Callable[[bytes | None], Any] | None = None,
                 min_request_timeout: int = 1800) -> None:
        self.clock = clock
        self.storage = storage
        self.admission = admission
        self.min_request_timeout = min_request_timeout
        self.server = GenericAPIServer("apiextensions-apiserver", clock, None)
        info = APIGroupInfo(GROUP, VERSION, [CRDS], STRATEGIES,
                            {"customresourcedefinitions":
                                 f"/registry/{GROUP}/customresourcedefinitions"},
                            return_deleted={"customresourcedefinitions"},
                            # upstream still encodes CRDs as v1beta1 in etcd
                            storage_versions={"customresourcedefinitions": (GROUP, "v1beta1")})
        self.stores = install_api_group(self.server, info, storage, clock, admission)
        self.crds = self._replace_store(self.stores["customresourcedefinitions"])
        self.crds.mark_deleting = _mark_terminating
        self.status_store = self.crds.for_subresource(
            STRATEGIES["customresourcedefinitions/status"])
        self.served: dict[str, dict[str, ServedVersion]] = {}
        self.crd_objects: dict[str, dict] = {}
        self._fingerprints: dict[str, str] = {}
        self.terminating: set[str] = set()
        self.group_versions: dict[tuple[str, str], CRDGroupVersion] = {}
        self._revision = 0
        self.apiservice_sync: Callable[[set], Any] | None = None
        if conversion_client_factory is None:
            from kubetwist.apiextensions.conversion import tls_http_client

            def conversion_client_factory(ca: bytes | None) -> Any:
                return tls_http_client(clock, ca)
        self.conversion_client_factory = conversion_client_factory
        self.controller = ctl.CRDController(self.crds, self.status_store, clock, self.serve,
                                            self.unserve, self.instance_store)
        self.server.add_post_start_hook("start-apiextensions-controllers", self.controller.start)

    def _replace_store(self, store: Store) -> CRDStore:
        """Swap the generic CRD Store for a L{CRDStore} in the installed handlers."""
        crd_store = CRDStore(store.spec, store.strategy, store.storage, store.clock,
                             key_root=store.key_root,
                             return_deleted_object=store.return_deleted_object)
        agv = self.server.group_versions[f"/apis/{GROUP}/{VERSION}"]
        handlers = agv.resources["customresourcedefinitions"].handlers
        handlers.store = crd_store
        handlers.subresources["status"] = crd_store.for_subresource(
            STRATEGIES["customresourcedefinitions/status"])
        self.stores["customresourcedefinitions"] = crd_store
        return crd_store

    # --- what the rest of the chain asks ---------------------------------------------------------
    def namespaced_stores(self) -> list[Store]:
        """One Store per namespaced CRD (the namespace controller empties namespaces with
        them)."""
        out = []
        for name, versions in self.served.items():
            crd = self.crd_objects.get(name) or {}
            if (crd.get("spec") or {}).get("scope") == "Namespaced" and versions:
                out.append(self._preferred(crd, versions).store)
        return out

    def instance_store(self, crd: dict) -> Store | None:
        versions = self.served.get(crd["metadata"]["name"])
        if not versions:
            return None
        return self._preferred(crd, versions).store

    @staticmethod
    def _preferred(crd: dict, versions: dict[str, ServedVersion]) -> ServedVersion:
        return versions.get(crdv.storage_version(crd)) or next(iter(versions.values()))

    def crd_group_versions(self) -> set[tuple[str, str]]:
        return set(self.group_versions)

    # --- serving ---------------------------------------------------------------------------------
    async def serve(self, crd: dict) -> None:
        """Install (or refresh) the custom resources of C{crd}: one resource per served
        version, in that version's group-version tree."""
        name = crd["metadata"]["name"]
        deleting = bool((crd.get("metadata") or {}).get("deletionTimestamp"))
        if deleting:
            self.terminating.add(name)
        else:
            self.terminating.discard(name)
        spec = crd.get("spec") or {}
        status = crd.get("status") or {}
        fingerprint = json.dumps([crd["metadata"].get("uid"), spec,
                                  status.get("acceptedNames")], sort_keys=True)
        if self._fingerprints.get(name) == fingerprint and name in self.served:
            return
        self._fingerprints[name] = fingerprint
        old_group = (self.crd_objects.get(name, {}).get("spec") or {}).get("group")
        converter = converter_for(crd, self.conversion_client_factory, self.clock)
        versions: dict[str, ServedVersion] = {}
        for vname in crdv.served_versions(crd):
            versions[vname] = build_version(
                crd, vname, self.storage, self.clock, self.admission, converter,
                lambda name=name: name in self.terminating, self.min_request_timeout)
        self.served[name] = versions
        self.crd_objects[name] = crd
        self._rebuild_group(spec.get("group", ""))
        if old_group and old_group != spec.get("group"):
            self._rebuild_group(old_group)
        await self._sync_apiservices()

    async def unserve(self, name: str) -> None:
        """Stop serving a CRD that is gone."""
        crd = self.crd_objects.pop(name, None)
        self.served.pop(name, None)
        self._fingerprints.pop(name, None)
        self.terminating.discard(name)
        if crd is not None:
            self._rebuild_group((crd.get("spec") or {}).get("group", ""))
            await self._sync_apiservices()

    async def _sync_apiservices(self) -> None:
        if self.apiservice_sync is not None:
            try:
                await self.apiservice_sync(self.crd_group_versions())
            except Exception:
                log.failure("registering APIServices of CRDs failed")

    def _rebuild_group(self, group: str) -> None:
        """Rebuild every group-version tree of C{group} from the CRDs served in it."""
        self._revision += 1
        by_version: dict[str, list[ServedVersion]] = {}
        for name, versions in self.served.items():
            crd = self.crd_objects[name]
            if (crd.get("spec") or {}).get("group") != group:
                continue
            for vname, sv in versions.items():
                by_version.setdefault(vname, []).append(sv)
        server = self.server
        for (g, v) in list(self.group_versions):
            if g == group and v not in by_version:
                del self.group_versions[(g, v)]
                server.remove_api_group_version(g, v)
        order = sorted(by_version, key=kube_version_key)
        for v in order:
            agv = CRDGroupVersion(group, v, self._revision)
            for sv in sorted(by_version[v], key=lambda s: s.spec.resource):
                res = sv.resource
                defs3 = crd_openapi.build(group, v, sv.spec.kind, sv.spec.list_kind,
                                          sv.cr.schema, v3=True, selectable=sv.cr.selectable)
                res.openapi_definitions = defs3  # type: ignore[attr-defined]
                res.openapi_v2_definitions = _LazyV2(group, v, sv)  # type: ignore[attr-defined]
                res.definition_name = crd_openapi.definition_name(  # type: ignore[attr-defined]
                    group, v, sv.spec.kind)
                res.list_definition_name = crd_openapi.definition_name(  # type: ignore[attr-defined]
                    group, v, sv.spec.list_kind)
                res.handlers.admission = self.admission
                agv.install(res)
                if sv.warnings:
                    agv.warnings[sv.spec.resource] = list(sv.warnings)
            self.group_versions[(group, v)] = agv
            server.remove_api_group_version(group, v)
            server.install_api_group_version(agv, preferred=False, restful=False)

    def set_admission(self, admission: Any) -> None:
        """The process-wide admission chain (set once the kube-apiserver has built it)."""
        self.admission = admission
        for versions in self.served.values():
            for sv in versions.values():
                sv.resource.handlers.admission = admission

    def now(self) -> str:
        return now_rfc3339(self.clock)


class _LazyV2:
    """The OpenAPI v2 definitions of one served version, built on first use (most clients
    only read v3)."""

    def __init__(self, group: str, version: str, sv: ServedVersion) -> None:
        self.args = (group, version, sv.spec.kind, sv.spec.list_kind, sv.cr.schema)
        self.selectable = sv.cr.selectable
        self._value: dict | None = None

    def get(self) -> dict:
        if self._value is None:
            self._value = crd_openapi.build(*self.args, v3=False, selectable=self.selectable)
        return self._value
