"""
Tests for L{kubetwist.endpoints.negotiation} and the response writers of
L{kubetwist.endpoints.responses}: content negotiation with upstream's endpoint restrictions
(406 NotAcceptable), response bodies byte for byte as kube-apiserver v1.32 writes them (the
expected bytes below were recorded from it), errors in the negotiated form.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.endpoints import negotiation
from kubetwist.runtime import codec, errors
from kubetwist.runtime import protobuf as pb
from tests.support import KubeTestCase

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
PARTIAL = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
PROTOBUF = "application/vnd.kubernetes.protobuf"
ONLY = ("only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf")

#: kube-apiserver v1.32's answers to GET /api/v1/namespaces/nope.
UPSTREAM_404_JSON = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
    b'"namespaces \\"nope\\" not found","reason":"NotFound","details":{"name":"nope",'
    b'"kind":"namespaces"},"code":404}\n')
UPSTREAM_404_PRETTY = (
    b'{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {},\n  "status": "Failure",'
    b'\n  "message": "namespaces \\"nope\\" not found",\n  "reason": "NotFound",\n  "details": {'
    b'\n    "name": "nope",\n    "kind": "namespaces"\n  },\n  "code": 404\n}')
UPSTREAM_404_YAML = (
    b'apiVersion: v1\ncode: 404\ndetails:\n  kind: namespaces\n  name: nope\nkind: Status\n'
    b'message: namespaces "nope" not found\nmetadata: {}\nreason: NotFound\nstatus: Failure\n')
UPSTREAM_404_PROTOBUF = (
    b'k8s\x00\n\x0c\n\x02v1\x12\x06Status\x12U\n\x06\n\x00\x12\x00\x1a\x00\x12\x07Failure\x1a'
    b'\x1bnamespaces "nope" not found"\x08NotFound*\x18\n\x04nope\x12\x00\x1a\nnamespaces(\x00'
    b'2\x000\x94\x03\x1a\x00"\x00')
#: ... to a watch asking for YAML, which has no stream serializer.
UPSTREAM_WATCH_YAML_406 = (
    b"apiVersion: v1\ncode: 406\nkind: Status\nmessage: 'only the following media types are "
    b"accepted: application/json;stream=watch,\n  application/vnd.kubernetes.protobuf;"
    b"stream=watch'\nmetadata: {}\nreason: NotAcceptable\nstatus: Failure\n")
#: ... to a SelfSubjectAccessReview create asking only for a Table (the e2e spec "Servers with
#: support for Table transformation should return a 406 for a backend which does not
#: implement metadata"): WriteRawJSON's indented Status, no newline.
UPSTREAM_SSAR_TABLE_406 = (
    b'{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {},\n  "status": "Failure",'
    b'\n  "message": "' + ONLY.encode() + b'",\n  "reason": "NotAcceptable",\n  "code": 406\n}')

SSAR = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}}}


class FakeRequest:
    """What negotiation reads of a request: headers and the URI."""

    def __init__(self, accept: Optional[str] = None, uri: bytes = b"/api/v1/pods",
                 agent: str = "kubectl/v1.32.0") -> None:
        self.headers = {b"accept": accept.encode() if accept is not None else None,
                        b"user-agent": agent.encode()}
        self.uri = uri

    def getHeader(self, name: bytes) -> Optional[bytes]:
        return self.headers.get(name.lower())


def negotiate(accept: Optional[str], **kw: Any) -> negotiation.Output:
    kw.setdefault("restful", False)
    return negotiation.negotiate(FakeRequest(accept), **kw)


class NegotiateTests(SynchronousTestCase):
    """Upstream C{NegotiateMediaTypeOptions} with C{RequestScope.AllowsMediaTypeTransform}."""

    def assertNotAcceptable(self, accept: str, message: str = ONLY, **kw: Any) -> None:
        with self.assertRaises(errors.StatusError) as ctx:
            negotiate(accept, **kw)
        self.assertEqual((ctx.exception.code, ctx.exception.status["reason"],
                          ctx.exception.status["message"]), (406, "NotAcceptable", message))

    def test_plain(self):
        for accept, media in [(None, codec.JSON), ("", codec.JSON), ("*/*", codec.JSON),
                              ("application/*", codec.JSON), ("application/yaml", codec.YAML),
                              (PROTOBUF, PROTOBUF), (f"{PROTOBUF}, */*", PROTOBUF),
                              ("text/html, application/json", codec.JSON)]:
            out = negotiate(accept)
            self.assertEqual((out.kind, out.media, out.content_type),
                             ("object", media, media), accept)

    def test_route_check(self):
        """go-restful's route check on built-in resources: exact types or */* only, with its
        own message; list and watch routes also produce the stream types."""
        go_restful = ("406: Not Acceptable\n\nAvailable representations: application/json, "
                      "application/yaml, application/vnd.kubernetes.protobuf")
        for accept in ("application/*", "text/html", "*/json", "application/protobuf"):
            self.assertNotAcceptable(accept, go_restful, restful=True)
        self.assertNotAcceptable(
            "text/*", go_restful + ", application/json;stream=watch, "
            "application/vnd.kubernetes.protobuf;stream=watch", restful=True, collection=True)
        with self.assertRaises(errors.StatusError) as ctx:
            negotiate("text/html", restful=True)
        self.assertEqual(ctx.exception.status["details"], {})
        for accept in (None, "*/*", "text/html, application/yaml", TABLE,
                       "application/json;q=0", f"{PROTOBUF};stream=watch"):
            negotiate(accept, restful=True)

    def test_stream_parameter(self):
        """stream=watch needs a stream serializer (JSON, protobuf); other streams none."""
        self.assertEqual(negotiate("application/json;stream=watch").media, codec.JSON)
        self.assertNotAcceptable("application/yaml;stream=watch")
        self.assertNotAcceptable("application/json;stream=foo")

    def test_pretty_parameter(self):
        self.assertTrue(negotiation.is_pretty(FakeRequest("application/json;pretty=1")))
        self.assertFalse(negotiation.is_pretty(FakeRequest("application/json")))

    def test_q_zero_still_matches(self):
        """goautoneg keeps q=0 ranges, and the negotiation does not look at q."""
        self.assertEqual(negotiate("application/json;q=0").media, codec.JSON)
        self.assertEqual(negotiate("application/json;q=0, application/yaml").media, codec.YAML)

    def test_specific_before_wildcard(self):
        """goautoneg orders specific types before wildcards, whatever the client's order."""
        self.assertEqual(negotiate("*/*, application/yaml").media, codec.YAML)

    def test_transforms(self):
        """Table and PartialObjectMetadata[List] of meta.k8s.io v1/v1beta1; the
        Content-Type is the serializer's own type (upstream writes no as= parameters)."""
        out = negotiate(TABLE)
        self.assertEqual((out.kind, out.media, out.content_type, out.version),
                         ("table", codec.JSON, codec.JSON, "v1"))
        out = negotiate("application/yaml;as=Table;v=v1beta1;g=meta.k8s.io")
        self.assertEqual((out.kind, out.media, out.version), ("table", codec.YAML, "v1beta1"))
        self.assertEqual(negotiate(PARTIAL).kind, "partial")
        self.assertEqual(negotiate(PARTIAL_LIST).kind, "partiallist")
        out = negotiate(f"{PROTOBUF};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
        self.assertEqual((out.kind, out.media), ("partiallist", PROTOBUF))

    def test_transform_refused(self):
        self.assertNotAcceptable(f"{PROTOBUF};as=Table;v=v1;g=meta.k8s.io")
        self.assertNotAcceptable("application/json;as=Table;v=v2;g=meta.k8s.io")
        self.assertNotAcceptable("application/json;as=Table;v=v1;g=example.com")
        self.assertNotAcceptable("application/json;g=meta.k8s.io;v=v1")
        self.assertNotAcceptable("application/json;as=Scale;g=meta.k8s.io;v=v1")
        self.assertNotAcceptable("text/html")

    def test_no_table_convertor(self):
        """Without a TableConvertor (the reviews) Table is refused, PartialObjectMetadata
        is not; a fallback in the header is used."""
        self.assertNotAcceptable(TABLE, table=False)
        self.assertEqual(negotiate(PARTIAL, table=False).kind, "partial")
        self.assertEqual(negotiate(f"{TABLE}, application/json", table=False).kind, "object")

    def test_no_transform(self):
        self.assertNotAcceptable(PARTIAL, allow_transform=False)

    def test_custom_resources(self):
        """Custom resources: JSON and YAML; protobuf only for the meta.k8s.io transforms."""
        std = (codec.JSON, codec.YAML)
        self.assertNotAcceptable(PROTOBUF, standard=std)
        self.assertEqual(negotiate(f"{PROTOBUF}, */*", standard=std).media, codec.JSON)
        out = negotiate(f"{PROTOBUF};as=PartialObjectMetadata;g=meta.k8s.io;v=v1", standard=std)
        self.assertEqual((out.kind, out.media), ("partial", PROTOBUF))

    def test_error_media(self):
        """Errors negotiate without transforms; nothing acceptable gives None (raw JSON)."""
        self.assertEqual(negotiation.negotiate_error(FakeRequest("application/yaml")).media,
                         codec.YAML)
        self.assertIsNone(negotiation.negotiate_error(FakeRequest(TABLE)))
        self.assertEqual(negotiation.negotiate_error(FakeRequest(f"{TABLE},*/*")).media,
                         codec.JSON)

    def test_pretty(self):
        """Upstream isPrettyPrint: ?pretty=<bool>, else curl/Wget/browser user agents."""
        cases = [(b"/api?pretty=1", "kubectl", True), (b"/api?pretty=true", "kubectl", True),
                 (b"/api?pretty=0", "curl/8.5.0", False), (b"/api?pretty=", "curl/8", True),
                 (b"/api", "curl/8.5.0", True), (b"/api", "Wget/1.21", True),
                 (b"/api", "Mozilla/5.0 (X11)", True), (b"/api", "kubectl/v1.32.0", False)]
        for uri, agent, expected in cases:
            self.assertEqual(negotiation.is_pretty(FakeRequest(None, uri, agent)), expected,
                             (uri, agent))

    def test_check_transform(self):
        out = negotiate(PARTIAL)
        with self.assertRaises(errors.StatusError) as ctx:
            negotiation.check_transform(out, {"kind": "NamespaceList"}, True, "", "NamespaceList")
        self.assertEqual(ctx.exception.status["message"],
                         "you requested PartialObjectMetadata, but the requested object is a "
                         "list (*core.NamespaceList)")
        with self.assertRaises(errors.StatusError) as ctx:
            negotiation.check_transform(negotiate(PARTIAL_LIST), {"kind": "Deployment"}, False,
                                        "apps", "Deployment")
        self.assertEqual(ctx.exception.status["message"],
                         "you requested PartialObjectMetadataList, but the requested object is "
                         "not a list (*apps.Deployment)")
        # a Status passes through
        negotiation.check_transform(out, {"kind": "Status"}, True, "", "NamespaceList")


class EncodingTests(SynchronousTestCase):
    """JSON as Go's encoder writes it."""

    def test_newline_and_escapes(self):
        self.assertEqual(codec.encode({"a": "<b>&\u2028é"}, codec.JSON),
                         '{"a":"\\u003cb\\u003e\\u0026\\u2028é"}\n'.encode())

    def test_pretty(self):
        self.assertEqual(codec.encode({"a": [], "b": {}, "c": [1]}, codec.JSON, pretty=True),
                         b'{\n  "a": [],\n  "b": {},\n  "c": [\n    1\n  ]\n}')

    def test_go_order(self):
        """Typed objects in struct order, TypeMeta first, map keys sorted."""
        pod = {"apiVersion": "v1", "status": {}, "spec": {"dnsPolicy": "x", "containers": []},
               "metadata": {"labels": {"z": "1", "a": "2"}, "name": "p",
                            "managedFields": [{"apiVersion": "v1", "manager": "m"}]},
               "kind": "Pod"}
        out = codec.go_order(pod)
        self.assertEqual(list(out), ["kind", "apiVersion", "metadata", "spec", "status"])
        # metav1.Time is a struct, which encoding/json writes even under omitempty: null
        self.assertEqual(list(out["metadata"]),
                         ["name", "creationTimestamp", "labels", "managedFields"])
        self.assertIsNone(out["metadata"]["creationTimestamp"])
        self.assertEqual(list(out["metadata"]["labels"]), ["a", "z"])
        self.assertEqual(list(out["metadata"]["managedFields"][0]), ["manager", "apiVersion"])
        self.assertEqual(list(out["spec"]), ["containers", "dnsPolicy"])
        # fields without omitempty are written at Go's zero value, structs filled likewise
        crd = codec.go_order({"apiVersion": "apiextensions.k8s.io/v1",
                              "kind": "CustomResourceDefinition",
                              "status": {"storedVersions": ["v1"]}})
        self.assertEqual(crd["status"], {"conditions": None,
                                         "acceptedNames": {"plural": "", "kind": ""},
                                         "storedVersions": ["v1"]})
        self.assertEqual(list(crd["status"]), ["conditions", "acceptedNames", "storedVersions"])
        deployment = codec.go_order({"apiVersion": "apps/v1", "kind": "Deployment",
                                     "spec": {"template": {"spec": {"containers": [{}]}}}})
        self.assertEqual(deployment["spec"]["selector"], None)
        self.assertEqual(deployment["spec"]["strategy"], {})
        self.assertEqual(deployment["spec"]["template"]["metadata"],
                         {"creationTimestamp": None})
        self.assertEqual(deployment["spec"]["template"]["spec"]["containers"][0],
                         {"name": "", "resources": {}})
        self.assertEqual(deployment["status"], {})
        # kinds without tables are left alone
        cr = {"spec": 1, "apiVersion": "example.com/v1", "kind": "Widget"}
        self.assertEqual(list(codec.go_order(cr)), ["spec", "apiVersion", "kind"])


class ResponseTests(KubeTestCase):
    """Whole responses against what kube-apiserver v1.32 answered."""

    def raw(self, method: str, path: str, body: Any = None,
            headers: Optional[dict] = None, **kw: Any) -> tuple[int, bytes, Any]:
        headers = {"User-Agent": "kubectl/v1.32.0", **(headers or {})}
        code, _, response = self.request(method, path, body, headers, **kw)
        return code, self.successResultOf(response.content()), response

    def content_type(self, response: Any) -> str:
        return response.headers.getRawHeaders("content-type")[0]

    def test_status_404_forms(self):
        path = "/api/v1/namespaces/nope"
        for accept, expected, ctype in [
                (None, UPSTREAM_404_JSON, codec.JSON),
                ("application/yaml", UPSTREAM_404_YAML, codec.YAML),
                (PROTOBUF, UPSTREAM_404_PROTOBUF, PROTOBUF),
                (f"{PROTOBUF}, */*", UPSTREAM_404_PROTOBUF, PROTOBUF),
                (TABLE, UPSTREAM_404_PRETTY, codec.JSON),  # no serializer: WriteRawJSON
                (PARTIAL_LIST, UPSTREAM_404_PRETTY, codec.JSON)]:
            code, body, response = self.raw("GET", path, headers={"Accept": accept})
            self.assertEqual((code, body, self.content_type(response)), (404, expected, ctype),
                             accept)

    def test_pretty(self):
        code, body, _ = self.raw("GET", "/api/v1/namespaces/nope?pretty=1")
        self.assertEqual((code, body), (404, UPSTREAM_404_PRETTY))
        code, body, _ = self.raw("GET", "/api/v1/namespaces/nope",
                                 headers={"User-Agent": "curl/8.5.0"})
        self.assertEqual(body, UPSTREAM_404_PRETTY)

    def test_bodies_end_in_newline(self):
        """Objects, lists, tables, discovery: one JSON line each."""
        for path, accept in [("/api/v1/namespaces/default", None), ("/api/v1/namespaces", None),
                             ("/api/v1/namespaces", TABLE), ("/api", None), ("/apis", None),
                             ("/api/v1", None), ("/apis/apps", None), ("/apis/apps/v1", None),
                             ("/apis", "application/json;g=apidiscovery.k8s.io;v=v2;"
                                       "as=APIGroupDiscoveryList")]:
            code, body, _ = self.raw("GET", path, headers={"Accept": accept})
            self.assertEqual(code, 200, path)
            self.assertTrue(body.endswith(b"}\n"), (path, body[-20:]))
            self.assertEqual(body.count(b"\n"), 1, path)

    def test_version_is_raw_json(self):
        """/version is WriteRawJSON's: indented, no newline."""
        code, body, _ = self.raw("GET", "/version")
        self.assertEqual(code, 200)
        self.assertTrue(body.startswith(b'{\n  "major": "1",\n  "minor": "32",\n'))
        self.assertTrue(body.endswith(b'"\n}'))

    def test_table_content_type_and_version(self):
        code, body, response = self.raw("GET", "/api/v1/namespaces/default",
                                        headers={"Accept": TABLE})
        table = json.loads(body)
        self.assertEqual((code, table["kind"], self.content_type(response)),
                         (200, "Table", codec.JSON))
        self.assertTrue(table["metadata"]["resourceVersion"])

    def test_ssar_table_406(self):
        """The conformance spec: a review has no TableConvertor."""
        code, body, response = self.raw(
            "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", SSAR,
            headers={"Accept": TABLE})
        self.assertEqual((code, body, self.content_type(response)),
                         (406, UPSTREAM_SSAR_TABLE_406, codec.JSON))
        # PartialObjectMetadata is possible, PartialObjectMetadataList is not
        code, body, _ = self.raw("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                                 SSAR, headers={"Accept": PARTIAL})
        self.assertEqual((code, json.loads(body)["kind"]), (201, "PartialObjectMetadata"))
        code, body, _ = self.raw("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                                 SSAR, headers={"Accept": PARTIAL_LIST})
        self.assertEqual((code, json.loads(body)["message"]), (
            406, "you requested PartialObjectMetadataList, but the requested object is not a "
                 "list (*authorization.SelfSubjectAccessReview)"))

    def test_list_as_partial_object_metadata_406(self):
        code, body, _ = self.raw("GET", "/api/v1/namespaces", headers={"Accept": PARTIAL})
        self.assertEqual((code, json.loads(body)["message"]), (
            406, "you requested PartialObjectMetadata, but the requested object is a list "
                 "(*core.NamespaceList)"))
        code, body, _ = self.raw("GET", "/api/v1/namespaces", headers={"Accept": PARTIAL_LIST})
        self.assertEqual((code, json.loads(body)["kind"]), (200, "PartialObjectMetadataList"))

    def test_watch_yaml_406(self):
        code, body, response = self.raw("GET", "/api/v1/namespaces?watch=1",
                                        headers={"Accept": "application/yaml"})
        self.assertEqual((code, body, self.content_type(response)),
                         (406, UPSTREAM_WATCH_YAML_406, codec.YAML))

    def test_watch_protobuf(self):
        """A protobuf watch: length-prefixed WatchEvent frames."""
        d = self.treq.request(
            "GET", "https://kubetwist.test/api/v1/namespaces?watch=1&timeoutSeconds=1"
                   "&fieldSelector=metadata.name%3Ddefault",
            headers={"Authorization": ["Bearer admin-token"], "Accept": [f"{PROTOBUF}, */*"]})
        self.treq.flush()
        self.clock.advance(2)
        self.treq.flush()
        response = self.successResultOf(d)
        self.assertEqual(response.headers.getRawHeaders("content-type"),
                         [f"{PROTOBUF};stream=watch"])
        body = self.successResultOf(response.content())
        length = int.from_bytes(body[:4], "big")
        fields = list(pb.iter_fields(body[4:4 + length]))
        self.assertEqual(fields[0], (1, 2, b"ADDED"))
        raw = dict((n, v) for n, _, v in pb.iter_fields(fields[1][2]))[1]
        self.assertEqual(pb.decode(raw)["metadata"]["name"], "default")

    def test_html_escaped_and_go_order(self):
        """Go escapes <, >, & and orders fields as its structs (map keys sorted)."""
        cm = {"data": {"b": "<x>&", "a": "1"}, "metadata": {"name": "c", "labels": {"z": "1",
              "a": "2"}}, "kind": "ConfigMap", "apiVersion": "v1"}
        code, body, _ = self.raw("POST", "/api/v1/namespaces/default/configmaps?dryRun=All", cm)
        self.assertEqual(code, 201)
        self.assertIn(b'"data":{"a":"1","b":"\\u003cx\\u003e\\u0026"}}\n', body)
        self.assertTrue(body.startswith(b'{"kind":"ConfigMap","apiVersion":"v1","metadata":'
                                        b'{"name":"c","namespace":"default",'))
        self.assertIn(b'"labels":{"a":"2","z":"1"}', body)


class NotFoundTests(KubeTestCase):
    """Unknown paths: go-restful's JSON 404 under a built-in group's web service, Go's
    C{http.NotFound} text elsewhere (kube-apiserver v1.32's answers)."""

    JSON_404 = (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
                b'"the server could not find the requested resource","reason":"NotFound",'
                b'"details":{},"code":404}\n')
    TEXT_404 = b"404 page not found\n"

    def test_paths(self):
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "widgets.example.com"},
               "spec": {"group": "example.com", "scope": "Namespaced",
                        "names": {"plural": "widgets", "kind": "Widget"},
                        "versions": [{"name": "v1", "served": True, "storage": True,
                                      "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
        code, _, _ = self.request("POST", "/apis/apiextensions.k8s.io/v1/"
                                          "customresourcedefinitions", crd)
        self.assertEqual(code, 201)
        for _ in range(5):
            self.clock.advance(0)
        for path, body, ctype in [
                ("/nope", self.TEXT_404, "text/plain; charset=utf-8"),
                ("/apis/nope", self.TEXT_404, "text/plain; charset=utf-8"),
                ("/apis/nope/v1/x", self.TEXT_404, "text/plain; charset=utf-8"),
                ("/apis/example.com/nope", self.TEXT_404, "text/plain; charset=utf-8"),
                ("/apis/example.com/v1/nopes", self.TEXT_404, "text/plain; charset=utf-8"),
                ("/api/nope", self.JSON_404, "application/json"),
                ("/api/v2", self.JSON_404, "application/json"),
                ("/api/v1/nopes", self.JSON_404, "application/json"),
                ("/apis/apps/nope", self.JSON_404, "application/json"),
                ("/apis/apps/v2/deployments", self.JSON_404, "application/json"),
                ("/apis/apps/v1/namespaces/default/nopes", self.JSON_404, "application/json"),
                ("/apis/apiextensions.k8s.io/v1/nopes", self.JSON_404, "application/json"),
                ("/apis/apiregistration.k8s.io/v1/nopes", self.JSON_404, "application/json")]:
            code, _, response = self.request("GET", path)
            got = self.successResultOf(response.content())
            self.assertEqual((code, got, response.headers.getRawHeaders("content-type")),
                             (404, body, [ctype]), path)


class DiscoveryNegotiationTests(KubeTestCase):
    """Discovery documents negotiate like upstream's: protobuf, YAML, the aggregated form
    in any serializer, go-restful's 406 on /api and the group-version documents."""

    def get(self, path: str, accept: str) -> tuple[int, bytes, str]:
        code, _, response = self.request("GET", path, headers={"Accept": accept})
        return (code, self.successResultOf(response.content()),
                response.headers.getRawHeaders("content-type")[0])

    def test_protobuf_documents(self):
        for path, kind in [("/apis", "APIGroupList"), ("/apis/apps", "APIGroup"),
                           ("/apis/apps/v1", "APIResourceList"), ("/api", "APIVersions"),
                           ("/api/v1", "APIResourceList")]:
            code, body, ctype = self.get(path, f"{PROTOBUF}, */*")
            self.assertEqual((code, ctype), (200, PROTOBUF), path)
            api_version, got_kind, raw, _, _ = pb.split_envelope(body)
            self.assertEqual(got_kind, kind, path)
            # /api and /api/v1 carry no apiVersion, as upstream writes them
            self.assertEqual(api_version, "" if path.startswith("/api/") or path == "/api"
                             else "v1", path)

    def test_aggregated_protobuf(self):
        accept = f"{PROTOBUF};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        code, body, ctype = self.get("/apis", accept + ",application/json")
        self.assertEqual((code, ctype), (200, accept))
        doc = pb.decode(body)
        self.assertEqual(doc["kind"], "APIGroupDiscoveryList")
        self.assertIn("apps", [g["metadata"].get("name") for g in doc["items"]])

    def test_not_acceptable(self):
        """/api and group-versions are go-restful routes; /apis and /apis/<group> are not."""
        go_restful = ("406: Not Acceptable\n\nAvailable representations: application/json, "
                      "application/yaml, application/vnd.kubernetes.protobuf")
        for path, message in [("/api", go_restful), ("/api/v1", go_restful),
                              ("/apis/apps/v1", go_restful), ("/apis", ONLY),
                              ("/apis/apps", ONLY)]:
            code, body, _ = self.get(path, "text/html")
            self.assertEqual((code, json.loads(body)["message"]), (406, message), path)
        code, body, _ = self.get("/apis", "application/*")
        self.assertEqual((code, json.loads(body)["kind"]), (200, "APIGroupList"))
