# -*- test-case-name: tests.registry.test_store_delete -*-
"""
Deletion rules shared by every resource: upstream C{k8s.io/apiserver/pkg/registry/rest/delete.go}
(C{BeforeDelete}: delete-options validation, preconditions, graceful deletion),
C{k8s.io/apimachinery/pkg/apis/meta/v1/validation.ValidateDeleteOptions}, and the garbage
collection finalizer choice of C{pkg/registry/generic/registry/store.go}
(C{shouldOrphanDependents}, C{shouldDeleteDependents},
C{deletionFinalizersForGarbageCollection}, C{markAsDeleting}).

Delete options are the wire C{DeleteOptions} dict: C{{"gracePeriodSeconds": int,
"preconditions": {"uid", "resourceVersion"}, "orphanDependents": bool,
"propagationPolicy": "Orphan" | "Background" | "Foreground", "dryRun": ["All"]}}.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubetwist.apimachinery.meta import format_rfc3339, parse_rfc3339
from kubetwist.runtime import errors
from kubetwist.runtime import field as fielderr

#: metav1.FinalizerOrphanDependents
FINALIZER_ORPHAN = "orphan"
#: metav1.FinalizerDeleteDependents
FINALIZER_FOREGROUND = "foregroundDeletion"

#: rest.GarbageCollectionPolicy values
DELETE_DEPENDENTS = "DeleteDependents"
ORPHAN_DEPENDENTS = "OrphanDependents"
UNSUPPORTED = "Unsupported"

#: Upstream C{DefaultGarbageCollectionPolicy} of the strategies that have one, for the served
#: group-versions, keyed by C{(group, version, resource)}.  Every other resource (custom
#: resources included) has none, which behaves as C{DeleteDependents} (background).
DEFAULT_GC_POLICY: dict[tuple[str, str, str], str] = {
    # pkg/registry/core/replicationcontroller/strategy.go: v1 orphans, for back compatibility
    ("", "v1", "replicationcontrollers"): ORPHAN_DEPENDENTS,
    # pkg/registry/batch/job/strategy.go: batch/v1 orphans, for back compatibility
    ("batch", "v1", "jobs"): ORPHAN_DEPENDENTS,
    # pkg/registry/core/event, pkg/registry/events: events take part in no garbage collection
    ("", "v1", "events"): UNSUPPORTED,
    ("events.k8s.io", "v1", "events"): UNSUPPORTED,
    # pkg/registry/apps/*/strategy.go and batch cronjobs: apps/v1, batch/v1 delete dependents
    ("apps", "v1", "deployments"): DELETE_DEPENDENTS,
    ("apps", "v1", "replicasets"): DELETE_DEPENDENTS,
    ("apps", "v1", "statefulsets"): DELETE_DEPENDENTS,
    ("apps", "v1", "daemonsets"): DELETE_DEPENDENTS,
    ("batch", "v1", "cronjobs"): DELETE_DEPENDENTS,
}

#: A graceful-delete check (upstream C{RESTGracefulDeleteStrategy.CheckGracefulDelete}):
#: C{(obj, options) -> bool}; when it returns True it must have set
#: C{options["gracePeriodSeconds"]}.
GracefulDeleteCheck = Callable[[dict, dict], bool]


def default_gc_policy(group: str, version: str, resource: str) -> str:
    """The resource's default garbage collection policy, C{""} when it has none."""
    return DEFAULT_GC_POLICY.get((group, version, resource), "")


def validate_delete_options(options: dict) -> None:
    """
    Upstream C{ValidateDeleteOptions}.

    @raise StatusError: 422 Invalid, kind C{DeleteOptions} of group C{meta.k8s.io}, name C{""}:
        C{orphanDependents} together with C{propagationPolicy}, an unknown policy, a C{dryRun}
        value other than C{All}.
    """
    errs = []
    policy = options.get("propagationPolicy")
    if options.get("orphanDependents") is not None and policy is not None:
        errs.append(fielderr.invalid(
            "propagationPolicy", policy,
            "orphanDependents and deletionPropagation cannot be both set"))
    if policy is not None and policy not in ("Foreground", "Background", "Orphan"):
        errs.append(fielderr.not_supported(
            "propagationPolicy", policy, ["Foreground", "Background", "Orphan", "nil"]))
    dry = options.get("dryRun") or []
    if any(v != "All" for v in dry):
        errs.append(fielderr.not_supported("dryRun", dry, ["All"]))
    if errs:
        raise errors.new_invalid("meta.k8s.io", "DeleteOptions", "", errs)


def _gc_strategy(policy: str, options: dict, finalizers: list[str]) -> tuple[bool, bool]:
    """C{(orphan, foreground)}: upstream C{shouldOrphanDependents} and
    C{shouldDeleteDependents} for a resource whose default policy is C{policy}."""
    if policy == UNSUPPORTED:
        return False, False
    if options.get("orphanDependents") is not None:
        return bool(options["orphanDependents"]), False
    pp = options.get("propagationPolicy")
    if pp in ("Orphan", "Background", "Foreground"):
        return pp == "Orphan", pp == "Foreground"
    for f in finalizers:
        if f == FINALIZER_ORPHAN:
            return True, False
        if f == FINALIZER_FOREGROUND:
            return False, True
    return policy == ORPHAN_DEPENDENTS, False


