# -*- test-case-name: tests.apis.test_events -*-
"""
events.k8s.io/v1 Events over the core/v1 event storage: upstream
C{pkg/apis/events/v1/conversion.go} (C{regarding} <-> C{involvedObject}, C{note} <->
C{message}, C{deprecatedSource} <-> C{source}, C{deprecatedFirstTimestamp},
C{deprecatedLastTimestamp}, C{deprecatedCount} <-> C{firstTimestamp}, C{lastTimestamp},
C{count}, C{reportingController} <-> C{reportingComponent}; the other fields keep their names)
with its field label conversion (C{AddFieldLabelConversionsForEvent}), and the strict
validation that events created or updated through events.k8s.io/v1 get
(C{pkg/apis/core/validation/events.go}: C{ValidateEventCreate}, C{ValidateEventUpdate} for a
request version other than core/v1).

Validation runs on the core form, as upstream's on the internal type, so error paths name the
internal fields (C{involvedObject.namespace}, C{reportingController}, C{message}, C{source},
C{firstTimestamp}, C{count}, ...), whichever version the client sent.
"""

from __future__ import annotations

import copy
from typing import Any

from kubetwist.apimachinery.validation import (
    name_is_dns_subdomain,
    validate_immutable_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.events import default_event, validate_event
from kubetwist.runtime.field import FieldError, Path, invalid, required

__all__ = [
    "API_VERSION",
    "default_event_v1",
    "event_core_to_v1",
    "event_v1_field_attrs",
    "event_v1_to_core",
    "validate_event_v1_create",
    "validate_event_v1_update",
]

API_VERSION = "events.k8s.io/v1"

#: Upstream C{AddFieldLabelConversionsForEvent}: events.k8s.io/v1 label -> core label.
FIELD_LABELS = {
    "reason": "reason",
    "regarding.kind": "involvedObject.kind",
    "regarding.namespace": "involvedObject.namespace",
    "regarding.name": "involvedObject.name",
    "regarding.uid": "involvedObject.uid",
    "regarding.apiVersion": "involvedObject.apiVersion",
    "regarding.resourceVersion": "involvedObject.resourceVersion",
    "regarding.fieldPath": "involvedObject.fieldPath",
    "reportingController": "reportingComponent",
    "type": "type",
}


def _d(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def default_event_v1(event: dict) -> None:
    """
    Write the zero values a Go round trip of an events.k8s.io/v1 Event shows: C{eventTime},
    C{deprecatedFirstTimestamp}, C{deprecatedLastTimestamp} (C{null}), C{regarding},
    C{deprecatedSource} (C{{}}).  events.k8s.io/v1 has no other defaults.
    """
    event.setdefault("eventTime", None)
    for key in ("regarding", "deprecatedSource"):
        if not isinstance(event.get(key), dict):
            event[key] = {}
    for key in ("deprecatedFirstTimestamp", "deprecatedLastTimestamp"):
        event.setdefault(key, None)


def _copy_if(src: dict, src_key: str, out: dict, out_key: str) -> None:
    """Copy a non-empty value (Go's C{omitempty})."""
    value = src.get(src_key)
    if value not in (None, "", 0):
        out[out_key] = copy.deepcopy(value)


def event_core_to_v1(obj: dict) -> dict:
    """Upstream C{Convert_core_Event_To_v1_Event}: a new events.k8s.io/v1 Event from a core/v1
    one (not mutated), in the v1 struct's field order."""
    out: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "Event",
                           "metadata": copy.deepcopy(_d(obj.get("metadata"))),
                           "eventTime": obj.get("eventTime")}
    series = obj.get("series")
    if isinstance(series, dict):
        out["series"] = {"count": series.get("count") or 0,
                         "lastObservedTime": series.get("lastObservedTime")}
    _copy_if(obj, "reportingComponent", out, "reportingController")
    _copy_if(obj, "reportingInstance", out, "reportingInstance")
    _copy_if(obj, "action", out, "action")
    _copy_if(obj, "reason", out, "reason")
    out["regarding"] = copy.deepcopy(_d(obj.get("involvedObject")))
    _copy_if(obj, "related", out, "related")
    _copy_if(obj, "message", out, "note")
    _copy_if(obj, "type", out, "type")
    out["deprecatedSource"] = copy.deepcopy(_d(obj.get("source")))
    out["deprecatedFirstTimestamp"] = obj.get("firstTimestamp")
    out["deprecatedLastTimestamp"] = obj.get("lastTimestamp")
    _copy_if(obj, "count", out, "deprecatedCount")
    return out


def event_v1_to_core(obj: dict) -> dict:
    """Upstream C{Convert_v1_Event_To_core_Event}: a new core/v1 Event from an
    events.k8s.io/v1 one (not mutated), with the core zero values written."""
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Event",
                           "metadata": copy.deepcopy(_d(obj.get("metadata"))),
                           "involvedObject": copy.deepcopy(_d(obj.get("regarding")))}
    _copy_if(obj, "reason", out, "reason")
    _copy_if(obj, "note", out, "message")
    out["source"] = copy.deepcopy(_d(obj.get("deprecatedSource")))
    out["firstTimestamp"] = obj.get("deprecatedFirstTimestamp")
    out["lastTimestamp"] = obj.get("deprecatedLastTimestamp")
    _copy_if(obj, "deprecatedCount", out, "count")
    _copy_if(obj, "type", out, "type")
    out["eventTime"] = obj.get("eventTime")
    series = obj.get("series")
    if isinstance(series, dict):
        core_series: dict[str, Any] = {}
        _copy_if(series, "count", core_series, "count")
        core_series["lastObservedTime"] = series.get("lastObservedTime")
        out["series"] = core_series
    _copy_if(obj, "action", out, "action")
    _copy_if(obj, "related", out, "related")
    out["reportingComponent"] = obj.get("reportingController") or ""
    out["reportingInstance"] = obj.get("reportingInstance") or ""
    default_event(out)
    return out


