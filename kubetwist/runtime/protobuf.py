# -*- test-case-name: tests.runtime.test_protobuf -*-
"""
The Kubernetes protobuf wire format for built-in kinds: upstream
C{k8s.io/apimachinery/pkg/runtime/serializer/protobuf} and the gogo-generated marshallers of
C{k8s.io/api} and C{k8s.io/apimachinery/pkg/apis/meta/v1}.

A body is the magic C{k8s\\x00} followed by a C{runtime.Unknown} message::

    1: typeMeta {1: apiVersion, 2: kind}   2: raw (the object's own message)
    3: contentEncoding                      4: contentType

L{decode} turns such a body into the JSON-shaped dict Go's C{encoding/json} would print for the
typed object (zero values of non-C{omitempty} fields present, C{"creationTimestamp": null},
C{"containers": null} ...); L{encode} writes a dict back the way the generated marshallers do
(fields in number order, non-pointer scalars always written, map entries sorted by key), so
C{encode(decode(b)) == b} for bytes produced by Go.  The field tables are
L{kubetwist.runtime.types}.
"""

from __future__ import annotations

import base64
import json
import re
import struct
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from kubetwist.runtime import errors
from kubetwist.runtime.codec import go_escape
from kubetwist.runtime.errors import StatusError
from kubetwist.runtime.types import (
    SPECIALS,
    TYPES,
    FieldDef,
    lookup_kind,
)

#: The media type of this encoding.
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
#: The magic prefix of every body (upstream C{protoEncodingPrefix}).
MAGIC = b"k8s\x00"

_U64 = (1 << 64) - 1
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: C{time.Time{}.Unix()}: Go's zero time, 0001-01-01T00:00:00Z.
_ZERO_TIME_SECONDS = -62135596800
_QUANTITY_RE = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
#: Wire type by scalar name.
_SCALAR_WIRE = {"string": 2, "bytes": 2, "int32": 0, "int64": 0, "bool": 0, "double": 1}

_ERR_OVERFLOW = "proto: integer overflow"
_ERR_LENGTH = "proto: negative length found during unmarshaling"
_ERR_EOF = "unexpected EOF"


class ProtobufError(ValueError):
    """A malformed message; C{str()} is the Go error text (C{proto: ...}, C{unexpected EOF})."""


class ProtobufDecodeError(StatusError):
    """
    400 C{BadRequest} for a body that cannot be decoded, worded as upstream's
    C{transformDecodeError}.

    @ivar detail: the underlying Go-style error text.
    @ivar gvk: C{(group, version, kind)} from the envelope, or C{None} if it was unreadable.
    """

    def __init__(self, detail: str, gvk: tuple[str, str, str] | None, body: bytes,
                 target_kind: str = "") -> None:
        self.detail = detail
        self.gvk = gvk
        if gvk is not None and gvk[2]:
            into = target_kind or gvk[2]
            message = f'{gvk[2]} in version "{gvk[1]}" cannot be handled as a {into}: {detail}'
        else:
            summary = body[:30].decode("utf-8", "replace")
            message = (
                f"the object provided is unrecognized (must be of type {target_kind or 'Unknown'})"
                f": {detail} ({summary})"
            )
        super().__init__(errors.new_bad_request(message).status)


class UnsupportedKindError(StatusError):
    """
    415 C{UnsupportedMediaType}: a kind kubetwist has no protobuf tables for (a custom resource,
    an aggregated kind).  C{gvk} lets the caller word its own message
    (C{protobuf is not supported for <kind>}).
    """

    def __init__(self, group: str, version: str, kind: str) -> None:
        self.gvk = (group, version, kind)
        super().__init__(errors.new_unsupported_media_type(CONTENT_TYPE).status)


# --- wire reading ------------------------------------------------------------------------


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    end = len(data)
    while True:
        if shift >= 64:
            raise ProtobufError(_ERR_OVERFLOW)
        if pos >= end:
            raise ProtobufError(_ERR_EOF)
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & _U64, pos
        shift += 7


