# -*- test-case-name: tests.endpoints.test_handlers -*-
"""
Resource request handlers: upstream C{k8s.io/apiserver/pkg/endpoints/handlers}
(C{get.go}, C{create.go}, C{update.go}, C{patch.go}, C{delete.go}, C{watch.go}).

Each handler: negotiate output, decode input, run the Store, transform (Table,
PartialObjectMetadata), encode.  Errors go through L{kubetwist.endpoints.responses.funnel}.
"""

from __future__ import annotations

import base64
import copy
import random
from dataclasses import dataclass
from typing import Any, Optional

from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from kubetwist.apimachinery import fieldmanager as fmlib
from kubetwist.apimachinery import patch as patchlib
from kubetwist.apimachinery.fieldmanager import typed as fmtyped
from kubetwist.endpoints import table as tablelib
from kubetwist.endpoints.handlers import options as opts
from kubetwist.endpoints.responses import write_object
from kubetwist.registry.generic.store import Store
from kubetwist.runtime import codec, errors, strict
from kubetwist.runtime import types as typetables
from kubetwist.storage.interfaces import INITIAL_EVENTS_END_ANNOTATION, WatchEvent

#: Upstream C{metav1.InitialEventsListBlueprintAnnotationKey}.
INITIAL_EVENTS_LIST_BLUEPRINT_ANNOTATION = "kubernetes.io/initial-events-list-blueprint"

log = Logger()

#: Largest request body accepted, in bytes (upstream C{MaxRequestBodyBytes}, 3 MiB).
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024


@dataclass
class Output:
    """The negotiated response form: C{kind} in C{object table partial}."""

    kind: str
    media: str
    content_type: str
    version: str = "v1"


def negotiate(request: Any, allow_transform: bool = True) -> Output:
    """
    Choose the response form from C{Accept} (upstream C{negotiation.NegotiateOutputMediaType}
    with C{as=Table} / C{as=PartialObjectMetadata[List]} of C{meta.k8s.io}).

    @raise StatusError: 406 NotAcceptable when nothing acceptable is offered.
    """
    header = request.getHeader(b"accept")
    ranges = codec.parse_accept(header.decode("latin-1") if header else None)
    protobuf_ok = False
    for r in ranges:
        if r.type == codec.PROTOBUF:
            protobuf_ok = protobuf_ok or not r.as_kind
            continue
        media = codec.YAML if r.type == codec.YAML else codec.JSON
        if r.type not in (codec.JSON, codec.YAML, "*/*", "application/*"):
            continue
        if r.as_kind:
            if not allow_transform or r.group != "meta.k8s.io" or r.version not in ("v1", "v1beta1"):
                continue
            if r.as_kind == "Table":
                return Output(
                    "table", media,
                    f"{media};as=Table;v={r.version};g=meta.k8s.io", r.version,
                )
            if r.as_kind in ("PartialObjectMetadata", "PartialObjectMetadataList"):
                return Output(
                    "partial", media,
                    f"{media};as={r.as_kind};v={r.version};g=meta.k8s.io", r.version,
                )
            continue
        return Output("object", media, media)
    if protobuf_ok:
        return Output("object", codec.PROTOBUF, codec.PROTOBUF)
    raise errors.new_not_acceptable(
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )


def read_body(request: Any) -> bytes:
    body = request.content.read() if request.content is not None else b""
    if len(body) > MAX_REQUEST_BODY_BYTES:
        raise errors.new_request_entity_too_large("limit is 3145728")
    return body


def _query(request: Any) -> dict[str, list[str]]:
    return request.kube_info.query


