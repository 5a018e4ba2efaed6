# -*- test-case-name: tests.runtime.test_codec -*-
"""
Wire encodings and content negotiation: upstream C{k8s.io/apimachinery/pkg/runtime/serializer}
(json, yaml) and C{k8s.io/apiserver/pkg/endpoints/handlers/negotiation}.

kubetwist answers JSON or YAML; protobuf request bodies of built-in kinds are decoded by
L{kubetwist.runtime.protobuf}, and a client that accepts only protobuf gets protobuf where the
kind has a protobuf definition.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

import orjson
import yaml

from kubetwist.runtime import errors, gofmt

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
    q: float = 1.0

    def header(self) -> str:
        """The C{Content-Type} value for a response in this media type."""
        if not self.as_kind:
            return self.type
        return f"{self.type};as={self.as_kind};g={self.group};v={self.version}"


def parse_accept(header: Optional[str]) -> list[MediaType]:
    """Parse an C{Accept} header into media ranges, in the client's order; C{q=0} ranges are
    kept last (goautoneg parses them, and upstream's negotiation does not look at C{q})."""
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
        try:
            q = float(params.get("q", "1"))
        except ValueError:
            q = 0.0
        out.append(
            MediaType(
                fields[0].lower(),
                params.get("as", ""),
                params.get("g", ""),
                params.get("v", ""),
                params.get("stream", ""),
                q,
            )
        )
    return sorted(out, key=lambda r: r.q == 0)


def content_type_of(header: Optional[str]) -> str:
    """The bare media type of a C{Content-Type} header (C{application/json})."""
    if not header:
        return ""
    return header.split(";")[0].strip().lower()


def encode_json(obj: Any) -> bytes:
    """Compact JSON without a trailing newline (for internal use: patches, hashes)."""
    return orjson.dumps(obj)


#: Go's C{encoding/json} escapes these inside strings (C{SetEscapeHTML(true)}, the default, and
#: always U+2028/U+2029); in JSON text they can only occur inside strings.
_GO_ESCAPES = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"),
               ("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))


def go_escape(data: bytes) -> bytes:
    """Escape C{<}, C{>}, C{&}, U+2028 and U+2029 in JSON text as Go's encoder does
    (C{\\u003c} ...)."""
    for raw, escaped in _GO_ESCAPES:
        if raw in data:
            data = data.replace(raw, escaped)
    return data


# --- Go's field order ---------------------------------------------------------------------

#: type name -> ({json name: (position, action, sub type, omit)}, embeds TypeMeta,
#: ((json name, position, zero value or struct type name), ...) of the fields Go writes even
#: when unset)
_PLANS: dict[str, tuple[dict[str, tuple[int, int, str, int]], bool, tuple]] = {}
_TABLES: list = []

# what to do with a field's value
_COPY, _MSG, _LIST, _MAP_MSG, _MAP, _RAW, _JSON = range(7)
# omitempty: keep; nil pointer; empty slice/map; zero scalar
_KEEP, _PTR, _EMPTY, _SCALAR = range(4)


def _tables() -> tuple[Any, frozenset]:
    if not _TABLES:
        from kubetwist.runtime import types as typetables

        kinds = (frozenset(typetables.KINDS.values())
                 | frozenset(typetables.PROTOBUF_KINDS.values())
                 | {f"{typetables.meta_v1.PACKAGE}.{k}" for k in typetables.META_KINDS})
        _TABLES.append((typetables, kinds))
    return _TABLES[0]


#: The JSON of a special type's Go zero value, for the non-pointer fields Go always writes:
#: C{metav1.Time{}} and C{MicroTime{}} marshal to C{null}, C{resource.Quantity{}} to C{"0"},
#: C{intstr.IntOrString{}} to C{0}, C{metav1.Duration{}} to C{"0s"}, a nil C{RawExtension} /
#: C{ExtraValue} / C{FieldsV1} to C{null}.
_SPECIAL_ZERO = {"Time": None, "MicroTime": None, "Quantity": "0", "IntOrString": 0,
                 "Duration": "0s", "RawExtension": None, "ExtraValue": None, "FieldsV1": None}
_SCALAR_ZERO = {"string": "", "int32": 0, "int64": 0, "bool": False, "double": 0, "bytes": None}


class _Struct(str):
    """A zero value that is a struct: filled from its own plan (the type name)."""


def _zero(f: Any, typetables: Any) -> Any:
    """
    What Go's C{encoding/json} writes for field C{f} of a zero struct, or L{_NO_ZERO} when it
    writes nothing (C{omitempty} on a pointer, slice, map or scalar).  Struct fields are written
    even with C{omitempty} (encoding/json never finds a struct empty).
    """
    if f.pointer or f.container or f.type in _SCALAR_ZERO or f.type == "ExtraValue":
        if f.omitempty:
            return _NO_ZERO
        return _SCALAR_ZERO.get(f.type) if not (f.pointer or f.container) else None
    if f.type in typetables.TYPES:
        return _Struct(f.type)
    return _SPECIAL_ZERO.get(f.type, _NO_ZERO)


_NO_ZERO = object()


def _plan(type_name: str) -> tuple[dict[str, tuple[int, int, str, int]], bool, tuple]:
    """How to order one message type: its fields in Go's JSON order (inline structs'
    fields promoted in place), what each value needs, C{omitempty}'s rule, and the zero values
    of the fields Go writes even when unset (L{_zero})."""
    typetables, kinds = _tables()
    fields: list[tuple[str, int, str, int]] = []
    zeros: list[tuple[str, int, Any]] = []

    def add(name: str) -> None:
        for f in typetables.TYPES[name].fields:
            if f.inline and f.type in typetables.TYPES:
                add(f.type)
                continue
            message = f.type in typetables.TYPES
            if f.container == "map":
                action = _MAP_MSG if message else _MAP
            elif f.container == "list":
                action = _LIST if message else _COPY
            elif message:
                action = _MSG
            elif f.type == "RawExtension":
                action = _RAW
            elif f.type == "JSON":
                # apiextensions' JSON holds json.Marshal's bytes of an interface{}: keys sorted
                action = _JSON
            else:
                action = _COPY
            if not f.omitempty:
                omit = _KEEP
            elif f.pointer:
                omit = _PTR
            elif f.container or f.type == "ExtraValue":
                omit = _EMPTY
            elif f.type in typetables.SCALARS:
                omit = _SCALAR
            else:
                # structs (Time, Quantity, messages) are never empty to encoding/json
                omit = _KEEP
            zero = _zero(f, typetables)
            if zero is not _NO_ZERO:
                zeros.append((f.json_name, len(fields), zero))
            fields.append((f.json_name, action, f.type, omit))

    add(type_name)
    index = {name: (pos, action, sub, omit)
             for pos, (name, action, sub, omit) in enumerate(fields)}
    plan = _PLANS[type_name] = (index, type_name in kinds, tuple(zeros))
    return plan


def zero_object(type_name: str) -> dict[str, Any]:
    """
    The JSON Go writes for the zero value of struct C{type_name} (a full type name of the
    type tables, e.g. C{io.k8s.api.core.v1.PodSpec}): a fresh dict, in Go's field order, with
    every field Go writes although unset (L{_zero}) and nothing else.
    """
    return _message(type_name, {})


def _message(type_name: str, obj: Any, top: bool = False) -> Any:
    if obj.__class__ is not dict:
        return obj
    index, is_kind, zeros = _PLANS.get(type_name) or _plan(type_name)
    get = index.get
    known = []
    unknown = None
    head = None
    last = -1
    ordered = True
    for key, value in obj.items():
        entry = get(key)
        if entry is None:
            if (top or is_kind) and (key == "kind" or key == "apiVersion"):
                if head is None:
                    head = {}
                head[key] = value
            else:
                if unknown is None:
                    unknown = []
                unknown.append((key, value))
            continue
        pos, action, sub, omit = entry
        if omit:
            if omit == _PTR:
                if value is None:
                    continue
            elif omit == _EMPTY:
                if not value:
                    continue
            elif value is None or value == "" or value is False or (
                    value == 0 and value.__class__ is not str):
                continue
        if value is None and action == _MSG and omit == _KEEP:
            # JSON null decodes to the zero struct, which is written back as one
            zero = _zero_of(type_name, key)
            if zero.__class__ is _Struct:
                value = {}
        if action and value is not None:
            if action == _MSG:
                value = _message(sub, value)
            elif action == _LIST:
                if value.__class__ is list:
                    value = [_message(sub, item) for item in value]
            elif action == _MAP_MSG:
                if value.__class__ is dict:
                    value = {k: _message(sub, value[k]) for k in sorted(value)}
            elif action == _MAP:
                if value.__class__ is dict:
                    value = {k: value[k] for k in sorted(value)}
            elif action == _RAW:
                value = go_order(value)
            else:
                value = _sorted_keys(value)
        if pos < last:
            ordered = False
        last = pos
        known.append((pos, key, value))
    for key, pos, zero in zeros:
        if key not in obj:
            if zero.__class__ is _Struct:
                zero = zero_object(zero)
            if pos < last:
                ordered = False
            last = pos
            known.append((pos, key, zero))
    out: dict[str, Any] = {}
    if head is not None:
        # the embedded TypeMeta comes first
        if "kind" in head:
            out["kind"] = head["kind"]
        if "apiVersion" in head:
            out["apiVersion"] = head["apiVersion"]
    if not ordered:
        known.sort()
    for _, key, value in known:
        out[key] = value
    if unknown is not None:
        for key, value in unknown:
            out[key] = value
    return out


def _zero_of(type_name: str, key: str) -> Any:
    for name, _, zero in _PLANS[type_name][2]:
        if name == key:
            return zero
    return _NO_ZERO


def _sorted_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(v) for v in value]
    return value


def go_order(obj: Any) -> Any:
    """
    C{obj} as Go's C{encoding/json} writes the typed object: C{kind}, C{apiVersion}, then the
    struct fields in declaration order (from the type tables), map keys sorted, the
    C{omitempty} fields holding Go's zero value (C{""}, C{0}, C{false}, nil, empty slices and
    maps; never structs) left out, and the fields Go writes although they are unset added with
    Go's zero value (C{""}, C{0}, C{false}, C{null} for nil pointers, slices and maps, structs
    filled the same way, e.g. a CRD's C{status.acceptedNames: {plural: "", kind: ""}} and
    C{conditions: null}; L{_zero}).  Kinds without tables, and keys unknown to the tables, keep
    their order (after the known ones).  Values are shared, not copied.
    """
    if obj.__class__ is not dict:
        return obj
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if api_version.__class__ is not str or kind.__class__ is not str:
        return obj
    typetables, _ = _tables()
    group, _, version = api_version.rpartition("/")
    type_name = typetables.lookup_kind(group, version, kind, protobuf=True)
    if type_name is None:
        return obj
    return _message(type_name, obj, top=True)


def encode_json_stream(obj: Any) -> bytes:
    """
    One JSON value as upstream's JSON serializer writes it: Go's C{json.Encoder.Encode}, compact,
    HTML characters escaped, followed by a newline (every JSON response body and every watch
    event line ends with C{\\n}).
    """
    return go_escape(orjson.dumps(obj)) + b"\n"


#: The placeholder L{list_envelope} encodes in place of the items.
_ITEMS_PLACEHOLDER = "\x1fkubetwist-list-items\x1f"


def list_item_encoder(api_version: str, list_kind: str) -> Callable[[dict], bytes]:
    """
    A function C{item -> bytes}: one item of a C{list_kind} list exactly as L{encode} writes it
    inside the whole list (Go's field order of the list's item type, zero values, HTML escapes;
    no newline), so that a list can be written as an envelope around items encoded once
    (L{list_envelope}) -- upstream's C{cachingObject} serialization cache.  An item of a kind
    without type tables (a custom resource) is written as it is, as L{go_order} leaves it.
    """
    typetables, _ = _tables()
    group, _, version = api_version.rpartition("/")
    list_type = typetables.lookup_kind(group, version, list_kind, protobuf=True)
    item_type = None
    if list_type is not None:
        index = (_PLANS.get(list_type) or _plan(list_type))[0]
        entry = index.get("items")
        if entry is not None and entry[1] == _LIST:
            item_type = entry[2]
    if item_type is None:
        return lambda item: go_escape(orjson.dumps(item))
    return lambda item: go_escape(orjson.dumps(_message(item_type, item)))


def encode_raw(value: Any) -> bytes:
    """C{value} as Go writes an untyped value (C{interface{}}, C{RawExtension}) inside a
    larger body: L{go_order}, compact, HTML characters escaped, no newline."""
    return go_escape(orjson.dumps(go_order(value)))


def list_envelope(lst: dict, field: str = "items") -> tuple[bytes, bytes]:
    """
    The bytes of C{lst} (a list object, its C{field} ignored: C{items}, a Table's C{rows})
    before and after the elements of C{field}, as L{encode_json_stream}C{(go_order(lst))}
    writes them: C{head + b",".join(items) + tail} is the whole JSON body (newline
    included) when each item is L{list_item_encoder}'s bytes.
    """
    placeholder = dict(lst)
    placeholder[field] = [_ITEMS_PLACEHOLDER]
    body = encode_json_stream(go_order(placeholder))
    marker = orjson.dumps(_ITEMS_PLACEHOLDER)
    head, _, tail = body.partition(marker)
    return head, tail


def encode_json_indent(obj: Any) -> bytes:
    """
    Go's C{json.MarshalIndent} with no prefix and a two-space indent: the pretty serializer
    (C{?pretty=1}, curl/Wget/browser user agents) and C{responsewriters.WriteRawJSON}
    (C{/version}, errors no serializer was negotiated for); no trailing newline.
    """
    return go_escape(orjson.dumps(obj, option=orjson.OPT_INDENT_2))


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


def encode(obj: Any, media_type: str, pretty: bool = False) -> bytes:
    """
    Encode C{obj} as a response body: JSON (L{encode_json_stream}, or L{encode_json_indent} when
    C{pretty}), YAML or (built-in kinds) protobuf, by bare media type.
    """
    if media_type == YAML:
        # upstream marshals the typed object to JSON first (omitempty applies), then YAML
        return encode_yaml(go_order(obj))
    if media_type == PROTOBUF:
        from kubetwist.runtime import protobuf

        return protobuf.encode(obj)
    obj = go_order(obj)
    if pretty:
        return encode_json_indent(obj)
    return encode_json_stream(obj)


class _Loader(yaml.SafeLoader):
    pass


# YAML 1.1 booleans like "on"/"yes" are strings in Kubernetes' YAML (sigs.k8s.io/yaml is YAML 1.1
# via go-yaml v2, which *does* treat yes/no/on/off as booleans); keep PyYAML's defaults but
# timestamps stay strings, as in JSON.
for _first, _resolvers in list(_Loader.yaml_implicit_resolvers.items()):
    _Loader.yaml_implicit_resolvers[_first] = [
        (tag, rx) for tag, rx in _resolvers if tag != "tag:yaml.org,2002:timestamp"
    ]


# go-yaml v2 reads any plain scalar strconv.ParseFloat accepts as a float: 1e3 too (PyYAML's
# YAML 1.1 float needs a point)
_Loader.add_implicit_resolver("tag:yaml.org,2002:float",
                              re.compile(r"^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$"),
                              list("-+0123456789"))


class _CLoader(yaml.CSafeLoader):
    """L{_Loader}'s resolvers on libyaml's parser: the same documents, parsed in C (a 3 MiB
    body takes seconds in PyYAML's pure-Python scanner, holding the reactor), with libyaml's
    error texts, which go-yaml (a port of libyaml) shares."""


_CLoader.yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers

#: The loader every YAML body is parsed with.
YAML_LOADER: type = _CLoader


def go_yaml_error(error: yaml.YAMLError, body: bytes = b"") -> str:
    """
    go-yaml v2's text for a YAML syntax error (C{yaml: line 2: found character that cannot
    start any token}): libyaml's problem, after the line of its problem mark (0-based, plus
    one for scanner errors; none on the first line), as go-yaml's C{parser.fail} words it.
    Nesting past libyaml's 1000 levels answers go-yaml's text for its own limit (10000).
    """
    problem = getattr(error, "problem", None) or ""
    mark = getattr(error, "problem_mark", None)
    if "nesting depth" in problem:
        return "yaml: exceeded max depth of 10000"
    if problem == "found undefined alias" and mark is not None:
        text = body.decode("utf-8", "replace")
        found = re.match(r"\*([^\s,\[\]{}]*)", text[mark.index:])
        return f"yaml: unknown anchor '{found.group(1) if found else ''}' referenced"
    if not problem:
        return "yaml: " + str(error).splitlines()[0]
    line = 0
    if mark is not None and mark.line:
        line = mark.line + (1 if isinstance(error, yaml.scanner.ScannerError) else 0)
    else:
        context = getattr(error, "context_mark", None)
        line = context.line if context is not None else 0
    return f"yaml: line {line}: {problem}" if line else f"yaml: {problem}"


class YAMLAliasError(ValueError):
    """A YAML document whose aliases expand too much (go-yaml v2's limit)."""

    def __init__(self) -> None:
        super().__init__("yaml: document contains excessive aliasing")


def _allowed_alias_ratio(decodes: int) -> float:
    """go-yaml v2 C{allowedAliasRatio}: 99% of the decodes of a small document may come from
    alias expansion, 10% of a large one, scaled in between."""
    low, high = 400_000, 4_000_000
    if decodes <= low:
        return 0.99
    if decodes >= high:
        return 0.10
    return 0.99 - 0.89 * ((decodes - low) / (high - low))


def check_aliasing(root: Any) -> None:
    """
    go-yaml v2's defence against alias bombs (a 1 KB document of nested aliases that expands
    to gigabytes): count the nodes decoding would visit, aliases expanded, and refuse the
    document once more than 100 of over 1000 come from aliases beyond the allowed ratio.
    The walk stops there, so the work is bounded whatever the expansion.

    @param root: a composed PyYAML node graph (an alias is the anchored node itself,
        visited again).
    @raise YAMLAliasError: C{yaml: document contains excessive aliasing}.
    """
    seen_anchor: set = set()
    decodes = aliases = 0
    stack: list = [(root, False)]
    while stack:
        node, in_alias = stack.pop()
        decodes += 1
        if in_alias:
            aliases += 1
        if aliases > 100 and decodes > 1000 and \
                aliases / decodes > _allowed_alias_ratio(decodes):
            raise YAMLAliasError()
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            continue
        # a node met again is reached through an alias
        alias_here = in_alias or id(node) in seen_anchor
        seen_anchor.add(id(node))
        for child in reversed(children):
            stack.append((child, alias_here or id(child) in seen_anchor))


def _load_yaml(body: bytes) -> Any:
    """PyYAML load (libyaml's parser) with go-yaml's alias limit checked on the composed
    graph first."""
    loader = YAML_LOADER(body)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_aliasing(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


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


_go_char = gofmt.quote_char


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
            from kubetwist.runtime import jsonparse

            return jsonparse.fix_surrogates(_yaml_numbers(_load_yaml(body)))
        except (yaml.YAMLError, YAMLAliasError) as e:
            text = str(e) if isinstance(e, YAMLAliasError) else go_yaml_error(e, body)
            err = errors.new_bad_request(f"error converting YAML to JSON: {text}")
            err.yaml_error = text
            raise err from None
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as e:
        return _slow_json(body, e)


def _slow_json(body: bytes, err: Exception) -> Any:
    """What orjson refuses but Go accepts (nesting past 1024 levels, numbers past a double):
    the iterative parser; Go's C{exceeded max depth} past 10000 levels."""
    from kubetwist.runtime import jsonparse

    try:
        return jsonparse.fix_surrogates(jsonparse.loads(body))
    except jsonparse.DepthError as e:
        raise JSONSyntaxError(str(e)) from None
    except (ValueError, UnicodeDecodeError):
        raise JSONSyntaxError(go_json_error(body, err)) from None


def _yaml_numbers(doc: Any) -> Any:
    """
    Whole floats of a YAML document as integers (C{1.0}, C{1e3}): C{sigs.k8s.io/yaml} turns
    YAML into JSON with Go's C{json.Marshal}, which writes a whole C{float64} below 1e21
    without a point.  Iterative.
    """
    stack = [doc]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) \
            if isinstance(node, list) else ()
        for k, v in list(items):
            if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
                node[k] = int(v)
            elif isinstance(v, (dict, list)):
                stack.append(v)
    if isinstance(doc, float) and doc.is_integer() and abs(doc) < 1e21:
        return int(doc)
    return doc


def yaml_duplicate_error(body: bytes) -> str | None:
    """
    The duplicate-key error C{sigs.k8s.io/yaml} C{UnmarshalStrict} gives for a YAML body
    (C{error converting YAML to JSON: yaml: unmarshal errors:}, then one two-space indented
    C{line 7: key "a" already set in map} line per duplicate), or C{None} when it has no
    duplicate keys.
    """
    from kubetwist.runtime import strict

    dup = strict.yaml_strict_error(body, YAML_LOADER)
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
        dup = strict.yaml_strict_error(body, YAML_LOADER)
        if dup:
            errs.append(dup)
        try:
            doc = yaml.load(body, Loader=YAML_LOADER)
        except yaml.YAMLError:
            return errs
        return errs + strict.strict_errors(doc, type_name, sort_keys=True)
    try:
        doc = strict.parse_json_pairs(body)
    except ValueError:
        return []
    return strict.strict_errors(doc, type_name)
