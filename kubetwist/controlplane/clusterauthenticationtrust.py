# -*- test-case-name: tests.controlplane.test_clusterauthenticationtrust -*-
"""
The C{kube-system/extension-apiserver-authentication} ConfigMap: upstream
C{pkg/controlplane/controller/clusterauthenticationtrust} (the
C{start-cluster-authentication-info-controller} post-start hook).

Extension API servers read it to trust what kube-apiserver trusts (see
L{kubetwist.extension.delegated}): C{client-ca-file} (the CAs client certificates are
verified against: kubetwist's generated CA and C{--client-ca-file}) and, when
C{--requestheader-client-ca-file} is set, C{requestheader-client-ca-file} with the
C{requestheader-username-headers}, C{-uid-headers}, C{-group-headers},
C{-extra-headers-prefix} and C{-allowed-names} lists as JSON arrays.  What is already
published is kept and combined with this server's values, as upstream does for several
kube-apiservers sharing one cluster: header lists unioned in order, certificates unioned
(duplicates and expired ones dropped) and re-encoded as PEM.  The namespace is created when
missing.  The hook writes once at start (upstream also re-syncs on a period and on changes).
"""

from __future__ import annotations

import copy
import datetime
import json
from dataclasses import dataclass, field
from typing import Any, Optional

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from kubetwist.runtime import errors

__all__ = ["ClusterAuthenticationInfo", "HOOK_NAME", "configmap_data", "from_options",
           "sync_configmap"]

#: Upstream's post-start hook name.
HOOK_NAME = "start-cluster-authentication-info-controller"
NAMESPACE = "kube-system"
NAME = "extension-apiserver-authentication"


@dataclass
class ClusterAuthenticationInfo:
    """
    Upstream C{ClusterAuthenticationInfo}.

    @ivar client_ca: PEM bundle of the client CAs (C{b""}: none).
    @ivar requestheader_ca: PEM bundle of C{--requestheader-client-ca-file} (C{b""}: none).
    """

    client_ca: bytes = b""
    requestheader_ca: bytes = b""
    username_headers: list[str] = field(default_factory=list)
    uid_headers: list[str] = field(default_factory=list)
    group_headers: list[str] = field(default_factory=list)
    extra_header_prefixes: list[str] = field(default_factory=list)
    allowed_names: list[str] = field(default_factory=list)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def from_options(options: Any, client_ca_files: list[str]) -> ClusterAuthenticationInfo:
    """
    The info of kube-apiserver's checked flags (C{options}: flag name -> value, lists already
    split) and the client CA files the x509 authenticator trusts.

    @raise OSError: a CA file cannot be read.
    """
    o = options
    info = ClusterAuthenticationInfo(client_ca=b"".join(_read(p) for p in client_ca_files))
    if o.get("requestheader-client-ca-file"):
        info.requestheader_ca = _read(o["requestheader-client-ca-file"])
        info.username_headers = list(o.get("requestheader-username-headers") or [])
        info.uid_headers = list(o.get("requestheader-uid-headers") or [])
        info.group_headers = list(o.get("requestheader-group-headers") or [])
        info.extra_header_prefixes = list(o.get("requestheader-extra-headers-prefix") or [])
        info.allowed_names = list(o.get("requestheader-allowed-names") or [])
    return info


def _unique(*lists: list[str]) -> list[str]:
    """Upstream C{combineUniqueStringSlices}."""
    out: list[str] = []
    for values in lists:
        for v in values:
            if v not in out:
                out.append(v)
    return out


def _combine_certificates(*bundles: bytes, now: datetime.datetime) -> bytes:
    """Upstream C{combineCertLists}: every certificate once, expired ones dropped, PEM."""
    seen: list[bytes] = []
    for bundle in bundles:
        if not bundle:
            continue
        try:
            certs = x509.load_pem_x509_certificates(bundle)
        except ValueError:
            certs = []
        for cert in certs:
            if cert.not_valid_after_utc < now:
                continue
            der = cert.public_bytes(serialization.Encoding.DER)
            if der not in seen:
                seen.append(der)
    return b"".join(x509.load_der_x509_certificate(d).public_bytes(serialization.Encoding.PEM)
                    for d in seen)


