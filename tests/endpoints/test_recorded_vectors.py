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
from typing import Any

from tests.support import ADMIN, KubeTestCase
from tools import record_vectors as rv

VECTORS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "vectors")

#: Vector ids (script, id) whose difference belongs to work owned elsewhere, with the class.
PENDING: dict[tuple[str, str], str] = {}


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
        for i, (w, g) in enumerate(zip(want, got)):
            d = first_difference(w, g, f"{path}[{i}]")
            if d:
                return d
        if len(want) != len(got):
            return f"{path}: {len(got)} items, want {len(want)}"
        return None
    if want != got:
        return f"{path}: got {json.dumps(got)[:400]} want {json.dumps(want)[:400]}"
    return None


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
        return differences

    def check(self, pending: bool) -> None:
        differences = self.replay()
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

    Replay.script = script
    Replay.__name__ = Replay.__qualname__ = f"Recorded{script.capitalize()}Tests"
    return Replay


RecordedCoreTests = _make("core")
RecordedAppsTests = _make("apps")
RecordedBatchTests = _make("batch")
RecordedRbacTests = _make("rbac")
RecordedCrdTests = _make("crd")
RecordedFieldselectorsTests = _make("fieldselectors")