class ResourceHandlers:
    """
    The handlers of one resource (and its subresources) in one group-version.

    @ivar store: the resource's L{Store}.
    @ivar subresources: C{{"status": Store, "scale": ScaleREST, ...}}.
    @ivar admission: the server's L{kubetwist.admission.chain.AdmissionChain}.
    @ivar clock: C{IReactorTime} for watch timeouts and bookmarks.
    """

    def __init__(self, store: Store, subresources: dict[str, Any], admission: Any,
                 clock: Any, min_request_timeout: int = 1800,
                 patch_meta: Any = None) -> None:
        self.store = store
        self.spec = store.spec
        self.subresources = subresources
        self.admission = admission
        self.clock = clock
        self.min_request_timeout = min_request_timeout
        self.patch_meta = patch_meta

    # --- helpers ------------------------------------------------------------------------------
    def _admission(self, request: Any, namespace: str, name: str, subresource: str, dry: bool):
        return self.admission.for_request(
            self.spec, subresource, namespace, name, getattr(request, "kube_user", None), dry
        )

    def _respond(self, request: Any, code: int, obj: dict, out: Output,
                 convertor_store: Optional[Store] = None) -> None:
        """Write one object in the negotiated form."""
        if out.kind == "table" and obj.get("kind") != "Status":
            store = convertor_store or self.store
            obj = tablelib.to_table(
                [obj], store.strategy.table, None,
                opts.first(_query(request), "includeObject", "Metadata"), out.version,
            )
            write_object(request, code, obj, out.media, out.content_type)
            return
        if out.kind == "partial" and obj.get("kind") != "Status":
            write_object(request, code, tablelib.partial_object_metadata(obj, out.version),
                         out.media, out.content_type)
            return
        write_object(request, code, obj, out.media)

    def decode_object(self, request: Any, body: bytes) -> dict:
        """
        L{_decode_object}, then strict decoding as upstream's C{create.go}/C{update.go} with
        the request's C{fieldValidation}: the unknown fields of a built-in kind (found from its
        type table, L{kubetwist.runtime.strict}) are always dropped, as Go's decoder drops them;
        unknown and duplicate fields are refused under C{Strict} (400 BadRequest C{Pod in
        version "v1" cannot be handled as a Pod: strict decoding error: unknown field
        "spec.foo", duplicate field "metadata.name"}), become C{Warning}s under C{Warn} (the
        default) and are ignored under C{Ignore}.  A kind without a type table falls back to
        C{Strategy.unknown_fields}.

        @raise StatusError: the above 400; 422 Invalid C{CreateOptions}/C{UpdateOptions} for
            another C{fieldValidation} value.
        """
        obj = self._decode_object(request, body)
        type_name = self.kind_type_name()
        finder = getattr(self.store.strategy, "unknown_fields", None)
        if type_name is None and finder is None:
            return obj
        from kubetwist.apiextensions.customresource import field_validation_mode

        mode = field_validation_mode(request)
        if type_name is None:
            errs = [f'unknown field "{p}"' for p in finder(obj)]
        else:
            ctype = codec.content_type_of(
                (request.getHeader(b"content-type") or b"").decode("latin-1")) or codec.JSON
            errs = []
            if mode != "Ignore" and ctype != codec.PROTOBUF:
                errs = codec.strict_body_errors(body, ctype, type_name)
            strict.prune_unknown(obj, type_name)
        if errs and mode == "Strict":
            kind, version = obj.get("kind") or self.spec.kind, self.spec.version
            raise errors.new_bad_request(
                f'{kind} in version "{version}" cannot be handled as a {self.spec.kind}: '
                f"{strict.strict_decoding_message(errs)}")
        if errs and mode == "Warn":
            _add_warnings(request, strict.warnings_of(errs))
        return obj

    def kind_type_name(self) -> Optional[str]:
        """The full type-table name of this resource's kind (C{io.k8s.api.core.v1.Pod}), or
        C{None} (custom resources, kinds without a table)."""
        return typetables.lookup_kind(self.spec.group, self.spec.version, self.spec.kind)

    def _decode_object(self, request: Any, body: bytes) -> dict:
        """
        Decode a create/update body and check its kind against the URL (upstream create.go).

        @raise StatusError: 400 BadRequest (malformed, missing kind, other version or kind),
            415 UnsupportedMediaType.
        """
        ctype = codec.content_type_of(
            (request.getHeader(b"content-type") or b"application/json").decode("latin-1")
        )
        if ctype == codec.PROTOBUF:
            obj = self.decode_protobuf(body)
            self.check_kind(obj, body)
            obj.setdefault("metadata", {})
            if obj["metadata"] is None:
                obj["metadata"] = {}
            return obj
        if ctype not in (codec.JSON, codec.YAML, "application/x-yaml", "text/yaml", ""):
            raise errors.new_unsupported_media_type(ctype)
        try:
            obj = codec.decode_body(body, ctype or codec.JSON)
        except codec.JSONSyntaxError as e:
            raise errors.new_bad_request(
                f"the object provided is unrecognized (must be of type {self.spec.kind}): "
                f"couldn't get version/kind; json parse error: {e} "
                f"({codec.summarize_data(body)})"
            ) from None
        if not isinstance(obj, dict):
            raise errors.new_bad_request(
                "couldn't get version/kind; json parse error: json: cannot unmarshal "
                f"{type(obj).__name__} into Go value of type struct {{ APIVersion string "
                '"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
            )
        self.check_kind(obj, body)
        if "metadata" in obj and not isinstance(obj["metadata"], dict) and obj["metadata"] is not None:
            raise errors.new_bad_request(
                f"{self.spec.kind} in version \"{self.spec.version}\" cannot be handled as a "
                f"{self.spec.kind}: json: cannot unmarshal into Go struct field "
                f"{self.spec.kind}.metadata of type v1.ObjectMeta"
            )
        if obj.get("metadata") is None:
            obj["metadata"] = {}
        return obj

    def decode_protobuf(self, body: bytes) -> dict:
        """A protobuf body (C{application/vnd.kubernetes.protobuf}) as its JSON-shaped dict.

        @raise StatusError: 400 BadRequest (malformed), 415 UnsupportedMediaType (a kind with
            no protobuf definition, e.g. a custom resource)."""
        from kubetwist.runtime import protobuf

        try:
            return protobuf.decode(body, default_gvk=(self.spec.group, self.spec.version,
                                                      self.spec.kind))
        except protobuf.UnsupportedKindError:
            raise errors.make_status(
                415, "UnsupportedMediaType",
                f"the body of the request was in an unknown format - accepted media types "
                f"include: application/json, application/yaml (protobuf is not supported for "
                f"{self.spec.kind})") from None

    def check_kind(self, obj: dict, body: bytes = b"") -> None:
        kind = obj.get("kind")
        api_version = obj.get("apiVersion")
        if kind is not None and not isinstance(kind, str) or (
            api_version is not None and not isinstance(api_version, str)
        ):
            raise errors.new_bad_request("couldn't get version/kind; json parse error: "
                                         "kind and apiVersion must be strings")
        if not kind:
            # upstream defaults the kind from the URL when the body omits it
            obj["kind"] = self.spec.kind
            kind = self.spec.kind
        if not api_version:
            obj["apiVersion"] = self.spec.api_version
            api_version = self.spec.api_version
        if api_version != self.spec.api_version:
            raise errors.new_bad_request(
                f"the API version in the data ({api_version}) does not match the expected API "
                f"version ({self.spec.api_version})"
            )
        if kind != self.spec.kind:
            version = api_version.rsplit("/", 1)[-1]
            raise errors.new_bad_request(
                f'{kind} in version "{version}" cannot be handled as a {self.spec.kind}: '
                f'no kind "{kind}" is registered for the internal version of group '
                f'"{self.spec.group}" in scheme'
            )

    def _default(self, store: Store, obj: dict) -> None:
        store.strategy.default(obj)

    # --- GET -----------------------------------------------------------------------------------
    async def get(self, request: Any, namespace: str, name: str) -> None:
        out = negotiate(request)
        obj = await self.store.get(namespace, name, opts.first(_query(request), "resourceVersion"))
        self._respond(request, 200, obj, out)

    async def list(self, request: Any, namespace: str) -> None:
        q = _query(request)
        if opts.bool_param(q, "watch"):
            return await self.watch(request, namespace)
        out = negotiate(request)
        options = opts.list_options(q, self.store.strategy)
        lst = await self.store.list(namespace, options)
        if out.kind == "table":
            result = tablelib.to_table(
                lst["items"], self.store.strategy.table, lst["metadata"],
                opts.first(q, "includeObject", "Metadata"), out.version,
                api_version=self.spec.api_version, kind=self.spec.kind,
            )
            write_object(request, 200, result, out.media, out.content_type)
        elif out.kind == "partial":
            write_object(request, 200, tablelib.partial_object_metadata_list(lst, out.version),
                         out.media, out.content_type)
        else:
            write_object(request, 200, lst, out.media)

    # --- WATCH ---------------------------------------------------------------------------------
    def list_blueprint(self) -> bytes:
        """
        The empty list of this resource as the watch encodes it, for the
        C{kubernetes.io/initial-events-list-blueprint} annotation of the initial-events-end
        bookmark (upstream C{watchListTransformer}): C{{"kind": "ConfigMapList", "apiVersion":
        "v1", "metadata": {}, "items": null}} and a newline.
        """
        return codec.encode_json({"kind": self.spec.list_kind,
                                  "apiVersion": self.spec.api_version, "metadata": {},
                                  "items": None}) + b"\n"

    async def watch(self, request: Any, namespace: str, name: str = "") -> None:
        """
        Serve a watch as a chunked stream of C{{"type", "object"}} JSON lines (upstream
        C{serveWatch}); ends at C{timeoutSeconds} or a random server timeout in
        [min-request-timeout, 2*min-request-timeout) seconds, or when the client goes.

        Over a storage that serves watch options (the Cacher) the storage sends the bookmarks
        and the watch-list's initial events, and the watch is registered as the transport's
        producer: a client that stops reading pauses it, and one that falls too far behind
        has its stream ended (it re-lists).  Otherwise this handler emulates watch-list (a
        list, then a watch from its resourceVersion) and minute bookmarks.
        """
        q = _query(request)
        out = negotiate(request)
        options = opts.list_options(q, self.store.strategy)
        if name:
            options.name = name
        timeout = options.timeout_seconds
        if not timeout or timeout <= 0:
            timeout = int(self.min_request_timeout * (1 + random.random()))
        cached = opts.storage_serves_watch_options(self.store)
        initial: list[dict] = []
        initial_rv = ""
        if options.send_initial_events and not cached:
            lst = await self.store.list(namespace, opts.ListOptions(
                predicate=options.predicate, resource_version=options.resource_version
                if options.resource_version not in ("", "0") else "",
                resource_version_match="NotOlderThan" if options.resource_version not in ("", "0") else "",
                name=options.name,
            ))
            initial_rv = lst["metadata"]["resourceVersion"]
            initial = lst["items"]
            options.resource_version = initial_rv
        if cached:
            w = self.store.watch(namespace, options, timeout=timeout)
        else:
            w = self.store.watch(namespace, options)
        media = out.media if out.media == codec.JSON else codec.JSON
        request.setResponseCode(200)
        request.setHeader(b"Content-Type", out.content_type.encode() if out.kind == "table"
                          else media.encode())
        request.setHeader(b"Cache-Control", b"no-cache, private")
        request.write(b"")
        last_rv = [initial_rv]
        first_table = [True]

        def gone() -> bool:
            return request.finished or getattr(request, "_disconnected", False)

        def emit(ev_type: str, obj: dict) -> None:
            if gone():
                return
            if out.kind == "table" and ev_type in ("ADDED", "MODIFIED", "DELETED"):
                obj = tablelib.to_table(
                    [obj], self.store.strategy.table, {"resourceVersion": obj.get(
                        "metadata", {}).get("resourceVersion", "")},
                    opts.first(q, "includeObject", "Metadata"), out.version,
                    with_headers=first_table[0],
                )
                first_table[0] = False
            elif out.kind == "partial" and ev_type in ("ADDED", "MODIFIED", "DELETED"):
                obj = tablelib.partial_object_metadata(obj, out.version)
            request.write(codec.encode_json({"type": ev_type, "object": obj}) + b"\n")

        def bookmark(meta: dict) -> None:
            annotations = meta.get("annotations") or {}
            if annotations.get(INITIAL_EVENTS_END_ANNOTATION) == "true":
                meta = {**meta, "annotations": {
                    **annotations, INITIAL_EVENTS_LIST_BLUEPRINT_ANNOTATION:
                        base64.b64encode(self.list_blueprint()).decode()}}
            emit("BOOKMARK", {"kind": self.spec.kind, "apiVersion": self.spec.api_version,
                              "metadata": meta})

        def periodic_bookmark() -> None:
            if last_rv[0]:
                bookmark({"resourceVersion": last_rv[0]})

        for item in initial:
            emit("ADDED", self.store._typed(item))
        if options.send_initial_events and not cached:
            bookmark({"resourceVersion": initial_rv,
                      "annotations": {INITIAL_EVENTS_END_ANNOTATION: "true"}})

        def on_event(ev: WatchEvent) -> None:
            if ev.type == "ERROR":
                emit("ERROR", ev.object)
                w.stop()
                return
            meta = (ev.object or {}).get("metadata") or {}
            rv = meta.get("resourceVersion")
            if rv:
                last_rv[0] = rv
            if ev.type == "BOOKMARK":
                if options.allow_watch_bookmarks:
                    bookmark({k: v for k, v in meta.items()
                              if k in ("resourceVersion", "annotations")})
                return
            emit(ev.type, self.store._typed(ev.object))

        timer = self.clock.callLater(timeout, w.stop)
        bookmarks = None
        if options.allow_watch_bookmarks and not cached:
            bookmarks = LoopingCall(periodic_bookmark)
            bookmarks.clock = self.clock
            bookmarks.start(60, now=False)
        producing = False
        if cached and not gone():
            try:
                request.registerProducer(w, True)
                producing = True
            except (RuntimeError, ValueError, AttributeError):
                producing = False
        request.notifyFinish().addBoth(lambda _: w.stop())
        try:
            await w.subscribe(on_event)
        finally:
            if producing and request.producer is w and request.channel is not None:
                request.unregisterProducer()
            if timer.active():
                timer.cancel()
            if bookmarks is not None and bookmarks.running:
                bookmarks.stop()
            w.stop()
        if not gone():
            request.finish()

    # --- field management (server-side apply) -------------------------------------------------
    def field_manager_schema(self) -> fmtyped.Node:
        """The structured-merge schema of this resource's kind (a deduced schema for a kind
        without a type table)."""
        node = fmtyped.for_kind(self.spec.group, self.spec.version, self.spec.kind)
        return node if node is not None else fmtyped.for_structural(None)

    def field_manager(self, subresource: str = "") -> fmlib.FieldManager:
        """
        The L{fmlib.FieldManager} of this resource (or of its C{status}/C{scale} subresource),
        built once: reset fields are C{status} on the main resource of a kind with a status
        subresource and C{spec} on C{/status} (upstream strategies' C{GetResetFields}).
        """
        cache = self.__dict__.setdefault("_field_managers", {})
        fm = cache.get(subresource)
        if fm is None:
            gv = f"{self.spec.group}/{self.spec.version}" if self.spec.group else self.spec.version
            zero = fmtyped.zero_value(self.spec.group, self.spec.version, self.spec.kind) or {
                "apiVersion": gv, "kind": self.spec.kind}
            reset = None
            if subresource == "status":
                reset = fmlib.Set.of((("f", "spec"),))
            elif not subresource and "status" in self.subresources:
                reset = fmlib.Set.of((("f", "status"),))
            fm = cache[subresource] = fmlib.FieldManager(
                self.field_manager_schema(), gv, self.clock, subresource, reset, zero,
                self.spec.kind)
        return fm

    @staticmethod
    def manager_name(request: Any) -> str:
        """The manager of a write: C{fieldManager}, else derived from the User-Agent
        (upstream C{managerOrUserAgent})."""
        agent = (request.getHeader(b"user-agent") or b"").decode("utf-8", "replace")
        return fmlib.manager_or_user_agent(opts.first(_query(request), "fieldManager", ""),
                                           agent)

    # --- CREATE --------------------------------------------------------------------------------
    async def create(self, request: Any, namespace: str) -> None:
        q = _query(request)
        out = negotiate(request)
        dry = opts.dry_run(q)
        fmlib.validate_patch_options(opts.first(q, "fieldManager", ""), None, False,
                                     "CreateOptions")
        obj = self.decode_object(request, read_body(request))
        self._default(self.store, obj)
        request.kube_warnings = _warnings_so_far(request) + list(self.store.strategy.warnings(obj))
        if list(self.spec.verbs or ()) != ["create"]:
            # create-only virtual resources (reviews, bindings) answer without managedFields
            obj = self.field_manager().update(None, obj, self.manager_name(request))
        admission = self._admission(request, namespace, "", "", dry)
        created = await self.store.create(namespace, obj, admission, dry)
        self._respond(request, 201, created, out)

    # --- UPDATE --------------------------------------------------------------------------------
    async def update(self, request: Any, namespace: str, name: str, subresource: str = "") -> None:
        q = _query(request)
        out = negotiate(request)
        dry = opts.dry_run(q)
        store = self.subresources[subresource] if subresource else self.store
        if not isinstance(store, Store):
            return await store.update(request, self, namespace, name, out, dry)
        fmlib.validate_patch_options(opts.first(q, "fieldManager", ""), None, False,
                                     "UpdateOptions")
        obj = self.decode_object(request, read_body(request))
        self._default(store, obj)
        request.kube_warnings = _warnings_so_far(request) + list(store.strategy.warnings(obj))
        fm, manager = self.field_manager(subresource), self.manager_name(request)

        async def transform(current: Optional[dict]) -> dict:
            return fm.update(current, copy.deepcopy(obj), manager)

        admission = self._admission(request, namespace, name, subresource, dry)
        result, created = await store.update(namespace, name, transform, admission, dry)
        self._respond(request, 201 if created else 200, result, out)

    # --- PATCH ---------------------------------------------------------------------------------
    async def patch(self, request: Any, namespace: str, name: str, subresource: str = "") -> None:
        q = _query(request)
        out = negotiate(request)
        dry = opts.dry_run(q)
        store = self.subresources[subresource] if subresource else self.store
        ctype = codec.content_type_of(
            (request.getHeader(b"content-type") or b"").decode("latin-1")
        )
        if ctype not in codec.PATCH_TYPES:
            raise errors.new_unsupported_media_type(ctype)
        is_apply = ctype == codec.APPLY_PATCH_YAML
        fmlib.validate_patch_options(opts.first(q, "fieldManager", ""),
                                     opts.bool_param(q, "force"), is_apply)
        body = read_body(request)
        if not isinstance(store, Store):
            return await store.patch(request, self, namespace, name, out, dry, ctype, body)
        apply_patch = self.patch_applier(ctype, body, store, request)
        admission = self._admission(request, namespace, name, subresource, dry)
        fm, manager = self.field_manager(subresource), self.manager_name(request)

        async def transform(current: Optional[dict]) -> dict:
            if current is None:
                if is_apply:
                    return apply_patch({})
                raise errors.new_not_found(self.spec.group, self.spec.resource, name)
            if is_apply:
                return apply_patch(current)
            return fm.update(current, apply_patch(copy.deepcopy(current)), manager)

        result, created = await store.update(
            namespace, name, transform, admission, dry,
            force_allow_create=ctype == codec.APPLY_PATCH_YAML,
        )
        self._respond(request, 201 if created else 200, result, out)

    def patch_applier(self, ctype: str, body: bytes, store: Store, request: Any = None):
        """A function C{current -> patched} for a patch body of type C{ctype}; the result is
        kind-checked and defaulted (upstream C{patcher.applyPatch} then decode).  C{request}
        lets a subclass apply per-request decoding options (C{fieldValidation})."""
        if ctype == codec.JSON_PATCH:
            def apply(current: dict) -> dict:
                return self._after_patch(store, patchlib.apply_json_patch(current, body), current,
                                         request, ctype, body)
            return apply
        if ctype == codec.MERGE_PATCH:
            def apply(current: dict) -> dict:
                return self._after_patch(store, patchlib.apply_merge_patch(current, body), current,
                                         request, ctype, body)
            return apply
        if ctype == codec.STRATEGIC_MERGE_PATCH:
            if self.patch_meta is None:
                raise errors.new_unsupported_media_type(ctype)
            patch_doc = _decode_patch(body)
            def apply(current: dict) -> dict:
                from kubetwist.apimachinery.strategicpatch import apply_strategic_merge_patch
                return self._after_patch(
                    store, apply_strategic_merge_patch(current, patch_doc, self.patch_meta), current,
                    request, ctype, body,
                )
            return apply
        return self._apply_patcher(body, store, request)

    def _apply_patcher(self, body: bytes, store: Store, request: Any):
        """
        Server-side apply (upstream C{applyPatcher} + C{FieldManager.Apply}): the applied
        configuration merged into the live object by schema, fields owned per manager.

        @raise StatusError: 400 for a body that is not an object, of another kind or version
            (C{invalid object type: apps/v2, Kind=Deployment}) or carrying managedFields; 409
            Conflict; 500 for fields not in the schema.
        """
        applied = codec.decode_body(body, codec.APPLY_PATCH_YAML)
        if not isinstance(applied, dict):
            raise errors.new_bad_request(
                "error decoding YAML: the applied configuration must be an object")
        subresource = next((k for k, v in self.subresources.items() if v is store), "") \
            if store is not self.store else ""
        fm = self.field_manager(subresource)
        q = _query(request) if request is not None else {}
        manager = opts.first(q, "fieldManager", "")
        force = bool(opts.bool_param(q, "force"))

        def apply(current: dict) -> dict:
            new = fm.apply(current or None, applied, manager, force)
            if request is not None:
                _apply_yaml_field_validation(request, body)
            if not current:
                self.check_kind(new)
                self._default(store, new)
                return new
            return self._after_patch(store, new, current)
        return apply

    def _after_patch(self, store: Store, patched: Any, current: dict, request: Any = None,
                     ctype: str = "", body: bytes = b"") -> dict:
        """
        Kind-check, field-validate (when C{request} is given: L{_patch_field_validation}) and
        default a patched object.

        @raise StatusError: 400 BadRequest when the result is not an object or of another kind;
            422 Invalid for unknown or duplicate fields under C{fieldValidation=Strict}.
        """
        if not isinstance(patched, dict):
            raise errors.new_bad_request("the patched object is not a JSON object")
        self.check_kind(patched)
        if not isinstance(patched.get("metadata"), dict):
            patched["metadata"] = {}
        type_name = self.kind_type_name() if request is not None else None
        if type_name is not None:
            self._patch_field_validation(request, ctype, body, patched, type_name)
        self._default(store, patched)
        return patched

    def _patch_field_validation(self, request: Any, ctype: str, body: bytes, patched: dict,
                                type_name: str) -> None:
        """
        Upstream C{patch.go} strict decoding of a JSON, merge or strategic merge patch: the
        patch's own duplicate fields (and, for a JSON patch, unknown keys of its operations:
        C{json patch unknown field "[0].foo"}), then the unknown fields of the patched object
        (JSON and merge patch: as decoding its JSON, keys sorted; strategic merge patch: as the
        unstructured converter reports them, sorted).  The unknown fields are dropped from
        C{patched} whatever the mode.

        @raise StatusError: under C{Strict}, 422 Invalid with kind and name empty and one cause
            C{patch: Invalid value: "<patched object JSON, or the patch as Go prints a map>":
            strict decoding error: ...}; under C{Warn} the errors become C{Warning}s.
        """
        from kubetwist.apiextensions.customresource import field_validation_mode
        from kubetwist.apimachinery import field

        mode = field_validation_mode(request)
        if mode == "Ignore":
            strict.prune_unknown(patched, type_name)
            return
        try:
            doc = strict.parse_json_pairs(body)
        except ValueError:
            doc = None
        if ctype == codec.JSON_PATCH:
            errs = strict.json_patch_errors(doc)
        else:
            errs = strict.strict_errors(doc, strict.ANY)
        if ctype == codec.STRATEGIC_MERGE_PATCH:
            shown = strict.go_sprint(codec.decode_body(body, codec.JSON))
            errs += strict.unstructured_unknown_fields(patched, type_name, prune=True)
        else:
            shown = strict.go_json(patched)
            errs += strict.strict_errors(patched, type_name, sort_keys=True, prune=True)
        if not errs:
            return
        if mode == "Strict":
            raise errors.new_invalid("", "", "", [
                field.invalid("patch", shown, strict.strict_decoding_message(errs))])
        _add_warnings(request, strict.warnings_of(errs))

    # --- DELETE --------------------------------------------------------------------------------
    async def delete(self, request: Any, namespace: str, name: str) -> None:
        q = _query(request)
        out = negotiate(request)
        dry = opts.dry_run(q)
        body = _optional_body(request)
        delete_opts = opts.delete_options(q, body)
        admission = self._admission(request, namespace, name, "", dry)
        result, deleted = await self.store.delete(namespace, name, delete_opts, admission, dry)
        # upstream: 202 only when kept and the deprecated orphanDependents=false was sent
        code = 202 if not deleted and delete_opts.get("orphanDependents") is False else 200
        self._respond(request, code, result, out)

    async def delete_collection(self, request: Any, namespace: str) -> None:
        q = _query(request)
        out = negotiate(request, allow_transform=False)
        dry = opts.dry_run(q)
        body = _optional_body(request)
        delete_opts = opts.delete_options(q, body)
        list_opts = opts.list_options(q, self.store.strategy)
        admission = self._admission(request, namespace, "", "", dry)
        result = await self.store.delete_collection(namespace, list_opts, delete_opts, admission, dry)
        write_object(request, 200, result, out.media)

    # --- subresource GET -----------------------------------------------------------------------
    async def get_subresource(self, request: Any, namespace: str, name: str, subresource: str) -> None:
        out = negotiate(request)
        sub = self.subresources[subresource]
        if isinstance(sub, Store):
            obj = await sub.get(namespace, name)
            self._respond(request, 200, obj, out)
        else:
            await sub.get(request, self, namespace, name, out)


