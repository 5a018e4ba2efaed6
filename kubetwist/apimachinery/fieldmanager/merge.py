# -*- test-case-name: tests.apimachinery.test_fieldmanager -*-
"""
Typed operations and the updater of structured merge:
C{sigs.k8s.io/structured-merge-diff/v4/typed} (C{ToFieldSet}, C{Compare}, C{Merge},
C{RemoveItems}) and C{.../merge} (C{Updater.Update}, C{Updater.Apply}, C{Conflicts}).

Values are JSON-shaped Python values; schemas are L{typed.Node}s.  Managers are
C{{manager_id: VersionedSet}}; a manager id is any hashable (L{manager} uses upstream's
identifier fields).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from kubetwist.apimachinery.fieldmanager import typed
from kubetwist.apimachinery.fieldmanager.fieldpath import (
    Set,
    canonical_json,
    field_element,
    key_element,
    path_string,
    value_element,
)

__all__ = [
    "Comparison",
    "Conflict",
    "Conflicts",
    "SchemaError",
    "VersionedSet",
    "apply",
    "compare",
    "merge",
    "remove_items",
    "to_field_set",
    "update",
]

MISSING: Any = object()


@dataclass
class VersionedSet:
    """The fields of one manager: C{set}, the C{api_version} they were recorded in, and
    whether they come from an C{Apply}."""

    set: Set
    api_version: str
    applied: bool


@dataclass
class Comparison:
    """C{added}, C{modified}, C{removed} field sets between two objects."""

    added: Set
    modified: Set
    removed: Set

    def is_same(self) -> bool:
        """Nothing changed."""
        return self.added.empty() and self.modified.empty() and self.removed.empty()

    def filter(self, ignored: Set | None) -> Comparison:
        """Drop the paths at or below C{ignored} (upstream C{FilterFields})."""
        if ignored is None or ignored.empty():
            return self
        return Comparison(self.added.recursive_difference(ignored),
                          self.modified.recursive_difference(ignored),
                          self.removed.recursive_difference(ignored))


@dataclass(frozen=True)
class Conflict:
    """One field (C{path}) owned by another manager (C{manager}, its id)."""

    manager: Any
    path: tuple


class Conflicts(Exception):
    """An apply changed fields other managers own (upstream C{merge.Conflicts})."""

    def __init__(self, conflicts: list[Conflict]) -> None:
        super().__init__(f"{len(conflicts)} conflict(s)")
        self.conflicts = conflicts


class SchemaError(Exception):
    """
    A value does not fit its schema (upstream C{typed.ValidationErrors}); C{str()} is
    upstream's text (C{.spec.foo: field not declared in schema}).
    """

    def __init__(self, errors: list[tuple[tuple, str]]) -> None:
        self.errors = errors
        texts = [f"{path_string(p)}: {m}" for p, m in errors]
        super().__init__(texts[0] if len(texts) == 1
                         else "\n".join(["errors:"] + ["  " + t for t in texts]))


# --- list items -------------------------------------------------------------------------------
def _item_element(node: typed.Node, item: Any, index: int) -> tuple:
    if node.list_type == "map" and node.keys and isinstance(item, dict):
        return key_element({k: item[k] if k in item else node.key_defaults[k]
                            for k in node.keys if k in item or k in node.key_defaults})
    if node.list_type == "set":
        return value_element(item)
    return ("i", index)


def _items(node: typed.Node, value: Any) -> list[tuple[tuple, Any]]:
    if not isinstance(value, list):
        return []
    return [(_item_element(node, item, i), item) for i, item in enumerate(value)]


def _granular_list(node: typed.Node) -> bool:
    return node.kind == "list" and node.list_type in ("map", "set")


# --- ToFieldSet -------------------------------------------------------------------------------
def to_field_set(value: Any, node: typed.Node) -> Set:
    """
    The set of fields C{value} sets (upstream C{TypedValue.ToFieldSet}): leaves, atomic
    values, associative-list items, null and empty-object values and undeclared map keys.

    @raise SchemaError: a key the schema does not declare (where it takes no others).
    """
    out = Set()
    errors: list = []
    _tfs(value, node, (), out, errors)
    if errors:
        raise SchemaError(errors)
    return out


def _tfs(value: Any, node: typed.Node, path: tuple, out: Set, errors: list) -> None:
    kind = node.kind
    if kind == "scalar":
        out.insert(path)
        return
    if kind == "deduced":
        if isinstance(value, dict):
            _tfs(value, typed.Node("map", elem=typed.DEDUCED), path, out, errors)
        else:
            out.insert(path)
        return
    if kind == "list":
        if value is None:
            return
        if not _granular_list(node) or not isinstance(value, list):
            out.insert(path)
            return
        for pe, item in _items(node, value):
            _tfs(item, node.elem or typed.DEDUCED, path + (pe,), out, errors)
            out.insert(path + (pe,))
        return
    if value is None:
        return
    if node.atomic or not isinstance(value, dict):
        out.insert(path)
        return
    for key, item in value.items():
        sub = node.field_schema(key)
        p = path + (field_element(key),)
        if sub is None:
            errors.append((p, "field not declared in schema"))
            return
        _tfs(item, sub, p, out, errors)
        if item is None or (isinstance(item, dict) and not item) or not node.declared(key):
            out.insert(p)


# --- Compare ----------------------------------------------------------------------------------
def _equal(a: Any, b: Any) -> bool:
    return canonical_json(a) == canonical_json(b)


def compare(lhs: Any, rhs: Any, node: typed.Node) -> Comparison:
    """The fields C{rhs} adds, modifies and removes relative to C{lhs} (upstream
    C{TypedValue.Compare}); an absent map or list that appears is itself C{added}."""
    result = Comparison(Set(), Set(), Set())
    _cmp(lhs, rhs, node, (), result)
    return result


def _leaf(lhs: Any, rhs: Any, path: tuple, res: Comparison) -> None:
    if lhs is MISSING:
        res.added.insert(path)
    elif rhs is MISSING:
        res.removed.insert(path)
    elif not _equal(lhs, rhs):
        res.modified.insert(path)


def _empty(v: Any) -> bool:
    return v is MISSING or v is None or (isinstance(v, (dict, list)) and not v)


def _cmp(lhs: Any, rhs: Any, node: typed.Node, path: tuple, res: Comparison) -> None:
    kind = node.kind
    if kind == "deduced":
        if (isinstance(lhs, dict) or _empty(lhs)) and (isinstance(rhs, dict) or _empty(rhs)) \
                and (isinstance(lhs, dict) or isinstance(rhs, dict)):
            node = typed.Node("map", elem=typed.DEDUCED)
            kind = "map"
        else:
            _leaf(lhs, rhs, path, res)
            return
    if kind == "scalar":
        _leaf(lhs, rhs, path, res)
        return
    if kind == "list":
        if not _granular_list(node) or (_empty(lhs) and _empty(rhs)) or not (
                isinstance(lhs, list) or isinstance(rhs, list)):
            _leaf(lhs, rhs, path, res)
            return
        left = dict(_items(node, lhs))
        right = dict(_items(node, rhs))
        for pe in list(left) + [p for p in right if p not in left]:
            _cmp(left.get(pe, MISSING), right.get(pe, MISSING), node.elem or typed.DEDUCED,
                 path + (pe,), res)
    else:
        if node.atomic or (_empty(lhs) and _empty(rhs)) or not (
                isinstance(lhs, dict) or isinstance(rhs, dict)):
            _leaf(lhs, rhs, path, res)
            return
        left = lhs if isinstance(lhs, dict) else {}
        right = rhs if isinstance(rhs, dict) else {}
        for key in list(left) + [k for k in right if k not in left]:
            _cmp(left.get(key, MISSING), right.get(key, MISSING),
                 node.field_schema(key) or typed.DEDUCED, path + (field_element(key),), res)
    if lhs is MISSING:
        res.added.insert(path)
    elif rhs is MISSING:
        res.removed.insert(path)


# --- Merge ------------------------------------------------------------------------------------
def merge(live: Any, config: Any, node: typed.Node) -> Any:
    """C{config} merged over C{live} (upstream C{TypedValue.Merge}): maps by key, associative
    lists by item key in upstream's order, atomic values and scalars replaced."""
    if config is MISSING:
        return copy.deepcopy(live)
    if live is MISSING:
        return copy.deepcopy(config)
    kind = node.kind
    if kind == "deduced":
        if isinstance(live, dict) and isinstance(config, dict):
            node, kind = typed.Node("map", elem=typed.DEDUCED), "map"
        else:
            return copy.deepcopy(config)
    if kind == "scalar":
        return copy.deepcopy(config)
    if kind == "list":
        if not _granular_list(node) or not isinstance(live, list) or not isinstance(config, list):
            return copy.deepcopy(config)
        return _merge_list(live, config, node)
    if node.atomic or not isinstance(live, dict) or not isinstance(config, dict):
        return copy.deepcopy(config)
    out = copy.deepcopy(live)
    for key, value in config.items():
        out[key] = merge(live.get(key, MISSING), value, node.field_schema(key) or typed.DEDUCED)
    return out


