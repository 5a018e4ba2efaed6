# -*- test-case-name: tests.apis.test_coordination -*-
"""
The coordination.k8s.io/v1 resource table: upstream C{pkg/registry/coordination/rest}.
"""

from __future__ import annotations

from kubetwist.apis.coordination.leases import LEASE_STRATEGY
from kubetwist.registry.rest import ResourceSpec, Strategy

__all__ = ["GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = "coordination.k8s.io"
VERSION = "v1"

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "leases", "Lease", "lease", namespaced=True),
]

STRATEGIES: dict[str, Strategy] = {"leases": LEASE_STRATEGY}
