# -*- test-case-name: tests.integration.test_audit -*-
"""
Issue 11 item 5 (audit) with the real C{kubectl} against a real C{twistd -n kubeapi} started
with C{--audit-policy-file}, C{--audit-log-path} and C{--audit-webhook-config-file}: the
audit log of a C{kubectl apply} session has the events kube-apiserver v1.32 wrote for the same
session and policy (C{tests/vectors/audit/}), and a local webhook receives them as
C{EventList} batches.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import KubeAPIProcess, class_fixture, class_units
from tests.support import repository_root

VECTORS = repository_root() / "tests" / "vectors" / "audit"
WAIT = 30.0


class _Receiver(BaseHTTPRequestHandler):
    """Keeps every POSTed body (the webhook backend's EventLists)."""

    def do_POST(self) -> None:  # noqa: N802 -- http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.bodies.append((self.headers.get("Content-Type"), json.loads(body)))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@dataclass
class _Fixture:
    server: KubeAPIProcess
    webhook: ThreadingHTTPServer
    work_dir: str
    log_path: str
    session: list = field(default_factory=list)

    def close(self) -> None:
        self.server.stop()
        self.server.cleanup()
        self.webhook.shutdown()
        self.webhook.server_close()
        shutil.rmtree(self.work_dir, ignore_errors=True)


def _start() -> _Fixture:
    work = tempfile.mkdtemp(prefix="kubetwist-audit-")
    webhook = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    webhook.bodies = []
    threading.Thread(target=webhook.serve_forever, daemon=True).start()
    kubeconfig = os.path.join(work, "webhook.kubeconfig")
    with open(kubeconfig, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "audit",
                   "clusters": [{"name": "audit", "cluster": {
                       "server": f"http://127.0.0.1:{webhook.server_address[1]}/audit"}}],
                   "users": [{"name": "audit", "user": {}}],
                   "contexts": [{"name": "audit",
                                 "context": {"cluster": "audit", "user": "audit"}}]}, f)
    log_path = os.path.join(work, "log", "audit.log")
    server = KubeAPIProcess(extra_args=[
        f"--audit-policy-file={VECTORS / 'upstream-policy.yaml'}",
        f"--audit-log-path={log_path}", f"--audit-webhook-config-file={kubeconfig}",
        "--audit-webhook-batch-max-wait=1s", "--audit-webhook-batch-max-size=5"])
    fixture = _Fixture(server, webhook, work, log_path)
    try:
        server.start()
        for manifest in ("app.yaml", "app2.yaml"):
            server.kubectl("apply", "-f", str(VECTORS / manifest))
        server.kubectl("delete", "-f", str(VECTORS / "app2.yaml"))
        server.kubectl("get", "cm", "nope", check=False)
        server.kubectl("get", "--raw", "/version")
        fixture.session = _wait_for_events(log_path, 26)
    except BaseException:
        fixture.close()
        raise
    return fixture


def _read_events(path: str) -> list[dict]:
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def _wait_for_events(path: str, count: int) -> list[dict]:
    """The log's events once there are C{count} (the writer thread writes them a moment after
    the responses)."""
    deadline = time.monotonic() + WAIT
    while True:
        events = _read_events(path)
        if len(events) >= count or time.monotonic() > deadline:
            return events
        time.sleep(0.05)


def _key(ev: dict) -> tuple:
    return (ev["level"], ev["stage"], ev["verb"], ev["requestURI"].split("?")[0],
            (ev.get("responseStatus") or {}).get("code"))


def _upstream_session() -> list[dict]:
    with open(VECTORS / "upstream-events.jsonl") as f:
        return [json.loads(line) for line in f][:26]


class AuditLogTests(SynchronousTestCase):
    """The log backend: the same events, stages and fields as upstream's."""

    def setUp(self) -> None:
        self.fixture = class_fixture(self, _start, _Fixture.close)

    def test_same_events_as_upstream(self) -> None:
        """Each request of the session has upstream's events: None rules give none (no
        deployment RequestReceived: omitted by its rule), and level, stage, verb, path and
        response code match one for one."""
        ours = self.fixture.session
        self.assertEqual([_key(e) for e in ours], [_key(e) for e in _upstream_session()])

    def test_fields_per_level(self) -> None:
        """The same fields as upstream's events (user aside: other credentials); Metadata
        has no bodies, Request the request object only, RequestResponse both."""
        for ours, theirs in zip(self.fixture.session, _upstream_session(), strict=True):
            self.assertEqual(list(ours), list(theirs), _key(ours))
            for name in ("objectRef", "annotations"):
                if name == "objectRef" or ours["stage"] != "RequestReceived":
                    self.assertEqual(ours.get(name), theirs.get(name), (name, _key(ours)))
            status = dict(ours.get("responseStatus") or {})
            expected = dict(theirs.get("responseStatus") or {})
            for st in (status, expected):
                (st.get("details") or {}).pop("uid", None)
            self.assertEqual(status, expected, _key(ours))
            level = ours["level"]
            self.assertEqual("requestObject" in ours,
                             level in ("Request", "RequestResponse")
                             and ours["stage"] == "ResponseComplete"
                             and ours["verb"] in ("create", "patch", "delete"))
            self.assertEqual("responseObject" in ours,
                             level == "RequestResponse" and ours["stage"] == "ResponseComplete")

    def test_request_objects(self) -> None:
        """The patch of the second apply is logged as sent, the delete's DeleteOptions as
        upstream's internal version; the created objects as decoded and defaulted (with
        C{metadata.creationTimestamp: null})."""
        by_key = {(_key(e)[:3] + (_key(e)[3],)): e for e in self.fixture.session}
        theirs = {(_key(e)[:3] + (_key(e)[3],)): e for e in _upstream_session()}
        for key, ev in by_key.items():
            if "requestObject" not in ev:
                continue
            self.assertEqual(ev["requestObject"], theirs[key]["requestObject"], key)

    def test_log_file_mode(self) -> None:
        """The log is created 0600, in a folder created 0700, one JSON event a line."""
        self.assertEqual(os.stat(self.fixture.log_path).st_mode & 0o777, 0o600)
        self.assertEqual(os.stat(os.path.dirname(self.fixture.log_path)).st_mode & 0o777,
                         0o700)


class AuditWebhookTests(SynchronousTestCase):
    """The webhook backend: EventList batches reach a local HTTP server."""

    def setUp(self) -> None:
        self.fixture = class_fixture(self, _start, _Fixture.close)

    def test_batches_received(self) -> None:
        """Every logged event arrives in an C{audit.k8s.io/v1 EventList} of at most
        C{--audit-webhook-batch-max-size} items, in order."""
        want = [(e["auditID"], e["stage"]) for e in self.fixture.session]
        deadline = time.monotonic() + WAIT
        while True:
            bodies = list(self.fixture.webhook.bodies)
            got = [(e["auditID"], e["stage"]) for _, b in bodies for e in b["items"]]
            if set(want) <= set(got) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual([g for g in got if g in set(want)], want)
        for content_type, body in bodies:
            self.assertEqual(content_type, "application/json")
            self.assertEqual((body["kind"], body["apiVersion"], body["metadata"]),
                             ("EventList", "audit.k8s.io/v1", {}))
            self.assertLessEqual(len(body["items"]), 5)
        self.assertGreater(len(bodies), 1)


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