def _merge_list(live: list, config: list, node: typed.Node) -> list:
    elem = node.elem or typed.DEDUCED
    lpes, rpes = _items(node, live), _items(node, config)
    lobs, robs = dict(lpes), dict(rpes)
    shared = [pe for pe, _ in rpes if pe in lobs]
    nxt = 0
    merged_r: set = set()
    out: list = []
    li = ri = 0
    while li < len(lpes) or ri < len(rpes):
        if li < len(lpes) and ri < len(rpes):
            pe = lpes[li][0]
            if pe == rpes[ri][0]:
                merged_r.add(pe)
                out.append(merge(lobs[pe], robs[pe], elem))
                li += 1
                ri += 1
                if nxt < len(shared) and shared[nxt] == pe:
                    nxt += 1
                continue
            if pe in robs and nxt < len(shared) and shared[nxt] != pe:
                li += 1
                continue
        if li < len(lpes):
            pe, item = lpes[li]
            if pe not in robs:
                out.append(copy.deepcopy(item))
                li += 1
                continue
            if pe in merged_r:
                li += 1
                continue
        if ri < len(rpes):
            pe = rpes[ri][0]
            merged_r.add(pe)
            out.append(merge(lobs.get(pe, MISSING), robs[pe], elem))
            ri += 1
            if nxt < len(shared) and shared[nxt] == pe:
                nxt += 1
    return out


