# -*- test-case-name: tests.apimachinery.test_patch -*-
"""
JSON patch (RFC 6902) and JSON merge patch (RFC 7386) as kube-apiserver applies them.

Upstream uses C{gopkg.in/evanphx/json-patch.v4} (C{DecodePatch}/C{Apply}, C{MergePatch}) from
C{k8s.io/apiserver/pkg/endpoints/handlers/patch.go} (C{jsonPatcher.applyJSPatch}).  This module
reimplements v4's semantics rather than using a generic RFC 6902 library, because the
acceptance rules differ from the RFC in ways clients can observe (negative array indices are
accepted, C{replace} of a missing object key adds it, a path without a leading C{/} addresses
the root, C{test} of a missing key against C{null} passes).

Errors, as the handler maps them: a body that does not decode as a patch is 400 BadRequest
with the decoder's text; more than 10000 operations is 413; any failure while applying is 422
C{Invalid} with upstream's generic message (the library's text is not sent to the client),
among them C{copy} operations whose copied values add up to more than 3 MiB (upstream's
C{jsonpatch.AccumulatedCopySizeLimit}, set from C{JSONPatchMaxCopyBytes}): without it a 2 KB
patch of one C{add} and a few dozen self-doubling C{copy} operations builds gigabytes.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import orjson

from kubetwist.runtime import gofmt
from kubetwist.runtime.errors import (
    StatusError,
    make_status,
    new_bad_request,
    new_request_entity_too_large,
)

__all__ = ["apply_json_patch", "apply_json_patch_ops", "apply_merge_patch",
           "MAX_JSON_PATCH_OPERATIONS", "JSONPatchError"]

#: Upstream C{maxJSONPatchOperations}.
MAX_JSON_PATCH_OPERATIONS = 10000

#: Upstream C{JSONPatchMaxCopyBytes} (C{k8s.io/apiserver/pkg/server/config.go}, the request
#: body limit), installed as C{jsonpatch.AccumulatedCopySizeLimit}: the most bytes of JSON the
#: C{copy} operations of one patch may copy in total.
MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024


class JSONPatchError(Exception):
    """A failure while applying, with the library's text (for logs; clients see the 422)."""


def _unprocessable() -> StatusError:
    """C{NewGenericServerResponse(422, ...)}: reason Invalid, generic message, empty details."""
    e = make_status(422, "Invalid",
                    "the server rejected our request due to an error in our request")
    code = e.status.pop("code")
    e.status["details"] = {}
    e.status["code"] = code
    return e


_go_json_kind = gofmt.json_kind


def _decode_error(err: json.JSONDecodeError) -> str:
    """An approximation of Go's C{encoding/json} syntax error text."""
    text = err.doc
    pos = err.pos
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    if pos >= len(text):
        return "unexpected end of JSON input"
    return f"invalid character '{text[pos]}' looking for beginning of value"


class _DepthError(ValueError):
    """JSON nested past Go's 10000 levels (C{encoding/json}: C{exceeded max depth})."""


def _loads(body: bytes | str) -> Any:
    """
    Parse a patch body; nesting deeper than Python's recursion limit (which Go accepts up to
    10000 levels) goes through the iterative parser.

    @raise json.JSONDecodeError: malformed JSON.
    @raise _DepthError: more than 10000 levels.
    """
    from kubetwist.runtime import jsonparse

    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        pass  # lone surrogates, nesting past 1024 levels, integers past 64 bits, errors
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        return jsonparse.fix_surrogates(json.loads(body))
    except RecursionError:
        try:
            return jsonparse.fix_surrogates(jsonparse.loads(body))
        except jsonparse.DepthError:
            raise _DepthError("exceeded max depth") from None
        except ValueError as e:
            raise json.JSONDecodeError(str(e), body, 0) from None


# --------------------------------------------------------------------------------------------
# RFC 6902, evanphx/json-patch v4 semantics

_atoi_re = re.compile(r"[+-]?[0-9]+")


def _atoi(key: str) -> int:
    if not _atoi_re.fullmatch(key):
        raise JSONPatchError(f'strconv.Atoi: parsing "{key}": invalid syntax')
    return int(key)


