# -*- test-case-name: tests.registry.test_allocator -*-
"""
Tests for L{kubetwist.registry.core.allocator}: the ClusterIP and NodePort allocators over a
bitmap persisted as a C{RangeAllocation} (upstream C{ipallocator}, C{portallocator},
C{allocator/storage}), with upstream's error texts.
"""

from __future__ import annotations

import base64
import random

from twisted.internet.defer import Deferred
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.registry.core.allocator import (
    AllocationError,
    BitmapAllocator,
    IPAllocator,
    PortAllocator,
    parse_port_range,
)
from kubetwist.storage.sqlite import SQLiteStorage
from tests.support import FakeReactorClock, InlinePool


class AllocatorTestCase(SynchronousTestCase):
    def setUp(self) -> None:
        self.storage = SQLiteStorage(FakeReactorClock(), ":memory:", threadpool=InlinePool())

    def wait(self, coro):
        return self.successResultOf(Deferred.fromCoroutine(coro))

    def refused(self, coro) -> AllocationError:
        return self.failureResultOf(Deferred.fromCoroutine(coro), AllocationError).value


class BitmapTests(AllocatorTestCase):
    """L{BitmapAllocator}: the persisted C{RangeAllocation}."""

    def test_persisted_range_allocation(self) -> None:
        """An allocation is stored as a v1 RangeAllocation: the range text and the bitmap,
        base64, bit C{i % 8} of byte C{i // 8}."""
        bitmap = BitmapAllocator(self.storage, "/registry/ranges/x", "0-15", 16)
        self.assertEqual(self.wait(bitmap.allocate(9)), 9)
        stored = self.successResultOf(self.storage.get("/registry/ranges/x"))
        self.assertEqual((stored["apiVersion"], stored["kind"], stored["range"]),
                         ("v1", "RangeAllocation", "0-15"))
        self.assertEqual(base64.b64decode(stored["data"]), bytes([0, 2]))
        self.assertTrue(self.wait(bitmap.allocated(9)))
        self.assertFalse(self.wait(bitmap.allocated(8)))

    def test_shared_between_allocators(self) -> None:
        """Two allocators over one key never hand out the same offset (one process each)."""
        a = BitmapAllocator(self.storage, "/k", "r", 4, random.Random(1))
        b = BitmapAllocator(self.storage, "/k", "r", 4, random.Random(1))
        got = {self.wait(a.allocate(None)), self.wait(b.allocate(None)),
               self.wait(a.allocate(None)), self.wait(b.allocate(None))}
        self.assertEqual(got, {0, 1, 2, 3})
        self.assertEqual(str(self.refused(a.allocate(None))), "range is full")

    def test_release_and_dry_run(self) -> None:
        """Released offsets are free again; a dry run picks without storing."""
        bitmap = BitmapAllocator(self.storage, "/k", "r", 2)
        self.wait(bitmap.allocate(0))
        self.assertEqual(self.wait(bitmap.allocate(1, dry_run=True)), 1)
        self.assertFalse(self.wait(bitmap.allocated(1)))
        self.wait(bitmap.release(0))
        self.wait(bitmap.release(0))
        self.assertFalse(self.wait(bitmap.allocated(0)))
        err = self.refused(_taken(bitmap))
        self.assertEqual((err.kind, str(err)), ("taken", "provided value is already allocated"))

    def test_prefers_upper_band(self) -> None:
        """Dynamic allocation takes from C{prefer_from} up while it has room."""
        bitmap = BitmapAllocator(self.storage, "/k", "r", 8, random.Random(0))
        got = [self.wait(bitmap.allocate(None, prefer_from=6)) for _ in range(3)]
        self.assertEqual(sorted(got[:2]), [6, 7])
        self.assertLess(got[2], 6)


async def _taken(bitmap: BitmapAllocator) -> int:
    await bitmap.allocate(1)
    return await bitmap.allocate(1)


class IPAllocatorTests(AllocatorTestCase):
    """L{IPAllocator}: C{--service-cluster-ip-range}."""

    def test_specific_ip(self) -> None:
        """A requested IP inside the range is allocated once."""
        ips = IPAllocator(self.storage, "10.0.0.0/24")
        self.assertEqual(self.wait(ips.allocate("10.0.0.10")), "10.0.0.10")
        err = self.refused(ips.allocate("10.0.0.10"))
        self.assertEqual((err.kind, str(err)), ("taken", "provided IP is already allocated"))

    def test_out_of_range(self) -> None:
        """An IP outside the range, the network or the broadcast address is refused with
        upstream's text."""
        ips = IPAllocator(self.storage, "10.0.0.0/24")
        for ip in ("10.0.1.1", "10.0.0.0", "10.0.0.255"):
            err = self.refused(ips.allocate(ip))
            self.assertEqual(str(err), f"the provided IP ({ip}) is not in the valid range. "
                                       "The range of valid IPs is 10.0.0.0/24")

    def test_dynamic_and_release(self) -> None:
        """A dynamic IP is in the range, never the network address; released IPs return."""
        ips = IPAllocator(self.storage, "10.96.0.0/30", random.Random(3))
        got = {self.wait(ips.allocate(None)), self.wait(ips.allocate(None))}
        self.assertEqual(got, {"10.96.0.1", "10.96.0.2"})
        self.assertEqual(str(self.refused(ips.allocate(None))), "range is full")
        self.wait(ips.release("10.96.0.2"))
        self.assertEqual(self.wait(ips.allocate(None)), "10.96.0.2")

    def test_family_and_first_ip(self) -> None:
        """The family and the first IP (the kubernetes Service's) of the range."""
        v4 = IPAllocator(self.storage, "10.96.0.0/12")
        v6 = IPAllocator(self.storage, "fd00::/108", key="/registry/ranges/serviceips6")
        self.assertEqual((v4.family, v4.first_ip(), v6.family, v6.first_ip()),
                         ("IPv4", "10.96.0.1", "IPv6", "fd00::1"))


class PortAllocatorTests(AllocatorTestCase):
    """L{PortAllocator}: C{--service-node-port-range}."""

    def test_specific_port(self) -> None:
        ports = PortAllocator(self.storage, (30000, 32767))
        self.assertEqual(self.wait(ports.allocate(30080)), 30080)
        self.assertEqual(str(self.refused(ports.allocate(30080))),
                         "provided port is already allocated")
        self.assertEqual(str(self.refused(ports.allocate(80))),
                         "provided port is not in the valid range. The range of valid ports "
                         "is 30000-32767")

    def test_dynamic_port_in_range(self) -> None:
        ports = PortAllocator(self.storage, (30000, 30001))
        got = {self.wait(ports.allocate(None)), self.wait(ports.allocate(None))}
        self.assertEqual(got, {30000, 30001})
        self.wait(ports.release(30000))
        self.assertEqual(self.wait(ports.allocate(None)), 30000)


class ParsePortRangeTests(SynchronousTestCase):
    """L{parse_port_range}: upstream C{utilnet.ParsePortRange}."""

    def test_forms(self) -> None:
        self.assertEqual([parse_port_range(t) for t in ("30000-32767", "30000+2767", " 80 ")],
                         [(30000, 32767), (30000, 32767), (80, 80)])

    def test_invalid(self) -> None:
        with self.assertRaises(ValueError) as caught:
            parse_port_range("a-b")
        self.assertEqual(str(caught.exception), '"a-b" is not a valid port range')
