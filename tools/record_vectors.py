# -*- test-case-name: tests.endpoints.test_recorded_vectors -*-
"""
Record kube-apiserver's answers to a request script as test vectors.

A request script (YAML, C{tests/vectors/scripts/*.yaml}) is C{{"steps": [step, ...]}}; a step is
a mapping with:

  - C{id}: unique within the script (the vector's name);
  - C{method}, C{path}; optional C{query} (mapping, values strings), C{headers} (mapping);
  - the body: C{body} (any JSON value, sent JSON-encoded) or C{raw} (a string sent as it is),
    with C{content_type} (default C{application/json} when there is a body);
  - C{capture}: C{{name: "dotted.path"}} values taken from the answer's (unnormalised) body, e.g.
    C{metadata.resourceVersion} or C{items.0.metadata.uid}; C{${name}} in any later string of the
    path, query, headers, body or raw is replaced by the captured value;
  - C{poll}: repeat the request until it answers below 400 (a CRD being established, a custom
    resource appearing in discovery); only the last answer is kept;
  - C{watch}: true for a watch request (C{query} carries C{watch}, C{resourceVersion} and a small
    C{timeoutSeconds}): the stream is read until the server ends it, and its events are kept.

Each answer is stored as one JSON line of C{tests/vectors/<script>.jsonl}::

  {"id": ..., "request": <the step as written, placeholders unexpanded>,
   "response": {"code": 201, "headers": {"Content-Type": ..., "Warning": [...]},
                "body": <normalised JSON body, or text> | "events": [<normalised events>]}}

L{normalise} writes the values that differ on every run as placeholders (the rules of
C{../shared/golden/README.md}, see C{tests/vectors/README.md}); replaying a vector against another
server and normalising its answer the same way must give the same line.

Usage::

  python tools/record_vectors.py --kubeconfig KUBECONFIG tests/vectors/scripts/core.yaml ...

This module uses only the standard library and PyYAML; it imports nothing from kubetwist, so
the tests can use its functions (L{expand}, L{capture}, L{normalise}) to replay the vectors.
"""

from __future__ import annotations

import argparse
import base64
import copy
import http.client
import json
import os
import re
import ssl
import sys
import tempfile
import time
import urllib.parse
from typing import Any

import yaml

#: Table columns that print the time elapsed since a timestamp.
_TIME_COLUMNS = ("Age", "Duration", "Last Schedule", "Created At")

#: Times of a condition (C{{"type", "status", "lastTransitionTime", ...}}), which the server
#: sets to the time of the write when it adds a condition (a Pod's PodScheduled on binding).
_CONDITION_TIMES = ("lastTransitionTime", "lastProbeTime", "lastUpdateTime", "lastHeartbeatTime")

#: The response headers kept in a vector.
KEPT_HEADERS = ("Content-Type", "Warning")

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_API_ACCESS = re.compile(r"kube-api-access-[a-z0-9]{5}")
_POINTER = re.compile(r"\(0x[0-9a-f]{6,}\)")
#: go-cmp's diff lines written with regular spaces: a kube-apiserver process picks regular or
#: non-breaking spaces (U+00A0, with its own edit-script search order) when it starts; kubetwist
#: prints what a process that picked non-breaking spaces prints.
_CMP_DIFF_SPACES = re.compile(r"\n(  |[+-] )(\t|[a-z0-9]+\.[A-Z]\w*\{\n)")
_PRECONDITION_RV = re.compile(r"(ResourceVersion in record \(|Too large resource version: "
                              r"\d+, current: )\d+")


def has_spaced_cmp_diff(value: Any) -> bool:
    """Whether a string in C{value} holds a go-cmp diff written with regular spaces (see
    C{_CMP_DIFF_SPACES}); kubetwist's vectors keep the non-breaking form."""
    if isinstance(value, str):
        return _CMP_DIFF_SPACES.search(value) is not None
    if isinstance(value, dict):
        return any(has_spaced_cmp_diff(v) for v in value.values())
    if isinstance(value, list):
        return any(has_spaced_cmp_diff(v) for v in value)
    return False


