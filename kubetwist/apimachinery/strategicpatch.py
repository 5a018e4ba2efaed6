# -*- test-case-name: tests.apimachinery.test_strategicpatch -*-
"""
Applying a strategic merge patch: upstream C{k8s.io/apimachinery/pkg/util/strategicpatch}
(C{StrategicMergeMapPatchUsingLookupPatchMeta}, i.e. C{mergeMap} with C{MergeParallelList}
and C{IgnoreUnmatchedNulls}), with errors interpreted as kube-apiserver's patch handler does
(C{interpretStrategicMergePatchError}).

Directives: C{$patch: replace|delete|merge} (maps and list items), C{$retainKeys},
C{$setElementOrder/<field>}, C{$deleteFromPrimitiveList/<field>}; C{null} deletes a key.
Where upstream walks a Go map (the patch's keys), keys are taken in the patch's order.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kubetwist.apimachinery.patchmeta import PatchMeta
from kubetwist.runtime import gofmt
from kubetwist.runtime.errors import StatusError, make_status, new_bad_request

__all__ = ["apply_strategic_merge_patch", "SMPError"]

_DIRECTIVE = "$patch"
_DELETE = "delete"
_REPLACE = "replace"
_MERGE = "merge"
_DELETE_PRIMITIVE = "$deleteFromPrimitiveList"
_RETAIN_KEYS = "$retainKeys"
_SET_ORDER = "$setElementOrder"

# mergepatch sentinel errors: text -> HTTP class
_BAD_JSON_DOC = "invalid JSON document"
_NO_LIST_OF_LISTS = "lists of lists are not supported"
_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
_BAD_SET_ORDER = "invalid patch format of setElementOrder list"
_NOT_MATCH_RETAIN_KEYS = "patch content doesn't match retainKeys list"
_BAD_REQUEST_ERRORS = {_BAD_JSON_DOC, _BAD_PRIMITIVE_LIST, _BAD_RETAIN_KEYS, _BAD_SET_ORDER}
_UNPROCESSABLE_ERRORS = {_NO_LIST_OF_LISTS, _NOT_MATCH_RETAIN_KEYS}


class SMPError(Exception):
    """An error of the merge itself, carrying upstream's text."""


# --------------------------------------------------------------------------------------------
# Go printing and typing helpers


def _go_fmt(v: Any) -> str:
    """Go's C{%v} of a value decoded by C{encoding/json} (every number a C{float64})."""
    return gofmt.sprint(v, ints_as_float=True)


def _go_type(v: Any) -> str:
    """Go's C{%T} of a value decoded by C{encoding/json} (every number a C{float64})."""
    return gofmt.type_name(v, ints_as_float=True)


def _bad_arg_type(expected: str, actual: Any) -> SMPError:
    t = _go_type(actual)
    if t == "<nil>":
        t = "%!s(<nil>)"
    return SMPError(f"expected a {expected}, but received a {t}")


def _no_merge_key(m: dict, key: str) -> SMPError:
    return SMPError(f"map: {_go_fmt(m)} does not contain declared merge key: {key}")


def _bad_patch_type(t: Any, m: dict) -> SMPError:
    ts = t if isinstance(t, str) else f"%!s({_go_type(t)}={_go_fmt(t)})"
    return SMPError(f"unknown patch type: {ts} in map: {_go_fmt(m)}")


def _hkey(v: Any) -> Any:
    """A hashable identity with Go's C{==} on interface values (bool is not a number)."""
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (int, float)):
        return ("n", float(v))
    if isinstance(v, str):
        return ("s", v)
    if v is None:
        return ("z", None)
    # maps and slices are not comparable in Go (it would panic); fall back to identity
    return ("o", id(v))


def _eq(a: Any, b: Any) -> bool:
    return _hkey(a) == _hkey(b)


# --------------------------------------------------------------------------------------------
# the merge


def _extract_retain_keys_strategy(strategies: list[str]) -> tuple[bool, str]:
    if not strategies:
        return False, ""
    if len(strategies) == 1:
        if strategies[0] == "retainKeys":
            return True, ""
        return False, strategies[0]
    if len(strategies) == 2:
        if strategies[0] == "retainKeys":
            return True, strategies[1]
        if strategies[1] == "retainKeys":
            return True, strategies[0]
    raise SMPError(f"unexpected patch strategy: [{' '.join(strategies)}]")


