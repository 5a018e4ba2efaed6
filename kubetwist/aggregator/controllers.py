# -*- test-case-name: tests.aggregator.test_availability -*-
"""
The aggregator's controllers over its informers: upstream C{kube-aggregator}
C{pkg/controllers/status/local} and C{status/remote} (the C{Available} condition of every
APIService), and the state the discovery and OpenAPI merge read (upstream
C{apiserver/handler_discovery.go} and C{controllers/openapi}, C{openapiv3}).

APIServices, Services, Endpoints and EndpointSlices are kept in memory by informers (a list
then a watch each).  An APIService is checked when it changes, when the Service or Endpoints
it names change, every L{RESYNC_PERIOD} seconds, and again soon after a failed check
(upstream's rate-limited requeue: 5 ms doubling up to 30 s) or after the proxy could not
reach its backend.  A check of a remote APIService runs upstream's steps in order:

 - no Service: C{False}, C{ServiceNotFound}, C{service/<name> in "<ns>" is not present};
 - a ClusterIP Service without the port: C{False}, C{ServicePortError};
 - no Endpoints object: C{False}, C{EndpointsNotFound};
 - no address with the port's name: C{False}, C{MissingEndpoints};
 - five discovery GETs of C{/apis/<group>/<version>} (as C{system:kube-aggregator} in
   C{system:masters}, TLS unverified, 5 s each), one success enough: otherwise C{False},
   C{FailedDiscoveryCheck} with the last error;
 - else C{True}, C{Passed}, C{all checks passed}.

A successful check also keeps the backend's C{APIResourceList} (for C{/apis} aggregated
discovery) and refreshes its OpenAPI documents when their hashes change.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, Optional

from twisted.internet import defer
from twisted.logger import Logger
from twisted.web.client import Agent, HTTPConnectionPool, readBody
from twisted.web.http_headers import Headers

from kubetwist.aggregator.proxy import (
    ProxyTarget,
    _first_reason,
    dial_error,
    target_of,
    tls_policy,
)
from kubetwist.authorization.rbac.informer import Informer
from kubetwist.egress.resolver import ServiceResolver
from kubetwist.runtime import errors

log = Logger()

#: Upstream's resync of the availability controllers (seconds).
RESYNC_PERIOD = 30.0
#: Upstream's discovery client timeout (seconds).
CHECK_TIMEOUT = 5.0
#: Bytes read at most from a backend's discovery or OpenAPI answer.
MAX_DOCUMENT = 64 << 20


class Informers:
    """
    The aggregator's informers (upstream C{start-kube-aggregator-informers}).

    @param stores: C{{(group, resource): Store}} with at least C{("", "services")},
        C{("", "endpoints")}, C{("discovery.k8s.io", "endpointslices")} and
        C{("apiregistration.k8s.io", "apiservices")}.
    @ivar apiservices: L{Informer} of APIServices (C{items[("", name)]}).
    """

    def __init__(self, stores: Any, clock: Any,
                 on_apiservice: Callable[[Optional[tuple]], Any],
                 on_service: Callable[[Optional[tuple]], Any]) -> None:
        def informer(key: tuple, cb: Callable) -> Optional[Informer]:
            store = stores.get(key)
            if store is None:
                return None
            return Informer(store.storage, clock, store.prefix(""), cb)

        self.apiservices = informer(("apiregistration.k8s.io", "apiservices"), on_apiservice)
        self.services = informer(("", "services"), on_service)
        self.endpoints = informer(("", "endpoints"), on_service)
        self.slices = informer(("discovery.k8s.io", "endpointslices"), self._slice_changed)
        self._on_service = on_service

    def _slice_changed(self, key: Optional[tuple]) -> None:
        if key is None:
            self._on_service(None)
            return
        obj = self.slices.items.get(key) if self.slices else None
        name = (((obj or {}).get("metadata") or {}).get("labels") or {}).get(
            "kubernetes.io/service-name")
        self._on_service((key[0], name) if name else None)

    def all(self) -> list[Informer]:
        """The informers there are stores for."""
        return [i for i in (self.apiservices, self.services, self.endpoints, self.slices) if i]

    async def start(self) -> None:
        """Start every informer and wait for their first lists."""
        for i in self.all():
            i.start()
        for i in self.all():
            await i.wait_synced()

    def stop(self) -> None:
        """Stop every informer's watch."""
        for i in self.all():
            i.stop()

    def resolver(self, routing: bool = True) -> ServiceResolver:
        """A L{ServiceResolver} reading these informers (no storage round trip per
        request)."""
        async def get_service(namespace: str, name: str) -> Optional[dict]:
            return self.services.items.get((namespace, name)) if self.services else None

        async def list_slices(namespace: str, name: str) -> list:
            if self.slices is None:
                return []
            return [s for (ns, _), s in self.slices.items.items() if ns == namespace and
                    ((s.get("metadata") or {}).get("labels") or {}).get(
                        "kubernetes.io/service-name") == name]

        async def get_endpoints(namespace: str, name: str) -> Optional[dict]:
            return self.endpoints.items.get((namespace, name)) if self.endpoints else None

        return ServiceResolver(get_service, list_slices, get_endpoints, routing)

    def apiservice(self, name: str) -> Optional[dict]:
        """The APIService C{name} as last seen, or C{None}."""
        return self.apiservices.items.get(("", name)) if self.apiservices else None

    def remote_apiservices(self) -> list[dict]:
        """The APIServices with C{spec.service}."""
        if self.apiservices is None:
            return []
        return [o for o in self.apiservices.items.values()
                if (o.get("spec") or {}).get("service")]