def load_script(path: str) -> list[dict]:
    """The steps of a request script (YAML or JSON), checked for unique ids.

    @raise ValueError: a step without C{id}, C{method} or C{path}, or a repeated id.
    """
    with open(path) as f:
        doc = yaml.safe_load(f)
    steps = doc["steps"] if isinstance(doc, dict) else doc
    seen: set[str] = set()
    for step in steps:
        for key in ("id", "method", "path"):
            if key not in step:
                raise ValueError(f"{path}: step {step!r} has no {key!r}")
        if step["id"] in seen:
            raise ValueError(f"{path}: id {step['id']!r} repeated")
        seen.add(step["id"])
    return steps


def expand(value: Any, captured: dict[str, str]) -> Any:
    """C{value} with every C{${name}} in its strings replaced by C{captured[name]}.

    @raise KeyError: a placeholder names nothing captured yet.
    """
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: str(captured[m.group(1)]), value)
    if isinstance(value, list):
        return [expand(v, captured) for v in value]
    if isinstance(value, dict):
        return {k: expand(v, captured) for k, v in value.items()}
    return value


def lookup(body: Any, dotted: str) -> Any:
    """The value at C{dotted} (keys and list indices joined by dots) in C{body}, or None."""
    cur = body
    for part in dotted.split("."):
        if isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return None
    return cur


def capture(step: dict, body: Any, captured: dict[str, str]) -> None:
    """Store the values the step's C{capture} names from C{body} into C{captured}."""
    for name, dotted in (step.get("capture") or {}).items():
        value = lookup(body, dotted)
        if value is not None:
            captured[name] = value


def request_parts(step: dict, captured: dict[str, str]) -> tuple[str, str, dict, bytes | None]:
    """C{(method, path with query, headers, body bytes)} of a step, placeholders expanded."""
    path = expand(step["path"], captured)
    query = expand(step.get("query") or {}, captured)
    if query:
        path += "?" + urllib.parse.urlencode(query)
    headers = expand(dict(step.get("headers") or {}), captured)
    data: bytes | None = None
    if "raw" in step:
        data = expand(step["raw"], captured).encode()
    elif "body" in step:
        data = json.dumps(expand(step["body"], captured)).encode()
    if data is not None:
        headers.setdefault("Content-Type", step.get("content_type", "application/json"))
    return step["method"], path, headers, data


