# -*- test-case-name: tests.integration.test_aggregation -*-
"""
A small extension API server for the aggregation tests (run as a program, inside a network
namespace): HTTPS with its own certificate, requiring a client certificate from C{--client-ca}
(the API server's front-proxy identity), serving C{example.kubetwist.io/v1}:

 - C{GET /apis/example.kubetwist.io/v1}: the C{APIResourceList} (C{things}, C{things/exec});
 - C{GET .../namespaces/<ns>/things[/<name>]}: a list / an object whose C{identity} echoes the
   C{X-Remote-*} headers and the client certificate's common name;
 - C{POST .../namespaces/<ns>/things}: 201, how many body bytes arrived;
 - C{GET .../things?watch=true}: one C{ADDED} event at once, then one C{MODIFIED} event a
   second, never ending (a stream);
 - C{.../things/<name>/exec} with C{Connection: Upgrade}: C{101 Switching Protocols}, then
   every byte received is sent back upper-cased;
 - C{/openapi/v2}, C{/openapi/v3}, C{/openapi/v3/apis/example.kubetwist.io/v1}.

Usage: C{python aggregated_backend.py ADDRESS PORT CERT KEY CLIENT_CA}.
"""

from __future__ import annotations

import json
import sys

from twisted.internet import protocol, reactor, ssl, task
from twisted.web import resource, server

GROUP, VERSION = "example.kubetwist.io", "v1"
GV = f"{GROUP}/{VERSION}"

RESOURCES = {
    "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": GV,
    "resources": [
        {"name": "things", "singularName": "thing", "namespaced": True, "kind": "Thing",
         "verbs": ["get", "list", "watch"], "shortNames": ["th"]},
        {"name": "things/exec", "singularName": "", "namespaced": True, "kind": "Thing",
         "verbs": ["create", "get"]},
    ],
}

THING_SCHEMA = {"type": "object", "description": "A thing of the aggregation tests.",
                "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                               "metadata": {"type": "object"},
                               "spec": {"type": "object", "properties": {
                                   "color": {"type": "string",
                                             "description": "The color of the thing."}}}},
                "x-kubernetes-group-version-kind": [
                    {"group": GROUP, "version": VERSION, "kind": "Thing"}]}

OPENAPI_V3 = {"openapi": "3.0.0", "info": {"title": "Backend", "version": "v1"},
              "paths": {f"/apis/{GV}/namespaces/{{namespace}}/things/{{name}}": {
                  "get": {"operationId": "readThing", "x-kubernetes-action": "get",
                          "x-kubernetes-group-version-kind": {
                              "group": GROUP, "version": VERSION, "kind": "Thing"},
                          "responses": {"200": {
                              "description": "OK", "content": {"application/json": {"schema": {
                                  "$ref": "#/components/schemas/io.kubetwist.example.v1.Thing"
                              }}}}}}}},
              "components": {"schemas": {"io.kubetwist.example.v1.Thing": THING_SCHEMA}}}

OPENAPI_V2 = {"swagger": "2.0", "info": {"title": "Backend", "version": "v1"},
              "paths": {f"/apis/{GV}/namespaces/{{namespace}}/things/{{name}}": {
                  "get": {"operationId": "readThing", "responses": {"200": {
                      "description": "OK", "schema": {
                          "$ref": "#/definitions/io.kubetwist.example.v1.Thing"}}}}}},
              "definitions": {"io.kubetwist.example.v1.Thing": THING_SCHEMA}}


def identity(request) -> dict:
    h = request.requestHeaders
    extra = {}
    for name, values in h.getAllRawHeaders():
        if name.lower().startswith(b"x-remote-extra-"):
            extra[name.decode()[len("X-Remote-Extra-"):].lower()] = [v.decode() for v in values]
    cn = ""
    cert = request.channel.transport.getPeerCertificate() \
        if hasattr(request.channel.transport, "getPeerCertificate") else None
    if cert is not None:
        cn = cert.get_subject().CN or ""
    return {"user": (h.getRawHeaders(b"x-remote-user") or [b""])[0].decode(),
            "groups": [v.decode() for v in h.getRawHeaders(b"x-remote-group") or []],
            "extra": extra, "proxyClient": cn,
            "authorization": bool(h.getRawHeaders(b"authorization"))}


