# -*- test-case-name: tests.apis.test_core_events -*-
"""
ServiceAccounts: upstream C{pkg/apis/core/validation} (C{ValidateServiceAccount*}) and
C{pkg/registry/core/serviceaccount/strategy.go} (secret references cut down to their names).
"""

from __future__ import annotations

from kubetwist.apimachinery.validation import validate_object_meta, validate_object_meta_update
from kubetwist.apis.core.common import validate_service_account_name
from kubetwist.apis.core.printers import SERVICEACCOUNT_TABLE
from kubetwist.registry.rest import Strategy
from kubetwist.runtime.field import FieldError, Path

__all__ = [
    "SERVICEACCOUNT_STRATEGY",
    "clean_secret_references",
    "validate_service_account",
    "validate_service_account_update",
]


def clean_secret_references(sa: dict) -> None:
    """
    Upstream C{cleanSecretReferences}: each of C{secrets} keeps only its C{name}
    (C{{"name": "x"}}; C{{}} when the reference had no name).
    """
    secrets = sa.get("secrets")
    if isinstance(secrets, list):
        sa["secrets"] = [
            {"name": s["name"]} if isinstance(s, dict) and s.get("name") else {} for s in secrets
        ]


def validate_service_account(sa: dict) -> list[FieldError]:
    """Upstream C{ValidateServiceAccount}: ObjectMeta with a DNS subdomain name."""
    return validate_object_meta(
        sa.get("metadata") or {}, True, validate_service_account_name, Path("metadata")
    )


def validate_service_account_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateServiceAccountUpdate}: ObjectMeta update rules, then create rules."""
    errs = validate_object_meta_update(
        new.get("metadata") or {}, old.get("metadata") or {}, Path("metadata")
    )
    errs.extend(validate_service_account(new))
    return errs


SERVICEACCOUNT_STRATEGY = Strategy(
    kind="ServiceAccount",
    prepare_for_create=clean_secret_references,
    prepare_for_update=lambda new, old: clean_secret_references(new),
    validate=validate_service_account,
    validate_update=validate_service_account_update,
    table=SERVICEACCOUNT_TABLE,
    allow_create_on_update=False,
    allow_unconditional_update=True,
)
