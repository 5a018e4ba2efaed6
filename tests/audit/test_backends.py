"""
Audit backends (L{kubetwist.audit.backends}): lumberjack's rotation and backup names, the log
backend's writer thread and bounded buffer, the webhook backend's batching, retries with
backoff, throttling and overflow.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import tempfile

from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase, TestCase

from kubetwist.audit import backends
from kubetwist.audit.backends import (
    METRICS,
    LogBackend,
    RotatingFile,
    WebhookBackend,
    event_list,
)

EVENT = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
         "auditID": "a", "stage": "ResponseComplete", "requestURI": "/api?x=1&y=2",
         "verb": "get", "user": {"username": "admin"}, "sourceIPs": ["127.0.0.1"],
         "requestReceivedTimestamp": "2023-11-14T22:13:20.250000Z",
         "stageTimestamp": "2023-11-14T22:13:20.250000Z"}


def event(n: int) -> dict:
    return dict(EVENT, auditID=str(n))


class TempDir(SynchronousTestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)


class RotationTests(TempDir):
    def test_backup_name(self):
        """lumberjack's backupName: <name>-<UTC time with milliseconds><ext>."""
        f = RotatingFile(os.path.join(self.dir, "audit.log"))
        self.assertEqual(f.backup_name(1700000000.25),
                         os.path.join(self.dir, "audit-2023-11-14T22-13-20.250.log"))

    def test_rotates_before_overflowing(self):
        """A write that would pass max size rotates first; backups beyond max_backups go,
        the newest stay; a new file is 0600."""
        now = [1700000000.0]
        f = RotatingFile(os.path.join(self.dir, "audit.log"), max_size_mb=1, max_backups=2,
                         now=lambda: now[0])
        chunk = b"x" * (600 * 1024)
        for _ in range(4):
            f.write(chunk)
            now[0] += 1
        f.close()
        names = sorted(os.listdir(self.dir))
        # rotated at t0+1, t0+2, t0+3: the oldest backup is gone
        self.assertEqual(names, ["audit-2023-11-14T22-13-22.000.log",
                                 "audit-2023-11-14T22-13-23.000.log", "audit.log"])
        self.assertEqual(os.path.getsize(os.path.join(self.dir, "audit.log")), len(chunk))
        self.assertEqual(os.stat(os.path.join(self.dir, "audit.log")).st_mode & 0o777, 0o600)

    def test_max_age(self):
        """Backups older than max_age_days are removed at rotation."""
        now = [1700000000.0]
        f = RotatingFile(os.path.join(self.dir, "a.log"), max_size_mb=1, max_age_days=1,
                         now=lambda: now[0])
        chunk = b"x" * (600 * 1024)
        f.write(chunk)
        f.write(chunk)                      # backup at t0
        now[0] += 2 * 86400
        f.write(chunk)                      # backup at t0 + 2 days; the first is too old
        f.close()
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ["a-2023-11-16T22-13-20.000.log", "a.log"])

    def test_max_size_zero_never_rotates(self):
        """--audit-log-maxsize=0 (the default): a plain appended file (upstream)."""
        f = RotatingFile(os.path.join(self.dir, "a.log"))
        f.write(b"x" * (2 * 1024 * 1024))
        f.write(b"y")
        f.close()
        self.assertEqual(os.listdir(self.dir), ["a.log"])
        self.assertEqual(os.path.getsize(os.path.join(self.dir, "a.log")), 2 * 1024 * 1024 + 1)

    def test_appends_to_existing(self):
        path = os.path.join(self.dir, "a.log")
        with open(path, "wb") as fh:
            fh.write(b"old\n")
        f = RotatingFile(path)
        f.write(b"new\n")
        f.close()
        with open(path, "rb") as fh:
            self.assertEqual(fh.read(), b"old\nnew\n")

    def test_too_large_write(self):
        f = RotatingFile(os.path.join(self.dir, "a.log"), max_size_mb=1)
        e = self.assertRaises(OSError, f.write, b"x" * (1024 * 1024 + 1))
        self.assertEqual(str(e), "write length 1048577 exceeds maximum file size 1048576")


class MemorySink:
    def __init__(self):
        self.data = b""
        self.closed = False
        self.fail = False

    def write(self, data):
        if self.fail:
            raise OSError("disk full")
        self.data += data

    def flush(self):
        pass

    def close(self):
        self.closed = True


