# -*- test-case-name: tests.storage.test_value_config -*-
"""
C{--encryption-provider-config}: upstream
C{k8s.io/apiserver/pkg/server/options/encryptionconfig/config.go} (C{LoadEncryptionConfig}:
read, strict decode, validate, build one transformer per group-resource) and
C{pkg/apis/apiserver/validation/validation_encryption.go} (C{ValidateEncryptionConfiguration}).

The file is an C{EncryptionConfiguration} of C{apiserver.config.k8s.io/v1} (or the legacy
C{kind: EncryptionConfig}, C{apiVersion: v1}), YAML or JSON::

    resources:
    - resources: [secrets, configmaps, "*.apps", "*.*"]
      providers:
      - aescbc: {keys: [{name: key2, secret: <base64 of 16/24/32 bytes>}, {name: key1, ...}]}
      - aesgcm: {keys: [...]}
      - secretbox: {keys: [{name: k, secret: <base64 of 32 bytes>}]}
      - identity: {}

The first provider (and its first key) encrypts; every provider and key decrypts; a value
read through any other one is stale.  KMS providers are parsed and validated, then refused:
kubetwist has no KMS plugin client.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import yaml

from kubetwist.runtime import field, gofmt
from kubetwist.runtime.gofmt import json_kind
from kubetwist.storage.value.encrypt import (
    AES_KEY_SIZES,
    SECRETBOX_KEY_SIZES,
    AESCBCTransformer,
    AESGCMTransformer,
    IdentityTransformer,
    SecretboxTransformer,
)
from kubetwist.storage.value.transformer import (
    ITransformer,
    PrefixTransformers,
    ResourceTransformers,
    format_group_resource,
)

GROUP_VERSION = "apiserver.config.k8s.io/v1"
KIND = "EncryptionConfiguration"
#: The legacy form upstream still decodes.
LEGACY = ("v1", "EncryptionConfig")

AESCBC_PREFIX = b"k8s:enc:aescbc:v1:"
AESGCM_PREFIX = b"k8s:enc:aesgcm:v1:"
SECRETBOX_PREFIX = b"k8s:enc:secretbox:v1:"

_PROVIDERS = ("aesgcm", "aescbc", "secretbox", "identity", "kms")

# upstream validation messages
_AT_LEAST_ONE = "at least one {} is required"
_MANDATORY = "{} is a mandatory field for a {}"
_KEY_LEN = "secret is not of the expected length, got {}, expected one of {}"
_BASE64 = "secrets must be base64 encoded"
_MORE_THAN_ONE = ("more than one provider specified in a single element, should split into "
                  "different list elements")
_NO_PROVIDER = ("provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, "
                "Secretbox, Identity")
_EVENTS_GROUP = ("'*.events.k8s.io' objects are stored using the 'events' API group in etcd. "
                 "Use 'events' instead in the config file")
_EXTENSIONS_GROUP = "'extensions' group has been removed and cannot be used for encryption"
_STAR_RESOURCE = ("use '*.' to encrypt all the resources from core API group or *.* to encrypt "
                  "all resources")
_OVERLAP = ("using overlapping resources such as 'secrets' and '*.' in the same resource list "
            "is not allowed as they will be masked")
_NON_REST = "resources which do not have REST API/s cannot be encrypted"
_CAPITAL = "resource name should not contain capital letters"
_ACROSS_GROUPS = "encrypting the same resource across groups is not supported"
_DUPLICATE = "the same resource cannot be specified multiple times"


class EncryptionConfigError(Exception):
    """
    The file cannot be used; C{str()} is upstream's message, e.g.
    C{error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: Invalid value:
    "REDACTED": secret is not of the expected length, got 8, expected one of [16 24 32]}.
    """


def load_encryption_config(path: str) -> ResourceTransformers:
    """
    Upstream C{LoadEncryptionConfig}: read, decode, validate and build the transformers of the
    EncryptionConfiguration at C{path}.  Blocking file I/O: call it at start-up (or in a
    thread).

    @return: the L{ResourceTransformers} to give the storage.
    @raise EncryptionConfigError: unreadable, empty, undecodable or invalid (C{error while
        parsing file: ...}), or the providers cannot be built (C{error while building
        transformers: ...}).
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise EncryptionConfigError(
            f"error while parsing file: error while loading file: error reading encryption "
            f"provider configuration file {_q(path)}: open {path}: "
            f"{(e.strerror or str(e)).lower()}"
        ) from None
    if not data:
        raise EncryptionConfigError(
            f"error while parsing file: error while loading file: encryption provider "
            f"configuration file {_q(path)} is empty"
        )
    return parse_encryption_config(data, path)


