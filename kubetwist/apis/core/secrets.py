# -*- test-case-name: tests.apis.test_core_secrets -*-
"""
Secrets: upstream C{pkg/apis/core/v1/defaults.go} (C{SetDefaults_Secret}),
C{pkg/apis/core/v1/conversion.go} (C{stringData} folded into C{data}),
C{pkg/apis/core/validation} (C{ValidateSecret*}) and C{pkg/registry/core/secret/strategy.go}.

C{data} is base64 text on the wire; sizes are counted on the decoded bytes, as upstream counts
C{len([]byte)}.
"""

from __future__ import annotations

import base64
import json

from kubetwist.apimachinery.validation import (
    is_config_map_key,
    validate_immutable_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.common import validate_secret_name
from kubetwist.apis.core.configmaps import MAX_SECRET_SIZE, _decoded, _decoded_len
from kubetwist.apis.core.printers import SECRET_TABLE
from kubetwist.registry.rest import Strategy
from kubetwist.runtime import gofmt
from kubetwist.runtime.field import FieldError, Path, forbidden, invalid, required, too_long

__all__ = [
    "SECRET_STRATEGY",
    "default_secret",
    "prepare_secret_for_update",
    "secret_field_attrs",
    "validate_secret",
    "validate_secret_update",
]

_IMMUTABLE_DETAIL = "field is immutable when `immutable` is set"

SECRET_TYPE_OPAQUE = "Opaque"
SECRET_TYPE_SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
SECRET_TYPE_DOCKERCFG = "kubernetes.io/dockercfg"
SECRET_TYPE_DOCKER_CONFIG_JSON = "kubernetes.io/dockerconfigjson"
SECRET_TYPE_BASIC_AUTH = "kubernetes.io/basic-auth"
SECRET_TYPE_SSH_AUTH = "kubernetes.io/ssh-auth"
SECRET_TYPE_TLS = "kubernetes.io/tls"
SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"


def default_secret(secret: dict) -> None:
    """
    Upstream C{SetDefaults_Secret} (C{type} C{Opaque} when empty) and the v1-to-internal
    conversion, which writes each C{stringData} entry into C{data} (base64, overriding) and
    drops C{stringData}.
    """
    if not secret.get("type"):
        secret["type"] = SECRET_TYPE_OPAQUE
    string_data = secret.pop("stringData", None)
    if string_data:
        data = secret.get("data")
        if not isinstance(data, dict):
            data = secret["data"] = {}
        for key in sorted(string_data):
            value = string_data[key]
            data[key] = base64.b64encode((value or "").encode()).decode()


def prepare_secret_for_update(new: dict, old: dict) -> None:
    """Upstream C{PrepareForUpdate}: an empty C{type} keeps the old one."""
    if not new.get("type"):
        new["type"] = old.get("type") or ""


def _go_json_error(raw: bytes) -> str | None:
    """
    Whether C{raw} unmarshals into a Go C{map[string]interface{}}; the Go error text if not
    (the common cases of C{encoding/json}'s messages).
    """
    text = raw.decode("utf-8", "replace")
    stripped = text.strip(" \t\r\n")
    if not stripped:
        return "unexpected end of JSON input"
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError as e:
        if e.pos >= len(stripped):
            return "unexpected end of JSON input"
        ch = stripped[e.pos]
        context = "looking for beginning of value" if e.pos == 0 else "after top-level value"
        if e.pos and e.msg.startswith("Expecting"):
            context = "looking for beginning of value"
        return f"invalid character {_go_char(ch)} {context}"
    kinds = {list: "array", str: "string", bool: "bool", int: "number", float: "number"}
    if value is None or isinstance(value, dict):
        return None
    return (f"json: cannot unmarshal {kinds[type(value)]} into Go value of type "
            f"map[string]interface {{}}")


_go_char = gofmt.quote_char


def validate_secret(secret: dict) -> list[FieldError]:
    """
    Upstream C{ValidateSecret}: ObjectMeta (DNS subdomain name), config-key data keys, total
    size at most 1 MiB, and the keys each built-in C{type} requires (service-account-token:
    the C{kubernetes.io/service-account.name} annotation; dockercfg/dockerconfigjson: a JSON
    object; basic-auth: C{username} or C{password}; ssh-auth: C{ssh-privatekey}; tls:
    C{tls.crt} and C{tls.key}).
    """
    meta = secret.get("metadata") or {}
    errs = validate_object_meta(meta, True, validate_secret_name, Path("metadata"))
    data_path = Path("data")
    data = secret.get("data") or {}
    total = 0
    for key in sorted(data):
        errs.extend(invalid(data_path.key(key), key, m) for m in is_config_map_key(key))
        total += _decoded_len(data[key])
    if total > MAX_SECRET_SIZE:
        errs.append(too_long(data_path, "", MAX_SECRET_SIZE))

    stype = secret.get("type") or ""
    if stype == SECRET_TYPE_SERVICE_ACCOUNT_TOKEN:
        if not (meta.get("annotations") or {}).get(SERVICE_ACCOUNT_NAME_KEY):
            errs.append(required(Path("metadata", "annotations").key(SERVICE_ACCOUNT_NAME_KEY)))
    elif stype in (SECRET_TYPE_DOCKERCFG, SECRET_TYPE_DOCKER_CONFIG_JSON):
        key = ".dockercfg" if stype == SECRET_TYPE_DOCKERCFG else ".dockerconfigjson"
        if key not in data:
            errs.append(required(data_path.key(key)))
        else:
            problem = _go_json_error(_decoded(data[key]))
            if problem is not None:
                errs.append(invalid(data_path.key(key), "<secret contents redacted>", problem))
    elif stype == SECRET_TYPE_BASIC_AUTH:
        if "username" not in data and "password" not in data:
            errs.append(required(data_path.key("username")))
            errs.append(required(data_path.key("password")))
    elif stype == SECRET_TYPE_SSH_AUTH:
        if not _decoded(data.get("ssh-privatekey")):
            errs.append(required(data_path.key("ssh-privatekey")))
    elif stype == SECRET_TYPE_TLS:
        if "tls.crt" not in data:
            errs.append(required(data_path.key("tls.crt")))
        if "tls.key" not in data:
            errs.append(required(data_path.key("tls.key")))
    return errs


def validate_secret_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateSecretUpdate}: ObjectMeta update rules, C{type} immutable, C{immutable}
    and C{data} frozen once C{immutable} is true, then L{validate_secret}.
    """
    errs = validate_object_meta_update(
        new.get("metadata") or {}, old.get("metadata") or {}, Path("metadata")
    )
    errs.extend(
        validate_immutable_field(new.get("type") or "", old.get("type") or "", Path("type"))
    )
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errs.append(forbidden(Path("immutable"), _IMMUTABLE_DETAIL))
        if new.get("data") != old.get("data"):
            errs.append(forbidden(Path("data"), _IMMUTABLE_DETAIL))
    errs.extend(validate_secret(new))
    return errs


def secret_field_attrs(secret: dict) -> dict[str, str]:
    """Upstream secret C{SelectableFields}: C{type}."""
    return {"type": secret.get("type") or ""}


SECRET_STRATEGY = Strategy(
    kind="Secret",
    default=default_secret,
    prepare_for_update=prepare_secret_for_update,
    validate=validate_secret,
    validate_update=validate_secret_update,
    field_attrs=secret_field_attrs,
    table=SECRET_TABLE,
    allow_create_on_update=False,
    allow_unconditional_update=True,
)
