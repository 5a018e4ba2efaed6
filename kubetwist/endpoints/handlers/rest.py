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
import dataclasses
import random
from typing import Any, Optional

import orjson
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from kubetwist.apimachinery import fieldmanager as fmlib
from kubetwist.apimachinery import patch as patchlib
from kubetwist.apimachinery.fieldmanager import typed as fmtyped
from kubetwist.audit import event as audit_event
from kubetwist.endpoints import offload
from kubetwist.endpoints import table as tablelib
from kubetwist.endpoints.handlers import options as opts
from kubetwist.endpoints.negotiation import Output, check_transform, is_pretty, negotiate
from kubetwist.endpoints.request import context_of
from kubetwist.endpoints.responses import (
    encode_watch_event,
    watch_content_type,
    write_body,
    write_object,
)
from kubetwist.registry.generic.scale import ScaleREST, patch_scale
from kubetwist.registry.generic.store import Store
from kubetwist.runtime import codec, errors, strict, typed
from kubetwist.runtime import decode as decodelib
from kubetwist.runtime import types as typetables
from kubetwist.storage import metrics as storage_metrics
from kubetwist.storage.interfaces import INITIAL_EVENTS_END_ANNOTATION, WatchEvent

#: Upstream C{metav1.InitialEventsListBlueprintAnnotationKey}.
INITIAL_EVENTS_LIST_BLUEPRINT_ANNOTATION = "kubernetes.io/initial-events-list-blueprint"

log = Logger()

#: Largest request body accepted, in bytes (upstream C{MaxRequestBodyBytes}, 3 MiB).
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024


#: Reset fields of C{/status} beyond C{spec}, per (group, kind): upstream C{GetResetFields} of
#: the status strategies (deploymentStatusStrategy also resets C{metadata.labels}).
_STATUS_RESET_EXTRA: dict[tuple[str, str], tuple] = {
    ("apps", "Deployment"): ((("f", "metadata"), ("f", "labels")),),
}


def read_body(request: Any) -> bytes:
    body = request.content.read() if request.content is not None else b""
    if len(body) > MAX_REQUEST_BODY_BYTES:
        raise errors.new_request_entity_too_large("limit is 3145728")
    return body


