# -*- test-case-name: tests.server.test_openapi -*-
"""
OpenAPI publication: upstream C{k8s.io/kube-openapi/pkg/handler} (C{/openapi/v2}) and
C{handler3} (C{/openapi/v3}: a root listing one document per group-version, each fetched at
C{/openapi/v3/<apis/group/version>?hash=...}).

This first cut describes every served path and operation with upstream's operation ids,
C{x-kubernetes-action}, C{x-kubernetes-group-version-kind} and query parameters (which is
what C{kubectl} reads to learn that the server validates fields itself), and an object schema
per kind without properties.  Field schemas (for C{kubectl explain}) are separate work.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kubetwist.endpoints.installer import APIGroupVersion
from kubetwist.endpoints.responses import funnel, write_body
from kubetwist.runtime import codec
from kubetwist.server import openapi_v2proto
from kubetwist.server.openapi_types import kind_schemas

# the response media type upstream kube-openapi answers for either Accept spelling (Go's mime
# parser refuses the "@" form the client asks with)
PROTOBUF_V2 = openapi_v2proto.PROTOBUF_V2

_COMMON_QUERY = {
    "list": ["allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit",
             "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds",
             "watch"],
    "create": ["dryRun", "fieldManager", "fieldValidation"],
    "update": ["dryRun", "fieldManager", "fieldValidation"],
    "patch": ["dryRun", "fieldManager", "fieldValidation", "force"],
    "delete": ["dryRun", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential",
               "orphanDependents", "propagationPolicy"],
    "deletecollection": ["continue", "dryRun", "fieldSelector", "gracePeriodSeconds",
                         "labelSelector", "limit", "orphanDependents", "propagationPolicy",
                         "resourceVersion", "resourceVersionMatch", "sendInitialEvents",
                         "timeoutSeconds"],
    "get": [],
}

_PATCH_TYPES = ["application/apply-patch+yaml", "application/json-patch+json",
                "application/merge-patch+json"]


def _camel(text: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in text.replace("-", ".").split(".") if p)


def definition_name(group: str, version: str, kind: str) -> str:
    """Upstream's definition names: C{io.k8s.api.apps.v1.Deployment} for built-in groups."""
    if not group:
        return f"io.k8s.api.core.{version}.{kind}"
    short = group.split(".")[0] if group.endswith(".k8s.io") else group
    if group in ("apiregistration.k8s.io",):
        return f"io.k8s.kube-aggregator.pkg.apis.apiregistration.{version}.{kind}"
    if group in ("apiextensions.k8s.io",):
        return f"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{version}.{kind}"
    return f"io.k8s.api.{short}.{version}.{kind}"


