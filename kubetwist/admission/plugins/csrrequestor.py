# -*- test-case-name: tests.apis.test_certificates -*-
"""
The CSR requestor step: not an upstream admission plugin, but an admission step kubetwist runs
after the plugins (L{AdmissionChain.internal <kubetwist.admission.chain.AdmissionChain>}).

Upstream's CertificateSigningRequest strategy (C{PrepareForCreate}) reads the requesting user
from the request context; kubetwist's strategies do not see the request, so this step leaves
the user on the new object under L{REQUESTOR_KEY}, where
L{prepare_csr_for_create <kubetwist.apis.certificates.csr.prepare_csr_for_create>} takes it
(and removes it) to fill C{spec.username}, C{uid}, C{groups} and C{extra}.
"""

from __future__ import annotations

from typing import Any

from zope.interface import implementer

from kubetwist.admission.interfaces import CREATE, IMutationInterface

__all__ = ["CSRRequestor", "REQUESTOR_KEY"]

#: Where L{CSRRequestor} leaves the requesting user for the strategy; never stored (the
#: strategy always removes it) and not a JSON name a client can send on purpose.
REQUESTOR_KEY = "\x00requestor"


@implementer(IMutationInterface)
class CSRRequestor:
    """
    A mutating step on creates of C{certificatesigningrequests.certificates.k8s.io}; put it
    last in the chain (the key it adds is removed again by the strategy).
    """

    name = "CertificateSigningRequestRequestor"

    def handles(self, operation: str) -> bool:
        """Only creates carry a requestor."""
        return operation == CREATE

    async def admit(self, attrs: Any) -> None:
        """Attach C{attrs.user} (a L{UserInfo <kubetwist.authentication.user.UserInfo>} or
        C{None}) to the new object."""
        if attrs.resource.group != "certificates.k8s.io" \
                or attrs.resource.resource != "certificatesigningrequests" \
                or attrs.subresource or attrs.object is None:
            return
        attrs.object[REQUESTOR_KEY] = attrs.user
