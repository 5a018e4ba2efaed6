# -*- test-case-name: tests.storage.test_continuetoken -*-
"""
Keys, continue tokens and resourceVersion rules shared by the key-value backends: upstream
C{k8s.io/apiserver/pkg/storage} (C{continue.go}, C{interfaces.go} C{ValidateListOptions} /
C{PrepareKey}).  The shared IStorage algorithms built on them live in L{kubetwist.storage.kv}.
"""

from __future__ import annotations

import base64
import binascii
import json

from kubetwist.runtime.codec import go_json_error
from kubetwist.storage.interfaces import (
    InvalidContinueError,
    StorageError,
    TooLargeResourceVersionError,
)

#: Upstream C{maxLimit}: the largest page a filtered list asks the backend for.
MAX_LIMIT = 10000

#: Upstream etcd3 C{expired}: the message of an exact list at a compacted revision.
LIST_EXPIRED_MESSAGE = "The resourceVersion for the provided list is too old."

#: Upstream etcd3 C{inconsistentContinue}: the message of a continue at a compacted revision.
INCONSISTENT_CONTINUE_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list."
)


class InvalidResourceVersionError(InvalidContinueError):
    """
    A resourceVersion that is not a decimal revision (upstream answers 400 BadRequest
    C{invalid resource version: ...}); a subclass of L{InvalidContinueError} so the API maps it
    to 400 the same way.
    """


class CompactedError(StorageError):
    """Backend primitive failure: the requested revision was compacted (C{revision}: compact)."""


class FutureRevisionError(StorageError):
    """Backend primitive failure: the requested revision is newer than the store's."""


# --- keys ----------------------------------------------------------------------------------------

def normalize_prefix(prefix: str) -> str:
    """C{"/registry/"} or C{"registry"} -> C{"/registry"}; C{""} or C{"/"} -> C{""}."""
    stripped = prefix.strip("/")
    return "/" + stripped if stripped else ""


def prepare_key(prefix: str, key: str, recursive: bool = False) -> str:
    """
    The backend key of caller key C{key} (upstream C{storage.PrepareKey} plus the etcd prefix).

    C{prefix} is a L{normalize_prefix} result.  A key that already starts with C{prefix + "/"}
    is taken as-is (so C{/registry/pods/a} and C{/pods/a} name the same key under the default
    prefix); otherwise C{prefix} is prepended.  C{recursive} appends a C{/} when missing, so
    C{/pods/a} never matches C{/pods/ab/x}.

    @raise ValueError: for empty keys and keys with C{.} or C{..} segments (upstream
        C{invalid key: "..."} / C{empty key: "..."}).
    """
    if key in ("..", ".") or key.startswith(("../", "./")) or key.endswith(("/..", "/.")) \
            or "/../" in key or "/./" in key:
        raise ValueError(f"invalid key: {json.dumps(key)}")
    if key in ("", "/"):
        raise ValueError(f"empty key: {json.dumps(key)}")
    if not key.startswith("/"):
        key = "/" + key
    if recursive and not key.endswith("/"):
        key += "/"
    if prefix and not (key.startswith(prefix + "/")):
        key = prefix + key
    return key


def prefix_range_end(prefix: bytes) -> bytes:
    """etcd's C{GetPrefixRangeEnd}: the smallest key greater than every key starting C{prefix}."""
    end = bytearray(prefix)
    for i in range(len(end) - 1, -1, -1):
        if end[i] < 0xFF:
            end[i] += 1
            return bytes(end[: i + 1])
    return b"\x00"  # whole keyspace


def key_bytes(key: str) -> bytes:
    """Encode a key for a backend (UTF-8; invalid surrogates round-trip)."""
    return key.encode("utf-8", "surrogateescape")


def key_text(raw: bytes) -> str:
    """Decode a backend key (inverse of L{key_bytes})."""
    return raw.decode("utf-8", "surrogateescape")


# --- continue tokens (upstream storage/continue.go) -----------------------------------------------

def _go_json(value: dict) -> bytes:
    """C{json.Marshal}'s bytes for a flat dict of str/int: compact, HTML-escaped, UTF-8."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text.encode("utf-8", "surrogateescape")


def _go_path_clean(path: str) -> str:
    """Go's C{path.Clean} for an absolute path."""
    out: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if out:
                out.pop()
            continue
        out.append(part)
    return "/" + "/".join(out)


def encode_continue(key: str, key_prefix: str, resource_version: int) -> str:
    """
    Upstream C{EncodeContinue}: unpadded URL-safe base64 of
    C{{"v":"meta.k8s.io/v1","rv":<int>,"start":"<key without key_prefix>"}}.

    @raise ValueError: C{key} does not start with C{key_prefix}.
    """
    if not key_prefix or not key.startswith(key_prefix):
        raise ValueError("unable to encode next field: the key and key prefix do not match")
    token = {"v": "meta.k8s.io/v1", "rv": resource_version, "start": key[len(key_prefix):]}
    return base64.urlsafe_b64encode(_go_json(token)).rstrip(b"=").decode("ascii")


