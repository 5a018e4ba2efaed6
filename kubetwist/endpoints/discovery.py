# -*- test-case-name: tests.endpoints.test_discovery -*-
"""
Discovery documents: upstream C{k8s.io/apiserver/pkg/endpoints/discovery} (legacy
C{APIVersions}, C{APIGroupList}, C{APIGroup}, C{APIResourceList}) and
C{discovery/aggregated} (C{apidiscovery.k8s.io/v2} C{APIGroupDiscoveryList}, KEP-3352).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from typing import Any, Iterable

from kubetwist.registry.rest import ResourceSpec

#: Group priorities of kube-aggregator's C{apiVersionPriorities}: order of C{/apis}.
GROUP_PRIORITY = {
    "": 18000,
    "apiregistration.k8s.io": 18000,
    "apps": 17800,
    "events.k8s.io": 17750,
    "authentication.k8s.io": 17700,
    "authorization.k8s.io": 17600,
    "autoscaling": 17500,
    "batch": 17400,
    "certificates.k8s.io": 17300,
    "networking.k8s.io": 17200,
    "policy": 17100,
    "rbac.authorization.k8s.io": 17000,
    "storage.k8s.io": 16800,
    "admissionregistration.k8s.io": 16700,
    "apiextensions.k8s.io": 16700,
    "scheduling.k8s.io": 16600,
    "coordination.k8s.io": 16500,
    "node.k8s.io": 16300,
    "discovery.k8s.io": 16200,
    "flowcontrol.apiserver.k8s.io": 16100,
    "internal.apiserver.k8s.io": 16000,
    "resource.k8s.io": 15900,
}

SUBRESOURCE_VERBS = {
    "status": ["get", "patch", "update"],
    "scale": ["get", "patch", "update"],
    "finalize": ["update"],
    "binding": ["create"],
    "eviction": ["create"],
    "token": ["create"],
    "ephemeralcontainers": ["get", "patch", "update"],
    "resize": ["get", "patch", "update"],
    "log": ["get"],
    "exec": ["create", "get"],
    "attach": ["create", "get"],
    "portforward": ["create", "get"],
    "proxy": ["create", "delete", "get", "patch", "update"],
    "approval": ["get", "patch", "update"],
}

#: Subresources whose kind is not the parent's: C{sub} or C{resource/sub} -> C{(group, version,
#: kind)}; group and version only where upstream's storage names them
#: (C{GroupVersionKindProvider}: scale, eviction, token), else empty.
SUBRESOURCE_KINDS = {
    "scale": ("autoscaling", "v1", "Scale"),
    "binding": ("", "", "Binding"),
    "eviction": ("policy", "v1", "Eviction"),
    "token": ("authentication.k8s.io", "v1", "TokenRequest"),
    "log": ("", "", "Pod"),
    "exec": ("", "", "PodExecOptions"),
    "attach": ("", "", "PodAttachOptions"),
    "portforward": ("", "", "PodPortForwardOptions"),
    "pods/proxy": ("", "", "PodProxyOptions"),
    "nodes/proxy": ("", "", "NodeProxyOptions"),
    "services/proxy": ("", "", "ServiceProxyOptions"),
}


def subresource_kind(resource: str, sub: str, kind: str) -> tuple[str, str, str]:
    """The C{(group, version, kind)} of C{resource/sub}; the parent's C{kind} by default."""
    return SUBRESOURCE_KINDS.get(f"{resource}/{sub}") or SUBRESOURCE_KINDS.get(sub) or (
        "", "", kind)