def available_condition(apiservice: dict) -> Optional[dict]:
    """The C{Available} condition of an APIService, or C{None}."""
    for c in (apiservice.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Available":
            return c
    return None


def is_available(apiservice: dict) -> bool:
    """Upstream C{IsAPIServiceConditionTrue(apiService, Available)}."""
    c = available_condition(apiservice)
    return c is not None and c.get("status") == "True"


def set_condition(apiservice: dict, cond: dict, now: str) -> bool:
    """
    Upstream C{SetAPIServiceCondition}: the transition time changes only with the status.

    @return: whether the status changed at all.
    """
    status = apiservice.setdefault("status", {})
    conds = status.setdefault("conditions", [])
    for c in conds:
        if c.get("type") == cond["type"]:
            before = dict(c)
            if c.get("status") != cond["status"]:
                c["status"] = cond["status"]
                c["lastTransitionTime"] = now
            c["reason"], c["message"] = cond["reason"], cond["message"]
            return before != c
    conds.append({"type": cond["type"], "status": cond["status"], "lastTransitionTime": now,
                  "reason": cond["reason"], "message": cond["message"]})
    return True


class DiscoveryChecker:
    """
    The remote availability controller's discovery GET (upstream's C{discoveryClient}: TLS
    not verified, the proxy client certificate, 5 s), and the OpenAPI downloads.

    @param resolve: C{async (namespace, name, port) -> Address}.
    """

    def __init__(self, reactor: Any, resolve: Callable[..., Any],
                 client_certificate: Any = None, timeout: float = CHECK_TIMEOUT) -> None:
        self.reactor = reactor
        self.resolve = resolve
        self.timeout = timeout
        pool = HTTPConnectionPool(reactor, persistent=False)
        self.agent = Agent(reactor, contextFactory=tls_policy(
            "", None, True, client_certificate), pool=pool, connectTimeout=timeout)

    async def get(self, url: str, headers: Optional[dict] = None) -> tuple[int, Headers, bytes]:
        """One GET as C{system:kube-aggregator} (C{system:masters}); C{(code, headers,
        body)}.  Fails with the transport's error, or C{defer.TimeoutError}."""
        h = Headers({b"X-Remote-User": [b"system:kube-aggregator"],
                     b"X-Remote-Group": [b"system:masters"],
                     b"Accept": [b"application/json"]})
        for k, v in (headers or {}).items():
            h.setRawHeaders(k.encode(), [v.encode()])
        d = self.agent.request(b"GET", url.encode("ascii"), h)
        d.addTimeout(self.timeout, self.reactor)
        response = await d
        body = await readBody(response) if response.code != 304 else b""
        return response.code, response.headers, body

    async def _attempt(self, apiservice: dict, target: ProxyTarget) -> tuple[Optional[str], Any]:
        spec = apiservice.get("spec") or {}
        try:
            address = await self.resolve(target.namespace, target.service, target.port)
        except errors.StatusError as e:
            return e.message, None
        except Exception as e:  # pragma: no cover - defensive
            return str(e), None
        if apiservice["metadata"]["name"] == "v1.":
            path = "/api/" + spec.get("version", "")
        else:
            path = f"/apis/{spec.get('group', '')}/{spec.get('version', '')}"
        url = f"https://{address.netloc}{path}"
        try:
            code, _, body = await self.get(url)
        except defer.TimeoutError:
            return (f'failing or missing response from {url}: Get "{url}": context deadline '
                    f'exceeded (Client.Timeout exceeded while awaiting headers)'), None
        except Exception as e:
            reason = dial_error(_first_reason(e), address.host, address.port)
            return f'failing or missing response from {url}: Get "{url}": {reason}', None
        if code < 200 or code >= 300:
            return f"bad status from {url}: {code}", None
        return None, (address, body)

    async def check(self, apiservice: dict, target: ProxyTarget,
                    attempts: int = 5) -> tuple[Optional[str], Any]:
        """
        Upstream's five concurrent attempts: C{(None, (address, discovery body))} at the
        first success, else C{(last error message, None)}.
        """
        results = await defer.gatherResults([
            defer.ensureDeferred(self._attempt(apiservice, target)) for _ in range(attempts)])
        for err, found in results:
            if err is None:
                return None, found
        return results[-1][0], None


def resources_to_aggregated(resource_list: dict) -> list[dict]:
    """
    Upstream C{ConvertGroupVersionIntoToDiscovery}: an C{APIResourceList}'s entries as
    C{apidiscovery.k8s.io/v2} C{APIResourceDiscovery} (subresources folded into their
    resource), in the list's order.
    """
    out: dict[str, dict] = {}
    subs: list[dict] = []
    for r in resource_list.get("resources") or []:
        name = r.get("name", "")
        if "/" in name:
            subs.append(r)
            continue
        entry: dict[str, Any] = {
            "resource": name,
            "responseKind": {"group": r.get("group", ""), "version": r.get("version", ""),
                             "kind": r.get("kind", "")},
            "scope": "Namespaced" if r.get("namespaced") else "Cluster",
            "singularResource": r.get("singularName", ""),
            "verbs": list(r.get("verbs") or []),
        }
        if r.get("shortNames"):
            entry["shortNames"] = list(r["shortNames"])
        if r.get("categories"):
            entry["categories"] = list(r["categories"])
        out[name] = entry
    for r in subs:
        parent, _, sub = r["name"].partition("/")
        entry = out.get(parent)
        if entry is None:
            continue
        entry.setdefault("subresources", []).append({
            "subresource": sub,
            "responseKind": {"group": r.get("group", ""), "version": r.get("version", ""),
                             "kind": r.get("kind", "")},
            "verbs": list(r.get("verbs") or []),
        })
    return list(out.values())


class RemoteDocuments:
    """
    What the extension servers publish, as last fetched: their group-versions' discovery
    (upstream's aggregated discovery manager) and OpenAPI documents (the OpenAPI v2 and v3
    aggregation controllers).

    @ivar discovery: C{{(group, version): APIResourceList dict}}.
    @ivar v3: C{{(group, version): (body bytes, upper-case SHA-512 hex)}}.
    @ivar v2: C{{(group, version): (ETag, {"paths": ..., "definitions": ...})}}.
    """

    def __init__(self) -> None:
        self.discovery: dict[tuple[str, str], dict] = {}
        #: C{{(group, version): APIVersionDiscovery}} from the backend's aggregated C{/apis}
        self.aggregated: dict[tuple[str, str], dict] = {}
        self._aggregated_etags: dict[tuple[str, str], str] = {}
        self.v3: dict[tuple[str, str], tuple[bytes, str, str]] = {}
        self.v2: dict[tuple[str, str], tuple[str, dict]] = {}
        self.generation = 0

    def forget(self, gv: tuple[str, str]) -> None:
        """Drop what was fetched for C{(group, version)} (its APIService is gone)."""
        self._aggregated_etags.pop(gv, None)
        for d in (self.discovery, self.aggregated, self.v3, self.v2):
            if d.pop(gv, None) is not None:
                self.generation += 1

    def set_discovery(self, gv: tuple[str, str], body: bytes) -> None:
        """Keep a discovery check's answer (JSON C{APIResourceList} bytes; ignored when it
        does not parse)."""
        try:
            doc = json.loads(body)
        except ValueError:
            return
        if isinstance(doc, dict) and self.discovery.get(gv) != doc:
            self.discovery[gv] = doc
            self.generation += 1

    def version_discovery(self, gv: tuple[str, str]) -> Optional[dict]:
        """C{gv}'s C{APIVersionDiscovery} (without C{freshness}): from the backend's
        aggregated document when it served one, else converted from its C{APIResourceList};
        C{None} before the first answer."""
        found = self.aggregated.get(gv)
        if found is not None:
            return found
        rl = self.discovery.get(gv)
        if rl is None:
            return None
        return {"version": gv[1], "resources": resources_to_aggregated(rl)}

    async def refresh_aggregated(self, checker: Any, address: Any,
                                 gv: tuple[str, str]) -> None:
        """
        Upstream's discovery manager: C{GET /apis} asking for the aggregated document (v2,
        then v2beta1), with the last ETag; its entry for C{gv} is kept.  A backend without
        aggregated discovery leaves the C{APIResourceList} of the discovery check in use.
        """
        accept = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
                  "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList")
        headers = {"Accept": accept}
        etag = self._aggregated_etags.get(gv)
        if etag and gv in self.aggregated:
            headers["If-None-Match"] = etag
        try:
            code, rheaders, body = await checker.get(f"https://{address.netloc}/apis", headers)
        except Exception as e:
            log.info("aggregated discovery of {gv} not fetched: {err}", gv=gv, err=e)
            return
        if code == 304:
            return
        ctype = (rheaders.getRawHeaders(b"content-type") or [b""])[0].decode("latin-1")
        if code != 200 or "as=APIGroupDiscoveryList" not in ctype.replace(" ", ""):
            if self.aggregated.pop(gv, None) is not None:
                self.generation += 1
            return
        try:
            doc = json.loads(body)
        except ValueError:
            return
        for item in doc.get("items") or []:
            if ((item.get("metadata") or {}).get("name") or "") != gv[0]:
                continue
            for version in item.get("versions") or []:
                if version.get("version") == gv[1]:
                    entry = {k: v for k, v in version.items() if k != "freshness"}
                    for r in entry.get("resources") or []:
                        r.setdefault("responseKind", {})
                        for sub in r.get("subresources") or []:
                            sub.setdefault("responseKind", {})
                    if self.aggregated.get(gv) != entry:
                        self.aggregated[gv] = entry
                        self.generation += 1
                    self._aggregated_etags[gv] = \
                        (rheaders.getRawHeaders(b"etag") or [b""])[0].decode("latin-1")
                    return

    # --- what the front's OpenAPI handlers read -----------------------------------------------
    def v3_documents(self) -> dict[str, tuple[bytes, str]]:
        """C{{"apis/<g>/<v>": (body, hash)}} of the remote group-versions."""
        return {f"apis/{g}/{v}": (body, h) for (g, v), (body, h, _) in self.v3.items()}

    def v2_parts(self) -> tuple[Any, dict, dict]:
        """C{(key, paths, definitions)} merged over the remote group-versions (the key
        changes whenever any of them does)."""
        paths: dict = {}
        definitions: dict = {}
        key = []
        for gv in sorted(self.v2):
            etag, doc = self.v2[gv]
            key.append((gv, etag))
            paths.update(doc.get("paths") or {})
            for name, schema in (doc.get("definitions") or {}).items():
                definitions.setdefault(name, schema)
        return tuple(key), paths, definitions

    async def refresh_openapi(self, checker: DiscoveryChecker, address: Any,
                              gv: tuple[str, str]) -> None:
        """Fetch the backend's OpenAPI v3 document of C{gv} when its hash changed, and its
        v2 document when its ETag changed (upstream's downloaders)."""
        g, v = gv
        base = f"https://{address.netloc}"
        prefix = f"apis/{g}/{v}" if g else f"api/{v}"
        try:
            code, _, body = await checker.get(base + "/openapi/v3")
            if code == 200:
                root = json.loads(body).get("paths") or {}
                entry = root.get(prefix)
                if entry:
                    url = entry.get("serverRelativeURL", "")
                    old = self.v3.get(gv)
                    if old is None or old[2] != url:
                        code, _, doc = await checker.get(base + url)
                        if code == 200:
                            self.v3[gv] = (doc, hashlib.sha512(doc).hexdigest().upper(), url)
                            self.generation += 1
        except Exception as e:
            log.info("OpenAPI v3 of {gv} not fetched: {err}", gv=gv, err=e)
        try:
            old2 = self.v2.get(gv)
            headers = {"If-None-Match": old2[0]} if old2 and old2[0] else {}
            code, rheaders, body = await checker.get(base + "/openapi/v2", headers)
            if code == 200:
                doc = json.loads(body)
                etag = (rheaders.getRawHeaders(b"etag") or [b""])[0].decode("latin-1") or \
                    hashlib.sha512(body).hexdigest()
                keep = "/" + prefix
                paths = {p: o for p, o in (doc.get("paths") or {}).items()
                         if p == keep or p.startswith(keep + "/")}
                self.v2[gv] = (etag, {"paths": paths,
                                      "definitions": doc.get("definitions") or {}})
                self.generation += 1
        except Exception as e:
            log.info("OpenAPI v2 of {gv} not fetched: {err}", gv=gv, err=e)


