# -*- test-case-name: tests.registry.test_allocator -*-
"""
Service ClusterIP and NodePort allocators: upstream C{pkg/registry/core/service/ipallocator},
C{portallocator} and C{allocator/storage} (a bitmap persisted as a C{RangeAllocation} object).

The bitmap lives at one storage key (C{/registry/ranges/serviceips},
C{/registry/ranges/servicenodeports}) and every allocate/release is one C{guaranteed_update} on
it, so several API server processes never hand out the same value.
"""

from __future__ import annotations

import base64
import ipaddress
import random
from typing import Optional

from kubetwist.storage.interfaces import IStorage


class AllocationError(Exception):
    """C{kind} in C{range full taken}; C{str()} is upstream's message."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(message)


class BitmapAllocator:
    """
    A persisted bitmap over C{size} offsets.

    @param key: storage key of the C{RangeAllocation}.
    @param range_text: what C{RangeAllocation.range} records (C{10.0.0.0/24}, C{30000-32767}).
    @param size: number of allocatable offsets.
    @param rng: C{random.Random} (injectable for tests).
    """

    def __init__(self, storage: IStorage, key: str, range_text: str, size: int,
                 rng: Optional[random.Random] = None) -> None:
        self.storage = storage
        self.key = key
        self.range_text = range_text
        self.size = size
        self.rng = rng or random.Random()

    def _decode(self, obj: Optional[dict]) -> bytearray:
        bits = bytearray((self.size + 7) // 8)
        if obj and obj.get("data"):
            raw = base64.b64decode(obj["data"])
            bits[: len(raw)] = raw[: len(bits)]
        return bits

    def _encode(self, obj: Optional[dict], bits: bytearray) -> dict:
        out = dict(obj or {})
        out.setdefault("apiVersion", "v1")
        out.setdefault("kind", "RangeAllocation")
        out.setdefault("metadata", {})
        out["range"] = self.range_text
        out["data"] = base64.b64encode(bytes(bits)).decode()
        return out

    @staticmethod
    def _has(bits: bytearray, i: int) -> bool:
        return bool(bits[i // 8] & (1 << (i % 8)))

    async def allocated(self, offset: int) -> bool:
        obj = await self.storage.get(self.key, ignore_not_found=True)
        return self._has(self._decode(obj), offset)

    async def allocate(self, offset: Optional[int], dry_run: bool = False,
                       prefer_from: int = 0) -> int:
        """
        Allocate C{offset}, or a random free one (from C{prefer_from} up first, as upstream's
        static/dynamic bands); fire with the offset.

        @raise AllocationError: C{taken} or C{full}.
        """
        chosen: list[int] = []

        def pick(bits: bytearray) -> int:
            if offset is not None:
                if self._has(bits, offset):
                    raise AllocationError("taken", "provided value is already allocated")
                return offset
            free_hi = [i for i in range(prefer_from, self.size) if not self._has(bits, i)]
            if free_hi:
                return self.rng.choice(free_hi)
            free = [i for i in range(self.size) if not self._has(bits, i)]
            if not free:
                raise AllocationError("full", "range is full")
            return self.rng.choice(free)

        if dry_run:
            obj = await self.storage.get(self.key, ignore_not_found=True)
            return pick(self._decode(obj))

        async def update(current: Optional[dict]) -> dict:
            bits = self._decode(current)
            i = pick(bits)
            chosen[:] = [i]
            bits[i // 8] |= 1 << (i % 8)
            return self._encode(current, bits)

        await self.storage.guaranteed_update(self.key, update, ignore_not_found=True)
        return chosen[0]

    async def release(self, offset: int) -> None:
        """Free C{offset} (a no-op when it is free)."""

        async def update(current: Optional[dict]) -> dict:
            bits = self._decode(current)
            bits[offset // 8] &= ~(1 << (offset % 8)) & 0xFF
            return self._encode(current, bits)

        await self.storage.guaranteed_update(self.key, update, ignore_not_found=True)


class IPAllocator:
    """
    ClusterIPs of C{--service-cluster-ip-range}: offsets exclude the network address (and, for
    IPv4, the broadcast address), so the first allocatable IP is C{base+1}.
    """

    def __init__(self, storage: IStorage, cidr: str, rng: Optional[random.Random] = None,
                 key: str = "/registry/ranges/serviceips") -> None:
        self.network = ipaddress.ip_network(cidr, strict=False)
        self.cidr = str(self.network)
        size = self.network.num_addresses - (2 if self.network.version == 4 else 1)
        size = max(0, min(size, 65536))
        self.bitmap = BitmapAllocator(storage, key, self.cidr, size, rng)
        # upstream (ServiceIPStaticSubrange): dynamic allocation prefers the upper band
        self.static_band = min(max(16, size // 16), 256) if size > 16 else 0

    @property
    def family(self) -> str:
        return "IPv4" if self.network.version == 4 else "IPv6"

    def first_ip(self) -> str:
        return str(self.network.network_address + 1)

    def _offset(self, ip: str) -> int:
        addr = ipaddress.ip_address(ip)
        return int(addr) - int(self.network.network_address) - 1

    async def allocate(self, ip: Optional[str], dry_run: bool = False) -> str:
        """
        Allocate C{ip} (or any free IP); fire with it.

        @raise AllocationError: with upstream's texts (C{the provided IP (x) is not in the
            valid range. The range of valid IPs is <cidr>}, C{provided IP is already
            allocated}, C{range is full}).
        """
        if ip:
            try:
                addr = ipaddress.ip_address(ip)
            except ValueError:
                raise AllocationError("range", f"failed to parse IP {ip}") from None
            off = int(addr) - int(self.network.network_address) - 1
            if addr not in self.network or off < 0 or off >= self.bitmap.size:
                raise AllocationError(
                    "range",
                    f"the provided IP ({ip}) is not in the valid range. The range of valid IPs "
                    f"is {self.cidr}",
                )
            if dry_run:
                # upstream Range.allocate: a dry run checks the range only, not whether the
                # IP is free ("racy and not worth the effort")
                return ip
            try:
                await self.bitmap.allocate(off, dry_run)
            except AllocationError:
                raise AllocationError("taken", "provided IP is already allocated") from None
            return ip
        if dry_run:
            # upstream Range.allocateNext: a dry run answers the range's base address
            return str(self.network.network_address)
        try:
            off = await self.bitmap.allocate(None, dry_run, prefer_from=self.static_band)
        except AllocationError:
            raise AllocationError("full", "range is full") from None
        return str(self.network.network_address + 1 + off)

    async def release(self, ip: str) -> None:
        try:
            off = self._offset(ip)
        except ValueError:
            return
        if 0 <= off < self.bitmap.size:
            await self.bitmap.release(off)


class PortAllocator:
    """NodePorts of C{--service-node-port-range} (C{30000-32767})."""

    def __init__(self, storage: IStorage, port_range: tuple[int, int],
                 rng: Optional[random.Random] = None,
                 key: str = "/registry/ranges/servicenodeports") -> None:
        self.base, self.last = port_range
        size = self.last - self.base + 1
        self.bitmap = BitmapAllocator(storage, key, f"{self.base}-{self.last}", size, rng)
        self.static_band = min(max(16, size // 32), 128) if size > 16 else 0

    def contains(self, port: int) -> bool:
        return self.base <= port <= self.last

    async def allocate(self, port: Optional[int], dry_run: bool = False) -> int:
        """@raise AllocationError: C{provided port is not in the valid range. The range of
        valid ports is 30000-32767}, C{provided port is already allocated}, C{range is full}."""
        if port:
            if not self.contains(port):
                raise AllocationError(
                    "range",
                    f"provided port is not in the valid range. The range of valid ports is "
                    f"{self.base}-{self.last}",
                )
            try:
                await self.bitmap.allocate(port - self.base, dry_run)
            except AllocationError:
                raise AllocationError("taken", "provided port is already allocated") from None
            return port
        try:
            off = await self.bitmap.allocate(None, dry_run, prefer_from=self.static_band)
        except AllocationError:
            raise AllocationError("full", "range is full") from None
        return self.base + off

    @staticmethod
    def dry_run_next(allocated: list[int]) -> int:
        """
        The port a dry run answers for an unrequested node port: one past the highest port
        the same operation has taken so far, or 32769 for its first one, without looking at
        the range or the bitmap (upstream C{PortAllocationOperation.AllocateNext}, whose
        search loop never runs).

        @param allocated: the ports the operation has taken so far; the answer is appended.
        """
        port = (max(allocated) if allocated else 32768) + 1
        allocated.append(port)
        return port

    async def release(self, port: int) -> None:
        if self.contains(port):
            await self.bitmap.release(port - self.base)


def parse_port_range(text: str) -> tuple[int, int]:
    """Parse C{30000-32767} (or C{30000+2767}) as upstream C{utilnet.ParsePortRange}."""
    text = text.strip()
    try:
        if "+" in text:
            a, b = text.split("+", 1)
            lo = int(a)
            return lo, lo + int(b)
        if "-" in text:
            a, b = text.split("-", 1)
            lo, hi = int(a), int(b)
        else:
            lo = hi = int(text)
    except ValueError:
        raise ValueError(f'"{text}" is not a valid port range') from None
    if not (0 < lo <= hi <= 65535):
        raise ValueError(f'"{text}" is not a valid port range')
    return lo, hi