def iter_fields(data: bytes, message: str = "Unknown") -> Iterator[tuple[int, int, Any]]:
    """
    Walk a message: yield C{(number, wire_type, value)}; C{value} is an int for varint and
    fixed wire types, C{bytes} for length-delimited ones.

    @param message: the Go type name used in error texts.
    @raise ProtobufError: with gogo's error texts.
    """
    pos = 0
    end = len(data)
    while pos < end:
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 4:
            raise ProtobufError(f"proto: {message}: wiretype end group for non-group")
        if number <= 0:
            raise ProtobufError(f"proto: {message}: illegal tag {number} (wire type {wire})")
        if wire == 0:
            value, pos = _read_varint(data, pos)
        elif wire == 1:
            if pos + 8 > end:
                raise ProtobufError(_ERR_EOF)
            value = int.from_bytes(data[pos:pos + 8], "little")
            pos += 8
        elif wire == 5:
            if pos + 4 > end:
                raise ProtobufError(_ERR_EOF)
            value = int.from_bytes(data[pos:pos + 4], "little")
            pos += 4
        elif wire == 2:
            length, pos = _read_varint(data, pos)
            if length >= 1 << 63:
                raise ProtobufError(_ERR_LENGTH)
            if pos + length > end:
                raise ProtobufError(_ERR_EOF)
            value = data[pos:pos + length]
            pos += length
        elif wire == 3:
            pos = _skip_group(data, pos, number)
            continue
        else:
            raise ProtobufError(f"proto: illegal wireType {wire}")
        yield number, wire, value


def _skip_group(data: bytes, pos: int, number: int) -> int:
    depth = 1
    while depth:
        key, pos = _read_varint(data, pos)
        wire = key & 7
        if wire == 0:
            _, pos = _read_varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            length, pos = _read_varint(data, pos)
            pos += length
        elif wire == 3:
            depth += 1
        elif wire == 4:
            depth -= 1
        else:
            raise ProtobufError(f"proto: illegal wireType {wire}")
        if pos > len(data):
            raise ProtobufError(_ERR_EOF)
    return pos


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


# --- Go formats ----------------------------------------------------------------------------

_INITIALISMS = {"uid": "UID", "apiVersion": "APIVersion", "ip": "IP", "url": "URL"}


def _go_name(json_name: str) -> str:
    if json_name in _INITIALISMS:
        return _INITIALISMS[json_name]
    return json_name[:1].upper() + json_name[1:]


def _short(type_name: str) -> str:
    return type_name.rsplit(".", 1)[-1]


