# -*- test-case-name: tests.registry.test_versioned -*-
"""
One stored object, several served versions: upstream's storage codec
(C{k8s.io/apiserver/pkg/storage/storagebackend/factory} with the scheme's conversions, as
C{pkg/kubeapiserver/default_storage_factory_builder.go} wires it) and the hub-and-spoke
conversions of C{k8s.io/apimachinery/pkg/runtime/scheme.go}.

A resource is stored in one version (its I{storage version}, which kubetwist also uses as the
hub: upstream's internal types have the storage version's shape for every kind served here).
Another served group-version of the same resource gets:

  - a L{ConvertingStorage} over the shared backend (same keys, same Cacher prefix): objects
    are converted request version -> storage version on the way in and back on the way out,
    on every read, write, list item, watch event and field-selector evaluation;
  - a strategy built by L{hub_strategy}: defaulting stays the served version's own (upstream
    defaults the versioned object it decoded), while preparation, validation, warnings and
    printing run on the hub form, so error field paths are the internal ones, as upstream.

One L{HubConversion} per served version holds both conversions and feeds both pieces
(C{HubConversion.converter} for the storage, the conversion itself for L{hub_strategy}), so
an object prepared on the hub is stored exactly as prepared.  Wiring:
C{APIGroupInfo(group, version, resources, strategies, converters={resource: converter})}.

Conversions are plain synchronous functions C{dict -> dict} that never mutate their input.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from twisted.internet.defer import Deferred, succeed
from zope.interface import alsoProvides, implementer

from kubetwist.registry.rest import Strategy, TableConvertor
from kubetwist.runtime import errors
from kubetwist.storage import interfaces as st

__all__ = ["ConvertingStorage", "HubConversion", "VersionConverter", "hub_strategy"]

Convert = Callable[[dict], dict]


@dataclass(frozen=True)
class VersionConverter:
    """
    How one served version of a resource maps onto its storage version, synchronously (the
    built-in versions: plain functions of the scheme).

    @ivar to_storage: C{served_obj -> storage_obj}: a new dict in the storage version (its
        C{apiVersion} set), with C{metadata} kept (including C{resourceVersion}).
    @ivar from_storage: C{storage_obj -> served_obj}: the reverse.
    """

    to_storage: Convert
    from_storage: Convert

    #: Both conversions answer at once (L{ConvertingStorage}'s fast path).
    synchronous = True

    def from_storage_list(self, items: list[dict]) -> list[dict]:
        """C{from_storage} of each item."""
        return [self.from_storage(i) for i in items]


def _is_async(value: Any) -> bool:
    return isinstance(value, Deferred) or hasattr(value, "__await__")


def _deferred(value: Any) -> Deferred:
    """A Deferred of a conversion's result: a Deferred as is, an awaitable awaited, a plain
    value already fired."""
    if isinstance(value, Deferred):
        return value
    if hasattr(value, "__await__"):
        async def wait() -> Any:
            return await value
        return Deferred.fromCoroutine(wait())
    return succeed(value)


def _chain(value: Any) -> Any:
    """What a Deferred callback returns for a conversion's result: a plain value as is (the
    synchronous fast path adds no Deferred), anything awaitable as a Deferred (chained)."""
    return _deferred(value) if _is_async(value) else value


@implementer(st.IStorage)
class ConvertingStorage:
    """
    An L{st.IStorage} over C{inner} (which holds the storage version) that hands out and takes
    objects in a served version: upstream's storage codec (encode to the storage version,
    decode from whatever version an object was stored in).  Built-in versions and custom
    resources (L{kubetwist.apiextensions.conversion}) both use it.

    The converter has C{to_storage(obj)} and C{from_storage(obj)}, each answering a dict or an
    awaitable of one (a conversion webhook), C{from_storage_list(items)} (one call for a
    list's items: one ConversionReview) and C{synchronous}: true when neither ever awaits
    (L{VersionConverter}; custom resources without a webhook).  A conversion's error reaches
    the caller unchanged (custom resources raise 500 C{InternalError}s with the webhook's text).

    It provides L{st.IWatchCache} when C{inner} does: the watch options (bookmarks, initial
    events, timeout) reach the Cacher, and pause, resume and progress requests reach the
    inner watch, for every version.  Predicates (field selectors) are evaluated on the served
    form when the converter is synchronous, so one Cacher prefix serves every version (upstream
    converts field labels); a webhook cannot run inside the storage's filter, so there they
    see the stored form.  Watch events keep their order and key; with an asynchronous
    converter each waits for its conversion, and a failed conversion ends the watch with an
    C{ERROR} event carrying the error's Status.

    @param inner: the storage of the storage version (possibly a Cacher).
    @param converter: see above.
    """

    def __init__(self, inner: Any, converter: Any) -> None:
        self.inner = inner
        self.converter = converter
        self.synchronous = bool(getattr(converter, "synchronous", False))
        self.name = getattr(inner, "name", "converting")
        if st.IWatchCache.providedBy(inner):
            alsoProvides(self, st.IWatchCache)

    def _served(self, obj: dict | None) -> Any:
        return None if obj is None else _chain(self.converter.from_storage(obj))

    def _stored(self, obj: dict) -> Any:
        return _chain(self.converter.to_storage(obj))

    def _predicate(self, predicate: st.SelectionPredicate) -> st.SelectionPredicate:
        if predicate.empty() or not self.synchronous:
            return predicate
        convert = self.converter.from_storage
        return st.SelectionPredicate(lambda obj: predicate.matches(convert(obj)))

    def get(self, key: str, resource_version: str = "", ignore_not_found: bool = False) -> Deferred:
        d = self.inner.get(key, resource_version, ignore_not_found)
        return d.addCallback(self._served)

    def get_list(self, key: str, recursive: bool = True, resource_version: str = "",
                 resource_version_match: str = "", limit: int = 0, continue_token: str = "",
                 predicate: st.SelectionPredicate = st.EVERYTHING) -> Deferred:
        def convert(result: st.ListResult) -> Any:
            items = self.converter.from_storage_list(list(result.items))
            if _is_async(items):
                return _deferred(items).addCallback(lambda i: replace(result, items=i))
            return replace(result, items=items)
        d = self.inner.get_list(
            key, recursive=recursive, resource_version=resource_version,
            resource_version_match=resource_version_match, limit=limit,
            continue_token=continue_token, predicate=self._predicate(predicate))
        return d.addCallback(convert)

    def create(self, key: str, obj: dict) -> Deferred:
        d = _deferred(self.converter.to_storage(obj))
        d.addCallback(lambda stored: self.inner.create(key, stored))
        return d.addCallback(self._served)

    def delete(self, key: str, preconditions: st.Preconditions | None = None,
               validate_deletion: Callable | None = None) -> Deferred:
        check = None
        if validate_deletion is not None:
            def check(current: dict) -> Any:
                served = self.converter.from_storage(current)
                if _is_async(served):
                    return _deferred(served).addCallback(validate_deletion)
                return validate_deletion(served)
        d = self.inner.delete(key, preconditions, check)
        return d.addCallback(self._served)

    def guaranteed_update(self, key: str, try_update: Callable,
                          preconditions: st.Preconditions | None = None,
                          ignore_not_found: bool = False) -> Deferred:
        """Upstream C{GuaranteedUpdate} through the codec: C{try_update} sees and returns the
        served version; the compare-and-swap stores the storage version."""
        async def wrapped(current: dict | None) -> dict:
            served = None if current is None else self.converter.from_storage(current)
            if _is_async(served):
                served = await served
            new = try_update(served)
            if _is_async(new):
                new = await new
            stored = self.converter.to_storage(new)
            if _is_async(stored):
                stored = await stored
            return stored

        d = self.inner.guaranteed_update(
            key, lambda cur: Deferred.fromCoroutine(wrapped(cur)), preconditions,
            ignore_not_found)
        return d.addCallback(self._served)

    def watch(self, key: str, resource_version: str = "", recursive: bool = False,
              predicate: st.SelectionPredicate = st.EVERYTHING, **extra: Any) -> st.Watch:
        """
        The inner watch with each object event converted (BOOKMARK and ERROR pass unchanged,
        in order); C{extra} (the Cacher's watch options) is passed through; stop, flow
        control and progress requests reach the inner watch.
        """
        inner = self.inner.watch(key, resource_version, recursive, self._predicate(predicate),
                                 **extra)
        progress = inner.request_progress if getattr(inner, "_on_progress", None) else None
        outer = st.Watch(on_stop=inner.stop, on_pause=inner.pauseProducing,
                         on_resume=inner.resumeProducing, on_progress=progress)
        convert = self.converter.from_storage
        #: the last queued asynchronous step; later events wait for it (order is kept)
        tail: list[Deferred] = []

        def enqueue(step: Callable[[], Any]) -> None:
            prev = tail[0] if tail else None

            async def run() -> None:
                if prev is not None:
                    await prev
                await step()
            tail[:] = [Deferred.fromCoroutine(run())]

        def on_event(ev: st.WatchEvent) -> None:
            if ev.type in ("BOOKMARK", "ERROR"):
                if tail:
                    async def send_in_turn() -> None:
                        outer.send(ev)
                    enqueue(send_in_turn)
                else:
                    outer.send(ev)
                return
            try:
                served = convert(ev.object)
            except errors.StatusError as e:
                fail(e)
                return
            if not _is_async(served) and not tail:
                outer.send(st.WatchEvent(ev.type, served, ev.key))
                return

            async def send_converted() -> None:
                if outer.ended:
                    return
                try:
                    obj = await served if _is_async(served) else served
                except errors.StatusError as e:
                    fail(e)
                    return
                outer.send(st.WatchEvent(ev.type, obj, ev.key))
            enqueue(send_converted)

        def fail(e: errors.StatusError) -> None:
            if not outer.ended:
                outer.send(st.WatchEvent("ERROR", e.status))
                outer.close()
                inner.stop()

        def ended(_: Any) -> None:
            if tail:
                tail[0].addBoth(lambda _: outer.close())
            else:
                outer.close()

        inner.subscribe(on_event)
        inner.done.addBoth(ended)
        return outer

    def count(self, key: str) -> Deferred:
        return self.inner.count(key)

    def current_revision(self) -> Deferred:
        return self.inner.current_revision()

    def stop(self) -> Any:
        """The inner storage is shared and stopped by its owner."""
        return None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


def _in_place(obj: dict, new: dict) -> None:
    obj.clear()
    obj.update(new)


def _sans_resource_version(obj: dict) -> dict:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "resourceVersion"}
    return {**obj, "metadata": meta}


class HubConversion:
    """
    The two conversions of a served version to and from its hub (storage) version, with a
    short memory that keeps writes as exact as upstream's.

    Upstream converts a request body to the internal object once, prepares and validates it,
    and stores it; here the L{Store} keeps the served form, so L{hub_strategy}'s prepare
    steps convert to the hub and back.  When the served version cannot express every hub
    value (an autoscaling/v1 status metric always carries a quantity), that extra round trip
    would change the stored object.  So each prepared hub object is remembered against the
    served object it produced, and L{to_storage} stores it when that served object reaches
    the storage unchanged (but for C{metadata.resourceVersion}; the metadata stored is the
    served object's, converted).

    @param to_hub: C{served -> hub} (new dict).
    @param from_hub: C{hub -> served} (new dict).
    """

    #: How many prepared objects are remembered (writes in flight at once).
    MEMORY = 64

    def __init__(self, to_hub: Convert, from_hub: Convert) -> None:
        self.to_hub = to_hub
        self.from_hub = from_hub
        self._prepared: dict[int, tuple[dict, dict]] = {}

    def remember(self, served: dict, hub: dict) -> None:
        """Write C{hub}'s served form into C{served} (in place) and remember C{hub}."""
        _in_place(served, self.from_hub(hub))
        self._prepared.pop(id(served), None)
        self._prepared[id(served)] = (copy.deepcopy(served), copy.deepcopy(hub))
        while len(self._prepared) > self.MEMORY:
            self._prepared.pop(next(iter(self._prepared)))

    def to_storage(self, served: dict) -> dict:
        """The hub form of C{served}: the remembered prepared hub object when C{served} is
        what it was prepared into (but for metadata), else a fresh conversion.  The memory
        of C{served} is used up."""
        hub = self.hub_of(served)
        self._prepared.pop(id(served), None)
        return hub

    def hub_of(self, served: dict) -> dict:
        """L{to_storage} without using up the memory (for validation)."""
        converted = self.to_hub(served)
        entry = self._prepared.get(id(served))
        if entry is not None:
            snapshot, hub = entry
            if _sans_resource_version(snapshot) == _sans_resource_version(served):
                hub = copy.deepcopy(hub)
                hub["metadata"] = converted.get("metadata", {})
                return hub
        return converted

    @property
    def converter(self) -> VersionConverter:
        """The L{VersionConverter} of the served version's L{ConvertingStorage}."""
        return VersionConverter(self.to_storage, self.from_hub)


def hub_strategy(
    hub: Strategy,
    conversion: HubConversion,
    default: Callable[[dict], None],
    field_attrs: Callable[[dict], dict[str, str]] | None = None,
    validate: Callable[[dict], list] | None = None,
    validate_update: Callable[[dict, dict], list] | None = None,
) -> Strategy:
    """
    The L{Strategy} of a served version whose hub is C{hub}'s version.

    C{prepare_for_create}/C{prepare_for_update}/C{canonicalize} convert to the hub, run
    C{hub}'s function and write the result back in place (see L{HubConversion});
    C{validate}/C{validate_update} (C{hub}'s unless given: hub-form callables, for validation
    that depends on the request version as upstream's events) and C{warnings} run on the hub
    form; the table prints the hub form with C{hub}'s columns.  C{default} and C{field_attrs}
    work on the served form.
    """
    to_hub = conversion.to_hub
    check = validate or hub.validate
    check_update = validate_update or hub.validate_update

    def prepare_for_create(obj: dict) -> None:
        h = conversion.hub_of(obj)
        hub.prepare_for_create(h)
        conversion.remember(obj, h)

    def prepare_for_update(new: dict, old: dict) -> None:
        h = conversion.hub_of(new)
        hub.prepare_for_update(h, to_hub(old))
        conversion.remember(new, h)

    def canonicalize(obj: dict) -> None:
        h = conversion.hub_of(obj)
        hub.canonicalize(h)
        conversion.remember(obj, h)

    table = None
    if hub.table is not None:
        hub_row = hub.table.row
        table = TableConvertor(columns=copy.deepcopy(hub.table.columns),
                               row=lambda obj: hub_row(to_hub(obj)))
    return Strategy(
        kind=hub.kind,
        group=hub.group,
        namespaced=hub.namespaced,
        default=default,
        prepare_for_create=prepare_for_create,
        prepare_for_update=prepare_for_update,
        validate=lambda obj: check(conversion.hub_of(obj)),
        validate_update=lambda new, old: check_update(conversion.hub_of(new), to_hub(old)),
        warnings=lambda obj: hub.warnings(to_hub(obj)),
        field_attrs=field_attrs,
        table=table,
        canonicalize=canonicalize,
        allow_create_on_update=hub.allow_create_on_update,
        allow_unconditional_update=hub.allow_unconditional_update,
    )

