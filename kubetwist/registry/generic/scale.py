# -*- test-case-name: tests.registry.test_scale -*-
"""
The C{scale} subresource: upstream C{pkg/registry/apps/deployment/storage.ScaleREST} (and its
replicaset/statefulset twins): an C{autoscaling/v1 Scale} view of C{spec.replicas},
C{status.replicas} and the selector, written back into the parent object by one
C{guaranteed_update}.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Optional

from kubetwist.apimachinery import field as fe
from kubetwist.apimachinery import patch as patchlib
from kubetwist.apimachinery.fieldmanager import owns_field
from kubetwist.apimachinery.selectors import label_selector_to_string
from kubetwist.endpoints.responses import write_object
from kubetwist.registry.generic.store import Store
from kubetwist.runtime import codec, errors


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


class ScaleREST:
    """GET/PUT/PATCH of C{<resource>/<name>/scale} over the parent's L{Store}."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.selector_of = getattr(store.strategy, "scale_selector", None)

    async def get(self, request: Any, handlers: Any, namespace: str, name: str, out: Any) -> None:
        """GET of the Scale.

        @raise StatusError: 404 C{NotFound} naming C{<resource>/scale}
            (C{deployments/scale.apps "x" not found}), as upstream's C{ScaleREST.Get}; an update
            of a missing object names the resource itself.
        """
        try:
            obj = await self.store.get(namespace, name)
        except errors.StatusError as e:
            if e.code != 404:
                raise
            spec = self.store.spec
            raise errors.new_not_found(spec.group, spec.resource + "/scale", name) from None
        write_object(request, 200, to_scale(obj, self.selector_of), out.media)

    async def _write(self, request: Any, handlers: Any, namespace: str, name: str, out: Any,
                     dry: bool, make_scale) -> None:
        admission = handlers._admission(request, namespace, name, "scale", dry)

        async def transform(current: Optional[dict]) -> dict:
            if current is None:
                raise errors.new_not_found(self.store.spec.group, self.store.spec.resource, name)
            scale = make_scale(to_scale(current, self.selector_of))
            if not isinstance(scale, dict) or scale.get("kind", "Scale") != "Scale":
                raise errors.new_bad_request("the body of the request is not a Scale")
            rv = (scale.get("metadata") or {}).get("resourceVersion")
            if rv and rv != current["metadata"].get("resourceVersion"):
                raise errors.new_conflict(self.store.spec.group, self.store.spec.resource, name,
                                          errors.OPTIMISTIC_LOCK_ERROR_MSG)
            replicas = (scale.get("spec") or {}).get("replicas", 0)
            if not isinstance(replicas, int) or isinstance(replicas, bool):
                raise errors.new_bad_request("spec.replicas must be an integer")
            if replicas < 0:
                raise errors.new_invalid("autoscaling", "Scale", name, [fe.invalid(
                    "spec.replicas", replicas, "must be greater than or equal to 0")])
            new = copy.deepcopy(current)
            new.setdefault("spec", {})["replicas"] = replicas
            recorder = getattr(handlers, "field_manager", None)
            if recorder is not None and owns_field(current, ".spec.replicas"):
                # managedFields: an Update entry with subresource "scale" (upstream ScaleHandler)
                new = recorder("scale").update(current, new, handlers.manager_name(request))
            return new

        obj, _ = await self.store.update(namespace, name, transform, admission, dry)
        write_object(request, 200, to_scale(obj, self.selector_of), out.media)

    async def update(self, request: Any, handlers: Any, namespace: str, name: str, out: Any,
                     dry: bool) -> None:
        from kubetwist.endpoints.handlers.rest import read_body
        ctype = codec.content_type_of((request.getHeader(b"content-type") or b"").decode())
        raw = read_body(request)
        try:
            body = codec.decode_body(raw, ctype or codec.JSON)
        except codec.JSONSyntaxError as e:
            raise errors.new_bad_request(
                f"the object provided is unrecognized (must be of type Scale): couldn't get "
                f"version/kind; json parse error: {e} ({codec.summarize_data(raw)})") from None
        await self._write(request, handlers, namespace, name, out, dry, lambda cur: body)

    async def patch(self, request: Any, handlers: Any, namespace: str, name: str, out: Any,
                    dry: bool, ctype: str, body: bytes) -> None:
        def apply(cur: dict) -> dict:
            if ctype == codec.JSON_PATCH:
                return patchlib.apply_json_patch(cur, body)
            doc = codec.decode_body(body, codec.YAML if ctype == codec.APPLY_PATCH_YAML
                                    else codec.JSON)
            return patchlib.apply_merge_patch(cur, codec.encode_json(doc))

        await self._write(request, handlers, namespace, name, out, dry, apply)
