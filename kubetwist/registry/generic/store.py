# -*- test-case-name: tests.registry -*-
"""
The generic registry Store: upstream C{k8s.io/apiserver/pkg/registry/generic/registry/store.go}
with C{pkg/registry/rest/{create,update,delete}.go}.

One L{Store} serves one resource (or one subresource, sharing the parent's storage keys) over an
L{IStorage}.  Every write is one storage transaction: a create is one conditional put, an update
one compare-and-swap inside C{guaranteed_update} (re-run on conflict), a delete one conditional
delete.  Storage errors are interpreted here into API L{StatusError}s (upstream
C{storage/errors.go}: KeyNotFound -> NotFound, KeyExists -> AlreadyExists, conflicts -> Conflict,
unreachable -> 503), so handlers only ever see API errors.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Optional

from twisted.internet.defer import Deferred
from zope.interface import implementer, implementer_only

from kubetwist.apimachinery import validation as mv
from kubetwist.apimachinery.meta import generate_name, new_uid, now_rfc3339
from kubetwist.registry import deletion
from kubetwist.registry.rest import (
    IGetter,
    IPatcher,
    IStandardStorage,
    IUpdater,
    ResourceSpec,
    Strategy,
)
from kubetwist.runtime import codec, errors
from kubetwist.runtime import field as fielderr
from kubetwist.storage import interfaces as st
from kubetwist.storage import metrics as storage_metrics

#: Upstream C{maxNameGenerationCreateAttempts}: how many names a create with C{generateName}
#: tries before answering 409 AlreadyExists.
MAX_NAME_GENERATION_CREATE_ATTEMPTS = 8

#: An admission hook: C{(operation, obj, old) -> Awaitable[None]}; may mutate C{obj}, may raise.
AdmissionFunc = Callable[[str, dict, Optional[dict]], Awaitable[None]]


async def _no_admission(operation: str, obj: dict, old: Optional[dict]) -> None:
    return None


@dataclass
class Admission:
    """The two admission phases a write passes through (see L{kubetwist.admission})."""

    mutate: AdmissionFunc = _no_admission
    validate: AdmissionFunc = _no_admission


NO_ADMISSION = Admission()


@dataclass
class ListOptions:
    """
    Upstream C{metav1.ListOptions}, decoded from the query string.

    @ivar predicate: what to select (label and field selectors already combined).
    @ivar timeout_seconds: client watch timeout, in seconds, or C{None}.
    """

    predicate: st.SelectionPredicate = st.EVERYTHING
    resource_version: str = ""
    resource_version_match: str = ""
    limit: int = 0
    continue_token: str = ""
    allow_watch_bookmarks: bool = False
    send_initial_events: Optional[bool] = None
    timeout_seconds: Optional[int] = None
    name: str = ""


def interpret_storage_error(err: Exception, spec: ResourceSpec, name: str) -> Exception:
    """
    Turn a storage error into the API error a client sees (upstream C{storage/errors.go}).
    Non-storage errors are returned unchanged.
    """
    g, r = spec.group, spec.resource
    if isinstance(err, st.KeyNotFoundError):
        return errors.new_not_found(g, r, name)
    if isinstance(err, st.KeyExistsError):
        return errors.new_already_exists(g, r, name)
    if isinstance(err, st.ResourceVersionConflictError):
        return errors.new_conflict(g, r, name, errors.OPTIMISTIC_LOCK_ERROR_MSG)
    if isinstance(err, st.InvalidObjError):
        return errors.new_conflict(g, r, name, str(err))
    if isinstance(err, st.ResourceVersionExpiredError):
        expired = errors.new_resource_expired(str(err))
        if err.continue_token:
            # upstream: the 410 for a compacted continue carries a token for the rest
            expired.status["metadata"] = {"continue": err.continue_token}
        return expired
    if isinstance(err, st.TooLargeResourceVersionError):
        e = errors.make_status(
            504, "Timeout",
            f"Timeout: Too large resource version: {err.revision}, current: {err.key}"
            if err.key.isdigit() else f"Timeout: {err}",
            {"causes": [{"reason": "ResourceVersionTooLarge",
                         "message": "Too large resource version"}],
             "retryAfterSeconds": 1},
        )
        return e
    if isinstance(err, st.InvalidContinueError):
        return errors.new_bad_request(str(err))
    if isinstance(err, st.UnreachableError):
        return errors.new_service_unavailable(str(err) or "storage is unreachable")
    if isinstance(err, st.InternalError):
        return errors.new_internal_error(str(err))
    return err


@implementer(IStandardStorage)
class Store:
    """
    CRUD, list and watch of one resource over storage, with its strategy.

    @param spec: the resource's table row (group, kind, names, scope).
    @param strategy: the resource's L{Strategy}.
    @param storage: the backend (possibly a Cacher).
    @param clock: C{IReactorTime}, for C{creationTimestamp} and C{deletionTimestamp}.
    @param key_root: storage key prefix, e.g. C{/registry/services/specs}; defaults to
        C{/registry/<resource>} (core and most groups) as upstream.
    @param return_deleted_object: answer a delete with the object instead of a C{Status}.
    """

    def __init__(
        self,
        spec: ResourceSpec,
        strategy: Strategy,
        storage: st.IStorage,
        clock: Any,
        key_root: Optional[str] = None,
        return_deleted_object: bool = False,
        decorator: Optional[Callable[[dict], None]] = None,
    ) -> None:
        self.spec = spec
        self.strategy = strategy
        self.storage = storage
        self.clock = clock
        self.key_root = key_root or f"/registry/{spec.resource}"
        storage_metrics.register_resource(self.key_root, spec.group, spec.resource)
        self.return_deleted_object = return_deleted_object
        self.decorator = decorator
        #: upstream C{names.SimpleNameGenerator}: C{generateName -> name} (tests inject one)
        self.name_generator: Callable[[str], str] = generate_name
        #: hooks run after a successful write (allocators, controllers): (obj) -> None
        self.after_create: list[Callable[[dict], Any]] = []
        self.after_delete: list[Callable[[dict], Any]] = []
        #: hooks that may veto/prepare a create or delete inside the write path
        self.before_create: list[Callable[[dict, bool], Awaitable[None]]] = []
        self.before_update: list[Callable[[dict, dict, bool], Awaitable[None]]] = []
        #: objects marked for deletion (deletionTimestamp set, finalizers pending): (obj) -> None
        self.on_marked_for_deletion: list[Callable[[dict], Any]] = []
        #: extra change made when marking for deletion (namespaces: status.phase Terminating)
        self.mark_deleting: Optional[Callable[[dict], None]] = None
        #: upstream C{DefaultGarbageCollectionPolicy} (C{""}: none, i.e. background)
        self.gc_policy: str = deletion.default_gc_policy(spec.group, spec.version, spec.resource)
        #: upstream C{CheckGracefulDelete}, for resources deleted gracefully (pods)
        self.check_graceful_delete: Optional[deletion.GracefulDeleteCheck] = \
            deletion.graceful_delete_check(spec.group, spec.resource)

    # --- keys ---------------------------------------------------------------------------------
    def key(self, namespace: str, name: str) -> str:
        if self.spec.namespaced:
            return f"{self.key_root}/{namespace}/{name}"
        return f"{self.key_root}/{name}"

    def prefix(self, namespace: str) -> str:
        if self.spec.namespaced and namespace:
            return f"{self.key_root}/{namespace}/"
        return f"{self.key_root}/"

    def has_pending_finalizers(self, obj: dict) -> bool:
        """Whether deleting C{obj} must wait: C{metadata.finalizers}, and for namespaces their
        C{spec.finalizers} (upstream namespace REST)."""
        if (obj.get("metadata") or {}).get("finalizers"):
            return True
        if self.spec.resource == "namespaces" and not self.spec.group:
            return bool((obj.get("spec") or {}).get("finalizers"))
        return False

    def for_subresource(self, strategy: Strategy) -> "Store":
        """
        A store over the same keys with another strategy (upstream C{StatusREST},
        C{FinalizeREST}, ...) that provides only the capabilities of the strategy's
        C{subresource_verbs} (L{IGetter}, L{IPatcher}, L{IUpdater} for a status subresource;
        L{IUpdater} alone for a namespace's C{finalize}), which the installer reads.
        """
        sub = copy.copy(self)
        sub.__class__ = _SUBRESOURCE_STORES[tuple(sorted(strategy.subresource_verbs))]
        sub.strategy = strategy
        sub.before_create = []
        sub.before_update = []
        return sub

    # --- object shaping ----------------------------------------------------------------------
    def _typed(self, obj: dict) -> dict:
        """Put C{apiVersion}/C{kind} first, as the typed encoder writes them."""
        out = {"apiVersion": self.spec.api_version, "kind": self.spec.kind}
        out.update((k, v) for k, v in obj.items() if k not in ("apiVersion", "kind"))
        if self.decorator is not None:
            self.decorator(out)
        return out

    def _name_errors(self, obj: dict) -> None:
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            raise errors.new_invalid(
                self.spec.group, self.spec.kind, "",
                [fielderr.required("metadata.name", "name or generateName is required")],
            )

    # --- reads -------------------------------------------------------------------------------
    async def get(self, namespace: str, name: str, resource_version: str = "",
                  shared: bool = False) -> dict:
        """Fire with the object, typed; 404 NotFound when missing.  C{shared}: the caller
        only reads it, so below its top level it may be the watch cache's own object."""
        try:
            if shared and self.serves_encoded_lists():
                obj = await self.storage.get_shared(self.key(namespace, name),
                                                    resource_version)
            else:
                obj = await self.storage.get(self.key(namespace, name), resource_version)
        except Exception as e:
            raise interpret_storage_error(e, self.spec, name) from None
        return self._typed(obj)

    async def list(self, namespace: str, options: ListOptions, shared: bool = False) -> dict:
        """
        Fire with a C{<Kind>List}: C{{"kind", "apiVersion", "metadata": {"resourceVersion",
        "continue"?, "remainingItemCount"?}, "items": [...]}}; items carry no kind/apiVersion,
        as upstream's typed lists.  C{shared}: the caller only reads the items (it renders
        them), so their values may be the watch cache's own (each item is a new top-level
        dict; nothing below it may be changed).
        """
        result = await self._get_list(namespace, options, shared=shared)
        items = [self._list_item(item) for item in result.items]
        return self._list_object(result, items)

    def serves_encoded_lists(self) -> bool:
        """Whether L{list_encoded} reuses encodings (the storage is the watch cache)."""
        # the storage's own class: a wrapper that converts (and forwards other attributes to
        # the Cacher it wraps) must not be bypassed
        return getattr(type(self.storage), "shares_objects", False)

    async def list_encoded(self, namespace: str, options: ListOptions, flavor: Any = None,
                           encode_item: Optional[Callable[[dict], bytes]] = None,
                           ) -> tuple[dict, list[bytes], list[dict]]:
        """
        L{list} for a response written from per-item bytes: fire with C{(list, encoded,
        items)} where C{list} is the list object with an empty C{items} (its envelope),
        C{items} the stored objects (read-only: they may be the watch cache's own; L{list}
        would give C{_list_item(obj)} of each), and C{encoded} the bytes of each item: by
        default as Go's encoder writes it inside the list (L{codec.list_item_encoder}), so
        that the body is C{codec.list_envelope(list)} joined around C{b",".join(encoded)}; or
        C{encode_item(item)} for another output (a Table row's object), named by C{flavor}
        (hashable).  From the watch cache each object is encoded once per Store and flavor
        and reused by every list until it changes (upstream's serialization cache).
        """
        encode_item = encode_item or self._item_encoder()
        key = self if flavor is None else (self, flavor)

        def encode(obj: dict) -> bytes:
            return encode_item(self._list_item(obj))

        result = await self._get_list(namespace, options, encode=encode, flavor=key)
        return self._list_object(result, []), result.encoded or [], result.items

    def _item_encoder(self) -> Any:
        encoder = self.__dict__.get("_encoder")
        if encoder is None:
            encoder = self._encoder = codec.list_item_encoder(self.spec.api_version,
                                                              self.spec.list_kind)
        return encoder

    async def _get_list(self, namespace: str, options: ListOptions, *, shared: bool = False,
                        encode: Any = None, flavor: Any = None) -> Any:
        """The storage's L{st.ListResult}: copies, the cache's own objects (C{shared}), or
        with C{encoded} filled by C{encode} (C{item -> bytes})."""
        args = dict(
            recursive=True,
            resource_version=options.resource_version,
            resource_version_match=options.resource_version_match,
            limit=options.limit,
            continue_token=options.continue_token,
            predicate=options.predicate,
        )
        try:
            if shared and self.serves_encoded_lists():
                return await self.storage.get_list_shared(self.prefix(namespace), **args)
            if encode is None:
                return await self.storage.get_list(self.prefix(namespace), **args)
            if not self.serves_encoded_lists():
                result = await self.storage.get_list(self.prefix(namespace), **args)
                result.encoded = [encode(item) for item in result.items]
                return result
            return await self.storage.get_list_encoded(self.prefix(namespace),
                                                       flavor or self, encode, **args)
        except Exception as e:
            raise interpret_storage_error(e, self.spec, "") from None

    def _list_item(self, item: dict) -> dict:
        """A stored object as a typed list holds it: no kind/apiVersion, decorated (a new
        top-level dict; values shared with C{item})."""
        it = {k: v for k, v in item.items() if k not in ("apiVersion", "kind")}
        if self.decorator is not None:
            self.decorator(it)
        return it

    def _list_object(self, result: Any, items: list) -> dict:
        meta: dict[str, Any] = {"resourceVersion": result.resource_version}
        if result.continue_token:
            meta["continue"] = result.continue_token
        if result.remaining_item_count is not None and result.continue_token:
            meta["remainingItemCount"] = result.remaining_item_count
        return {
            "kind": self.spec.list_kind,
            "apiVersion": self.spec.api_version,
            "metadata": meta,
            "items": items,
        }

    def watch(self, namespace: str, options: ListOptions,
              timeout: Optional[float] = None, share_objects: bool = False) -> st.Watch:
        """
        A L{Watch} of this resource in C{namespace} (all namespaces when empty).  A storage
        providing L{st.IWatchCache} (the Cacher) also gets C{allowWatchBookmarks},
        C{sendInitialEvents} and the watch's C{timeout} (seconds), and serves them itself.
        C{share_objects}: the caller only reads the events' objects (it encodes them), so the
        Cacher may hand out its own, with the encoding memo of L{st.WatchEvent.memo}.
        """
        extra: dict[str, Any] = {}
        if st.IWatchCache.providedBy(self.storage):
            extra = {"allow_watch_bookmarks": options.allow_watch_bookmarks,
                     "send_initial_events": options.send_initial_events,
                     "timeout": timeout}
            if share_objects and self.serves_encoded_lists():
                extra["share_objects"] = True
        if options.name:
            return self.storage.watch(
                self.key(namespace, options.name), options.resource_version, False,
                options.predicate, **extra,
            )
        return self.storage.watch(
            self.prefix(namespace), options.resource_version, True, options.predicate, **extra
        )

    # --- create ------------------------------------------------------------------------------
    def _before_create(self, namespace: str, obj: dict) -> None:
        """Upstream C{rest.BeforeCreate}: scope checks, system fields, name, prepare, validate."""
        self._name_errors(obj)
        meta = obj["metadata"]
        if self.spec.namespaced:
            if not namespace:
                raise errors.new_bad_request("the server could not find the requested resource")
            obj_ns = meta.get("namespace", "")
            if obj_ns and obj_ns != namespace:
                raise errors.new_bad_request(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request"
                )
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        meta.pop("deletionTimestamp", None)
        meta.pop("deletionGracePeriodSeconds", None)
        # Upstream fills the system fields and generates the name before PrepareForCreate
        # (a Job's generated selector uses its uid and name).
        meta["uid"] = new_uid()
        meta["creationTimestamp"] = now_rfc3339(self.clock)
        meta.pop("selfLink", None)
        meta.pop("resourceVersion", None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = self.name_generator(meta["generateName"])
        self.strategy.prepare_for_create(obj)
        meta = obj["metadata"]
        errs = self.strategy.validate(obj)
        if errs:
            raise errors.new_invalid(
                self.spec.group, self.spec.kind, meta.get("name", ""), errs
            )
        self.strategy.canonicalize(obj)
        omit_empty_meta(obj)

    async def create(
        self,
        namespace: str,
        obj: dict,
        admission: Admission = NO_ADMISSION,
        dry_run: bool = False,
    ) -> dict:
        """
        Create C{obj} (already decoded and defaulted).  Fires with the stored object, typed.

        Mutating admission runs once; the rest (allocation hooks, name generation, prepare,
        validation, validating admission, the storage create) is one attempt, and a name made
        from C{generateName} that exists is retried with a new name, up to
        L{MAX_NAME_GENERATION_CREATE_ATTEMPTS} attempts (upstream C{Store.Create},
        RetryGenerateName).

        @raise StatusError: 422 Invalid; 409 AlreadyExists (C{configmaps "x" already exists},
            or with C{generateName} set C{..., the server was not able to generate a unique
            name for the object} and C{retryAfterSeconds: 1}; prefixed C{object is being
            deleted: } when the existing object is); 400 BadRequest (namespace mismatch);
            admission's errors.
        """
        obj = self._typed(obj)
        given_rv = (obj.get("metadata") or {}).get("resourceVersion") \
            if isinstance(obj.get("metadata"), dict) else None
        await admission.mutate("CREATE", obj, None)
        self._name_errors(obj)
        meta = obj["metadata"]
        if not (meta.get("generateName") and not meta.get("name")):
            return await self._create(namespace, obj, admission, dry_run, given_rv)
        # upstream createWithGenerateNameRetry (RetryGenerateName, GA in v1.32): a generated
        # name that exists is generated again, each attempt on a fresh copy
        for attempt in range(MAX_NAME_GENERATION_CREATE_ATTEMPTS):
            try:
                return await self._create(namespace, copy.deepcopy(obj), admission, dry_run,
                                          given_rv)
            except errors.StatusError as e:
                if e.status.get("reason") != "AlreadyExists" \
                        or attempt == MAX_NAME_GENERATION_CREATE_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _create(self, namespace: str, obj: dict, admission: Admission, dry_run: bool,
                      given_rv: Optional[str]) -> dict:
        """One attempt of upstream C{Store.create}: hooks, name, prepare, validate, store."""
        # upstream BeginCreate (allocations) runs before BeforeCreate (prepare, validate); its
        # finish function undoes them when anything after it fails (finishCreate(ctx, false))
        for hook in self.before_create:
            await hook(obj, dry_run)
        try:
            out = await self._create_begun(namespace, obj, admission, dry_run, given_rv)
        except Exception:
            if not dry_run:
                for hook in self.after_delete:
                    await _maybe_await(hook(obj))
            raise
        if dry_run:
            return out
        for hook in self.after_create:
            await _maybe_await(hook(out))
        return self._typed(out)

    async def _create_begun(self, namespace: str, obj: dict, admission: Admission,
                            dry_run: bool, given_rv: Optional[str]) -> dict:
        self._before_create(namespace, obj)
        await admission.validate("CREATE", obj, None)
        name = obj["metadata"]["name"]
        key = self.key(namespace, name)
        if dry_run:
            # a dry run still refuses a name that exists, as the storage create would
            existing = await self._get_or_none(key)
            if existing is not None:
                raise self._already_exists(obj, existing)
            return obj
        if given_rv and given_rv.isascii() and given_rv.isdigit() and \
                0 < int(given_rv) < 1 << 64:
            # upstream's etcd3 store refuses a resourceVersion that parses (ParseUint) and is
            # not 0 with a plain error: a 500 without reason to the client; others are ignored
            e = errors.make_status(
                500, "", "resourceVersion should not be set on objects to be created")
            e.status.pop("reason")
            raise e
        try:
            return await self.storage.create(key, obj)
        except st.KeyExistsError:
            try:
                existing = await self.storage.get(key, ignore_not_found=True)
            except Exception:
                existing = None
            raise self._already_exists(obj, existing) from None
        except Exception as e:
            raise interpret_storage_error(e, self.spec, name) from None

    def _already_exists(self, obj: dict, existing: Optional[dict]) -> errors.StatusError:
        """
        The 409 C{AlreadyExists} of a create whose key exists: upstream
        C{InterpretCreateError}, C{rest.CheckGeneratedNameError} (when the object has a
        C{generateName}: C{configmaps "x" already exists, the server was not able to generate
        a unique name for the object}, C{retryAfterSeconds: 1}) and the C{object is being
        deleted: } prefix when C{existing} carries a C{deletionTimestamp}.
        """
        meta = obj["metadata"]
        name = meta.get("name", "")
        if meta.get("generateName"):
            err = errors.new_generate_name_conflict(self.spec.group, self.spec.resource, name)
        else:
            err = errors.new_already_exists(self.spec.group, self.spec.resource, name)
        if existing is not None and (existing.get("metadata") or {}).get("deletionTimestamp"):
            err.status["message"] = f"object is being deleted: {err.status['message']}"
            err = errors.StatusError(err.status)
        return err

    # --- update ------------------------------------------------------------------------------
    async def update(
        self,
        namespace: str,
        name: str,
        transform: Callable[[Optional[dict]], Awaitable[dict]],
        admission: Admission = NO_ADMISSION,
        dry_run: bool = False,
        force_allow_create: bool = False,
    ) -> tuple[dict, bool]:
        """
        Update (or, where allowed, create) one object inside one C{guaranteed_update}.

        @param transform: C{async (current_or_None) -> new}: the updated object the client wants
            (for PUT the body, for PATCH the patch applied to C{current}); re-run on conflict.
        @return: Deferred of C{(object, created)}.
        @raise StatusError: 404 NotFound, 409 Conflict (stale resourceVersion, upstream's
            optimistic-lock message), 422 Invalid, admission's errors.
        """
        key = self.key(namespace, name)
        created = False

        async def try_update(current: Optional[dict]) -> dict:
            nonlocal created
            if current is None:
                if not (self.strategy.allow_create_on_update or force_allow_create):
                    raise errors.new_not_found(self.spec.group, self.spec.resource, name)
                new = self._typed(await transform(None))
                created = True
                new_meta = new.setdefault("metadata", {})
                if new_meta.get("resourceVersion"):
                    raise errors.new_not_found(self.spec.group, self.spec.resource, name)
                await admission.mutate("CREATE", new, None)
                self._before_create(namespace, new)
                await admission.validate("CREATE", new, None)
                return new
            created = False
            if self.decorator is not None:
                self.decorator(current)
            old = current
            new = self._typed(await transform(copy.deepcopy(current)))
            if not isinstance(new.get("metadata"), dict):
                new["metadata"] = {}
            new_meta = new["metadata"]
            old_meta = old.get("metadata", {})
            if self.spec.namespaced:
                if new_meta.get("namespace") and new_meta["namespace"] != namespace:
                    raise errors.new_bad_request(
                        "the namespace of the provided object does not match the namespace "
                        "sent on the request"
                    )
                new_meta["namespace"] = namespace
            if new_meta.get("name") and new_meta["name"] != name:
                raise errors.new_bad_request(
                    f"the name of the object ({new_meta['name']}) does not match the name on "
                    f"the URL ({name})"
                )
            new_meta["name"] = name
            rv = new_meta.get("resourceVersion", "")
            unconditional = False
            if not rv:
                if not self.strategy.allow_unconditional_update:
                    # upstream names the resource where the kind goes (its TODO, #18526)
                    raise errors.new_invalid(
                        self.spec.group, self.spec.resource, name,
                        [_Uint64Invalid("Invalid", "metadata.resourceVersion", 0,
                                        "must be specified for an update")],
                    )
                unconditional = True
            elif rv != old_meta.get("resourceVersion"):
                raise errors.new_conflict(
                    self.spec.group, self.spec.resource, name,
                    errors.OPTIMISTIC_LOCK_ERROR_MSG,
                )
            await admission.mutate("UPDATE", new, old)
            new_meta = new.setdefault("metadata", {})
            if unconditional:
                # upstream doUnconditionalUpdate: after mutating admission (which sees the body
                # as sent), the object takes the stored version
                new_meta["resourceVersion"] = old_meta.get("resourceVersion", "")
            for hook in self.before_update:
                await hook(new, old, dry_run)
            self._before_update(new, old)
            await admission.validate("UPDATE", new, old)
            new["metadata"]["resourceVersion"] = old_meta.get("resourceVersion", "")
            return new

        if dry_run:
            current = await self._get_or_none(key)
            out = await try_update(copy.deepcopy(current) if current else None)
            return out, created
        try:
            out = await self.storage.guaranteed_update(key, try_update, ignore_not_found=True)
        except Exception as e:
            raise interpret_storage_error(e, self.spec, name) from None
        if created:
            for hook in self.after_create:
                await _maybe_await(hook(out))
        meta = out.get("metadata", {})
        if meta.get("deletionTimestamp") and not meta.get("deletionGracePeriodSeconds") \
                and not self.has_pending_finalizers(out):
            # the last finalizer is gone and no graceful deletion is pending: finish the
            # deletion (upstream ShouldDeleteDuringUpdate, deleteWithoutFinalizers)
            try:
                out = await self.storage.delete(
                    key, st.Preconditions(resource_version=meta.get("resourceVersion"))
                )
            except st.KeyNotFoundError:
                pass
            except st.StorageError as e:
                raise interpret_storage_error(e, self.spec, name) from None
            else:
                for hook in self.after_delete:
                    await _maybe_await(hook(out))
        return self._typed(out), created

    def _before_update(self, new: dict, old: dict) -> None:
        """Upstream C{rest.BeforeUpdate}: keep system fields, prepare, validate."""
        new_meta = new["metadata"]
        old_meta = old.get("metadata", {})
        if "generation" in old_meta:
            new_meta["generation"] = old_meta["generation"]
        else:
            new_meta.pop("generation", None)
        self.strategy.prepare_for_update(new, old)
        new_meta = new["metadata"]
        if not new_meta.get("uid"):
            new_meta["uid"] = old_meta.get("uid", "")
        if old_meta.get("creationTimestamp"):
            new_meta["creationTimestamp"] = old_meta["creationTimestamp"]
        for k in ("deletionTimestamp", "deletionGracePeriodSeconds"):
            if k in old_meta:
                new_meta[k] = old_meta[k]
            else:
                new_meta.pop(k, None)
        new_meta.pop("selfLink", None)
        # upstream rest.BeforeUpdate: validateCommonFields (ObjectMeta, and its update rules)
        # for every resource, then the strategy's own ValidateUpdate, which repeats the
        # ObjectMeta update checks for the built-in kinds: such errors are listed twice in
        # the causes (the message lists each once), as kube-apiserver answers
        meta_path = fielderr.Path("metadata")
        errs = mv.validate_object_meta(new_meta, self.spec.namespaced, _path_segment_name,
                                       meta_path)
        errs += mv.validate_object_meta_update(new_meta, old_meta, meta_path)
        errs += self.strategy.validate_update(new, old)
        if errs:
            raise errors.new_invalid(self.spec.group, self.spec.kind, new_meta.get("name", ""),
                                     errs)
        self.strategy.canonicalize(new)
        omit_empty_meta(new)

    async def _get_or_none(self, key: str) -> Optional[dict]:
        try:
            return await self.storage.get(key, ignore_not_found=True)
        except Exception as e:
            raise interpret_storage_error(e, self.spec, key.rsplit("/", 1)[-1]) from None

    # --- delete ------------------------------------------------------------------------------
    async def delete(
        self,
        namespace: str,
        name: str,
        options: Optional[dict] = None,
        admission: Admission = NO_ADMISSION,
        dry_run: bool = False,
        veto: bool = True,
    ) -> tuple[dict, bool]:
        """
        Delete one object (upstream C{Store.Delete}, C{updateForGracefulDeletionAndFinalizers}).

        The object is removed at once unless it must stay: a graceful deletion (pods bound to a
        node: C{deletionTimestamp = now + grace}, C{deletionGracePeriodSeconds = grace}), or
        finalizers, including the C{orphan} / C{foregroundDeletion} ones this delete adds for
        the garbage collector (C{propagationPolicy}, deprecated C{orphanDependents}, else the
        resource's default policy): then C{deletionTimestamp = now},
        C{deletionGracePeriodSeconds = 0}, and the kept object is the answer.

        @param options: a C{DeleteOptions} dict (C{preconditions}, C{gracePeriodSeconds},
            C{propagationPolicy}, C{orphanDependents}, C{dryRun}); C{None} (internal callers)
            means C{gracePeriodSeconds: 0}, as upstream.  Not mutated.
        @param veto: run the strategy's C{veto_delete}; L{delete_collection} does not (upstream
            registries override C{Delete} only, and C{DeleteCollection} calls the generic one).
        @return: Deferred of C{(answer, deleted_now)}: the object when it is kept, else (and
            when a graceful deletion is already pending with a grace no shorter) the object
            when this resource returns deleted objects, else a C{Status} of success naming it
            (C{details.kind} is the resource, as upstream).
        @raise StatusError: 404 NotFound; 409 Conflict (preconditions: upstream's messages);
            422 Invalid DeleteOptions; admission's errors.
        """
        if veto and self.strategy.veto_delete is not None:
            self.strategy.veto_delete(namespace, name)
        options = copy.deepcopy(options) if options is not None else {"gracePeriodSeconds": 0}
        dry_run = dry_run or deletion.is_dry_run(options)
        key = self.key(namespace, name)
        pre = options.get("preconditions") or {}
        preconditions = st.Preconditions(uid=pre.get("uid"),
                                         resource_version=pre.get("resourceVersion"))
        current = await self._get_or_none(key)
        if current is None:
            raise errors.new_not_found(self.spec.group, self.spec.resource, name)
        first = self._before_delete(copy.deepcopy(current), options)
        if first.pending:
            return self._finalize_delete(current), False
        # upstream AdmissionToValidateObjectDeleteFunc: mutating, then validating admission,
        # no object and the stored one as the old object
        await admission.mutate("DELETE", None, current)
        await admission.validate("DELETE", None, current)
        pending_finalizers = self.has_pending_finalizers(current)
        finalizers_change, _ = deletion.gc_finalizers(self.gc_policy, current, options)
        ignore_not_found = False
        last_existing: Optional[dict] = None
        if first.graceful or pending_finalizers or finalizers_change:
            state: dict[str, Any] = {"pending_finalizers": False, "last_graceful": 0}

            async def mark(cur: Optional[dict]) -> dict:
                if cur is None:
                    raise st.KeyNotFoundError(key)
                preconditions.check(key, cur)
                step = self._before_delete(cur, options)
                if step.pending:
                    raise _AlreadyDeleting()
                changed, fins = deletion.gc_finalizers(self.gc_policy, cur, options)
                cm = cur.setdefault("metadata", {})
                if changed:
                    if fins:
                        cm["finalizers"] = fins
                    else:
                        cm.pop("finalizers", None)
                state["pending_finalizers"] = self.has_pending_finalizers(cur)
                if not step.graceful:
                    if not state["pending_finalizers"]:
                        raise _DeleteNow()
                    deletion.mark_as_deleting(cur, self.clock.seconds())
                    if self.mark_deleting is not None:
                        self.mark_deleting(cur)
                    return cur
                state["last_graceful"] = options.get("gracePeriodSeconds") or 0
                state["last_existing"] = copy.deepcopy(cur)
                return cur

            try:
                if dry_run:
                    out = await mark(copy.deepcopy(current))
                else:
                    out = await self.storage.guaranteed_update(key, mark)
            except _AlreadyDeleting:
                return self._finalize_delete(current), False
            except _DeleteNow:
                pass
            except Exception as e:
                raise interpret_storage_error(e, self.spec, name) from None
            else:
                last_existing = state.get("last_existing")
                if state["pending_finalizers"] or state["last_graceful"] > 0:
                    if not dry_run and out.get("metadata", {}).get("resourceVersion") != \
                            current.get("metadata", {}).get("resourceVersion"):
                        for hook in self.on_marked_for_deletion:
                            await _maybe_await(hook(out))
                    return self._typed(out), False
                # graceful with a zero grace: stored marked, now removed (races tolerated)
                ignore_not_found = True
                if preconditions.resource_version is not None:
                    preconditions = st.Preconditions(
                        uid=preconditions.uid,
                        resource_version=out.get("metadata", {}).get("resourceVersion"))
                if dry_run:
                    return self._typed(out), True
        if dry_run:
            return self._finalize_delete(current), True
        try:
            out = await self.storage.delete(key, preconditions)
        except st.KeyNotFoundError:
            if ignore_not_found and last_existing is not None:
                return self._finalize_delete(last_existing), True
            raise errors.new_not_found(self.spec.group, self.spec.resource, name) from None
        except Exception as e:
            raise interpret_storage_error(e, self.spec, name) from None
        for hook in self.after_delete:
            await _maybe_await(hook(out))
        return self._finalize_delete(out), True

    def _before_delete(self, obj: dict, options: dict) -> deletion.BeforeDelete:
        return deletion.before_delete(obj, options, self.clock.seconds(), self.spec.group,
                                      self.spec.kind, self.check_graceful_delete)

    def _finalize_delete(self, obj: dict) -> dict:
        if self.return_deleted_object:
            return self._typed(obj)
        meta = obj.get("metadata", {})
        details: dict[str, Any] = {"name": meta.get("name", "")}
        if self.spec.group:
            details["group"] = self.spec.group
        details["kind"] = self.spec.resource
        details["uid"] = meta.get("uid", "")
        return errors.success_status(details)

    async def delete_collection(
        self,
        namespace: str,
        list_options: ListOptions,
        delete_options: Optional[dict] = None,
        admission: Admission = NO_ADMISSION,
        dry_run: bool = False,
    ) -> dict:
        """
        Delete every selected object one by one (upstream C{DeleteCollection}), each with
        L{delete} and the same options (objects gone meanwhile are skipped).

        @return: Deferred of the C{<Kind>List} listed before deleting (as upstream: the items
            as they were, whether removed, marked or already gone).
        @raise StatusError: 422 Invalid DeleteOptions; the first failing delete's error.
        """
        deletion.validate_delete_options(delete_options or {})
        listed = await self.list(namespace, ListOptions(
            predicate=list_options.predicate,
            resource_version=list_options.resource_version,
        ))
        for item in listed["items"]:
            meta = item.get("metadata", {})
            try:
                await self.delete(
                    meta.get("namespace", ""), meta["name"], delete_options, admission, dry_run,
                    veto=False,
                )
            except errors.StatusError as e:
                if e.code != 404:
                    raise
        return listed


class _Uint64Invalid(fielderr.FieldError):
    """A field error whose bad value is a Go C{uint64}: upstream's C{ErrorBody} prints it
    with C{%#v}, in hexadecimal (C{Invalid value: 0x0})."""

    def body(self) -> str:
        text = f"Invalid value: {self.bad_value:#x}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text


class _AlreadyDeleting(Exception):
    """A graceful deletion with a grace no longer than the requested one is pending."""


class _DeleteNow(Exception):
    """Nothing keeps the object: remove it now."""


def omit_empty_meta(obj: dict) -> None:
    """Drop empty ObjectMeta fields, as Go's C{omitempty} does when an object is stored
    (C{labels: {}} left by removing the last label disappears); C{creationTimestamp} stays."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    for k in [k for k, v in meta.items() if k != "creationTimestamp" and v in ("", {}, [], None)]:
        del meta[k]


async def _maybe_await(value: Any) -> Any:
    if isinstance(value, Deferred):
        return await value
    if hasattr(value, "__await__"):
        return await value
    return value


def _path_segment_name(name: str, prefix: bool) -> list[str]:
    """Upstream C{path.ValidatePathSegmentName}, the name rule of C{validateCommonFields}: not
    C{.} or C{..}, no C{/} or C{%}."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


@implementer_only(IGetter, IPatcher, IUpdater)
class SubresourceStore(Store):
    """A subresource served as get, patch and update (upstream C{StatusREST})."""


@implementer_only(IUpdater)
class UpdateOnlySubresourceStore(Store):
    """A subresource served as update only (upstream C{FinalizeREST})."""


#: sorted verbs -> the class L{Store.for_subresource} gives a subresource store
_SUBRESOURCE_STORES: dict[tuple[str, ...], type] = {
    ("get", "patch", "update"): SubresourceStore,
    ("update",): UpdateOnlySubresourceStore,
}
