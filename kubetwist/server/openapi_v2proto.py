# -*- test-case-name: tests.server.test_openapi_v2proto -*-
"""
The protobuf form of C{/openapi/v2} and the v2 handler's negotiation and caching: upstream
C{k8s.io/kube-openapi/pkg/handler} (C{ToProtoBinary}: the Swagger 2.0 JSON parsed by
C{github.com/google/gnostic-models/openapiv2.ParseDocument} into C{openapi_v2.Document} and
marshalled with C{proto.Marshal}; C{RegisterOpenAPIVersionedService}: C{goautoneg} over
C{Accept}, C{Vary: Accept}, a quoted SHA-512 C{ETag} of the JSON form shared by both forms,
and C{http.ServeContent}'s C{Last-Modified} and 304 answers).

Field numbers are those of gnostic's C{openapiv2/OpenAPIv2.proto}. Values gnostic keeps as
C{Any} (C{default}, C{enum}, C{example} and every C{x-} vendor extension) carry the YAML text
of the JSON value in C{Any.yaml} (field 2), as gnostic's C{compiler.Marshal} writes it.
Keys gnostic does not know (v3 leftovers such as C{nullable}) are left out.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from email.utils import formatdate, parsedate_to_datetime
from typing import Any

import yaml

from kubetwist.runtime.protobuf import _delimited, _key, _varint

#: the C{Content-Type} of the protobuf form (upstream C{subTypeProtobuf}).
PROTOBUF_V2 = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
#: the subtype C{kubectl} and client-go ask with (upstream C{subTypeProtobufDeprecated}).
PROTOBUF_V2_DEPRECATED = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
JSON = "application/json"

# (type, subtype, answered content type), in upstream's order of preference
_ACCEPTED = (
    ("application", "json", JSON),
    ("application", PROTOBUF_V2_DEPRECATED.split("/", 1)[1], PROTOBUF_V2),
    ("application", PROTOBUF_V2.split("/", 1)[1], PROTOBUF_V2),
)

_STR_TAG = "tag:yaml.org,2002:str"


# --- Any.yaml ---------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper with go-yaml v3's string quoting (see L{_represent_str})."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    # go-yaml v3 double-quotes a string that would read back as another type (C{""},
    # C{"true"}, C{"1"}) and writes a multi-line one as a literal block; otherwise the emitter
    # picks plain or single-quoted style, as PyYAML's does
    style = None
    if "\n" in data:
        style = "|"
    elif dumper.resolve(yaml.ScalarNode, data, (True, False)) != _STR_TAG:
        style = '"'
    return dumper.represent_scalar(_STR_TAG, data, style=style)


_Dumper.add_representer(str, _represent_str)


def any_yaml(value: Any) -> str:
    """
    The YAML text gnostic stores in C{Any.yaml} for a JSON value: block style, mapping keys
    sorted (Go's JSON encoding of maps sorts them), one trailing newline, no document markers.

    @param value: a JSON-shaped value.
    @return: e.g. for a GVK list, a block sequence of mappings with the keys C{group},
        C{kind} and C{version} (two-space indented),
        C{"merge\\n"} for a string, C{"true\\n"} for a boolean.
    """
    text = yaml.dump(value, Dumper=_Dumper, default_flow_style=False, sort_keys=True,
                     allow_unicode=True, width=math.inf)
    if text.endswith("\n...\n"):
        # PyYAML closes a plain root scalar with a document end marker; go-yaml does not
        text = text[:-4]
    return text


def encode_any(value: Any) -> bytes:
    """An C{openapi_v2.Any} message: C{yaml} (field 2) only."""
    return _delimited(2, any_yaml(value).encode("utf-8"))


# --- scalars (proto3: zero values are not written) ----------------------------------------


def _string(number: int, value: Any) -> bytes:
    if not isinstance(value, str) or not value:
        return b""
    return _delimited(number, value.encode("utf-8"))


def _strings(number: int, values: Any) -> bytes:
    if not isinstance(values, list):
        return b""
    return b"".join(_delimited(number, str(v).encode("utf-8")) for v in values)


def _bool(number: int, value: Any) -> bytes:
    return _key(number, 0) + b"\x01" if value is True else b""


def _int64(number: int, value: Any) -> bytes:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value:
        return b""
    return _key(number, 0) + _varint(int(value))


def _double(number: int, value: Any) -> bytes:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value:
        return b""
    return _key(number, 1) + struct.pack("<d", float(value))


def _vendor_extensions(number: int, node: dict) -> bytes:
    # NamedAny{name = 1, value = 2}, in the (sorted) order of the JSON document's keys
    return b"".join(
        _delimited(number, _delimited(1, name.encode("utf-8")) +
                   _delimited(2, encode_any(node[name])))
        for name in sorted(node) if name.startswith("x-"))


# --- Schema -------------------------------------------------------------------------------


def _named_schemas(schemas: Any) -> bytes:
    # Properties / Definitions: repeated NamedSchema additional_properties = 1, where
    # NamedSchema is {name = 1, value = 2}
    if not isinstance(schemas, dict):
        return b""
    return b"".join(
        _delimited(1, _delimited(1, name.encode("utf-8")) +
                   _delimited(2, encode_schema(schemas[name])))
        for name in sorted(schemas) if isinstance(schemas[name], dict))


def encode_schema(schema: dict) -> bytes:
    """
    An C{openapi_v2.Schema} message for one Swagger 2.0 schema object.

    @param schema: e.g. C{{"type": "object", "properties": {"replicas": {"type": "integer",
        "format": "int32"}}, "x-kubernetes-group-version-kind": [...]}}.
    @return: the message's bytes, fields in field-number order as C{proto.Marshal} writes
        them: C{$ref} 1, C{format} 2, C{title} 3, C{description} 4, C{default} 5 (Any),
        C{multipleOf} 6, C{maximum} 7, C{exclusiveMaximum} 8, C{minimum} 9,
        C{exclusiveMinimum} 10, C{maxLength} 11, C{minLength} 12, C{pattern} 13,
        C{maxItems} 14, C{minItems} 15, C{uniqueItems} 16, C{maxProperties} 17,
        C{minProperties} 18, C{required} 19, C{enum} 20 (Any), C{additionalProperties} 21
        (oneof schema 1 / boolean 2), C{type} 22 (TypeItem), C{items} 23 (ItemsItem),
        C{allOf} 24, C{properties} 25, C{discriminator} 26, C{readOnly} 27, C{example} 30
        (Any), vendor extensions 31 (NamedAny).
    """
    s = schema
    out = [_string(1, s.get("$ref")), _string(2, s.get("format")), _string(3, s.get("title")),
           _string(4, s.get("description"))]
    if "default" in s:
        out.append(_delimited(5, encode_any(s["default"])))
    out += [_double(6, s.get("multipleOf")), _double(7, s.get("maximum")),
            _bool(8, s.get("exclusiveMaximum")), _double(9, s.get("minimum")),
            _bool(10, s.get("exclusiveMinimum")), _int64(11, s.get("maxLength")),
            _int64(12, s.get("minLength")), _string(13, s.get("pattern")),
            _int64(14, s.get("maxItems")), _int64(15, s.get("minItems")),
            _bool(16, s.get("uniqueItems")), _int64(17, s.get("maxProperties")),
            _int64(18, s.get("minProperties")), _strings(19, s.get("required"))]
    if isinstance(s.get("enum"), list):
        out += [_delimited(20, encode_any(v)) for v in s["enum"]]
    extra = s.get("additionalProperties")
    if isinstance(extra, dict):
        out.append(_delimited(21, _delimited(1, encode_schema(extra))))
    elif isinstance(extra, bool):
        # a oneof member is written even when it holds the zero value
        out.append(_delimited(21, _key(2, 0) + (b"\x01" if extra else b"\x00")))
    kind = s.get("type")
    if isinstance(kind, str):
        out.append(_delimited(22, _delimited(1, kind.encode("utf-8"))))
    elif isinstance(kind, list):
        out.append(_delimited(22, _strings(1, kind)))
    items = s.get("items")
    if isinstance(items, dict):
        out.append(_delimited(23, _delimited(1, encode_schema(items))))
    elif isinstance(items, list):
        out.append(_delimited(23, b"".join(_delimited(1, encode_schema(i))
                                           for i in items if isinstance(i, dict))))
    if isinstance(s.get("allOf"), list):
        out += [_delimited(24, encode_schema(i)) for i in s["allOf"] if isinstance(i, dict)]
    if isinstance(s.get("properties"), dict):
        out.append(_delimited(25, _named_schemas(s["properties"])))
    out += [_string(26, s.get("discriminator")), _bool(27, s.get("readOnly"))]
    if "example" in s:
        out.append(_delimited(30, encode_any(s["example"])))
    out.append(_vendor_extensions(31, s))
    return b"".join(out)


def encode_document(document: dict) -> bytes:
    """
    An C{openapi_v2.Document} message for a Swagger 2.0 document (upstream
    C{handler.ToProtoBinary}).

    @param document: C{{"swagger": "2.0", "info": {"title", "version", ...}, "paths": {...},
        "definitions": {name: schema}, ...}}.
    @return: C{swagger} 1, C{info} 2 (title 1, version 2, description 3, termsOfService 4,
        vendor extensions 7), C{host} 3, C{basePath} 4, C{schemes} 5, C{consumes} 6,
        C{produces} 7, C{paths} 8 (its vendor extensions; kubetwist's v2 document lists no
        path items), C{definitions} 9, vendor extensions 16.
    """
    d = document
    out = [_string(1, d.get("swagger"))]
    info = d.get("info")
    if isinstance(info, dict):
        out.append(_delimited(2, _string(1, info.get("title")) +
                              _string(2, info.get("version")) +
                              _string(3, info.get("description")) +
                              _string(4, info.get("termsOfService")) +
                              _vendor_extensions(7, info)))
    out += [_string(3, d.get("host")), _string(4, d.get("basePath")),
            _strings(5, d.get("schemes")), _strings(6, d.get("consumes")),
            _strings(7, d.get("produces"))]
    if isinstance(d.get("paths"), dict):
        out.append(_delimited(8, _vendor_extensions(1, d["paths"])))
    if isinstance(d.get("definitions"), dict):
        out.append(_delimited(9, _named_schemas(d["definitions"])))
    out.append(_vendor_extensions(16, d))
    return b"".join(out)


# --- negotiation and conditional answers ------------------------------------------------


def _parse_accept(header: str) -> list[tuple[str, str]]:
    # goautoneg.ParseAccept: clauses sorted by q (highest first), then by specificity
    clauses = []
    for index, part in enumerate(header.split(",")):
        pieces = part.split(";")
        media = pieces[0].strip()
        if media == "*":
            media = "*/*"
        kind, sep, sub = media.partition("/")
        if not sep:
            continue
        q, params = 1.0, 0
        for p in pieces[1:]:
            name, _, value = p.strip().partition("=")
            if name.strip() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0
            else:
                params += 1
        clauses.append((-q, kind == "*", sub == "*", -params, index, kind, sub))
    clauses.sort()
    return [(c[5], c[6]) for c in clauses]


def negotiate(accept: str | None) -> str | None:
    """
    The content type C{/openapi/v2} answers for an C{Accept} header, as upstream's handler
    picks it: C{application/json} for a missing header or C{*/*}, L{PROTOBUF_V2} for either
    protobuf spelling, C{None} (406) when nothing matches.
    """
    for kind, sub in _parse_accept(accept or "*/*"):
        for want_kind, want_sub, answer in _ACCEPTED:
            if kind in (want_kind, "*") and sub in (want_sub, "*"):
                return answer
    return None


def _etag_matches(header: str, etag: str) -> bool:
    # net/http checkIfNoneMatch: a list of entity tags or "*", compared weakly
    for candidate in header.split(","):
        candidate = candidate.strip()
        if candidate == "*":
            return True
        candidate = candidate.removeprefix("W/")
        if candidate == etag:
            return True
    return False


def _not_modified(request: Any, etag: str, last_modified: float) -> bool:
    if request.method not in (b"GET", b"HEAD"):
        return False
    none_match = request.getHeader(b"if-none-match")
    if none_match is not None:
        return _etag_matches(none_match.decode("latin-1"), etag)
    since = request.getHeader(b"if-modified-since")
    if since is None or not last_modified:
        return False
    try:
        when = parsedate_to_datetime(since.decode("latin-1")).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return False
    return math.floor(last_modified) <= when


def serve_content(request: Any, body: bytes | Callable[[], bytes], content_type: str,
                  etag: str, last_modified: float) -> None:
    """
    Answer like Go's C{http.ServeContent} under upstream's v2 handler.

    Sets C{Vary: Accept}, C{Content-Type}, C{ETag} (quoted) and C{Cache-Control:
    no-cache, private} (what kube-apiserver's filter adds); answers 304 without
    C{Content-Type}, C{Content-Length} and C{Last-Modified} when C{If-None-Match} names the
    ETag (or is C{*}), or, without C{If-None-Match}, when C{If-Modified-Since} is not before
    C{last_modified}; else 200 with C{Last-Modified}, C{Accept-Ranges: bytes} and the body
    (range requests are answered whole).

    @param body: the bytes, or a function building them (not called for a 304).
    @param etag: the unquoted ETag (upper-case hex SHA-512 of the JSON form).
    @param last_modified: seconds since the epoch when the document was built.
    """
    if getattr(request, "_disconnected", False) or request.finished:
        return
    quoted = f'"{etag}"'
    request.responseHeaders.addRawHeader(b"Vary", b"Accept")
    request.setHeader(b"Cache-Control", b"no-cache, private")
    request.setHeader(b"ETag", quoted.encode())
    if _not_modified(request, quoted, last_modified):
        request.setResponseCode(304)
        request.finish()
        return
    data = body() if callable(body) else body
    request.setResponseCode(200)
    request.setHeader(b"Content-Type", content_type.encode())
    if last_modified:
        # net/http leaves it out for the zero time and the Unix epoch
        request.setHeader(b"Last-Modified", formatdate(last_modified, usegmt=True).encode())
    request.setHeader(b"Accept-Ranges", b"bytes")
    request.setHeader(b"Content-Length", str(len(data)).encode())
    if request.method != b"HEAD":
        request.write(data)
    request.finish()


def not_acceptable(request: Any) -> None:
    """Upstream's answer when no C{Accept} clause matches: 406, C{Vary: Accept}, no body."""
    if getattr(request, "_disconnected", False) or request.finished:
        return
    request.responseHeaders.addRawHeader(b"Vary", b"Accept")
    request.setHeader(b"Cache-Control", b"no-cache, private")
    request.setResponseCode(406)
    request.setHeader(b"Content-Length", b"0")
    request.finish()
