# -*- test-case-name: tests.runtime.test_protobuf -*-
"""
A tiny recording HTTP server for capturing what real C{kubectl} sends: it answers the
discovery requests kubectl makes before a write (C{/api}, C{/apis}, aggregated discovery is
declined), 404s OpenAPI, and answers every write with 201 and a small JSON object, recording
the method, path, headers and body of each request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from twisted.web import resource, server

_CORE_RESOURCES = [
    ("namespaces", "Namespace", False), ("configmaps", "ConfigMap", True),
    ("secrets", "Secret", True), ("services", "Service", True),
    ("serviceaccounts", "ServiceAccount", True), ("pods", "Pod", True),
]
_APPS_RESOURCES = [("deployments", "Deployment", True)]
_VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]


def _resource_list(group_version: str, resources: list) -> dict:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": [
            {"name": name, "singularName": "", "namespaced": namespaced, "kind": kind,
             "verbs": _VERBS}
            for name, kind, namespaced in resources
        ],
    }


_DISCOVERY = {
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                             "serverAddress": "127.0.0.1:1"}]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": "apps", "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
         "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}}]},
    "/api/v1": _resource_list("v1", _CORE_RESOURCES),
    "/apis/apps/v1": _resource_list("apps/v1", _APPS_RESOURCES),
    "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0"},
}


@dataclass
class CapturedRequest:
    """One request kubectl made."""

    method: str
    path: str
    content_type: str
    accept: str
    body: bytes


@dataclass
class CaptureResource(resource.Resource):
    """Records every request in C{requests}; see the module docstring for the answers."""

    requests: list = field(default_factory=list)
    isLeaf = True

    def __post_init__(self) -> None:
        resource.Resource.__init__(self)

    def render(self, request: server.Request) -> bytes:
        body = request.content.read()
        path = request.path.decode()
        self.requests.append(CapturedRequest(
            request.method.decode(), request.uri.decode(),
            (request.getHeader("content-type") or ""), (request.getHeader("accept") or ""),
            body))
        request.setHeader("content-type", "application/json")
        if request.method == b"GET" and path in _DISCOVERY:
            return json.dumps(_DISCOVERY[path]).encode()
        if request.method == b"POST":
            request.setResponseCode(201)
            kind = path.rstrip("/").rsplit("/", 1)[-1]
            return json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {},
                               "status": "Success", "details": {"name": "x", "kind": kind}}
                              ).encode()
        request.setResponseCode(404)
        return json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {},
                           "status": "Failure", "reason": "NotFound", "code": 404}).encode()