class AvailabilityController:
    """
    Keeps the C{Available} condition of every APIService (upstream's local and remote
    available controllers).

    @param update_status: C{async (name, transform) -> object}: a status update through the
        C{apiservices/status} store (C{transform(current) -> current}).
    @param now: C{() -> RFC 3339 str}.
    @param checker: a L{DiscoveryChecker} (or a fake with C{async check(apiservice, target)}
        and C{get}).
    """

    def __init__(self, clock: Any, informers: Informers, update_status: Callable[..., Any],
                 now: Callable[[], str], checker: Any, documents: RemoteDocuments,
                 period: float = RESYNC_PERIOD) -> None:
        self.clock = clock
        self.informers = informers
        self.update_status = update_status
        self.now = now
        self.checker = checker
        self.documents = documents
        self.period = period
        self.running = False
        self._calls: dict[str, Any] = {}
        self._busy: set[str] = set()
        self._dirty: set[str] = set()
        self._failures: dict[str, int] = {}
        self._resync: Any = None
        #: names of APIServices that were checked at least once (tests, metrics)
        self.synced: dict[str, int] = {}

    # --- event sources --------------------------------------------------------------------------
    def apiservice_changed(self, key: Optional[tuple]) -> None:
        """The APIService informer's change: C{("", name)}, or C{None} after a (re)list."""
        if key is None:
            for (_, name) in list(self.informers.apiservices.items):
                self.enqueue(name)
            return
        self.enqueue(key[1])

    def service_changed(self, key: Optional[tuple]) -> None:
        """A Service, Endpoints or EndpointSlice change: C{(namespace, service name)} (or
        C{None}: every remote APIService)."""
        for obj in self.informers.remote_apiservices():
            svc = obj["spec"]["service"]
            if key is None or (svc.get("namespace"), svc.get("name")) == key:
                self.enqueue(obj["metadata"]["name"])

    def backend_failed(self, name: str) -> None:
        """The proxy could not reach C{name}'s backend: check it soon."""
        self.enqueue(name)

    # --- the queue ------------------------------------------------------------------------------
    def start(self) -> None:
        """Check every APIService now and every L{period} seconds."""
        self.running = True
        self.apiservice_changed(None)
        self._schedule_resync()

    def stop(self) -> None:
        """Cancel every pending check."""
        self.running = False
        for c in self._calls.values():
            if c.active():
                c.cancel()
        self._calls.clear()
        if self._resync is not None and self._resync.active():
            self._resync.cancel()

    def _schedule_resync(self) -> None:
        def resync() -> None:
            self.apiservice_changed(None)
            self._schedule_resync()

        if self.running:
            self._resync = self.clock.callLater(self.period, resync)

    def enqueue(self, name: str, delay: float = 0.0) -> None:
        """Check C{name} in C{delay} seconds (at most one pending check per name, the
        earliest kept; a check asked for while one runs follows it)."""
        if not self.running:
            return
        if name in self._busy:
            self._dirty.add(name)
            return
        call = self._calls.get(name)
        if call is not None and call.active():
            if call.getTime() <= self.clock.seconds() + delay:
                return
            call.cancel()
        self._calls[name] = self.clock.callLater(delay, self._run, name)

    def _run(self, name: str) -> None:
        self._calls.pop(name, None)
        self._busy.add(name)
        d = defer.ensureDeferred(self.sync(name))

        def done(result: Any) -> None:
            self._busy.discard(name)
            self.synced[name] = self.synced.get(name, 0) + 1
            retry = result is False or isinstance(result, Exception) or \
                (hasattr(result, "check") and result.check(Exception))
            if hasattr(result, "check"):
                log.failure("APIService {name} availability check failed", result, name=name)
            if retry:
                n = self._failures.get(name, 0)
                self._failures[name] = n + 1
                self.enqueue(name, min(0.005 * 2 ** n, 30.0))
            else:
                self._failures.pop(name, None)
            if name in self._dirty:
                self._dirty.discard(name)
                self.enqueue(name)

        d.addBoth(done)

    # --- one check -------------------------------------------------------------------------------
    async def sync(self, name: str) -> bool:
        """
        Check one APIService and write its condition when it changed.

        @return: C{False} when the check failed (it is retried with backoff).
        """
        obj = self.informers.apiservice(name)
        if obj is None:
            self._failures.pop(name, None)
            return True
        target = target_of(obj)
        spec = obj.get("spec") or {}
        gv = (spec.get("group", ""), spec.get("version", ""))
        if target is None:
            await self._write(obj, {"type": "Available", "status": "True", "reason": "Local",
                                    "message": "Local APIServices are always available"})
            return True
        cond, ok = self._service_condition(target)
        address_body = None
        if cond is None:
            err, address_body = await self.checker.check(obj, target)
            if err is not None:
                cond = {"type": "Available", "status": "False",
                        "reason": "FailedDiscoveryCheck", "message": err}
                ok = False
            else:
                cond = {"type": "Available", "status": "True", "reason": "Passed",
                        "message": "all checks passed"}
        if address_body is not None:
            address, body = address_body
            self.documents.set_discovery(gv, body)
            await self.documents.refresh_aggregated(self.checker, address, gv)
            await self.documents.refresh_openapi(self.checker, address, gv)
        await self._write(obj, cond)
        return ok

    def _service_condition(self, target: ProxyTarget) -> tuple[Optional[dict], bool]:
        """The Service and Endpoints steps; C{(condition, ok)} or C{(None, True)} to go on."""
        ns, name, port = target.namespace, target.service, target.port

        def fail(reason: str, message: str) -> tuple[dict, bool]:
            return {"type": "Available", "status": "False", "reason": reason,
                    "message": message}, True

        services = self.informers.services
        svc = services.items.get((ns, name)) if services else None
        if svc is None:
            return fail("ServiceNotFound", f'service/{name} in "{ns}" is not present')
        sspec = svc.get("spec") or {}
        if (sspec.get("type") or "ClusterIP") == "ClusterIP":
            port_name, found = "", False
            for p in sspec.get("ports") or []:
                if p.get("port") == port:
                    port_name, found = p.get("name") or "", True
                    break
            if not found:
                return fail("ServicePortError",
                            f'service/{name} in "{ns}" is not listening on port {port}')
            eps = self.informers.endpoints.items.get((ns, name)) \
                if self.informers.endpoints else None
            if eps is None:
                return fail("EndpointsNotFound",
                            f'cannot find endpoints for service/{name} in "{ns}"')
            active = any(
                subset.get("addresses") and any((p.get("name") or "") == port_name
                                                for p in subset.get("ports") or [])
                for subset in eps.get("subsets") or [])
            if not active:
                return fail("MissingEndpoints", f'endpoints for service/{name} in "{ns}" have '
                                                f'no addresses with port name "{port_name}"')
        return None, True

    async def _write(self, obj: dict, cond: dict) -> None:
        import copy

        probe = copy.deepcopy(obj)
        if not set_condition(probe, cond, self.now()):
            return
        name = obj["metadata"]["name"]

        def transform(current: Optional[dict]) -> dict:
            if current is None:
                raise errors.new_not_found("apiregistration.k8s.io", "apiservices", name)
            set_condition(current, cond, self.now())
            return current

        try:
            await self.update_status(name, transform)
        except errors.StatusError as e:
            if e.code != 404:
                raise
