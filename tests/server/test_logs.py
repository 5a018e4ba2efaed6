"""
Tests for L{kubetwist.server.logs} (klog text and JSON lines, verbosity, C{/debug/flags/v})
and L{kubetwist.server.filters.httplog} (upstream's C{"HTTP"} request lines).
"""

from __future__ import annotations

import io
import json
import time

from twisted.logger import Logger, LogLevel, capturedLogs
from twisted.python.failure import Failure
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.server.logs import VERBOSITY, KlogObserver, Verbosity, parse_verbosity
from kubetwist.tap import Options
from tests.support import KubeTestCase

_TS = time.mktime((2026, 11, 26, 10, 52, 14, 0, 0, -1)) + 0.123456


class ObserverTests(SynchronousTestCase):
    def observe(self, fmt: str = "text", level: int = 0) -> tuple[io.StringIO, KlogObserver]:
        out = io.StringIO()
        obs = KlogObserver(out, fmt, Verbosity(level))
        obs.pid = 12345
        return out, obs

    def event(self, text: str = "cache of {key} failed", level=LogLevel.info, **kw) -> dict:
        e = {"log_format": text, "log_level": level, "log_time": _TS,
             "log_namespace": "kubetwist.storage.cacher.cacher", "key": "/registry/pods"}
        e.update(kw)
        return e

    def test_text_header(self) -> None:
        """klog's header: severity, MMDD, time to microseconds, pid (7 wide), caller."""
        out, obs = self.observe()
        obs(self.event())
        obs(self.event(level=LogLevel.warn))
        obs(self.event(level=LogLevel.error))
        self.assertEqual(out.getvalue().splitlines(), [
            "I1126 10:52:14.123456   12345 cacher.py:0] cache of /registry/pods failed",
            "W1126 10:52:14.123456   12345 cacher.py:0] cache of /registry/pods failed",
            "E1126 10:52:14.123456   12345 cacher.py:0] cache of /registry/pods failed",
        ])

    def test_verbosity(self) -> None:
        """Lines above the verbosity are dropped; debug lines count as 4; warnings and
        errors always pass."""
        out, obs = self.observe(level=2)
        obs(self.event("v3", klog_v=3))
        obs(self.event("debug", level=LogLevel.debug))
        obs(self.event("v2", klog_v=2))
        obs(self.event("warn", level=LogLevel.warn, klog_v=9))
        self.assertEqual([line.split("] ")[1] for line in out.getvalue().splitlines()],
                         ["v2", "warn"])
        obs.verbosity.set(4)
        obs(self.event("debug", level=LogLevel.debug))
        self.assertTrue(out.getvalue().endswith("] debug\n"))

    def test_structured_text(self) -> None:
        """Structured events render as klog's C{"msg" key="value" n=1}."""
        out, obs = self.observe()
        obs({"log_format": '"HTTP"', "log_level": LogLevel.info, "log_time": _TS,
             "log_namespace": "kubetwist.server.filters.httplog", "klog_structured": True,
             "verb": "LIST", "URI": "/api/v1/pods", "resp": 200})
        self.assertEqual(out.getvalue(), 'I1126 10:52:14.123456   12345 httplog.py:0] "HTTP" '
                                         'verb="LIST" URI="/api/v1/pods" resp=200\n')

    def test_failure_traceback(self) -> None:
        out, obs = self.observe()
        try:
            raise ZeroDivisionError("x")
        except ZeroDivisionError:
            f = Failure()
        obs(self.event("boom", level=LogLevel.critical, log_failure=f))
        lines = out.getvalue().splitlines()
        self.assertTrue(lines[0].startswith("E1126"))
        self.assertIn("ZeroDivisionError", out.getvalue())

    def test_json(self) -> None:
        """klog's JSON keys: ts, caller, msg, v (or err for errors), then the event's
        keys."""
        out, obs = self.observe("json")
        obs(self.event(klog_v=0))
        try:
            raise ValueError("bad")
        except ValueError:
            f = Failure()
        obs(self.event("failed", level=LogLevel.error, log_failure=f))
        first, second = (json.loads(line) for line in out.getvalue().splitlines())
        self.assertEqual(first, {"ts": round(_TS, 6), "caller": "cacher.py:0",
                                 "msg": "cache of /registry/pods failed", "v": 0,
                                 "key": "/registry/pods"})
        self.assertEqual(second["err"], "bad")
        self.assertNotIn("v", second)
        self.assertIn("ValueError", second["stacktrace"])

    def test_through_twisted_logger(self) -> None:
        """A C{twisted.logger.Logger} event reaches the observer."""
        from twisted.logger import LogPublisher

        out, obs = self.observe()
        publisher = LogPublisher(obs)
        Logger(namespace="kubetwist.x.y", observer=publisher).info("hello {who}", who="you")
        self.assertTrue(out.getvalue().endswith("y.py:0] hello you\n"))

    def test_bad_format(self) -> None:
        self.assertRaises(ValueError, KlogObserver, io.StringIO(), "xml")


