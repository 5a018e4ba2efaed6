# -*- test-case-name: tests.apis.test_apps -*-
"""
The apps/v1 group-version: upstream C{k8s.io/kubernetes/pkg/apis/apps} (C{register.go}) and
C{pkg/registry/apps/rest/storage_apps.go} (which resources and subresources are served).
"""

from __future__ import annotations

from kubetwist.apis.apps.strategies import STRATEGIES
from kubetwist.registry.rest import ResourceSpec

__all__ = ["GROUP", "VERSION", "RESOURCES", "STRATEGIES"]

GROUP = "apps"
VERSION = "v1"

#: Discovery rows of apps/v1, in upstream's order.
RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "controllerrevisions", "ControllerRevision", "controllerrevision"),
    ResourceSpec(GROUP, VERSION, "daemonsets", "DaemonSet", "daemonset",
                 short_names=["ds"], categories=["all"], subresources=["status"]),
    ResourceSpec(GROUP, VERSION, "deployments", "Deployment", "deployment",
                 short_names=["deploy"], categories=["all"], subresources=["status", "scale"]),
    ResourceSpec(GROUP, VERSION, "replicasets", "ReplicaSet", "replicaset",
                 short_names=["rs"], categories=["all"], subresources=["status", "scale"]),
    ResourceSpec(GROUP, VERSION, "statefulsets", "StatefulSet", "statefulset",
                 short_names=["sts"], categories=["all"], subresources=["status", "scale"]),
]