def decode_body(raw: bytes) -> Any:
    """A response body as JSON, or as text when it is not JSON."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def decode_events(raw: bytes) -> list:
    """The events of a watch stream (JSON lines)."""
    return [decode_body(line) for line in raw.splitlines() if line.strip()]


def _normalise_meta(meta: dict) -> None:
    if "uid" in meta:
        meta["uid"] = "<uid>"
    for key in ("creationTimestamp", "deletionTimestamp"):
        if meta.get(key):
            meta[key] = "<time>"
    if meta.get("resourceVersion"):
        meta["resourceVersion"] = "<rv>"
    if meta.get("continue"):
        meta["continue"] = "<continue>"
    meta.pop("selfLink", None)
    gen = meta.get("generateName")
    if gen and isinstance(meta.get("name"), str) and meta["name"].startswith(gen):
        meta["name"] = gen + "<generated>"
    entries = meta.get("managedFields")
    if isinstance(entries, list) and all(isinstance(e, dict) for e in entries):
        for entry in entries:
            if entry.get("time"):
                entry["time"] = "<time>"
        # upstream orders entries by operation, time, manager, apiVersion, subresource; times
        # are normalised away, so order by the rest (untimed entries, time zero, first)
        entries.sort(key=lambda e: (str(e.get("operation")), "time" in e, str(e.get("manager")),
                                    str(e.get("apiVersion")), str(e.get("subresource", ""))))


def _walk(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _walk(v) for k, v in value.items()}
        for key in _CONDITION_TIMES:
            if isinstance(out.get(key), str) and "type" in out:
                out[key] = "<time>"
        meta = out.get("metadata")
        if isinstance(meta, dict):
            _normalise_meta(meta)
        if out.get("kind") == "Service" and isinstance(out.get("spec"), dict):
            spec = out["spec"]
            for key in ("clusterIP", "clusterIPs", "healthCheckNodePort"):
                if key in spec and spec[key] not in (None, "None", ["None"]):
                    spec[key] = "<allocated>"
            for port in spec.get("ports") or []:
                if isinstance(port, dict) and "nodePort" in port:
                    port["nodePort"] = "<allocated>"
        if out.get("kind") == "Table":
            columns = out.get("columnDefinitions") or []
            varying = {i: "<age>" for i, c in enumerate(columns)
                       if c.get("name") in _TIME_COLUMNS or c.get("type") == "date"}
            varying.update({i: "<allocated>" for i, c in enumerate(columns)
                            if c.get("name") == "Cluster-IP"})
            for row in out.get("rows") or []:
                gen = ((row.get("object") or {}).get("metadata") or {}).get("generateName")
                cells = row.get("cells") or []
                if gen and cells and isinstance(cells[0], str) and cells[0].startswith(gen):
                    cells[0] = gen + "<generated>"
                for i, placeholder in varying.items():
                    if i < len(row.get("cells") or []):
                        row["cells"][i] = placeholder
        return out
    if isinstance(value, list):
        return [_walk(v) for v in value]
    if isinstance(value, str):
        value = _UUID.sub("<uid>", value)
        value = _API_ACCESS.sub("kube-api-access-<generated>", value)
        value = _POINTER.sub("(<pointer>)", value)
        return _PRECONDITION_RV.sub(r"\g<1><rv>", value)
    return value


def normalise(body: Any) -> Any:
    """C{body} (an object, list, Table, Status or watch event) with what differs on every run
    written as placeholders: C{metadata.uid} and every UUID in a string as C{<uid>};
    C{creationTimestamp}, C{deletionTimestamp}, C{managedFields[].time} and the times of
    conditions (C{lastTransitionTime}, ...) as C{<time>}, the
    C{managedFields} entries sorted as upstream sorts them but with every time equal;
    C{metadata.resourceVersion} as C{<rv>} (also in precondition and "too large resource
    version" messages); C{metadata.continue}
    as C{<continue>}; a generated name as C{<generateName><generated>}; a Service's allocated
    C{clusterIP(s)}, C{nodePort}s and C{healthCheckNodePort} as C{<allocated>};
    C{kube-api-access-xxxxx} as C{kube-api-access-<generated>}; Go pointers printed in
    messages (C{(*int64)(0xc000123456)}) as C{(<pointer>)}; Table cells of C{date} columns and of
    those printing elapsed time (C{Age}, C{Duration}, C{Last Schedule}) as C{<age>}, of a
    C{Cluster-IP} column as C{<allocated>}, a generated name in the first cell as above. C{selfLink}
    is removed.
    The argument is not changed."""
    return _walk(copy.deepcopy(body))


def normalise_headers(headers: dict[str, list[str]]) -> dict:
    """The kept headers (L{KEPT_HEADERS}): C{Content-Type} as a string, C{Warning} as a list of
    values (absent when none), each normalised as bodies are."""
    out: dict[str, Any] = {}
    for name in KEPT_HEADERS:
        values = headers.get(name) or []
        if not values:
            continue
        out[name] = values[0] if name == "Content-Type" else [_walk(v) for v in values]
    return out


def vector(step: dict, code: int, headers: dict[str, list[str]], raw: bytes) -> dict:
    """The vector (one JSON line) of a step's answer."""
    response: dict[str, Any] = {"code": code, "headers": normalise_headers(headers)}
    if step.get("watch"):
        response["events"] = normalise(decode_events(raw))
    else:
        response["body"] = normalise(decode_body(raw))
    return {"id": step["id"], "request": step, "response": response}


class Server:
    """An API server reached as a kubeconfig's current context describes it (server URL,
    C{certificate-authority(-data)} or C{insecure-skip-tls-verify}, bearer C{token} or
    C{client-certificate(-data)}/C{client-key(-data)})."""

    def __init__(self, kubeconfig: str) -> None:
        with open(kubeconfig) as f:
            config = yaml.safe_load(f)
        ctx_name = config.get("current-context")
        ctx = next(c["context"] for c in config["contexts"] if c["name"] == ctx_name)
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == ctx["cluster"])
        user = next(u["user"] for u in config["users"] if u["name"] == ctx["user"])
        url = urllib.parse.urlsplit(cluster["server"])
        self.host, self.port = url.hostname, url.port or 443
        self.tls = ssl.create_default_context()
        if cluster.get("insecure-skip-tls-verify"):
            self.tls.check_hostname = False
            self.tls.verify_mode = ssl.CERT_NONE
        elif cluster.get("certificate-authority-data"):
            self.tls.load_verify_locations(
                cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        elif cluster.get("certificate-authority"):
            self.tls.load_verify_locations(cluster["certificate-authority"])
        self.headers = {}
        if user.get("token"):
            self.headers["Authorization"] = "Bearer " + user["token"]
        cert, key = user.get("client-certificate"), user.get("client-key")
        if user.get("client-certificate-data"):
            cert = self._tmp(user["client-certificate-data"])
            key = self._tmp(user["client-key-data"])
        if cert:
            self.tls.load_cert_chain(cert, key)

    @staticmethod
    def _tmp(data: str) -> str:
        fd, path = tempfile.mkstemp()
        with os.fdopen(fd, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def send(self, method: str, path: str, headers: dict, data: bytes | None
             ) -> tuple[int, dict[str, list[str]], bytes]:
        """One request on a new connection: C{(code, headers as lists of values, body)}; a
        streamed body (watch) is read until the server ends it."""
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.tls, timeout=60)
        try:
            conn.request(method, path, body=data, headers={**self.headers, **headers})
            resp = conn.getresponse()
            raw = resp.read()
            return resp.status, {k: resp.headers.get_all(k) for k in set(resp.headers)}, raw
        finally:
            conn.close()


def record(server: Server, steps: list[dict]) -> list[dict]:
    """Replay C{steps} against C{server} in order; the vectors of their answers."""
    captured: dict[str, str] = {}
    vectors = []
    for step in steps:
        method, path, headers, data = request_parts(step, captured)
        for _ in range(60):
            code, got_headers, raw = server.send(method, path, headers, data)
            if not step.get("poll") or code < 400:
                break
            time.sleep(0.5)
        capture(step, decode_body(raw) if not step.get("watch") else None, captured)
        vectors.append(vector(step, code, got_headers, raw))
    return vectors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--out", help="directory of the .jsonl files (default: beside scripts/)")
    parser.add_argument("scripts", nargs="+")
    args = parser.parse_args(argv)
    server = Server(args.kubeconfig)
    for script in args.scripts:
        out_dir = args.out or os.path.dirname(os.path.dirname(os.path.abspath(script)))
        name = os.path.splitext(os.path.basename(script))[0]
        vectors = record(server, load_script(script))
        if any(has_spaced_cmp_diff(v["response"]) for v in vectors):
            print(f"{name}: the server printed cmp.Diff with regular spaces; restart it until it "
                  "prints non-breaking spaces and record again", file=sys.stderr)
        with open(os.path.join(out_dir, name + ".jsonl"), "w") as f:
            f.writelines(json.dumps(v, sort_keys=True) + "\n" for v in vectors)
        print(f"{name}: {len(vectors)} vectors", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
