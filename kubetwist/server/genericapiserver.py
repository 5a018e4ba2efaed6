# -*- test-case-name: tests.server.test_genericapiserver -*-
"""
GenericAPIServer and its director: upstream C{k8s.io/apiserver/pkg/server}
(C{genericapiserver.go}, C{handler.go} C{director}, C{routes/}).

A server owns Klein trees (one L{APIGroupVersion} each), a plain mux of exact paths (discovery,
health, version) and a delegate.  Its L{Director} answers a request from its own trees, then
its mux, then passes the (already filtered) request to the delegate's director; the last server
in the chain answers 404 NotFound.
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, Optional
from urllib.parse import parse_qs

from twisted.logger import Logger
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET

from kubetwist.endpoints import discovery, negotiation
from kubetwist.endpoints.installer import APIGroupVersion
from kubetwist.endpoints.responses import (
    funnel,
    write_body,
    write_not_found_text,
    write_object,
    write_raw_json,
    write_status_error,
)
from kubetwist.runtime import codec, errors
from kubetwist.server.healthz import HealthCheck, render_health
from kubetwist.server.hooks import PostStartHooks

_log = Logger()


def not_found_status() -> errors.StatusError:
    """The 404 of a go-restful container for a path no route serves (see
    L{errors.new_route_not_found})."""
    return errors.new_route_not_found()


#: Go's C{http.NotFound} (one writer, in L{kubetwist.endpoints.responses}).
write_plain_not_found = write_not_found_text


def _restful(server: "GenericAPIServer", segments: list[str]) -> bool:
    """Whether a path lies under a go-restful web service of C{server}: C{/api/...}, or
    C{/apis/<g>/...} of a built-in group (custom resource groups are served by the CRD
    handler, whose unknown paths are plain-text 404s)."""
    if len(segments) >= 3 and segments[1] == "api":
        return True
    if len(segments) >= 4 and segments[1] == "apis" and segments[2] in server.groups:
        return any(not getattr(agv, "custom", False) for agv in server.group_versions.values()
                   if agv.group == segments[2])
    return False


MuxHandler = Callable[[Any], Awaitable[None]]


class GenericAPIServer:
    """
    One API server of the delegation chain.

    @param name: C{kube-aggregator}, C{kube-apiserver}, C{apiextensions-apiserver}.
    @param clock: C{IReactorTime}.
    @param delegate: the next server, or C{None} for the last (which answers 404).
    """

    def __init__(self, name: str, clock: Any,
                 delegate: Optional["GenericAPIServer"] = None) -> None:
        self.name = name
        self.clock = clock
        self.delegate = delegate
        self.group_versions: dict[str, APIGroupVersion] = {}
        #: group -> versions, preferred first
        self.groups: dict[str, list[str]] = {}
        self.hooks = PostStartHooks()
        self.hooks.setName(f"{name}-poststarthooks")
        self.health_checks: list[HealthCheck] = []
        self.readiness_checks: list[HealthCheck] = []
        self.mux: dict[str, MuxHandler] = {}
        self.prefix_mux: dict[str, MuxHandler] = {}
        #: groups installed as go-restful web services (not custom resource groups)
        self.restful_groups: set[str] = set()
        #: mux paths that upstream serves as go-restful GET routes (other methods: 405)
        self.restful_paths: set[str] = set()
        self._director: Optional[Director] = None

    # --- installation --------------------------------------------------------------------------
    def install_api_group_version(self, agv: APIGroupVersion, preferred: bool = True,
                                  restful: bool = True) -> None:
        """Serve C{agv}'s tree and its discovery documents.

        @param restful: C{False} for custom resources, which upstream serves outside go-restful
            (an unknown path under their group is a plain-text 404, not a C{Status})."""
        self.group_versions[agv.prefix] = agv
        if restful:
            self.restful_groups.add(agv.group)
        versions = self.groups.setdefault(agv.group, [])
        if agv.version not in versions:
            if preferred:
                versions.insert(0, agv.version)
            else:
                versions.append(agv.version)

    def remove_api_group_version(self, group: str, version: str) -> None:
        prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
        self.group_versions.pop(prefix, None)
        versions = self.groups.get(group, [])
        if version in versions:
            versions.remove(version)
        if not versions:
            self.groups.pop(group, None)

    def add_post_start_hook(self, name: str, hook: Callable[[], Awaitable[None]]) -> None:
        self.hooks.add_hook(name, hook, self.clock)

    # --- the chain -----------------------------------------------------------------------------
    def chain(self) -> list["GenericAPIServer"]:
        """This server and its delegates, front first."""
        out, s = [], self
        while s is not None:
            out.append(s)
            s = s.delegate
        return out

    def all_groups(self) -> dict[str, list[str]]:
        merged: dict[str, list[str]] = {}
        for s in self.chain():
            for g, vs in s.groups.items():
                if g == "":
                    continue
                merged.setdefault(g, [])
                for v in vs:
                    if v not in merged[g]:
                        merged[g].append(v)
        return merged

    def all_group_versions(self) -> dict[str, APIGroupVersion]:
        merged: dict[str, APIGroupVersion] = {}
        for s in reversed(self.chain()):
            merged.update(s.group_versions)
        return merged

    def all_checks(self, kind: str) -> list[HealthCheck]:
        """Health checks of the whole chain: C{healthz}/C{livez} or C{readyz} (plus hooks)."""
        checks: list[HealthCheck] = []
        seen = set()
        for s in self.chain():
            extra = s.readiness_checks if kind == "readyz" else []
            for c in s.health_checks + extra + s.hooks.checks():
                if c.name not in seen:
                    seen.add(c.name)
                    checks.append(c)
        return checks

    def owns_restful_path(self, path: str) -> bool:
        """Whether C{path} lies under one of this server's go-restful web services (upstream
        C{director}: a root path prefix on a C{/} boundary), so that its container, not the
        delegate, answers it."""
        segments = path.split("/")
        if len(segments) >= 2 and segments[1] == "api":
            return "" in self.restful_groups
        if len(segments) >= 3 and segments[1] == "version":
            return "/version" in self.mux
        if len(segments) >= 3 and segments[1] == "apis":
            return segments[2] != "" and segments[2] in self.restful_groups
        return False

    def director(self) -> "Director":
        if self._director is None:
            self._director = Director(self)
        return self._director

    # --- discovery handlers (installed on the front server by the wiring) -------------------
    def install_discovery_routes(self, server_address: Callable[[], str]) -> None:
        """C{/api}, C{/apis} (legacy and aggregated), and per-group documents of the chain."""

        async def api(request: Any) -> None:
            negotiation.check_route_accept(request)  # a go-restful route upstream
            out = negotiation.negotiate_discovery(request)
            agg = out.version if out.kind == "aggregated" else ""
            if agg:
                core = {"": {gv.version: gv.discovery() for gv in self.all_group_versions().values()
                             if gv.group == ""}}
                _write_aggregated(request, discovery.aggregated_discovery(core, agg), out)
                return
            write_object(request, 200, discovery.api_versions(server_address()), out.media)

        async def apis(request: Any) -> None:
            out = negotiation.negotiate_discovery(request)
            agg = out.version if out.kind == "aggregated" else ""
            if agg:
                gvs = self.all_group_versions()
                groups: dict[str, dict[str, list]] = {}
                for g, versions in self.all_groups().items():
                    groups[g] = {}
                    for v in versions:
                        gv = gvs.get(f"/apis/{g}/{v}")
                        if gv is not None:
                            groups[g][v] = gv.discovery()
                _write_aggregated(request, discovery.aggregated_discovery(groups, agg), out)
                return
            write_object(request, 200, discovery.api_group_list(self.all_groups()), out.media)

        self.mux["/api"] = funnel(api)
        self.restful_paths.add("/api")
        self.mux["/apis"] = funnel(apis)


def _write_aggregated(request: Any, doc: dict, out: negotiation.Output) -> None:
    """The aggregated discovery document in the negotiated form (upstream writes its group,
    version and kind in the C{Content-Type})."""
    request.setHeader(b"Vary", b"Accept")
    write_body(request, 200, codec.encode(doc, out.media, out.pretty), out.content_type)


def _write_discovery(request: Any, doc: dict, restful: bool = False) -> None:
    """
    A legacy discovery document (C{APIGroup}, C{APIResourceList}) in JSON, YAML or protobuf;
    C{restful} for a group-version's document, served by go-restful upstream (its own 406).
    Errors are written here: the director calls this outside the error funnel.
    """
    try:
        if restful:
            negotiation.check_route_accept(request)
        out = negotiation.negotiate_media(request)
        if out is None:
            raise negotiation.not_acceptable()
    except errors.StatusError as e:
        write_status_error(request, e)
        return
    write_object(request, 200, doc, out.media)


class Director(Resource):
    """
    The unprotected handler of one server (upstream C{director}): own Klein trees, own mux,
    then the delegate.  Filters never run here.
    """

    isLeaf = True

    def __init__(self, server: GenericAPIServer) -> None:
        super().__init__()
        self.server = server

    def render(self, request: Any) -> Any:
        path = request.path.decode("utf-8", "replace")
        if len(path) > 1:
            path = path.rstrip("/") or "/"
        method = request.method.decode("latin-1")
        server = self.server
        segments = path.split("/")
        # /api/v1/... and /apis/<g>/<v>/...
        prefix = None
        if len(segments) >= 3 and segments[1] == "api":
            prefix = "/".join(segments[:3])
        elif len(segments) >= 4 and segments[1] == "apis":
            prefix = "/".join(segments[:4])
        if prefix is not None and prefix in server.group_versions:
            agv = server.group_versions[prefix]
            restful = agv.group in server.restful_groups
            if path == prefix:
                if method == "GET":
                    _write_discovery(request, agv.api_resource_list(),
                                     restful=not getattr(agv, "custom", False))
                elif restful:
                    write_status_error(request, errors.new_method_not_allowed())
                else:
                    write_plain_not_found(request)
                return NOT_DONE_YET
            if method == "HEAD":
                # go-restful routes have no HEAD; custom resources refuse it as not found
                if not restful:
                    write_plain_not_found(request)
                elif agv.match("GET", path) == "none":
                    write_status_error(request, not_found_status())
                else:
                    write_status_error(request, errors.new_method_not_allowed())
                return NOT_DONE_YET
            fast = agv.fast_endpoint(method, path[len(prefix):])
            if fast is not None:
                return _render_endpoint(request, path, *fast)
            found = agv.match(method, path)
            if found == "ok":
                request.prepath = [s.encode() for s in prefix.strip("/").split("/")]
                request.postpath = [s.encode() for s in path[len(prefix):].strip("/").split("/")]
                return agv.resource().render(request)
            if found == "method":
                write_status_error(request, errors.new_method_not_allowed())
                return NOT_DONE_YET
            if restful:
                write_status_error(request, not_found_status())
            else:
                write_plain_not_found(request)
            return NOT_DONE_YET
        if _restful(server, segments):
            request.kube_restful_path = True
        # /apis/<group>: legacy group document
        if len(segments) == 3 and segments[1] == "apis" and segments[2] in server.groups \
                and segments[2] != "":
            g = segments[2]
            _write_discovery(request, discovery.api_group(g, server.groups[g]))
            return NOT_DONE_YET
        handler = server.mux.get(path)
        if handler is not None and path in server.restful_paths and method != "GET":
            write_status_error(request, errors.new_method_not_allowed())
            return NOT_DONE_YET
        if handler is None:
            for p, h in server.prefix_mux.items():
                if path == p or path.startswith(p + "/"):
                    handler = h
                    break
        if handler is not None:
            handler(request)
            return NOT_DONE_YET
        if server.owns_restful_path(path):
            write_status_error(request, not_found_status())
            return NOT_DONE_YET
        if server.delegate is not None:
            return server.delegate.director().render(request)
        if getattr(request, "kube_restful_path", False):
            write_status_error(request, not_found_status())
        else:
            write_plain_not_found(request)
        return NOT_DONE_YET


def _render_endpoint(request: Any, path: str, endpoint: Any, kwargs: dict) -> Any:
    """
    Run a route's endpoint (L{APIGroupVersion.fast_endpoint}) as Klein's resource would: the
    path moved to C{prepath}, the endpoint's Deferred cancelled when the client goes, the
    request finished when the endpoint did not finish it.
    """
    request.prepath = [s.encode() for s in path.strip("/").split("/")]
    request.postpath = []
    d = endpoint(request, **kwargs)
    request.notifyFinish().addErrback(lambda _: d.cancel())

    def finish(_: Any) -> None:
        if not request.finished and not getattr(request, "_disconnected", False):
            request.finish()

    d.addCallback(finish)
    d.addErrback(lambda f: _log.failure("endpoint failed", f))
    return NOT_DONE_YET


def install_health_routes(front: GenericAPIServer, version_info: dict) -> None:
    """C{/healthz}, C{/livez}, C{/readyz} (whole chain) and C{/version} on the front server."""
    for endpoint in ("healthz", "livez", "readyz"):
        async def health(request: Any, endpoint: str = endpoint) -> None:
            path = request.path.decode("utf-8", "replace").rstrip("/")
            sub = path[len(endpoint) + 2:] if len(path) > len(endpoint) + 1 else ""
            checks = _endpoint_checks(front, endpoint)
            query = parse_qs(request.uri.decode("latin-1").partition("?")[2],
                             keep_blank_values=True)
            code, body = await render_health(endpoint, checks, sub, query)
            request.setHeader(b"X-Content-Type-Options", b"nosniff")
            write_body(request, code, body, "text/plain; charset=utf-8")

        front.prefix_mux[f"/{endpoint}"] = funnel(health)

    async def version(request: Any) -> None:
        # upstream's version handler writes with WriteRawJSON: indented, no newline
        write_raw_json(request, 200, version_info)

    front.mux["/version"] = funnel(version)
    front.restful_paths.add("/version")

    async def index(request: Any) -> None:
        body = json.dumps({"paths": listed_paths(front)}, indent=2).encode()
        write_body(request, 200, body, "application/json")

    front.mux["/"] = funnel(index)
    front.mux["/index.html"] = funnel(index)


def _endpoint_checks(front: GenericAPIServer, endpoint: str) -> list[HealthCheck]:
    """The checks C{/healthz}, C{/livez} or C{/readyz} run (the first two without the
    readiness-only C{shutdown} and C{etcd-readiness})."""
    checks = front.all_checks("readyz" if endpoint == "readyz" else "healthz")
    if endpoint != "readyz":
        checks = [c for c in checks if c.name not in ("shutdown", "etcd-readiness")]
    return checks


def listed_paths(front: GenericAPIServer) -> list[str]:
    """
    What C{GET /} lists (upstream C{routes.Index} over C{ListedPaths()} of the whole chain):
    every served group and group-version path, C{/apis/}, the mux paths, and one path per
    health check under C{/healthz}, C{/livez} and C{/readyz}; sorted, as Go's C{sort.Strings}.
    The index itself (C{/}, C{/index.html}) is not listed.
    """
    paths: set[str] = set()
    for s in front.chain():
        paths.update(s.mux)
        paths.update(s.prefix_mux)
        paths.update(s.group_versions)
        paths.update(f"/apis/{g}" for g in s.groups if g)
    paths.difference_update(("/", "/index.html"))
    if "/apis" in paths:
        paths.add("/apis/")
    if "/openapi/v3" in paths:
        paths.add("/openapi/v3/")
    for endpoint in ("healthz", "livez", "readyz"):
        if f"/{endpoint}" in paths:
            paths.update(f"/{endpoint}/{c.name}" for c in _endpoint_checks(front, endpoint))
    return sorted(paths)
