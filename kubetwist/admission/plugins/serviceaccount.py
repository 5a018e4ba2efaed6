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
from kubetwist.admission.plugins.common import forbidden
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
    @param random_suffix: the 5 characters after C{kube-api-access-} (random when C{None});
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


def _is_pod(a: Any) -> bool:
    """Upstream C{shouldIgnore} negated: pods (or their C{ephemeralcontainers}) with an
    object."""
    return a.resource.resource == "pods" and not a.resource.group \
        and a.subresource in ("", "ephemeralcontainers") and isinstance(a.object, dict)


def _is_pod_create(a: Any) -> bool:
    return _is_pod(a) and a.operation == "CREATE" and not a.subresource


#: Upstream C{EnforceMountableSecretsAnnotation} (deprecated, still honoured).
ENFORCE_MOUNTABLE_SECRETS_ANNOTATION = "kubernetes.io/enforce-mountable-secrets"


def _secret_env_refs(c: dict) -> tuple[list[tuple[str, str]], list[str]]:
    """C{([(env name, secret name)], [envFrom secret names])} of one container."""
    env = [((e or {}).get("name", ""), e["valueFrom"]["secretKeyRef"].get("name", ""))
           for e in c.get("env") or []
           if isinstance((e or {}).get("valueFrom"), dict)
           and isinstance(e["valueFrom"].get("secretKeyRef"), dict)]
    env_from = [f["secretRef"].get("name", "") for f in c.get("envFrom") or []
                if isinstance((f or {}).get("secretRef"), dict)]
    return env, env_from


def _container_secret_error(c: dict, label: str, allowed: set, sa_name: str) -> Optional[str]:
    env, env_from = _secret_env_refs(c)
    who = f"{label} {c.get('name', '')}"
    for env_name, secret in env:
        if secret not in allowed:
            return (f'{who} with envVar {env_name} referencing secret.secretName="{secret}" is '
                    f"not allowed because service account {sa_name} does not reference that "
                    "secret")
    for secret in env_from:
        if secret not in allowed:
            return (f'{who} with envFrom referencing secret.secretName="{secret}" is not '
                    f"allowed because service account {sa_name} does not reference that "
                    "secret")
    return None


def limit_secret_references(service_account: dict, pod: dict) -> Optional[str]:
    """
    Upstream C{limitSecretReferences}: the first secret the pod uses (volume, env, envFrom,
    image pull secret) that the ServiceAccount does not list, as upstream's message, or
    C{None}.
    """
    sa_name = (service_account.get("metadata") or {}).get("name", "")
    allowed = {(s or {}).get("name", "") for s in service_account.get("secrets") or []}
    spec = pod.get("spec") or {}
    for v in spec.get("volumes") or []:
        secret = (v or {}).get("secret")
        if isinstance(secret, dict) and secret.get("secretName", "") not in allowed:
            return (f'volume with secret.secretName="{secret.get("secretName", "")}" is not '
                    f"allowed because service account {sa_name} does not reference that "
                    "secret")
    for key, label in (("initContainers", "init container"), ("containers", "container")):
        for c in spec.get(key) or []:
            err = _container_secret_error(c or {}, label, allowed, sa_name)
            if err:
                return err
    pulls = {(s or {}).get("name", "") for s in service_account.get("imagePullSecrets") or []}
    for i, ref in enumerate(spec.get("imagePullSecrets") or []):
        name = (ref or {}).get("name", "")
        if name not in pulls:
            return (f'spec.imagePullSecrets[{i}].name="{name}" is not allowed because service '
                    f"account {sa_name} does not reference that imagePullSecret")
    return None


def _mirror_pod_error(pod: dict) -> Optional[str]:
    """Upstream's mirror pod restrictions: no service account, no secrets, no token
    projections."""
    spec = pod.get("spec") or {}
    if spec.get("serviceAccountName"):
        return "a mirror pod may not reference service accounts"
    uses_secrets = bool(spec.get("imagePullSecrets"))
    for v in spec.get("volumes") or []:
        v = v or {}
        if isinstance(v.get("secret"), dict) or any(
                isinstance((s or {}).get("secret"), dict)
                for s in (v.get("projected") or {}).get("sources") or []) or any(
                isinstance((v.get(k) or {}).get("secretRef"), dict)
                for k in ("azureFile", "cephfs", "cinder", "flexVolume", "rbd", "scaleIO",
                          "iscsi", "storageos", "csi")):
            uses_secrets = True
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            env, env_from = _secret_env_refs(c or {})
            if env or env_from:
                uses_secrets = True
    if uses_secrets:
        return "a mirror pod may not reference secrets"
    for v in spec.get("volumes") or []:
        for source in ((v or {}).get("projected") or {}).get("sources") or []:
            if (source or {}).get("serviceAccountToken") is not None:
                return "a mirror pod may not use ServiceAccountToken volume projections"
    return None