def _json_list(value: Any) -> list[str]:
    try:
        parsed = json.loads(value) if value else []
    except ValueError:
        return []
    return [v for v in parsed if isinstance(v, str)] if isinstance(parsed, list) else []


def info_of(data: dict) -> ClusterAuthenticationInfo:
    """Upstream C{getClusterAuthenticationInfoFor}: the info a ConfigMap's C{data} holds."""
    return ClusterAuthenticationInfo(
        client_ca=(data.get("client-ca-file") or "").encode(),
        requestheader_ca=(data.get("requestheader-client-ca-file") or "").encode(),
        username_headers=_json_list(data.get("requestheader-username-headers")),
        uid_headers=_json_list(data.get("requestheader-uid-headers")),
        group_headers=_json_list(data.get("requestheader-group-headers")),
        extra_header_prefixes=_json_list(data.get("requestheader-extra-headers-prefix")),
        allowed_names=_json_list(data.get("requestheader-allowed-names")))


def combine(existing: ClusterAuthenticationInfo, required: ClusterAuthenticationInfo,
            now: datetime.datetime) -> ClusterAuthenticationInfo:
    """Upstream C{combinedClusterAuthenticationInfo}: C{existing}'s values first."""
    return ClusterAuthenticationInfo(
        client_ca=_combine_certificates(existing.client_ca, required.client_ca, now=now),
        requestheader_ca=_combine_certificates(existing.requestheader_ca,
                                               required.requestheader_ca, now=now),
        username_headers=_unique(existing.username_headers, required.username_headers),
        uid_headers=_unique(existing.uid_headers, required.uid_headers),
        group_headers=_unique(existing.group_headers, required.group_headers),
        extra_header_prefixes=_unique(existing.extra_header_prefixes,
                                      required.extra_header_prefixes),
        allowed_names=_unique(existing.allowed_names, required.allowed_names))


def configmap_data(info: ClusterAuthenticationInfo) -> dict[str, str]:
    """Upstream C{getConfigMapDataFor}: the ConfigMap's C{data} for C{info}."""
    data: dict[str, str] = {}
    if info.client_ca:
        data["client-ca-file"] = info.client_ca.decode()
    if info.requestheader_ca:
        data["requestheader-username-headers"] = json.dumps(info.username_headers,
                                                            separators=(",", ":"))
        data["requestheader-uid-headers"] = json.dumps(info.uid_headers, separators=(",", ":"))
        data["requestheader-group-headers"] = json.dumps(info.group_headers,
                                                         separators=(",", ":"))
        data["requestheader-extra-headers-prefix"] = json.dumps(info.extra_header_prefixes,
                                                                separators=(",", ":"))
        data["requestheader-client-ca-file"] = info.requestheader_ca.decode()
        data["requestheader-allowed-names"] = json.dumps(info.allowed_names,
                                                         separators=(",", ":"))
    return data


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


async def sync_configmap(configmaps: Any, namespaces: Any, info: ClusterAuthenticationInfo,
                         now: Optional[datetime.datetime] = None) -> Optional[dict]:
    """
    Upstream C{Controller.syncConfigMap}: write the combined info, creating the namespace when
    missing; nothing is written when the ConfigMap already says it all.

    @param configmaps: the C{configmaps} Store; C{namespaces} the C{namespaces} Store.
    @return: the written ConfigMap, or C{None} when nothing changed.
    """
    now = now or _utcnow()
    try:
        await namespaces.create("", {"apiVersion": "v1", "kind": "Namespace",
                                     "metadata": {"name": NAMESPACE}})
    except errors.StatusError as e:
        if e.code != 409:
            raise
    try:
        current = await configmaps.get(NAMESPACE, NAME)
    except errors.StatusError as e:
        if e.code != 404:
            raise
        current = None
    if current is not None:
        existing = current.get("data") or {}
        if configmap_data(combine(info_of(existing), info, now)) == existing:
            return None
    changed = False

    async def reconcile(current: Optional[dict]) -> dict:
        nonlocal changed
        out = copy.deepcopy(current) if current is not None else {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": NAME, "namespace": NAMESPACE}}
        existing = (current or {}).get("data") or {}
        data = configmap_data(combine(info_of(existing), info, now))
        changed = data != existing
        if data:
            out["data"] = data
        return out

    written, _ = await configmaps.update(NAMESPACE, NAME, reconcile, force_allow_create=True)
    return written if changed else None