def _apply_yaml_field_validation(request: Any, body: bytes) -> None:
    """
    Upstream C{applyPatcher.applyPatchToCurrentObject}: after the apply, under
    C{fieldValidation=Strict} or C{Warn} the applied configuration is decoded again with
    C{yaml.UnmarshalStrict}, so a duplicate key is caught even where the object's schema keeps
    unknown fields.

    @raise StatusError: 400 BadRequest C{error strict decoding YAML: error converting YAML to
        JSON: yaml: unmarshal errors:\n  line 9: key "foo" already set in map} under
        C{Strict}; under C{Warn} each duplicate becomes a C{Warning}.
    """
    from kubetwist.apiextensions.customresource import field_validation_mode

    mode = field_validation_mode(request)
    if mode == "Ignore":
        return
    err = codec.yaml_duplicate_error(body)
    if err is None:
        return
    if mode == "Strict":
        raise errors.new_bad_request(f"error strict decoding YAML: {err}")
    _add_warnings(request, strict.warnings_of([err]))


def _add_warnings(request: Any, texts: list[str]) -> None:
    """Add C{Warning}s to the request, each text once (upstream's warning recorder dedups)."""
    warnings = _warnings_so_far(request)
    for text in texts:
        if text not in warnings:
            warnings.append(text)
    request.kube_warnings = warnings


