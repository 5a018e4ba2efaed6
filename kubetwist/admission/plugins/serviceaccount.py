# -*- test-case-name: tests.admission.test_plugins -*-
"""
The C{ServiceAccount} admission mutation of pods: upstream
C{k8s.io/kubernetes/plugin/pkg/admission/serviceaccount} (C{Admit}, C{mountServiceAccountToken},
C{TokenVolumeSource}).

On pod create: C{serviceAccountName} defaults to C{default}; unless automounting is switched
off, a projected C{kube-api-access-<5 random chars>} volume (bound token, cluster CA, namespace)
is added and mounted read-only at C{/var/run/secrets/kubernetes.io/serviceaccount} in every init
container and container that has nothing mounted there; the service account's image pull
secrets are copied when the pod has none.
"""

from __future__ import annotations

import random
from typing import Any, Optional

from zope.interface import implementer

from kubetwist.admission.interfaces import IMutationInterface, IValidationInterface
from kubetwist.runtime import errors

__all__ = [
    "ServiceAccount",
    "mutate_pod",
    "token_volume_source",
    "random_suffix",
    "DEFAULT_SERVICE_ACCOUNT_NAME",
    "DEFAULT_API_TOKEN_MOUNT_PATH",
    "SERVICE_ACCOUNT_VOLUME_NAME",
]

#: Upstream C{DefaultServiceAccountName}.
DEFAULT_SERVICE_ACCOUNT_NAME = "default"
#: Upstream C{DefaultAPITokenMountPath}.
DEFAULT_API_TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
#: Upstream C{ServiceAccountVolumeName}: the prefix of the generated volume name.
SERVICE_ACCOUNT_VOLUME_NAME = "kube-api-access"
#: Upstream C{serviceaccount.WarnOnlyBoundTokenExpirationSeconds} (one hour and 7 s).
WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 3607
_MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
# upstream utilrand's alphabet: no vowels, no confusable digits
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def random_suffix(n: int = 5, rng: Optional[random.Random] = None) -> str:
    """Upstream C{utilrand.String(n)}: C{n} characters from C{bcdfghjklmnpqrstvwxz2456789}."""
    r = rng or random.SystemRandom()
    return "".join(r.choice(_ALPHANUMS) for _ in range(n))


def token_volume_source() -> dict:
    """
    Upstream C{TokenVolumeSource()}: the projected volume source of a bound service account
    token, as the wire form: C{{"defaultMode": 420, "sources": [serviceAccountToken (path
    C{token}, 3607 s), configMap C{kube-root-ca.crt} item C{ca.crt}, downwardAPI item
    C{namespace} from C{metadata.namespace}]}}.
    """
    return {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS,
                                     "path": "token"}},
            {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}],
                           "name": "kube-root-ca.crt"}},
            {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1",
                                                     "fieldPath": "metadata.namespace"},
                                        "path": "namespace"}]}},
        ],
    }


def _should_automount(service_account: Optional[dict], pod: dict) -> bool:
    spec_value = (pod.get("spec") or {}).get("automountServiceAccountToken")
    if spec_value is not None:
        return bool(spec_value)
    if (service_account is not None
            and service_account.get("automountServiceAccountToken") is not None):
        return bool(service_account["automountServiceAccountToken"])
    return True


def _mount_service_account_token(pod: dict, suffix: Optional[str]) -> None:
    spec = pod.setdefault("spec", {})
    volumes = spec.get("volumes") or []
    token_volume_name = ""
    has_token_volume = False
    for v in volumes:
        name = (v or {}).get("name") or ""
        if name.startswith(SERVICE_ACCOUNT_VOLUME_NAME + "-"):
            token_volume_name = name
            has_token_volume = True
            break
    if not token_volume_name:
        token_volume_name = SERVICE_ACCOUNT_VOLUME_NAME + "-" + (
            suffix if suffix is not None else random_suffix())
    needs_volume = False
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            if not isinstance(c, dict):
                continue
            mounts = c.get("volumeMounts") or []
            if any((m or {}).get("mountPath") == DEFAULT_API_TOKEN_MOUNT_PATH for m in mounts):
                continue
            c["volumeMounts"] = list(mounts) + [{
                "mountPath": DEFAULT_API_TOKEN_MOUNT_PATH,
                "name": token_volume_name,
                "readOnly": True,
            }]
            needs_volume = True
    if not has_token_volume and needs_volume:
        spec["volumes"] = list(volumes) + [{"name": token_volume_name,
                                            "projected": token_volume_source()}]


def mutate_pod(pod: dict, random_suffix: Optional[str] = None,
               service_account: Optional[dict] = None) -> None:
    """
    Upstream C{serviceaccount.Plugin.Admit} for a pod create, in place.

    @param pod: the v1 Pod dict (already defaulted).
    @param random_suffix: the 5 characters after C{kube-api-access-} (random when L{None});
        tests pass a fixed value.
    @param service_account: the pod's ServiceAccount dict if the caller looked it up (its
        C{automountServiceAccountToken} and C{imagePullSecrets} are honoured); the caller
        refuses the request with upstream's
        C{error looking up service account <ns>/<name>: ...} Forbidden when it is missing.
    """
    meta = pod.get("metadata") or {}
    if _MIRROR_POD_ANNOTATION in (meta.get("annotations") or {}):
        return
    spec = pod.setdefault("spec", {})
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = DEFAULT_SERVICE_ACCOUNT_NAME
    # the deprecated field mirrors the name on the wire (v1 conversion)
    spec["serviceAccount"] = spec["serviceAccountName"]
    if _should_automount(service_account, pod):
        _mount_service_account_token(pod, random_suffix)
    if not spec.get("imagePullSecrets") and service_account is not None:
        secrets = [{"name": (s or {}).get("name", "")}
                   for s in service_account.get("imagePullSecrets") or []]
        if secrets:
            spec["imagePullSecrets"] = secrets


def _is_pod_create(a: Any) -> bool:
    return a.resource.resource == "pods" and not a.resource.group and not a.subresource \
        and a.object is not None


@implementer(IMutationInterface, IValidationInterface)
class ServiceAccount:
    """
    The C{ServiceAccount} plugin on pod creates: L{mutate_pod} in C{admit}; in C{validate}
    the pod's ServiceAccount must exist (403 C{error looking up service account ns/name:
    serviceaccount "name" not found}).
    """

    name = "ServiceAccount"

    def __init__(self, serviceaccounts: Any) -> None:
        """
        @param serviceaccounts: the serviceaccounts storage (C{async get(namespace, name)}),
            or L{None} to skip the existence check.
        """
        self.serviceaccounts = serviceaccounts

    def handles(self, operation: str) -> bool:
        """Pod creates only."""
        return operation == "CREATE"

    async def admit(self, a: Any) -> None:
        if _is_pod_create(a):
            mutate_pod(a.object)

    async def validate(self, a: Any) -> None:
        """@raise StatusError: 403 when the pod's ServiceAccount does not exist."""
        if not _is_pod_create(a) or self.serviceaccounts is None:
            return
        spec = a.object.get("spec") or {}
        sa = spec.get("serviceAccountName") or "default"
        try:
            await self.serviceaccounts.get(a.namespace, sa)
        except errors.StatusError as e:
            if e.code != 404:
                raise
            name = a.object.get("metadata", {}).get("name", "")
            raise errors.new_forbidden(
                "", "pods", name,
                f'error looking up service account {a.namespace}/{sa}: serviceaccount "{sa}" '
                f'not found',
            ) from None