def thing(name: str, namespace: str, request, rv: int = 1) -> dict:
    return {"apiVersion": GV, "kind": "Thing",
            "metadata": {"name": name, "namespace": namespace, "resourceVersion": str(rv)},
            "spec": {"color": "blue"}, "identity": identity(request)}


class Echo(protocol.Protocol):
    def dataReceived(self, data: bytes) -> None:
        self.transport.write(data.upper())


class Backend(resource.Resource):
    isLeaf = True

    def render(self, request) -> bytes:
        path = request.path.decode().rstrip("/")
        parts = path.split("/")
        request.setHeader(b"Content-Type", b"application/json")
        if path == "/openapi/v2":
            return json.dumps(OPENAPI_V2).encode()
        if path == "/openapi/v3":
            return json.dumps({"paths": {f"apis/{GV}": {
                "serverRelativeURL": f"/openapi/v3/apis/{GV}?hash=ABC1"}}}).encode()
        if path == f"/openapi/v3/apis/{GV}":
            return json.dumps(OPENAPI_V3).encode()
        if path == f"/apis/{GV}":
            return json.dumps(RESOURCES).encode()
        # /apis/g/v/namespaces/<ns>/things[/<name>[/exec]]
        if len(parts) >= 7 and parts[4] == "namespaces" and parts[6] == "things":
            ns = parts[5]
            if len(parts) == 9 and parts[8] == "exec":
                return self.upgrade(request)
            if len(parts) == 8:
                return json.dumps(thing(parts[7], ns, request)).encode()
            if request.method == b"POST":
                body = request.content.read()
                request.setResponseCode(201)
                return json.dumps({"receivedBytes": len(body),
                                   "contentType": request.getHeader(b"content-type").decode(),
                                   "identity": identity(request)}).encode()
            if request.args.get(b"watch", [b""])[0] in (b"true", b"1"):
                return self.watch(request, ns)
            return json.dumps({"apiVersion": GV, "kind": "ThingList",
                               "metadata": {"resourceVersion": "1"},
                               "items": [thing("one", ns, request)]}).encode()
        request.setResponseCode(404)
        return json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                           "reason": "NotFound", "code": 404}).encode()

    def watch(self, request, ns: str) -> int:
        counter = [1]

        def event(kind: str) -> None:
            obj = thing("one", ns, request, counter[0])
            counter[0] += 1
            request.write(json.dumps({"type": kind, "object": obj}).encode() + b"\n")

        event("ADDED")
        loop = task.LoopingCall(event, "MODIFIED")
        loop.start(1.0, now=False)
        request.notifyFinish().addBoth(lambda _: loop.stop() if loop.running else None)
        return server.NOT_DONE_YET

    def upgrade(self, request) -> bytes:
        connection = b",".join(request.requestHeaders.getRawHeaders(b"connection", []))
        if b"upgrade" not in connection.lower():
            request.setResponseCode(400)
            return b'{"message":"Upgrade request required"}'
        proto = (request.requestHeaders.getRawHeaders(b"upgrade") or [b""])[0]
        who = json.dumps(identity(request)).encode()
        transport = request.channel.transport
        transport.write(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
                        b"Upgrade: " + proto + b"\r\nX-Remote-Seen: " + who + b"\r\n\r\n")
        request.channel._protocolUpgradeForWebsockets(Echo())
        return server.NOT_DONE_YET


def main(argv: list[str]) -> None:
    address, port, cert, key, client_ca = argv
    with open(cert, "rb") as f:
        cert_pem = f.read()
    with open(key, "rb") as f:
        key_pem = f.read()
    with open(client_ca, "rb") as f:
        ca = ssl.Certificate.loadPEM(f.read())
    pc = ssl.PrivateCertificate.loadPEM(key_pem + cert_pem)
    options = ssl.CertificateOptions(privateKey=pc.privateKey.original,
                                     certificate=pc.original, verify=True,
                                     caCerts=[ca.original], requireCertificate=True)
    site = server.Site(Backend())
    reactor.listenSSL(int(port), site, options, interface=address)
    print("listening", flush=True)
    reactor.run()


if __name__ == "__main__":
    main(sys.argv[1:])
