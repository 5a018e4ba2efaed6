# -*- test-case-name: tests.runtime.test_typed -*-
"""
Wrong-type request bodies for every field of kubetwist's type tables, and the recorder that
asked a real kube-apiserver v1.32 what it answers to each (by hand; tests only read the
recorded vectors, C{fixtures/typed_vectors.json}).

Each case puts one JSON value of the wrong type (or a value Go refuses: C{1.5} or
C{3000000000} for an C{int32}, bad base64, a bad time) at one field of one type, inside an
otherwise empty object of a kind upstream creates, reached by the shortest path of fields
(L{placements}).  Upstream answers 400 with Go's decoder error, or decodes the body and
answers something else (a 422 or 403: then the value was accepted by the decoder).

Run the recorder against an upstream started with C{../shared/upstream/run-upstream.sh}::

    PYTHONPATH=. python -m tests.runtime.typed_cases https://127.0.0.1:PORT TOKEN

It rewrites C{fixtures/typed_vectors.json} and C{kubetwist/runtime/gotypes.py}.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import deque
from typing import Any, Optional

from kubetwist.runtime import typed
from kubetwist.runtime import types as typetables

VECTORS = os.path.join(os.path.dirname(__file__), "fixtures", "typed_vectors.json")
_RAW = "\x00raw\x00"

#: Wrong values by field type, as JSON text; field i of a type takes variant i mod len.
WRONG = {
    "string": ["1", "true", "[]", "{}", "1.5"],
    "bool": ['"x"', "1", "[]", "{}"],
    "int32": ['"x"', "1.5", "1.0", "1e3", "3000000000", "true", "[]", "{}", "-2147483649"],
    "int64": ['"x"', "1.5", "1E3", "9223372036854775808", "true", "[]", "{}"],
    "double": ['"x"', "1e400", "true", "[]"],
    "bytes": ["1", '"!!"', '"YQ="', '"YQ"', "[256]", '["a"]', "true", "{}"],
    "Quantity": ['"x"', "[1]", "true", "{}", '"1Q"', '"1e"', '""'],
    "IntOrString": ["[]", "true", "1.5", "{}", "3000000000"],
    "Time": ["5", '"x"', '"2024-13-01T00:00:00Z"', '"2024-01-01"', '"2024-01-01T00:00:00"',
             '"2024-02-30T00:00:00Z"', "[]"],
    "MicroTime": ["5", '"x"', '"2024-01-01T00:00:00Z"', '"2024-01-01T25:00:00.000000Z"'],
    "Duration": ['"x"', "5", '"5"', '"5y"'],
    "RawExtension": ['"x"', "1"],
    "FieldsV1": ["1", '"x"'],
    "ExtraValue": ["1", '"x"', "{}", "[1]"],
    "message": ['"x"', "[]", "1", "true"],
    "list": ["{}", '"x"', "1"],
    "map": ["[]", '"x"', "true"],
}


#: Kinds decoded outside a collection's create: C{(type name, path, apiVersion, kind,
#: method)}.
EXTRA_ROOTS = (
    ("io.k8s.api.policy.v1.Eviction", "/api/v1/namespaces/default/pods/p/eviction",
     "policy/v1", "Eviction", "POST"),
    ("io.k8s.api.autoscaling.v1.Scale", "/apis/apps/v1/namespaces/default/deployments/d/scale",
     "autoscaling/v1", "Scale", "PUT"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
     "/api/v1/namespaces/default/configmaps/cm", "v1", "DeleteOptions", "DELETE"),
)
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"selector": {"matchLabels": {"a": "b"}},
                       "template": {"metadata": {"labels": {"a": "b"}},
                                    "spec": {"containers": [{"name": "c", "image": "i"}]}}}}


def placements(roots: dict) -> dict:
    """
    C{type name -> (root type, steps)}: the shortest way to a value of each type from a root
    kind; a step is C{(json name or None for an inline embed, container)}.
    """
    place: dict = {}
    queue: deque = deque()
    for name in sorted(roots):
        place[name] = (name, ())
        queue.append(name)
    while queue:
        name = queue.popleft()
        root, steps = place[name]
        for f in typetables.TYPES[name].fields:
            if not f.is_message or f.type not in typetables.TYPES or f.type in place:
                continue
            place[f.type] = (root, steps + ((None if f.inline else f.json_name, f.container),))
            queue.append(f.type)
    return place


def build_body(roots: dict, place: dict, type_name: str, key: str, raw: str) -> tuple:
    """C{(collection path, body bytes)} with C{raw} (JSON text) at field C{key} of a value of
    C{type_name}."""
    root, steps = place[type_name]
    path, api_version, kind = roots[root][:3]
    doc: dict = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "probe"}}
    node = doc
    for name, container in steps:
        if name is None:
            continue
        child: dict = {}
        node[name] = [child] if container == "list" else {"k": child} if container == "map" \
            else child
        node = child
    node[key] = _RAW
    return path, json.dumps(doc).replace(json.dumps(_RAW), raw).encode()


def cases(place: dict) -> list:
    """C{(type name, json name, JSON text of the field's value, whether the wrong value is
    the list's or map's element)} for every field."""
    out = []
    for type_name in sorted(place):
        for i, f in enumerate(typetables.TYPES[type_name].fields):
            if f.inline or f.json_name in ("apiVersion", "kind"):
                continue
            elem_kind = "message" if f.is_message and f.type in typetables.TYPES else f.type
            if f.container:
                variants = WRONG[f.container]
                out.append((type_name, f.json_name, variants[i % len(variants)], False))
                ev = WRONG[elem_kind]
                elem = ev[i % len(ev)]
                out.append((type_name, f.json_name,
                            f"[{elem}]" if f.container == "list" else f'{{"k":{elem}}}', True))
            else:
                for j, raw in enumerate(WRONG[elem_kind]):
                    if elem_kind in ("string", "bool", "message", "int32", "int64") and \
                            j != i % len(WRONG[elem_kind]):
                        continue
                    out.append((type_name, f.json_name, raw, False))
    return out


def load() -> dict:
    """The recorded vectors: C{{"roots", "placements", "cases": [[type, key, raw JSON, code,
    message]]}} (for a 400 the decoder's part of the message, after C{cannot be handled as a
    Kind: }; else C{""})."""
    with open(VECTORS) as f:
        data = json.load(f)
    data["placements"] = {k: (v[0], tuple(tuple(s) for s in v[1]))
                          for k, v in data["placements"].items()}
    return data


# --- recording -----------------------------------------------------------------------------------
_TYPE_RE = re.compile(r"json: cannot unmarshal (\S+(?: \S+)?) into Go struct field (\S+) "
                      r"of type (.+)$")


def _record(base: str, token: str) -> None:  # pragma: no cover - needs a real server
    import ssl
    import urllib.error
    import urllib.request

    ctx = ssl._create_unverified_context()
    auth = {"Authorization": f"Bearer {token}"}

    def get(path: str) -> Any:
        with urllib.request.urlopen(urllib.request.Request(base + path, headers=auth),
                                    context=ctx) as r:
            return json.loads(r.read())

    def post(path: str, body: bytes, method: str = "POST") -> tuple:
        r = urllib.request.Request(base + path + "?dryRun=All", data=body, method=method,
                                   headers={**auth, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(r, context=ctx) as resp:
                return resp.status, ""
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read()).get("message", "")

    roots: dict = {}
    gvs = [("", "v1")] + [(g["name"], v["version"]) for g in get("/apis")["groups"]
                          for v in g["versions"]]
    for group, version in gvs:
        base_path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        for r in get(base_path)["resources"]:
            if "/" in r["name"] or "create" not in r.get("verbs", ()):
                continue
            name = typetables.lookup_kind(group, version, r["kind"])
            if name is None or name in roots:
                continue
            ns = "/namespaces/default" if r["namespaced"] else ""
            roots[name] = (f"{base_path}{ns}/{r['name']}",
                           f"{group}/{version}" if group else version, r["kind"])
    # kinds decoded by subresources and deletes (the objects they name exist; bodies that
    # decode are dry runs, but a DeleteOptions body's own dryRun wins: the ConfigMap may go)
    post("/api/v1/namespaces/default/configmaps", json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}).encode())
    post("/apis/apps/v1/namespaces/default/deployments", json.dumps(DEPLOYMENT).encode())
    methods = {}
    for name, path, api_version, kind, method in EXTRA_ROOTS:
        roots[name] = (path, api_version, kind)
        methods[name] = method
    place = placements(roots)
    recorded = []
    names: dict = {}
    for type_name, key, raw, is_elem in cases(place):
        path, body = build_body(roots, place, type_name, key, raw)
        code, message = post(path, body, methods.get(place[type_name][0], "POST"))
        recorded.append([type_name, key, raw, code,
                         (expected_message(message) or message) if code in (400, 500)
                         else ""])
        m = _TYPE_RE.search(message) if code in (400, 500) else None
        if not m:
            continue
        f = typed.fields_by_json(type_name)[key][0]
        if (f.type in typetables.SPECIALS or f.type == "bytes") and \
                (is_elem or not f.container):
            continue
        derived = typed.default_go_type(f, elem=is_elem)
        if m.group(3) != derived:
            names.setdefault(type_name, {}).setdefault(key, ["", ""])[int(is_elem)] = m.group(3)
    with open(VECTORS, "w") as f:
        f.write('{"roots": ' + json.dumps(roots, sort_keys=True) + ',\n"placements": ')
        f.write(json.dumps({k: [v[0], [list(s) for s in v[1]]] for k, v in place.items()},
                           sort_keys=True))
        f.write(',\n"cases": [\n')
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in recorded))
        f.write("\n]}\n")
    _write_gotypes(names)


def _write_gotypes(names: dict) -> None:  # pragma: no cover - recorder
    target = os.path.join(os.path.dirname(typed.__file__), "gotypes.py")
    lines = [
        "# -*- test-case-name: tests.runtime.test_typed -*-",
        '"""',
        "Go type names (C{reflect.Type.String()}) of the type tables' fields where they differ",
        "from what L{kubetwist.runtime.typed.default_go_type} derives: the named types",
        "(C{v1.Protocol}, C{types.UID}, C{v1.ResourceList}) that Go's decoder prints in",
        "C{json: cannot unmarshal ... of type v1.Protocol}.  Recorded from kube-apiserver v1.32",
        "by L{tests.runtime.typed_cases}; data only.",
        "",
        "C{{type name: {json name: (field type, list or map element type)}}}; C{\"\"} keeps the",
        "derived name.",
        '"""',
        "",
        "GO_TYPES = {",
    ]
    for type_name in sorted(names):
        lines.append(f"    {type_name!r}: {{")
        for key, (t, e) in sorted(names[type_name].items()):
            lines.append(f"        {key!r}: ({t!r}, {e!r}),")
        lines.append("    },")
    lines.append("}")
    with open(target, "w") as f:
        f.write("\n".join(lines).replace("'", '"') + "\n")


def expected_message(message: str) -> Optional[str]:
    """The decoder's part of an upstream C{... cannot be handled as a Kind: <error>} message."""
    m = re.match(r'\S+ in version "[^"]+" cannot be handled as a \S+: (.*)$', message, re.S)
    return m.group(1) if m else None


if __name__ == "__main__":  # pragma: no cover
    _record(sys.argv[1], sys.argv[2])
