# -*- test-case-name: tests.registry.test_scale -*-
"""
The C{scale} subresource: upstream C{pkg/registry/apps/deployment/storage.ScaleREST} (and its
replicaset/statefulset twins): an C{autoscaling/v1 Scale} view of C{spec.replicas},
C{status.replicas} and the selector, written back into the parent object by one
C{guaranteed_update}.  One implementation for built-in kinds and custom resources.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Optional

from zope.interface import implementer

from kubetwist.apimachinery import patch as patchlib
from kubetwist.apimachinery.fieldmanager import owns_field
from kubetwist.apimachinery.selectors import label_selector_to_string
from kubetwist.registry.generic.store import Admission, Store
from kubetwist.registry.rest import IGetter, IPatcher, IUpdater
from kubetwist.runtime import codec, errors
from kubetwist.runtime import field as fe
from kubetwist.runtime.decode import Expect


def to_scale(obj: dict, selector_of: Optional[Callable[[dict], str]] = None) -> dict:
    """C{{"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata", "spec": {"replicas"},
    "status": {"replicas", "selector"}}} of a workload object; C{selector_of} prints the
    selector when it is not a C{LabelSelector} (a ReplicationController's label map)."""
    meta = obj.get("metadata", {})
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    out_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                      "creationTimestamp") if k in meta}
    scale_status: dict[str, Any] = {"replicas": status.get("replicas", 0)}
    sel = spec.get("selector")
    if selector_of is not None:
        text = selector_of(obj)
        if text:
            scale_status["selector"] = text
    elif isinstance(sel, dict):
        text = label_selector_to_string(sel)
        if text:
            scale_status["selector"] = text
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": out_meta,
        "spec": {"replicas": spec.get("replicas", 0)},
        "status": scale_status,
    }