def event_v1_field_attrs(event: dict) -> dict[str, str]:
    """
    The field-selector attributes of an events.k8s.io/v1 Event: the labels upstream's field
    label conversion accepts (C{regarding.*}, C{reason}, C{reportingController}, C{type}; no
    C{source}), valued as the core event's selectable fields they map to.
    """
    regarding = _d(event.get("regarding"))
    attrs = {label: str(regarding.get(label.split(".", 1)[1]) or "")
             for label in FIELD_LABELS if label.startswith("regarding.")}
    attrs["reason"] = event.get("reason") or ""
    attrs["reportingController"] = event.get("reportingController") or ""
    attrs["type"] = event.get("type") or ""
    return attrs


def _validate_series(event: dict) -> list[FieldError]:
    """Upstream C{validateV1EventSeries} (on the core form)."""
    series = event.get("series")
    if not isinstance(series, dict):
        return []
    errs: list[FieldError] = []
    if (series.get("count") or 0) < 2:
        errs.append(invalid(Path("series", "count"), "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(required(Path("series", "lastObservedTime")))
    return errs


def validate_event_v1_create(event: dict) -> list[FieldError]:
    """
    Upstream C{ValidateEventCreate} for an events.k8s.io/v1 request, on the core form: the
    legacy rules, then ObjectMeta, the series, C{eventTime} required, C{type} C{Normal} or
    C{Warning}, and the deprecated fields (C{firstTimestamp}, C{lastTimestamp}, C{count},
    C{source}) unset.
    """
    errs = validate_event(event)
    errs.extend(validate_object_meta(_d(event.get("metadata")), True, name_is_dns_subdomain,
                                     Path("metadata")))
    errs.extend(_validate_series(event))
    if not event.get("eventTime"):
        errs.append(required(Path("eventTime")))
    type_ = event.get("type") or ""
    if type_ not in ("Normal", "Warning"):
        errs.append(invalid(Path("type"), "", f"has invalid value: {type_}"))
    for key in ("firstTimestamp", "lastTimestamp"):
        if event.get(key):
            errs.append(invalid(Path(key), "", "needs to be unset"))
    if event.get("count"):
        errs.append(invalid(Path("count"), "", "needs to be unset"))
    source = _d(event.get("source"))
    if source.get("component") or source.get("host"):
        errs.append(invalid(Path("source"), "", "needs to be unset"))
    return errs


def validate_event_v1_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateEventUpdate} for an events.k8s.io/v1 request, on the core form: the
    legacy rules on the new event, ObjectMeta update rules, the series when it changed, and
    every field but the series immutable (C{reason} is checked twice, as upstream does).
    """
    errs = validate_event(new)
    errs.extend(validate_object_meta_update(_d(new.get("metadata")), _d(old.get("metadata")),
                                            Path("metadata")))
    if new.get("series") != old.get("series"):
        errs.extend(_validate_series(new))
    for key, path in (("involvedObject", "involvedObject"), ("reason", "reason"),
                      ("message", "message"), ("source", "source"),
                      ("firstTimestamp", "firstTimestamp"), ("lastTimestamp", "lastTimestamp"),
                      ("count", "count"), ("reason", "reason"), ("type", "type"),
                      ("eventTime", "eventTime"), ("action", "action"), ("related", "related"),
                      ("reportingComponent", "reportingController"),
                      ("reportingInstance", "reportingInstance")):
        errs.extend(validate_immutable_field(_zero(new.get(key)), _zero(old.get(key)),
                                             Path(path)))
    return errs


def _zero(value: Any) -> Any:
    """Go compares zero values: absent, C{""}, C{0}, C{{}} and C{null} are all the zero."""
    return None if value in (None, "", 0, {}) else value
