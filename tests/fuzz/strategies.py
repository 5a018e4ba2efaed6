# -*- test-case-name: tests.fuzz.test_bodies -*-
"""
Hypothesis strategies for hostile request bodies, from kubetwist's type tables: objects whose
fields are mostly of the right JSON type and sometimes of a wrong one, hostile strings,
markers for deep nesting, and JSON / merge / strategic merge patches.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from kubetwist.runtime import types as typetables

settings.register_profile(
    "ci", max_examples=300, deadline=None, derandomize=True, database=None,
    suppress_health_check=list(HealthCheck), print_blob=True)
settings.register_profile(
    "long", max_examples=2000, deadline=None, database=None,
    suppress_health_check=list(HealthCheck), print_blob=True)

#: The settings every fuzz test runs with (C{KUBETWIST_FUZZ_PROFILE}, default C{ci}).
FUZZ = settings.get_profile(os.environ.get("KUBETWIST_FUZZ_PROFILE", "ci"))

#: A string marker replaced in the encoded body by JSON nested this many levels deep.
DEEP = "@@deep:"

#: Strings that have broken parsers and encoders: lone surrogates (sent as JSON escapes),
#: NUL, the JSON-breaking line separators, non-characters, combining marks, emoji, RTL, long
#: runs, and text that looks like other types.
EDGE_STRINGS = [
    "", " ", "\x00", "\ud800", "\udfff", "a\ud83dz", "\u2028\u2029", "\uffff", "\ufeff",
    "e\u0301", "\U0001f600", "\u202eabc", "0", "-1", "1e400", "true", "null", "{}", "[]",
    "<>&", "\\", '"', "~1/~0", "a" * 300, "é" * 200, "x" * 70000, "..", "-", "a/b",
    "yes", "0x10", "1.5", "2024-01-01T00:00:00Z", "9" * 40,
]

hostile_text = st.one_of(
    st.sampled_from(EDGE_STRINGS),
    st.text(max_size=20),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=10),
)

names = st.one_of(
    st.from_regex(r"\A[a-z]([a-z0-9-]{0,8}[a-z0-9])?\Z"),
    hostile_text,
)

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False), hostile_text,
)

any_json = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(hostile_text, inner, max_size=4)),
    max_leaves=12,
)

deep = st.integers(min_value=2, max_value=12000).map(lambda n: DEEP + str(n))


def _scalar(type_name: str, enum: tuple) -> st.SearchStrategy:
    if enum:
        return st.one_of(st.sampled_from(enum), hostile_text)
    if type_name == "string":
        return st.one_of(names, hostile_text)
    if type_name == "int32":
        return st.one_of(st.integers(-(2**31), 2**31 - 1), st.integers(-(2**40), 2**40))
    if type_name == "int64":
        return st.integers(-(2**63), 2**63 - 1)
    if type_name == "bool":
        return st.booleans()
    if type_name == "double":
        return st.floats(allow_nan=False, allow_infinity=False)
    if type_name == "bytes":
        return st.one_of(st.binary(max_size=20).map(lambda b: __import__("base64")
                                                    .b64encode(b).decode()), hostile_text)
    if type_name == "Quantity":
        return st.one_of(st.sampled_from(["1", "100m", "1Gi", "0.5", "1e3", "-1", "1Ki",
                                          "9" * 30, "1.5.5"]), hostile_text,
                         st.integers(-10, 10**12))
    if type_name == "IntOrString":
        return st.one_of(st.integers(-(2**40), 2**40), st.sampled_from(["80", "50%", "http"]),
                         hostile_text)
    if type_name in ("Time", "MicroTime"):
        return st.one_of(st.sampled_from(["2024-01-01T00:00:00Z", "2024-01-01T00:00:00.123456Z",
                                          "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"]),
                         hostile_text, st.none())
    if type_name == "Duration":
        return st.one_of(st.sampled_from(["1s", "1h2m", "-1s", "0"]), hostile_text)
    return any_json  # FieldsV1, RawExtension, JSON and the schema unions


@st.composite
def value_of(draw: Any, field: typetables.FieldDef, depth: int) -> Any:
    """A value for C{field}: its own type usually, a wrong JSON type sometimes."""
    choice = draw(st.integers(0, 19))
    if choice == 0:
        return draw(any_json)
    if choice == 1:
        return draw(deep)
    if field.container == "list":
        return draw(st.lists(element_of(field, depth), max_size=3))
    if field.container == "map":
        return draw(st.dictionaries(st.one_of(names, hostile_text), element_of(field, depth),
                                    max_size=3))
    return draw(element_of(field, depth))


def element_of(field: typetables.FieldDef, depth: int) -> st.SearchStrategy:
    if field.type in typetables.TYPES:
        if depth <= 0:
            return st.one_of(st.just({}), any_json)
        return object_of(field.type, depth - 1)
    return _scalar(field.type, field.enum)


def _fields(type_name: str) -> list:
    """The JSON fields of a type, inline structs' fields promoted."""
    out = []
    for f in typetables.TYPES[type_name].fields:
        if f.inline and f.type in typetables.TYPES:
            out.extend(_fields(f.type))
        elif f.json_name:
            out.append(f)
    return out


