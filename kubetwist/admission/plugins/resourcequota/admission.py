# -*- test-case-name: tests.admission.test_resourcequota -*-
"""
The C{ResourceQuota} admission plugin: upstream
C{k8s.io/apiserver/pkg/admission/plugin/resourcequota} (C{admission.go}, C{controller.go}:
C{CheckRequest}, C{checkQuotas}; C{resource_access.go}: the quota accessor).

Every create and update of a namespaced object (but namespaces themselves) that an evaluator
charges is checked against the namespace's ResourceQuotas; the quotas it counts against get
C{status.used} raised by the request's usage, written with a compare-and-swap on the quota's
C{resourceVersion} before the object is stored (retried three times on conflict, with the quotas
read afresh, as upstream).  A refusal is upstream's 403 (C{exceeded quota: q, requested: pods=1,
used: pods=2, limited: pods=2}).  A dry run is checked but writes nothing.

Requests of one namespace are checked one at a time (upstream's work queue by namespace), so
two creates in flight cannot both take the last unit.  Quotas are read from an informer over
the quota storage (started on first use; a live list until it has synced), corrected by the
quotas this plugin wrote itself (upstream C{updatedQuotas}).
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Optional

from twisted.internet.defer import Deferred, ensureDeferred
from zope.interface import implementer

from kubetwist.admission.interfaces import IValidationInterface
from kubetwist.admission.plugins.resourcequota import resources as rq
from kubetwist.admission.plugins.resourcequota.evaluators import (
    IGNORED_RESOURCES,
    Evaluator,
    Registry,
    _go_selector,
    scope_selectors,
)
from kubetwist.admission.plugins.resourcequota.resources import ResourceList
from kubetwist.runtime import errors

__all__ = ["QuotaAccessor", "ResourceQuota", "check_request", "limited_resources"]

#: Upstream C{checkQuotas(quotas, attributes, 3)}.
RETRIES = 3
#: Upstream's C{updatedQuotas} LRU size.
UPDATED_CACHE_SIZE = 100


def _name_for(a: Any) -> str:
    """Upstream C{extractResourceName}: the request's name, else C{generateName}, else the
    object's name, else C{Unknown}."""
    if a.name:
        return a.name
    meta = (a.object or {}).get("metadata") or {}
    return meta.get("generateName") or meta.get("name") or "Unknown"


def forbidden(a: Any, message: str) -> errors.StatusError:
    """Upstream C{admission.NewForbidden(a, err)}: 403 C{<resource> "<name>" is forbidden:
    <message>}."""
    return errors.new_forbidden(a.resource.group, a.resource.resource, _name_for(a), message)


def _unknown(message: str) -> errors.StatusError:
    """A plain Go error out of admission: 500 with no reason (C{ErrorToAPIStatus})."""
    err = errors.make_status(500, "", message)
    err.status.pop("reason", None)
    return err


def limited_resources(config: Optional[dict]) -> list[dict]:
    """C{limitedResources} of a C{ResourceQuotaConfiguration} dict (upstream
    C{resourcequotaapi.Configuration}), each C{{apiGroup, resource, matchContains,
    matchScopes}}."""
    return list((config or {}).get("limitedResources") or [])


def _used(quota: dict) -> ResourceList:
    return rq.parse_list((quota.get("status") or {}).get("used"))


def _hard(quota: dict) -> ResourceList:
    return rq.parse_list((quota.get("status") or {}).get("hard"))


def _qname(quota: dict) -> str:
    return ((quota.get("metadata") or {}).get("name")) or ""


