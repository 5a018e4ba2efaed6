# -*- test-case-name: tests.audit.test_backends -*-
"""
Audit backends: upstream C{k8s.io/apiserver/plugin/pkg/audit/log} (with lumberjack's
rotation), C{.../audit/webhook} and C{.../audit/buffered}.

A backend's C{process_events(events)} is called on the reactor thread with C{Event} dicts
(L{kubetwist.audit.event.AuditContext.stage_event}); it encodes them at once (the dicts share
parts with the live request) and never waits: the log backend hands lines to a writer thread
through a bounded queue, the webhook backend posts batches asynchronously.  An event that does
not fit in the buffer is dropped, counted in L{METRICS} (C{apiserver_audit_error_total} by
plugin) and logged in one line, as upstream's C{HandlePluginError}.
"""

from __future__ import annotations

import datetime
import gzip
import os
import queue
import random
import shutil
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from twisted.internet import defer
from twisted.logger import Logger

from kubetwist.audit.event import encode_event, event_string

log = Logger()

LOG_PLUGIN, WEBHOOK_PLUGIN = "log", "webhook"
MODE_BLOCKING, MODE_BLOCKING_STRICT, MODE_BATCH = "blocking", "blocking-strict", "batch"
MODES = (MODE_BATCH, MODE_BLOCKING, MODE_BLOCKING_STRICT)
FORMAT_JSON, FORMAT_LEGACY = "json", "legacy"


@dataclass
class AuditMetrics:
    """
    Upstream's audit metrics (C{pkg/audit/metrics.go}), as process-wide counters; C{/metrics}
    reads them at scrape time (L{kubetwist.server.metrics}).

    @ivar event_total: C{apiserver_audit_event_total}, events generated and sent to a backend.
    @ivar error_total: C{apiserver_audit_error_total}: C{plugin -> events dropped or failed}.
    @ivar requests_rejected_total: C{apiserver_audit_requests_rejected_total}.
    """

    event_total: int = 0
    error_total: dict[str, int] = field(default_factory=dict)
    requests_rejected_total: int = 0


METRICS = AuditMetrics()


def handle_plugin_error(plugin: str, err: str, events: list) -> None:
    """Upstream C{HandlePluginError}: count the events and log one line."""
    METRICS.error_total[plugin] = METRICS.error_total.get(plugin, 0) + len(events)
    log.error("Error in audit plugin '{plugin}' affecting {n} audit events: {err}",
              plugin=plugin, n=len(events), err=err)


# --- the log backend -----------------------------------------------------------------------

_BACKUP_TIME_FORMAT = "%Y-%m-%dT%H-%M-%S"


