# -*- test-case-name: tests.apis.test_coordination -*-
"""
Leases: upstream C{pkg/apis/coordination/validation} (C{ValidateLease*},
C{ValidateCoordinatedLeaseStrategy}) and C{pkg/registry/coordination/lease/strategy.go}.

The C{CoordinatedLeaderElection} feature is off (its v1.32 default), so C{spec.strategy} and
C{spec.preferredHolder} are dropped unless the stored object already uses them.
"""

from __future__ import annotations

from kubetwist.apimachinery.validation import (
    is_qualified_name,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.coordination.printers import LEASE_TABLE
from kubetwist.registry.rest import Strategy
from kubetwist.runtime.field import FieldError, Path, forbidden, invalid, not_supported

__all__ = [
    "LEASE_STRATEGY",
    "default_lease",
    "prepare_lease_for_create",
    "prepare_lease_for_update",
    "validate_lease",
    "validate_lease_spec",
    "validate_lease_update",
]

#: Upstream C{validLeaseStrategies}.
VALID_LEASE_STRATEGIES = ["OldestEmulationVersion"]


def default_lease(lease: dict) -> None:
    """A Go round trip always prints C{spec} (C{{}} when empty)."""
    if not isinstance(lease.get("spec"), dict):
        lease["spec"] = {}


def prepare_lease_for_create(lease: dict) -> None:
    """Upstream C{PrepareForCreate} with the gate off: drop C{strategy} and C{preferredHolder}."""
    spec = lease.setdefault("spec", {})
    spec.pop("strategy", None)
    spec.pop("preferredHolder", None)


def prepare_lease_for_update(new: dict, old: dict) -> None:
    """Upstream C{PrepareForUpdate}: the gated fields survive only if the old object had them."""
    spec = new.setdefault("spec", {})
    ospec = old.get("spec") or {}
    for key in ("strategy", "preferredHolder"):
        if ospec.get(key) is None:
            spec.pop(key, None)


def _validate_strategy(strategy: str, path: Path) -> list[FieldError]:
    """
    Upstream C{ValidateCoordinatedLeaseStrategy}; errors land on C{<path>.strategy}
    (C{spec.strategy.strategy}), as upstream writes them.
    """
    child = path.child("strategy")
    if "/" not in strategy:
        if strategy not in VALID_LEASE_STRATEGIES:
            return [not_supported(child, strategy, VALID_LEASE_STRATEGIES)]
        return []
    return [invalid(child, strategy, m) for m in is_qualified_name(strategy)]


def validate_lease_spec(spec: dict, path: Path) -> list[FieldError]:
    """
    Upstream C{ValidateLeaseSpec}: C{leaseDurationSeconds} > 0, C{leaseTransitions} >= 0,
    a known or qualified C{strategy}, C{preferredHolder} only with a C{strategy}.
    """
    errs: list[FieldError] = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and duration <= 0:
        errs.append(invalid(path.child("leaseDurationSeconds"), duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if transitions is not None and transitions < 0:
        errs.append(
            invalid(
                path.child("leaseTransitions"), transitions, "must be greater than or equal to 0"
            )
        )
    strategy = spec.get("strategy")
    if strategy is not None:
        errs.extend(_validate_strategy(strategy, path.child("strategy")))
    if spec.get("preferredHolder") and not strategy:
        errs.append(
            forbidden(
                path.child("preferredHolder"), "may only be specified if `strategy` is defined"
            )
        )
    return errs


def validate_lease(lease: dict) -> list[FieldError]:
    """Upstream C{ValidateLease}: ObjectMeta (DNS subdomain name) and L{validate_lease_spec}."""
    errs = validate_object_meta(
        lease.get("metadata") or {}, True, name_is_dns_subdomain, Path("metadata")
    )
    errs.extend(validate_lease_spec(lease.get("spec") or {}, Path("spec")))
    return errs


def validate_lease_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateLeaseUpdate}: ObjectMeta update rules and L{validate_lease_spec}."""
    errs = validate_object_meta_update(
        new.get("metadata") or {}, old.get("metadata") or {}, Path("metadata")
    )
    errs.extend(validate_lease_spec(new.get("spec") or {}, Path("spec")))
    return errs


LEASE_STRATEGY = Strategy(
    kind="Lease",
    group="coordination.k8s.io",
    default=default_lease,
    prepare_for_create=prepare_lease_for_create,
    prepare_for_update=prepare_lease_for_update,
    validate=validate_lease,
    validate_update=validate_lease_update,
    table=LEASE_TABLE,
    allow_create_on_update=True,
    allow_unconditional_update=False,
)