def format_time(seconds: int, nanos: int = 0, micro: bool = False) -> str | None:
    """
    C{metav1.Time}/C{MicroTime} JSON: RFC 3339 in UTC (C{2024-01-02T03:04:05Z}, or with six
    fractional digits for MicroTime); C{None} (JSON null) for Go's zero time.
    """
    if seconds == _ZERO_TIME_SECONDS and (not micro or nanos // 1000 == 0):
        return None
    try:
        t = _EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        raise ProtobufError("Time.MarshalJSON: year outside of range [0,9999]") from None
    text = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    if micro:
        return text + f".{nanos // 1000:06d}Z"
    return text + "Z"


def parse_time(value: Any) -> tuple[int, int]:
    """RFC 3339 text (or C{None}) to C{(unix_seconds, nanos)}; C{None} is Go's zero time."""
    if value is None or value == "":
        return _ZERO_TIME_SECONDS, 0
    text = str(value)
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    frac_nanos = 0
    m = re.match(r"^(.*T\d\d:\d\d:\d\d)\.(\d+)(.*)$", text)
    if m:
        digits = m.group(2)
        frac_nanos = int((digits + "000000000")[:9])
        text = m.group(1) + m.group(3)
    t = datetime.fromisoformat(text)
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    delta = t - _EPOCH
    return delta.days * 86400 + delta.seconds, frac_nanos


_DURATION_UNITS = (("h", 3600 * 10**9), ("m", 60 * 10**9), ("s", 10**9))


def format_duration(ns: int) -> str:
    """Go's C{time.Duration.String()}: C{1h0m0s}, C{1.5s}, C{300ms}, C{0s}."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    u = abs(ns)
    if u < 10**9:
        for unit, size in (("ns", 1), ("µs", 10**3), ("ms", 10**6)):
            if u < size * 1000:
                return sign + _frac(u, size) + unit
    secs, frac = divmod(u, 10**9)
    out = _frac(secs % 60 * 10**9 + frac, 10**9) + "s"
    mins = secs // 60
    if mins:
        out = f"{mins % 60}m" + out
        if mins // 60:
            out = f"{mins // 60}h" + out
    return sign + out


def _frac(value: int, unit: int) -> str:
    whole, rest = divmod(value, unit)
    if not rest:
        return str(whole)
    digits = str(rest).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


def parse_duration(text: str) -> int:
    """Go's C{time.ParseDuration}, returning nanoseconds."""
    units = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9,
             "m": 60 * 10**9, "h": 3600 * 10**9}
    s = text.strip()
    sign = -1 if s.startswith("-") else 1
    s = s.lstrip("+-")
    if s == "0":
        return 0
    total = 0
    parts = re.findall(r"([0-9]*\.?[0-9]*)(ns|us|µs|μs|ms|s|m|h)", s)
    if not parts or "".join(a + b for a, b in parts) != s:
        raise ValueError(f'time: invalid duration "{text}"')
    for number, unit in parts:
        whole, _, frac = number.partition(".")
        total += int(whole or 0) * units[unit]
        if frac:
            total += int(frac) * units[unit] // 10 ** len(frac)
    return sign * total


# --- decoding ------------------------------------------------------------------------------


def _decode_scalar(type_name: str, wire: int, value: Any) -> Any:
    if type_name == "string":
        return value.decode("utf-8", "replace")
    if type_name == "bytes":
        return base64.b64encode(value).decode("ascii")
    if type_name == "int32":
        return _signed(value, 32)
    if type_name == "int64":
        return _signed(value, 64)
    if type_name == "bool":
        return value != 0
    if type_name == "double":
        number = struct.unpack("<d", value.to_bytes(8, "little"))[0]
        # Go's encoder prints an integral float64 without a fraction (5, not 5.0)
        if number.is_integer() and abs(number) < 1e21:
            return int(number)
        return number
    raise AssertionError(type_name)


def _zero(f: FieldDef) -> Any:
    if f.type == "string":
        return ""
    if f.type in ("int32", "int64"):
        return 0
    if f.type == "bool":
        return False
    if f.type == "double":
        return 0.0
    return None


def _decode_timestamp(data: bytes) -> tuple[int, int]:
    seconds, nanos = 0, 0
    for number, wire, value in iter_fields(data, "Timestamp"):
        if number == 1 and wire == 0:
            seconds = _signed(value, 64)
        elif number == 2 and wire == 0:
            nanos = _signed(value, 32)
        elif number in (1, 2):
            name = "Seconds" if number == 1 else "Nanos"
            raise ProtobufError(f"proto: wrong wireType = {wire} for field {name}")
    return seconds, nanos


def _raw_field(data: bytes, message: str) -> bytes | None:
    raw = None
    for number, wire, value in iter_fields(data, message):
        if number == 1:
            if wire != 2:
                raise ProtobufError(f"proto: wrong wireType = {wire} for field Raw")
            raw = bytes(value)
    return raw