@st.composite
def object_of(draw: Any, type_name: str, depth: int = 4) -> dict:
    """An object of a message type with a few of its fields, sometimes an unknown one."""
    fields = _fields(type_name)
    chosen = draw(st.lists(st.sampled_from(fields), max_size=4, unique_by=lambda f: f.json_name)) \
        if fields else []
    obj = {f.json_name: draw(value_of(f, depth)) for f in chosen}
    if draw(st.integers(0, 9)) == 0:
        obj[draw(hostile_text)] = draw(any_json)
    return obj


#: Resources fuzzed: (collection path, apiVersion, kind).
RESOURCES = [
    ("/api/v1/namespaces/default/configmaps", "v1", "ConfigMap"),
    ("/api/v1/namespaces/default/secrets", "v1", "Secret"),
    ("/api/v1/namespaces/default/pods", "v1", "Pod"),
    ("/api/v1/namespaces/default/services", "v1", "Service"),
    ("/api/v1/namespaces/default/serviceaccounts", "v1", "ServiceAccount"),
    ("/apis/apps/v1/namespaces/default/deployments", "apps/v1", "Deployment"),
    ("/apis/batch/v1/namespaces/default/jobs", "batch/v1", "Job"),
    ("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
     "rbac.authorization.k8s.io/v1", "Role"),
    ("/apis/networking.k8s.io/v1/namespaces/default/ingresses", "networking.k8s.io/v1",
     "Ingress"),
    ("/api/v1/namespaces", "v1", "Namespace"),
]


def type_name_of(api_version: str, kind: str) -> str:
    group, _, version = api_version.rpartition("/")
    name = typetables.lookup_kind(group, version, kind)
    assert name is not None, (api_version, kind)
    return name


@st.composite
def body_of(draw: Any, api_version: str, kind: str) -> dict:
    """A whole object of C{kind}: a usually valid name and C{apiVersion}/C{kind}, hostile
    fields."""
    obj = draw(object_of(type_name_of(api_version, kind), 4))
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or draw(st.integers(0, 3)) > 0:
        meta = dict(meta) if isinstance(meta, dict) else {}
        meta["name"] = draw(st.from_regex(r"\Af[a-z0-9]{1,8}\Z"))
    obj["metadata"] = meta
    obj["apiVersion"] = api_version
    obj["kind"] = kind
    return obj


def encode(body: Any) -> bytes:
    """JSON text of C{body}, every L{DEEP} marker replaced by arrays nested that deep."""
    text = json.dumps(body)
    marker = '"' + DEEP
    while True:
        start = text.find(marker)
        if start < 0:
            return text.encode("utf-8")
        end = text.index('"', start + 1)
        depth = int(text[start + len(marker):end])
        text = text[:start] + "[" * depth + "]" * depth + text[end + 1:]


# --- patches -----------------------------------------------------------------------------------

pointer_segment = st.one_of(
    st.sampled_from(["metadata", "labels", "annotations", "data", "binaryData", "spec",
                     "template", "containers", "0", "1", "-", "replicas", "name", "image",
                     "finalizers", "l", "immutable", "ports", "env", "selector", "~1", "~0",
                     "-1", "999999999999999999999", ""]),
    hostile_text,
)

pointers = st.lists(pointer_segment, min_size=0, max_size=6).map(
    lambda parts: "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts))


@st.composite
def json_patch_op(draw: Any) -> Any:
    op = draw(st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]))
    out: dict = {"op": op, "path": draw(pointers)}
    if op in ("move", "copy"):
        out["from"] = draw(pointers)
    if op in ("add", "replace", "test") or draw(st.booleans()):
        out["value"] = draw(st.one_of(any_json, deep))
    if draw(st.integers(0, 15)) == 0:
        return draw(any_json)  # not an operation
    if draw(st.integers(0, 15)) == 0:
        del out[draw(st.sampled_from(sorted(out)))]
    return out


json_patches = st.lists(json_patch_op(), max_size=8)


@st.composite
def merge_patch(draw: Any, type_name: str) -> Any:
    """A merge patch shaped like the type (with nulls and wrong types), or anything."""
    if draw(st.integers(0, 9)) == 0:
        return draw(any_json)
    obj = draw(object_of(type_name, 3))
    for key in draw(st.lists(st.sampled_from(sorted(obj) or ["x"]), max_size=2)):
        obj[key] = None
    return obj


#: Strategic merge patch directives.
DIRECTIVES = ["$patch", "$retainKeys", "$setElementOrder/containers",
              "$deleteFromPrimitiveList/finalizers", "$setElementOrder/finalizers"]


@st.composite
def strategic_patch(draw: Any, type_name: str) -> Any:
    obj = draw(merge_patch(type_name))
    if isinstance(obj, dict) and draw(st.booleans()):
        obj[draw(st.sampled_from(DIRECTIVES))] = draw(st.one_of(
            st.sampled_from(["replace", "merge", "delete", "bogus"]),
            st.lists(st.one_of(hostile_text, any_json), max_size=3), any_json))
    spec = obj.get("spec") if isinstance(obj, dict) else None
    if isinstance(spec, dict) and draw(st.booleans()):
        spec["$patch"] = draw(st.sampled_from(["replace", "delete", "merge", "x"]))
    return obj