@implementer(IGetter, IPatcher, IUpdater)
class ScaleREST:
    """
    The C{scale} subresource of a resource (upstream C{ScaleREST} of deployments, replica
    sets, stateful sets, replication controllers, and C{customresource.ScaleREST}): an
    C{autoscaling/v1 Scale} view of the parent, read with L{get} and written with L{update}.
    The handlers decode the body (or patch the current Scale) and hand this object the new
    Scale; it never sees the request.

    Subclasses change where the replicas and selector live (L{to_scale}, L{set_replicas}):
    L{kubetwist.apiextensions.customresource.CustomResourceScaleREST}.

    @cvar expect: the body's kind (L{kubetwist.runtime.decode.Expect}).
    @cvar patch_types: the patch media types the subresource takes.
    """

    expect = Expect("autoscaling", ("v1",), "Scale")
    patch_types = codec.PATCH_TYPES

    def __init__(self, store: Store) -> None:
        self.store = store
        self.selector_of = getattr(store.strategy, "scale_selector", None)

    def to_scale(self, obj: dict) -> dict:
        """The C{Scale} of a parent object."""
        return to_scale(obj, self.selector_of)

    def set_replicas(self, obj: dict, replicas: int) -> None:
        """Write C{replicas} into the parent object (C{spec.replicas})."""
        obj.setdefault("spec", {})["replicas"] = replicas

    #: Where the replicas live in the parent, for managed-fields ownership (C{owns_field}).
    replicas_path = ".spec.replicas"
    #: A negative count is refused here (built-ins); custom resources leave it to the custom
    #: resource's own validation, as upstream's C{customresource.ScaleREST}.
    validate_replicas = True
    #: A GET of a missing parent names C{<resource>/scale} (built-ins' C{ScaleREST.Get});
    #: custom resources name the resource itself.
    not_found_as_scale = True

    async def get(self, namespace: str, name: str) -> dict:
        """The current C{Scale}.

        @raise StatusError: 404 C{NotFound} naming C{<resource>/scale}
            (C{deployments/scale.apps "x" not found}), as upstream's C{ScaleREST.Get}; an update
            of a missing object names the resource itself.
        """
        try:
            obj = await self.store.get(namespace, name)
        except errors.StatusError as e:
            if e.code != 404 or not self.not_found_as_scale:
                raise
            spec = self.store.spec
            raise errors.new_not_found(spec.group, spec.resource + "/scale", name) from None
        return self.to_scale(obj)

    async def update(self, namespace: str, name: str, make_scale: Callable[[dict], dict],
                     admission: Any, dry_run: bool,
                     record: Optional[Callable[[dict, dict], dict]] = None) -> dict:
        """
        Write a new C{Scale}: C{make_scale(current Scale)} (the decoded body, or the current
        Scale patched) sets the parent's replicas in one C{guaranteed_update}.

        @param record: C{(current, new) -> new} recording managed fields (an Update entry with
            subresource C{scale}, as upstream's C{ScaleHandler}).
        @return: the C{Scale} of the updated parent.
        @raise StatusError: 404 NotFound (the parent), 409 Conflict (a stale
            C{metadata.resourceVersion}), 422 Invalid (negative C{spec.replicas}), 400 (a
            C{spec.replicas} that is no integer, for bodies that skipped typed decoding).
        """
        spec = self.store.spec

        async def transform(current: Optional[dict]) -> dict:
            if current is None:
                raise errors.new_not_found(spec.group, spec.resource, name)
            scale = make_scale(self.to_scale(current))
            if not isinstance(scale, dict) or scale.get("kind", "Scale") != "Scale":
                raise errors.new_bad_request("the body of the request is not a Scale")
            rv = (scale.get("metadata") or {}).get("resourceVersion")
            if rv and rv != current["metadata"].get("resourceVersion"):
                raise errors.new_conflict(spec.group, spec.resource, name,
                                          errors.OPTIMISTIC_LOCK_ERROR_MSG)
            replicas = (scale.get("spec") or {}).get("replicas", 0)
            if replicas is None:
                replicas = 0
            if not isinstance(replicas, int) or isinstance(replicas, bool):
                raise errors.new_bad_request("spec.replicas must be an integer")
            if replicas < 0 and self.validate_replicas:
                raise errors.new_invalid("autoscaling", "Scale", name, [fe.invalid(
                    "spec.replicas", replicas, "must be greater than or equal to 0")])
            new = copy.deepcopy(current)
            self.set_replicas(new, replicas)
            # managedFields: an Update entry with subresource "scale" only when someone owns
            # the replicas already (upstream ScaleHandler and skipNonAppliedManager)
            if record is not None and owns_field(current, self.replicas_path):
                return record(current, new)
            return new

        obj, _ = await self.store.update(namespace, name, transform,
                                         self._scale_admission(admission), dry_run)
        return self.to_scale(obj)

    def _scale_admission(self, admission: Any) -> Any:
        """
        Admission on the C{Scale} objects, not the parent (upstream's
        C{toScaleUpdateValidation} and the handler's admission on the decoded Scale): the new
        and old parents become Scales; replicas a mutating plugin set are written back.
        """
        if admission is None:
            return admission

        async def mutate(operation: str, obj: Optional[dict], old: Optional[dict]) -> None:
            scale = self.to_scale(obj) if obj is not None else None
            await admission.mutate(operation, scale,
                                   self.to_scale(old) if old is not None else None)
            if scale is not None and obj is not None:
                replicas = (scale.get("spec") or {}).get("replicas", 0)
                if isinstance(replicas, int) and not isinstance(replicas, bool) and \
                        replicas != self.to_scale(obj).get("spec", {}).get("replicas", 0):
                    self.set_replicas(obj, replicas)

        async def validate(operation: str, obj: Optional[dict], old: Optional[dict]) -> None:
            await admission.validate(operation, self.to_scale(obj) if obj is not None else None,
                                     self.to_scale(old) if old is not None else None)

        return Admission(mutate=mutate, validate=validate)


def patch_scale(scale: dict, ctype: str, body: bytes) -> Any:
    """
    A C{Scale} patched by a body of type C{ctype}: a JSON patch, or a merge of the (JSON or,
    for apply, YAML) document; a Scale has no lists, so strategic merge and apply merge as a
    merge patch does.
    """
    if ctype == codec.JSON_PATCH:
        return patchlib.apply_json_patch(scale, body)
    doc = codec.decode_body(body, codec.YAML if ctype == codec.APPLY_PATCH_YAML else codec.JSON)
    return patchlib.apply_merge_patch(scale, codec.encode_json(doc))
