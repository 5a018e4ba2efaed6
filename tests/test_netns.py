"""Tests for the network namespace fixture, L{tests.netns}."""

from __future__ import annotations

import socket
import subprocess
import sys

from twisted.trial.unittest import TestCase

from tests.netns import OWNERS, new_network_namespace, reap_stale, skip_reason

_SERVER = """
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 0))
s.listen(1)
print(s.getsockname()[1], flush=True)
c, _ = s.accept()
c.sendall(b"from inside")
c.close()
"""


class NetworkNamespaceTests(TestCase):
    skip = skip_reason()

    def test_reach_inside_and_removed(self) -> None:
        """A process inside listens on the namespace address and the host reaches it over
        the veth pair; closing removes the namespace and its link."""
        ns = new_network_namespace(self)
        self.assertNotEqual(ns.address, ns.host_address)
        p = ns.popen([sys.executable, "-c", _SERVER, ns.address], stdout=subprocess.PIPE)
        port = int(p.stdout.readline())
        with socket.create_connection((ns.address, port), timeout=10) as c:
            self.assertEqual(c.recv(100), b"from inside")
        p.wait(10)
        p.stdout.close()
        ns.close()
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        self.assertNotIn(ns.name + " ", listed + " ")
        links = subprocess.run(["ip", "link"], capture_output=True, text=True).stdout
        self.assertNotIn(ns.host_link + "@", links)

    def test_two_at_once(self) -> None:
        """Two namespaces get different numbers and subnets."""
        a, b = new_network_namespace(self), new_network_namespace(self)
        self.assertNotEqual(a.name, b.name)
        self.assertNotEqual(a.address, b.address)

    def test_stale_namespace_reaped(self) -> None:
        """A namespace whose creator died without removing it is removed by the next one
        made (trial workers may be killed before their cleanups run)."""
        import os

        ns = new_network_namespace(self)
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        with open(os.path.join(OWNERS, ns.name), "w") as f:
            f.write(str(dead.pid))
        self.assertEqual(reap_stale(), [ns.name])
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        self.assertNotIn(ns.name + " ", listed + " ")
        links = subprocess.run(["ip", "link"], capture_output=True, text=True).stdout
        self.assertNotIn(ns.host_link + "@", links)
        live = new_network_namespace(self)
        self.assertNotIn(live.name, reap_stale())