def parse_encryption_config(data: bytes, path: str = "") -> ResourceTransformers:
    """L{load_encryption_config} of the file's bytes C{data} (C{path} only names it)."""
    try:
        config = decode(data)
    except ValueError as e:
        raise EncryptionConfigError(
            f"error while parsing file: error decoding encryption provider configuration file "
            f"{_q(path)}: {e}"
        ) from None
    errors = validate(config)
    if errors:
        raise EncryptionConfigError(f"error while parsing file: {_aggregate(errors)}")
    try:
        transformers = build_transformers(config)
    except ValueError as e:
        raise EncryptionConfigError(f"error while building transformers: {e}") from None
    return ResourceTransformers(transformers)


# --- decoding ---------------------------------------------------------------------------------

#: The v1 schema for strict decoding: field -> (Go type name, nested schema or element kind).
_KEY = {"name": "string", "secret": "string"}
_KEYS = {"keys": ("[]v1.Key", _KEY)}
_KMS = {"apiVersion": "string", "name": "string", "cachesize": "int32", "endpoint": "string",
        "timeout": "Duration"}
_IDENTITY: dict = {}
_PROVIDER = {"aesgcm": ("*v1.AESConfiguration", _KEYS), "aescbc": ("*v1.AESConfiguration", _KEYS),
             "secretbox": ("*v1.SecretboxConfiguration", _KEYS),
             "identity": ("*v1.IdentityConfiguration", _IDENTITY),
             "kms": ("*v1.KMSConfiguration", _KMS)}
_RESOURCE = {"resources": "[]string", "providers": ("[]v1.ProviderConfiguration", _PROVIDER)}
_TOP = {"kind": "string", "apiVersion": "string",
        "resources": ("[]v1.ResourceConfiguration", _RESOURCE)}
_STRUCT_NAMES = {id(_TOP): "EncryptionConfiguration", id(_RESOURCE): "ResourceConfiguration",
                 id(_PROVIDER): "ProviderConfiguration", id(_KEYS): "AESConfiguration",
                 id(_KEY): "Key", id(_KMS): "KMSConfiguration",
                 id(_IDENTITY): "IdentityConfiguration"}


def decode(data: bytes) -> dict:
    """
    The configuration as a dict, decoded strictly as upstream's codec does: a known
    C{apiVersion}/C{kind}, the right types, no unknown fields.

    @raise ValueError: with upstream's message (C{strict decoding error: unknown field
        "resources[0].providers[3].kms.pandas"}, C{no kind "X" is registered for version "Y"},
        C{json: cannot unmarshal ...}).
    """
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError as e:
        raise ValueError(f"error converting YAML to JSON: {_one_line(str(e))}") from None
    if not isinstance(doc, dict):
        raise ValueError(  # noqa: TRY004 (a decoding error, like the others)
            f"couldn't get version/kind; json parse error: cannot unmarshal "
            f"{json_kind(doc)} into Go value of type struct")
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if not kind:
        raise ValueError("Object 'Kind' is missing in the document")
    if not api_version:
        raise ValueError("Object 'apiVersion' is missing in the document")
    if (api_version, kind) not in ((GROUP_VERSION, KIND), LEGACY):
        raise ValueError(f"no kind {_q(str(kind))} is registered for version "
                         f"{_q(str(api_version))}")
    unknown: list[str] = []
    _check_types(doc, _TOP, "", "EncryptionConfiguration", unknown)
    if unknown:
        raise ValueError("strict decoding error: " +
                         ", ".join(f"unknown field {_q(u)}" for u in unknown))
    return doc


