# -*- test-case-name: tests.apis.test_events -*-
"""
Field tables of C{k8s.io/api/events/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.events.v1}).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.events.v1"

GROUP = "events.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "Event",
    "EventList",
)

TYPES = {
    "Event": (
        ("metadata", 1, "meta.ObjectMeta", ""),
        ("eventTime", 2, "MicroTime", "r"),
        ("series", 3, "*EventSeries", "o"),
        ("reportingController", 4, "string", "o"),
        ("reportingInstance", 5, "string", "o"),
        ("action", 6, "string", "o"),
        ("reason", 7, "string", "o"),
        ("regarding", 8, "core.ObjectReference", "o"),
        ("related", 9, "*core.ObjectReference", "o"),
        ("note", 10, "string", "o"),
        ("type", 11, "string", "o"),
        ("deprecatedSource", 12, "core.EventSource", "o"),
        ("deprecatedFirstTimestamp", 13, "Time", "o"),
        ("deprecatedLastTimestamp", 14, "Time", "o"),
        ("deprecatedCount", 15, "int32", "o"),
    ),
    "EventList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]Event", "r"),
    ),
    "EventSeries": (
        ("count", 1, "int32", "r"),
        ("lastObservedTime", 2, "MicroTime", "r"),
    ),
}