def _handle_directive_in_merge_map(directive: Any, patch: dict) -> dict:
    if directive == _REPLACE:
        patch.pop(_DIRECTIVE, None)
        return patch
    if directive == _DELETE:
        return {}
    raise _bad_patch_type(directive, patch)


def _contains_directive(item: Any) -> bool:
    return isinstance(item, dict) and _DIRECTIVE in item


def _merge_key_value_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _eq(left, right)
    if not isinstance(left, dict):
        raise _bad_arg_type("map[string]interface {}", left)
    if not isinstance(right, dict):
        raise _bad_arg_type("map[string]interface {}", right)
    if merge_key not in left:
        raise _no_merge_key(left, merge_key)
    if merge_key not in right:
        raise _no_merge_key(right, merge_key)
    return _eq(left[merge_key], right[merge_key])


def _extract_key(s: str, prefix: str) -> str:
    parts = s.split("/", 1)
    if len(parts) <= 1 or parts[0] != prefix:
        if prefix == _DELETE_PRIMITIVE:
            raise SMPError(_BAD_PRIMITIVE_LIST)
        raise SMPError(_BAD_SET_ORDER)
    return parts[1]


def _extract_to_delete_items(items: list) -> tuple[list, list]:
    keep: list = []
    delete: list = []
    for v in items:
        if not isinstance(v, dict):
            raise _bad_arg_type("map[string]interface {}", v)
        if v.get(_DIRECTIVE, None) == _DELETE and _DIRECTIVE in v:
            delete.append(v)
        else:
            keep.append(v)
    return keep, delete


def _validate_patch_with_set_order_list(patch_list: Any, order_list: Any, merge_key: str) -> None:
    if not isinstance(order_list, list) or not isinstance(patch_list, list):
        if patch_list is None and isinstance(order_list, list):
            return
        raise SMPError(_BAD_SET_ORDER)
    if not order_list or not patch_list:
        return
    non_delete = _extract_to_delete_items(patch_list)[0] if merge_key else patch_list
    pi = oi = 0
    while pi < len(non_delete) and oi < len(order_list):
        if _contains_directive(non_delete[pi]):
            pi += 1
            continue
        if _merge_key_value_equal(non_delete[pi], order_list[oi], merge_key):
            pi += 1
        oi += 1
    if pi < len(non_delete) and oi >= len(order_list):
        raise SMPError(
            f"The order in patch list:\n{_go_fmt(patch_list)}\n doesn't match {_SET_ORDER} "
            f"list:\n{_go_fmt(order_list)}\n"
        )


def _apply_retain_keys_directive(original: dict, patch: dict) -> None:
    if _RETAIN_KEYS not in patch:
        return
    retain = patch.pop(_RETAIN_KEYS)
    if not isinstance(retain, list):
        raise SMPError(_BAD_RETAIN_KEYS)
    keep = {_hkey(v) for v in retain}
    for k, v in patch.items():
        if v is None or k.startswith(_DELETE_PRIMITIVE) or k.startswith(_SET_ORDER):
            continue
        if _hkey(k) not in keep:
            raise SMPError(_BAD_RETAIN_KEYS)
    for k in list(original):
        if _hkey(k) not in keep:
            del original[k]


def _slice_element_kind(*slices: list | None) -> str:
    """Upstream C{sliceElementType}: the one Go type of all elements, as a kind name."""
    prev: str | None = None
    for s in slices:
        for v in s or []:
            cur = _go_type(v)
            if prev is None:
                prev = cur
                if cur == "[]interface {}":
                    raise SMPError(_NO_LIST_OF_LISTS)
            elif prev != cur:
                shown = "[" + " ".join(_go_fmt(list(x or [])) for x in slices) + "]"
                raise SMPError(f"list element types are not identical: {shown}")
    if prev is None:
        raise SMPError("no elements in any of the given slices")
    return "map" if prev == "map[string]interface {}" else prev