#: The C{storage_version} of a resource that has none (upstream: its storage is no
#: C{StorageVersionProvider}, e.g. C{componentstatuses}): discovery shows no
#: C{storageVersionHash}.
NO_STORAGE_VERSION = ("", "")


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """Upstream C{discovery.StorageVersionHash}: base64 of the first 8 bytes of
    sha256(C{group/version/kind})."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


@dataclass
class DiscoveredResource:
    """A resource as discovery shows it: its spec and the verbs its storage provides."""

    spec: ResourceSpec
    verbs: list[str]
    subresources: dict[str, list[str]] = field(default_factory=dict)
    storage_version: tuple[str, str] | None = None


def api_resource_list(group_version: str, resources: Iterable[DiscoveredResource],
                      legacy: bool = False) -> dict:
    """
    C{APIResourceList} of one group-version (C{GET /apis/<g>/<v>}): resources and
    subresources (C{pods/status}) sorted by name, verbs sorted.
    """
    out: list[dict] = []
    for r in resources:
        s = r.spec
        entry: dict[str, Any] = {
            "name": s.resource,
            "singularName": s.singular,
            "namespaced": s.namespaced,
            "kind": s.kind,
            "verbs": sorted(r.verbs),
        }
        if s.short_names:
            entry["shortNames"] = list(s.short_names)
        if s.categories:
            entry["categories"] = list(s.categories)
        if r.verbs and r.storage_version != NO_STORAGE_VERSION:
            sg, sv = r.storage_version or (s.group, s.version)
            entry["storageVersionHash"] = storage_version_hash(sg, sv, s.kind)
        out.append(entry)
        for sub, verbs in r.subresources.items():
            sub_entry: dict[str, Any] = {
                "name": f"{s.resource}/{sub}",
                "singularName": "",
                "namespaced": s.namespaced,
            }
            g, v, k = subresource_kind(s.resource, sub, s.kind)
            if g:
                sub_entry["group"] = g
            if v:
                sub_entry["version"] = v
            sub_entry["kind"] = k
            sub_entry["verbs"] = sorted(verbs)
            out.append(sub_entry)
    out.sort(key=lambda e: e["name"])
    doc: dict[str, Any] = {"kind": "APIResourceList"}
    if not legacy:
        doc["apiVersion"] = "v1"
    doc["groupVersion"] = group_version
    doc["resources"] = out
    return doc


def api_group(name: str, versions: list[str]) -> dict:
    """C{APIGroup} (C{GET /apis/<g>}); the first version is the preferred one."""
    vs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": name,
        "versions": vs,
        "preferredVersion": vs[0],
    }


def sort_groups(groups: dict[str, list[str]]) -> list[str]:
    """Group names in kube-aggregator's order: priority descending, then name."""
    return sorted(groups, key=lambda g: (-GROUP_PRIORITY.get(g, 1000), g))


def api_group_list(groups: dict[str, list[str]]) -> dict:
    """C{APIGroupList} (C{GET /apis}) from C{{group: [versions, preferred first]}}."""
    items = []
    for g in sort_groups(groups):
        grp = api_group(g, groups[g])
        items.append({k: grp[k] for k in ("name", "versions", "preferredVersion")})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": items}


def api_versions(server_address: str) -> dict:
    """C{APIVersions} (C{GET /api})."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


AGGREGATED_MEDIA = "application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList"


def _discovery_resource(r: DiscoveredResource) -> dict:
    s = r.spec
    entry: dict[str, Any] = {
        "resource": s.resource,
        "responseKind": {"group": "", "version": "", "kind": s.kind},
        "scope": "Namespaced" if s.namespaced else "Cluster",
        "singularResource": s.singular,
        "verbs": sorted(r.verbs),
    }
    if s.short_names:
        entry["shortNames"] = list(s.short_names)
    if s.categories:
        entry["categories"] = list(s.categories)
    subs = []
    for sub, verbs in sorted(r.subresources.items()):
        g, v, k = subresource_kind(s.resource, sub, s.kind)
        subs.append({
            "subresource": sub,
            "responseKind": {"group": g, "version": v, "kind": k},
            "verbs": sorted(verbs),
        })
    if subs:
        entry["subresources"] = subs
    return entry


def aggregated_discovery(
    groups: dict[str, dict[str, list[DiscoveredResource]]], api_version: str = "v2"
) -> dict:
    """
    C{APIGroupDiscoveryList} for C{/api} (only the core group) or C{/apis}:
    C{groups} is C{{group: {version: [resources]}}} with versions in preference order.
    """
    items = []
    for g in sort_groups({k: list(v) for k, v in groups.items()}):
        versions = []
        for v, resources in groups[g].items():
            versions.append({
                "version": v,
                "resources": [_discovery_resource(r) for r in sorted(
                    resources, key=lambda r: r.spec.resource)],
                "freshness": "Current",
            })
        # ObjectMeta.name is omitempty: the core group's entry has only the timestamp
        meta: dict[str, Any] = {"name": g} if g else {}
        meta["creationTimestamp"] = None
        items.append({"metadata": meta, "versions": versions})
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{api_version}",
        "metadata": {},
        "items": items,
    }
