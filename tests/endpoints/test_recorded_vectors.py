"""
kube-apiserver v1.32's recorded answers (C{tests/vectors/*.jsonl}, written by
C{tools/record_vectors.py} from C{tests/vectors/scripts/*.yaml}) replayed through kubetwist's whole
HTTP pipeline in process: the same requests in the same order, values captured from kubetwist's own
answers, every answer normalised as the recording was, and compared (status code, Content-Type,
Warning headers, body or watch events).

Vectors that differ because of a class of difference another piece of work owns are listed in
L{PENDING} with the class; their comparison is a C{todo} test, so it reports an unexpected success
once that work lands and the entry can go.
"""

import json
import os
from typing import Any, ClassVar

from twisted.trial.unittest import SynchronousTestCase

from tests.support import ADMIN, KubeTestCase
from tools import record_vectors as rv

VECTORS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "vectors")

#: Vector ids (script, id) whose difference belongs to work owned elsewhere, with the class.
PENDING: dict[tuple[str, str], str] = {
}


def load_vectors(script: str) -> list[dict]:
    """The recorded vectors of one script, in order."""
    with open(os.path.join(VECTORS, script + ".jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def first_difference(want: Any, got: Any, path: str = "") -> str | None:
    """Where C{got} first differs from C{want} (a JSON path and both values), or None."""
    if isinstance(want, dict) and isinstance(got, dict):
        for k in list(want) + [k for k in got if k not in want]:
            if k not in got:
                return f"{path}.{k}: missing (want {json.dumps(want[k])[:300]})"
            if k not in want:
                return f"{path}.{k}: unexpected {json.dumps(got[k])[:300]}"
            d = first_difference(want[k], got[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(want, list) and isinstance(got, list):
        for i, (w, g) in enumerate(zip(want, got, strict=False)):
            d = first_difference(w, g, f"{path}[{i}]")
            if d:
                return d
        if len(want) != len(got):
            return f"{path}: {len(got)} items, want {len(want)}"
        return None
    if want != got:
        return f"{path}: got {json.dumps(got)[:400]} want {json.dumps(want)[:400]}"
    return None


class RecorderTests(SynchronousTestCase):
    """The recorder's own functions (C{tools/record_vectors.py})."""

    def test_expand_and_capture(self):
        """Captured values replace C{${name}} in every string of a step."""
        captured: dict = {}
        rv.capture({"capture": {"rv": "metadata.resourceVersion", "uid": "items.0.uid"}},
                   {"metadata": {"resourceVersion": "42"}, "items": [{"uid": "u"}]}, captured)
        self.assertEqual(captured, {"rv": "42", "uid": "u"})
        step = {"id": "x", "method": "PUT", "path": "/p/${uid}", "query": {"a": "${rv}"},
                "body": {"metadata": {"resourceVersion": "${rv}"}}}
        self.assertEqual(rv.request_parts(step, captured), (
            "PUT", "/p/u?a=42", {"Content-Type": "application/json"},
            b'{"metadata": {"resourceVersion": "42"}}'))
        self.assertRaises(KeyError, rv.expand, "${nope}", captured)

    def test_normalise(self):
        """What differs per run becomes a placeholder; the rest is kept."""
        obj = {"kind": "ConfigMap", "metadata": {
            "name": "gen-x1b2c", "generateName": "gen-",
            "uid": "0b3a8f4e-1111-2222-3333-444455556666", "resourceVersion": "12",
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "managedFields": [{"manager": "b", "operation": "Update", "time": "t"},
                              {"manager": "a", "operation": "Update", "subresource": "scale"},
                              {"manager": "c", "operation": "Apply", "time": "t"}]},
            "data": {"m": "UID in record (0b3a8f4e-1111-2222-3333-444455556666)",
                     "n": "the ResourceVersion in record (12)"}}
        out = rv.normalise(obj)
        self.assertEqual(out["metadata"], {
            "name": "gen-<generated>", "generateName": "gen-", "uid": "<uid>",
            "resourceVersion": "<rv>", "creationTimestamp": "<time>",
            "managedFields": [{"manager": "c", "operation": "Apply", "time": "<time>"},
                              {"manager": "a", "operation": "Update", "subresource": "scale"},
                              {"manager": "b", "operation": "Update", "time": "<time>"}]})
        self.assertEqual(out["data"], {"m": "UID in record (<uid>)",
                                       "n": "the ResourceVersion in record (<rv>)"})
        self.assertEqual(obj["metadata"]["uid"], "0b3a8f4e-1111-2222-3333-444455556666")

    def test_spaced_cmp_diff(self):
        """A go-cmp diff with regular spaces is noticed; the non-breaking form is not."""
        self.assertTrue(rv.has_spaced_cmp_diff(
            {"body": {"message": "x\n  core.PodSpec{\n- \tA: 1,\n+ \tA: 2,\n  }\n"}}))
        self.assertFalse(rv.has_spaced_cmp_diff(
            {"body": {"message": "x\n\u00a0\u00a0core.PodSpec{\n-\u00a0\tA: 1,\n  }\n"}}))
        self.assertFalse(rv.has_spaced_cmp_diff({"body": {"message": "a\n  b"}}))

    def test_vectors_load(self):
        """Every stored vector names its step and has a code; ids are unique per script."""
        for name in ("core", "apps", "batch", "rbac", "crd", "fieldselectors", "govalues"):
            vectors = load_vectors(name)
            ids = [v["id"] for v in vectors]
            self.assertEqual(len(ids), len(set(ids)), name)
            self.assertTrue(all(isinstance(v["response"]["code"], int) for v in vectors))


class _Collector:
    def __init__(self, chunks: list) -> None:
        self.chunks = chunks

    def makeConnection(self, transport) -> None:
        pass

    def dataReceived(self, data: bytes) -> None:
        self.chunks.append(data)

    def connectionLost(self, reason) -> None:
        pass


class ReplayTestCase(KubeTestCase):
    """Replays one script's vectors (L{script}) against the in-process server."""

    script = ""

    def settle(self) -> None:
        """Let what the controllers scheduled run (they react to watch events on the clock)."""
        for _ in range(5):
            self.clock.advance(0)

    def send(self, step: dict, captured: dict) -> tuple[int, dict, bytes]:
        method, path, headers, data = rv.request_parts(step, captured)
        headers = {**ADMIN, **headers}
        d = self.treq.request(method, "https://kubetwist.test" + path, data=data,
                              headers={k: [v] for k, v in headers.items()})
        self.treq.flush()
        answered: list = []
        d.addBoth(lambda r: answered.append(r) or r)
        for _ in range(120):
            # an answer that waits (a too new resourceVersion) comes on the clock
            if answered:
                break
            self.clock.advance(0.5)
            self.treq.flush()
        response = self.successResultOf(d)
        if step.get("watch"):
            chunks: list[bytes] = []
            response.deliverBody(_Collector(chunks))
            self.treq.flush()
            timeout = float((step.get("query") or {}).get("timeoutSeconds", "1"))
            self.clock.advance(timeout)
            self.treq.flush()
            raw = b"".join(chunks)
        else:
            raw = self.successResultOf(response.content())
        got = {k.decode(): [v.decode() for v in vs]
               for k, vs in response.headers.getAllRawHeaders()}
        return response.code, got, raw

    def replay(self) -> dict[str, str]:
        """Every compared vector's difference (id -> where), replaying all steps in order."""
        captured: dict[str, str] = {}
        differences = {}
        for want in load_vectors(self.script):
            step = want["request"]
            for _ in range(10):
                code, headers, raw = self.send(step, captured)
                self.settle()
                if not step.get("poll") or code < 400:
                    break
                self.clock.advance(1)
            rv.capture(step, rv.decode_body(raw) if not step.get("watch") else None, captured)
            if step.get("setup"):
                continue
            got = rv.vector(step, code, headers, raw)
            diff = first_difference(want["response"], got["response"])
            if diff:
                differences[step["id"]] = diff
        # a 500 logs its traceback; the answer's code already counts as a difference
        self.flushLoggedErrors()
        return differences

    #: script -> its differences, so the two tests of a script replay it once per run
    _replayed: ClassVar[dict[str, dict[str, str]]] = {}

    def check(self, pending: bool) -> None:
        differences = self._replayed.get(self.script)
        if differences is None:
            differences = self._replayed[self.script] = self.replay()
        ids = {i for (s, i) in PENDING if s == self.script}
        if pending:
            self.assertEqual({i: d for i, d in differences.items() if i in ids}, {})
        else:
            self.assertEqual({i: d for i, d in differences.items() if i not in ids}, {})


def _pending_reason(script: str) -> str | None:
    classes = sorted({c for (s, _), c in PENDING.items() if s == script})
    if not classes:
        return None
    ids = sorted(i for (s, i) in PENDING if s == script)
    return f"pending on {', '.join(classes)}: {', '.join(ids)}"


def _make(script: str) -> type:
    class Replay(ReplayTestCase):
        def test_vectors_match(self):
            """Every vector not pending elsewhere matches kube-apiserver's recorded answer."""
            self.check(pending=False)

        def test_pending_vectors_match(self):
            """The pending vectors (L{PENDING}) match too, once the owning work has landed."""
            self.check(pending=True)

        if _pending_reason(script):
            test_pending_vectors_match.todo = _pending_reason(script)  # type: ignore
        else:
            test_pending_vectors_match.skip = "no pending vectors"  # type: ignore

    Replay.script = script
    Replay.__name__ = Replay.__qualname__ = f"Recorded{script.capitalize()}Tests"
    return Replay


RecordedCoreTests = _make("core")
RecordedAppsTests = _make("apps")
RecordedBatchTests = _make("batch")
RecordedRbacTests = _make("rbac")
RecordedCrdTests = _make("crd")
RecordedFieldselectorsTests = _make("fieldselectors")
RecordedGovaluesTests = _make("govalues")
