# -*- test-case-name: tests.runtime.test_codec -*-
"""
Wire encodings and content negotiation: upstream C{k8s.io/apimachinery/pkg/runtime/serializer}
(json, yaml) and C{k8s.io/apiserver/pkg/endpoints/handlers/negotiation}.

kubetwist answers JSON or YAML; protobuf request bodies of built-in kinds are decoded by
L{kubetwist.runtime.protobuf}, and a client that accepts only protobuf gets protobuf where the
kind has a protobuf definition.
"""

from __future__ import annotations

from dataclasses import dataclass
import re
from typing import Any, Optional

import orjson
import yaml

from kubetwist.runtime import errors

JSON = "application/json"
YAML = "application/yaml"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH_YAML = "application/apply-patch+yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH_YAML)


@dataclass(frozen=True)
class MediaType:
    """
    One media range of an C{Accept} header, with the parameters Kubernetes uses.

    @ivar type: C{application/json}, C{application/yaml}, C{*/*} ...
    @ivar as_kind: the C{as=} parameter (C{Table}, C{PartialObjectMetadata},
        C{PartialObjectMetadataList}, C{APIGroupDiscoveryList}), or C{""}.
    @ivar group: the C{g=} parameter; @ivar version: the C{v=} parameter.
    """

    type: str
    as_kind: str = ""
    group: str = ""
    version: str = ""
    stream: str = ""

    def header(self) -> str:
        """The C{Content-Type} value for a response in this media type."""
        if not self.as_kind:
            return self.type
        return f"{self.type};as={self.as_kind};g={self.group};v={self.version}"


def parse_accept(header: Optional[str]) -> list[MediaType]:
    """Parse an C{Accept} header into media ranges, in the client's order (q ignored but 0)."""
    if not header:
        return [MediaType("*/*")]
    out: list[MediaType] = []
    for part in header.split(","):
        part = part.strip()
        if not part:
            continue
        fields = [f.strip() for f in part.split(";")]
        params: dict[str, str] = {}
        for f in fields[1:]:
            k, _, v = f.partition("=")
            params[k.strip().lower()] = v.strip().strip('"')
        if params.get("q") in ("0", "0.0", "0.00", "0.000"):
            continue
        out.append(
            MediaType(
                fields[0].lower(),
                params.get("as", ""),
                params.get("g", ""),
                params.get("v", ""),
                params.get("stream", ""),
            )
        )
    return out


def content_type_of(header: Optional[str]) -> str:
    """The bare media type of a C{Content-Type} header (C{application/json})."""
    if not header:
        return ""
    return header.split(";")[0].strip().lower()


def encode_json(obj: Any) -> bytes:
    """Compact JSON, as kube-apiserver writes it."""
    return orjson.dumps(obj)


class _Dumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper, data):
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_presenter)


def encode_yaml(obj: Any) -> bytes:
    """YAML (block style, keys sorted as upstream's sigs.k8s.io/yaml does)."""
    return yaml.dump(obj, Dumper=_Dumper, default_flow_style=False, sort_keys=True).encode()


def encode(obj: Any, media_type: str) -> bytes:
    """Encode C{obj} as JSON, YAML or (built-in kinds) protobuf, by bare media type."""
    if media_type == YAML:
        return encode_yaml(obj)
    if media_type == PROTOBUF:
        from kubetwist.runtime import protobuf

        return protobuf.encode(obj)
    return encode_json(obj)


class _Loader(yaml.SafeLoader):
    pass


# YAML 1.1 booleans like "on"/"yes" are strings in Kubernetes' YAML (sigs.k8s.io/yaml is YAML 1.1
# via go-yaml v2, which *does* treat yes/no/on/off as booleans); keep PyYAML's defaults but
# timestamps stay strings, as in JSON.
for _first, _resolvers in list(_Loader.yaml_implicit_resolvers.items()):
    _Loader.yaml_implicit_resolvers[_first] = [
        (tag, rx) for tag, rx in _resolvers if tag != "tag:yaml.org,2002:timestamp"
    ]


class JSONSyntaxError(ValueError):
    """Malformed JSON; C{str()} is Go's C{encoding/json} wording."""