def _index(items: list, val: Any, merge_key: str, kind: str) -> int:
    def get(item: Any) -> Any:
        if kind == "map":
            return item.get(merge_key) if isinstance(item, dict) else None
        return item

    target = get(val)
    for i, v in enumerate(items):
        if _eq(target, get(v)):
            return i
    return -1


def _validate_merge_key_in_lists(merge_key: str, *lists: list | None) -> None:
    for lst in lists:
        for item in lst or []:
            if not isinstance(item, dict):
                raise _bad_arg_type("map[string]interface {}", item)
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)


def _normalize_slice_order(to_sort: list, order: list | None, merge_key: str, kind: str) -> list:
    to_delete: list = []
    order = order or []
    if kind == "map":
        _validate_merge_key_in_lists(merge_key, to_sort, order)
        to_sort, to_delete = _extract_to_delete_items(to_sort)
    else:
        to_sort = list(to_sort)

    def less(a: Any, b: Any) -> bool:
        ia = _index(order, a, merge_key, kind)
        if ia >= 0:
            ib = _index(order, b, merge_key, kind)
            if ib >= 0:
                return ia < ib
        return True

    # Go's sort.SliceStable is an insertion sort for short lists; with upstream's comparator
    # (true whenever an item is missing from the order) only that algorithm gives its result.
    for i in range(1, len(to_sort)):
        j = i
        while j > 0 and less(to_sort[j], to_sort[j - 1]):
            to_sort[j], to_sort[j - 1] = to_sort[j - 1], to_sort[j]
            j -= 1
    return to_sort + to_delete


def _merge_sorted_slice(left: list, right: list, server_order: list | None, merge_key: str,
                        kind: str) -> list:
    server_order = server_order or []
    out: list = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li = _index(server_order, left[i], merge_key, kind)
            ri = _index(server_order, right[j], merge_key, kind)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


def _normalize_element_order(
    patch: list, server_only: list, patch_order: list | None, server_order: list | None,
    merge_key: str, kind: str,
) -> list:
    patch = _normalize_slice_order(patch, patch_order, merge_key, kind)
    server_only = _normalize_slice_order(server_only, server_order, merge_key, kind)
    return _merge_sorted_slice(server_only, patch, server_order, merge_key, kind)


def _partition_primitives(items: list, by: list | None) -> tuple[list, list]:
    keys = {_hkey(v) for v in by or []}
    inside = [v for v in items if _hkey(v) in keys]
    outside = [v for v in items if _hkey(v) not in keys]
    return inside, outside


def _find_map(items: list | None, key: str, value: Any) -> tuple[dict | None, int]:
    for i, v in enumerate(items or []):
        if not isinstance(v, dict):
            raise SMPError(f"value for key {i} is not a map")
        if key in v and _eq(v[key], value):
            return v, i
    return None, -1


def _partition_maps(items: list, by: list | None, merge_key: str) -> tuple[list, list]:
    inside: list = []
    outside: list = []
    for v in items:
        if not isinstance(v, dict):
            raise _bad_arg_type("map[string]interface {}", v)
        if merge_key not in v:
            raise _no_merge_key(v, merge_key)
        found, _ = _find_map(by, merge_key, v[merge_key])
        (inside if found is not None else outside).append(v)
    return inside, outside


def _remove_directives(obj: Any) -> tuple[Any, bool]:
    if obj is None:
        return obj, True
    if isinstance(obj, dict):
        if _DIRECTIVE in obj:
            return None, False
        for k in list(obj):
            v, keep = _remove_directives(obj[k])
            if keep:
                obj[k] = v
            else:
                del obj[k]
        return obj, True
    if isinstance(obj, list):
        res = []
        for v in obj:
            nv, keep = _remove_directives(v)
            if keep:
                res.append(nv)
        return res, True
    return obj, True


def _discard_nulls(v: Any) -> None:
    if isinstance(v, dict):
        for k in list(v):
            if v[k] is None:
                del v[k]
            else:
                _discard_nulls(v[k])
    elif isinstance(v, list):
        for x in v:
            _discard_nulls(x)


