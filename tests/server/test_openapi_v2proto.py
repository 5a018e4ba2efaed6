# -*- test-case-name: tests.server.test_openapi_v2proto -*-
"""
Tests for L{kubetwist.server.openapi_v2proto}: the gnostic C{openapi_v2.Document} encoding of
the Swagger 2.0 document and the C{/openapi/v2} handler's negotiation and caching (upstream
C{k8s.io/kube-openapi/pkg/handler}).
"""

from __future__ import annotations

import hashlib

from twisted.trial.unittest import SynchronousTestCase
from twisted.web.test.requesthelper import DummyRequest

from kubetwist.runtime.protobuf import iter_fields
from kubetwist.server import openapi_v2proto as v2proto
from tests.apiextensions.test_customresources import CRDTestCase
from tests.support import KubeTestCase

#: what kubectl and client-go send (C{discovery.openAPIV2mimePb}).
PB_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def _fields(data: bytes) -> list[tuple[int, object]]:
    return [(number, value) for number, _, value in iter_fields(data)]


def _named(data: bytes) -> tuple[str, bytes]:
    """A NamedSchema / NamedAny: (name, value bytes)."""
    parts = dict(_fields(data))
    return parts[1].decode(), parts.get(2, b"")


def _definitions(document: bytes) -> dict[str, bytes]:
    """The Document's definitions (field 9) as name -> Schema bytes."""
    (defs,) = [v for n, v in _fields(document) if n == 9]
    return dict(_named(v) for n, v in _fields(defs) if n == 1)


def _extensions(schema: bytes) -> dict[str, str]:
    """A Schema's vendor extensions (field 31): name -> Any.yaml."""
    out = {}
    for number, value in _fields(schema):
        if number == 31:
            name, any_bytes = _named(value)
            out[name] = dict(_fields(any_bytes))[2].decode()
    return out


class AnyYAMLTests(SynchronousTestCase):
    """The YAML text kept in C{Any.yaml}, as gnostic's C{compiler.Marshal} writes it."""

    def test_group_version_kind(self) -> None:
        """A GVK list is a block sequence of mappings with sorted keys; an empty group is
        double-quoted (go-yaml v3 quotes what would read back as null)."""
        self.assertEqual(
            v2proto.any_yaml([{"group": "", "version": "v1", "kind": "Pod"}]),
            '- group: ""\n  kind: Pod\n  version: v1\n')
        self.assertEqual(
            v2proto.any_yaml([{"group": "apps", "version": "v1", "kind": "Deployment"}]),
            "- group: apps\n  kind: Deployment\n  version: v1\n")

    def test_scalars(self) -> None:
        """Root scalars end with one newline and no document end marker; strings that read
        back as another type are double-quoted."""
        self.assertEqual([v2proto.any_yaml(v) for v in ("merge", "true", "1", 3, True, None)],
                         ["merge\n", '"true"\n', '"1"\n', "3\n", "true\n", "null\n"])

    def test_list_of_strings(self) -> None:
        """C{x-kubernetes-list-map-keys} is a block sequence."""
        self.assertEqual(v2proto.any_yaml(["containerPort", "protocol"]),
                         "- containerPort\n- protocol\n")