def _check_types(value: Any, schema: dict, path: str, struct: str, unknown: list[str]) -> None:
    for name, item in value.items():
        where = f"{path}.{name}" if path else str(name)
        spec = schema.get(name)
        if spec is None:
            unknown.append(where)
            continue
        member = item
        if member is None:
            continue
        type_name, nested = spec if isinstance(spec, tuple) else (spec, None)
        go_field = f"{struct}.{where}"
        if type_name.startswith("[]"):
            if not isinstance(member, list):
                raise _unmarshal(member, go_field, type_name)
            for i, element in enumerate(member):
                if nested is None:
                    if not isinstance(element, str):
                        raise _unmarshal(element, go_field, "string")
                elif element is not None:
                    if not isinstance(element, dict):
                        raise _unmarshal(element, go_field, type_name[2:])
                    _check_types(element, nested, f"{where}[{i}]",
                                 _STRUCT_NAMES[id(nested)], unknown)
        elif nested is not None:
            if not isinstance(member, dict):
                raise _unmarshal(member, go_field, type_name.lstrip("*"))
            _check_types(member, nested, where, _STRUCT_NAMES[id(nested)], unknown)
        elif type_name == "int32":
            if not isinstance(member, int) or isinstance(member, bool):
                raise _unmarshal(member, go_field, "int32")
        elif type_name == "string" and not isinstance(member, str):
            raise _unmarshal(member, go_field, "string")


def _unmarshal(value: Any, go_field: str, type_name: str) -> ValueError:
    # upstream: encoding/json's UnmarshalTypeError
    return ValueError(f"json: cannot unmarshal {json_kind(value)} into Go struct field "
                      f"{go_field} of type {type_name}")


# --- validation -------------------------------------------------------------------------------

def parse_group_resource(text: str) -> tuple[str, str]:
    """Upstream C{schema.ParseGroupResource}: C{deployments.apps} -> C{("apps", "deployments")}."""
    resource, dot, group = text.partition(".")
    return (group, resource) if dot else ("", text)


def validate(config: dict) -> list[str]:
    """
    Upstream C{ValidateEncryptionConfiguration} (reload false): the error messages, in
    upstream's order; empty when valid.
    """
    root = field.Path("resources")
    resources = config.get("resources") or []
    if not resources:
        return [field.required(root, _AT_LEAST_ONE.format(root)).error()]
    errors: list[str] = []
    kms_names: set[str] = set()
    for i, conf in enumerate(resources):
        conf = conf or {}
        r = root.index(i).child("resources")
        p = root.index(i).child("providers")
        names = conf.get("resources") or []
        if not names:
            errors.append(field.required(r, _AT_LEAST_ONE.format(r)).error())
        errors.extend(_validate_overlap(names, r))
        errors.extend(_validate_names(names, r))
        providers = conf.get("providers") or []
        if not providers:
            errors.append(field.required(p, _AT_LEAST_ONE.format(p)).error())
        for j, provider in enumerate(providers):
            path = p.index(j)
            provider = provider or {}
            present = [k for k in _PROVIDERS if provider.get(k) is not None]
            if not present:
                errors.append(f"{path}: Invalid value: {_go_provider(provider)}: {_NO_PROVIDER}")
            elif len(present) > 1:
                errors.append(f"{path}: Invalid value: {_go_provider(provider)}: {_MORE_THAN_ONE}")
            if provider.get("kms") is not None:
                errors.extend(_validate_kms(provider["kms"], path.child("kms"), kms_names))
                kms_names.add(provider["kms"].get("name") or "")
            elif provider.get("aesgcm") is not None:
                errors.extend(_validate_keys(provider["aesgcm"].get("keys") or [],
                                             path.child("aesgcm", "keys"), AES_KEY_SIZES))
            elif provider.get("aescbc") is not None:
                errors.extend(_validate_keys(provider["aescbc"].get("keys") or [],
                                             path.child("aescbc", "keys"), AES_KEY_SIZES))
            elif provider.get("secretbox") is not None:
                errors.extend(_validate_keys(provider["secretbox"].get("keys") or [],
                                             path.child("secretbox", "keys"),
                                             SECRETBOX_KEY_SIZES))
    return errors