@implementer(IMutationInterface, IValidationInterface)
class ServiceAccount:
    """
    The C{ServiceAccount} plugin (upstream C{serviceaccount.Plugin}): on pod creates
    L{mutate_pod} with the pod's ServiceAccount (403 C{error looking up service account
    ns/name: serviceaccount "name" not found} when it is missing), then the checks of
    C{validate}: mirror pods reference no service account, secrets or token projections; a
    ServiceAccount annotated C{kubernetes.io/enforce-mountable-secrets: "true"} limits the
    secrets the pod (or, on C{ephemeralcontainers} updates, its ephemeral containers) uses.
    """

    name = "ServiceAccount"

    def __init__(self, serviceaccounts: Any) -> None:
        """
        @param serviceaccounts: the serviceaccounts storage (C{async get(namespace, name)}),
            or C{None} to skip the lookups (no ServiceAccount is then consulted).
        """
        self.serviceaccounts = serviceaccounts

    def handles(self, operation: str) -> bool:
        """Creates and updates (upstream's handler); only pod creates and ephemeral
        container updates are acted on."""
        return operation in ("CREATE", "UPDATE")

    async def _service_account(self, a: Any, name: str) -> Optional[dict]:
        if self.serviceaccounts is None:
            return None
        try:
            return await self.serviceaccounts.get(a.namespace, name)
        except errors.StatusError as e:
            if e.code != 404:
                raise
            raise forbidden(a, f'error looking up service account {a.namespace}/{name}: '
                               f'serviceaccount "{name}" not found') from None

    async def admit(self, a: Any) -> None:
        """@raise StatusError: 403 (see the class docstring)."""
        if not _is_pod_create(a):
            return
        pod = a.object
        if _MIRROR_POD_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {}):
            await self.validate(a)
            return
        spec = pod.setdefault("spec", {})
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = DEFAULT_SERVICE_ACCOUNT_NAME
        sa = await self._service_account(a, spec["serviceAccountName"])
        mutate_pod(pod, service_account=sa)
        await self.validate(a)

    async def validate(self, a: Any) -> None:
        """@raise StatusError: 403 (see the class docstring)."""
        if not _is_pod(a):
            return
        pod = a.object
        if a.operation == "UPDATE" and a.subresource == "ephemeralcontainers":
            await self._ephemeral(a, pod)
            return
        if not _is_pod_create(a):
            return
        if _MIRROR_POD_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {}):
            err = _mirror_pod_error(pod)
            if err:
                raise forbidden(a, err)
            return
        spec = pod.get("spec") or {}
        sa = await self._service_account(a, spec.get("serviceAccountName") or "default")
        if sa is not None and _enforces(sa):
            err = limit_secret_references(sa, pod)
            if err:
                raise forbidden(a, err)

    async def _ephemeral(self, a: Any, pod: dict) -> None:
        """Upstream C{limitEphemeralContainerSecretReferences}."""
        spec = pod.get("spec") or {}
        sa = await self._service_account(a, spec.get("serviceAccountName") or "default")
        if sa is None or not _enforces(sa):
            return
        allowed = {(s or {}).get("name", "") for s in sa.get("secrets") or []}
        sa_name = (sa.get("metadata") or {}).get("name", "")
        for c in spec.get("ephemeralContainers") or []:
            err = _container_secret_error(c or {}, "ephemeral container", allowed, sa_name)
            if err:
                raise forbidden(a, err)


def _enforces(service_account: dict) -> bool:
    annotations = (service_account.get("metadata") or {}).get("annotations") or {}
    return annotations.get(ENFORCE_MOUNTABLE_SECRETS_ANNOTATION) == "true"