def check_request(quotas: list[dict], a: Any, evaluator: Evaluator,
                  limited: list[dict], now: float = 0.0) -> list[Optional[ResourceList]]:
    """
    Upstream C{CheckRequest}: what the request C{a} (admission L{Attributes
    <kubetwist.admission.interfaces.Attributes>}) does to each quota of C{quotas}.

    @return: per quota (same order) the new C{status.used}, or C{None} when it is unchanged.
    @raise StatusError: 403 Forbidden: C{exceeded quota: ...}, C{failed quota: <q>: must
        specify ...}, C{status unknown for quota: ...}, C{insufficient quota to consume: ...},
        C{quota usage is negative ...}, C{unable to get previous usage ...}; 500 for
        C{insufficient quota to match these scopes: ...} and scope errors.
    """
    unchanged: list[Optional[ResourceList]] = [None] * len(quotas)
    if not evaluator.handles(a.operation, a.subresource, a.object, a.old_object):
        return unchanged
    obj = a.object or {}
    group_resource = (a.resource.group, a.resource.resource)
    limited_scopes: list[dict] = []
    try:
        for lr in limited:
            limited_scopes += evaluator.matching_scopes(obj, list(lr.get("matchScopes") or []))
    except ValueError:
        return unchanged
    limited_names: set[str] = set()
    here = [lr for lr in limited
            if ((lr.get("apiGroup") or ""), lr.get("resource") or "") == group_resource]
    if here:
        delta = evaluator.usage(obj, now)
        for lr in here:
            for name, value in delta.items():
                if value.value > 0 and any(m in name for m in lr.get("matchContains") or []):
                    limited_names.add(name)

    interesting: list[int] = []
    restricted_names: set[str] = set()
    restricted_scopes: list[dict] = []
    for i, quota in enumerate(quotas):
        try:
            restricted_scopes += evaluator.matching_scopes(obj, scope_selectors(quota))
        except ValueError as e:
            raise _unknown(f"error matching scopes of quota {_qname(quota)}, err: {e}") from None
        try:
            if not evaluator.matches(quota, obj):
                continue
        except ValueError as e:
            raise _unknown(str(e)) from None
        hard = _hard(quota)
        names = evaluator.matching_resources(list(hard))
        problem = evaluator.constraints(names, obj)
        if problem:
            raise forbidden(a, f"failed quota: {_qname(quota)}: {problem}")
        used = _used(quota)
        if any(n in names and n not in used for n in hard):
            raise forbidden(a, f"status unknown for quota: {_qname(quota)}, resources: "
                               f"{rq.pretty_print_names(names)}")
        interesting.append(i)
        restricted_names.update(names)

    delta = evaluator.usage(obj, now)
    negative = rq.is_negative(delta)
    if negative:
        raise forbidden(a, "quota usage is negative for resource(s): "
                           f"{rq.pretty_print_names(negative)}")
    if a.operation == "UPDATE":
        if a.old_object is None:
            raise forbidden(a, "unable to get previous usage since prior version of object "
                               "was not found")
        if ((a.old_object.get("metadata") or {}).get("resourceVersion")):
            delta = rq.subtract_non_negative(delta, evaluator.usage(a.old_object, now))
    delta = rq.remove_zeros(delta)
    if not delta:
        return unchanged
    uncovered = sorted(limited_names - restricted_names)
    if uncovered:
        raise forbidden(a, f"insufficient quota to consume: {','.join(uncovered)}")
    uncovered_scopes = evaluator.uncovered_quota_scopes(limited_scopes, restricted_scopes)
    if uncovered_scopes:
        raise _unknown("insufficient quota to match these scopes: ["
                       + " ".join(_go_selector(s) for s in uncovered_scopes) + "]")
    out = list(unchanged)
    for i in interesting:
        quota = quotas[i]
        hard = _hard(quota)
        used = _used(quota)
        requested = rq.mask(delta, list(hard))
        new_used = rq.add(used, requested)
        ok, exceeded = rq.less_than_or_equal(rq.mask(new_used, list(requested)), hard)
        if not ok:
            raise forbidden(a, f"exceeded quota: {_qname(quota)}, "
                               f"requested: {rq.pretty_print(rq.mask(requested, exceeded))}, "
                               f"used: {rq.pretty_print(rq.mask(used, exceeded))}, "
                               f"limited: {rq.pretty_print(rq.mask(hard, exceeded))}")
        if not rq.equals(new_used, used):
            out[i] = new_used
    return out