def _query(request: Any) -> dict[str, list[str]]:
    return context_of(request).request_info.query


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
    def _admission(self, request: Any, namespace: str, name: str, subresource: str, dry: bool,
                   options: Optional[dict] = None):
        """The admission chain bound to this request; C{options} by operation (see
        C{AdmissionChain.for_request}), by default the query's Create and Update options."""
        if options is None:
            options = opts.admission_options(_query(request), "CREATE", "UPDATE")
        return self.admission.for_request(
            self.spec, subresource, namespace, name, context_of(request).user, dry,
            options, annotate=_audit_annotator(request),
            warn=lambda text: _add_warnings(request, [text]),
        )

    async def connect_admission(self, request: Any, namespace: str, name: str,
                                subresource: str, options: dict) -> None:
        """
        Both admission phases for a connect subresource (upstream C{ConnectResource}):
        operation C{CONNECT}, the C{options} object (C{PodExecOptions}, ...) as the object,
        no operation options, never a dry run.

        @raise StatusError: a plugin's refusal.
        """
        admission = self._admission(request, namespace, name, subresource, False, options={})
        if admission.connect is not None:
            await admission.connect(options)

    def _respond(self, request: Any, code: int, obj: dict, out: Output,
                 convertor_store: Optional[Store] = None) -> None:
        """Write one object in the negotiated form.

        @raise StatusError: 406 NotAcceptable for C{as=PartialObjectMetadataList} (upstream
            C{asPartialObjectMetadataList}: the object is not a list)."""
        check_transform(out, obj, False, self.spec.group, obj.get("kind") or self.spec.kind,
                        self._custom_resource())
        if out.kind == "table" and obj.get("kind") != "Status":
            store = convertor_store or self.store
            rv = (obj.get("metadata") or {}).get("resourceVersion")
            obj = tablelib.to_table(
                [obj], store.strategy.table, {"resourceVersion": rv} if rv else None,
                opts.first(_query(request), "includeObject", "Metadata"), out.version,
            )
            write_object(request, code, obj, out.media, out.content_type)
            return
        if out.kind == "partial" and obj.get("kind") != "Status":
            write_object(request, code, tablelib.partial_object_metadata(obj, out.version),
                         out.media, out.content_type)
            return
        write_object(request, code, obj, out.media)

    def _audit_request_object(self, request: Any, obj: dict, subresource: str = "") -> None:
        """Upstream C{audit.LogRequestObject} of the decoded and defaulted body (a built-in
        kind as Go's typed encoder writes it: with C{metadata.creationTimestamp: null})."""
        if audit_event.context_of(request) is None:
            return
        meta = obj.get("metadata")
        if not self.custom and isinstance(meta, dict) and "creationTimestamp" not in meta:
            obj = dict(obj, metadata=dict(meta, creationTimestamp=None))
        audit_event.log_request_object(request, obj, self.spec.group, self.spec.version,
                                       self.spec.resource, subresource)

    def expect(self) -> decodelib.Expect:
        """The kind this resource's bodies must be (L{kubetwist.runtime.decode.Expect})."""
        return decodelib.Expect(self.spec.group, (self.spec.version,), self.spec.kind)

    #: Served from a CRD (set by the custom-resource handlers): upstream's objects are then
    #: C{*unstructured.Unstructured}, answered in JSON and YAML only.
    custom = False

    def _custom_resource(self) -> bool:
        return self.custom

    def negotiate(self, request: Any, table: bool = True, collection: bool = False) -> Output:
        """L{negotiate} with this resource's restrictions: custom resources answer JSON and
        YAML only (protobuf only as C{PartialObjectMetadata[List]} or a C{Status}) and have no
        go-restful route check; C{collection} for list and watch."""
        if self.custom:
            return negotiate(request, table=table, standard=(codec.JSON, codec.YAML),
                             restful=False)
        return negotiate(request, table=table, collection=collection)

    def decode_object(self, request: Any, body: bytes) -> dict:
        """
        The create/update body through the one body decoder (L{kubetwist.runtime.decode}):
        content type, JSON/YAML/protobuf, kind check, typed conversion, then strict decoding
        with the request's C{fieldValidation} (upstream C{create.go}/C{update.go}): the
        unknown fields of a built-in kind are always dropped, as Go's decoder drops them;
        unknown and duplicate fields are refused under C{Strict} (400 BadRequest C{Pod in
        version "v1" cannot be handled as a Pod: strict decoding error: unknown field
        "spec.foo", duplicate field "metadata.name"}), become C{Warning}s under C{Warn} (the
        default) and are ignored under C{Ignore}.  A kind without a type table falls back to
        C{Strategy.unknown_fields}.

        @raise StatusError: the decoder's 400 (malformed, other kind or version, a value of
            the wrong type) and 415; 422 Invalid C{CreateOptions}/C{UpdateOptions} for
            another C{fieldValidation} value.
        """
        from kubetwist.endpoints.handlers.options import field_validation_mode

        type_name = self.kind_type_name()
        finder = getattr(self.store.strategy, "unknown_fields", None)
        mode = field_validation_mode(request) if type_name is not None or finder is not None \
            else "Ignore"
        decoded = decodelib.decode(body, _content_type(request), self.expect(), mode,
                                   protobuf_decoder=self.decode_protobuf)
        obj = decoded.obj
        if decoded.warnings:
            _add_warnings(request, decoded.warnings)
        if type_name is None and finder is not None:
            errs = [f'unknown field "{p}"' for p in finder(obj)]
            if errs and mode == "Strict":
                raise decodelib.cannot_handle(obj, self.expect(),
                                              strict.strict_decoding_message(errs))
            if errs and mode == "Warn":
                _add_warnings(request, strict.warnings_of(errs))
        return obj

    def kind_type_name(self) -> Optional[str]:
        """The full type-table name of this resource's kind (C{io.k8s.api.core.v1.Pod}), or
        C{None} (custom resources, kinds without a table)."""
        return typetables.lookup_kind(self.spec.group, self.spec.version, self.spec.kind)

    def decode_protobuf(self, body: bytes) -> dict:
        """A protobuf body (C{application/vnd.kubernetes.protobuf}) as its JSON-shaped dict.

        @raise StatusError: 400 BadRequest (malformed), 415 UnsupportedMediaType (a kind with
            no protobuf definition, e.g. a custom resource)."""
        return decodelib._protobuf(body, self.expect())

    def check_kind(self, obj: dict, body: bytes = b"") -> None:
        """L{kubetwist.runtime.decode.check_kind} against this resource's kind."""
        decodelib.check_kind(obj, self.expect(), body)

    def _default(self, store: Store, obj: dict) -> None:
        store.strategy.default(obj)

    # --- GET -----------------------------------------------------------------------------------
    async def get(self, request: Any, namespace: str, name: str) -> None:
        out = self.negotiate(request)
        # only encoded: the watch cache's object needs no copy
        extra = {"shared": True} if type(self.store).get is Store.get else {}
        obj = await self.store.get(namespace, name, opts.first(_query(request), "resourceVersion"),
                                   **extra)
        self._respond(request, 200, obj, out)

    async def list(self, request: Any, namespace: str) -> None:
        q = _query(request)
        if opts.bool_param(q, "watch"):
            return await self.watch(request, namespace)
        out = self.negotiate(request, collection=True)
        options = opts.list_options(q, self.store.strategy)
        if self._writes_encoded_list(request, out):
            lst, items, _ = await self.store.list_encoded(namespace, options)
            head, tail = codec.list_envelope(lst)
            write_body(request, 200, b"".join((head, b",".join(items), tail)), codec.JSON)
            return
        if self._writes_encoded_table(request, out):
            await self._encoded_table(request, namespace, options, out)
            return
        if out.kind in ("table", "partiallist") and type(self.store).list is Store.list:
            # rendered, never changed: the watch cache's objects need no copies
            lst = await self.store.list(namespace, options, shared=True)
        else:
            lst = await self.store.list(namespace, options)
        self._respond_list(request, lst, out)

    def _encodes_from_cache(self, request: Any, out: Output) -> bool:
        """
        What the encoded list and Table paths share: JSON, not pretty, not recorded whole by
        audit, of a Store whose list is the generic one over the watch cache.
        """
        return (out.media == codec.JSON
                and not is_pretty(request)
                and type(self.store).list is Store.list
                and self.store.serves_encoded_lists()
                and not audit_event.wants_response_object(request))

    def _writes_encoded_list(self, request: Any, out: Output) -> bool:
        """
        Whether a list is answered from encoded items (L{Store.list_encoded}): a plain list,
        written as L{Store.list} shapes it, under L{_encodes_from_cache}'s conditions.  The
        bytes are those L{_respond_list} would write.
        """
        return (out.kind == "object"
                and type(self).list_response is ResourceHandlers.list_response
                and self._encodes_from_cache(request, out))

    def _writes_encoded_table(self, request: Any, out: Output) -> bool:
        """
        Whether a list as a C{Table} is written from encoded rows (L{_encoded_table}): rows
        with their objects' metadata (C{includeObject=Metadata}, the default, what kubectl
        asks), in storage order, under L{_encodes_from_cache}'s conditions.
        """
        conv = self.store.strategy.table or tablelib.DEFAULT_TABLE
        return (out.kind == "table"
                and opts.first(_query(request), "includeObject", "Metadata") == "Metadata"
                and conv.order is None
                and self._encodes_from_cache(request, out))

    async def _encoded_table(self, request: Any, namespace: str, options: Any,
                             out: Output) -> None:
        """
        Write the list as a C{Table} whose rows are C{{"cells": [...], "object": <the
        item's PartialObjectMetadata>}}: each object's metadata encoded once per change
        (L{Store.list_encoded}), the cells (ages change with time) computed per request; the
        same bytes as L{_respond_list}'s.
        """
        version = out.version

        def encode_metadata(item: dict) -> bytes:
            return codec.encode_raw(tablelib.partial_object_metadata(item, version))

        lst, encoded, objects = await self.store.list_encoded(
            namespace, options, ("table-row-metadata", version), encode_metadata)
        check_transform(out, lst, True, self.spec.group, lst.get("kind") or
                        self.spec.kind + "List", self._custom_resource())
        table = tablelib.to_table([], self.store.strategy.table, lst["metadata"], "Metadata",
                                  version)
        row = (self.store.strategy.table or tablelib.DEFAULT_TABLE).row
        list_item = self.store._list_item
        # cells are lists of plain values (go_order leaves them as they are); Go's escapes
        # are applied once to the whole body (they change only characters inside strings,
        # and the cached parts and the envelope have them already)
        dumps = orjson.dumps
        rows = [b"".join((b'{"cells":', dumps(row(list_item(obj))), b',"object":', meta, b"}"))
                for obj, meta in zip(objects, encoded, strict=True)]
        head, tail = codec.list_envelope(table, "rows")
        write_body(request, 200, codec.go_escape(b"".join((head, b",".join(rows), tail))),
                   out.content_type or codec.JSON)

    def _respond_list(self, request: Any, lst: dict, out: Output) -> None:
        """Write a list in the negotiated form (upstream C{transformResponseObject}).

        @raise StatusError: 406 NotAcceptable for C{as=PartialObjectMetadata} (upstream
            C{asPartialObjectMetadata}: the object is a list)."""
        check_transform(out, lst, True, self.spec.group, lst.get("kind") or self.spec.kind + "List",
                        self._custom_resource())
        if out.kind == "table":
            result = tablelib.to_table(
                lst["items"], self.store.strategy.table, lst["metadata"],
                opts.first(_query(request), "includeObject", "Metadata"), out.version,
                api_version=self.spec.api_version, kind=self.spec.kind,
            )
            write_object(request, 200, result, out.media, out.content_type)
        elif out.kind == "partiallist":
            write_object(request, 200, tablelib.partial_object_metadata_list(lst, out.version),
                         out.media, out.content_type)
        else:
            write_object(request, 200, self.list_response(lst), out.media)

    def list_response(self, lst: dict) -> dict:
        """The list as written when asked for as a list (not a Table or metadata)."""
        return lst

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
        out = self.negotiate(request, collection=True)
        if out.media not in (codec.JSON, codec.PROTOBUF):
            # upstream NegotiateOutputMediaTypeStream: only JSON and protobuf stream
            raise errors.new_not_acceptable(
                f"{codec.JSON};stream=watch, {codec.PROTOBUF};stream=watch")
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
                resource_version_match="NotOlderThan"
                if options.resource_version not in ("", "0") else "",
                name=options.name,
            ))
            initial_rv = lst["metadata"]["resourceVersion"]
            initial = lst["items"]
            options.resource_version = initial_rv
        if cached:
            # the objects are only encoded here: the cache may share its own, and each
            # change's encoded frame with every other watcher of this Store (WatchEvent.memo)
            w = self.store.watch(namespace, options, timeout=timeout,
                                 share_objects=out.kind == "object")
        else:
            w = self.store.watch(namespace, options)
        request.setResponseCode(200)
        request.setHeader(b"Content-Type", watch_content_type(out.media).encode())
        request.setHeader(b"Cache-Control", b"no-cache, private")
        request.write(b"")
        last_rv = [initial_rv]
        first_table = [True]
        watch_labels = (self.spec.group, self.spec.version, self.spec.kind)
        storage_metrics.REGISTERED_WATCHERS.labels(*watch_labels).inc()
        request.notifyFinish().addBoth(
            lambda _: storage_metrics.REGISTERED_WATCHERS.labels(*watch_labels).dec())

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
            write_frame(encode_watch_event(ev_type, obj, out.media))

        def write_frame(data: bytes) -> None:
            storage_metrics.watch_event(watch_labels[0], watch_labels[1], watch_labels[2],
                                        len(data))
            request.write(data)

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
            if ev.memo is not None and out.kind == "object":
                if gone():
                    return
                key = (self.store, out.media, ev.type)
                data = ev.memo.get(key)
                if data is None:
                    data = ev.memo[key] = encode_watch_event(
                        ev.type, self.store._typed(ev.object), out.media)
                write_frame(data)
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
                reset = fmlib.Set.of(
                    (("f", "spec"),),
                    *_STATUS_RESET_EXTRA.get((self.spec.group, self.spec.kind), ()))
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
        out = self.negotiate(request, table=isinstance(self.store, Store))
        dry = opts.dry_run(q)
        fmlib.validate_patch_options(opts.first(q, "fieldManager", ""), None, False,
                                     "CreateOptions")
        body = read_body(request)
        obj = await offload.run(len(body), self.decode_object, request, body)
        self._default(self.store, obj)
        self._audit_request_object(request, obj)
        warnings = list(self.store.strategy.warnings(obj))
        if list(self.spec.verbs or ()) != ["create"]:
            # create-only virtual resources (reviews, bindings) answer without managedFields
            obj = self.field_manager().update(None, obj, self.manager_name(request))
        admission = _warn_when_valid(self._admission(request, namespace, "", "", dry),
                                     request, warnings)
        created = await self.store.create(namespace, obj, admission, dry)
        self._respond(request, 201, created, out)

    # --- UPDATE --------------------------------------------------------------------------------
    async def update(self, request: Any, namespace: str, name: str, subresource: str = "") -> None:
        q = _query(request)
        out = self.negotiate(request)
        dry = opts.dry_run(q)
        store = self.subresources[subresource] if subresource else self.store
        if isinstance(store, ScaleREST):
            return await self._update_scale(request, namespace, name, store, out, dry)
        if not isinstance(store, Store):
            return await store.update(request, self, namespace, name, out, dry)
        fmlib.validate_patch_options(opts.first(q, "fieldManager", ""), None, False,
                                     "UpdateOptions")
        body = read_body(request)
        obj = await offload.run(len(body), self.decode_object, request, body)
        self._default(store, obj)
        self._audit_request_object(request, obj, subresource)
        warnings = list(store.strategy.warnings(obj))
        fm, manager = self.field_manager(subresource), self.manager_name(request)

        async def transform(current: Optional[dict]) -> dict:
            return fm.update(current, copy.deepcopy(obj), manager)

        admission = _warn_when_valid(
            self._admission(request, namespace, name, subresource, dry), request, warnings)
        result, created = await store.update(namespace, name, transform, admission, dry)
        self._respond(request, 201 if created else 200, result, out)

    # --- PATCH ---------------------------------------------------------------------------------
    async def patch(self, request: Any, namespace: str, name: str, subresource: str = "") -> None:
        q = _query(request)
        out = self.negotiate(request)
        dry = opts.dry_run(q)
        store = self.subresources[subresource] if subresource else self.store
        ctype = codec.content_type_of(
            (request.getHeader(b"content-type") or b"").decode("latin-1")
        )
        if ctype not in codec.PATCH_TYPES:
            # upstream PatchResource: NewGenericServerResponse(415, ...) with empty details
            e = errors.make_status(415, "UnsupportedMediaType", "415: Unsupported Media Type")
            e.status["details"] = {}
            raise e
        is_apply = ctype == codec.APPLY_PATCH_YAML
        fmlib.validate_patch_options(opts.first(q, "fieldManager", ""),
                                     opts.bool_param(q, "force"), is_apply)
        body = read_body(request)
        audit_event.log_request_patch(request, body)
        if isinstance(store, ScaleREST):
            return await self._patch_scale(request, namespace, name, store, out, dry, ctype,
                                           body)
        if not isinstance(store, Store):
            return await store.patch(request, self, namespace, name, out, dry, ctype, body)
        apply_patch = await offload.run(len(body), self.patch_applier, ctype, body, store,
                                        request)
        # a small JSON patch of copy operations may build up to 3 MiB
        work = offload.THRESHOLD if ctype == codec.JSON_PATCH and b'"copy"' in body \
            else len(body)
        admission = self._admission(request, namespace, name, subresource, dry)
        fm, manager = self.field_manager(subresource), self.manager_name(request)

        async def transform(current: Optional[dict]) -> dict:
            if current is None:
                if is_apply:
                    return await offload.run(work, apply_patch, {})
                raise errors.new_not_found(self.spec.group, self.spec.resource, name)
            if is_apply:
                return await offload.run(work, apply_patch, current)
            patched = await offload.run(work, apply_patch, copy.deepcopy(current))
            return fm.update(current, patched, manager)

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
                    store, apply_strategic_merge_patch(current, patch_doc, self.patch_meta),
                    current,
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
        try:
            applied = codec.decode_body(body, codec.APPLY_PATCH_YAML)
        except errors.StatusError as e:
            if getattr(e, "yaml_error", None) is None:
                raise
            raise errors.new_bad_request(f"error decoding YAML: {e.status['message']}") \
                from None
        if not isinstance(applied, dict):
            raise errors.new_bad_request(
                "error decoding YAML: the applied configuration must be an object")
        subresource = next((k for k, v in self.subresources.items() if v is store), "") \
            if store is not self.store else ""
        fm = self.field_manager(subresource)
        q = _query(request) if request is not None else {}
        manager = opts.first(q, "fieldManager", "")
        force = bool(opts.bool_param(q, "force"))

        type_name = self.kind_type_name() if store is self.store else None

        def apply(current: dict) -> dict:
            if type_name is not None:
                _apply_type_check(applied, type_name, fm)
            new = fm.apply(current or None, applied, manager, force)
            if type_name is not None:
                problem = typed.converter_error(new, type_name)
                if problem:
                    raise _plain_error(
                        f"failed to convert new object ({_gvknn(applied)}) to proper version: "
                        f"unable to convert unstructured object to {_gvk(applied)}: {problem}")
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
            self._patch_typed(ctype, body, patched, type_name)
            self._patch_field_validation(request, ctype, body, patched, type_name)
            typed.zero_null_elements(patched, type_name)
        self._default(store, patched)
        return patched

    @staticmethod
    def _patch_typed(ctype: str, body: bytes, patched: dict, type_name: str) -> None:
        """
        Typed conversion of a patched object, before strict decoding (upstream C{patch.go}: a
        decoding error trumps the strict ones).  JSON and merge patches decode the patched
        JSON (L{typed.check}); a strategic merge patch converts the patched map
        (L{typed.converter_error}).

        @raise StatusError: 422 Invalid, kind and name empty, one cause C{patch: Invalid
            value: "<patched object JSON>": json: cannot unmarshal string into Go struct field
            DeploymentSpec.spec.replicas of type int32} (strategic merge: the patch as Go
            prints a map, then C{unrecognized type: int32}).
        """
        from kubetwist.runtime import field

        if ctype == codec.STRATEGIC_MERGE_PATCH:
            message = typed.converter_error(patched, type_name)
            shown = strict.go_sprint(codec.decode_body(body, codec.JSON)) if message else ""
        else:
            message = typed.check(patched, type_name)
            shown = strict.go_json(patched) if message else ""
        if message:
            raise errors.new_invalid("", "", "", [field.invalid("patch", shown, message)])

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
        from kubetwist.endpoints.handlers.options import field_validation_mode
        from kubetwist.runtime import field

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
        out = self.negotiate(request)
        dry = opts.dry_run(q)
        body = _optional_body(request)
        _audit_delete_options(request, body)
        delete_opts = opts.delete_options(q, body)
        admission = self._admission(request, namespace, name, "", dry,
                                    {"DELETE": _delete_options_object(delete_opts)})
        _add_warnings(request, self.store.strategy.delete_warnings(delete_opts))
        result, deleted = await self.store.delete(namespace, name, delete_opts, admission, dry)
        # upstream: 202 only when kept and the deprecated orphanDependents=false was sent
        code = 202 if not deleted and delete_opts.get("orphanDependents") is False else 200
        self._respond(request, code, result, out)

    async def delete_collection(self, request: Any, namespace: str) -> None:
        q = _query(request)
        out = self.negotiate(request)
        dry = opts.dry_run(q)
        body = _optional_body(request)
        _audit_delete_options(request, body)
        delete_opts = opts.delete_options(q, body)
        list_opts = opts.list_options(q, self.store.strategy)
        admission = self._admission(request, namespace, "", "", dry,
                                    {"DELETE": _delete_options_object(delete_opts)})
        result = await self.store.delete_collection(namespace, list_opts, delete_opts, admission,
                                                    dry)
        if result.get("kind") == "Status":
            write_object(request, 200, result, out.media)
        else:
            self._respond_list(request, result, out)

    # --- scale ---------------------------------------------------------------------------------
    def _scale_recorder(self, request: Any):
        fm, manager = self.field_manager("scale"), self.manager_name(request)
        return lambda current, new: fm.update(current, new, manager)

    async def _update_scale(self, request: Any, namespace: str, name: str, scale: ScaleREST,
                            out: Output, dry: bool) -> None:
        """C{PUT .../scale}: the body decoded as an C{autoscaling/v1 Scale} by the one body
        decoder, then L{ScaleREST.update}."""
        from kubetwist.endpoints.handlers.options import field_validation_mode

        decoded = decodelib.decode(read_body(request), _content_type(request), scale.expect,
                                   field_validation_mode(request))
        if decoded.warnings:
            _add_warnings(request, decoded.warnings)
        admission = self._admission(request, namespace, name, "scale", dry)
        result = await scale.update(namespace, name, lambda current: decoded.obj, admission,
                                    dry, self._scale_recorder(request))
        write_object(request, 200, result, out.media)

    async def _patch_scale(self, request: Any, namespace: str, name: str, scale: ScaleREST,
                           out: Output, dry: bool, ctype: str, body: bytes) -> None:
        """C{PATCH .../scale}: the current Scale patched (L{patch_scale}), typed as upstream
        decodes the patched Scale (422 for a value of the wrong type), then
        L{ScaleREST.update}.

        @raise StatusError: 415 for a patch type the subresource does not take."""
        if ctype not in scale.patch_types:
            raise errors.make_status(
                415, "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types "
                "include: " + ", ".join(scale.patch_types))
        type_name = scale.expect.type_name

        def make_scale(current: dict) -> dict:
            patched = patch_scale(current, ctype, body)
            if isinstance(patched, dict) and type_name is not None:
                self._patch_typed(ctype, body, patched, type_name)
            return patched

        admission = self._admission(request, namespace, name, "scale", dry)
        result = await scale.update(namespace, name, make_scale, admission, dry,
                                    self._scale_recorder(request))
        write_object(request, 200, result, out.media)

    # --- subresource CREATE --------------------------------------------------------------------
    async def create_subresource(self, request: Any, namespace: str, name: str,
                                 subresource: str) -> None:
        """C{POST} on a subresource that creates (C{pods/binding}, C{pods/eviction},
        C{serviceaccounts/token}: objects with an C{expect} body kind): L{create_on} its REST
        object.  A connecter (C{exec}, C{attach}, C{proxy}...) handles the request itself."""
        sub = self.subresources[subresource]
        if getattr(sub, "expect", None) is None:
            await sub.create(request, self, namespace, name)
            return
        await create_on(self, request, namespace, name, sub)

    # --- subresource GET -----------------------------------------------------------------------
    async def get_subresource(self, request: Any, namespace: str, name: str,
                              subresource: str) -> None:
        out = self.negotiate(request)
        sub = self.subresources[subresource]
        if isinstance(sub, Store):
            obj = await sub.get(namespace, name)
            self._respond(request, 200, obj, out)
        elif isinstance(sub, ScaleREST):
            write_object(request, 200, await sub.get(namespace, name), out.media)
        else:
            await sub.get(request, self, namespace, name, out)


