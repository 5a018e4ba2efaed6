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


def watchdog_period(env: Mapping[str, str] = os.environ, pid: int | None = None) -> float | None:
    """
    How often to send C{WATCHDOG=1}, in seconds: half of C{$WATCHDOG_USEC} (systemd's
    C{WatchdogSec=}, as C{sd_watchdog_enabled(3)} advises), or C{None} when systemd expects
    no pings (unset, unparsable, zero, or C{$WATCHDOG_PID} naming another process).
    """
    usec = env.get("WATCHDOG_USEC", "")
    owner = env.get("WATCHDOG_PID", "")
    if owner and owner != str(os.getpid() if pid is None else pid):
        return None
    try:
        value = int(usec)
    except ValueError:
        return None
    if value <= 0:
        return None
    return value / 2_000_000


class Watchdog:
    """
    systemd's watchdog (C{WatchdogSec=} in the unit): C{WATCHDOG=1} every
    L{watchdog_period} seconds, sent from the reactor's own timer, so a reactor that stalls
    (a blocked handler, a busy loop) stops the pings and systemd restarts the server.

    @param clock: C{IReactorTime} (a C{task.Clock} in tests).
    @param env: the environment systemd set (C{WATCHDOG_USEC}, C{WATCHDOG_PID},
        C{NOTIFY_SOCKET}).
    """

    def __init__(self, clock: object, env: Mapping[str, str] = os.environ) -> None:
        self.clock = clock
        self.env = env
        self.period = watchdog_period(env)
        self._loop: object = None

    def start(self) -> bool:
        """Start pinging (a first ping at once); C{False} when systemd expects none."""
        from twisted.internet.task import LoopingCall

        if self.period is None or self._loop is not None:
            return False
        loop = LoopingCall(notify, "WATCHDOG=1", self.env)
        loop.clock = self.clock
        loop.start(self.period, now=True)
        self._loop = loop
        return True

    def stop(self) -> None:
        """Stop pinging (at shutdown, after C{STOPPING=1})."""
        if self._loop is not None:
            self._loop.stop()
            self._loop = None
