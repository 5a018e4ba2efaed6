# -*- test-case-name: tests.server.test_logs -*-
"""
Logs as kube-apiserver writes them: klog's text lines or its JSON lines, a process-wide
verbosity (C{-v}/C{--v}, changed at run time through C{PUT /debug/flags/v}), and the C{"HTTP"}
request lines of upstream's C{httplog} at verbosity 3 and above.

kubetwist logs through C{twisted.logger}; L{KlogObserver} is the observer C{twistd kubeapi}
installs (see C{KubeAPIService.setServiceParent}), writing to standard error as klog does:

 - text (C{--logging-format=text}, the default), klog's header then the message::

     I1126 10:52:14.123456   12345 cacher.py:0] watch cache list of /registry/pods failed

   (severity C{I}/C{W}/C{E}, month and day, time, process id, the emitting module; Python's
   logger does not record a line, so the line is C{0}), a failure's traceback on the lines
   after;
 - JSON (C{--logging-format=json}), klog's JSON keys: C{ts} (seconds since the epoch,
   float), C{caller}, C{msg}, C{v} (informational lines) or C{err} (errors), then the event's
   own keys (C{log.info("...", key=value)}) as strings.

An event's verbosity is its C{klog_v} key (a debug event's default is 4, others 0); events
above the current L{VERBOSITY} are dropped.  Warnings and errors always pass.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from typing import Any, Callable, Optional, TextIO

import orjson
from twisted.logger import ILogObserver, LogLevel, formatEvent
from zope.interface import implementer

__all__ = ["KlogObserver", "VERBOSITY", "Verbosity", "caller_of"]

#: the log formats C{--logging-format} accepts (upstream: text, json)
FORMATS = ("text", "json")

_SEVERITY = {LogLevel.debug: "I", LogLevel.info: "I", LogLevel.warn: "W",
             LogLevel.error: "E", LogLevel.critical: "E"}


class Verbosity:
    """klog's C{-v}: the process-wide verbosity level (an integer, 0 and up)."""

    def __init__(self, level: int = 0) -> None:
        self.level = level

    def enabled(self, level: int) -> bool:
        """klog's C{V(level).Enabled()}: whether lines of C{level} are written."""
        return self.level >= level

    def set(self, level: int) -> None:
        """Set the level (C{PUT /debug/flags/v}).

        @raise ValueError: a negative level."""
        if level < 0:
            raise ValueError("verbosity must be >= 0")
        self.level = level


#: the verbosity of this process (one per process, as klog's)
VERBOSITY = Verbosity()


def parse_verbosity(text: str) -> int:
    """C{-v} / C{--v} as pflag accepts it (C{3}, and C{=3} from C{-v=3}).

    @raise ValueError: not a non-negative integer."""
    value = int(str(text).lstrip("="))
    if value < 0:
        raise ValueError(text)
    return value


def caller_of(event: dict) -> str:
    """The emitting module as klog's C{file:line} (C{cacher.py:0}): the last part of the
    event's C{log_namespace}, the line unknown."""
    namespace = event.get("log_namespace") or "kubetwist"
    return namespace.rsplit(".", 1)[-1] + ".py:0"


def _event_level(event: dict) -> int:
    v = event.get("klog_v")
    if isinstance(v, int):
        return v
    return 4 if event.get("log_level") is LogLevel.debug else 0


_RESERVED = ("log_", "klog_", "format")


def _fields(event: dict) -> dict[str, str]:
    out = {}
    for k, v in event.items():
        if k.startswith(_RESERVED) or k in ("message", "isError", "system", "time", "why"):
            continue
        out[k] = v if isinstance(v, (str, int, float, bool)) or v is None else str(v)
    return out