def _delete_options_object(delete_opts: dict) -> dict:
    """The request's DeleteOptions as admission sees them: a C{meta.k8s.io/v1} object."""
    return {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
            **{k: v for k, v in delete_opts.items() if k not in ("kind", "apiVersion")}}


def _warn_when_valid(admission: Any, request: Any, warnings: list[str]) -> Any:
    """
    The strategy's warnings join the request's only once the object has passed validation:
    upstream's C{rest.BeforeCreate}/C{BeforeUpdate} add them after C{Validate}, so an invalid
    object gets its 422 without C{Warning} headers.  The Store runs validating admission
    right after its validation, so the warnings are added there, before it.
    """
    if not warnings:
        return admission
    validate = admission.validate

    async def validate_then_warn(operation: str, obj: dict, old: Optional[dict]) -> None:
        _add_warnings(request, warnings)
        await validate(operation, obj, old)

    return dataclasses.replace(admission, validate=validate_then_warn)


async def create_on(handlers: Any, request: Any, namespace: str, name: str, rest: Any) -> None:
    """
    A create served by a REST object that is not a L{Store} (upstream C{createHandler} over a
    C{rest.Creater}: the pod C{binding} and C{eviction} subresources, the legacy C{bindings}
    resource, C{serviceaccounts/token}): negotiate (no Table), check C{dryRun}, decode the
    body as the object's C{expect} kind with the one body decoder (its C{decode_protobuf}
    for protobuf bodies), then C{rest.create(namespace, name, obj, dry_run, admission)} with
    C{admission(name, subresource)} giving the request's L{Admission}; it answers C{(code,
    result, warnings)}, written here.

    @raise StatusError: the decoder's 400/415, 400 for a C{dryRun} other than C{All}, 406,
        and the REST object's errors.
    """
    from kubetwist.endpoints.handlers.options import field_validation_mode

    q = _query(request)
    out = negotiate(request, allow_transform=False)
    dry = list(q.get("dryRun") or [])
    opts.dry_run(q)
    decoded = decodelib.decode(read_body(request), _content_type(request), rest.expect,
                               field_validation_mode(request),
                               protobuf_decoder=getattr(rest, "decode_protobuf", None))
    if decoded.warnings:
        _add_warnings(request, decoded.warnings)

    def admission(admission_name: str, subresource: str) -> Any:
        return handlers._admission(request, namespace, admission_name, subresource, bool(dry))

    code, result, warnings = await rest.create(namespace, name, decoded.obj, dry, admission)
    if warnings:
        _add_warnings(request, warnings)
    write_object(request, code, result, out.media)


