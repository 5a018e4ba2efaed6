# -*- test-case-name: tests.apis.test_flowcontrol -*-
"""
The API Priority and Fairness bootstrap configuration producer: upstream
C{pkg/registry/flowcontrol/ensurer} and C{ensureAPFBootstrapConfiguration} of
C{pkg/registry/flowcontrol/rest/storage_flowcontrol.go} (post-start hook
C{priority-and-fairness-config-producer}).

One L{ensure} pass, in upstream's order:
 1. suggested FlowSchemas, then suggested PriorityLevelConfigurations: created when missing;
    an existing one gets the bootstrap spec back only while it auto-updates (annotation
    C{apf.kubernetes.io/autoupdate-spec} true, or absent/unparsable and C{generation} 1), and
    the annotation is written when it does not say so already;
 2. the mandatory C{exempt}/C{catch-all} objects: created when missing, their spec always
    restored (the C{exempt} level keeps its C{spec.exempt} values) and annotated C{"true"};
 3. objects with the annotation C{"true"} whose names are in no bootstrap list are deleted.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from kubetwist.apis.flowcontrol import bootstrap
from kubetwist.apis.flowcontrol.fieldmanagers import PRODUCER_MANAGER, field_manager
from kubetwist.apis.flowcontrol.validation import (
    default_flow_schema,
    default_priority_level,
    semantic_equal,
)
from kubetwist.registry.generic.store import ListOptions
from kubetwist.runtime import errors

__all__ = ["ensure", "parse_bool"]

_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


def parse_bool(value: str | None) -> bool | None:
    """Go's C{strconv.ParseBool}: C{None} when C{value} is not one of its spellings."""
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return None


def _annotations(obj: dict) -> dict:
    return (obj.get("metadata") or {}).get("annotations") or {}


def _should_update_spec(current: dict) -> bool:
    """Upstream C{shouldUpdateSpec}: the annotation's value, else whether the object was never
    changed (C{generation} 1)."""
    value = parse_bool(_annotations(current).get(bootstrap.AUTO_UPDATE_ANNOTATION))
    if value is not None:
        return value
    return (current.get("metadata") or {}).get("generation") == 1


def _should_update_annotation(current: dict, desired: bool) -> bool:
    """Upstream C{shouldUpdateAnnotation}: the annotation does not already say C{desired}."""
    anns = _annotations(current)
    if bootstrap.AUTO_UPDATE_ANNOTATION in anns:
        return parse_bool(anns[bootstrap.AUTO_UPDATE_ANNOTATION]) is not desired
    return True


def _spec_changed(kind: str, wanted: dict, current: dict, default: Callable[[dict], None]) -> bool:
    """Upstream C{flowSchemaSpecEqual} / C{plcSpecEqualish}, negated: the defaulted bootstrap
    spec against the stored one; the C{exempt} level's C{spec.exempt} values are the
    administrator's."""
    expected = copy.deepcopy(wanted)
    default(expected)
    spec = current.get("spec") or {}
    if kind == "PriorityLevelConfiguration" and expected["metadata"]["name"] == "exempt":
        actual_exempt = spec.get("exempt")
        if actual_exempt is None:
            return True
        expected["spec"]["exempt"] = copy.deepcopy(actual_exempt)
    return not semantic_equal(expected["spec"], spec)


async def _ensure_one(store: Any, wanted: dict, mandatory: bool,
                      default: Callable[[dict], None]) -> None:
    """Upstream C{ensureConfiguration} of one bootstrap object (written as upstream's field
    manager C{api-priority-and-fairness-config-producer-v1}, when the store has a clock)."""
    name = wanted["metadata"]["name"]
    clock = getattr(store, "clock", None)
    fm = field_manager(wanted["kind"], clock) if clock is not None else None
    try:
        current = await store.get("", name)
    except errors.StatusError as e:
        if e.code != 404:
            raise
        obj = copy.deepcopy(wanted)
        default(obj)
        if fm is not None:
            obj = fm.update(None, obj, PRODUCER_MANAGER)
        try:
            await store.create("", obj)
        except errors.StatusError as e2:
            if e2.code != 409:
                raise
        return
    auto = True if mandatory else _should_update_spec(current)
    update_annotation = _should_update_annotation(current, auto)
    spec_changed = auto and _spec_changed(wanted["kind"], wanted, current, default)
    if not (update_annotation or spec_changed):
        return

    async def transform(cur: dict | None) -> dict:
        if cur is None:
            raise errors.new_not_found(store.spec.group, store.spec.resource, name)
        live = copy.deepcopy(cur) if fm is not None else None
        if update_annotation:
            meta = cur.setdefault("metadata", {})
            anns = meta.get("annotations") or {}
            anns[bootstrap.AUTO_UPDATE_ANNOTATION] = "true" if auto else "false"
            meta["annotations"] = anns
        if spec_changed:
            spec = copy.deepcopy(wanted["spec"])
            obj = {"spec": spec}
            default(obj)
            cur["spec"] = obj["spec"]
        if fm is not None:
            return fm.update(live, cur, PRODUCER_MANAGER)
        return cur

    await store.update("", name, transform)


async def _remove_unwanted(store: Any, keep: set[str]) -> None:
    """Upstream C{GetFlowSchemaRemoveCandidate}/C{GetPriorityLevelRemoveCandidate} and the
    removers: objects annotated C{autoupdate-spec: "true"} whose names no bootstrap list has."""
    listed = await store.list("", ListOptions())
    for item in listed["items"]:
        name = (item.get("metadata") or {}).get("name") or ""
        anns = _annotations(item)
        if bootstrap.AUTO_UPDATE_ANNOTATION not in anns or name in keep:
            continue
        if parse_bool(anns[bootstrap.AUTO_UPDATE_ANNOTATION]) is not True:
            continue
        try:
            await store.delete("", name)
        except errors.StatusError as e:
            if e.code != 404:
                raise


async def ensure(flow_schemas: Any, priority_levels: Any) -> None:
    """
    One reconciliation of the bootstrap configuration (upstream C{ensure}) over the two
    L{Store<kubetwist.registry.generic.store.Store>}s.

    @raise StatusError: a storage or validation error of one write (the post-start hook that
        runs this retries it).
    """
    for fs in bootstrap.suggested_flow_schemas():
        await _ensure_one(flow_schemas, fs, False, default_flow_schema)
    for pl in bootstrap.suggested_priority_levels():
        await _ensure_one(priority_levels, pl, False, default_priority_level)
    for fs in bootstrap.mandatory_flow_schemas():
        await _ensure_one(flow_schemas, fs, True, default_flow_schema)
    for pl in bootstrap.mandatory_priority_levels():
        await _ensure_one(priority_levels, pl, True, default_priority_level)
    await _remove_unwanted(flow_schemas, {o["metadata"]["name"] for o in
                                          bootstrap.mandatory_flow_schemas()
                                          + bootstrap.suggested_flow_schemas()})
    await _remove_unwanted(priority_levels, {o["metadata"]["name"] for o in
                                             bootstrap.mandatory_priority_levels()
                                             + bootstrap.suggested_priority_levels()})
