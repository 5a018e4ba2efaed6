# -*- test-case-name: tests.apis.test_scheduling -*-
"""
The scheduling.k8s.io/v1 resource table: upstream
C{pkg/registry/scheduling/rest/storage_scheduling.go}.
"""

from __future__ import annotations

from kubetwist.apis.scheduling.priorityclasses import PRIORITY_CLASS_STRATEGY
from kubetwist.registry.rest import ResourceSpec, Strategy

__all__ = ["GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = "scheduling.k8s.io"
VERSION = "v1"

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "priorityclasses", "PriorityClass", "priorityclass",
                 namespaced=False, short_names=["pc"]),
]

STRATEGIES: dict[str, Strategy] = {"priorityclasses": PRIORITY_CLASS_STRATEGY}