def _decode_key(k: str) -> str:
    """RFC 6901 unescaping, in one pass as Go's C{strings.Replacer} does."""
    return re.sub(r"~[01]", lambda m: "/" if m.group(0) == "~1" else "~", k)


def _get(con: Any, key: str) -> Any:
    """C{container.get}: dicts never fail (a missing key reads None); arrays check the index."""
    if isinstance(con, dict):
        return con.get(key)
    idx = _atoi(key)
    if idx < 0:
        if idx < -len(con):
            raise JSONPatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += len(con)
    if idx >= len(con):
        raise JSONPatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
    return con[idx]


def _set(con: Any, key: str, val: Any) -> None:
    if isinstance(con, dict):
        con[key] = val
        return
    idx = _atoi(key)
    if idx < 0:
        if idx < -len(con):
            raise JSONPatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += len(con)
    con[idx] = val


def _add(con: Any, key: str, val: Any) -> None:
    if isinstance(con, dict):
        con[key] = val
        return
    if key == "-":
        con.append(val)
        return
    if not _atoi_re.fullmatch(key):
        raise JSONPatchError(f"value was not a proper array index: '{key}'")
    idx = int(key)
    size = len(con) + 1
    if idx >= size:
        raise JSONPatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
    if idx < 0:
        if idx < -size:
            raise JSONPatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += size
    con.insert(idx, val)


def _remove(con: Any, key: str) -> None:
    if isinstance(con, dict):
        if key not in con:
            raise JSONPatchError(f"Unable to remove nonexistent key: {key}: missing value")
        del con[key]
        return
    idx = _atoi(key)
    if idx >= len(con):
        raise JSONPatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
    if idx < 0:
        if idx < -len(con):
            raise JSONPatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += len(con)
    del con[idx]


def _find_object(doc: Any, path: str) -> tuple[Any, str]:
    """Upstream C{findObject}: the container of the last segment, or None."""
    split = path.split("/")
    if len(split) < 2:
        return None, ""
    cur = doc
    for part in split[1:-1]:
        try:
            nxt = _get(cur, _decode_key(part))
        except JSONPatchError:
            return None, ""
        if not isinstance(nxt, (dict, list)):
            return None, ""
        cur = nxt
    return cur, _decode_key(split[-1])


def _str_field(op: dict, name: str) -> str | None:
    v = op.get(name)
    return v if isinstance(v, str) else None


