# -*- test-case-name: tests.apis.test_core_events -*-
"""
core/v1 Events: upstream C{pkg/apis/core/validation/events.go} (the legacy validation that
core/v1 requests get: no ObjectMeta rules beyond the generic ones, no immutability) and
C{pkg/registry/core/event/strategy.go} (field selectors).

The v1 Event serialises some zero values instead of omitting them: C{involvedObject},
C{source} (C{{}}), C{firstTimestamp}, C{lastTimestamp}, C{eventTime} (C{null}),
C{reportingComponent}, C{reportingInstance} (C{""}); L{default_event} writes them so that the
stored and returned objects look like kube-apiserver's.
"""

from __future__ import annotations

from kubetwist.apimachinery.validation import is_dns1123_subdomain
from kubetwist.apis.core.common import validate_qualified_name
from kubetwist.apis.core.printers import EVENT_TABLE
from kubetwist.registry.rest import Strategy
from kubetwist.runtime.field import FieldError, Path, invalid, required

__all__ = [
    "EVENT_STRATEGY",
    "default_event",
    "event_field_attrs",
    "validate_event",
    "validate_event_update",
]

REPORTING_INSTANCE_LENGTH_LIMIT = 128
ACTION_LENGTH_LIMIT = 128
REASON_LENGTH_LIMIT = 128
NOTE_LENGTH_LIMIT = 1024


def default_event(event: dict) -> None:
    """Write the zero values a Go round trip of a v1 Event would show (see module docstring)."""
    for key in ("involvedObject", "source"):
        if not isinstance(event.get(key), dict):
            event[key] = {}
    for key in ("firstTimestamp", "lastTimestamp", "eventTime"):
        event.setdefault(key, None)
    for key in ("reportingComponent", "reportingInstance"):
        if event.get(key) is None:
            event[key] = ""


def _blen(value: str) -> int:
    return len((value or "").encode())


def validate_event(event: dict) -> list[FieldError]:
    """
    Upstream C{legacyValidateEvent} for a core/v1 request (error paths are the internal type's:
    C{reportingComponent} is reported as C{reportingController}):

      - without C{eventTime}: C{involvedObject.namespace} must match the event's namespace
        (an empty one allows the event in C{""} or C{default});
      - with C{eventTime}: C{reportingComponent} (a qualified name), C{reportingInstance},
        C{action} and C{reason} required, lengths 128/128/128, C{message} at most 1024;
      - the namespace is a DNS subdomain.
    """
    errs: list[FieldError] = []
    meta = event.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    involved = event.get("involvedObject") or {}
    involved_ns = involved.get("namespace") or ""
    ns_path = Path("involvedObject", "namespace")
    if not event.get("eventTime"):
        if not involved_ns:
            if namespace not in ("", "default"):
                errs.append(invalid(ns_path, involved_ns, "does not match event.namespace"))
        elif namespace != involved_ns:
            errs.append(invalid(ns_path, involved_ns, "does not match event.namespace"))
    else:
        if not involved_ns and namespace not in ("default", "kube-system"):
            errs.append(invalid(ns_path, involved_ns, "does not match event.namespace"))
        controller = event.get("reportingComponent") or ""
        # upstream validates the internal type: its field is ReportingController
        if not controller:
            errs.append(required(Path("reportingController")))
        errs.extend(validate_qualified_name(controller, Path("reportingController")))
        instance = event.get("reportingInstance") or ""
        if not instance:
            errs.append(required(Path("reportingInstance")))
        if _blen(instance) > REPORTING_INSTANCE_LENGTH_LIMIT:
            errs.append(
                invalid(
                    Path("reportingInstance"),
                    "",
                    f"can have at most {REPORTING_INSTANCE_LENGTH_LIMIT} characters",
                )
            )
        action = event.get("action") or ""
        if not action:
            errs.append(required(Path("action")))
        if _blen(action) > ACTION_LENGTH_LIMIT:
            errs.append(
                invalid(Path("action"), "", f"can have at most {ACTION_LENGTH_LIMIT} characters")
            )
        reason = event.get("reason") or ""
        if not reason:
            errs.append(required(Path("reason")))
        if _blen(reason) > REASON_LENGTH_LIMIT:
            errs.append(
                invalid(Path("reason"), "", f"can have at most {REASON_LENGTH_LIMIT} characters")
            )
        if _blen(event.get("message") or "") > NOTE_LENGTH_LIMIT:
            errs.append(
                invalid(Path("message"), "", f"can have at most {NOTE_LENGTH_LIMIT} characters")
            )
    errs.extend(invalid(Path("namespace"), namespace, m) for m in is_dns1123_subdomain(namespace))
    return errs


def validate_event_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateEventUpdate} for core/v1: the legacy rules on the new event only."""
    return validate_event(new)


def event_field_attrs(event: dict) -> dict[str, str]:
    """
    Upstream event C{ToSelectableFields}: C{involvedObject.*}, C{reason}, C{reportingComponent},
    C{source} (C{source.component}, else the reporting controller) and C{type}.
    """
    involved = event.get("involvedObject") or {}
    controller = event.get("reportingComponent") or ""
    source = (event.get("source") or {}).get("component") or controller
    attrs = {
        f"involvedObject.{k}": str(involved.get(k) or "")
        for k in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    }
    attrs.update(
        {
            "reason": event.get("reason") or "",
            "reportingComponent": controller,
            "source": source,
            "type": event.get("type") or "",
        }
    )
    return attrs


EVENT_STRATEGY = Strategy(
    kind="Event",
    default=default_event,
    validate=validate_event,
    validate_update=validate_event_update,
    field_attrs=event_field_attrs,
    table=EVENT_TABLE,
    allow_create_on_update=True,
    allow_unconditional_update=True,
)