# --- RemoveItems ------------------------------------------------------------------------------
def remove_items(value: Any, paths: Set, node: typed.Node) -> Any:
    """C{value} without the members of C{paths} (upstream C{TypedValue.RemoveItems})."""
    if paths.empty():
        return value
    if isinstance(value, dict) and node.kind in ("map", "deduced"):
        if node.kind == "deduced":
            node = typed.Node("map", elem=typed.DEDUCED)
        out = {}
        for key, item in value.items():
            e = field_element(key)
            if e in paths.members:
                continue
            sub = paths.children.get(e)
            out[key] = remove_items(item, sub, node.field_schema(key) or typed.DEDUCED) \
                if sub is not None else item
        return out
    if isinstance(value, list) and _granular_list(node):
        out_list = []
        for pe, item in _items(node, value):
            if pe in paths.members:
                continue
            sub = paths.children.get(pe)
            out_list.append(remove_items(item, sub, node.elem or typed.DEDUCED)
                            if sub is not None else item)
        return out_list
    return value


# --- the updater ------------------------------------------------------------------------------
def _update_others(live: Any, new: Any, node: typed.Node, version: str, managers: dict,
                   workflow: Any, force: bool, ignored: Set | None) -> tuple[dict,
                                                                                  Comparison]:
    cmp = compare(live, new, node).filter(ignored)
    changed = cmp.modified.union(cmp.added)
    conflicts: dict = {}
    for mid, vs in managers.items():
        if mid == workflow:
            continue
        hit = vs.set.intersection(changed)
        if not hit.empty():
            conflicts[mid] = hit
    if conflicts and not force:
        raise Conflicts([Conflict(mid, p) for mid in sorted(conflicts, key=str)
                         for p in conflicts[mid].paths()])
    out = dict(managers)
    for mid, vs in managers.items():
        if mid == workflow:
            continue
        s = vs.set
        if mid in conflicts:
            s = s.difference(conflicts[mid])
        if not cmp.removed.empty():
            s = s.difference(cmp.removed)
        if s is not vs.set:
            out[mid] = VersionedSet(s, vs.api_version, vs.applied)
    return {m: v for m, v in out.items() if not v.set.empty()}, cmp


def update(live: Any, new: Any, node: typed.Node, version: str, managers: dict,
           manager: Any, ignored: Set | None = None) -> dict:
    """
    Record a non-apply write (upstream C{Updater.Update}): the fields C{new} changes move to
    C{manager} (taken from others, never a conflict); removed fields leave every manager.

    @return: the new managers mapping.
    """
    managers, cmp = _update_others(live, new, node, version, managers, manager, True, ignored)
    if cmp.is_same():
        return managers
    prev = managers.get(manager)
    s = prev.set if prev is not None else Set()
    s = s.difference(cmp.removed).union(cmp.modified).union(cmp.added)
    if ignored is not None:
        s = s.recursive_difference(ignored)
    managers = dict(managers)
    if s.empty():
        managers.pop(manager, None)
    else:
        managers[manager] = VersionedSet(s, version, False)
    return managers


def apply(live: Any, config: Any, node: typed.Node, version: str, managers: dict,
          manager: Any, force: bool, ignored: Set | None = None) -> tuple[Any, dict]:
    """
    Apply C{config} for C{manager} (upstream C{Updater.Apply}): merge, make the config's
    fields the manager's, remove the fields it applied before and dropped (unless another
    manager owns them), and take fields from others only with C{force}.

    @return: C{(new, managers)}; C{new} is C{None} when the object does not change.
    @raise Conflicts: without C{force}, fields owned by others would change.
    @raise SchemaError: C{config} does not fit the schema.
    """
    s = to_field_set(config, node)
    if ignored is not None:
        s = s.recursive_difference(ignored)
    new = merge(live, config, node)
    managers = dict(managers)
    last = managers.get(manager)
    managers[manager] = VersionedSet(s, version, True)
    if last is not None and not last.set.empty():
        new = _prune(new, managers, manager, last.set, node)
    managers, _ = _update_others(live, new, node, version, managers, manager, force, ignored)
    if _equal(live, new):
        return None, managers
    return new, managers


def _prune(merged: Any, managers: dict, manager: Any, last: Set, node: typed.Node) -> Any:
    mine = managers[manager].set
    others = Set()
    for mid, vs in managers.items():
        if mid != manager:
            others = others.union(vs.set)
    dropped = last.difference(mine)
    remove = Set()
    for p in dropped.paths():
        if others.has_prefix(p) or mine.has_prefix(p):
            continue
        remove.insert(p)
    return remove_items(merged, remove, node)
