# -*- test-case-name: tests.endpoints.test_handlers -*-
"""
The one error funnel and the response writers: upstream
C{k8s.io/apiserver/pkg/endpoints/handlers/responsewriters}.

Every handler is wrapped by L{funnel}: a L{StatusError} becomes its C{Status} with its code, a
cancelled request (client gone) is dropped quietly, anything else is logged and becomes a 500
C{InternalError}; when the response had already started (a watch), the connection is closed.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional

from twisted.internet.defer import CancelledError, ensureDeferred
from twisted.logger import Logger

from kubetwist.runtime import codec, errors

log = Logger()


def warning_header(text: str) -> str:
    """A C{Warning} header value, as upstream C{net.NewWarningHeader(299, "-", text)}: the text
    quoted with C{"} and C{\\} backslash-escaped."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


def write_body(request: Any, code: int, body: bytes, content_type: str) -> None:
    """Write a complete response (no-op if the client is gone)."""
    if getattr(request, "_disconnected", False) or request.finished:
        return
    request.setResponseCode(code)
    request.setHeader(b"Content-Type", content_type.encode())
    request.setHeader(b"Content-Length", str(len(body)).encode())
    if not request.responseHeaders.hasHeader(b"Cache-Control"):
        # upstream WithCacheControl: only when the handler set none (OpenAPI v3 documents
        # are "public, immutable")
        request.setHeader(b"Cache-Control", b"no-cache, private")
    for w in getattr(request, "kube_warnings", []) or []:
        request.responseHeaders.addRawHeader(b"Warning", warning_header(w).encode())
    if request.method != b"HEAD":
        request.write(body)
    request.finish()


def write_object(request: Any, code: int, obj: Any, media_type: str = codec.JSON,
                 content_type: Optional[str] = None) -> None:
    """Encode C{obj} as C{media_type} (JSON, YAML, or protobuf where the kind has a protobuf
    definition, else JSON) and write it with C{code}."""
    if media_type == codec.PROTOBUF:
        from kubetwist.runtime import protobuf

        group, _, version = (obj.get("apiVersion") or "").rpartition("/")
        if not protobuf.can_encode(group, version, obj.get("kind", "")):
            media_type, content_type = codec.JSON, None
    write_body(request, code, codec.encode(obj, media_type), content_type or media_type)


def write_status_error(request: Any, err: errors.StatusError) -> None:
    """Write a failure C{Status}; for 429/503/504 with a retry hint, a C{Retry-After} header."""
    retry = (err.status.get("details") or {}).get("retryAfterSeconds")
    if retry:
        request.setHeader(b"Retry-After", str(retry).encode())
    media = getattr(request, "kube_error_media", codec.JSON)
    write_object(request, err.code, err.status, media)


def funnel(handler: Callable[..., Any]) -> Callable[..., Any]:
    """
    Wrap an C{async def handler(request, ...)} so that it always answers.

    The wrapped function returns a Deferred (Klein waits on it); cancelling it (Klein does on
    client disconnect) cancels the handler's coroutine.
    """

    @functools.wraps(handler)
    def wrapper(request: Any, *args: Any, **kwargs: Any) -> Any:
        async def run() -> None:
            try:
                await handler(request, *args, **kwargs)
            except errors.StatusError as e:
                if getattr(request, "startedWriting", False):
                    _abort(request)
                else:
                    write_status_error(request, e)
            except CancelledError:
                _abort(request)
            except Exception:
                log.failure("handler failed on {path}", path=request.path)
                if getattr(request, "startedWriting", False):
                    _abort(request)
                else:
                    write_status_error(
                        request,
                        errors.new_internal_error("an unexpected error occurred"),
                    )

        d = ensureDeferred(run())
        d.addErrback(lambda f: None)
        return d

    return wrapper


def _abort(request: Any) -> None:
    try:
        if not request.finished:
            if getattr(request, "startedWriting", False):
                request.channel.loseConnection() if request.channel else None
            else:
                request.finish()
    except Exception:
        pass