def _rv(obj: dict) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class QuotaAccessor:
    """
    Upstream C{quotaAccessor}: the quotas of a namespace and their status writes.

    @param store: the ResourceQuota registry store (for its keys: C{key(ns, name)},
        C{prefix(ns)}, C{key_root}), or C{None}: no quotas.
    @param storage: the L{IStorage <kubetwist.storage.interfaces.IStorage>} it lives in.
    @param clock: C{IReactorTime} for the informer's relists; without one, every read is live.
    """

    def __init__(self, store: Any, storage: Any, clock: Any = None) -> None:
        self.store = store
        self.storage = storage
        self.clock = clock
        self.informer: Any = None
        #: C{namespace -> [quota]} over the informer's items (the quota controller's index),
        #: or C{None}: the items are scanned
        self.index: Optional[Callable[[str], list[dict]]] = None
        self.updated: dict[tuple[str, str], dict] = {}

    def _start(self) -> None:
        if self.informer is None and self.clock is not None:
            from kubetwist.authorization.rbac.informer import Informer

            self.informer = Informer(self.storage, self.clock, self.store.key_root,
                                     lambda key: None)
            self.informer.start()

    def stop(self) -> None:
        """Stop the informer (if started)."""
        if self.informer is not None:
            self.informer.stop()

    async def get_quotas(self, namespace: str, live: bool = False) -> list[dict]:
        """
        The quotas of C{namespace}, by name: from the informer once it has synced (unless
        C{live}), else a consistent list; each replaced by the version this accessor wrote if
        that is newer.
        """
        if self.store is None:
            return []
        self._start()
        if live or self.informer is None or not self.informer.synced:
            listed = await self.storage.get_list(self.store.prefix(namespace), recursive=True)
            items = [copy.deepcopy(o) for o in listed.items]
        elif self.index is not None:
            items = [copy.deepcopy(o) for o in self.index(namespace)]
        else:
            items = [copy.deepcopy(o) for (ns, _), o in self.informer.items.items()
                     if ns == namespace]
        out = []
        for quota in items:
            key = (namespace, _qname(quota))
            cached = self.updated.get(key)
            if cached is not None:
                if _rv(quota) >= _rv(cached):
                    self.updated.pop(key, None)
                else:
                    quota = copy.deepcopy(cached)
            out.append(quota)
        out.sort(key=_qname)
        return out

    async def update_used(self, quota: dict, used: ResourceList) -> dict:
        """
        Write C{used} as C{status.used} of C{quota} if its C{resourceVersion} is still the
        stored one (upstream C{UpdateStatus} of the quota read).

        @raise StatusError: 409 Conflict (upstream's optimistic-lock message), 404 NotFound.
        """
        meta = quota.get("metadata") or {}
        namespace, name = meta.get("namespace") or "", meta.get("name") or ""
        expected = meta.get("resourceVersion") or ""

        def transform(current: Optional[dict]) -> dict:
            if current is None:
                raise errors.new_not_found("", "resourcequotas", name)
            if ((current.get("metadata") or {}).get("resourceVersion") or "") != expected:
                raise errors.new_conflict("", "resourcequotas", name,
                                          errors.OPTIMISTIC_LOCK_ERROR_MSG)
            current.setdefault("status", {})["used"] = rq.wire_list(used)
            return current

        out = await self.storage.guaranteed_update(self.store.key(namespace, name), transform,
                                                   ignore_not_found=True)
        if len(self.updated) >= UPDATED_CACHE_SIZE:
            self.updated.pop(next(iter(self.updated)))
        self.updated[(namespace, name)] = copy.deepcopy(out)
        return out


class _Waiter:
    """Upstream C{admissionWaiter}: one request waiting for its namespace's worker."""

    __slots__ = ("attributes", "evaluator", "done", "result")

    def __init__(self, attributes: Any, evaluator: Evaluator) -> None:
        self.attributes = attributes
        self.evaluator = evaluator
        self.done: Deferred = Deferred()
        #: L{_DEFAULT_DENY}, C{None} (admitted) or the refusal
        self.result: Any = _DEFAULT_DENY


#: Upstream C{defaultDeny}: a waiter not decided yet.
_DEFAULT_DENY = object()


def _with_used(quota: dict, used: ResourceList) -> dict:
    out = copy.deepcopy(quota)
    out.setdefault("status", {})["used"] = rq.wire_list(used)
    return out