def _merge_patch_into_original(original: dict, patch: dict, schema: PatchMeta) -> None:
    """Upstream C{mergePatchIntoOriginal}: the C{$setElementOrder/<field>} lists."""
    for key in list(patch):
        if key not in patch or not key.startswith(_SET_ORDER):
            continue
        order = patch.pop(key)
        if not isinstance(order, list):
            raise _bad_arg_type("[]interface {}", order)
        okey = _extract_key(key, _SET_ORDER)
        found_original = okey in original
        found_patch = okey in patch
        original_value = patch_value = None
        if found_original:
            original_value = original[okey]
            if not isinstance(original_value, list):
                raise _bad_arg_type("[]interface {}", original_value)
        if found_patch:
            patch_value = patch[okey]
            if not isinstance(patch_value, list):
                raise _bad_arg_type("[]interface {}", patch_value)
        sub, strategies, merge_key = schema.lookup_slice(okey)
        _, strategy = _extract_retain_keys_strategy(strategies)
        _validate_patch_with_set_order_list(patch_value, order, merge_key)
        if found_original and not found_patch:
            merged = original_value
        elif not found_original and found_patch:
            merged, _ = _remove_directives(patch_value)
        elif found_original and found_patch:
            merged = _merge_slice_handler(original_value, patch_value, sub, strategy, merge_key,
                                          False)
        else:
            continue
        if not merge_key:
            inside, outside = _partition_primitives(merged, order)
        else:
            inside, outside = _partition_maps(merged, order, merge_key)
        kind = _slice_element_kind(original_value, patch_value)
        original[okey] = _normalize_element_order(inside, outside, order, original_value, merge_key,
                                                  kind)
        patch.pop(okey, None)


def _merge_map(original: dict | None, patch: dict, schema: PatchMeta) -> dict:
    """Upstream C{mergeMap} with C{MergeParallelList} and C{IgnoreUnmatchedNulls}."""
    if _DIRECTIVE in patch:
        return _handle_directive_in_merge_map(patch[_DIRECTIVE], patch)
    if original is None:
        original = {}
    _apply_retain_keys_directive(original, patch)
    _merge_patch_into_original(original, patch, schema)

    for k in list(patch):
        if k not in patch:
            continue
        patch_v = patch[k]
        is_delete_list = False
        if k.startswith(_DELETE_PRIMITIVE):
            k = _extract_key(k, _DELETE_PRIMITIVE)
            is_delete_list = True
        if patch_v is None:
            original.pop(k, None)
            continue
        if k not in original:
            if not is_delete_list:
                _discard_nulls(patch_v)
                v, keep = _remove_directives(patch_v)
                if keep:
                    original[k] = v
            continue
        orig_v = original[k]
        if _go_type(orig_v) != _go_type(patch_v):
            if not is_delete_list:
                _discard_nulls(patch_v)
                v, keep = _remove_directives(patch_v)
                if keep:
                    original[k] = v
                else:
                    del original[k]
            continue
        if isinstance(orig_v, dict):
            sub, strategies, _ = schema.lookup_struct(k)
            _, strategy = _extract_retain_keys_strategy(strategies)
            if strategy != _REPLACE:
                original[k] = _merge_map(orig_v, patch_v, sub)
            else:
                original[k] = patch_v
        elif isinstance(orig_v, list):
            sub, strategies, merge_key = schema.lookup_slice(k)
            _, strategy = _extract_retain_keys_strategy(strategies)
            original[k] = _merge_slice_handler(orig_v, patch_v, sub, strategy, merge_key,
                                               is_delete_list)
        else:
            v, keep = _remove_directives(patch_v)
            if keep:
                original[k] = v
            else:
                del original[k]
    return original


def _merge_slice_handler(
    original: Any, patch: Any, schema: PatchMeta, strategy: str, merge_key: str,
    is_delete_list: bool
) -> list:
    if not isinstance(original, list):
        raise _bad_arg_type("[]interface {}", original)
    if not isinstance(patch, list):
        raise _bad_arg_type("[]interface {}", patch)
    if strategy == _MERGE or is_delete_list:
        return _merge_slice(original, patch, schema, merge_key, is_delete_list)
    return patch