def _content_type(request: Any) -> str:
    """The request's bare C{Content-Type} (C{""} when absent)."""
    return codec.content_type_of((request.getHeader(b"content-type") or b"").decode("latin-1"))

def _apply_yaml_field_validation(request: Any, body: bytes) -> None:
    """
    Upstream C{applyPatcher.applyPatchToCurrentObject}: after the apply, under
    C{fieldValidation=Strict} or C{Warn} the applied configuration is decoded again with
    C{yaml.UnmarshalStrict}, so a duplicate key is caught even where the object's schema keeps
    unknown fields.

    @raise StatusError: 400 BadRequest C{error strict decoding YAML: error converting YAML to
        JSON: yaml: unmarshal errors:} and a two-space indented C{line 9: key "foo" already set
        in map} line per duplicate, under
        C{Strict}; under C{Warn} each duplicate becomes a C{Warning}.
    """
    from kubetwist.endpoints.handlers.options import field_validation_mode

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
    warnings = context_of(request).warnings
    for text in texts:
        if text not in warnings:
            warnings.append(text)


def _warnings_so_far(request: Any) -> list[str]:
    """Warnings already collected for this request (decoding adds some, e.g. unknown fields)."""
    return list(context_of(request).warnings)


#: C{metav1.DeleteOptions}' fields in Go's order.
_DELETE_OPTIONS_FIELDS = ("gracePeriodSeconds", "preconditions", "orphanDependents",
                          "propagationPolicy", "dryRun",
                          "ignoreStoreReadErrorWithClusterBreakingPotential")