class LogBackendTests(TempDir):
    def setUp(self):
        super().setUp()
        errors = dict(METRICS.error_total)
        self.addCleanup(lambda: METRICS.error_total.update(errors))

    def test_json_lines_through_the_thread(self):
        """Events become JSON lines, written by the writer thread; shutdown writes what is
        queued and closes the file."""
        path = os.path.join(self.dir, "sub", "audit.log")
        b = LogBackend.from_path(path)
        b.run()
        self.assertTrue(b.process_events([event(1), event(2)]))
        b.shutdown()
        with open(path) as f:
            lines = [json.loads(line) for line in f]
        self.assertEqual([e["auditID"] for e in lines], ["1", "2"])
        with open(path, "rb") as f:
            self.assertIn(b'"requestURI":"/api?x=1\\u0026y=2"', f.read())

    def test_legacy_format(self):
        sink = MemorySink()
        b = LogBackend(sink, fmt="legacy")
        b.run()
        b.process_events([event(1)])
        b.shutdown()
        self.assertTrue(sink.data.startswith(b'2023-11-14T22:13:20.25Z AUDIT: id="1" '))
        self.assertTrue(sink.closed)

    def test_overflow_is_dropped_counted_and_logged(self):
        """Without the writer running, a full buffer drops events: counted under the
        plugin, one log line; blocking modes still answer True, blocking-strict False."""
        logged = []
        self.patch(backends.log, "error", lambda fmt, **kw: logged.append(kw))
        before = METRICS.error_total.get("log", 0)
        b = LogBackend(MemorySink(), buffer_size=2)
        self.assertTrue(b.process_events([event(1), event(2), event(3), event(4)]))
        self.assertEqual(METRICS.error_total["log"] - before, 2)
        self.assertEqual(logged, [{"plugin": "log", "n": 2,
                                   "err": "audit buffer queue blocked"}])
        strict = LogBackend(MemorySink(), mode="blocking-strict", buffer_size=1)
        self.assertTrue(strict.process_events([event(1)]))
        self.assertFalse(strict.process_events([event(2)]))

    def test_write_error_fails_strict(self):
        """A failed write is counted; blocking-strict then refuses new events."""
        sink = MemorySink()
        sink.fail = True
        self.patch(backends.log, "error", lambda fmt, **kw: None)
        b = LogBackend(sink, mode="blocking-strict")
        b.queue.put_nowait(b"line\n")
        b.queue.put_nowait(backends._STOP)
        b._loop()
        self.assertEqual(b.write_error, "disk full")
        self.assertFalse(b.process_events([event(1)]))

    def test_never_waits(self):
        """process_events only queues: nothing is written on the caller's thread."""
        sink = MemorySink()
        b = LogBackend(sink)
        b.process_events([event(1)])
        self.assertEqual(sink.data, b"")
        self.assertEqual(b.queue.qsize(), 1)
        self.assertRaises(queue.Empty, lambda: [b.queue.get_nowait(), b.queue.get_nowait()])


class FakePoster:
    """The webhook's POST: answers from a list of codes (a Deferred each, fired by the
    test or at once)."""

    def __init__(self, codes=(200,)):
        self.codes = list(codes)
        self.bodies: list[dict] = []

    def __call__(self, body):
        self.bodies.append(json.loads(body))
        code = self.codes.pop(0) if self.codes else 200
        if isinstance(code, Exception):
            return defer.fail(code)
        return defer.succeed((code, {}))