def decode_continue(token: str, key_prefix: str) -> tuple[str, int]:
    """
    Upstream C{DecodeContinue}: the absolute start key and the revision of C{token}.

    @raise InvalidContinueError: with upstream's C{continue key is not valid...} message.
    """
    generic = "continue key is not valid"
    try:
        raw = token.encode("ascii")
        raw = raw.replace(b"+", b"-").replace(b"/", b"_").rstrip(b"=")
        data = base64.urlsafe_b64decode(raw + b"=" * (-len(raw) % 4))
        try:
            parsed = json.loads(data.decode("utf-8", "surrogateescape"))
        except json.JSONDecodeError as e:
            # Go's encoding/json wording, a byte outside printable ASCII as \xNN
            # (kube-apiserver v1.32: tests/vectors/core.jsonl cm-list-bad-continue)
            text = go_json_error(data, e)
            raise ValueError("".join(c if " " <= c < "\x7f" else f"\\x{ord(c):02x}"
                                     for c in text)) from None
        if not isinstance(parsed, dict):
            raise ValueError("not an object")
    except (UnicodeError, binascii.Error, ValueError) as e:
        raise InvalidContinueError(message=f"{generic}: {e}") from None
    version = parsed.get("v", "")
    rv = parsed.get("rv", 0)
    start = parsed.get("start", "")
    if not isinstance(rv, int) or isinstance(rv, bool) or not isinstance(start, str):
        raise InvalidContinueError(message=f"{generic}: malformed token")
    if version != "meta.k8s.io/v1":
        raise InvalidContinueError(
            message=f"{generic}: server does not recognize this encoded version {version}"
        )
    if rv == 0:
        raise InvalidContinueError(
            message=f"{generic}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        )
    if not start:
        raise InvalidContinueError(
            message=f"{generic}: encoded start key empty (version meta.k8s.io/v1)"
        )
    key = start if start.startswith("/") else "/" + start
    if _go_path_clean(key) != key:
        raise InvalidContinueError(message=f"{generic}: {start}")
    return key_prefix + key[1:], rv


# --- resourceVersion and list options -------------------------------------------------------------

def parse_resource_version(resource_version: str) -> int:
    """
    Upstream C{APIObjectVersioner.ParseResourceVersion}: C{""} -> 0, C{"N"} -> N.

    @raise InvalidResourceVersionError: not a non-negative decimal integer.
    """
    if not resource_version:
        return 0
    if resource_version.isascii() and resource_version.isdigit():
        return int(resource_version)
    quoted = json.dumps(resource_version)
    raise InvalidResourceVersionError(
        message=(
            f"invalid resource version: resourceVersion: Invalid value: {quoted}: "
            f"strconv.ParseUint: parsing {quoted}: invalid syntax"
        )
    )


def too_large_error(minimum: int, current: int) -> TooLargeResourceVersionError:
    """Upstream C{NewTooLargeResourceVersionError} (message C{Too large resource version: N,
    current: M})."""
    return TooLargeResourceVersionError(
        revision=current,
        message=f"Too large resource version: {minimum}, current: {current}",
    )


def validate_list_options(
    key_prefix: str, recursive: bool, resource_version: str, resource_version_match: str,
    limit: int, continue_token: str,
) -> tuple[int, str, bool]:
    """
    Upstream C{storage.ValidateListOptions}.

    @return: C{(with_rev, continue_key, from_continue)}: the revision to read at (0: latest),
        the absolute key to resume from (C{""}: start of the prefix), and whether a continue
        token was given.
    @raise InvalidContinueError: bad token (message prefixed C{invalid continue token: }) or a
        resourceVersion given together with a continue token.
    @raise InvalidResourceVersionError: bad resourceVersion or match.
    """
    if recursive and continue_token:
        try:
            continue_key, continue_rv = decode_continue(continue_token, key_prefix)
        except InvalidContinueError as e:
            raise InvalidContinueError(message=f"invalid continue token: {e}") from None
        if resource_version not in ("", "0"):
            raise InvalidContinueError(
                message="specifying resource version is not allowed when using continue"
            )
        return (continue_rv if continue_rv > 0 else 0), continue_key, True
    if not resource_version:
        return 0, "", False
    parsed = parse_resource_version(resource_version)
    if resource_version_match == "NotOlderThan":
        return 0, "", False
    if resource_version_match == "Exact":
        return parsed, "", False
    if resource_version_match == "":
        if recursive and limit > 0 and parsed > 0:
            return parsed, "", False
        return 0, "", False
    raise InvalidResourceVersionError(
        message=f"unknown ResourceVersionMatch value: {resource_version_match}"
    )
