# -*- test-case-name: tests.endpoints.test_requestinfo -*-
"""
What a request is about: upstream C{k8s.io/apiserver/pkg/endpoints/request/requestinfo.go}.

Parsed once, in front (the request-info filter); authorization, in-flight limits, audit and the
resource handlers all read the same L{RequestInfo}.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qs

API_PREFIXES = ("api", "apis")
GROUPLESS_API_PREFIXES = ("api",)
#: Subresources of a namespace that are not namespaced resources (upstream namespaceSubresources).
NAMESPACE_SUBRESOURCES = {"status", "finalize"}

_VERB_FOR_METHOD = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}


@dataclass
class RequestInfo:
    """
    Upstream C{request.RequestInfo}.

    @ivar is_resource_request: C{False} for C{/healthz}, C{/apis}, discovery, ...
    @ivar verb: C{get list watch create update patch delete deletecollection} for resource
        requests, the lower-cased HTTP method otherwise.
    """

    is_resource_request: bool = False
    path: str = ""
    verb: str = ""
    api_prefix: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    query: dict[str, list[str]] = field(default_factory=dict)


def _truthy(query: dict[str, list[str]], key: str) -> bool:
    values = query.get(key)
    if not values:
        return False
    return values[0].lower() in ("true", "1")


def parse_request_info(method: str, path: str, query_string: str = "") -> RequestInfo:
    """
    Parse C{method} and C{path} as upstream's C{RequestInfoFactory.NewRequestInfo}.

    Resource paths: C{/api/v1/namespaces/{ns}/{resource}/{name}/{subresource}},
    C{/apis/{group}/{version}/...}; a first segment of C{watch} turns the verb into C{watch}
    (deprecated form); a GET of a collection is C{list}, or C{watch} with C{?watch=true}; a
    DELETE of a collection is C{deletecollection}.
    """
    query = parse_qs(query_string, keep_blank_values=True)
    info = RequestInfo(path=path, verb=method.lower(), query=query)
    current = [p for p in path.strip("/").split("/")] if path.strip("/") else []
    if len(current) < 3 or current[0] not in API_PREFIXES:
        return info
    info.api_prefix = current[0]
    current = current[1:]
    if info.api_prefix not in GROUPLESS_API_PREFIXES:
        if len(current) < 3:
            return info
        info.api_group = current[0]
        current = current[1:]
    info.is_resource_request = True
    info.api_version = current[0]
    current = current[1:]

    verb = _VERB_FOR_METHOD.get(method.upper(), method.lower())
    if current and current[0] == "watch":
        verb = "watch"
        current = current[1:]
    info.verb = verb

    if current and current[0] == "namespaces":
        if len(current) > 1:
            info.namespace = current[1]
            if len(current) > 2 and current[2] not in NAMESPACE_SUBRESOURCES:
                current = current[2:]
    else:
        info.namespace = ""

    info.parts = list(current)
    if len(current) >= 3:
        info.subresource = current[2]
    if len(current) >= 2:
        info.name = current[1]
    if current:
        info.resource = current[0]

    if not info.name and info.verb == "get":
        info.verb = "watch" if _truthy(query, "watch") else "list"
    if not info.name and info.verb == "delete":
        info.verb = "deletecollection"
    # a field selector on metadata.name makes a list/watch about one object (authorization)
    if info.verb in ("list", "watch") and not info.name:
        for sel in query.get("fieldSelector", []):
            for req in sel.split(","):
                k, sep, v = req.partition("=")
                if sep and k.strip() == "metadata.name":
                    info.name = v[1:] if v.startswith("=") else v  # "=" or "=="
    return info