def _merge_slice(original: list, patch: list, schema: PatchMeta, merge_key: str,
                 is_delete_list: bool) -> list:
    if not original and not patch:
        return original
    kind = _slice_element_kind(original, patch)
    if kind != "map":
        if is_delete_list:
            drop = {_hkey(v) for v in patch}
            return [v for v in original if _hkey(v) not in drop]
        merged: list = []
        seen: set = set()
        for v in original + patch:
            h = _hkey(v)
            if h not in seen:
                seen.add(h)
                merged.append(v)
    else:
        if not merge_key:
            raise SMPError(f"cannot merge lists without merge key for {schema.name}")
        original, patch = _merge_slice_with_special_elements(original, patch, merge_key)
        merged = _merge_slice_without_special_elements(original, patch, merge_key, schema)
    if not merge_key:
        inside, outside = _partition_primitives(merged, patch)
    else:
        inside, outside = _partition_maps(merged, patch, merge_key)
    return _normalize_element_order(inside, outside, patch, original, merge_key, kind)


def _merge_slice_with_special_elements(original: list, patch: list,
                                       merge_key: str) -> tuple[list, list]:
    plain: list = []
    replace = False
    for v in patch:
        if _DIRECTIVE not in v:
            plain.append(v)
            continue
        directive = v[_DIRECTIVE]
        if directive == _DELETE:
            if merge_key not in v:
                raise _no_merge_key(v, merge_key)
            original = [
                o for o in original
                if not (isinstance(o, dict) and merge_key in o and _eq(o[merge_key], v[merge_key]))
            ]
            for i, o in enumerate(original):
                if not isinstance(o, dict):
                    raise SMPError(f"value for key {i} is not a map")
        elif directive == _REPLACE:
            replace = True
        elif directive == _MERGE:
            raise SMPError("merging lists cannot yet be specified in the patch")
        else:
            raise _bad_patch_type(directive, v)
    if replace:
        return plain, []
    return original, plain


def _merge_slice_without_special_elements(original: list, patch: list, merge_key: str,
                                          schema: PatchMeta) -> list:
    original = list(original)
    for v in patch:
        if merge_key not in v:
            raise _no_merge_key(v, merge_key)
        found, i = _find_map(original, merge_key, v[merge_key])
        if found is not None:
            original[i] = _merge_map(found, v, schema)
        else:
            original.append(v)
    return original


def _interpret(err: SMPError) -> StatusError:
    """Upstream C{interpretStrategicMergePatchError}, then C{ErrorToAPIStatus} for the rest."""
    msg = str(err)
    if msg in _BAD_REQUEST_ERRORS:
        return new_bad_request(msg)
    if msg in _UNPROCESSABLE_ERRORS:
        e = make_status(422, "Invalid", "the server rejected our request due to an error in our "
                                        "request")
        code = e.status.pop("code")
        e.status["details"] = {}
        e.status["code"] = code
        return e
    e = make_status(500, "", msg)
    e.status.pop("reason", None)
    return e


def apply_strategic_merge_patch(doc: dict, patch: dict | bytes | str, schema: PatchMeta) -> dict:
    """
    Apply a strategic merge patch to an object (neither input is modified).

    @param doc: the current object, a JSON-shaped dict.
    @param patch: the patch as a dict, or its JSON bytes/str.
    @param schema: the root's metadata, from L{kubetwist.apimachinery.patchmeta.patch_meta_for}.
    @return: the patched object.
    @raise StatusError: 400 BadRequest for malformed directives or a body that is not a JSON
        object (upstream C{mergepatch} sentinel texts, e.g. C{invalid patch format of
        retainKeys}); 422 Invalid for lists of lists; 500 with upstream's text for other merge
        failures (e.g. C{map: map[image:x] does not contain declared merge key: name}), as
        kube-apiserver reports errors that are not API statuses.
    """
    if isinstance(patch, (bytes, str)):
        try:
            patch = json.loads(patch)
        except ValueError as e:
            raise new_bad_request(str(e)) from None
    if not isinstance(patch, dict):
        raise new_bad_request(
            f"json: cannot unmarshal {_json_kind(patch)} into Go value of type "
            f"map[string]interface {{}}"
        )
    try:
        return _merge_map(copy.deepcopy(doc), copy.deepcopy(patch), schema)
    except SMPError as e:
        raise _interpret(e) from None


def _json_kind(v: Any) -> str:
    if isinstance(v, list):
        return "array"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    return "object"
