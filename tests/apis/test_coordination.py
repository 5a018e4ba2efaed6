"""Tests for L{kubetwist.apis.coordination}."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.coordination import register
from kubetwist.apis.coordination.leases import LEASE_STRATEGY


def messages(errs) -> list[str]:
    return [e.error() for e in errs]


class LeaseTests(SynchronousTestCase):
    def test_register(self) -> None:
        """leases are served namespaced in coordination.k8s.io/v1 without short names."""
        (spec,) = register.RESOURCES
        self.assertEqual(
            (spec.api_version, spec.resource, spec.kind, spec.namespaced, spec.short_names),
            ("coordination.k8s.io/v1", "leases", "Lease", True, []),
        )
        self.assertIs(register.STRATEGIES["leases"], LEASE_STRATEGY)
        self.assertFalse(LEASE_STRATEGY.allow_unconditional_update)
        self.assertTrue(LEASE_STRATEGY.allow_create_on_update)

    def test_validation(self) -> None:
        """Durations must be positive and transitions non-negative."""
        lease = {
            "metadata": {"name": "l", "namespace": "ns"},
            "spec": {"holderIdentity": "h", "leaseDurationSeconds": 0, "leaseTransitions": -1},
        }
        LEASE_STRATEGY.default(lease)
        LEASE_STRATEGY.prepare_for_create(lease)
        self.assertEqual(
            messages(LEASE_STRATEGY.validate(lease)),
            [
                "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
                "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
            ],
        )

    def test_gated_fields_dropped(self) -> None:
        """strategy and preferredHolder are dropped on create (feature off) and spec is kept {}."""
        lease = {
            "metadata": {"name": "l", "namespace": "ns"},
            "spec": {"strategy": "Bad", "preferredHolder": "x"},
        }
        LEASE_STRATEGY.prepare_for_create(lease)
        self.assertEqual(lease["spec"], {})
        bare = {"metadata": {"name": "l", "namespace": "ns"}}
        LEASE_STRATEGY.default(bare)
        self.assertEqual(bare["spec"], {})

    def test_strategy_validation(self) -> None:
        """An unknown strategy is reported at spec.strategy.strategy, as upstream does."""
        lease = {
            "metadata": {"name": "l", "namespace": "ns", "resourceVersion": "1"},
            "spec": {"strategy": "Newest", "preferredHolder": "x"},
        }
        old = {
            "metadata": {"name": "l", "namespace": "ns"},
            "spec": {"strategy": "OldestEmulationVersion"},
        }
        LEASE_STRATEGY.prepare_for_update(lease, old)
        self.assertEqual(lease["spec"], {"strategy": "Newest"})
        self.assertEqual(
            messages(LEASE_STRATEGY.validate_update(lease, old)),
            [
                'spec.strategy.strategy: Unsupported value: "Newest": supported values: '
                '"OldestEmulationVersion"'
            ],
        )
