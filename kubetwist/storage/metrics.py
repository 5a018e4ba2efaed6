# -*- test-case-name: tests.server.test_metrics -*-
"""
Process-wide metrics of the storage layer and of watches, as kube-apiserver v1.32 names
them (upstream C{k8s.io/apiserver/pkg/storage/etcd3/metrics}, C{pkg/endpoints/metrics}):

 - C{etcd_request_duration_seconds} (histogram, seconds; C{operation type}) and
   C{etcd_requests_total} (counter; same labels): every call of the key-value storage
   (etcd through its gateway, or the embedded store), C{operation} one of C{get create
   update delete list count}, C{type} the resource (C{configmaps},
   C{deployments.apps}) whose key prefix the key falls under;
 - C{apiserver_storage_objects} (gauge; C{resource}): the stored objects per resource,
   counted by L{ObjectCounter} once a minute as upstream does;
 - C{apiserver_watch_events_total} (counter) and C{apiserver_watch_events_sizes}
   (histogram, bytes) by C{group version kind}: every watch event written to a client;
 - C{apiserver_registered_watchers} (gauge; C{group version kind}): watches being served
   (upstream dropped it after v1.28; kept for the dashboards that still read it).

They live in L{REGISTRY}, one per process like upstream's legacy registry, which
C{/metrics} writes after the chain's own request metrics.
"""

from __future__ import annotations

import time
from typing import Any, Awaitable, Callable, Iterable, Optional

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from kubetwist.apimachinery.wait import PeriodicService

REGISTRY = CollectorRegistry(auto_describe=True)

#: upstream's C{etcd_request_duration_seconds} buckets, seconds
ETCD_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8,
                10, 15, 20, 30, 45, 60)
#: upstream's C{apiserver_watch_events_sizes} buckets: 1 KiB doubling to 128 KiB
WATCH_SIZE_BUCKETS = tuple(1024.0 * 2 ** i for i in range(8))

ETCD_LATENCY = Histogram(
    "etcd_request_duration_seconds",
    "Etcd request latency in seconds for each operation and object type.",
    ("operation", "type"), buckets=ETCD_BUCKETS, registry=REGISTRY)
ETCD_REQUESTS = Counter(
    "etcd_requests", "Etcd request counts for each operation and object type.",
    ("operation", "type"), registry=REGISTRY)
STORAGE_OBJECTS = Gauge(
    "apiserver_storage_objects",
    "Number of stored objects at the time of last check split by kind. In case of a fetching "
    "error, the value will be -1.", ("resource",), registry=REGISTRY)
WATCH_EVENTS = Counter(
    "apiserver_watch_events", "Number of events sent in watch clients",
    ("group", "version", "kind"), registry=REGISTRY)
WATCH_EVENT_SIZES = Histogram(
    "apiserver_watch_events_sizes", "Watch event size distribution in bytes",
    ("group", "version", "kind"), buckets=WATCH_SIZE_BUCKETS, registry=REGISTRY)
REGISTERED_WATCHERS = Gauge(
    "apiserver_registered_watchers",
    "Number of currently registered watchers for a given resources",
    ("group", "version", "kind"), registry=REGISTRY)

#: C{key prefix -> resource label}, filled as resources are installed
_TYPES: dict[str, str] = {}


def register_resource(key_root: str, group: str, resource: str) -> None:
    """Name the resource stored under C{key_root} (C{/registry/deployments}) in the
    C{type} label: C{deployments.apps} (C{configmaps} for the core group)."""
    _TYPES[key_root.rstrip("/")] = f"{resource}.{group}" if group else resource


def registered_resources() -> list[tuple[str, str]]:
    """C{[(key prefix, resource label)]} registered so far."""
    return sorted(_TYPES.items())


def type_of(key: str) -> str:
    """The resource label of C{key}: the longest registered prefix it falls under
    (C{""} when none)."""
    k = key.rstrip("/")
    while k:
        found = _TYPES.get(k)
        if found is not None:
            return found
        k = k.rpartition("/")[0]
    return ""


def observe_storage(operation: str, key: str, seconds: float) -> None:
    """Record one storage call of C{seconds}."""
    t = type_of(key)
    ETCD_LATENCY.labels(operation, t).observe(seconds)
    ETCD_REQUESTS.labels(operation, t).inc()


def timed(operation: str, key: str, d: Any) -> Any:
    """Record the storage call whose Deferred is C{d} when it fires; return C{d}."""
    start = time.monotonic()

    def done(result: Any) -> Any:
        observe_storage(operation, key, time.monotonic() - start)
        return result

    return d.addBoth(done)


#: C{(group, version, kind) -> (events counter, sizes histogram)}: the labelled children,
#: found once (one watch event per watcher per change is the hottest metric of a fan-out)
_WATCH_CHILDREN: dict[tuple[str, str, str], tuple[Any, Any]] = {}


def watch_event(group: str, version: str, kind: str, size: int) -> None:
    """Record one watch event of C{size} bytes written to a client."""
    key = (group, version, kind)
    children = _WATCH_CHILDREN.get(key)
    if children is None:
        children = _WATCH_CHILDREN[key] = (WATCH_EVENTS.labels(*key),
                                           WATCH_EVENT_SIZES.labels(*key))
    children[0].inc()
    children[1].observe(size)


class ObjectCounter(PeriodicService):
    """
    Upstream's storage object count loop: at start and then every C{period} seconds, count
    each registered resource's keys (C{storage.count(prefix)}, a range count, no objects
    read) into C{apiserver_storage_objects}; a failed count sets C{-1}.

    @param count: C{key prefix -> Deferred/awaitable of int}.
    @param clock: C{IReactorTime}.
    @param period: seconds between the end of a round and the start of the next.
    """

    activity = "storage object count"
    run_at_start = True

    def __init__(self, count: Callable[[str], Awaitable[int]], clock: Any,
                 period: float = 60.0,
                 resources: Optional[Callable[[], Iterable[tuple[str, str]]]] = None) -> None:
        super().__init__(clock, period)
        self.count = count
        self.resources = resources or registered_resources

    async def run_once(self) -> None:
        """Count every registered resource once."""
        for prefix, label in list(self.resources()):
            try:
                n = await self.count(prefix + "/")
            except Exception:  # noqa: BLE001 -- upstream reports -1 for a failed count
                n = -1
            STORAGE_OBJECTS.labels(label).set(n)
