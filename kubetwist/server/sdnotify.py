# -*- test-case-name: tests.server.test_sdnotify -*-
"""
systemd readiness notification (C{sd_notify(3)}), as C{github.com/coreos/go-systemd/daemon}
C{SdNotify} which Kubernetes components use.

C{notify("READY=1")} once serving, C{notify("STOPPING=1")} when shutdown begins,
C{notify("STATUS=...")} for a human-readable state.  Without C{$NOTIFY_SOCKET} (not run by
systemd with C{Type=notify}) every call does nothing.
"""

from __future__ import annotations

import os
import socket
from typing import Mapping

from twisted.logger import Logger

_log = Logger()


def notify(state: str, env: Mapping[str, str] = os.environ) -> bool:
    """
    Send C{state} (e.g. C{READY=1}, or several C{KEY=value} lines joined by newlines) as one
    datagram to the socket named by C{$NOTIFY_SOCKET}; a leading C{@} names an abstract
    socket.

    A single non-blocking C{sendto} on a Unix datagram socket: it never waits for systemd.

    @return: C{True} when sent; C{False} when C{$NOTIFY_SOCKET} is unset or empty, or the send
        failed (the failure is logged, never raised).
    """
    address = env.get("NOTIFY_SOCKET", "")
    if not address:
        return False
    target = "\0" + address[1:] if address.startswith("@") else address
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.setblocking(False)
            sock.sendto(state.encode("utf-8"), target)
    except OSError as e:
        _log.warn(
            "sd_notify {state!r} to {address} failed: {error}",
            state=state, address=address, error=e,
        )
        return False
    return True