class WebhookBackendTests(SynchronousTestCase):
    def setUp(self):
        self.clock = Clock()
        errors = dict(METRICS.error_total)
        self.addCleanup(lambda: METRICS.error_total.update(errors))
        self.logged = []
        self.patch(backends.log, "error", lambda fmt, **kw: self.logged.append(kw))

    def backend(self, poster, **kw):
        kw.setdefault("throttle_enable", False)
        return WebhookBackend(poster, self.clock, **kw)

    def test_event_list(self):
        self.assertEqual(json.loads(event_list([b'{"a":1}', b'{"b":2}'])),
                         {"kind": "EventList", "apiVersion": "audit.k8s.io/v1",
                          "metadata": {}, "items": [{"a": 1}, {"b": 2}]})

    def test_batch_by_size_and_wait(self):
        """A full batch goes at once; the rest after max_batch_wait."""
        post = FakePoster()
        b = self.backend(post, max_batch_size=2, max_batch_wait=5)
        b.process_events([event(1), event(2), event(3)])
        self.assertEqual([[e["auditID"] for e in body["items"]] for body in post.bodies],
                         [["1", "2"]])
        self.clock.advance(4.9)
        self.assertEqual(len(post.bodies), 1)
        self.clock.advance(0.1)
        self.assertEqual([[e["auditID"] for e in body["items"]] for body in post.bodies],
                         [["1", "2"], ["3"]])
        self.assertEqual(post.bodies[0]["kind"], "EventList")

    def test_blocking_mode_sends_each_call(self):
        post = FakePoster()
        b = self.backend(post, mode="blocking")
        b.process_events([event(1)])
        b.process_events([event(2)])
        self.assertEqual(len(post.bodies), 2)

    def test_retry_with_backoff(self):
        """500 is retried after initial_backoff (plus up to 20% jitter), then x1.5."""
        post = FakePoster([500, 500, 200])
        b = self.backend(post, mode="blocking", initial_backoff=10)
        b.rng.random = lambda: 0.0
        b.process_events([event(1)])
        self.assertEqual(len(post.bodies), 1)
        self.clock.advance(10)
        self.assertEqual(len(post.bodies), 2)
        self.clock.advance(14.9)
        self.assertEqual(len(post.bodies), 2)
        self.clock.advance(0.1)
        self.assertEqual(len(post.bodies), 3)
        self.assertEqual(self.logged, [])
        self.assertEqual(b.inflight_events, 0)

    def test_gives_up_after_five_attempts(self):
        before = METRICS.error_total.get("webhook", 0)
        post = FakePoster([429] * 5)
        b = self.backend(post, mode="blocking", initial_backoff=1)
        b.rng.random = lambda: 0.0
        b.process_events([event(1), event(2)])
        self.clock.pump([1, 1.5, 2.25, 3.375, 5.07])
        self.assertEqual(len(post.bodies), 5)
        self.assertEqual(METRICS.error_total["webhook"] - before, 2)
        self.assertEqual(self.logged[0]["err"],
                         "the server responded with the status code 429")

    def test_not_retried(self):
        """400 (and a refused connection) are not retried (upstream DefaultShouldRetry)."""
        from twisted.internet.error import ConnectionRefusedError

        post = FakePoster([400, ConnectionRefusedError()])
        b = self.backend(post, mode="blocking")
        b.process_events([event(1)])
        b.process_events([event(2)])
        self.clock.advance(100)
        self.assertEqual(len(post.bodies), 2)
        self.assertEqual(len(self.logged), 2)

    def test_overflow(self):
        """Beyond buffer_size waiting events, events are dropped and counted."""
        before = METRICS.error_total.get("webhook", 0)
        b = self.backend(FakePoster(), buffer_size=2, max_batch_size=10)
        b.process_events([event(1), event(2), event(3)])
        self.assertEqual(METRICS.error_total["webhook"] - before, 1)
        self.assertEqual(len(b.pending), 2)

    def test_throttle(self):
        """Batches beyond the burst wait for the qps."""
        post = FakePoster()
        b = WebhookBackend(post, self.clock, max_batch_size=1, throttle_qps=1,
                           throttle_burst=1)
        b.process_events([event(1), event(2)])
        self.assertEqual(len(post.bodies), 1)
        self.clock.advance(1)
        self.assertEqual(len(post.bodies), 2)

    def test_shutdown_flushes(self):
        post = FakePoster()
        b = self.backend(post, max_batch_wait=30)
        b.process_events([event(1)])
        self.successResultOf(b.shutdown())
        self.assertEqual(len(post.bodies), 1)


