# -*- test-case-name: tests.endpoints.test_handlers -*-
"""
REST storage capabilities to routes: upstream C{k8s.io/apiserver/pkg/endpoints/installer.go}
and C{groupversion.go}.

One L{APIGroupVersion} per installed group-version owns one Klein app.  For every resource the
installer adds routes only for the verbs its storage provides: collection routes
(C{GET} list/watch, C{POST} create, C{DELETE} deletecollection), item routes (C{GET PUT PATCH
DELETE}) and subresource routes, under C{/namespaces/<namespace>/} for namespaced resources
(plus the all-namespaces list/watch route).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from klein import Klein
from werkzeug.exceptions import MethodNotAllowed, NotFound
from werkzeug.routing import Map, RequestRedirect, Rule

from kubetwist.endpoints.discovery import (
    DiscoveredResource,
    api_resource_list,
)
from kubetwist.endpoints.handlers.rest import ResourceHandlers, create_on
from kubetwist.endpoints.request import context_of
from kubetwist.endpoints.responses import funnel
from kubetwist.registry.generic.store import Store
from kubetwist.registry.rest import VERB_CAPABILITIES, ResourceSpec, verbs_of

#: Every verb a storage can serve (the generic Store serves them all).
ALL_VERBS = [verb for verb, _ in VERB_CAPABILITIES]


@dataclass
class APIResource:
    """
    One resource to install: its handlers, over a storage whose REST capabilities
    (L{IGetter <kubetwist.registry.rest.IGetter>}, ...) decide the verbs served.

    @ivar subresources: C{{name: verbs}} (the handlers hold the subresource storages).
    """

    handlers: ResourceHandlers
    subresources: dict[str, list[str]] = field(default_factory=dict)
    storage_version: Optional[tuple[str, str]] = None
    #: False for a resource served by a REST object with no storage of its own (C{bindings}):
    #: discovery then shows no C{storageVersionHash}, as upstream.
    has_storage: bool = True

    @property
    def spec(self) -> ResourceSpec:
        return self.handlers.spec

    @property
    def storage(self) -> object:
        """The resource's storage (a Store, or a REST object)."""
        return self.handlers.store

    @property
    def verbs(self) -> list[str]:
        """The verbs served: the capabilities the storage provides, in L{ALL_VERBS} order."""
        return verbs_of(self.storage)


class _LazyBuilderRule(Rule):
    """
    A werkzeug C{Rule} whose URL builders are compiled on first use instead of when the rule
    is bound: werkzeug compiles two Python functions per rule (C{ast} + C{compile}), about
    2 ms a rule and most of an assembled server's start-up over its ~300 routes, and routing
    never calls them (only C{url_for}-style building does).  Matching is unchanged: the regex
    parts are still made by C{compile}.
    """

    def _compile_builder(self, append_unknown: bool = True):
        name = "_build_unknown" if append_unknown else "_build"

        def build(rule: Rule, *args, **kwargs):
            real = Rule._compile_builder(rule, append_unknown).__get__(rule, None)
            setattr(rule, name, real)
            return real(*args, **kwargs)

        return build


class _RouteMap(Map):
    """Klein's C{Map}, its plain rules bound as L{_LazyBuilderRule}s."""

    def add(self, rulefactory) -> None:
        if type(rulefactory) is Rule:
            rulefactory.__class__ = _LazyBuilderRule
        super().add(rulefactory)


def new_route_app() -> Klein:
    """A C{Klein} app whose routes compile their URL builders lazily (L{_LazyBuilderRule})."""
    app = Klein()
    app._url_map = _RouteMap()
    return app