def _decode_special(type_name: str, data: bytes | None) -> Any:
    """The JSON value of a special type from its message bytes (C{None}: field absent)."""
    if type_name in ("Time", "MicroTime"):
        if not data:
            return None
        seconds, nanos = _decode_timestamp(data)
        if type_name == "Time":
            return format_time(seconds)
        return format_time(seconds, max(nanos, 0), micro=True)
    if type_name == "Quantity":
        text = None
        for number, wire, value in iter_fields(data or b"", "Quantity"):
            if number == 1:
                if wire != 2:
                    raise ProtobufError(f"proto: wrong wireType = {wire} for field String_")
                text = value.decode("utf-8", "replace")
        if text is None:
            return "0"
        if not _QUANTITY_RE.match(text):
            raise ProtobufError(
                "quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            )
        return text
    if type_name == "IntOrString":
        kind, int_val, str_val = 0, 0, ""
        for number, wire, value in iter_fields(data or b"", "IntOrString"):
            if number == 1 and wire == 0:
                kind = _signed(value, 64)
            elif number == 2 and wire == 0:
                int_val = _signed(value, 32)
            elif number == 3 and wire == 2:
                str_val = value.decode("utf-8", "replace")
            elif number in (1, 2, 3):
                name = ("Type", "IntVal", "StrVal")[number - 1]
                raise ProtobufError(f"proto: wrong wireType = {wire} for field {name}")
        return str_val if kind == 1 else int_val
    if type_name == "Duration":
        ns = 0
        for number, wire, value in iter_fields(data or b"", "Duration"):
            if number == 1 and wire == 0:
                ns = _signed(value, 64)
        return format_duration(ns)
    if type_name == "ExtraValue":
        items = [value.decode("utf-8", "replace")
                 for number, wire, value in iter_fields(data or b"", "ExtraValue")
                 if number == 1 and wire == 2]
        return items or None
    if type_name in ("RawExtension", "FieldsV1", "JSON"):
        raw = _raw_field(data or b"", type_name)
        if not raw:
            return None
        if raw.startswith(MAGIC) and type_name == "RawExtension":
            return decode(raw)
        try:
            return json.loads(raw)
        except ValueError as e:
            raise ProtobufError(f"{type_name}: invalid JSON: {e}") from None
    if type_name in _SCHEMA_UNIONS:
        return _decode_schema_union(type_name, data or b"")
    raise AssertionError(type_name)


#: C{JSONSchemaProps} of apiextensions.k8s.io/v1, inside the C{JSONSchemaPropsOr*} unions.
_SCHEMA = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"
#: The unions' field numbers: C{(schema, other)}; C{other} is the repeated schemas (OrArray),
#: the bool C{allows} (OrBool) or the repeated strings C{property} (OrStringArray).
_SCHEMA_UNIONS = {
    "JSONSchemaPropsOrArray": (1, 2),
    "JSONSchemaPropsOrBool": (2, 1),
    "JSONSchemaPropsOrStringArray": (1, 2),
}


def _decode_schema_union(type_name: str, data: bytes) -> Any:
    """The JSON value of a C{JSONSchemaPropsOr*} message, as its C{MarshalJSON} (upstream
    C{apiextensions/v1/marshal.go}) writes it."""
    schema_number, other_number = _SCHEMA_UNIONS[type_name]
    schema = None
    others: list = []
    allows = False
    for number, wire, value in iter_fields(data, type_name):
        if number == schema_number and wire == 2:
            schema = value
        elif number == other_number:
            if type_name == "JSONSchemaPropsOrBool":
                if wire != 0:
                    raise ProtobufError(f"proto: wrong wireType = {wire} for field Allows")
                allows = value != 0
            elif wire == 2:
                others.append(value)
            else:
                raise ProtobufError(f"proto: wrong wireType = {wire} for field "
                                    f"{'JSONSchemas' if other_number == 2 else 'Property'}")
    if type_name == "JSONSchemaPropsOrArray":
        if others:
            return [decode_message(_SCHEMA, v) for v in others]
        return decode_message(_SCHEMA, schema) if schema is not None else None
    if type_name == "JSONSchemaPropsOrBool":
        return decode_message(_SCHEMA, schema) if schema is not None else allows
    if others:
        return [v.decode("utf-8", "replace") for v in others]
    return decode_message(_SCHEMA, schema) if schema is not None else None


def _check_wire(f: FieldDef, wire: int, owner: str) -> None:
    if f.container == "map" or f.type not in _SCALAR_WIRE:
        expected = 2
    else:
        expected = _SCALAR_WIRE[f.type]
        if f.container == "list" and expected != 2 and wire == 2:
            return  # packed repeated scalars
    if wire != expected:
        raise ProtobufError(
            f"proto: wrong wireType = {wire} for field {_go_name(f.json_name or _short(f.type))}"
        )


def _unpack(f: FieldDef, value: bytes) -> list:
    out = []
    pos = 0
    while pos < len(value):
        if f.type == "double":
            if pos + 8 > len(value):
                raise ProtobufError(_ERR_EOF)
            out.append(int.from_bytes(value[pos:pos + 8], "little"))
            pos += 8
        else:
            v, pos = _read_varint(value, pos)
            out.append(v)
    return out


def _decode_map_entry(f: FieldDef, data: bytes) -> tuple[str, Any]:
    key = ""
    raw_value: Any = None
    for number, wire, value in iter_fields(data, "MapEntry"):
        if number == 1 and wire == 2:
            key = value.decode("utf-8", "replace")
        elif number == 2:
            raw_value = value
    if f.type in SPECIALS:
        return key, _decode_special(f.type, raw_value)
    if f.type == "string" or f.type == "bytes":
        return key, _decode_scalar(f.type, 2, raw_value if raw_value is not None else b"")
    if f.type in _SCALAR_WIRE:
        return key, _decode_scalar(f.type, 0, raw_value or 0)
    return key, decode_message(f.type, raw_value or b"")


def decode_message(type_name: str, data: bytes) -> dict:
    """
    Decode one message (no envelope) of the full type C{type_name} into the dict Go's JSON
    encoder would produce for it.  Unknown field numbers are skipped.

    @raise ProtobufError: on malformed input.
    """
    tdef = TYPES[type_name]
    owner = _short(type_name)
    seen: dict[int, list] = {}
    for number, wire, value in iter_fields(data, owner):
        f = tdef.by_number.get(number)
        if f is None:
            continue
        _check_wire(f, wire, owner)
        if f.container == "list" and f.type in _SCALAR_WIRE and wire == 2 \
                and _SCALAR_WIRE[f.type] != 2:
            seen.setdefault(number, []).extend(_unpack(f, value))
        else:
            seen.setdefault(number, []).append(value)
    out: dict[str, Any] = {}
    for f in tdef.fields:
        values = seen.get(f.number)
        if f.inline:
            out.update(decode_message(f.type, b"".join(values or ())))
            continue
        name = f.json_name
        if f.container == "list":
            if not values:
                if not f.omitempty:
                    out[name] = None
                continue
            if f.type in SPECIALS:
                out[name] = [_decode_special(f.type, v) for v in values]
            elif f.type in _SCALAR_WIRE:
                out[name] = [_decode_scalar(f.type, 0, v) for v in values]
            else:
                out[name] = [decode_message(f.type, v) for v in values]
            continue
        if f.container == "map":
            if not values:
                if not f.omitempty:
                    out[name] = None
                continue
            entries: dict[str, Any] = {}
            for v in values:
                key, val = _decode_map_entry(f, v)
                entries[key] = val
            out[name] = entries
            continue
        present = values is not None
        if f.type in _SCALAR_WIRE:
            if f.type == "bytes":
                if present:
                    value = _decode_scalar("bytes", 2, values[-1])
                    if not (f.omitempty and value == ""):
                        out[name] = value
                elif not f.omitempty:
                    out[name] = None
                continue
            if present:
                value = _decode_scalar(f.type, 0, values[-1])
            elif f.pointer:
                if not f.omitempty:
                    out[name] = None
                continue
            else:
                value = _zero(f)
            if f.omitempty and not f.pointer and not value:
                continue
            out[name] = value
            continue
        if f.pointer and not present:
            if not f.omitempty:
                out[name] = None
            continue
        if f.type in SPECIALS:
            out[name] = _decode_special(f.type, values[-1] if present else None)
        else:
            out[name] = decode_message(f.type, b"".join(values or ()))
    return out


def _parse_api_version(api_version: str) -> tuple[str, str]:
    if "/" in api_version:
        group, _, version = api_version.partition("/")
        if "/" in version:
            return "", ""
        return group, version
    return "", api_version


def split_envelope(body: bytes) -> tuple[str, str, bytes | None, str, str]:
    """
    Read the envelope: C{(apiVersion, kind, raw, contentEncoding, contentType)}.

    @raise ProtobufError: with upstream's texts (C{empty data}, C{empty body}, a wrong prefix,
        gogo errors of C{runtime.Unknown}).
    """
    if not body:
        raise ProtobufError("empty data")
    if not body.startswith(MAGIC):
        raise ProtobufError(
            "provided data does not appear to be a protobuf message, expected prefix "
            "[107 56 115 0]"
        )
    if len(body) == len(MAGIC):
        raise ProtobufError("empty body")
    api_version = kind = encoding = ctype = ""
    raw = None
    for number, wire, value in iter_fields(body[len(MAGIC):], "Unknown"):
        if number in (1, 2, 3, 4) and wire != 2:
            name = ("TypeMeta", "Raw", "ContentEncoding", "ContentType")[number - 1]
            raise ProtobufError(f"proto: wrong wireType = {wire} for field {name}")
        if number == 1:
            for n2, w2, v2 in iter_fields(value, "TypeMeta"):
                if n2 in (1, 2) and w2 != 2:
                    name = ("APIVersion", "Kind")[n2 - 1]
                    raise ProtobufError(f"proto: wrong wireType = {w2} for field {name}")
                if n2 == 1:
                    api_version = v2.decode("utf-8", "replace")
                elif n2 == 2:
                    kind = v2.decode("utf-8", "replace")
        elif number == 2:
            raw = bytes(value)
        elif number == 3:
            encoding = value.decode("utf-8", "replace")
        elif number == 4:
            ctype = value.decode("utf-8", "replace")
    return api_version, kind, raw, encoding, ctype


def decode(body: bytes, default_gvk: tuple[str, str, str] | None = None) -> dict:
    """
    Decode a protobuf request or response body into the JSON-shaped object.

    @param body: C{k8s\\x00} + C{runtime.Unknown}.
    @param default_gvk: C{(group, version, kind)} the endpoint expects; like upstream's
        C{copyKindDefaults} it fills in a kind or version missing from the envelope, and names
        the target type in error messages.
    @return: C{{"kind": ..., "apiVersion": ..., <fields in Go's JSON order>}}.
    @raise ProtobufDecodeError: 400 on malformed input.
    @raise UnsupportedKindError: 415 for a kind without protobuf tables.
    """
    target = default_gvk[2] if default_gvk else ""
    try:
        api_version, kind, raw, _, _ = split_envelope(body)
    except ProtobufError as e:
        raise ProtobufDecodeError(str(e), None, body, target) from None
    group, version = _parse_api_version(api_version)
    if default_gvk is not None:
        if not kind:
            kind = default_gvk[2]
        if not version and default_gvk[1]:
            group, version = default_gvk[0], default_gvk[1]
    gvk = (group, version, kind)
    if not kind:
        raise ProtobufDecodeError(
            f"Object 'Kind' is missing in 'runtime.TypeMeta{{APIVersion:\"{api_version}\", "
            f"Kind:\"\"}}'", None, body, target)
    if not version:
        raise ProtobufDecodeError(
            f"Object 'apiVersion' is missing in 'runtime.TypeMeta{{APIVersion:\"\", "
            f"Kind:\"{kind}\"}}'", None, body, target)
    type_name = lookup_kind(group, version, kind, protobuf=True)
    if type_name is None:
        raise UnsupportedKindError(group, version, kind)
    try:
        fields = decode_message(type_name, raw or b"")
    except ProtobufError as e:
        raise ProtobufDecodeError(str(e), gvk, body, target) from None
    except RecursionError:
        raise ProtobufDecodeError("proto: message nested too deeply", gvk, body, target) from None
    out: dict[str, Any] = {"kind": kind, "apiVersion": f"{group}/{version}" if group else version}
    out.update(fields)
    return out


def can_encode(group: str, version: str, kind: str) -> bool:
    """Whether kubetwist has protobuf tables for this kind (built-in kinds listed in the types)."""
    return lookup_kind(group, version, kind, protobuf=True) is not None


# --- encoding ------------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    value &= _U64
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _delimited(number: int, payload: bytes) -> bytes:
    return _key(number, 2) + _varint(len(payload)) + payload


def _encode_scalar(number: int, type_name: str, value: Any) -> bytes:
    if type_name == "string":
        return _delimited(number, ("" if value is None else str(value)).encode("utf-8"))
    if type_name == "bytes":
        return _delimited(number, base64.b64decode(value or ""))
    if type_name in ("int32", "int64"):
        return _key(number, 0) + _varint(int(value or 0))
    if type_name == "bool":
        return _key(number, 0) + (b"\x01" if value else b"\x00")
    if type_name == "double":
        return _key(number, 1) + struct.pack("<d", float(value or 0))
    raise AssertionError(type_name)


def _encode_timestamp(seconds: int, nanos: int) -> bytes:
    return _key(1, 0) + _varint(seconds) + _key(2, 0) + _varint(nanos)


def _encode_special(type_name: str, value: Any) -> bytes:
    """The message bytes (without tag and length) of a special type's JSON value."""
    if type_name in ("Time", "MicroTime"):
        seconds, nanos = parse_time(value)
        if seconds == _ZERO_TIME_SECONDS and (type_name == "Time" or nanos // 1000 == 0):
            return b""
        if type_name == "Time":
            return _encode_timestamp(seconds, 0)
        return _encode_timestamp(seconds, nanos // 1000 * 1000)
    if type_name == "Quantity":
        text = "0" if value is None else str(value)
        return _delimited(1, text.encode("utf-8"))
    if type_name == "IntOrString":
        if isinstance(value, str):
            return _key(1, 0) + _varint(1) + _key(2, 0) + _varint(0) + _delimited(3, value.encode())
        return _key(1, 0) + _varint(0) + _key(2, 0) + _varint(int(value or 0)) + _delimited(3, b"")
    if type_name == "Duration":
        ns = parse_duration(value) if isinstance(value, str) else int(value or 0)
        return _key(1, 0) + _varint(ns)
    if type_name == "ExtraValue":
        return b"".join(_delimited(1, str(item).encode("utf-8")) for item in value or ())
    if type_name == "JSON":
        if value is None:
            return b""
        # upstream converts through the internal interface{} with json.Marshal: keys sorted,
        # HTML characters escaped
        return _delimited(1, go_escape(json.dumps(value, separators=(",", ":"), sort_keys=True,
                                                  ensure_ascii=False).encode("utf-8")))
    if type_name in _SCHEMA_UNIONS:
        return _encode_schema_union(type_name, value)
    if type_name in ("RawExtension", "FieldsV1"):
        if value is None:
            return b""
        if isinstance(value, (bytes, bytearray)):
            raw = bytes(value)
        elif (
            type_name == "RawExtension"
            and isinstance(value, dict)
            and isinstance(value.get("kind"), str)
            and isinstance(value.get("apiVersion"), str)
            and can_encode(*_parse_api_version(value["apiVersion"]), value["kind"])
        ):
            raw = encode(value)
        else:
            raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        return _delimited(1, raw)
    raise AssertionError(type_name)


def _encode_schema_union(type_name: str, value: Any) -> bytes:
    """A C{JSONSchemaPropsOr*} message from its JSON value (upstream C{UnmarshalJSON}, then
    the generated marshaller: a bool's C{allows} is always written, C{true} for a schema)."""
    schema_number, other_number = _SCHEMA_UNIONS[type_name]
    if type_name == "JSONSchemaPropsOrBool":
        if isinstance(value, dict):
            return _key(1, 0) + b"\x01" + _delimited(2, encode_message(_SCHEMA, value))
        return _key(1, 0) + (b"\x01" if value else b"\x00")
    if isinstance(value, dict):
        return _delimited(schema_number, encode_message(_SCHEMA, value))
    if isinstance(value, list):
        if type_name == "JSONSchemaPropsOrArray":
            return b"".join(_delimited(2, encode_message(_SCHEMA, item or {})) for item in value)
        return b"".join(_delimited(2, str(item).encode("utf-8")) for item in value)
    return b""


def _encode_value(f: FieldDef, value: Any) -> bytes:
    """One occurrence of field C{f} (a list element, or the single value)."""
    if f.type in SPECIALS:
        return _delimited(f.number, _encode_special(f.type, value))
    if f.type in _SCALAR_WIRE:
        return _encode_scalar(f.number, f.type, value)
    return _delimited(f.number, encode_message(f.type, value or {}))


def _encode_map_value(f: FieldDef, value: Any) -> bytes:
    if f.type in SPECIALS:
        return _delimited(2, _encode_special(f.type, value))
    if f.type in _SCALAR_WIRE:
        if f.type == "bytes" and value is None:
            return b""
        return _encode_scalar(2, f.type, value)
    return _delimited(2, encode_message(f.type, value or {}))


def encode_message(type_name: str, obj: dict) -> bytes:
    """
    Encode a JSON-shaped dict as the message C{type_name} (no envelope), the way the
    gogo-generated C{MarshalToSizedBuffer} writes it.

    @raise ValueError: a value of the wrong shape (text where a number belongs ...).
    """
    tdef = TYPES[type_name]
    out = bytearray()
    for f in tdef.wire_order:
        if f.inline:
            out += _delimited(f.number, encode_message(f.type, obj))
            continue
        value = obj.get(f.json_name)
        if f.container == "list":
            for item in value or ():
                out += _encode_value(f, item)
            continue
        if f.container == "map":
            for key in sorted(value or {}):
                entry = _delimited(1, key.encode("utf-8")) + _encode_map_value(f, value[key])
                out += _delimited(f.number, entry)
            continue
        if value is None and (f.pointer or f.type == "bytes"):
            continue
        out += _encode_value(f, value)
    return bytes(out)


def encode(obj: dict) -> bytes:
    """
    Encode an object (with C{apiVersion} and C{kind}) as a protobuf body: magic + C{Unknown}
    with empty C{contentEncoding}/C{contentType}, as upstream's serializer writes it.

    @raise UnsupportedKindError: the kind has no protobuf tables (check L{can_encode} first).
    """
    api_version = obj.get("apiVersion") or ""
    kind = obj.get("kind") or ""
    group, version = _parse_api_version(api_version)
    type_name = lookup_kind(group, version, kind, protobuf=True)
    if type_name is None:
        raise UnsupportedKindError(group, version, kind)
    type_meta = _delimited(1, api_version.encode()) + _delimited(2, kind.encode())
    raw = encode_message(type_name, obj)
    return MAGIC + _delimited(1, type_meta) + _delimited(2, raw) + _delimited(3, b"") + \
        _delimited(4, b"")


def encode_watch_frame(ev_type: str, obj: dict) -> bytes:
    """
    One frame of a protobuf watch stream (upstream C{protobuf.LengthDelimitedFramer} over a
    C{metav1.WatchEvent}): a 4-byte big-endian length, then the C{WatchEvent} message without
    envelope, C{{1: type, 2: RawExtension{1: raw}}}, C{raw} being the object's enveloped body
    (L{encode}), or its JSON when the kind has no protobuf tables.
    """
    group, version = _parse_api_version(obj.get("apiVersion") or "")
    if can_encode(group, version, obj.get("kind") or ""):
        raw = encode(obj)
    else:
        raw = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    message = _delimited(1, ev_type.encode("utf-8")) + _delimited(2, _delimited(1, raw))
    return struct.pack(">I", len(message)) + message
