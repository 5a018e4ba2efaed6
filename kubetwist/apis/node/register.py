# -*- test-case-name: tests.apis.test_node -*-
"""
The node.k8s.io/v1 resource table: upstream C{pkg/registry/node/rest/runtime_class.go}.
"""

from __future__ import annotations

from kubetwist.apis.node.runtimeclasses import RUNTIME_CLASS_STRATEGY
from kubetwist.registry.rest import ResourceSpec, Strategy

__all__ = ["GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = "node.k8s.io"
VERSION = "v1"

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "runtimeclasses", "RuntimeClass", "runtimeclass",
                 namespaced=False),
]

STRATEGIES: dict[str, Strategy] = {"runtimeclasses": RUNTIME_CLASS_STRATEGY}
