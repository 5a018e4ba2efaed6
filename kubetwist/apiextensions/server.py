# -*- test-case-name: tests.apiextensions.test_server -*-
"""
The apiextensions-apiserver, last of the chain: upstream C{k8s.io/apiextensions-apiserver}.

This first cut stores, validates (names) and lists C{apiextensions.k8s.io/v1}
CustomResourceDefinitions and sets their C{NamesAccepted}/C{Established} conditions (the naming
and establishing controllers, collapsed into a post-create step).  Serving the custom resources
themselves is separate work.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

from kubetwist.apimachinery import field as fe
from kubetwist.apimachinery.field import Path
from kubetwist.apimachinery.meta import now_rfc3339
from kubetwist.registry.rest import ResourceSpec, Strategy
from kubetwist.runtime import errors
from kubetwist.server.apigroup import APIGroupInfo, install_api_group
from kubetwist.server.genericapiserver import GenericAPIServer

GROUP, VERSION = "apiextensions.k8s.io", "v1"
CRDS = ResourceSpec(GROUP, VERSION, "customresourcedefinitions", "CustomResourceDefinition",
                    "customresourcedefinition", namespaced=False, short_names=["crd", "crds"],
                    categories=["api-extensions"], subresources=["status"])


def _validate(obj: dict) -> list:
    from kubetwist.apimachinery.validation import name_is_dns_subdomain, validate_object_meta

    errs = validate_object_meta(obj.get("metadata") or {}, False, name_is_dns_subdomain,
                                Path("metadata"))
    spec = obj.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group", "")
    name = (obj.get("metadata") or {}).get("name", "")
    if not group:
        errs.append(fe.required("spec.group", ""))
    elif "." not in group:
        errs.append(fe.invalid("spec.group", group, "should be a domain with at least one dot"))
    if not names.get("plural"):
        errs.append(fe.required("spec.names.plural", ""))
    if not names.get("kind"):
        errs.append(fe.required("spec.names.kind", ""))
    if names.get("plural") and group and name != f"{names['plural']}.{group}":
        errs.append(fe.invalid("metadata.name", name,
                               "must be spec.names.plural+\".\"+spec.group"))
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        errs.append(fe.not_supported("spec.scope", spec.get("scope", ""), ["Cluster", "Namespaced"]))
    versions = spec.get("versions") or []
    if not versions:
        errs.append(fe.invalid("spec.versions", versions, "must have exactly one version marked as storage version"))
    elif sum(1 for v in versions if v.get("storage")) != 1:
        errs.append(fe.invalid("spec.versions", versions,
                               "must have exactly one version marked as storage version"))
    return errs


def _prepare_create(obj: dict) -> None:
    storage = [v.get("name") for v in (obj.get("spec") or {}).get("versions") or [] if v.get("storage")]
    obj["status"] = {"storedVersions": storage[:1]} if storage else {}
    obj["metadata"]["generation"] = 1


def _prepare_update(new: dict, old: dict) -> None:
    new["status"] = copy.deepcopy(old.get("status") or {})
    if new.get("spec") != old.get("spec"):
        new["metadata"]["generation"] = old["metadata"].get("generation", 0) + 1


def _prepare_status(new: dict, old: dict) -> None:
    new["spec"] = copy.deepcopy(old.get("spec") or {})


STRATEGIES = {
    "customresourcedefinitions": Strategy(
        kind="CustomResourceDefinition", group=GROUP, namespaced=False,
        prepare_for_create=_prepare_create, prepare_for_update=_prepare_update,
        validate=_validate, validate_update=lambda n, o: _validate(n)),
    "customresourcedefinitions/status": Strategy(
        kind="CustomResourceDefinition", group=GROUP, namespaced=False,
        prepare_for_update=_prepare_status),
}


class APIExtensionsServer:
    """The last server of the chain (its delegate is the 404)."""

    def __init__(self, storage: Any, clock: Any, admission: Any) -> None:
        self.clock = clock
        self.server = GenericAPIServer("apiextensions-apiserver", clock, None)
        info = APIGroupInfo(GROUP, VERSION, [CRDS], STRATEGIES,
                            {"customresourcedefinitions": f"/registry/{GROUP}/customresourcedefinitions"})
        self.stores = install_api_group(self.server, info, storage, clock, admission)
        self.crds = self.stores["customresourcedefinitions"]
        self.crds.after_create.append(self.establish)
        self.server.add_post_start_hook("start-apiextensions-controllers", self.resume)

    def namespaced_stores(self) -> list:
        return []

    async def resume(self) -> None:
        from kubetwist.registry.generic.store import ListOptions

        lst = await self.crds.list("", ListOptions())
        for crd in lst["items"]:
            await self.establish(crd)

    async def establish(self, crd: dict) -> None:
        """Accept the names and mark the CRD Established (upstream naming + establishing)."""
        name = crd["metadata"]["name"]
        now = now_rfc3339(self.clock)

        async def mark(current: Optional[dict]) -> dict:
            if current is None:
                raise errors.new_not_found(GROUP, "customresourcedefinitions", name)
            status = current.setdefault("status", {})
            names = dict((current.get("spec") or {}).get("names") or {})
            names.setdefault("singular", names.get("kind", "").lower())
            names.setdefault("listKind", names.get("kind", "") + "List")
            status["acceptedNames"] = names
            have = {c.get("type") for c in status.get("conditions", [])}
            conds = list(status.get("conditions", []))
            if "NamesAccepted" not in have:
                conds.append({"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                              "message": "no conflicts found", "lastTransitionTime": now})
            if "Established" not in have:
                conds.append({"type": "Established", "status": "True",
                              "reason": "InitialNamesAccepted",
                              "message": "the initial names have been accepted",
                              "lastTransitionTime": now})
            status["conditions"] = conds
            return current

        status_store = self.crds.for_subresource(STRATEGIES["customresourcedefinitions/status"])
        try:
            await status_store.update("", name, mark)
        except errors.StatusError as e:
            if e.code != 404:
                raise