def _operation(action: str, op_id: str, gvk: dict, query: list[str], ref: str,
               body: bool = False, patch: bool = False) -> dict:
    params = [{"name": q, "in": "query", "schema": {"type": "string"},
               "uniqueItems": True} for q in query]
    op: dict[str, Any] = {
        "operationId": op_id,
        "parameters": params,
        "responses": {"200": {"description": "OK", "content": {
            "application/json": {"schema": {"$ref": ref}},
            "application/yaml": {"schema": {"$ref": ref}},
        }}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
    }
    if body:
        media = _PATCH_TYPES if patch else ["*/*"]
        op["requestBody"] = {"content": {m: {"schema": {"$ref": ref}} for m in media},
                             "required": True}
    return op


def _merge_schemas(schemas: dict, derived: dict, root: str) -> None:
    """Add C{derived}'s component schemas: its C{root} always (it carries the kind's GVK), the
    others only where absent (a type reached from another kind has no GVK of its own)."""
    for key, value in derived.items():
        if key == root or key not in schemas:
            schemas[key] = value


def group_version_document(agv: APIGroupVersion, title_version: str,
                           title: str = "Kubernetes") -> dict:
    """The OpenAPI v3 document of one group-version (C{info.title} C{title})."""
    gv_camel = ("Core" if not agv.group else _camel(agv.group.replace(".k8s.io", ""))) + \
        agv.version[:1].upper() + agv.version[1:]
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for res in agv.resources.values():
        s = res.spec
        gvk = {"group": s.group, "version": s.version, "kind": s.kind}
        name = getattr(res, "definition_name", None) or definition_name(s.group, s.version, s.kind)
        list_name = getattr(res, "list_definition_name", None) or \
            definition_name(s.group, s.version, s.list_kind)
        ref = f"#/components/schemas/{name}"
        list_ref = f"#/components/schemas/{list_name}"
        published = getattr(res, "openapi_definitions", None)
        if published:
            # custom resources publish their CRD's schema (kubetwist.apiextensions.openapi)
            schemas.update(published)
        else:
            # built-in kinds: derived from kubetwist's own type definitions where it has them
            derived = kind_schemas(s.group, s.version, s.kind)
            if derived and name in derived:
                _merge_schemas(schemas, derived, name)
                _merge_schemas(schemas, kind_schemas(s.group, s.version, s.list_kind) or {},
                               list_name)
            else:
                schemas[name] = {"type": "object",
                                 "description": f"{s.kind} of {agv.group_version}",
                                 "x-kubernetes-group-version-kind": [gvk]}
            schemas.setdefault(list_name, {"type": "object", "x-kubernetes-group-version-kind": [
                {**gvk, "kind": s.list_kind}]})
        ns_word = "Namespaced" if s.namespaced else ""
        base = agv.prefix + (f"/namespaces/{{namespace}}/{s.resource}" if s.namespaced
                             else f"/{s.resource}")
        verbs = set(res.verbs)
        coll: dict[str, Any] = {}
        if "list" in verbs:
            coll["get"] = _operation("list", f"list{gv_camel}{ns_word}{s.kind}", gvk,
                                     _COMMON_QUERY["list"], list_ref)
        if "create" in verbs:
            coll["post"] = _operation("post", f"create{gv_camel}{ns_word}{s.kind}", gvk,
                                      _COMMON_QUERY["create"], ref, body=True)
        if "deletecollection" in verbs:
            coll["delete"] = _operation("deletecollection",
                                        f"deleteCollection{gv_camel}{ns_word}{s.kind}", gvk,
                                        _COMMON_QUERY["deletecollection"], ref)
        if coll:
            paths[base] = coll
        item: dict[str, Any] = {}
        if "get" in verbs:
            item["get"] = _operation("get", f"read{gv_camel}{ns_word}{s.kind}", gvk, [], ref)
        if "update" in verbs:
            item["put"] = _operation("put", f"replace{gv_camel}{ns_word}{s.kind}", gvk,
                                     _COMMON_QUERY["update"], ref, body=True)
        if "patch" in verbs:
            item["patch"] = _operation("patch", f"patch{gv_camel}{ns_word}{s.kind}", gvk,
                                       _COMMON_QUERY["patch"], ref, body=True, patch=True)
        if "delete" in verbs:
            item["delete"] = _operation("delete", f"delete{gv_camel}{ns_word}{s.kind}", gvk,
                                        _COMMON_QUERY["delete"], ref)
        if item:
            paths[f"{base}/{{name}}"] = item
        if s.namespaced and "list" in verbs:
            paths[f"{agv.prefix}/{s.resource}"] = {"get": _operation(
                "list", f"list{gv_camel}{s.kind}ForAllNamespaces", gvk,
                _COMMON_QUERY["list"], list_ref)}
        for sub, sub_verbs in res.subresources.items():
            sub_camel = sub[:1].upper() + sub[1:]
            sub_gvk = {"group": "autoscaling", "version": "v1", "kind": "Scale"} \
                if sub == "scale" else gvk
            sub_ref = "#/components/schemas/io.k8s.api.autoscaling.v1.Scale" if sub == "scale" \
                else ref
            if sub == "scale":
                schemas.update(kind_schemas("autoscaling", "v1", "Scale") or {
                    "io.k8s.api.autoscaling.v1.Scale": {
                        "type": "object", "x-kubernetes-group-version-kind": [sub_gvk]}})
            ops: dict[str, Any] = {}
            if "get" in sub_verbs:
                ops["get"] = _operation("get", f"read{gv_camel}{ns_word}{s.kind}{sub_camel}",
                                        sub_gvk, [], sub_ref)
            if "update" in sub_verbs:
                ops["put"] = _operation("put", f"replace{gv_camel}{ns_word}{s.kind}{sub_camel}",
                                        sub_gvk, _COMMON_QUERY["update"], sub_ref, body=True)
            if "patch" in sub_verbs:
                ops["patch"] = _operation("patch", f"patch{gv_camel}{ns_word}{s.kind}{sub_camel}",
                                          sub_gvk, _COMMON_QUERY["patch"], sub_ref, body=True,
                                          patch=True)
            paths[f"{base}/{{name}}/{sub}"] = ops
    kinds = {}
    for res in agv.resources.values():
        base = agv.prefix + (f"/namespaces/{{namespace}}/{res.spec.resource}"
                             if res.spec.namespaced else f"/{res.spec.resource}")
        kinds[base] = res.spec.kind
    for path, item in paths.items():
        item["parameters"] = _path_parameters(path, kinds)
    return {
        "openapi": "3.0.0",
        "info": {"title": title, "version": title_version},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def _path_parameters(path: str, kinds: dict) -> list:
    """Upstream's path-item parameters: the path's C{name} and C{namespace}, then C{pretty}
    (found missing by a schemathesis run: without them no client can fill the path)."""
    params = []
    if "{name}" in path:
        kind = next((k for base, k in kinds.items() if path.startswith(base + "/{name}")), "")
        params.append({"name": "name", "in": "path", "description": f"name of the {kind}",
                       "required": True, "schema": {"type": "string", "uniqueItems": True}})
    if "{namespace}" in path:
        params.append({"name": "namespace", "in": "path",
                       "description": "object name and auth scope, such as for teams and "
                                      "projects",
                       "required": True, "schema": {"type": "string", "uniqueItems": True}})
    params.append({"name": "pretty", "in": "query", "description": (
        "If 'true', then the output is pretty printed. Defaults to 'false' unless the "
        "user-agent indicates a browser or command-line HTTP tool (curl and wget)."),
        "schema": {"type": "string", "uniqueItems": True}})
    return params


def _v2_schema(node: Any) -> Any:
    if isinstance(node, list):
        return [_v2_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _v2_schema(v) for k, v in node.items()}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
        out["$ref"] = "#/definitions/" + ref[len("#/components/schemas/"):]
    all_of = out.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and set(all_of[0]) == {"$ref"}:
        # v3's C{allOf: [{$ref}]} (which lets a reference carry a default) is a plain C{$ref}
        # with its siblings in Swagger 2.0, as upstream's v2 document writes it
        out.pop("allOf")
        out.pop("default", None)
        out["$ref"] = all_of[0]["$ref"]
    return out


def v2_definitions(document: dict) -> dict:
    """
    The Swagger 2.0 C{definitions} of one group-version's OpenAPI v3 document (upstream
    serves both from the same kube-openapi definitions): its component schemas, references
    rewritten to C{#/definitions/...} and C{allOf} reference wrappers unwrapped.
    """
    schemas = ((document or {}).get("components") or {}).get("schemas") or {}
    return {name: _v2_schema(schema) for name, schema in schemas.items()}


def _doc_path(agv: APIGroupVersion) -> str:
    return agv.prefix.lstrip("/")


def install_openapi(front: Any, version: str, title: str = "Kubernetes") -> None:
    """C{/openapi/v2} and C{/openapi/v3[/...]} on the front server, over the whole chain
    (C{info.version} C{version}; the v3 documents' C{info.title} C{title}, which an extension
    server names)."""
    built: dict[str, tuple[Any, tuple[bytes, str]]] = {}
    v2_built: dict[str, tuple[str, dict]] = {}
    # the whole v2 document: key, JSON body, ETag, build time, protobuf form (built lazily)
    v2_doc: dict[str, Any] = {}

    def documents() -> dict[str, tuple[bytes, str]]:
        # one document per group-version, rebuilt only when that group-version's tree was
        # replaced (custom resources: a CRD changed)
        gvs = front.all_group_versions()
        out: dict[str, tuple[bytes, str]] = {}
        for agv in gvs.values():
            path = _doc_path(agv)
            entry = built.get(path)
            if entry is None or entry[0] is not agv:
                body = codec.encode_json(group_version_document(agv, version, title))
                entry = (agv, (body, hashlib.sha512(body).hexdigest().upper()))
                built[path] = entry
            out[path] = entry[1]
        for path in [p for p in built if p not in out]:
            del built[path]
        # the extension servers' documents (kubetwist.aggregator: the OpenAPI v3 controller)
        remote = getattr(front, "remote_openapi", None)
        if remote is not None:
            out.update(remote.v3_documents())
        return out

    async def v3(request: Any) -> None:
        path = request.path.decode().rstrip("/")
        docs = documents()
        if path == "/openapi/v3":
            root = {"paths": {p: {"serverRelativeURL": f"/openapi/v3/{p}?hash={h}"}
                              for p, (_, h) in sorted(docs.items())}}
            write_body(request, 200, codec.encode_json(root), "application/json")
            return
        sub = path[len("/openapi/v3/"):]
        if sub not in docs:
            # upstream's OpenAPI v3 service: a bare 404, no body and no content type
            request.defaultContentType = None
            request.setResponseCode(404)
            request.setHeader(b"Content-Length", b"0")
            request.setHeader(b"Cache-Control", b"no-cache, private")
            request.finish()
            return
        body, h = docs[sub]
        request.setHeader(b"ETag", f'"{h}"'.encode())
        request.setHeader(b"Cache-Control", b"public, immutable")
        write_body(request, 200, body, "application/json")

    def v2_document() -> dict[str, Any]:
        # rebuilt only when a group-version's document or a CRD's v2 definitions changed
        docs = documents()
        extra = [v2 for agv in front.all_group_versions().values()
                 for res in agv.resources.values()
                 for v2 in [getattr(res, "openapi_v2_definitions", None)] if v2 is not None]
        remote = getattr(front, "remote_openapi", None)
        remote_key, remote_paths, remote_definitions = \
            remote.v2_parts() if remote is not None else ((), {}, {})
        key = (tuple(sorted((p, h) for p, (_, h) in docs.items())),
               tuple(id(v2) for v2 in extra), remote_key)
        if v2_doc.get("key") == key:
            return v2_doc
        definitions: dict[str, Any] = {}
        remote_v3_paths = set(remote.v3_documents()) if remote is not None else set()
        for path, (body, digest) in docs.items():
            if remote is not None and path in remote_v3_paths:
                continue
            converted = v2_built.get(path)
            if converted is None or converted[0] != digest:
                converted = (digest, v2_definitions(codec.decode_body(body, codec.JSON)))
                v2_built[path] = converted
            definitions.update(converted[1])
        for v2 in extra:
            definitions.update(v2.get())
        for path in [p for p in v2_built if p not in docs]:
            del v2_built[path]
        for name, schema in remote_definitions.items():
            definitions.setdefault(name, schema)
        doc = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": version},
               "paths": dict(remote_paths), "definitions": definitions}
        body = codec.encode_json(doc)
        v2_doc.clear()
        # the getters are kept so that their ids in the key stay theirs
        v2_doc.update(key=key, extra=extra, doc=doc, json=body, proto=None,
                      etag=hashlib.sha512(body).hexdigest().upper(),
                      modified=front.clock.seconds())
        return v2_doc

    def v2_proto() -> bytes:
        if v2_doc["proto"] is None:
            v2_doc["proto"] = openapi_v2proto.encode_document(v2_doc["doc"])
        return v2_doc["proto"]

    async def v2(request: Any) -> None:
        accept = request.getHeader(b"accept")
        answer = openapi_v2proto.negotiate(accept.decode("latin-1") if accept else None)
        if answer is None:
            openapi_v2proto.not_acceptable(request)
            return
        entry = v2_document()
        body = entry["json"] if answer == openapi_v2proto.JSON else v2_proto
        openapi_v2proto.serve_content(request, body, answer, entry["etag"], entry["modified"])

    front.prefix_mux["/openapi/v3"] = funnel(v3)
    front.mux["/openapi/v2"] = funnel(v2)