class RotatingFile:
    """
    A file written as C{gopkg.in/natefinch/lumberjack.v2 Logger} writes it: appended to,
    rotated before a write would take it over C{max_size_mb} megabytes (0: never, a plain
    appended file, as upstream uses for C{--audit-log-maxsize=0}) (the old file renamed
    to C{<name>-<UTC 2006-01-02T15-04-05.000><ext>} in the same folder), backups beyond
    C{max_backups} or older than C{max_age_days} removed (0: keep), optionally gzipped.
    Used only from the writer thread.
    """

    def __init__(self, path: str, max_size_mb: int = 0, max_backups: int = 0,
                 max_age_days: int = 0, compress: bool = False,
                 now: Callable[[], float] = None) -> None:
        import time

        self.path = path
        self.max_bytes = max_size_mb * 1024 * 1024 if max_size_mb > 0 else None
        self.max_backups = max_backups
        self.max_age_days = max_age_days
        self.compress = compress
        self.now = now or time.time
        self.file: Any = None
        self.size = 0

    def _open(self) -> None:
        folder = os.path.dirname(self.path) or "."
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self.file = os.fdopen(fd, "ab")
        self.size = os.fstat(fd).st_size

    def backup_name(self, when: float) -> str:
        """C{<folder>/<name>-<timestamp><ext>}, as lumberjack's C{backupName} (UTC)."""
        folder, base = os.path.split(self.path)
        prefix, ext = os.path.splitext(base)
        dt = datetime.datetime.fromtimestamp(when, datetime.timezone.utc)
        stamp = dt.strftime(_BACKUP_TIME_FORMAT) + f".{dt.microsecond // 1000:03d}"
        return os.path.join(folder, f"{prefix}-{stamp}{ext}")

    def write(self, data: bytes) -> None:
        """Append C{data}, rotating first when it would not fit.

        @raise OSError: the write failed, or C{data} alone is larger than the maximum size
            (C{write length N exceeds maximum file size M})."""
        if self.max_bytes is not None and len(data) > self.max_bytes:
            raise OSError(f"write length {len(data)} exceeds maximum file size "
                          f"{self.max_bytes}")
        if self.file is None:
            self._open()
        if self.max_bytes is not None and self.size + len(data) > self.max_bytes:
            self.rotate()
        self.file.write(data)
        self.size += len(data)

    def flush(self) -> None:
        if self.file is not None:
            self.file.flush()

    def rotate(self) -> None:
        """Close, rename to the backup name, open a new file, then prune the backups."""
        if self.file is not None:
            self.file.close()
            self.file = None
        if os.path.exists(self.path):
            os.rename(self.path, self.backup_name(self.now()))
        self._open()
        self._mill()

    def backups(self) -> list[tuple[float, str]]:
        """C{(time, path)} of the backups, newest first (the time parsed from the name)."""
        folder, base = os.path.split(self.path)
        prefix, ext = os.path.splitext(base)
        out = []
        for name in os.listdir(folder or "."):
            for suffix in (ext, ext + ".gz"):
                if name.startswith(prefix + "-") and name.endswith(suffix):
                    stamp = name[len(prefix) + 1:len(name) - len(suffix)]
                    try:
                        dt = datetime.datetime.strptime(stamp, _BACKUP_TIME_FORMAT + ".%f")
                    except ValueError:
                        continue
                    when = dt.replace(tzinfo=datetime.timezone.utc).timestamp()
                    out.append((when, os.path.join(folder, name)))
                    break
        return sorted(out, reverse=True)

    def _mill(self) -> None:
        files = self.backups()
        remove: list[str] = []
        if self.max_backups > 0 and len(files) > self.max_backups:
            remove.extend(p for _, p in files[self.max_backups:])
            files = files[:self.max_backups]
        if self.max_age_days > 0:
            cutoff = self.now() - self.max_age_days * 86400
            remove.extend(p for t, p in files if t < cutoff)
            files = [(t, p) for t, p in files if t >= cutoff]
        for p in remove:
            try:
                os.remove(p)
            except OSError:
                pass
        if self.compress:
            for _, p in files:
                if not p.endswith(".gz"):
                    with open(p, "rb") as src, gzip.open(p + ".gz", "wb") as dst:
                        shutil.copyfileobj(src, dst)
                    os.remove(p)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


class _Stdout:
    """C{--audit-log-path=-}: the process's standard output."""

    def write(self, data: bytes) -> None:
        sys.stdout.buffer.write(data)

    def flush(self) -> None:
        sys.stdout.flush()

    def close(self) -> None:
        self.flush()


_STOP = object()
#: lines the writer thread joins into one write (whatever the mode: the order is kept).
_WRITE_CHUNK = 1000