def _warnings_so_far(request: Any) -> list[str]:
    """Warnings already collected for this request (decoding adds some, e.g. unknown fields)."""
    return list(getattr(request, "kube_warnings", None) or [])


def _decode_patch(body: bytes) -> Any:
    try:
        return codec.decode_body(body, codec.JSON)
    except codec.JSONSyntaxError as e:
        raise errors.new_bad_request(f"error decoding patch: {e}") from None


def _optional_body(request: Any) -> Optional[dict]:
    body = read_body(request)
    if not body.strip():
        return None
    ctype = codec.content_type_of((request.getHeader(b"content-type") or b"").decode("latin-1"))
    if ctype == codec.PROTOBUF:
        from kubetwist.runtime import protobuf

        return protobuf.decode(body, default_gvk=("", "v1", "DeleteOptions"))
    try:
        obj = codec.decode_body(body, ctype or codec.JSON)
    except codec.JSONSyntaxError as e:
        raise errors.new_bad_request(
            f"the object provided is unrecognized (must be of type DeleteOptions): couldn't "
            f"get version/kind; json parse error: {e} ({codec.summarize_data(body)})") from None
    if obj is not None and not isinstance(obj, dict):
        raise errors.new_bad_request("DeleteOptions must be a JSON object")
    return obj