def _validate_overlap(names: list[str], path: field.Path) -> list[str]:
    if len(names) < 2:
        return []
    parsed = [parse_group_resource(n) for n in names]
    duplicate = overlap = False
    for i, (g1, r1) in enumerate(parsed):
        for j, (g2, r2) in enumerate(parsed):
            if i == j:
                continue
            if (g1, r1) == (g2, r2) and not duplicate:
                duplicate = True
                continue
            if overlap:
                continue
            if (g1, r1) == ("*", "*"):
                overlap = True
                continue
            if g1 != g2:
                continue
            if r1 == "*" or r2 == "*":
                overlap = True
    errors = []
    if duplicate:
        errors.append(f"{path}: Invalid value: {_go_strings(names)}: {_DUPLICATE}")
    if overlap:
        errors.append(f"{path}: Invalid value: {_go_strings(names)}: {_OVERLAP}")
    return errors


def _validate_names(names: list[str], path: field.Path) -> list[str]:
    errors = []
    for j, name in enumerate(names):
        group, resource = parse_group_resource(name)
        detail = None
        if name != name.lower():
            detail = _CAPITAL
        elif name == "*":
            detail = _STAR_RESOURCE
        elif name in ("apiserveripinfo", "serviceipallocations", "servicenodeportallocations"):
            detail = _NON_REST
        elif group == "events.k8s.io":
            detail = _EVENTS_GROUP
        elif group == "extensions":
            detail = _EXTENSIONS_GROUP
        elif group == "*" and resource != "*":
            detail = _ACROSS_GROUPS
        if detail is not None:
            errors.append(field.invalid(path.index(j), name, detail).error())
    return errors


def _validate_keys(keys: list, path: field.Path, sizes: tuple[int, ...]) -> list[str]:
    if not keys:
        return [field.required(path, _AT_LEAST_ONE.format("keys")).error()]
    errors = []
    for i, key in enumerate(keys):
        key = key or {}
        where = path.index(i)
        if not key.get("name"):
            errors.append(field.required(where.child("name"),
                                         _MANDATORY.format("name", "key")).error())
        if not key.get("secret"):
            errors.append(field.required(where.child("secret"),
                                         _MANDATORY.format("secret", "key")).error())
            continue
        secret = _b64(key["secret"])
        if secret is None:
            errors.append(field.invalid(where.child("secret"), "REDACTED", _BASE64).error())
        elif len(secret) not in sizes:
            expected = "[" + " ".join(str(s) for s in sizes) + "]"
            errors.append(field.invalid(where.child("secret"), "REDACTED",
                                        _KEY_LEN.format(len(secret), expected)).error())
    return errors


def _validate_kms(kms: dict, path: field.Path, names: set[str]) -> list[str]:
    errors = []
    name = kms.get("name") or ""
    if not name:
        errors.append(field.required(path.child("name"),
                                     _MANDATORY.format("name", "provider")).error())
    elif ":" in name:
        errors.append(field.invalid(path.child("name"), name,
                                    f"invalid KMS provider name {name}, must not contain ':'")
                      .error())
    elif name in names:
        errors.append(field.invalid(path.child("name"), name,
                                    f"duplicate KMS provider name {name}, names must be unique")
                      .error())
    if not kms.get("endpoint"):
        errors.append(field.invalid(path.child("endpoint"), "",
                                    _MANDATORY.format("endpoint", "provider")).error())
    version = kms.get("apiVersion") or "v1"
    if version not in ("v1", "v2"):
        errors.append(field.invalid(path.child("apiVersion"), version,
                                    "unsupported apiVersion apiVersion for KMS provider, only v1 "
                                    "and v2 are supported").error())
    return errors


def _b64(text: str) -> bytes | None:
    """Go's C{base64.StdEncoding.DecodeString} (padding required; CR/LF ignored)."""
    try:
        return base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return None