class LogBackend:
    """
    Upstream's log backend: one line per event (C{json}: the C{Event} as JSON; C{legacy}:
    L{event_string}) written by a writer thread.

    @param sink: an object with C{write(bytes)}, C{flush()}, C{close()} (a L{RotatingFile},
        or standard output), used only from the writer thread.
    @param mode: C{blocking} (upstream writes in the request; here the queue is the buffer),
        C{blocking-strict} (as C{blocking}, but L{process_events} answers C{False} when the
        event cannot be queued or the last write failed, and the request then fails), or
        C{batch}.
    @param buffer_size: the queue's bound in events (C{--audit-log-batch-buffer-size}).
    """

    plugin = LOG_PLUGIN

    def __init__(self, sink: Any, fmt: str = FORMAT_JSON, mode: str = MODE_BLOCKING,
                 buffer_size: int = 10000) -> None:
        self.sink = sink
        self.format = fmt
        self.mode = mode
        # C's SimpleQueue (cheap puts on the reactor thread), bounded by hand
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.buffer_size = max(1, buffer_size)
        self.write_error: Optional[str] = None
        self.thread: Optional[threading.Thread] = None

    @classmethod
    def from_path(cls, path: str, max_size_mb: int = 0, max_backups: int = 0,
                  max_age_days: int = 0, compress: bool = False, **kw: Any) -> "LogBackend":
        """The backend of C{--audit-log-path} (C{-}: standard output) and its rotation
        flags."""
        sink = _Stdout() if path == "-" else RotatingFile(path, max_size_mb, max_backups,
                                                          max_age_days, compress)
        return cls(sink, **kw)

    def line(self, ev: dict) -> bytes:
        """The log line of one event, with its newline."""
        if self.format == FORMAT_LEGACY:
            return event_string(ev).encode("utf-8") + b"\n"
        return encode_event(ev) + b"\n"

    def process_events(self, events: list[dict]) -> bool:
        """Queue the events' lines; never waits.  C{False} (blocking-strict only): not
        stored."""
        for i, ev in enumerate(events):
            if self.queue.qsize() >= self.buffer_size:
                handle_plugin_error(self.plugin, "audit buffer queue blocked", events[i:])
                return self.mode != MODE_BLOCKING_STRICT
            self.queue.put(self.line(ev))
        return not (self.mode == MODE_BLOCKING_STRICT and self.write_error)

    def run(self) -> None:
        """Start the writer thread."""
        if self.thread is None:
            self.thread = threading.Thread(target=self._loop, name="audit-log", daemon=True)
            self.thread.start()

    def _loop(self) -> None:
        while True:
            batch = [self.queue.get()]
            while batch[-1] is not _STOP and len(batch) < _WRITE_CHUNK:
                try:
                    batch.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            lines = [b for b in batch if b is not _STOP]
            if lines:
                self._write(b"".join(lines), len(lines))
            if batch[-1] is _STOP:
                self.sink.close()
                return

    def _write(self, data: bytes, count: int) -> None:
        try:
            self.sink.write(data)
            self.sink.flush()
            self.write_error = None
        except Exception as e:
            self.write_error = str(e)
            METRICS.error_total[self.plugin] = METRICS.error_total.get(self.plugin, 0) + count
            log.error("Error in audit plugin '{plugin}' affecting {n} audit events: {err}",
                      plugin=self.plugin, n=count, err=e)

    def shutdown(self) -> None:
        """Write what is queued, then stop the thread (waits for it)."""
        if self.thread is not None:
            self.queue.put(_STOP)
            self.thread.join()
            self.thread = None


# --- the webhook backend ---------------------------------------------------------------------

def event_list(lines: list[bytes]) -> bytes:
    """An C{audit.k8s.io/v1 EventList} of encoded events."""
    return (b'{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":['
            + b",".join(lines) + b"]}")


class WebhookError(Exception):
    """A POST that failed; C{retry} says whether upstream's C{DefaultShouldRetry} retries."""

    def __init__(self, message: str, retry: bool) -> None:
        super().__init__(message)
        self.retry = retry


