# -*- test-case-name: tests.apis.test_printers -*-
"""
Server-side printing of coordination.k8s.io/v1 Leases: upstream C{printLease} and its columns
in C{k8s.io/kubernetes/pkg/printers/internalversion/printers.go}.
"""

from __future__ import annotations

from kubetwist.apis.printers import SWAGGER_DOCS, age_column, column, name_column, obj_age, obj_name
from kubetwist.registry.rest import TableConvertor

__all__ = ["LEASE_TABLE"]

LEASE_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Holder", "string", SWAGGER_DOCS["LeaseSpec.holderIdentity"]),
        age_column(),
    ],
    row=lambda lease: [
        obj_name(lease),
        (lease.get("spec") or {}).get("holderIdentity") or "",
        obj_age(lease),
    ],
)