def gc_finalizers(policy: str, obj: dict, options: dict) -> tuple[bool, list[str]]:
    """
    Upstream C{deletionFinalizersForGarbageCollection}: the finalizers C{obj} must carry for
    this delete.

    @return: C{(changed, finalizers)}: the other finalizers in order, then C{orphan} or
        C{foregroundDeletion} as the options, the present finalizers or the default policy
        decide; C{changed} is False (and the list the current one) when the set is unchanged.
    """
    current = list((obj.get("metadata") or {}).get("finalizers") or [])
    orphan, foreground = _gc_strategy(policy, options, current)
    new = [f for f in current if f not in (FINALIZER_ORPHAN, FINALIZER_FOREGROUND)]
    if orphan:
        new.append(FINALIZER_ORPHAN)
    if foreground:
        new.append(FINALIZER_FOREGROUND)
    if set(new) == set(current):
        return False, current
    return True, new


@dataclass
class BeforeDelete:
    """The outcome of L{before_delete}: C{graceful} (the object was marked with a grace period
    and must be stored), C{pending} (a graceful deletion is already under way)."""

    graceful: bool = False
    pending: bool = False


def before_delete(obj: dict, options: dict, now: float, group: str, kind: str,
                  check_graceful: GracefulDeleteCheck | None) -> BeforeDelete:
    """
    Upstream C{rest.BeforeDelete}: validate C{options}, check the preconditions, and for a
    resource with graceful deletion set or shorten C{deletionTimestamp} and
    C{deletionGracePeriodSeconds} on C{obj} (mutated in place, as are C{options}).

    @param now: the clock's time, in POSIX seconds.
    @param check_graceful: the resource's C{CheckGracefulDelete}, or C{None} (not graceful).
    @raise StatusError: 422 Invalid (L{validate_delete_options}); 409 Conflict naming the kind
        (upstream passes the kind as the resource): C{Operation cannot be fulfilled on Pod "x":
        the UID in the precondition (...) does not match the UID in record (...). The object
        might have been deleted and then recreated}, or the ResourceVersion one.
    """
    validate_delete_options(options)
    meta = obj.setdefault("metadata", {})
    name = meta.get("name", "")
    pre = options.get("preconditions") or {}
    if pre.get("uid") is not None and pre["uid"] != meta.get("uid", ""):
        raise errors.new_conflict(
            group, kind, name,
            f"the UID in the precondition ({pre['uid']}) does not match the UID in record "
            f"({meta.get('uid', '')}). The object might have been deleted and then recreated")
    if pre.get("resourceVersion") is not None and \
            pre["resourceVersion"] != meta.get("resourceVersion", ""):
        raise errors.new_conflict(
            group, kind, name,
            f"the ResourceVersion in the precondition ({pre['resourceVersion']}) does not match "
            f"the ResourceVersion in record ({meta.get('resourceVersion', '')}). The object "
            f"might have been modified")
    grace = options.get("gracePeriodSeconds")
    if grace is not None and grace < 0:
        options["gracePeriodSeconds"] = 1
    dgps = meta.get("deletionGracePeriodSeconds")
    if dgps is not None and dgps < 0:
        meta["deletionGracePeriodSeconds"] = dgps = 1
    if check_graceful is None:
        return BeforeDelete()
    if meta.get("deletionTimestamp"):
        if not dgps:
            return BeforeDelete()
        grace = options.get("gracePeriodSeconds")
        if grace is None:
            options["gracePeriodSeconds"] = dgps
            return BeforeDelete(pending=True)
        if grace >= dgps:
            return BeforeDelete(pending=True)
        when = parse_rfc3339(meta["deletionTimestamp"]) - dgps + grace
        if when < now:
            when = now
            if grace != 0:
                grace = 1
        meta["deletionTimestamp"] = format_rfc3339(when)
        meta["deletionGracePeriodSeconds"] = grace
        return BeforeDelete(graceful=True)
    if not check_graceful(obj, options):
        return BeforeDelete()
    grace = options.get("gracePeriodSeconds")
    if grace is None:
        raise errors.new_internal_error("options.GracePeriodSeconds should not be nil")
    meta["deletionTimestamp"] = format_rfc3339(now + grace)
    meta["deletionGracePeriodSeconds"] = grace
    if meta.get("generation", 0) > 0:
        meta["generation"] += 1
    return BeforeDelete(graceful=True)


def mark_as_deleting(obj: dict, now: float) -> None:
    """
    Upstream C{markAsDeleting}: an object kept by finalizers gets C{deletionTimestamp} (now,
    or kept if earlier) and C{deletionGracePeriodSeconds: 0}; C{generation} is bumped the first
    time.
    """
    meta = obj.setdefault("metadata", {})
    existing = meta.get("deletionTimestamp")
    if not existing and meta.get("generation", 0) > 0:
        meta["generation"] += 1
    if not existing or parse_rfc3339(existing) > now:
        meta["deletionTimestamp"] = format_rfc3339(now)
    meta["deletionGracePeriodSeconds"] = 0


def is_dry_run(options: dict[str, Any] | None) -> bool:
    """Whether the options ask for a dry run (C{dryRun: ["All"]})."""
    return bool((options or {}).get("dryRun"))


def graceful_delete_check(group: str, resource: str) -> GracefulDeleteCheck | None:
    """The C{CheckGracefulDelete} of a resource deleted gracefully (core pods), else C{None}."""
    if group == "" and resource == "pods":
        from kubetwist.registry.core.pod import check_graceful_delete

        return check_graceful_delete
    return None
