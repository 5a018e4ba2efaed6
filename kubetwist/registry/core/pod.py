# -*- test-case-name: tests.registry.test_store_delete -*-
"""
Graceful deletion of pods: upstream C{pkg/registry/core/pod/strategy.go} C{CheckGracefulDelete}.
"""

from __future__ import annotations

#: the pod phases after which a pod is deleted at once
_TERMINAL = ("Failed", "Succeeded")


def check_graceful_delete(pod: dict, options: dict) -> bool:
    """
    Settle the grace period of a pod's deletion in C{options["gracePeriodSeconds"]} (seconds):
    the requested one, else C{spec.terminationGracePeriodSeconds}, else 0; 0 for a pod with no
    C{spec.nodeName} (no kubelet will stop it) or a terminal one (C{Failed}, C{Succeeded});
    a negative one becomes 1.  Always True: pods are always deleted gracefully, possibly with
    grace 0 (stored with C{deletionTimestamp} set, then deleted at once).
    """
    spec = pod.get("spec") or {}
    period = options.get("gracePeriodSeconds")
    if period is None:
        period = spec.get("terminationGracePeriodSeconds") or 0
    if not spec.get("nodeName"):
        period = 0
    if (pod.get("status") or {}).get("phase") in _TERMINAL:
        period = 0
    if period < 0:
        period = 1
    options["gracePeriodSeconds"] = period
    return True
