# -*- test-case-name: tests.apis.test_rbac -*-
"""
The rbac.authorization.k8s.io/v1 resource table and strategies: upstream
C{pkg/registry/rbac/rest/storage_rbac.go} and C{pkg/registry/rbac/{role,rolebinding,
clusterrole,clusterrolebinding}/strategy.go} (create on update allowed, unconditional updates
allowed, nothing reset on create or update).
"""

from __future__ import annotations

from kubetwist.apis.rbac import validation as v
from kubetwist.apis.rbac.printers import (
    CLUSTER_ROLE_BINDING_TABLE,
    ROLE_BINDING_TABLE,
    ROLE_TABLE,
)
from kubetwist.registry.rest import ResourceSpec, Strategy

__all__ = ["GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = v.GROUP_NAME
VERSION = "v1"

#: Discovery rows of rbac.authorization.k8s.io/v1, in upstream's order.
RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "clusterrolebindings", "ClusterRoleBinding",
                 "clusterrolebinding", namespaced=False),
    ResourceSpec(GROUP, VERSION, "clusterroles", "ClusterRole", "clusterrole",
                 namespaced=False),
    ResourceSpec(GROUP, VERSION, "rolebindings", "RoleBinding", "rolebinding"),
    ResourceSpec(GROUP, VERSION, "roles", "Role", "role"),
]

STRATEGIES: dict[str, Strategy] = {
    "roles": Strategy(
        kind="Role", group=GROUP, default=v.default_role,
        validate=v.validate_role, validate_update=v.validate_role_update,
        table=ROLE_TABLE, allow_create_on_update=True,
    ),
    "clusterroles": Strategy(
        kind="ClusterRole", group=GROUP, namespaced=False, default=v.default_role,
        validate=v.validate_cluster_role, validate_update=v.validate_cluster_role_update,
        table=ROLE_TABLE, allow_create_on_update=True,
    ),
    "rolebindings": Strategy(
        kind="RoleBinding", group=GROUP, default=v.default_binding,
        validate=v.validate_role_binding, validate_update=v.validate_role_binding_update,
        table=ROLE_BINDING_TABLE, allow_create_on_update=True,
    ),
    "clusterrolebindings": Strategy(
        kind="ClusterRoleBinding", group=GROUP, namespaced=False, default=v.default_binding,
        validate=v.validate_cluster_role_binding,
        validate_update=v.validate_cluster_role_binding_update,
        table=CLUSTER_ROLE_BINDING_TABLE, allow_create_on_update=True,
    ),
}
