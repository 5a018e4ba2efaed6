# -*- test-case-name: tests.apis.test_core_secrets -*-
"""
ConfigMaps: upstream C{pkg/apis/core/validation} (C{ValidateConfigMap*}) and
C{pkg/registry/core/configmap/strategy.go}.

C{binaryData} is base64 text on the wire; its size is counted on the decoded bytes, as upstream
counts C{len([]byte)}.
"""

from __future__ import annotations

import base64
import binascii

from kubetwist.apimachinery.validation import (
    is_config_map_key,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.common import validate_config_map_name
from kubetwist.apis.core.printers import CONFIGMAP_TABLE
from kubetwist.registry.rest import Strategy
from kubetwist.runtime.field import FieldError, Path, forbidden, invalid, too_long

__all__ = [
    "CONFIGMAP_STRATEGY",
    "MAX_SECRET_SIZE",
    "validate_config_map",
    "validate_config_map_update",
]

#: Upstream C{core.MaxSecretSize}: 1 MiB, for Secrets and ConfigMaps alike.
MAX_SECRET_SIZE = 1 * 1024 * 1024

_IMMUTABLE_DETAIL = "field is immutable when `immutable` is set"


def _decoded_len(value: object) -> int:
    """Length in bytes of a base64 wire value (of its text when it does not decode)."""
    if not isinstance(value, str):
        return 0
    try:
        return len(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        return len(value.encode())


def _decoded(value: object) -> bytes:
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value.encode()


# --------------------------------------------------------------------------------------------
# ConfigMap


def validate_config_map(cm: dict) -> list[FieldError]:
    """
    Upstream C{ValidateConfigMap}: ObjectMeta (DNS subdomain name); every key of C{data} and
    C{binaryData} a valid config key; no key in both; total size at most 1 MiB (error at the
    empty path, as upstream).
    """
    errs = validate_object_meta(
        cm.get("metadata") or {}, True, validate_config_map_name, Path("metadata")
    )
    data = cm.get("data") or {}
    binary = cm.get("binaryData") or {}
    total = 0
    for key in sorted(data):
        errs.extend(invalid(Path("data").key(key), key, m) for m in is_config_map_key(key))
        if key in binary:
            errs.append(
                invalid(Path("data").key(key), key, "duplicate of key present in binaryData")
            )
        value = data[key]
        total += len(value.encode()) if isinstance(value, str) else 0
    for key in sorted(binary):
        errs.extend(invalid(Path("binaryData").key(key), key, m) for m in is_config_map_key(key))
        total += _decoded_len(binary[key])
    if total > MAX_SECRET_SIZE:
        errs.append(too_long(Path(""), "", MAX_SECRET_SIZE))
    return errs


def validate_config_map_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateConfigMapUpdate}: ObjectMeta update rules; once C{immutable} is true,
    C{immutable}, C{data} and C{binaryData} may not change; then L{validate_config_map}.
    """
    errs = validate_object_meta_update(
        new.get("metadata") or {}, old.get("metadata") or {}, Path("metadata")
    )
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errs.append(forbidden(Path("immutable"), _IMMUTABLE_DETAIL))
        if (new.get("data") or {}) != (old.get("data") or {}):
            errs.append(forbidden(Path("data"), _IMMUTABLE_DETAIL))
        if new.get("binaryData") != old.get("binaryData"):
            errs.append(forbidden(Path("binaryData"), _IMMUTABLE_DETAIL))
    errs.extend(validate_config_map(new))
    return errs


CONFIGMAP_STRATEGY = Strategy(
    kind="ConfigMap",
    validate=validate_config_map,
    validate_update=validate_config_map_update,
    table=CONFIGMAP_TABLE,
    allow_create_on_update=False,
    allow_unconditional_update=True,
)