class FlagTests(SynchronousTestCase):
    def refused(self, argv: list) -> str:
        """What C{argv} prints to stderr as it exits with status 1."""
        import sys

        err = io.StringIO()
        self.patch(sys, "stderr", err)
        e = self.assertRaises(SystemExit, Options().parseOptions, argv)
        self.assertEqual(e.code, 1)
        return err.getvalue()

    def test_v(self) -> None:
        """C{-v 3}, C{--v=5} and pflag's C{-v=3}; a bad value is upstream's parse error."""
        for argv, want in ((["-v", "3"], 3), (["--v=5"], 5), (["-v=3"], 3), ([], 0)):
            o = Options()
            o.parseOptions(argv)
            self.assertEqual(o["v"], want)
        self.assertIn('invalid argument "x" for "-v, --v" flag', self.refused(["--v", "x"]))
        self.assertRaises(ValueError, parse_verbosity, "-1")

    def test_logging_format(self) -> None:
        o = Options()
        o.parseOptions(["--logging-format", "json"])
        self.assertEqual(o["logging-format"], "json")
        self.assertEqual(self.refused(["--logging-format", "xml"]),
                         'Error: logging.format: Invalid value: "xml": Unsupported log format\n')

    def test_service_installs_observer(self) -> None:
        """The service gives twistd's application the klog observer of the flags."""
        from twisted.application.service import Application
        from twisted.logger import ILogObserver

        from kubetwist.app import KubeAPIService

        old = VERBOSITY.level
        self.addCleanup(VERBOSITY.set, old)
        o = Options()
        o.parseOptions(["--logging-format", "json", "-v", "4"])
        application = Application("kubeapi")
        KubeAPIService(None, dict(o), "v1.32.0").setServiceParent(application)
        observer = ILogObserver(application)
        self.assertIsInstance(observer, KlogObserver)
        self.assertEqual(observer.fmt, "json")
        self.assertEqual(VERBOSITY.level, 4)