class WebhookBackend:
    """
    Upstream's webhook backend behind its buffered backend: events are encoded at once and
    sent as C{EventList}s of at most C{max_batch_size} (C{batch} mode: when the batch is full
    or C{max_batch_wait} seconds after its first event; C{blocking} modes: each call's events
    at once, without waiting for the answer).  A POST is retried with upstream's backoff
    (C{initial_backoff}, factor 1.5, jitter 0.2, 5 steps) on 429, 500, 504, an answer with
    C{Retry-After} or a dropped connection; a batch that fails for good is counted and logged.
    At most C{buffer_size} events wait; more are dropped the same way.

    @param post: C{body bytes -> Deferred of (code, headers dict)} (L{kubeconfig_poster}).
    @param clock: C{IReactorTime}.
    """

    plugin = WEBHOOK_PLUGIN

    def __init__(self, post: Callable[[bytes], Any], clock: Any, mode: str = MODE_BATCH,
                 buffer_size: int = 10000, max_batch_size: int = 400,
                 max_batch_wait: float = 30.0, throttle_qps: float = 10.0,
                 throttle_burst: int = 15, throttle_enable: bool = True,
                 initial_backoff: float = 10.0, rng: Optional[random.Random] = None) -> None:
        self.post = post
        self.clock = clock
        self.mode = mode
        self.buffer_size = max(1, buffer_size)
        self.max_batch_size = max(1, max_batch_size) if mode == MODE_BATCH else 10 ** 9
        self.max_batch_wait = max_batch_wait
        self.throttle = (throttle_qps, max(1, throttle_burst)) if throttle_enable else None
        self.initial_backoff = initial_backoff
        self.rng = rng or random.Random()
        self.pending: list[bytes] = []
        self.inflight_events = 0
        self.timer: Any = None
        self.tokens = float(self.throttle[1]) if self.throttle else 0.0
        self.tokens_at = clock.seconds()
        self.sending: set = set()

    def process_events(self, events: list[dict]) -> bool:
        """Buffer the events (dropping what does not fit); never waits."""
        for i, ev in enumerate(events):
            if len(self.pending) + self.inflight_events >= self.buffer_size:
                handle_plugin_error(self.plugin, "audit buffer queue blocked", events[i:])
                break
            self.pending.append(encode_event(ev))
        if self.mode != MODE_BATCH:
            self.flush()
            return True
        while len(self.pending) >= self.max_batch_size:
            batch = self.pending[:self.max_batch_size]
            del self.pending[:self.max_batch_size]
            self._start(batch)
        if self.pending and self.timer is None:
            self.timer = self.clock.callLater(self.max_batch_wait, self._timer_fired)
        elif not self.pending and self.timer is not None:
            self.timer.cancel()
            self.timer = None
        return True

    def _timer_fired(self) -> None:
        self.timer = None
        self.flush()

    def flush(self) -> None:
        """Send every pending event now, in batches."""
        if self.timer is not None and self.timer.active():
            self.timer.cancel()
        self.timer = None
        while self.pending:
            batch = self.pending[:self.max_batch_size]
            del self.pending[:self.max_batch_size]
            self._start(batch)

    def _start(self, batch: list[bytes]) -> None:
        self.inflight_events += len(batch)
        d = defer.ensureDeferred(self._send(batch))
        self.sending.add(d)

        def done(result: Any) -> None:
            self.sending.discard(d)
            self.inflight_events -= len(batch)

        d.addBoth(done)

    def _throttle_delay(self) -> float:
        if self.throttle is None:
            return 0.0
        qps, burst = self.throttle
        now = self.clock.seconds()
        self.tokens = min(float(burst), self.tokens + (now - self.tokens_at) * qps)
        self.tokens_at = now
        self.tokens -= 1
        return 0.0 if self.tokens >= 0 else -self.tokens / qps

    async def _send(self, batch: list[bytes]) -> None:
        from twisted.internet.task import deferLater

        delay = self._throttle_delay()
        if delay > 0:
            await deferLater(self.clock, delay, lambda: None)
        body = event_list(batch)
        wait = self.initial_backoff
        for step in range(5):
            try:
                code, headers = await self.post(body)
                if 200 <= code < 300:
                    return
                retry = code in (429, 500, 504) or "retry-after" in headers
                err: Exception = WebhookError(f"the server responded with the status code "
                                              f"{code}", retry)
            except WebhookError as e:
                err = e
            except Exception as e:
                err = WebhookError(str(e), _is_connection_lost(e))
            if not err.retry or step == 4:
                handle_plugin_error(self.plugin, str(err), batch)
                return
            jitter = wait * 0.2 * self.rng.random()
            await deferLater(self.clock, wait + jitter, lambda: None)
            wait *= 1.5

    def shutdown(self) -> defer.Deferred:
        """Send what is pending; fires when every send has ended."""
        self.flush()
        return defer.DeferredList(list(self.sending))