class APIGroupVersion:
    """
    The Klein tree of one group-version (e.g. C{/apis/apps/v1}).

    @ivar prefix: C{/api/v1} or C{/apis/<group>/<version>}.
    """

    def __init__(self, group: str, version: str) -> None:
        self.group = group
        self.version = version
        self.prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
        self.app = new_route_app()
        self.resources: dict[str, APIResource] = {}
        self._resource = None
        #: the precompiled routes of the hot paths (L{fast_endpoint}): C{(shape, resource)
        #: -> (methods, endpoint)}, shape C{cl} (cluster collection, or every namespace's),
        #: C{clitem}, C{ns} (a namespace's collection), C{nsitem}
        self.fast: dict[tuple[str, str], tuple[frozenset, Any]] = {}

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    # --- installation --------------------------------------------------------------------------
    def install(self, res: APIResource) -> None:
        """Add the routes of C{res} for exactly the verbs it provides."""
        spec = res.spec
        self.resources[spec.resource] = res
        h = res.handlers
        verbs = set(res.verbs)
        route = self.app.route
        base = (f"/namespaces/<namespace>/{spec.resource}" if spec.namespaced
                else f"/{spec.resource}")
        ns = spec.namespaced

        def bind(fn, **fixed):
            wrapped = funnel(fn)

            def endpoint(request, **kw):
                kw.update(fixed)
                if not ns:
                    kw.setdefault("namespace", "")
                return wrapped(request, **kw)

            return endpoint

        name = f"{spec.resource}:{'ns' if ns else 'cluster'}"
        coll_methods = []
        if verbs & {"list", "watch"}:
            coll_methods.append("GET")
        if "create" in verbs:
            coll_methods.append("POST")
        if "deletecollection" in verbs:
            coll_methods.append("DELETE")
        fast = self.fast
        if coll_methods:
            endpoint = bind(self._collection(h))
            route(base, methods=coll_methods, endpoint=f"{name}:collection")(endpoint)
            fast[("ns" if ns else "cl", spec.resource)] = (frozenset(coll_methods), endpoint)
        if ns and verbs & {"list", "watch"}:
            endpoint = bind(self._all_namespaces(h))
            route(f"/{spec.resource}", methods=["GET"], endpoint=f"{name}:all")(endpoint)
            fast[("cl", spec.resource)] = (frozenset(["GET"]), endpoint)
        item_methods = [m for m, v in (("GET", "get"), ("PUT", "update"), ("PATCH", "patch"),
                                       ("DELETE", "delete")) if v in verbs]
        if item_methods:
            endpoint = bind(self._item(h))
            route(f"{base}/<name>", methods=item_methods, endpoint=f"{name}:item")(endpoint)
            fast[("nsitem" if ns else "clitem", spec.resource)] = (frozenset(item_methods),
                                                                   endpoint)
        if "watch" in verbs:
            wbase = (f"/watch/namespaces/<namespace>/{spec.resource}" if ns
                     else f"/watch/{spec.resource}")
            route(wbase, methods=["GET"], endpoint=f"{name}:watchlist")(bind(h.watch))
            route(f"{wbase}/<name>", methods=["GET"], endpoint=f"{name}:watchitem")(bind(h.watch))
            if ns:
                route(f"/watch/{spec.resource}", methods=["GET"], endpoint=f"{name}:watchall")(
                    bind(h.watch, namespace="")
                )
        for sub, sub_verbs in res.subresources.items():
            self._route_subresource(res, sub, sub_verbs)

    def _route_subresource(self, res: APIResource, sub: str, sub_verbs: list[str]) -> None:
        spec = res.spec
        ns = spec.namespaced
        base = f"/namespaces/<namespace>/{spec.resource}" if ns else f"/{spec.resource}"
        wrapped = funnel(self._subresource(res.handlers))

        def endpoint(request, **kw):
            kw["subresource"] = sub
            if not ns:
                kw.setdefault("namespace", "")
            return wrapped(request, **kw)

        methods = [m for m, v in (("GET", "get"), ("PUT", "update"), ("PATCH", "patch"),
                                  ("POST", "create"), ("DELETE", "delete")) if v in sub_verbs]
        name = f"{spec.resource}:{'ns' if ns else 'cluster'}"
        self.app.route(f"{base}/<name>/{sub}", methods=methods, endpoint=f"{name}:{sub}")(
            endpoint)
        if sub == "proxy":
            # upstream also routes {name}/proxy/{path:*}; the path does not change the answer
            def path_endpoint(request, path="", **kw):
                return endpoint(request, **kw)

            self.app.route(f"{base}/<name>/{sub}/<path:path>", methods=methods,
                           endpoint=f"{name}:{sub}:path")(path_endpoint)

    def add_subresource(self, resource: str, subresource: str, verbs: list[str],
                        storage: object) -> None:
        """
        Add a subresource to an installed resource: its route (for C{verbs}, of C{get update
        patch create delete}) and its discovery entry.  C{storage} follows the protocol of
        L{kubetwist.registry.generic.scale.ScaleREST}, or creates (the ServiceAccount C{token}
        subresource: C{expect} and C{create(namespace, name, obj, dry_run, admission)}, see
        L{kubetwist.endpoints.handlers.rest.create_on}).

        @raise KeyError: C{resource} is not installed.
        """
        res = self.resources[resource]
        res.handlers.subresources[subresource] = storage
        res.subresources[subresource] = list(verbs)
        self._route_subresource(res, subresource, list(verbs))

    @staticmethod
    def _collection(h: ResourceHandlers):
        async def collection(request, namespace):
            m = request.method
            if m in (b"GET", b"HEAD"):
                return await h.list(request, namespace)
            if m == b"POST":
                return await h.create(request, namespace)
            return await h.delete_collection(request, namespace)
        return collection

    @staticmethod
    def _all_namespaces(h: ResourceHandlers):
        async def all_namespaces(request, namespace=""):
            return await h.list(request, "")
        return all_namespaces

    @staticmethod
    def _item(h: ResourceHandlers):
        async def item(request, namespace, name):
            m = request.method
            if m in (b"GET", b"HEAD"):
                return await h.get(request, namespace, name)
            if m == b"PUT":
                return await h.update(request, namespace, name)
            if m == b"PATCH":
                return await h.patch(request, namespace, name)
            return await h.delete(request, namespace, name)
        return item

    @staticmethod
    def _subresource(h: ResourceHandlers):
        async def subresource(request, namespace, name, subresource):
            connect_options = getattr(h.subresources.get(subresource), "connect_options", None)
            if connect_options is not None:
                # a connect subresource (exec, attach, portforward, proxy): admission with
                # operation CONNECT first, as upstream's ConnectResource
                await h.connect_admission(request, namespace, name, subresource,
                                          connect_options(request, name))
            m = request.method
            if m in (b"GET", b"HEAD"):
                return await h.get_subresource(request, namespace, name, subresource)
            if m == b"PUT":
                return await h.update(request, namespace, name, subresource)
            if m == b"PATCH":
                return await h.patch(request, namespace, name, subresource)
            if m == b"POST":
                return await h.create_subresource(request, namespace, name, subresource)
            sub = h.subresources[subresource]
            return await sub.delete(request, h, namespace, name)
        return subresource

    # --- serving -------------------------------------------------------------------------------
    def fast_endpoint(self, method: str, path: str) -> Optional[tuple[Any, dict]]:
        """
        The endpoint and its keyword arguments for C{method path} (a path below L{prefix})
        when it is one of the hot shapes -- a collection (C{/<resource>},
        C{/namespaces/<ns>/<resource>}) or an object (C{/<resource>/<name>},
        C{/namespaces/<ns>/<resource>/<name>}) served for C{method} -- found with one dict
        lookup; else C{None} and the route tree decides (subresources, watch paths, escaped
        or empty segments, 404 and 405).  Both give the same endpoint: the table is filled
        from the same routes (a namespace's subresources, C{/namespaces/<name>/status}, are
        never taken for a collection: no namespaced resource is named like one).
        """
        if "%" in path or type(self).resource is not APIGroupVersion.resource:
            # a subclass that wraps the route tree (custom resources' deprecation warnings)
            # keeps it
            return None
        segments = path.split("/")
        n = len(segments)
        if n == 2:
            key, kwargs = ("cl", segments[1]), {}
        elif n == 3:
            key, kwargs = ("clitem", segments[1]), {"name": segments[2]}
        elif n == 4 and segments[1] == "namespaces":
            if self._namespace_subresource(segments[3]):
                return None
            key, kwargs = ("ns", segments[3]), {"namespace": segments[2]}
        elif n == 5 and segments[1] == "namespaces":
            key, kwargs = ("nsitem", segments[3]), {"namespace": segments[2],
                                                    "name": segments[4]}
        else:
            return None
        if segments[0] or not all(segments[1:]):
            return None
        entry = self.fast.get(key)
        if entry is None or method not in entry[0]:
            return None
        return entry[1], kwargs

    def _namespace_subresource(self, name: str) -> bool:
        res = self.resources.get("namespaces")
        return res is not None and name in res.subresources

    def match(self, method: str, path: str) -> str:
        """
        C{"ok"} if a route serves C{method path} (a path below L{prefix}), C{"method"} when the
        path exists but not for that method, C{"none"} otherwise.
        """
        rest = path[len(self.prefix):] or "/"
        adapter = self.app.url_map.bind("localhost")
        try:
            adapter.match(rest, method)
        except MethodNotAllowed:
            return "method"
        except (NotFound, RequestRedirect):
            return "none"
        return "ok"

    def resource(self):
        """The Klein resource (cached) that the director renders for paths under L{prefix}."""
        if self._resource is None:
            self._resource = self.app.resource()
        return self._resource

    def discovery(self) -> list[DiscoveredResource]:
        return [
            DiscoveredResource(r.spec, r.verbs, r.subresources, r.storage_version)
            for r in self.resources.values()
        ]

    def api_resource_list(self) -> dict:
        doc = api_resource_list(self.group_version, self.discovery(), legacy=not self.group)
        storageless = {name for name, r in self.resources.items() if not r.has_storage}
        for entry in doc["resources"]:
            if entry["name"] in storageless:
                entry.pop("storageVersionHash", None)
        return doc


class RESTResourceHandlers:
    """
    The handlers of a resource served by a REST object instead of a L{Store} (upstream
    C{LegacyBindingREST} for C{bindings}): only C{create}, through
    L{kubetwist.endpoints.handlers.rest.create_on} with no name.

    @ivar spec: the resource's table row.
    @ivar rest: the REST object.
    """

    def __init__(self, spec: ResourceSpec, rest: object, admission: object) -> None:
        self.spec = spec
        self.rest = rest
        #: the storage the installer asks for capabilities
        self.store = rest
        self.admission = admission
        self.subresources: dict[str, object] = {}

    def _admission(self, request, namespace: str, name: str, subresource: str, dry: bool):
        return self.admission.for_request(
            self.spec, subresource, namespace, name, context_of(request).user, dry)

    async def create(self, request, namespace: str) -> None:
        await create_on(self, request, namespace, "", self.rest)


def status_subresource(store: Store, status_strategy) -> Store:
    """The C{status} subresource storage of C{store} (upstream C{StatusREST})."""
    return store.for_subresource(status_strategy)
