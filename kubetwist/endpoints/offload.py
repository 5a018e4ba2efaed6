# -*- test-case-name: tests.endpoints.test_offload -*-
"""
CPU-heavy work of one request off the reactor thread.

Decoding a large body (a 3 MiB YAML document: parse, duplicate-key and unknown-field passes)
or applying a large patch takes a second or more of Python; on the reactor thread it would
hold every other request, C{/readyz} included, for that long.  L{run} hands such work to a
thread pool when the body is at least L{THRESHOLD} bytes, so the reactor keeps serving (the
GIL is switched every few milliseconds); small bodies, the common case, stay inline, without
a thread hop.

Python's cyclic garbage collector is paused while such work runs: decoding 3 MiB of YAML
allocates millions of objects, and each full collection of them holds the GIL (every thread,
the reactor's included) for hundreds of milliseconds.  The work's garbage has no cycles and
is freed by reference counting as soon as it is dropped; collections resume when the last
such work ends.

The process configures the pool once (L{configure}); until then (unit tests on a fake
reactor) everything runs inline.
"""

from __future__ import annotations

import gc
import threading
from typing import Any, Callable

from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.threads import deferToThreadPool

#: Bodies of at least this many bytes are worked on in the pool (64 KiB: below it decoding
#: and patching take well under 50 ms).
THRESHOLD = 64 * 1024

_reactor: Any = None
_pool: Any = None
_paused = 0
_paused_lock = threading.Lock()


def configure(reactor: Any, pool: Any) -> None:
    """
    Run large requests' work in C{pool} (a started C{twisted.python.threadpool.ThreadPool}),
    delivering results on C{reactor}; C{pool=None} runs everything inline again.
    """
    global _reactor, _pool
    _reactor, _pool = reactor, pool


def run(size: int, f: Callable[..., Any], *args: Any) -> Deferred:
    """
    C{f(*args)}: in the pool when C{size >= THRESHOLD} and a pool is configured, else inline.

    @param size: the size of the request body driving the work, in bytes.
    @return: a Deferred of C{f}'s result or failure.  C{f} must not touch the reactor or
        objects another request may be changing.
    """
    if _pool is None or size < THRESHOLD:
        return maybeDeferred(f, *args)
    return deferToThreadPool(_reactor, _pool, _without_gc, f, *args)


def _without_gc(f: Callable[..., Any], *args: Any) -> Any:
    """C{f(*args)} with the cyclic collector paused (counted: several may run at once)."""
    global _paused
    with _paused_lock:
        _paused += 1
        if _paused == 1:
            gc.disable()
    try:
        return f(*args)
    finally:
        with _paused_lock:
            _paused -= 1
            if _paused == 0:
                gc.enable()