def _is_connection_lost(e: Exception) -> bool:
    from twisted.internet.error import ConnectionDone, ConnectionLost
    from twisted.web.client import ResponseFailed

    if isinstance(e, ResponseFailed):
        return True
    return isinstance(e, (ConnectionLost, ConnectionDone))


TRUNCATE_PLUGIN = "truncate"
TRUNCATED_ANNOTATION = "audit.k8s.io/truncated"


class TruncatingBackend:
    """
    Upstream's C{truncate} plugin (C{--audit-log-truncate-enabled},
    C{--audit-webhook-truncate-enabled}) in front of a backend: an event of C{Request} level
    or above whose JSON is over C{max_event_size} bytes loses its request and response objects
    and gets the annotation C{audit.k8s.io/truncated: "true"}; one still too large is dropped
    (counted and logged under the plugin C{truncate}); the events are handed on in batches of
    at most C{max_batch_size} bytes.
    """

    def __init__(self, delegate: Any, max_event_size: int = 100 * 1024,
                 max_batch_size: int = 10 * 1024 * 1024) -> None:
        self.delegate = delegate
        self.max_event_size = max_event_size
        self.max_batch_size = max_batch_size

    def process_events(self, events: list[dict]) -> bool:
        ok = True
        batch: list[dict] = []
        batch_size = 0
        too_large: list[dict] = []
        for ev in events:
            size = len(encode_event(ev))
            if size > self.max_event_size and ev.get("level") in ("Request", "RequestResponse"):
                ev = {k: v for k, v in ev.items()
                      if k not in ("requestObject", "responseObject")}
                annotations = dict(ev.get("annotations") or {})
                annotations[TRUNCATED_ANNOTATION] = "true"
                ev["annotations"] = annotations
                size = len(encode_event(ev))
            if size > self.max_event_size:
                too_large.append(ev)
                continue
            if batch and batch_size + size > self.max_batch_size:
                ok = self.delegate.process_events(batch) and ok
                batch, batch_size = [], 0
            batch.append(ev)
            batch_size += size
        if batch:
            ok = self.delegate.process_events(batch) and ok
        if too_large:
            handle_plugin_error(TRUNCATE_PLUGIN, "event is too large even after truncating",
                                too_large)
        return ok

    def run(self) -> None:
        self.delegate.run()

    def shutdown(self) -> Any:
        return self.delegate.shutdown()


class UnionBackend:
    """Several backends fed the same events (upstream C{union.New})."""

    def __init__(self, backends: list[Any]) -> None:
        self.backends = list(backends)

    def process_events(self, events: list[dict]) -> bool:
        ok = True
        for b in self.backends:
            ok = b.process_events(events) and ok
        return ok

    def run(self) -> None:
        for b in self.backends:
            if hasattr(b, "run"):
                b.run()

    def shutdown(self) -> Any:
        results = [b.shutdown() for b in self.backends]
        return defer.DeferredList([r for r in results if isinstance(r, defer.Deferred)])


# --- the webhook's kubeconfig ------------------------------------------------------------------

class KubeconfigError(ValueError):
    """A webhook kubeconfig that cannot be used (one line)."""


def _data_or_file(entry: dict, key: str, base: str) -> Optional[bytes]:
    import base64

    if entry.get(key + "-data"):
        return base64.b64decode(entry[key + "-data"])
    if entry.get(key):
        path = entry[key] if os.path.isabs(entry[key]) else os.path.join(base, entry[key])
        with open(path, "rb") as f:
            return f.read()
    return None


@dataclass
class WebhookTarget:
    """Where and how the webhook backend posts (from its kubeconfig).

    @ivar server: the URL.
    @ivar trust: a Twisted trust root of the C{certificate-authority}, or C{None} (system).
    @ivar client_cert: a C{PrivateCertificate} of the client certificate and key, or C{None}.
    @ivar token: the bearer token, or C{""}.
    """

    server: str
    trust: Any = None
    client_cert: Any = None
    token: str = ""


