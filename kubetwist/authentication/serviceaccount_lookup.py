# -*- test-case-name: tests.authentication.test_serviceaccount_lookup -*-
"""
The objects a service-account token names must still exist: upstream
C{pkg/serviceaccount/claims.go} (C{validator.Validate}, bound tokens) and C{legacy.go}
(C{legacyValidator.Validate} with C{lookup}, Secret-based tokens), with kube-apiserver's
getter (C{serviceaccountcontroller.NewGetterFromClient} over informers: the cache first, a
live read when the cache does not have the object).

Everything here is asynchronous: the objects are read through the storage (the Cacher in a
running server) and never block the reactor.
"""

from __future__ import annotations

import base64
from datetime import datetime, timezone
from typing import Any, Optional

from twisted.internet import defer

from kubetwist.authentication.authenticator import AuthenticationError

#: Storage key roots of the objects a token can name (upstream's; nodes are "minions").
KEY_ROOTS = {
    "serviceaccounts": "/registry/serviceaccounts",
    "secrets": "/registry/secrets",
    "pods": "/registry/pods",
    "nodes": "/registry/minions",
}

#: The label the legacy-token cleaner sets on a Secret whose token must no longer work.
LEGACY_TOKEN_INVALID_SINCE_LABEL = "kubernetes.io/legacy-token-invalid-since"

#: go-jose's C{jwt.DefaultLeeway}: objects deleted less than this long ago still count.
DELETION_LEEWAY = 60


class NotFound(Exception):
    """The object does not exist; the text is upstream's C{<resource> "<name>" not found}."""


class StorageObjectGetter:
    """
    Reads ServiceAccounts, Secrets, Pods and Nodes for the token validators (upstream
    C{ServiceAccountTokenGetter}).

    A read is served from the watch cache when the storage has one (C{resource_version}
    C{"0"}) and, when the object is not there, read again from the backend (a consistent
    read), as upstream's getter falls back from the lister to the client.
    """

    def __init__(self, storage: Any) -> None:
        """@param storage: an C{IStorage} (the Cacher in a running server)."""
        self.storage = storage

    def get(self, resource: str, namespace: str, name: str) -> "defer.Deferred[dict]":
        """
        @param resource: a key of L{KEY_ROOTS}.
        @param namespace: C{""} for nodes.
        @return: a Deferred of the object; it fails with L{NotFound}.
        """
        return defer.ensureDeferred(self._get(resource, namespace, name))

    async def _get(self, resource: str, namespace: str, name: str) -> dict:
        root = KEY_ROOTS[resource]
        key = f"{root}/{namespace}/{name}" if namespace else f"{root}/{name}"
        if not name:
            raise NotFound(f'{resource} "{name}" not found')
        obj = await self.storage.get(key, "0", ignore_not_found=True)
        if obj is None:
            obj = await self.storage.get(key, "", ignore_not_found=True)
        if obj is None:
            raise NotFound(f'{resource} "{name}" not found')
        return obj


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _deleted_before(obj: dict, cutoff: float) -> bool:
    """Whether C{metadata.deletionTimestamp} is set and earlier than C{cutoff} (seconds)."""
    ts = _meta(obj).get("deletionTimestamp")
    if not ts:
        return False
    try:
        when = datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=timezone.utc).timestamp()
    except ValueError:
        return True
    return when < cutoff