def _go_strings(values: list[str]) -> str:
    """Go's C{%#v} of a C{[]string}."""
    return gofmt.string_slice(values)


def _go_provider(provider: dict) -> str:
    """Go's C{%#v} of a C{ProviderConfiguration} (set pointers shown as C{&{...}})."""
    types = [("AESGCM", "aesgcm", "AESConfiguration"), ("AESCBC", "aescbc", "AESConfiguration"),
             ("Secretbox", "secretbox", "SecretboxConfiguration"),
             ("Identity", "identity", "IdentityConfiguration"), ("KMS", "kms", "KMSConfiguration")]
    parts = []
    for go_name, key, go_type in types:
        shown = "nil" if provider.get(key) is None else "&{...}"
        parts.append(f"{go_name}:(*apiserver.{go_type})({shown})")
    return "apiserver.ProviderConfiguration{" + ", ".join(parts) + "}"


def _aggregate(errors: list[str]) -> str:
    unique: list[str] = []
    for e in errors:
        if e not in unique:
            unique.append(e)
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


_q = gofmt.quote


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --- building ---------------------------------------------------------------------------------

def build_transformers(config: dict) -> dict[tuple[str, str], ITransformer]:
    """
    Upstream C{getTransformerOverridesAndKMSPluginHealthzCheckers}: C{{(group, resource):
    PrefixTransformers}} for a validated configuration.  A resource listed in several entries
    gets the providers of all of them, in order.

    @raise ValueError: C{resource "secrets" is masked by earlier rule "*."}; a KMS provider.
    """
    lists: dict[tuple[str, str], list[tuple[bytes, ITransformer]]] = {}
    for conf in config["resources"]:
        providers = [_provider(p) for p in conf["providers"]]
        for name in conf["resources"]:
            gr = parse_group_resource(name)
            for rule in ((gr[0], "*"), ("*", "*")):
                if rule in lists:
                    raise ValueError(f"resource {_q(_yaml_gr(gr))} is masked by earlier rule "
                                     f"{_q(_yaml_gr(rule))}")
            lists.setdefault(gr, []).extend(providers)
    return {gr: PrefixTransformers("no matching prefix found", entries)
            for gr, entries in lists.items()}


def _yaml_gr(gr: tuple[str, str]) -> str:
    """Upstream C{grYAMLString}: C{*.} for every core resource."""
    return "*." if gr == ("", "*") else format_group_resource(*gr)


def _provider(provider: dict) -> tuple[bytes, ITransformer]:
    if provider.get("aesgcm") is not None:
        return AESGCM_PREFIX, _keyed(provider["aesgcm"], AESGCMTransformer, "AES")
    if provider.get("aescbc") is not None:
        return AESCBC_PREFIX, _keyed(provider["aescbc"], AESCBCTransformer, "AES")
    if provider.get("secretbox") is not None:
        return SECRETBOX_PREFIX, _keyed(provider["secretbox"], SecretboxTransformer, "Secretbox")
    if provider.get("identity") is not None:
        return b"", IdentityTransformer()
    name = (provider.get("kms") or {}).get("name", "")
    raise ValueError(f"KMS provider {_q(name)}: KMS plugins are not supported by kubetwist; "
                     f"use aescbc, aesgcm or secretbox")


def _keyed(conf: dict, cls: Any, label: str) -> PrefixTransformers:
    entries: list[tuple[bytes, ITransformer]] = []
    for key in conf["keys"]:
        entries.append(((key["name"] + ":").encode(), cls(_b64(key["secret"]))))
    return PrefixTransformers(
        f"no matching key was found for the provided {label} transformer", entries
    )


def with_encryption_config(storage: Any, path: str | None) -> Any:
    """
    Give C{storage} (a L{kubetwist.storage.kv.KVStorageBase}) the transformers of the
    EncryptionConfiguration at C{path} (C{--encryption-provider-config}); no C{path}: leave it
    storing values as they are.

    @return: C{storage}.
    @raise EncryptionConfigError: see L{load_encryption_config}.
    """
    if path:
        storage.transformer = load_encryption_config(path)
    return storage