def go_json_error(body: bytes, err: Exception) -> str:
    """Translate a JSON decoding error into Go's C{encoding/json} text (what upstream prints:
    C{unexpected end of JSON input}, C{invalid character 'x' looking for beginning of value})."""
    text = str(err)
    m = re.search(r"\(char (\d+)\)", text)
    pos = int(m.group(1)) if m else -1
    if "zero-length" in text or "unexpected end of data" in text or pos >= len(body):
        return "unexpected end of JSON input"
    ch = chr(body[pos]) if 0 <= pos < len(body) else "?"
    if "after key" in text:
        return f"invalid character '{ch}' after object key"
    if "after object value" in text or "expected ',' or '}'" in text:
        return f"invalid character '{ch}' after object key:value pair"
    if "expected ',' or ']'" in text:
        return f"invalid character '{ch}' after array element"
    if "control character" in text:
        return f"invalid character {_go_char(ch)} in string literal"
    return f"invalid character '{ch}' looking for beginning of value"


def _go_char(ch: str) -> str:
    return f"'\\x{ord(ch):02x}'" if ord(ch) < 0x20 else f"'{ch}'"


def summarize_data(data: bytes, max_length: int = 30) -> str:
    """Upstream C{summarizeData}: the first bytes of a body, as text or hex."""
    if not data:
        return "<empty>"
    if data[:1] == b"{":
        text = data[:max_length].decode("utf-8", "replace")
        return text + " ..." if len(data) > max_length else text
    if len(data) > max_length:
        return data[:max_length].hex() + " ..."
    return data.hex()


def decode_body(body: bytes, content_type: str) -> Any:
    """
    Decode a request body by its bare content type (JSON, YAML or a JSON patch type).

    @raise StatusError: 400 C{BadRequest} on malformed YAML.
    @raise JSONSyntaxError: malformed JSON (the caller words the Status, as the message
        depends on what was being decoded).
    """
    if content_type in (YAML, "application/x-yaml", "text/yaml", APPLY_PATCH_YAML):
        if body.lstrip()[:1] in (b"{", b"["):
            # JSON is YAML: kubectl sends server-side apply bodies as JSON, and the JSON
            # parser is far faster on large objects (800 KB CRDs)
            try:
                return orjson.loads(body)
            except orjson.JSONDecodeError:
                pass
        try:
            return yaml.load(body, Loader=_Loader)
        except yaml.YAMLError as e:
            raise errors.new_bad_request(
                f"error converting YAML to JSON: {str(e).splitlines()[0]}"
            ) from None
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as e:
        raise JSONSyntaxError(go_json_error(body, e)) from None


def yaml_duplicate_error(body: bytes) -> str | None:
    """
    The duplicate-key error C{sigs.k8s.io/yaml} C{UnmarshalStrict} gives for a YAML body
    (C{error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key "a" already set in
    map}), or C{None} when it has no duplicate keys.
    """
    from kubetwist.runtime import strict

    dup = strict.yaml_strict_error(body, _Loader)
    return None if dup is None else "error converting YAML to JSON: " + dup


def strict_body_errors(body: bytes, content_type: str, type_name: str) -> list[str]:
    """
    The strict decoding errors of a create/update body of a built-in kind (upstream's strict
    JSON/YAML serializer): for YAML, first C{sigs.k8s.io/yaml}'s duplicate-key error, then the
    unknown fields of the JSON it converts the document to (keys sorted); for JSON, the unknown
    and duplicate fields in document order.  See L{kubetwist.runtime.strict}.

    @param type_name: the kind's full type name (C{io.k8s.api.core.v1.Pod}).
    @return: error texts (C{unknown field "spec.foo"}); empty when the body cannot be parsed
        (the ordinary decoder reports that).
    """
    from kubetwist.runtime import strict

    if content_type in (YAML, "application/x-yaml", "text/yaml", APPLY_PATCH_YAML):
        errs: list[str] = []
        dup = strict.yaml_strict_error(body, _Loader)
        if dup:
            errs.append(dup)
        try:
            doc = yaml.load(body, Loader=_Loader)
        except yaml.YAMLError:
            return errs
        return errs + strict.strict_errors(doc, type_name, sort_keys=True)
    try:
        doc = strict.parse_json_pairs(body)
    except ValueError:
        return []
    return strict.strict_errors(doc, type_name)