async def validate_bound(getter: StorageObjectGetter, now: float, private: dict) -> None:
    """
    Upstream C{validator.Validate}'s lookups for a bound token's C{kubernetes.io} claim
    C{private}: the ServiceAccount (name and uid), and the bound Secret, Pod or Node (a Node
    only when no Pod is named) must exist with the uids of the claims, and not have been
    deleted more than L{DELETION_LEEWAY} seconds before C{now}.

    @raise AuthenticationError: upstream's reason (logged only; the client sees 401):
        C{serviceaccounts "x" not found}, C{service account ns/x has been deleted},
        C{service account UID (a) does not match claim (b)}, C{service account token has been
        invalidated}, C{secret UID (a) does not match service account secret ref claim (b)},
        C{pod UID ...}, C{node UID ...}.
    """
    cutoff = now - DELETION_LEEWAY
    namespace = private.get("namespace") or ""
    saref = private.get("serviceaccount") or {}
    sa_name = saref.get("name", "")
    try:
        sa = await getter.get("serviceaccounts", namespace, sa_name)
    except NotFound as e:
        raise AuthenticationError(str(e)) from None
    if _deleted_before(sa, cutoff):
        raise AuthenticationError(f"service account {namespace}/{sa_name} has been deleted")
    if _meta(sa).get("uid", "") != saref.get("uid", ""):
        raise AuthenticationError(f"service account UID ({_meta(sa).get('uid', '')}) does not "
                                  f"match claim ({saref.get('uid', '')})")
    invalidated = AuthenticationError("service account token has been invalidated")
    for resource, kind, claim in (("secrets", "secret", "secret"), ("pods", "pod", "pod")):
        ref = private.get(claim)
        if not isinstance(ref, dict):
            continue
        try:
            obj = await getter.get(resource, namespace, ref.get("name", ""))
        except NotFound:
            raise invalidated from None
        if _deleted_before(obj, cutoff):
            raise invalidated
        if ref.get("uid", "") != _meta(obj).get("uid", ""):
            raise AuthenticationError(
                f"{kind} UID ({_meta(obj).get('uid', '')}) does not match service account "
                f"{kind} ref claim ({ref.get('uid', '')})")
    node = private.get("node")
    if isinstance(node, dict) and not isinstance(private.get("pod"), dict):
        try:
            obj = await getter.get("nodes", "", node.get("name", ""))
        except NotFound:
            raise invalidated from None
        if _deleted_before(obj, cutoff):
            raise invalidated
        if node.get("uid") and node["uid"] != _meta(obj).get("uid", ""):
            raise AuthenticationError(
                f"node UID ({_meta(obj).get('uid', '')}) does not match service account node "
                f"ref claim ({node['uid']})")


async def validate_legacy(getter: StorageObjectGetter, token: str, namespace: str,
                          secret_name: str, sa_name: str, sa_uid: str) -> None:
    """
    Upstream C{legacyValidator.Validate} with C{lookup}: the Secret must exist, not be
    deleting, hold exactly this token in C{data.token} (base64) and carry no
    C{kubernetes.io/legacy-token-invalid-since} label; the ServiceAccount must exist, not be
    deleting, with the claimed uid.

    @raise AuthenticationError: C{token has been invalidated}, C{token does not match server's
        copy}, C{serviceaccounts "x" not found}, C{ServiceAccount ns/x has been deleted},
        C{ServiceAccount UID (a) does not match claim (b)}, or the invalid-since text.
    """
    try:
        secret = await getter.get("secrets", namespace, secret_name)
    except NotFound:
        raise AuthenticationError("token has been invalidated") from None
    if _meta(secret).get("deletionTimestamp"):
        raise AuthenticationError("token has been invalidated")
    stored: Optional[bytes]
    try:
        stored = base64.b64decode((secret.get("data") or {}).get("token", ""), validate=True)
    except (ValueError, TypeError):
        stored = None
    if stored != token.encode():
        raise AuthenticationError("token does not match server's copy")
    try:
        sa = await getter.get("serviceaccounts", namespace, sa_name)
    except NotFound as e:
        raise AuthenticationError(str(e)) from None
    if _meta(sa).get("deletionTimestamp"):
        raise AuthenticationError(f"ServiceAccount {namespace}/{sa_name} has been deleted")
    if _meta(sa).get("uid", "") != sa_uid:
        raise AuthenticationError(f"ServiceAccount UID ({_meta(sa).get('uid', '')}) does not "
                                  f"match claim ({sa_uid})")
    if (_meta(secret).get("labels") or {}).get(LEGACY_TOKEN_INVALID_SINCE_LABEL):
        raise AuthenticationError(
            f"the token in secret {namespace}/{secret_name} for service account "
            f"{namespace}/{sa_name} has been marked invalid. Use tokens from the TokenRequest "
            f"API or manually created secret-based tokens, or remove the "
            f"'{LEGACY_TOKEN_INVALID_SINCE_LABEL}' label from the secret to temporarily allow "
            f"use of this token")


__all__ = ["KEY_ROOTS", "NotFound", "StorageObjectGetter", "validate_bound", "validate_legacy"]