class EncodeTests(SynchronousTestCase):
    """Exact bytes of gnostic's C{openapi_v2} messages."""

    def test_scalar_schema(self) -> None:
        """C{format} is field 2, C{type} field 22 (a TypeItem with C{value} 1)."""
        self.assertEqual(v2proto.encode_schema({"type": "integer", "format": "int32"}),
                         b"\x12\x05int32" + b"\xb2\x01\x09\x0a\x07integer")

    def test_reference_with_description(self) -> None:
        """C{$ref} is field 1, C{description} field 4."""
        self.assertEqual(v2proto.encode_schema({"$ref": "#/definitions/a.B",
                                                "description": "d"}),
                         b"\x0a\x11#/definitions/a.B" + b"\x22\x01d")

    def test_object_schema(self) -> None:
        """C{required} (19), C{additionalProperties: false} (21, the oneof boolean written
        even though false), C{properties} (25, NamedSchema entries sorted by name) and
        vendor extensions (31, NamedAny with C{Any.yaml})."""
        schema = {
            "type": "object",
            "required": ["b"],
            "additionalProperties": False,
            "properties": {"b": {"type": "string"}, "a": {"type": "boolean"}},
            "x-kubernetes-map-type": "atomic",
        }
        prop_a = b"\x0a\x01a" + b"\x12\x0c" + b"\xb2\x01\x09\x0a\x07boolean"
        prop_b = b"\x0a\x01b" + b"\x12\x0b" + b"\xb2\x01\x08\x0a\x06string"
        ext = b"\x0a\x15x-kubernetes-map-type" + b"\x12\x09" + b"\x12\x07atomic\n"
        self.assertEqual(
            v2proto.encode_schema(schema),
            b"\x9a\x01\x01b"
            + b"\xaa\x01\x02\x10\x00"
            + b"\xb2\x01\x08\x0a\x06object"
            + b"\xca\x01\x25" + b"\x0a\x11" + prop_a + b"\x0a\x10" + prop_b
            + b"\xfa\x01\x22" + ext)

    def test_items_additional_properties_schema_default_enum(self) -> None:
        """C{items} is an ItemsItem (23) holding one Schema; a schema-valued
        C{additionalProperties} is its oneof C{schema} (1); C{default} (5) and each C{enum}
        value (20) are Any messages."""
        string = b"\xb2\x01\x08\x0a\x06string"
        self.assertEqual(
            v2proto.encode_schema({"items": {"type": "string"},
                                   "additionalProperties": {"type": "string"}}),
            b"\xaa\x01\x0d\x0a\x0b" + string + b"\xba\x01\x0d\x0a\x0b" + string)
        self.assertEqual(v2proto.encode_schema({"default": 1, "enum": ["A", "B"]}),
                         b"\x2a\x04\x12\x021\n" + b"\xa2\x01\x04\x12\x02A\n"
                         + b"\xa2\x01\x04\x12\x02B\n")

    def test_document(self) -> None:
        """Document: C{swagger} 1, C{info} 2 (title 1, version 2), C{paths} 8 (present even
        when empty), C{definitions} 9 (NamedSchema entries)."""
        doc = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.32.0"},
               "paths": {}, "definitions": {"x.Y": {"type": "object"}}}
        self.assertEqual(
            v2proto.encode_document(doc),
            b"\x0a\x032.0"
            + b"\x12\x15\x0a\x0aKubernetes\x12\x07v1.32.0"
            + b"\x42\x00"
            + b"\x4a\x14\x0a\x12\x0a\x03x.Y\x12\x0b\xb2\x01\x08\x0a\x06object")


class NegotiateTests(SynchronousTestCase):
    """C{goautoneg} over C{Accept}, as upstream's handler matches it."""

    def test_choices(self) -> None:
        """No header and C{*/*} give JSON; both protobuf spellings give the protobuf content
        type; q values order the clauses; nothing matching gives C{None} (406)."""
        cases = {
            None: "application/json",
            "*/*": "application/json",
            "application/json": "application/json",
            PB_ACCEPT: v2proto.PROTOBUF_V2,
            v2proto.PROTOBUF_V2: v2proto.PROTOBUF_V2,
            f"application/json;q=0.5, {PB_ACCEPT}": v2proto.PROTOBUF_V2,
            f"{PB_ACCEPT}, application/json": v2proto.PROTOBUF_V2,
            "application/*": "application/json",
            "text/html": None,
        }
        self.assertEqual({k: v2proto.negotiate(k) for k in cases}, cases)


class ServeContentTests(SynchronousTestCase):
    """L{v2proto.serve_content}: Go's C{http.ServeContent} dates."""

    def request(self, **headers: str) -> DummyRequest:
        request = DummyRequest([b""])
        for name, value in headers.items():
            request.requestHeaders.setRawHeaders(name.replace("_", "-"), [value])
        v2proto.serve_content(request, b"{}", "application/json", "E", 1700000000.5)
        return request

    def test_last_modified(self) -> None:
        """A 200 carries C{Last-Modified} (HTTP date), C{Accept-Ranges} and the body."""
        request = self.request()
        self.assertEqual((request.responseCode, b"".join(request.written)), (200, b"{}"))
        self.assertEqual(request.responseHeaders.getRawHeaders("last-modified"),
                         ["Tue, 14 Nov 2023 22:13:20 GMT"])
        self.assertEqual(request.responseHeaders.getRawHeaders("accept-ranges"), ["bytes"])

    def test_if_modified_since(self) -> None:
        """Without C{If-None-Match}, C{If-Modified-Since} at or after the build time (whole
        seconds) answers 304; before it, 200."""
        self.assertEqual(self.request(if_modified_since="Tue, 14 Nov 2023 22:13:20 GMT")
                         .responseCode, 304)
        self.assertEqual(self.request(if_modified_since="Tue, 14 Nov 2023 22:13:19 GMT")
                         .responseCode, 200)

    def test_if_none_match_wins(self) -> None:
        """A non-matching C{If-None-Match} answers 200 even with a later
        C{If-Modified-Since}; C{*} and a weak match answer 304 without C{Last-Modified}."""
        self.assertEqual(self.request(if_none_match='"X"',
                                      if_modified_since="Tue, 14 Nov 2023 23:00:00 GMT")
                         .responseCode, 200)
        for value in ("*", 'W/"E"', '"X", "E"'):
            request = self.request(if_none_match=value)
            self.assertEqual((request.responseCode, request.written), (304, []))
            self.assertIsNone(request.responseHeaders.getRawHeaders("last-modified"))


