# -*- test-case-name: tests.registry.test_service -*-
"""
Services' registry-level behaviour: upstream C{pkg/registry/core/service/storage}
(C{storage.go}, C{alloc.go}): ClusterIP and NodePort allocation on create, carry-over and
re-allocation on update, release on delete.
"""

from __future__ import annotations

from typing import Any, Optional

from kubetwist.registry.core.allocator import AllocationError, IPAllocator, PortAllocator
from kubetwist.registry.generic.store import Store
from kubetwist.runtime import errors, gofmt
from kubetwist.runtime import field as fe

NODE_PORT_TYPES = ("NodePort", "LoadBalancer")


def _needs_cluster_ip(spec: dict) -> bool:
    return spec.get("type", "ClusterIP") != "ExternalName" and spec.get("clusterIP") != "None"


class ServiceAllocations:
    """The allocation hooks of the services Store."""

    def __init__(self, store: Store, ips: IPAllocator, ports: PortAllocator,
                 registry_defaults: Any = None) -> None:
        self.store = store
        self.ips = ips
        self.ports = ports
        self.registry_defaults = registry_defaults
        store.before_create.append(self.before_create)
        store.before_update.append(self.before_update)
        store.after_delete.append(self.after_delete)

    def _invalid(self, svc: dict, errs: list) -> errors.StatusError:
        return errors.new_invalid("", "Service", svc["metadata"].get("name", ""), errs)

    async def _allocate_ip(self, svc: dict, dry_run: bool) -> None:
        spec = svc.setdefault("spec", {})
        if not _needs_cluster_ip(spec):
            if spec.get("clusterIP") == "None":
                spec["clusterIPs"] = ["None"]
            return
        requested = spec.get("clusterIP") or None
        try:
            ip = await self.ips.allocate(requested, dry_run)
        except AllocationError as e:
            # upstream prints the []string with %#v (field.ErrorBody's default case)
            value = spec.get("clusterIPs") or [requested]
            raise self._invalid(svc, [fe.invalid_go(
                "spec.clusterIPs", gofmt.string_slice(value),
                f"failed to allocate IP {requested}: {e}")]) from e
        spec["clusterIP"] = ip
        spec["clusterIPs"] = [ip]

    async def _allocate_node_ports(self, svc: dict, dry_run: bool,
                                   old: Optional[dict] = None) -> list[int]:
        spec = svc.setdefault("spec", {})
        got: list[int] = []
        if spec.get("type") not in NODE_PORT_TYPES:
            return got
        old_ports = {}
        if old is not None:
            for p in (old.get("spec") or {}).get("ports") or []:
                if p.get("nodePort"):
                    old_ports[(p.get("port"), p.get("protocol", "TCP"))] = p["nodePort"]
        used_old = set(old_ports.values())
        #: the ports a dry run has taken (upstream PortAllocationOperation.allocated)
        dry_allocated: list[int] = []
        for i, p in enumerate(spec.get("ports") or []):
            want = p.get("nodePort")
            if not want:
                carried = old_ports.get((p.get("port"), p.get("protocol", "TCP")))
                if carried:
                    p["nodePort"] = carried
                    continue
            elif want in used_old:
                continue
            if dry_run and not want:
                p["nodePort"] = self.ports.dry_run_next(dry_allocated)
                continue
            try:
                if dry_run and want in dry_allocated:
                    raise AllocationError("taken", "provided port is already allocated")
                port = await self.ports.allocate(want or None, dry_run)
                if dry_run:
                    dry_allocated.append(port)
            except AllocationError as e:
                for g in got:
                    await self.ports.release(g)
                raise self._invalid(svc, [fe.invalid(
                    f"spec.ports[{i}].nodePort", want, str(e))]) if want else self._invalid(
                    svc, [fe.internal(f"spec.ports[{i}].nodePort",
                                      f"failed to allocate a nodePort: {e}")]) from e
            p["nodePort"] = port
            if not dry_run:
                got.append(port)
        return got

    def _registry_defaults(self, svc: dict, old: Optional[dict]) -> None:
        if self.registry_defaults is None:
            return
        errs = self.registry_defaults(svc, old, (self.ips.family,))
        if errs:
            raise self._invalid(svc, errs)

    async def before_create(self, svc: dict, dry_run: bool) -> None:
        self._registry_defaults(svc, None)
        await self._allocate_ip(svc, dry_run)
        try:
            await self._allocate_node_ports(svc, dry_run)
        except Exception:
            if not dry_run and _needs_cluster_ip(svc.get("spec", {})):
                await self.ips.release(svc["spec"]["clusterIP"])
            raise

    async def before_update(self, new: dict, old: dict, dry_run: bool) -> None:
        self._registry_defaults(new, old)
        spec = new.setdefault("spec", {})
        old_spec = old.get("spec") or {}
        if not spec.get("clusterIP") and old_spec.get("clusterIP") and _needs_cluster_ip(spec):
            spec["clusterIP"] = old_spec["clusterIP"]
            spec["clusterIPs"] = list(old_spec.get("clusterIPs") or [old_spec["clusterIP"]])
        if not spec.get("clusterIP") and _needs_cluster_ip(spec):
            await self._allocate_ip(new, dry_run)
        await self._allocate_node_ports(new, dry_run, old)
        if not dry_run:
            kept = {p.get("nodePort") for p in spec.get("ports") or [] if p.get("nodePort")}
            for p in old_spec.get("ports") or []:
                if p.get("nodePort") and p["nodePort"] not in kept:
                    await self.ports.release(p["nodePort"])
            if old_spec.get("clusterIP") and old_spec["clusterIP"] != "None" and \
                    not _needs_cluster_ip(spec):
                await self.ips.release(old_spec["clusterIP"])

    async def after_delete(self, svc: dict) -> None:
        spec = svc.get("spec") or {}
        ip = spec.get("clusterIP")
        if ip and ip != "None":
            await self.ips.release(ip)
        for p in spec.get("ports") or []:
            if p.get("nodePort"):
                await self.ports.release(p["nodePort"])