class RequestLogTests(KubeTestCase):
    def setUp(self) -> None:
        super().setUp()
        old = VERBOSITY.level
        self.addCleanup(VERBOSITY.set, old)

    def http_events(self, events: list) -> list:
        return [e for e in events if e.get("log_format") == '"HTTP"']

    def test_quiet_below_3(self) -> None:
        VERBOSITY.set(2)
        with capturedLogs() as events:
            self.assertEqual(self.request("GET", "/api/v1/namespaces")[0], 200)
        self.assertEqual(self.http_events(events), [])

    def test_request_line_at_3(self) -> None:
        """At C{-v=3} each request is one C{"HTTP"} line with upstream's keys."""
        VERBOSITY.set(3)
        with capturedLogs() as events:
            self.request("GET", "/api/v1/namespaces?limit=5", headers={"User-Agent": "kt/1"})
        (event,) = self.http_events(events)
        self.assertEqual(event["klog_v"], 3)
        self.assertEqual((event["verb"], event["URI"], event["resp"], event["userAgent"]),
                         ("LIST", "/api/v1/namespaces?limit=5", 200, "kt/1"))
        for key in ("latency", "srcIP", "audit-ID"):
            self.assertIn(key, event)

    def test_errors_logged_once_with_identity(self) -> None:
        """A 5xx is logged at error level whatever the verbosity, once (the panic recovery
        logs the failure and marks the request), with the verb, resource, user and audit
        ID."""
        from twisted.web.test.requesthelper import DummyRequest

        from kubetwist.authentication.user import UserInfo
        from kubetwist.endpoints.request import context_of
        from kubetwist.runtime import errors
        from kubetwist.server.filters.httplog import with_http_logging
        from kubetwist.server.filters.recovery import with_panic_recovery

        VERBOSITY.set(0)

        class Request(DummyRequest):
            code = 200

            def setResponseCode(self, code, message=None):
                super().setResponseCode(code, message)
                self.code = code

        def request_for(handler) -> list:
            request = Request([b"api", b"v1", b"namespaces"])
            request.uri = b"/api/v1/namespaces"
            ctx = context_of(request)
            ctx.user, ctx.audit_id = UserInfo("jane"), "a-2"
            with capturedLogs() as events:
                with_panic_recovery(with_http_logging(handler, self.clock))(request)
                self.assertEqual(request.finished, 1)
            return [e for e in events if e["log_level"] in (LogLevel.error, LogLevel.critical)]

        def boom(request):
            raise RuntimeError("kaboom")

        (panic,) = request_for(boom)
        self.assertEqual(len(self.flushLoggedErrors(RuntimeError)), 1)
        self.assertEqual((panic["log_format"], panic["verb"], panic["user"], panic["audit-ID"]),
                         ("panic in handler chain", "GET", "jane", "a-2"))

        def unavailable(request):
            raise errors.new_service_unavailable("etcd is down")

        (line,) = request_for(unavailable)
        self.assertEqual((line["log_format"], line["resp"], line["user"], line["audit-ID"]),
                         ('"HTTP"', 503, "jane", "a-2"))

        def refused(request):
            raise errors.new_forbidden("", "pods", "x", "no")

        self.assertEqual(request_for(refused), [])

    def test_debug_flags_v(self) -> None:
        """C{PUT /debug/flags/v} sets the verbosity (upstream's answer texts)."""
        VERBOSITY.set(0)
        code, body, _ = self.request("PUT", "/debug/flags/v", body="5", content_type="text/plain")
        self.assertEqual((code, body), (200, "successfully set klog.logging.verbosity to 5"))
        self.assertEqual(VERBOSITY.level, 5)
        code, body, _ = self.request("PUT", "/debug/flags/v", body="x", content_type="text/plain")
        self.assertEqual(code, 400)
        self.assertIn("failed set klog.logging.verbosity x", body)
        self.assertEqual(VERBOSITY.level, 5)
        self.assertEqual(self.request("GET", "/debug/flags/v")[:2],
                         (406, "unsupported http method"))
        code, body, _ = self.request("GET", "/debug/flags")
        self.assertEqual(code, 200)
        self.assertIn("<tr>v<br>", body)


class HealthCheckQuietTests(SynchronousTestCase):
    def test_failing_readyz_not_an_error(self) -> None:
        """A C{/readyz} 500 (not ready yet) is the health check's own answer, not an error
        line; the same code on an API path is."""
        from twisted.internet.task import Clock
        from twisted.web.test.requesthelper import DummyRequest

        from kubetwist.runtime import errors
        from kubetwist.server.filters.httplog import with_http_logging
        from kubetwist.server.filters.recovery import with_panic_recovery

        class Request(DummyRequest):
            code = 200

            def setResponseCode(self, code, message=None):
                super().setResponseCode(code, message)
                self.code = code

        def errors_for(uri: bytes) -> list:
            request = Request([])
            request.uri = uri

            def unavailable(request):
                raise errors.new_internal_error("not ready")

            with capturedLogs() as events:
                with_panic_recovery(with_http_logging(unavailable, Clock()))(request)
            return [e for e in events if e["log_level"] is LogLevel.error]

        self.assertEqual(errors_for(b"/readyz?verbose"), [])
        self.assertEqual(errors_for(b"/livez/etcd"), [])
        self.assertEqual(len(errors_for(b"/api/v1/pods")), 1)