class ServedDocumentTests(KubeTestCase):
    """C{GET /openapi/v2} in either form, over the whole chain."""

    def test_protobuf_document(self) -> None:
        """The protobuf form holds every definition of the JSON form, with C{$ref}s and
        the C{x-kubernetes-group-version-kind} extension's YAML."""
        code, doc, _ = self.request("GET", "/openapi/v2")
        self.assertEqual(code, 200)
        code, _, response = self.request("GET", "/openapi/v2", headers={"Accept": PB_ACCEPT})
        self.assertEqual(code, 200)
        self.assertEqual(response.headers.getRawHeaders("content-type"),
                         [v2proto.PROTOBUF_V2])
        data = self.successResultOf(response.content())
        fields = _fields(data)
        self.assertEqual(fields[0], (1, b"2.0"))
        definitions = _definitions(data)
        self.assertEqual(set(definitions), set(doc["definitions"]))
        deployment = definitions["io.k8s.api.apps.v1.Deployment"]
        self.assertEqual(_extensions(deployment)["x-kubernetes-group-version-kind"],
                         "- group: apps\n  kind: Deployment\n  version: v1\n")
        (props,) = [v for n, v in _fields(deployment) if n == 25]
        spec = dict(_named(v) for _, v in _fields(props))["spec"]
        self.assertEqual(dict(_fields(spec))[1],
                         b"#/definitions/io.k8s.api.apps.v1.DeploymentSpec")
        self.assertEqual(data, v2proto.encode_document(doc))

    def test_etag_and_not_modified(self) -> None:
        """Both forms carry the quoted upper-case SHA-512 of the JSON form as C{ETag} and
        C{Vary: Accept}; C{If-None-Match} with that ETag answers 304 without a body or
        C{Content-Type}."""
        code, _, response = self.request("GET", "/openapi/v2")
        self.assertEqual(code, 200)
        etag = response.headers.getRawHeaders("etag")[0]
        self.assertEqual(response.headers.getRawHeaders("vary"), ["Accept"])
        self.assertEqual(response.headers.getRawHeaders("cache-control"),
                         ["no-cache, private"])
        _, _, pb = self.request("GET", "/openapi/v2", headers={"Accept": PB_ACCEPT})
        self.assertEqual(pb.headers.getRawHeaders("etag"), [etag])
        self.assertEqual(len(etag), 130)
        self.assertEqual(etag, etag.upper())
        code, body, response = self.request(
            "GET", "/openapi/v2", headers={"Accept": PB_ACCEPT, "If-None-Match": etag})
        self.assertEqual(code, 304)
        self.assertFalse(body)
        self.assertIsNone(response.headers.getRawHeaders("content-type"))
        code, _, _ = self.request("GET", "/openapi/v2", headers={"If-None-Match": '"other"'})
        self.assertEqual(code, 200)

    def test_etag_is_sha512_of_json(self) -> None:
        """The ETag is the SHA-512 of the JSON body, as upstream's C{computeETag}."""
        code, _, response = self.request("GET", "/openapi/v2")
        self.assertEqual(code, 200)
        body = self.successResultOf(response.content())
        self.assertEqual(response.headers.getRawHeaders("etag"),
                         [f'"{hashlib.sha512(body).hexdigest().upper()}"'])

    def test_not_acceptable(self) -> None:
        """An C{Accept} naming neither form answers 406 with no body."""
        code, body, response = self.request("GET", "/openapi/v2",
                                            headers={"Accept": "text/html"})
        self.assertEqual(code, 406)
        self.assertFalse(body)
        self.assertEqual(response.headers.getRawHeaders("vary"), ["Accept"])


class CustomResourceDocumentTests(CRDTestCase):
    """The cached v2 document follows CRD changes."""

    def test_crd_changes_document(self) -> None:
        """Installing a CRD after the document was served gives a new ETag, and the protobuf
        form then holds the custom kind's definition with its GVK extension."""
        _, _, before = self.request("GET", "/openapi/v2", headers={"Accept": PB_ACCEPT})
        old = before.headers.getRawHeaders("etag")
        self.install()
        code, _, after = self.request("GET", "/openapi/v2",
                                      headers={"Accept": PB_ACCEPT, "If-None-Match": old[0]})
        self.assertEqual(code, 200)
        self.assertNotEqual(after.headers.getRawHeaders("etag"), old)
        definitions = _definitions(self.successResultOf(after.content()))
        self.assertEqual(_extensions(definitions["com.example.v1.Widget"])
                         ["x-kubernetes-group-version-kind"],
                         "- group: example.com\n  kind: Widget\n  version: v1\n")
