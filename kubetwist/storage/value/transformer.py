# -*- test-case-name: tests.storage.test_value -*-
"""
Value transformation at rest: upstream C{k8s.io/apiserver/pkg/storage/value/transformer.go}
(C{Transformer}, C{PrefixTransformer}, C{NewPrefixTransformers}, C{ResourceTransformers}) and the
per-resource lookup of C{pkg/server/options/encryptionconfig/config.go}
(C{transformerFromOverrides}).

A transformer turns the bytes the storage layer would write (an object's JSON) into the bytes
the backend keeps, and back.  The I{context} of a transformation is the authenticated data of
upstream's C{authenticatedDataString}: the whole backend key (C{--etcd-prefix} included) as
bytes; AES-GCM binds the ciphertext to it, so a value copied to another key does not decrypt.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from zope.interface import Interface, implementer

from kubetwist.storage.interfaces import InternalError as _StorageInternalError

#: Upstream C{identity.encryptedPrefix}: reserved for encrypted values.
ENCRYPTED_PREFIX = b"k8s:enc:"


class TransformError(Exception):
    """
    A value could not be transformed (upstream: a plain Go C{error} of a transformer); C{str()}
    is upstream's message, e.g. C{no matching prefix found} or
    C{cipher: message authentication failed}.
    """


#: Upstream C{storage.InternalError} (a storage error: the registry turns it into the API's 500
#: C{InternalError}); defined with the other storage errors, re-exported for the transformers.
InternalError = _StorageInternalError


class ITransformer(Interface):
    """Upstream C{value.Transformer}: reversible bytes <-> bytes for one resource."""

    def from_storage(data: bytes, context: bytes) -> tuple[bytes, bool]:
        """
        Upstream C{TransformFromStorage}: C{(plaintext, stale)}; C{stale} is true when the value
        was not written by the transformer that would write it now (a rotated key, a later
        provider), so an update should write it again even when unchanged.

        @param context: the authenticated data (the backend key as bytes).
        @raise TransformError: the value cannot be read.
        """

    def to_storage(data: bytes, context: bytes) -> bytes:
        """
        Upstream C{TransformToStorage}: the bytes to keep for C{data}.

        @raise TransformError: the value cannot be written.
        """


def reduce_errors(errors: list[Exception]) -> TransformError | None:
    """
    Upstream C{errors.Reduce(errors.NewAggregate(errs))}: C{None} for none, the error itself for
    one, C{[a, b]} (messages deduplicated) for several.
    """
    if not errors:
        return None
    if len(errors) == 1:
        e = errors[0]
        return e if isinstance(e, TransformError) else TransformError(str(e))
    messages: list[str] = []
    for e in errors:
        if str(e) not in messages:
            messages.append(str(e))
    if len(messages) == 1:
        return TransformError(messages[0])
    return TransformError("[" + ", ".join(messages) + "]")


@implementer(ITransformer)
class PrefixTransformers:
    """
    Upstream C{NewPrefixTransformers}: C{[(prefix, transformer), ...]} tried in order on read
    (the first whose prefix the value starts with, prefix stripped; a failing one does not stop
    later matches, so two providers of one kind can hold different keys); the first one writes,
    prefixing its output.

    A read through any but the first entry is stale.  An entry with an empty prefix (identity)
    that fails is skipped without counting its error.

    @param error: the message when nothing matches (upstream passes e.g.
        C{no matching prefix found}).
    """

    def __init__(self, error: str, transformers: Iterable[tuple[bytes, ITransformer]]) -> None:
        self.error = error
        self.transformers = list(transformers)
        if not self.transformers:
            raise ValueError("PrefixTransformers needs at least one transformer")

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        errors: list[Exception] = []
        for i, (prefix, transformer) in enumerate(self.transformers):
            if not data.startswith(prefix):
                continue
            try:
                result, stale = transformer.from_storage(data[len(prefix):], context)
            except TransformError as e:
                if prefix:
                    errors.append(e)
                continue
            return result, stale or i != 0
        reduced = reduce_errors(errors)
        raise reduced if reduced is not None else TransformError(self.error)

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        prefix, transformer = self.transformers[0]
        return prefix + transformer.to_storage(data, context)


# --- which resource a backend key belongs to ----------------------------------------------------

#: Upstream C{SpecialDefaultResourcePrefixes} (kube-apiserver's etcd layout) and the range
#: allocations: the key path after C{/registry/} -> C{(group, resource)}.
SPECIAL_KEY_PREFIXES: dict[str, tuple[str, str]] = {
    "services/specs": ("", "services"),
    "services/endpoints": ("", "endpoints"),
    "ranges/serviceips": ("", "serviceipallocations"),
    "ranges/servicenodeports": ("", "servicenodeportallocations"),
    "controllers": ("", "replicationcontrollers"),
    "minions": ("", "nodes"),
    "ingress": ("networking.k8s.io", "ingresses"),
}

#: kube-apiserver's built-in resources outside the core group, stored (as upstream) under
#: C{/registry/<resource>} without their group: resource -> group.  Custom resources, CRDs and
#: APIServices are stored under C{/registry/<group>/<resource>}; anything else is core.
BUILTIN_RESOURCE_GROUPS: dict[str, str] = {
    **dict.fromkeys(["mutatingwebhookconfigurations", "validatingwebhookconfigurations",
                     "validatingadmissionpolicies", "validatingadmissionpolicybindings",
                     "mutatingadmissionpolicies", "mutatingadmissionpolicybindings"],
                    "admissionregistration.k8s.io"),
    **dict.fromkeys(["controllerrevisions", "daemonsets", "deployments", "replicasets",
                     "statefulsets"], "apps"),
    "horizontalpodautoscalers": "autoscaling",
    **dict.fromkeys(["cronjobs", "jobs"], "batch"),
    **dict.fromkeys(["certificatesigningrequests", "clustertrustbundles"],
                    "certificates.k8s.io"),
    **dict.fromkeys(["leases", "leasecandidates"], "coordination.k8s.io"),
    "endpointslices": "discovery.k8s.io",
    **dict.fromkeys(["flowschemas", "prioritylevelconfigurations"],
                    "flowcontrol.apiserver.k8s.io"),
    "storageversions": "internal.apiserver.k8s.io",
    **dict.fromkeys(["ingressclasses", "networkpolicies", "ipaddresses", "servicecidrs"],
                    "networking.k8s.io"),
    "runtimeclasses": "node.k8s.io",
    "poddisruptionbudgets": "policy",
    **dict.fromkeys(["clusterrolebindings", "clusterroles", "rolebindings", "roles"],
                    "rbac.authorization.k8s.io"),
    **dict.fromkeys(["deviceclasses", "resourceclaims", "resourceclaimtemplates",
                     "resourceslices"], "resource.k8s.io"),
    "priorityclasses": "scheduling.k8s.io",
    **dict.fromkeys(["csidrivers", "csinodes", "csistoragecapacities", "storageclasses",
                     "volumeattachments", "volumeattributesclasses"], "storage.k8s.io"),
    "storageversionmigrations": "storagemigration.k8s.io",
}


def group_resource_for_key(key: str) -> tuple[str, str]:
    """
    The C{(group, resource)} whose objects live at C{key}, a key relative to the
    C{--etcd-prefix} (C{/secrets/ns/a}; a leading C{/registry} segment is skipped too, so
    C{/registry/secrets/ns/a} is the same), following kube-apiserver's etcd layout:
    C{/services/specs/...} is core C{services}, C{/deployments/...} is C{apps},
    C{/stable.example.com/crontabs/...} is C{crontabs.stable.example.com}.
    """
    parts = [p for p in key.split("/") if p]
    if len(parts) > 1 and parts[0] == "registry":
        parts = parts[1:]
    if not parts:
        return "", ""
    if len(parts) > 1:
        special = SPECIAL_KEY_PREFIXES.get(f"{parts[0]}/{parts[1]}")
        if special is not None:
            return special
    special = SPECIAL_KEY_PREFIXES.get(parts[0])
    if special is not None:
        return special
    if "." in parts[0] and len(parts) > 1:
        return parts[0], parts[1]
    return BUILTIN_RESOURCE_GROUPS.get(parts[0], ""), parts[0]


def format_group_resource(group: str, resource: str) -> str:
    """Upstream C{GroupResource.String()}: C{secrets}, C{deployments.apps}, C{*.apps}."""
    return f"{resource}.{group}" if group else resource


class ResourceTransformers:
    """
    Upstream C{StaticTransformers} (C{value.ResourceTransformers}): the transformer of each
    group-resource of an EncryptionConfiguration.

    Lookup order (upstream C{transformerFromOverrides}): the exact C{(group, resource)}, then
    C{(group, "*")}, then C{("*", "*")}, else the identity transformer that refuses encrypted
    values (C{identity transformer tried to read encrypted data}).

    @param transformers: C{{(group, resource): ITransformer}}; C{resource} may be C{"*"} and
        both C{"*"} for every resource.
    """

    def __init__(self, transformers: dict[tuple[str, str], ITransformer]) -> None:
        from kubetwist.storage.value.encrypt import IdentityTransformer

        self.transformers = dict(transformers)
        self._identity = IdentityTransformer()

    def transformer_for_resource(self, group: str, resource: str) -> ITransformer:
        """The transformer for objects of C{resource} in C{group} (C{""}: core)."""
        for candidate in ((group, resource), (group, "*"), ("*", "*")):
            transformer = self.transformers.get(candidate)
            if transformer is not None:
                return transformer
        return self._identity

    def transformer_for_key(self, key: str) -> ITransformer:
        """
        The transformer for the value at C{key}, relative to the C{--etcd-prefix} (see
        L{group_resource_for_key}).
        """
        return self.transformer_for_resource(*group_resource_for_key(key))

    def from_storage(self, key: str, value: bytes, prefix: str = "") -> tuple[bytes, bool]:
        """
        The stored C{value} of backend C{key} as plaintext: C{(data, stale)}.

        @param key: the whole backend key (the authenticated data).
        @param prefix: the C{--etcd-prefix} that C{key} starts with (left out of the lookup).
        @raise TransformError: it cannot be read (wrong or missing key, tampering, an encrypted
            value for a resource configured as identity).
        """
        transformer = self.transformer_for_key(_relative(key, prefix))
        return transformer.from_storage(value, key.encode("utf-8", "surrogateescape"))

    def to_storage(self, key: str, data: bytes, prefix: str = "") -> bytes:
        """The bytes to store for C{data} at backend C{key} (see L{from_storage})."""
        transformer = self.transformer_for_key(_relative(key, prefix))
        return transformer.to_storage(data, key.encode("utf-8", "surrogateescape"))


def _relative(key: str, prefix: str) -> str:
    if prefix and key.startswith(prefix + "/"):
        return key[len(prefix):]
    return key


def quote(text: str) -> str:
    """Go's C{%q} for the keys in messages (close enough for printable keys)."""
    return json.dumps(text, ensure_ascii=False)
