# -*- test-case-name: tests.apimachinery.test_fieldmanager -*-
"""
Field paths and field sets: C{sigs.k8s.io/structured-merge-diff/v4/fieldpath}.

A path element is a small hashable tuple:

 - C{("f", "spec")}: a struct field or map key (C{f:spec}, printed C{.spec});
 - C{("k", (("name", '"nginx"'),))}: an associative-list item by its keys, each value as
   canonical JSON, sorted by key name (C{k:{"name":"nginx"}}, printed C{[name="nginx"]});
 - C{("v", '"a"')}: a set-list item by its value as canonical JSON (C{v:"a"}, printed
   C{[="a"]});
 - C{("i", 0)}: a list item by index (C{i:0}, printed C{[0]}).

A path is a tuple of elements.  A L{Set} is upstream's tree: C{members} (elements that are
in the set themselves) and C{children} (elements below which paths continue).  Its
C{FieldsV1} form (L{Set.to_fields_v1}) is the JSON object upstream stores in
C{metadata.managedFields[].fieldsV1}: element keys in upstream's sort order, C{".": {}}
first inside an element that is both a member and has children.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

__all__ = [
    "Set",
    "canonical_json",
    "element_string",
    "field_element",
    "key_element",
    "parse_element",
    "path_string",
    "value_element",
]


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys: how upstream writes values inside C{k:} and C{v:}."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def field_element(name: str) -> tuple:
    """The element of a struct field or map key."""
    return ("f", name)


def key_element(keys: dict) -> tuple:
    """The element of an associative-list item: C{keys} is C{{key_name: value}}."""
    return ("k", tuple((k, canonical_json(keys[k])) for k in sorted(keys)))


def value_element(value: Any) -> tuple:
    """The element of a set-list item."""
    return ("v", canonical_json(value))


_RANK = {"f": 0, "k": 1, "v": 2, "i": 3}


def _value_sort_key(text: str) -> tuple:
    value = json.loads(text)
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, (int, float)):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if value is None:
        return (5, 0)
    return (3 if isinstance(value, list) else 4, text)


def _sort_key(element: tuple) -> tuple:
    kind, payload = element
    if kind == "f":
        return (0, payload)
    if kind == "k":
        return (1, tuple((name, _value_sort_key(v)) for name, v in payload))
    if kind == "v":
        return (2, _value_sort_key(payload))
    return (3, payload)


def element_string(element: tuple) -> str:
    """The element as printed in conflict messages (upstream C{PathElement.String})."""
    kind, payload = element
    if kind == "f":
        return "." + payload
    if kind == "k":
        return "[" + ",".join(f"{name}={_go_string(v)}" for name, v in payload) + "]"
    if kind == "v":
        return f"[={_go_string(payload)}]"
    return f"[{payload}]"


def _go_string(text: str) -> str:
    # upstream value.ToString: strings quoted, numbers and booleans bare, JSON otherwise
    value = json.loads(text)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return text


def path_string(path: tuple) -> str:
    """A path as printed by upstream (C{.spec.containers[name="nginx"].image})."""
    return "".join(element_string(e) for e in path)


def _element_key(element: tuple) -> str:
    kind, payload = element
    if kind == "f":
        return "f:" + payload
    if kind == "k":
        return "k:{" + ",".join(f"{json.dumps(n)}:{v}" for n, v in payload) + "}"
    if kind == "v":
        return "v:" + payload
    return f"i:{payload}"


def parse_element(text: str) -> tuple:
    """
    The element of one C{fieldsV1} key (C{f:spec}, C{k:{...}}, C{v:...}, C{i:0}).

    @raise ValueError: an unknown prefix or malformed JSON.
    """
    prefix, _, rest = text.partition(":")
    if prefix == "f":
        return ("f", rest)
    if prefix == "k":
        keys = json.loads(rest)
        if not isinstance(keys, dict):
            raise ValueError(f"expected a map of keys in {text!r}")
        return key_element(keys)
    if prefix == "v":
        return value_element(json.loads(rest))
    if prefix == "i":
        return ("i", int(rest))
    raise ValueError(f"unknown path element prefix in {text!r}")


class Set:
    """
    A set of field paths (upstream C{fieldpath.Set}).

    @ivar members: elements that are themselves in the set.
    @ivar children: C{{element: Set}} of the paths continuing below an element.
    """

    __slots__ = ("children", "members")

    def __init__(self) -> None:
        self.members: set = set()
        self.children: dict = {}

    # --- construction ---------------------------------------------------------------------
    @classmethod
    def of(cls, *paths: tuple) -> Set:
        """A set holding C{paths}."""
        s = cls()
        for p in paths:
            s.insert(p)
        return s

    def copy(self) -> Set:
        """A deep copy."""
        out = Set()
        out.members = set(self.members)
        out.children = {e: c.copy() for e, c in self.children.items()}
        return out

    def insert(self, path: tuple) -> None:
        """Add one path (the empty path is ignored, as upstream)."""
        if not path:
            return
        node = self
        for e in path[:-1]:
            node = node.children.setdefault(e, Set())
        node.members.add(path[-1])

    def child(self, element: tuple) -> Set:
        """The paths below C{element}, without it (an empty set when none)."""
        return self.children.get(element) or Set()

    # --- queries --------------------------------------------------------------------------
    def has(self, path: tuple) -> bool:
        """Whether C{path} is a member."""
        node = self
        for e in path[:-1]:
            node = node.children.get(e)
            if node is None:
                return False
        return bool(path) and path[-1] in node.members

    def has_prefix(self, path: tuple) -> bool:
        """Whether some member starts with C{path} (C{path} itself included)."""
        node = self
        for i, e in enumerate(path):
            if i == len(path) - 1 and e in node.members:
                return True
            nxt = node.children.get(e)
            if nxt is None:
                return False
            node = nxt
        return not node.empty()

    def empty(self) -> bool:
        """Whether the set holds no path."""
        return not self.members and all(c.empty() for c in self.children.values())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Set):
            return NotImplemented
        return sorted(self.paths(), key=_path_key) == sorted(other.paths(), key=_path_key)

    def __repr__(self) -> str:
        return f"Set({[path_string(p) for p in self.paths()]})"

    def paths(self, prefix: tuple = ()) -> Iterator[tuple]:
        """Every member path, in upstream's sorted order."""
        for e in sorted(self.members | set(self.children), key=_sort_key):
            if e in self.members:
                yield prefix + (e,)
            c = self.children.get(e)
            if c is not None:
                yield from c.paths(prefix + (e,))

    # --- set algebra ----------------------------------------------------------------------
    def union(self, other: Set) -> Set:
        """The paths in either set."""
        out = self.copy()
        out.members |= other.members
        for e, c in other.children.items():
            mine = out.children.get(e)
            out.children[e] = c.copy() if mine is None else mine.union(c)
        return out

    def intersection(self, other: Set) -> Set:
        """The paths in both sets."""
        out = Set()
        out.members = self.members & other.members
        for e, c in self.children.items():
            theirs = other.children.get(e)
            if theirs is not None:
                sub = c.intersection(theirs)
                if not sub.empty():
                    out.children[e] = sub
        return out

    def difference(self, other: Set) -> Set:
        """The paths of this set not in C{other} (children of removed members stay)."""
        out = Set()
        out.members = self.members - other.members
        for e, c in self.children.items():
            theirs = other.children.get(e)
            sub = c.copy() if theirs is None else c.difference(theirs)
            if not sub.empty():
                out.children[e] = sub
        return out

    def recursive_difference(self, other: Set) -> Set:
        """Like L{difference}, and also drop everything below a member of C{other}."""
        out = Set()
        out.members = self.members - other.members
        for e, c in self.children.items():
            if e in other.members:
                continue
            theirs = other.children.get(e)
            sub = c.copy() if theirs is None else c.recursive_difference(theirs)
            if not sub.empty():
                out.children[e] = sub
        return out

    def prefixed(self, path: tuple) -> Set:
        """This set moved below C{path}."""
        out = self
        for e in reversed(path):
            parent = Set()
            parent.children[e] = out
            out = parent
        return out

    # --- FieldsV1 -------------------------------------------------------------------------
    def to_fields_v1(self) -> dict:
        """The C{fieldsV1} JSON object of this set (upstream C{Set.ToJSON})."""
        out: dict = {}
        for e in sorted(self.members | set(self.children), key=_sort_key):
            c = self.children.get(e)
            if c is None or c.empty():
                out[_element_key(e)] = {}
                continue
            inner: dict = {".": {}} if e in self.members else {}
            inner.update(c.to_fields_v1())
            out[_element_key(e)] = inner
        return out

    @classmethod
    def from_fields_v1(cls, doc: Any) -> Set:
        """
        Parse a C{fieldsV1} object.

        @raise TypeError: not an object (or a value under a key that is not one).
        @raise ValueError: a key that is no path element.
        """
        if not isinstance(doc, dict):
            raise TypeError("FieldsV1 must be a JSON object")
        out = cls()
        for key, value in doc.items():
            if key == ".":
                continue
            e = parse_element(key)
            if not isinstance(value, dict):
                raise TypeError(f"expected an object under {key!r}")
            if not value or "." in value:
                out.members.add(e)
            sub = cls.from_fields_v1(value)
            if not sub.empty():
                out.children[e] = sub
        return out


def _path_key(path: tuple) -> tuple:
    return tuple(_sort_key(e) for e in path)
