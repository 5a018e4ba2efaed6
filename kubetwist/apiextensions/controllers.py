# -*- test-case-name: tests.apiextensions.test_controllers -*-
"""
The CRD controllers: upstream C{k8s.io/apiextensions-apiserver/pkg/controller/status}
(naming: C{NamesAccepted}), C{establish} (C{Established}), C{nonstructuralschema}
(C{NonStructuralSchema}), C{apiapproval} (C{KubernetesAPIApprovalPolicyConformant}),
C{finalizer} (C{customresourcecleanup.apiextensions.k8s.io}: delete every custom resource,
then let the CRD go), plus the serving side that upstream's discovery, OpenAPI and
C{crdregistration} controllers drive.

Like upstream they are informer-driven: L{CRDController} watches the CRD keys in storage (so it
sees every write path and, after a restart, every existing CRD as ADDED), queues CRD names,
and one worker reconciles one name at a time against a fresh read.  The pure functions compute
conditions; L{CRDController.reconcile} writes them through the C{status} subresource.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred, ensureDeferred
from twisted.logger import Logger

from kubetwist.apiextensions import schemaops
from kubetwist.apiextensions import validation as crdv
from kubetwist.apimachinery.meta import now_rfc3339
from kubetwist.registry.generic.store import ListOptions, Store
from kubetwist.runtime import errors
from kubetwist.runtime.field import Path, aggregate_message
from kubetwist.storage import interfaces as st

log = Logger()

FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


# --- conditions -----------------------------------------------------------------------------------
def set_condition(crd: dict, cond: dict, now: str) -> None:
    """Upstream C{SetCRDCondition}: replace the condition of that type; the transition time
    changes only when the status does."""
    status = crd.get("status")
    if not isinstance(status, dict):
        status = crd["status"] = {}
    conds = status.get("conditions")
    if not isinstance(conds, list):
        # a status written with "conditions": null (allowed: the field is a plain list)
        conds = status["conditions"] = []
    for i, old in enumerate(conds):
        if old.get("type") == cond["type"]:
            if old.get("status") != cond["status"] or "lastTransitionTime" not in old:
                cond = {**cond, "lastTransitionTime": now}
            else:
                cond = {**cond, "lastTransitionTime": old["lastTransitionTime"]}
            conds[i] = _ordered(cond)
            return
    conds.append(_ordered({**cond, "lastTransitionTime": now}))


def remove_condition(crd: dict, type_: str) -> None:
    status = crd.get("status") or {}
    if status.get("conditions"):
        status["conditions"] = [c for c in status["conditions"] if c.get("type") != type_]


def _ordered(cond: dict) -> dict:
    keys = ("type", "status", "lastTransitionTime", "reason", "message")
    return {k: cond[k] for k in keys if k in cond}


def _cond(type_: str, status: str, reason: str, message: str) -> dict:
    return {"type": type_, "status": status, "reason": reason, "message": message}


def calculate_names(crd: dict, others: list[dict]) -> tuple[dict, dict, dict]:
    """
    Upstream C{calculateNamesAndConditions}: C{(accepted_names, NamesAccepted, Established)}.

    @param others: the other CRDs of the same group (their accepted names are taken).
    """
    all_resources: set[str] = set()
    all_kinds: set[str] = set()
    for other in others:
        acc = (other.get("status") or {}).get("acceptedNames") or {}
        all_resources.update(x for x in [acc.get("plural"), acc.get("singular"),
                                         *(acc.get("shortNames") or [])] if x is not None)
        all_kinds.update(x for x in (acc.get("kind"), acc.get("listKind")) if x is not None)
    requested = (crd.get("spec") or {}).get("names") or {}
    accepted = dict((crd.get("status") or {}).get("acceptedNames") or {})
    new = dict(accepted)
    reason = message = ""

    def fresh(name: str | None, current: str | None, used: set[str]) -> str | None:
        if (name or "") == (current or ""):
            return None
        if (name or "") in used:
            return f'"{name or ""}" is already in use'
        return None

    for key, why in (("plural", "PluralConflict"), ("singular", "SingularConflict")):
        err = fresh(requested.get(key), accepted.get(key), all_resources)
        if err:
            reason, message = why, err
        else:
            _put(new, key, requested.get(key))
    req_short = list(requested.get("shortNames") or [])
    if req_short != list(accepted.get("shortNames") or []):
        mine = set(accepted.get("shortNames") or [])
        errs = [f'"{s}" is already in use' for s in req_short if s not in mine
                and s in all_resources]
        if errs:
            reason = "ShortNamesConflict"
            message = errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
        else:
            _put(new, "shortNames", req_short or None)
    for key, why in (("kind", "KindConflict"), ("listKind", "ListKindConflict")):
        err = fresh(requested.get(key), accepted.get(key), all_kinds)
        if err:
            reason, message = why, err
        else:
            _put(new, key, requested.get(key))
    _put(new, "categories", list(requested.get("categories") or []) or None)
    if reason:
        names_cond = _cond("NamesAccepted", "False", reason, message)
    else:
        names_cond = _cond("NamesAccepted", "True", "NoConflicts", "no conflicts found")
    established = crdv.condition(crd, "Established") or _cond(
        "Established", "False", "NotAccepted", "not all names are accepted")
    established = {k: established[k] for k in ("type", "status", "reason", "message")
                   if k in established}
    if established.get("status") != "True" and names_cond["status"] == "True":
        established = _cond("Established", "False", "Installing",
                            "the initial names have been accepted")
    return _ordered_names(new), names_cond, established


def _put(d: dict, key: str, value: Any) -> None:
    if value in (None, "", []):
        d.pop(key, None)
    else:
        d[key] = value


def _ordered_names(names: dict) -> dict:
    keys = ("categories", "kind", "listKind", "plural", "shortNames", "singular")
    return {k: names[k] for k in keys if k in names}


def nonstructural_condition(crd: dict) -> dict | None:
    """Upstream C{calculateCondition} of the non-structural-schema controller: a C{True}
    condition listing the violations, or C{None} when every schema is structural."""
    errs = []
    for i, ver in enumerate(crdv.versions(crd)):
        schema = (ver.get("schema") or {}).get("openAPIV3Schema")
        if schema is None:
            continue
        errs += schemaops.structural_errors(
            schema, Path("spec", "versions").index(i).child("schema", "openAPIV3Schema"))
    if not errs:
        return None
    return _cond("NonStructuralSchema", "True", "Violations", aggregate_message(errs))


def api_approval_condition(crd: dict) -> dict | None:
    """Upstream C{apiapproval.calculateCondition}, or C{None} outside protected groups."""
    group = (crd.get("spec") or {}).get("group", "")
    if not crdv.is_protected_community_group(group):
        return None
    state, reason = crdv.api_approval_state((crd.get("metadata") or {}).get("annotations"))
    status, why = {
        "Invalid": ("False", "InvalidAnnotation"),
        "Missing": ("False", "MissingAnnotation"),
        "Approved": ("True", "ApprovedAnnotation"),
        "Bypassed": ("False", "UnapprovedAnnotation"),
    }.get(state, ("Unknown", "UnknownAnnotation"))
    return _cond("KubernetesAPIApprovalPolicyConformant", status, why, reason)


# --- the controller -------------------------------------------------------------------------------
class CRDController:
    """
    Watches CRDs and reconciles each: names, conditions, serving, finalization.

    @param crds: the CRD L{Store}; C{status_store} its C{status} subresource store.
    @param serve: C{(crd) -> Awaitable}: install or refresh the CRD's custom resources.
    @param unserve: C{(name) -> Awaitable}: stop serving a CRD that is gone.
    @param cr_store: C{(crd) -> Store | None}: a store of the CRD's custom resources in the
        storage version (for the finalizer).
    """

    def __init__(self, crds: Store, status_store: Store, clock: Any,
                 serve: Callable[[dict], Any], unserve: Callable[[str], Any],
                 cr_store: Callable[[dict], Store | None]) -> None:
        self.crds = crds
        self.status_store = status_store
        self.clock = clock
        self.serve = serve
        self.unserve = unserve
        self.cr_store = cr_store
        self.queue: list[str] = []
        self.busy = False
        self.watch: st.Watch | None = None
        self.stopped = False
        self._kick: Any = None
        self._idle: list[Deferred] = []

    # --- informer ---------------------------------------------------------------------------
    async def start(self) -> None:
        """Reconcile every existing CRD, then follow changes (the post-start hook)."""
        self.stopped = False
        lst = await self.crds.list("", ListOptions())
        for crd in lst["items"]:
            self.enqueue(crd["metadata"]["name"])
        self._watch(lst["metadata"]["resourceVersion"])
        await self.wait_idle()

    def stop(self) -> None:
        self.stopped = True
        if self.watch is not None:
            self.watch.stop()

    def _watch(self, rv: str) -> None:
        if self.stopped:
            return
        w = self.crds.storage.watch(self.crds.prefix(""), rv, True, st.EVERYTHING)
        self.watch = w

        def on_event(ev: st.WatchEvent) -> None:
            if ev.type in ("BOOKMARK",):
                return
            if ev.type == "ERROR":
                w.stop()
                return
            name = (ev.object.get("metadata") or {}).get("name")
            if name:
                self.enqueue(name)

        def ended(_: Any) -> None:
            if not self.stopped and self.watch is w:
                # resync: every CRD comes again as ADDED
                self.clock.callLater(1, self._rewatch)

        w.subscribe(on_event)
        w.done.addBoth(ended)

    def _rewatch(self) -> None:
        async def run() -> None:
            lst = await self.crds.list("", ListOptions())
            for crd in lst["items"]:
                self.enqueue(crd["metadata"]["name"])
            self._watch(lst["metadata"]["resourceVersion"])

        d = ensureDeferred(run())
        d.addErrback(lambda f: (log.failure("CRD re-watch failed", f),
                                self.clock.callLater(1, self._rewatch)))

    # --- work queue --------------------------------------------------------------------------
    def enqueue(self, name: str) -> None:
        if name not in self.queue:
            self.queue.append(name)
        if not self.busy and (self._kick is None or not self._kick.active()):
            self._kick = self.clock.callLater(0, self._work)

    def wait_idle(self) -> Deferred:
        """A Deferred that fires when the queue is empty and nothing is running."""
        d: Deferred = Deferred()
        if not self.queue and not self.busy:
            d.callback(None)
        else:
            self._idle.append(d)
        return d

    def _work(self) -> None:
        if self.busy:
            return
        self.busy = True
        d = ensureDeferred(self._drain())

        def done(_: Any) -> None:
            self.busy = False
            if self.queue:
                self.enqueue(self.queue[0])
                return
            idle, self._idle = self._idle, []
            for w in idle:
                w.callback(None)

        d.addErrback(lambda f: log.failure("CRD controller failed", f))
        d.addBoth(done)

    async def _drain(self) -> None:
        while self.queue and not self.stopped:
            name = self.queue.pop(0)
            try:
                await self.reconcile(name)
            except Exception:
                log.failure("reconciling CRD {name} failed; retrying", name=name)
                self.clock.callLater(1, self.enqueue, name)

    # --- reconciliation ----------------------------------------------------------------------
    async def _get(self, name: str) -> dict | None:
        try:
            return await self.crds.get("", name)
        except errors.StatusError as e:
            if e.code == 404:
                return None
            raise

    async def reconcile(self, name: str) -> None:
        """Bring one CRD's status, serving and lifecycle up to date."""
        crd = await self._get(name)
        if crd is None:
            await self.unserve(name)
            await self._requeue_group_of(name)
            return
        if (crd.get("metadata") or {}).get("deletionTimestamp"):
            await self.serve(crd)
            await self.finalize(crd)
            return
        crd = await self.update_status(crd)
        if crd is None:
            return
        if crdv.is_condition_true(crd, "NamesAccepted"):
            await self.serve(crd)
            if not crdv.is_condition_true(crd, "Established"):
                await self._set_conditions(name, [_cond(
                    "Established", "True", "InitialNamesAccepted",
                    "the initial names have been accepted")])

    async def _requeue_group_of(self, name: str) -> None:
        group = name.split(".", 1)[1] if "." in name else ""
        lst = await self.crds.list("", ListOptions())
        for other in lst["items"]:
            if (other.get("spec") or {}).get("group") == group and \
                    not crdv.is_condition_true(other, "NamesAccepted"):
                self.enqueue(other["metadata"]["name"])

    async def update_status(self, crd: dict) -> dict | None:
        """Naming, non-structural schema and API approval conditions in one status write."""
        name = crd["metadata"]["name"]
        group = (crd.get("spec") or {}).get("group")
        lst = await self.crds.list("", ListOptions())
        others = [c for c in lst["items"] if c["metadata"]["name"] != name
                  and (c.get("spec") or {}).get("group") == group]
        now = now_rfc3339(self.clock)

        def compute(current: dict) -> dict:
            out = copy.deepcopy(current)
            spec_names = (out.get("spec") or {}).get("names") or {}
            status = out.setdefault("status", {})
            if spec_names != status.get("acceptedNames") or \
                    crdv.condition(out, "NamesAccepted") is None:
                names, names_cond, established = calculate_names(out, others)
                status["acceptedNames"] = names
                set_condition(out, names_cond, now)
                set_condition(out, established, now)
            ns = nonstructural_condition(out)
            if ns is None:
                remove_condition(out, "NonStructuralSchema")
            else:
                set_condition(out, ns, now)
            approval = api_approval_condition(out)
            if approval is not None:
                set_condition(out, approval, now)
            return out

        desired = compute(crd)
        if desired.get("status") == crd.get("status"):
            return crd
        try:
            out, _ = await self.status_store.update(
                "", name, self._transform(lambda cur: compute(cur)))
        except errors.StatusError as e:
            if e.code in (404, 409):
                return None
            raise
        if crdv.condition(out, "NamesAccepted") != crdv.condition(crd, "NamesAccepted"):
            # a name may have been released or taken: reconsider the group
            for other in others:
                if not crdv.is_condition_true(other, "NamesAccepted"):
                    self.enqueue(other["metadata"]["name"])
        return out

    @staticmethod
    def _transform(fn: Callable[[dict], dict]) -> Callable[[dict | None], Any]:
        async def transform(current: dict | None) -> dict:
            if current is None:
                raise errors.new_not_found(crdv.GROUP, "customresourcedefinitions", "")
            return fn(current)
        return transform

    async def _set_conditions(self, name: str, conds: list[dict],
                              drop_finalizer: bool = False) -> dict | None:
        now = now_rfc3339(self.clock)

        def apply(current: dict) -> dict:
            out = copy.deepcopy(current)
            for c in conds:
                set_condition(out, c, now)
            if drop_finalizer:
                meta = out.setdefault("metadata", {})
                meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != FINALIZER]
                if not meta["finalizers"]:
                    del meta["finalizers"]
            return out

        try:
            out, _ = await self.status_store.update("", name, self._transform(apply))
        except errors.StatusError as e:
            if e.code in (404, 409):
                return None
            raise
        return out

    async def finalize(self, crd: dict) -> None:
        """Upstream C{CRDFinalizer.sync}: delete every instance, then drop the finalizer."""
        name = crd["metadata"]["name"]
        if FINALIZER not in ((crd.get("metadata") or {}).get("finalizers") or []):
            return
        if not crdv.is_condition_true(crd, "Established"):
            await self._set_conditions(name, [_cond(
                "Terminating", "False", "NeverEstablished", "resource was never established")],
                drop_finalizer=True)
            return
        await self._set_conditions(name, [_cond(
            "Terminating", "True", "InstanceDeletionInProgress",
            "CustomResource deletion is in progress")])
        store = self.cr_store(crd)
        if store is not None:
            try:
                lst = await store.list("", ListOptions())
                for item in lst["items"]:
                    meta = item.get("metadata") or {}
                    try:
                        await store.delete(meta.get("namespace", ""), meta["name"])
                    except errors.StatusError as e:
                        if e.code != 404:
                            raise
                remaining = await store.list("", ListOptions())
            except errors.StatusError as e:
                await self._set_conditions(name, [_cond(
                    "Terminating", "True", "InstanceDeletionFailed",
                    f"could not issue all deletes: {e.message}")])
                self.clock.callLater(5, self.enqueue, name)
                return
            if remaining["items"]:
                # instances with finalizers of their own: check again later
                await self._set_conditions(name, [_cond(
                    "Terminating", "True", "InstanceDeletionCheck",
                    f"could not confirm zero CustomResources remaining: "
                    f"{len(remaining['items'])} remaining")])
                self.clock.callLater(1, self.enqueue, name)
                return
        await self._set_conditions(name, [_cond(
            "Terminating", "False", "InstanceDeletionCompleted", "removed all instances")],
            drop_finalizer=True)
