# -*- test-case-name: tests.admission.test_registry -*-
"""
C{AlwaysAdmit} and C{AlwaysDeny}: upstream C{k8s.io/kubernetes/plugin/pkg/admission/admit} and
C{.../deny} (both deprecated upstream, both still recognised).
"""

from __future__ import annotations

from typing import Any

from zope.interface import implementer

from kubetwist.admission.interfaces import OPERATIONS, IMutationInterface, IValidationInterface
from kubetwist.runtime import errors


@implementer(IMutationInterface, IValidationInterface)
class AlwaysAdmit:
    """Admits everything."""

    name = "AlwaysAdmit"

    def handles(self, operation: str) -> bool:
        return operation in OPERATIONS

    def admit(self, a: Any) -> None:
        return None

    def validate(self, a: Any) -> None:
        return None


@implementer(IMutationInterface, IValidationInterface)
class AlwaysDeny:
    """
    Refuses every write: 403 C{<resource> "<name>" is forbidden: admission control is denying
    all modifications} (upstream C{admission.NewForbidden}).
    """

    name = "AlwaysDeny"

    def handles(self, operation: str) -> bool:
        return operation in OPERATIONS

    def admit(self, a: Any) -> None:
        """@raise StatusError: always, 403 Forbidden."""
        raise errors.new_forbidden(a.resource.group, a.resource.resource, a.name,
                                   "admission control is denying all modifications")

    validate = admit
