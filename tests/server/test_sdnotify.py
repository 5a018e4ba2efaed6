"""
Tests for L{kubetwist.server.sdnotify}: datagrams to a real Unix socket.
"""

from __future__ import annotations

import os
import socket
import tempfile

from twisted.internet.task import Clock
from twisted.logger import capturedLogs
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.server.sdnotify import Watchdog, notify, watchdog_period


class NotifyTests(SynchronousTestCase):
    """notify() against a bound datagram socket standing in for systemd."""

    def _listener(self, address: str) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(sock.close)
        sock.bind(address)
        sock.settimeout(5)
        return sock

    def _short_dir(self) -> str:
        # Unix socket paths are limited to ~107 bytes; trial's temp paths can be longer.
        d = tempfile.mkdtemp(prefix="sdn")
        self.addCleanup(os.rmdir, d)
        return d

    def test_ready_to_path(self) -> None:
        """READY=1 arrives as one datagram at the path in NOTIFY_SOCKET."""
        path = os.path.join(self._short_dir(), "notify")
        self.addCleanup(os.unlink, path)
        sock = self._listener(path)
        self.assertTrue(notify("READY=1", env={"NOTIFY_SOCKET": path}))
        self.assertEqual(sock.recv(4096), b"READY=1")

    def test_multiline_state(self) -> None:
        """Several assignments go in a single datagram, unchanged."""
        path = os.path.join(self._short_dir(), "notify")
        self.addCleanup(os.unlink, path)
        sock = self._listener(path)
        notify("STOPPING=1\nSTATUS=shutting down", env={"NOTIFY_SOCKET": path})
        self.assertEqual(sock.recv(4096), b"STOPPING=1\nSTATUS=shutting down")

    def test_abstract_socket(self) -> None:
        """A leading @ addresses the abstract namespace."""
        name = f"kubetwist-test-{os.getpid()}-{id(self)}"
        sock = self._listener("\0" + name)
        self.assertTrue(notify("READY=1", env={"NOTIFY_SOCKET": "@" + name}))
        self.assertEqual(sock.recv(4096), b"READY=1")

    def test_unset(self) -> None:
        """Without NOTIFY_SOCKET (or with it empty) nothing is sent and False is returned."""
        self.assertFalse(notify("READY=1", env={}))
        self.assertFalse(notify("READY=1", env={"NOTIFY_SOCKET": ""}))

    def test_send_failure_logged(self) -> None:
        """A socket that does not exist gives False and a warning, not an exception."""
        path = os.path.join(self._short_dir(), "absent")
        with capturedLogs() as events:
            self.assertFalse(notify("READY=1", env={"NOTIFY_SOCKET": path}))
        self.assertEqual(len(events), 1)
        self.assertEqual(events[0]["state"], "READY=1")
        self.assertEqual(events[0]["address"], path)
        self.assertIsInstance(events[0]["error"], OSError)


class WatchdogTests(SynchronousTestCase):
    """The systemd watchdog pings: L{watchdog_period} and L{Watchdog}."""

    def test_period(self) -> None:
        """Half of WATCHDOG_USEC, in seconds; none when unset, zero, junk or for another
        process."""
        self.assertEqual(watchdog_period({"WATCHDOG_USEC": "30000000"}), 15.0)
        self.assertEqual(watchdog_period({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "7"},
                                         pid=7), 15.0)
        self.assertIsNone(watchdog_period({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "8"},
                                          pid=7))
        for env in ({}, {"WATCHDOG_USEC": "0"}, {"WATCHDOG_USEC": "x"}):
            self.assertIsNone(watchdog_period(env))

    def test_pings_on_the_clock(self) -> None:
        """WATCHDOG=1 at start and then every period, until stopped."""
        d = tempfile.mkdtemp(prefix="sdw")
        self.addCleanup(os.rmdir, d)
        path = os.path.join(d, "notify")
        self.addCleanup(os.unlink, path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(sock.close)
        sock.bind(path)
        sock.setblocking(False)
        clock = Clock()
        dog = Watchdog(clock, {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "4000000"})
        self.assertTrue(dog.start())
        self.assertEqual(sock.recv(100), b"WATCHDOG=1")
        clock.advance(1.9)
        self.assertRaises(BlockingIOError, sock.recv, 100)
        clock.advance(0.1)
        self.assertEqual(sock.recv(100), b"WATCHDOG=1")
        dog.stop()
        clock.advance(10)
        self.assertRaises(BlockingIOError, sock.recv, 100)

    def test_not_expected(self) -> None:
        self.assertFalse(Watchdog(Clock(), {}).start())
