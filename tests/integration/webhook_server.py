# -*- test-case-name: tests.integration.test_webhooks -*-
"""
A small HTTPS admission webhook server for the integration tests, run as its own process:

    python -m tests.integration.webhook_server --cert C --key K --host H --port P --log F

It answers C{AdmissionReview}s (in the version it is sent) by path:

 - C{/ok}: allowed (not logged: the benchmark's fast webhook);
 - C{/allow}: allowed, with a warning and an audit annotation;
 - C{/deny}: refused, C{status: {code: 403, message: "no <kind> named <name> today"}};
 - C{/label-a}: JSONPatch adding label C{a} = the value of label C{b}, or C{none};
 - C{/label-b}: JSONPatch adding label C{b=set};
 - C{/bad-patch}: JSONPatch setting C{data} to a number (breaks a ConfigMap's schema);
 - C{/garbage}: 200 with a body that is not JSON;
 - C{/slow}: answers after 5 seconds.

Every review received is appended to the C{--log} file as one JSON line (path and request),
so tests can see what was sent.  It prints C{listening} once its port is open.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys


def _answer(path: str, review: dict) -> tuple[int, bytes]:
    request = review.get("request") or {}
    obj = request.get("object") or {}
    labels = (obj.get("metadata") or {}).get("labels")
    response: dict = {"uid": request.get("uid"), "allowed": True}
    patch = None
    if path == "/allow":
        response["warnings"] = ["the allow webhook saw this"]
        response["auditAnnotations"] = {"seen": "yes"}
    elif path == "/deny":
        response["allowed"] = False
        response["status"] = {"code": 403, "message":
                              f"no {request.get('kind', {}).get('kind')} named "
                              f"{request.get('name') or (obj.get('metadata') or {}).get('name')}"
                              " today"}
    elif path == "/label-a":
        value = (labels or {}).get("b", "none")
        patch = ([{"op": "add", "path": "/metadata/labels", "value": {"a": value}}]
                 if labels is None else
                 [{"op": "add", "path": "/metadata/labels/a", "value": value}])
    elif path == "/label-b":
        patch = ([{"op": "add", "path": "/metadata/labels", "value": {"b": "set"}}]
                 if labels is None else
                 [{"op": "add", "path": "/metadata/labels/b", "value": "set"}])
    elif path == "/bad-patch":
        patch = [{"op": "add", "path": "/data", "value": 42}]
    elif path == "/garbage":
        return 200, b"this is not json"
    if patch is not None:
        response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
        response["patchType"] = "JSONPatch"
    out = {"apiVersion": review.get("apiVersion"), "kind": "AdmissionReview",
           "response": response}
    return 200, json.dumps(out).encode()


def main(argv: list[str]) -> None:
    from twisted.internet import reactor, ssl, task
    from twisted.web import resource, server

    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", required=True)
    args = parser.parse_args(argv)

    class Hook(resource.Resource):
        isLeaf = True

        def render_POST(self, request):  # noqa: N802 (Twisted's name)
            review = json.loads(request.content.read())
            path = request.path.decode()
            request.setHeader(b"Content-Type", b"application/json")
            if path == "/ok":  # the benchmark's fast path: allowed, nothing logged
                return json.dumps({"apiVersion": review.get("apiVersion"),
                                   "kind": "AdmissionReview",
                                   "response": {"uid": review["request"]["uid"],
                                                "allowed": True}}).encode()
            with open(args.log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"path": path, "query": request.args and
                                    {k.decode(): [v.decode() for v in vs]
                                     for k, vs in request.args.items()},
                                    "review": review}) + "\n")
            code, body = _answer(path, review)
            request.setResponseCode(code)
            request.setHeader(b"Content-Type", b"application/json")
            if path == "/slow":
                def later():
                    if not request._disconnected:
                        request.write(body)
                        request.finish()
                task.deferLater(reactor, 5, later)
                return server.NOT_DONE_YET
            return body

    with open(args.cert, "rb") as f:
        cert = f.read()
    with open(args.key, "rb") as f:
        key = f.read()
    options = ssl.PrivateCertificate.loadPEM(key + cert).options()
    port = reactor.listenSSL(args.port, server.Site(Hook()), options, interface=args.host)
    print(f"listening {port.getHost().port}", flush=True)
    reactor.run()


if __name__ == "__main__":
    main(sys.argv[1:])