def _equal(a: Any, b: Any) -> bool:
    """v4's C{lazyNode.equal}: structural for objects/arrays, raw-text equality for scalars."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=False))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    return json.dumps(a) == json.dumps(b)


def json_size(value: Any, budget: int) -> int:
    """
    The length in bytes of C{value} as Go's C{json.Marshal} writes it (compact, C{<>&} and
    U+2028/U+2029 escaped; floats as Python prints them, close enough for a limit), counting
    at most a little past C{budget}: the walk stops as soon as the total exceeds it, so
    measuring a huge value costs no more than C{budget} bytes of work.  Iterative.

    @param budget: bytes; the answer is C{> budget} exactly when the value's size is.
    """
    total = 0
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            total += 1 + max(2 * len(node), 1)  # braces, colons and commas
            for k, v in node.items():
                total += _scalar_size(k)
                stack.append(v)
        elif isinstance(node, list):
            total += 1 + max(len(node), 1)
            stack.extend(node)
        else:
            total += _scalar_size(node)
        if total > budget:
            break
    return total


def _scalar_size(v: Any) -> int:
    if isinstance(v, str):
        n = len(orjson.dumps(v))
        return n + 5 * (v.count("<") + v.count(">") + v.count("&")) + 3 * (
            v.count("\u2028") + v.count("\u2029"))
    if v is None or isinstance(v, bool):
        return 4 if v is not False else 5
    try:
        return len(orjson.dumps(v))
    except TypeError:  # integers beyond 64 bits
        return len(str(v))


def _apply_op(doc: Any, op: dict, copied: list) -> Any:
    kind = op.get("op") if isinstance(op.get("op"), str) else "unknown"
    path = _str_field(op, "path")
    if kind == "add":
        if path is None:
            raise JSONPatchError("add operation failed to decode path: missing value")
        con, key = _find_object(doc, path)
        if con is None:
            raise JSONPatchError(f'add operation does not apply: doc is missing path: "{path}": '
                                 'missing value')
        _add(con, key, copy.deepcopy(op.get("value")))
    elif kind == "remove":
        if path is None:
            raise JSONPatchError("remove operation failed to decode path: missing value")
        con, key = _find_object(doc, path)
        if con is None:
            raise JSONPatchError(f'remove operation does not apply: doc is missing path: "{path}": '
                                 'missing value')
        _remove(con, key)
    elif kind == "replace":
        if path is None:
            raise JSONPatchError("replace operation failed to decode path")
        if path == "":
            value = op.get("value")
            if not isinstance(value, (dict, list)):
                raise JSONPatchError("replace operation value must be object or array")
            return copy.deepcopy(value)
        con, key = _find_object(doc, path)
        if con is None:
            raise JSONPatchError(f"replace operation does not apply: doc is missing path: {path}: "
                                 "missing value")
        try:
            _get(con, key)
        except JSONPatchError:
            raise JSONPatchError(f"replace operation does not apply: doc is missing key: {path}: "
                                 "missing value") from None
        _set(con, key, copy.deepcopy(op.get("value")))
    elif kind == "move":
        frm = _str_field(op, "from")
        if frm is None:
            raise JSONPatchError("move operation failed to decode from")
        con, key = _find_object(doc, frm)
        if con is None:
            raise JSONPatchError(f"move operation does not apply: doc is missing from path: {frm}: "
                                 "missing value")
        val = _get(con, key)
        _remove(con, key)
        if path is None:
            raise JSONPatchError("move operation failed to decode path")
        con, key = _find_object(doc, path)
        if con is None:
            raise JSONPatchError("move operation does not apply: doc is missing destination path: "
                                 f"{path}: missing value")
        _add(con, key, val)
    elif kind == "test":
        if path is None:
            raise JSONPatchError("test operation failed to decode path")
        has_value = "value" in op
        value = op.get("value")
        if path == "":
            if has_value and _equal(doc, value):
                return doc
            raise JSONPatchError(f"testing value {path} failed: test failed")
        con, key = _find_object(doc, path)
        if con is None:
            raise JSONPatchError(f"test operation does not apply: is missing path: {path}: missing "
                                 "value")
        val = _get(con, key)
        if val is None:
            if value is None:
                return doc
            raise JSONPatchError(f"testing value {path} failed: test failed")
        if not has_value or not _equal(val, value):
            raise JSONPatchError(f"testing value {path} failed: test failed")
    elif kind == "copy":
        frm = _str_field(op, "from")
        if frm is None:
            raise JSONPatchError("copy operation failed to decode from")
        con, key = _find_object(doc, frm)
        if con is None:
            raise JSONPatchError(f"copy operation does not apply: doc is missing from path: {frm}: "
                                 "missing value")
        val = _get(con, key)
        if path is None:
            raise JSONPatchError("copy operation failed to decode path: missing value")
        con, key = _find_object(doc, path)
        if con is None:
            raise JSONPatchError("copy operation does not apply: doc is missing destination path: "
                                 f"{path}: missing value")
        copied[0] += json_size(val, MAX_JSON_PATCH_COPY_BYTES - copied[0])
        if copied[0] > MAX_JSON_PATCH_COPY_BYTES:
            raise JSONPatchError(
                "Unable to complete the copy, the accumulated size increase of copy is "
                f"{copied[0]}, exceeding the limit {MAX_JSON_PATCH_COPY_BYTES}")
        _add(con, key, copy.deepcopy(val))
    else:
        raise JSONPatchError(f"Unexpected kind: {kind}")
    return doc


def apply_json_patch(doc: dict, patch_bytes: bytes | str) -> dict:
    """
    Apply an RFC 6902 JSON patch (C{application/json-patch+json}).

    @param doc: the current object (not modified).
    @param patch_bytes: the request body, a JSON array of operations.
    @return: the patched document.
    @raise StatusError: 400 BadRequest when the body does not decode as a list of operation
        objects (Go's decoder text, e.g. C{json: cannot unmarshal object into Go value of type
        jsonpatch.Patch}); 413 RequestEntityTooLarge past 10000 operations; 422 Invalid
        (C{the server rejected our request due to an error in our request}) when an operation
        fails, or when the C{copy} operations copy more than L{MAX_JSON_PATCH_COPY_BYTES} in
        total.
    """
    try:
        ops = _loads(patch_bytes)
    except json.JSONDecodeError as e:
        raise new_bad_request(_decode_error(e)) from None
    except _DepthError as e:
        raise new_bad_request(str(e)) from None
    if ops is None:
        ops = []
    if not isinstance(ops, list):
        raise new_bad_request(f"json: cannot unmarshal {_go_json_kind(ops)} into Go value of type "
                              "jsonpatch.Patch")
    for op in ops:
        if op is not None and not isinstance(op, dict):
            raise new_bad_request(
                f"json: cannot unmarshal {_go_json_kind(op)} into Go value of type "
                "jsonpatch.Operation"
            )
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise new_request_entity_too_large(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got "
            f"{len(ops)}"
        )
    result: Any = copy.deepcopy(doc)
    copied = [0]
    try:
        for op in ops:
            result = _apply_op(result, op or {}, copied)
    except JSONPatchError:
        raise _unprocessable() from None
    return result


def apply_json_patch_ops(doc: Any, ops: list) -> Any:
    """
    Apply decoded JSON patch operations as the library does (upstream C{jsonpatch.Patch.Apply},
    used by the mutating admission webhook dispatcher, which reports failures as they are).

    @param doc: the document (not modified).
    @param ops: the decoded operations (a list of dicts).
    @return: the patched document.
    @raise JSONPatchError: an operation fails (the library's text).
    """
    result: Any = copy.deepcopy(doc)
    copied = [0]
    for op in ops:
        if op is not None and not isinstance(op, dict):
            raise JSONPatchError(f"json: cannot unmarshal {_go_json_kind(op)} into Go value of "
                                 "type jsonpatch.Operation")
        result = _apply_op(result, op or {}, copied)
    return result


# --------------------------------------------------------------------------------------------
# RFC 7386


def _prune_nulls(v: Any) -> None:
    if isinstance(v, dict):
        for k in list(v):
            if v[k] is None:
                del v[k]
            else:
                _prune_nulls(v[k])
    elif isinstance(v, list):
        for x in v:
            if x is not None:
                _prune_nulls(x)


def _merge(cur: Any, patch: Any) -> Any:
    if not isinstance(cur, dict):
        _prune_nulls(patch)
        return patch
    if not isinstance(patch, dict):
        return patch
    _merge_docs(cur, patch)
    return cur


def _merge_docs(doc: dict, patch: dict) -> None:
    for k, v in patch.items():
        if v is None:
            doc.pop(k, None)
        elif doc.get(k) is None:
            _prune_nulls(v)
            doc[k] = v
        else:
            doc[k] = _merge(doc[k], v)


def apply_merge_patch(doc: dict, patch_bytes: bytes | str) -> Any:
    """
    Apply a JSON merge patch (C{application/merge-patch+json}) as v4's C{MergePatch} does.

    @param doc: the current object (not modified).
    @param patch_bytes: the request body.
    @return: the merged object; when the patch is a JSON array, the array itself (nulls pruned
        inside its objects), which the caller then fails to decode as the kind, as upstream.
    @raise StatusError: 400 BadRequest C{Invalid JSON Patch} for a body that is not JSON, is
        C{null}, or is a scalar.
    """
    try:
        patch = _loads(patch_bytes)
    except (json.JSONDecodeError, _DepthError):
        raise new_bad_request("Invalid JSON Patch") from None
    if isinstance(patch, list):
        _prune_nulls(patch)
        return patch
    if not isinstance(patch, dict):
        raise new_bad_request("Invalid JSON Patch")
    result = copy.deepcopy(doc)
    _merge_docs(result, patch)
    return result