@implementer(ILogObserver)
class KlogObserver:
    """
    A C{twisted.logger} observer writing klog text or JSON lines (see the module
    docstring).

    @param stream: where lines go (C{None}: the process's standard error, C{sys.__stderr__},
        since twistd redirects C{sys.stderr} into the log system).
    @param fmt: C{"text"} or C{"json"}.
    @param verbosity: the L{Verbosity} filtering events.
    @param clock: C{() -> seconds since the epoch} (for tests).
    """

    def __init__(self, stream: Optional[TextIO] = None, fmt: str = "text",
                 verbosity: Verbosity = VERBOSITY,
                 clock: Callable[[], float] = time.time) -> None:
        if fmt not in FORMATS:
            raise ValueError(f'unsupported log format "{fmt}"')
        self.stream = stream
        self.fmt = fmt
        self.verbosity = verbosity
        self.clock = clock
        self.pid = os.getpid()

    def __call__(self, event: dict) -> None:
        level = event.get("log_level", LogLevel.info)
        v = _event_level(event)
        if level in (LogLevel.debug, LogLevel.info) and not self.verbosity.enabled(v):
            return
        if event.get("log_format") is None and "message" in event:
            # twisted.python.log (legacy) events: the message tuple
            text = " ".join(str(m) for m in event.get("message") or ())
        else:
            text = formatEvent(event) or ""
        failure = event.get("log_failure")
        ts = event.get("log_time") or self.clock()
        line = (self._json(event, level, v, text, failure, ts) if self.fmt == "json"
                else self._text(event, level, text, failure, ts))
        # the process's own standard error: twistd points sys.stderr into the log itself
        stream = self.stream or sys.__stderr__
        try:
            stream.write(line)
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed standard error (a daemonised twistd): nothing to write to

    def _text(self, event: dict, level: Any, text: str, failure: Any, ts: float) -> str:
        t = time.localtime(ts)
        micros = int((ts - int(ts)) * 1_000_000)
        header = (f"{_SEVERITY.get(level, 'I')}{t.tm_mon:02d}{t.tm_mday:02d} "
                  f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{micros:06d} "
                  f"{self.pid:7d} {caller_of(event)}] ")
        if event.get("klog_structured"):
            text += "".join(f" {k}={_klog_value(v)}" for k, v in _fields(event).items())
        out = header + text + "\n"
        if failure is not None:
            out += _traceback(failure)
        return out

    def _json(self, event: dict, level: Any, v: int, text: str, failure: Any,
              ts: float) -> str:
        record: dict[str, Any] = {"ts": round(ts, 6), "caller": caller_of(event), "msg": text}
        if level in (LogLevel.error, LogLevel.critical):
            if failure is not None:
                record["err"] = failure.getErrorMessage()
                record["stacktrace"] = _traceback(failure).rstrip("\n")
        else:
            record["v"] = v
        record.update(_fields(event))
        return orjson.dumps(record, default=str).decode() + "\n"


def _klog_value(value: Any) -> str:
    """klog's text rendering of a structured value: strings quoted, numbers bare."""
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "<nil>"
    if isinstance(value, (int, float)):
        return str(value)
    return orjson.dumps(str(value)).decode()


def _traceback(failure: Any) -> str:
    try:
        return failure.getTraceback()
    except Exception:  # noqa: BLE001 -- a failure without frames: its type and value
        return "".join(traceback.format_exception_only(failure.type, failure.value))


_FLAGS_INDEX = (
    "<html>\n<head>\n<title>/debug/flags/</title>\n</head>\n<body>\n/debug/flags/<br>\n<br>\n"
    "flags:<br>\n<table>\n<tr>v<br>\n</table>\n<br>\nfull flags configurable<br>\n</body>\n"
    "</html>\n")


def install_debug_flags(front: Any, verbosity: Verbosity = VERBOSITY) -> None:
    """
    Upstream C{routes.DebugFlags} with the C{v} flag: C{GET /debug/flags} (and
    C{/debug/flags/}) is the HTML index; C{PUT /debug/flags/v} with a body such as C{5} sets
    the verbosity at run time and answers C{successfully set klog.logging.verbosity to 5}
    (text, 200), a bad value 400 with the parse error, any other method 406
    C{unsupported http method}.  The authorizer sees the non-resource URL (C{put} on
    C{/debug/flags/v}: only C{system:masters} under the bootstrap RBAC policy).
    """
    from kubetwist.endpoints.responses import funnel, write_body

    async def index(request: Any) -> None:
        write_body(request, 200, _FLAGS_INDEX.encode(), "text/html; charset=utf-8")

    async def set_v(request: Any) -> None:
        request.setHeader(b"X-Content-Type-Options", b"nosniff")
        if request.method != b"PUT":
            write_body(request, 406, b"unsupported http method", "text/plain")
            return
        text = request.content.read(64).decode("utf-8", "replace")
        try:
            level = parse_verbosity(text.strip())
        except ValueError:
            write_body(request, 400, (f"failed set klog.logging.verbosity {text}: "
                                      f'strconv.ParseInt: parsing "{text}": invalid syntax'
                                      ).encode(), "text/plain")
            return
        verbosity.set(level)
        write_body(request, 200, f"successfully set klog.logging.verbosity to {text}".encode(),
                   "text/plain")

    front.mux["/debug/flags"] = funnel(index)
    front.mux["/debug/flags/"] = funnel(index)
    front.mux["/debug/flags/v"] = funnel(set_v)