@implementer(IValidationInterface)
class ResourceQuota:
    """
    The C{ResourceQuota} plugin (validating, creates and updates).

    Requests of one namespace wait for that namespace's worker, which checks every request
    queued so far against the quotas in turn and writes each changed quota once for the whole
    batch (upstream's C{quotaEvaluator} work queue, C{checkQuotas}).

    @param accessor: the L{QuotaAccessor}.
    @param config: the plugin's C{ResourceQuotaConfiguration} dict, or C{None}.
    @param clock: C{IReactorTime} for C{now} (pods past their deletion grace), or C{None}.
    """

    name = "ResourceQuota"

    def __init__(self, accessor: QuotaAccessor, config: Optional[dict] = None,
                 clock: Any = None, registry: Optional[Registry] = None) -> None:
        self.accessor = accessor
        self.limited = limited_resources(config)
        self.clock = clock
        self.registry = registry or Registry()
        self._work: dict[str, list[_Waiter]] = {}
        self._busy: set[str] = set()

    def handles(self, operation: str) -> bool:
        """Creates and updates."""
        return operation in ("CREATE", "UPDATE")

    async def validate(self, a: Any) -> None:
        """
        Check (and charge) the request against its namespace's quotas.

        @raise StatusError: see L{check_request}; 409 Conflict when the quota could not be
            written after the retries.
        """
        if not a.namespace or (a.operation == "CREATE" and a.kind.group == ""
                               and a.kind.kind == "Namespace"):
            return
        group_resource = (a.resource.group, a.resource.resource)
        if group_resource in IGNORED_RESOURCES:
            return
        evaluator = self.registry.get(*group_resource)
        if evaluator is None or not evaluator.handles(a.operation, a.subresource, a.object,
                                                      a.old_object):
            return
        waiter = _Waiter(a, evaluator)
        self._work.setdefault(a.namespace, []).append(waiter)
        if a.namespace not in self._busy:
            self._busy.add(a.namespace)
            ensureDeferred(self._drain(a.namespace))
        await waiter.done
        if waiter.result is not None:
            raise waiter.result

    async def _drain(self, namespace: str) -> None:
        """The namespace's worker: batches until no request waits."""
        try:
            while self._work.get(namespace):
                batch = self._work.pop(namespace)
                try:
                    await self._check_batch(namespace, batch)
                except Exception as e:  # noqa: BLE001 -- every waiter gets the error
                    for w in batch:
                        if w.result is _DEFAULT_DENY:
                            w.result = e if isinstance(e, errors.StatusError) else \
                                errors.new_internal_error(str(e))
                finally:
                    for w in batch:
                        if w.result is _DEFAULT_DENY:
                            w.result = errors.new_internal_error(
                                "resource quota evaluation failed")
                        w.done.callback(None)
        finally:
            self._busy.discard(namespace)

    async def _check_batch(self, namespace: str, batch: list[_Waiter]) -> None:
        """Upstream C{checkAttributes}."""
        quotas = await self.accessor.get_quotas(namespace)
        if not quotas and not self.limited:
            for w in batch:
                w.result = None
            return
        await self._check_quotas(quotas, batch, RETRIES)

    async def _check_quotas(self, quotas: list[dict], batch: list[_Waiter],
                            remaining: int) -> None:
        """Upstream C{checkQuotas}: each request in turn over the quotas as the previous ones
        left them; then one write per changed quota; the requests whose charge could not be
        written are checked again over the quotas read afresh."""
        now = self.clock.seconds() if self.clock is not None else 0.0
        original = quotas
        current = list(quotas)
        for w in batch:
            try:
                new_used = check_request(current, w.attributes, w.evaluator, self.limited, now)
            except errors.StatusError as e:
                w.result = e
                continue
            if w.attributes.dry_run:
                w.result = None
                continue
            if all(u is None for u in new_used):
                w.result = None
                continue
            current = [q if u is None else _with_used(q, u)
                       for q, u in zip(current, new_used, strict=True)]
        failed: list[str] = []
        last: Optional[Exception] = None
        for old, new in zip(original, current, strict=True):
            if new is old:
                continue
            try:
                await self.accessor.update_used(old, _used(new))
            except errors.StatusError as e:
                failed.append(_qname(old))
                last = e
        if not failed:
            for w in batch:
                if w.result is _DEFAULT_DENY:
                    w.result = None
            return
        if remaining <= 0:
            for w in batch:
                if w.result is _DEFAULT_DENY:
                    w.result = last
            return
        fresh = await self.accessor.get_quotas(original[0]["metadata"].get("namespace", ""),
                                               live=True)
        await self._check_quotas([q for q in fresh if _qname(q) in failed], batch,
                                 remaining - 1)
