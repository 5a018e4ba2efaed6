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

from kubetwist.audit import event as audit_event
from kubetwist.endpoints import negotiation
from kubetwist.endpoints.request import context_of
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
    for w in context_of(request).warnings:
        request.responseHeaders.addRawHeader(b"Warning", warning_header(w).encode())
    if request.method != b"HEAD":
        request.write(body)
    request.finish()


def write_object(request: Any, code: int, obj: Any, media_type: str = codec.JSON,
                 content_type: Optional[str] = None) -> None:
    """
    Encode C{obj} as C{media_type} and write it with C{code}: JSON as Go's C{json.Encoder}
    writes it (one line ending in C{\\n}), or indented without the newline when the request
    asks for pretty output (L{negotiation.is_pretty}); YAML; protobuf where the kind has a
    protobuf definition, else JSON (upstream C{WriteObjectNegotiated}).
    """
    audit_event.log_response_object(request, obj)
    if media_type == codec.PROTOBUF:
        from kubetwist.runtime import protobuf

        group, _, version = (obj.get("apiVersion") or "").rpartition("/")
        if not protobuf.can_encode(group, version, obj.get("kind", "")):
            media_type, content_type = codec.JSON, None
    pretty = media_type == codec.JSON and negotiation.is_pretty(request)
    write_body(request, code, codec.encode(obj, media_type, pretty), content_type or media_type)


def write_not_found_text(request: Any) -> None:
    """Go's C{http.NotFound}: C{404 page not found} as plain text (paths no web service
    claims: C{/nope}, C{/apis/<unknown group>}, unknown paths of custom resources)."""
    request.setHeader(b"X-Content-Type-Options", b"nosniff")
    write_body(request, 404, b"404 page not found\n", "text/plain; charset=utf-8")


def write_raw_json(request: Any, code: int, obj: Any) -> None:
    """Upstream C{responsewriters.WriteRawJSON}: indented JSON, no trailing newline
    (C{/version}, and errors when no serializer could be negotiated)."""
    write_body(request, code, codec.encode_json_indent(obj), codec.JSON)


def watch_content_type(media_type: str) -> str:
    """The C{Content-Type} of a watch stream: C{application/json} (upstream writes the JSON
    stream serializer's plain type) or C{application/vnd.kubernetes.protobuf;stream=watch}."""
    if media_type == codec.PROTOBUF:
        return f"{codec.PROTOBUF};stream=watch"
    return codec.JSON


def encode_watch_event(ev_type: str, obj: dict, media_type: str = codec.JSON) -> bytes:
    """
    One frame of a watch stream (upstream C{WatchServer} with the stream serializer's framer):
    JSON C{{"type":...,"object":...}} as one line; protobuf as a 4-byte big-endian length and
    a C{WatchEvent} message (no envelope) whose C{object.raw} is the object's own enveloped
    protobuf body.  An object without a protobuf form (an C{ERROR}'s Status always has one)
    is embedded as JSON, as a C{RawExtension} holds it.
    """
    if media_type == codec.PROTOBUF:
        from kubetwist.runtime import protobuf

        return protobuf.encode_watch_frame(ev_type, obj)
    return codec.encode_json_stream({"type": ev_type, "object": codec.go_order(obj)})


def write_status_error(request: Any, err: errors.StatusError) -> None:
    """
    Write a failure C{Status} in the form the request accepts without transforms (upstream
    C{ErrorNegotiated}: JSON, YAML or protobuf; indented JSON when none is acceptable, e.g. for
    C{Accept: application/json;as=Table;...} alone); for 429/503/504 with a retry hint, a
    C{Retry-After} header.
    """
    retry = (err.status.get("details") or {}).get("retryAfterSeconds")
    if retry:
        request.setHeader(b"Retry-After", str(retry).encode())
    out = negotiation.negotiate_error(request)
    if out is None:
        audit_event.log_response_object(request, err.status)
        write_raw_json(request, err.code, err.status)
        return
    write_object(request, err.code, err.status, out.media)


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
            except RecursionError:
                # a value nested deeper than some recursive step (patching, merging, Go-style
                # formatting) can take; Go's decoders take 10000 levels: kubetwist's own 400
                # where upstream would go on, instead of a 500
                log.warn("request nested too deeply for {path}", path=request.path)
                if getattr(request, "startedWriting", False):
                    _abort(request)
                else:
                    write_status_error(request, errors.new_bad_request(
                        "the request is nested too deeply: exceeded max depth"))
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
