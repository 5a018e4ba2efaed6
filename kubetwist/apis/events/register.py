# -*- test-case-name: tests.apis.test_events -*-
"""
The events.k8s.io/v1 group-version: upstream C{pkg/registry/events/rest} (Events, stored as
core/v1 Events under C{/registry/events}: the same keys, objects and watch cache as core/v1)
and the event strategy of C{pkg/registry/core/event/strategy.go} with the events.k8s.io
validation (L{kubetwist.apis.events.v1}).
"""

from __future__ import annotations

from kubetwist.apis.core.events import EVENT_STRATEGY
from kubetwist.apis.events import v1
from kubetwist.registry.generic.versioned import HubConversion, VersionConverter, hub_strategy
from kubetwist.registry.rest import ResourceSpec, Strategy

__all__ = ["CONVERTERS", "GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = "events.k8s.io"
VERSION = "v1"

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "events", "Event", "event", short_names=["ev"]),
]

_CONVERSION = HubConversion(v1.event_v1_to_core, v1.event_core_to_v1)

STRATEGIES: dict[str, Strategy] = {
    "events": hub_strategy(
        EVENT_STRATEGY, _CONVERSION, v1.default_event_v1,
        field_attrs=v1.event_v1_field_attrs, validate=v1.validate_event_v1_create,
        validate_update=v1.validate_event_v1_update),
}

CONVERTERS: dict[str, VersionConverter] = {
    "events": _CONVERSION.converter,
}