def _audit_annotator(request: Any) -> Any:
    """The admission chain's C{annotate}: admission annotations become audit annotations."""
    if audit_event.context_of(request) is None:
        return None
    return lambda key, value: audit_event.add_annotation(request, key, value)


def _audit_delete_options(request: Any, body: Optional[dict]) -> None:
    """Upstream's delete handlers log a sent C{DeleteOptions} body as the audit
    C{requestObject}, in the internal version (C{meta.k8s.io/__internal})."""
    if body is None or audit_event.context_of(request) is None:
        return
    logged = {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/__internal"}
    logged.update((k, body[k]) for k in _DELETE_OPTIONS_FIELDS if body.get(k) is not None)
    audit_event.log_request_object(request, logged)


def _decode_patch(body: bytes) -> Any:
    try:
        return codec.decode_body(body, codec.JSON)
    except codec.JSONSyntaxError as e:
        raise errors.new_bad_request(f"error decoding patch: {e}") from None


def _optional_body(request: Any) -> Optional[dict]:
    """
    The C{DeleteOptions} body of a delete, or C{None} (upstream C{delete.go} decodes it with
    the internal meta scheme's codec and answers its errors as plain errors: 500, no reason).

    @raise StatusError: 500 C{couldn't get version/kind; json parse error: ...} (malformed,
        not an object, a kind that is not a string), C{no kind "Pod" is registered for
        version "v1" in scheme "pkg/apis/meta/internalversion/scheme/register.go:27"}, Go's
        decoder error for a value of the wrong type (C{json: cannot unmarshal string into Go
        struct field DeleteOptions.gracePeriodSeconds of type int64}).
    """
    body = read_body(request)
    if not body.strip():
        return None
    ctype = _content_type(request)
    if ctype == codec.PROTOBUF:
        from kubetwist.runtime import protobuf

        return protobuf.decode(body, default_gvk=("", "v1", "DeleteOptions"))
    try:
        obj = codec.decode_body(body, ctype or codec.JSON)
    except codec.JSONSyntaxError as e:
        raise _plain_error(f"couldn't get version/kind; json parse error: {e}") from None
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise _plain_error(
            "couldn't get version/kind; json parse error: json: cannot unmarshal "
            f"{typed._json_kind(obj)} into Go value of type struct {{ APIVersion string "
            '"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }')
    for key in ("kind", "apiVersion"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise _plain_error(
                "couldn't get version/kind; json parse error: json: cannot unmarshal "
                f"{typed._json_kind(obj[key])} into Go struct field .{key} of type string")
    kind = obj.get("kind") or "DeleteOptions"
    if kind != "DeleteOptions":
        raise _plain_error(
            f'no kind "{kind}" is registered for version "{obj.get("apiVersion") or ""}" in '
            'scheme "pkg/apis/meta/internalversion/scheme/register.go:27"')
    message = typed.decode_error(obj, typetables.lookup_kind("", "v1", "DeleteOptions"), body,
                                 json_body=(ctype or codec.JSON) == codec.JSON)
    if message:
        raise _plain_error(message)
    return obj


def _gvk(obj: dict) -> str:
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    return f"{group}/{version}, Kind={obj.get('kind', '')}"


def _gvknn(obj: dict) -> str:
    """C{namespace/name; group/version, Kind=K} of an object, as upstream's field manager
    errors print it."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}; {_gvk(obj)}"


def _apply_type_check(applied: dict, type_name: str, fm: Any) -> None:
    """
    Server-side apply's typed patch object: a value of the wrong type in the applied
    configuration is upstream's 500 C{failed to create typed patch object (/d; apps/v1,
    Kind=Deployment): .spec.replicas: expected numeric (int or float), got string}
    (structured-merge-diff's validation, C{fmvalidate.type_errors}).
    """
    from kubetwist.apimachinery.fieldmanager import merge
    from kubetwist.apimachinery.fieldmanager import validate as fmvalidate

    errs = fmvalidate.type_errors(applied, type_name, fm.schema)
    if errs:
        raise _plain_error(
            f"failed to create typed patch object ({_gvknn(applied)}): {merge.SchemaError(errs)}")


def _plain_error(message: str) -> errors.StatusError:
    """A plain Go error as upstream's C{ErrorToAPIStatus} answers it: 500, no reason."""
    err = errors.make_status(500, "", message)
    err.status.pop("reason", None)
    return err