class KubeconfigPosterTests(TestCase):
    """L{backends.kubeconfig_poster} against a real local HTTPS listener (kubetwist's own
    TLS context and generated certificates): the CA is trusted, the client certificate and
    the token are presented."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    async def test_https_post(self):
        from twisted.internet import reactor
        from twisted.internet.endpoints import SSL4ServerEndpoint
        from twisted.web.resource import Resource
        from twisted.web.server import Site

        from kubetwist.server.certs import ensure_serving_certs
        from kubetwist.server.tls import server_context_factory

        certs = ensure_serving_certs(os.path.join(self.dir, "pki"), [], [])
        seen = []

        class Receiver(Resource):
            isLeaf = True

            def render_POST(self, request):
                peer = request.transport.getPeerCertificate()
                seen.append((request.path, request.getHeader(b"authorization"),
                             request.getHeader(b"content-type"), request.content.read(),
                             peer.get_subject().CN if peer is not None else None))
                return b"{}"

        factory = server_context_factory(certs.cert_file, certs.key_file, [certs.ca_cert_file])
        port = await SSL4ServerEndpoint(reactor, 0, factory, interface="127.0.0.1").listen(
            Site(Receiver()))
        self.addCleanup(port.stopListening)
        path = os.path.join(self.dir, "webhook.kubeconfig")
        with open(path, "w") as f:
            json.dump({
                "clusters": [{"name": "c", "cluster": {
                    "server": f"https://127.0.0.1:{port.getHost().port}/events",
                    "certificate-authority": certs.ca_cert_file}}],
                "users": [{"name": "u", "user": {
                    "client-certificate": certs.admin_cert_file,
                    "client-key": certs.admin_key_file, "token": "t0k"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x"}, f)
        post = backends.kubeconfig_poster(path, reactor)
        code, _ = await post(b'{"kind":"EventList"}')
        self.assertEqual(code, 200)
        self.assertEqual(seen, [(b"/events", b"Bearer t0k", b"application/json",
                                 b'{"kind":"EventList"}', "kubernetes-admin")])

    def test_no_server(self):
        path = os.path.join(self.dir, "k")
        with open(path, "w") as f:
            f.write("clusters: []\n")
        e = self.assertRaises(backends.KubeconfigError, backends.kubeconfig_poster, path, None)
        self.assertEqual(str(e), "invalid configuration: no server found for cluster")

    def test_bad_flag_is_one_line(self):
        """A bad --audit-webhook-config-file stops the start with one line."""
        from kubetwist.audit import validate_options

        path = os.path.join(self.dir, "k")
        with open(path, "w") as f:
            json.dump({"clusters": [{"name": "c", "cluster": {
                "server": "https://127.0.0.1:1", "certificate-authority-data": "bm90IGEgY2VydA=="
            }}]}, f)
        problem = validate_options({"audit-webhook-config-file": path})
        self.assertTrue(problem.startswith("initializing audit webhook: invalid configuration: "),
                        problem)
        self.assertNotIn("\n", problem)


class UnionBackendTests(SynchronousTestCase):
    def test_every_backend_gets_the_events(self):
        """Both backends see each event; one refusing makes the union refuse."""
        from kubetwist.audit.backends import UnionBackend

        seen = []

        class One:
            def __init__(self, answer):
                self.answer = answer

            def process_events(self, events):
                seen.append((self, [e["auditID"] for e in events]))
                return self.answer

        a, b = One(True), One(False)
        self.assertFalse(UnionBackend([a, b]).process_events([event(1)]))
        self.assertEqual(seen, [(a, ["1"]), (b, ["1"])])
        self.assertTrue(UnionBackend([a, One(True)]).process_events([event(2)]))


class TruncatingBackendTests(SynchronousTestCase):
    def test_truncate_and_batches(self):
        """Upstream's truncate plugin: a large Request event loses its objects and is
        annotated; a large Metadata event (nothing to strip) is dropped and counted; batches
        stay under the byte limit."""
        from kubetwist.audit.backends import TruncatingBackend

        logged = []
        self.patch(backends.log, "error", lambda fmt, **kw: logged.append(kw))
        batches = []

        class Keep:
            def process_events(self, events):
                batches.append([e["auditID"] for e in events])
                return True

        small = len(backends.encode_event(event(1)))
        big_request = dict(event(2), level="Request", requestObject={"data": "x" * 1000})
        big_metadata = dict(event(3), userAgent="y" * 1000)
        t = TruncatingBackend(Keep(), max_event_size=small + 60, max_batch_size=2 * small + 80)
        self.assertTrue(t.process_events([event(1), big_request, big_metadata, event(4),
                                          event(5)]))
        self.assertEqual(batches, [["1", "2"], ["4", "5"]])
        self.assertEqual(logged[0]["plugin"], "truncate")
        self.assertEqual(logged[0]["n"], 1)

    def test_truncated_event(self):
        from kubetwist.audit.backends import TruncatingBackend

        seen = []

        class Keep:
            def process_events(self, events):
                seen.extend(events)
                return True

        ev = dict(event(1), level="RequestResponse", requestObject={"a": "x" * 500},
                  responseObject={"b": "y" * 500}, annotations={"k": "v"})
        TruncatingBackend(Keep(), max_event_size=600).process_events([ev])
        self.assertEqual(seen[0]["annotations"], {"k": "v", "audit.k8s.io/truncated": "true"})
        self.assertNotIn("requestObject", seen[0])
        self.assertNotIn("responseObject", seen[0])
        self.assertIn("requestObject", ev)