def load_webhook_kubeconfig(path: str) -> WebhookTarget:
    """
    The server of the current context of the kubeconfig at C{path}, with
    C{certificate-authority[-data]}, C{client-certificate[-data]}/C{client-key[-data]} and
    C{token}/C{tokenFile} (relative paths from the kubeconfig's folder).

    @raise KubeconfigError: unreadable or malformed file, no server, unusable certificates.
    """
    import yaml
    from twisted.internet import ssl

    try:
        with open(path, "rb") as f:
            doc = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as e:
        raise KubeconfigError(f"invalid configuration: {e}") from None
    if not isinstance(doc, dict):
        raise KubeconfigError("invalid configuration: not a kubeconfig")
    base = os.path.dirname(os.path.abspath(path))

    def named(kind: str, name: str) -> dict:
        for it in doc.get(kind) or []:
            if isinstance(it, dict) and (not name or it.get("name") == name):
                return it.get(kind[:-1]) or {}
        return {}

    ctx = named("contexts", doc.get("current-context") or "")
    cluster = named("clusters", ctx.get("cluster", ""))
    user = named("users", ctx.get("user", ""))
    server = cluster.get("server")
    if not server:
        raise KubeconfigError("invalid configuration: no server found for cluster")
    try:
        ca = _data_or_file(cluster, "certificate-authority", base)
        cert = _data_or_file(user, "client-certificate", base)
        key = _data_or_file(user, "client-key", base)
        token = user.get("token") or ""
        if not token and user.get("tokenFile"):
            with open(user["tokenFile"]) as f:
                token = f.read().strip()
        client_cert = (ssl.PrivateCertificate.loadPEM(cert + b"\n" + key)
                       if cert and key else None)
        if ca and not _pem_blocks(ca):
            raise ValueError("unable to load root certificates: unable to parse bytes as PEM "
                             "block")
        trust = (ssl.trustRootFromCertificates(
            [ssl.Certificate.loadPEM(c) for c in _pem_blocks(ca)]) if ca else None)
    except Exception as e:  # OSError, binascii.Error, OpenSSL errors
        raise KubeconfigError(f"invalid configuration: {e}") from None
    return WebhookTarget(server, trust, client_cert, token)


def kubeconfig_poster(path: str, reactor: Any) -> Callable[[bytes], Any]:
    """
    C{body -> Deferred of (code, headers)}: POST to the webhook of the kubeconfig at C{path}
    (L{load_webhook_kubeconfig}), as upstream's C{webhook.NewGenericWebhook} (30 s timeout).

    @raise KubeconfigError: see L{load_webhook_kubeconfig}.
    """
    from treq.client import HTTPClient
    from twisted.internet import ssl
    from twisted.web.client import Agent, BrowserLikePolicyForHTTPS
    from twisted.web.iweb import IPolicyForHTTPS
    from zope.interface import implementer

    target = load_webhook_kubeconfig(path)

    @implementer(IPolicyForHTTPS)
    class Policy:
        def creatorForNetloc(self, hostname: bytes, port: int) -> Any:
            return ssl.optionsForClientTLS(hostname.decode(), trustRoot=target.trust,
                                           clientCertificate=target.client_cert)

    server = target.server
    client = HTTPClient(Agent(reactor, contextFactory=Policy() if server.startswith("https")
                              else BrowserLikePolicyForHTTPS(), connectTimeout=30))
    headers = {b"Content-Type": [b"application/json"], b"Accept": [b"application/json"]}
    if target.token:
        headers[b"Authorization"] = [b"Bearer " + target.token.encode()]

    async def post(body: bytes) -> tuple[int, dict]:
        resp = await client.post(server, data=body, headers=headers, timeout=30)
        await resp.content()
        names = {k.decode().lower(): v for k, v in resp.headers.getAllRawHeaders()}
        return resp.code, names

    return lambda body: defer.ensureDeferred(post(body))


def _pem_blocks(data: bytes) -> list[bytes]:
    end = b"-----END CERTIFICATE-----"
    return [b + end for b in data.split(end) if b"-----BEGIN" in b]
