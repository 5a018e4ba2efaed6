# -*- test-case-name: tests.apis.test_rbac -*-
"""
Server-side printing of rbac.authorization.k8s.io/v1: upstream C{printRoleBinding},
C{printClusterRoleBinding} and their columns in
C{k8s.io/kubernetes/pkg/printers/internalversion/printers.go}; Roles and ClusterRoles use the
default C{Name}/C{Created At} table (upstream's role storages have no printer).
"""

from __future__ import annotations

from kubetwist.apis.printers import (
    DEFAULT_TABLE_COLUMNS,
    age_column,
    column,
    default_row,
    name_column,
    obj_age,
    obj_name,
)
from kubetwist.registry.rest import TableConvertor

__all__ = ["CLUSTER_ROLE_BINDING_TABLE", "ROLE_BINDING_TABLE", "ROLE_TABLE", "subjects_strings"]

#: C{rbac/v1beta1} C{SwaggerDoc()["roleRef"]}, which upstream's columns cite.
_ROLE_BINDING_ROLE_REF_DOC = (
    "RoleRef can reference a Role in the current namespace or a ClusterRole in the global "
    "namespace. If the RoleRef cannot be resolved, the Authorizer must return an error."
)
_CLUSTER_ROLE_BINDING_ROLE_REF_DOC = (
    "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot "
    "be resolved, the Authorizer must return an error."
)


def subjects_strings(subjects: list | None) -> tuple[list[str], list[str], list[str], list[str]]:
    """
    Upstream C{rbac.SubjectsStrings}: C{(users, groups, serviceaccounts, others)}; service
    accounts as C{namespace/name}, others as C{kind/namespace/name}.
    """
    users: list[str] = []
    groups: list[str] = []
    sas: list[str] = []
    others: list[str] = []
    for s in subjects or []:
        s = s or {}
        kind, name, ns = s.get("kind") or "", s.get("name") or "", s.get("namespace") or ""
        if kind == "ServiceAccount":
            sas.append(f"{ns}/{name}")
        elif kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
        else:
            others.append(f"{kind}/{ns}/{name}")
    return users, groups, sas, others


def _binding_row(binding: dict) -> list:
    ref = binding.get("roleRef") or {}
    users, groups, sas, _ = subjects_strings(binding.get("subjects"))
    return [
        obj_name(binding),
        f"{ref.get('kind') or ''}/{ref.get('name') or ''}",
        obj_age(binding),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(sas),
    ]


def _binding_columns(role_ref_doc: str, noun: str) -> list[dict]:
    return [
        name_column(),
        column("Role", "string", role_ref_doc),
        age_column(),
        column("Users", "string", f"Users in the {noun}", priority=1),
        column("Groups", "string", f"Groups in the {noun}", priority=1),
        column("ServiceAccounts", "string", f"ServiceAccounts in the {noun}", priority=1),
    ]


ROLE_TABLE = TableConvertor(columns=list(DEFAULT_TABLE_COLUMNS), row=default_row)

ROLE_BINDING_TABLE = TableConvertor(
    columns=_binding_columns(_ROLE_BINDING_ROLE_REF_DOC, "roleBinding"),
    row=_binding_row,
)

CLUSTER_ROLE_BINDING_TABLE = TableConvertor(
    columns=_binding_columns(_CLUSTER_ROLE_BINDING_ROLE_REF_DOC, "clusterRoleBinding"),
    row=_binding_row,
)
