# -*- test-case-name: tests.admission.test_builtin -*-
"""
The CertificateSigningRequest plugins: upstream C{plugin/pkg/admission/certificates}
(C{approval}, C{signing}, C{subjectrestriction} and C{util.go}'s
C{IsAuthorizedForSignerName}).

Approving (C{certificatesigningrequests/approval}) needs the C{approve} verb and signing (a
change of C{status.certificate} or C{status.conditions} through C{.../status}) the C{sign}
verb on the resource C{signers} of C{certificates.k8s.io}, named after the signer
(C{example.com/foo}) or its domain (C{example.com/*}); the authorizer is the server's (read
from the plugin context at request time).  C{CertificateSubjectRestriction} refuses
C{kubernetes.io/kube-apiserver-client} requests for the C{system:masters} group.
"""

from __future__ import annotations

from typing import Any, Callable

from zope.interface import implementer

from kubetwist.admission.interfaces import IValidationInterface
from kubetwist.admission.plugins.common import forbidden
from kubetwist.authorization.authorizer import ALLOW
from kubetwist.authorization.authorizer import Attributes as AuthzAttributes
from kubetwist.runtime import errors

__all__ = ["CertificateApproval", "CertificateSigning", "CertificateSubjectRestriction",
           "is_authorized_for_signer_name"]

GROUP = "certificates.k8s.io"
KUBE_APISERVER_CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"


def _is_csr(a: Any, subresource: str) -> bool:
    return (a.resource.group == GROUP and a.resource.resource == "certificatesigningrequests"
            and a.subresource == subresource)


async def is_authorized_for_signer_name(authorizer: Any, user: Any, verb: str,
                                        signer_name: str) -> bool:
    """
    Upstream C{IsAuthorizedForSignerName}: C{verb} on C{signers/<signer_name>}, else on
    C{signers/<domain>/*}; an authorizer error counts as a refusal.
    """
    if authorizer is None:
        return False
    for name in (signer_name, signer_name.split("/")[0] + "/*"):
        attrs = AuthzAttributes(user=user, verb=verb, api_group=GROUP, api_version="*",
                                resource="signers", name=name, resource_request=True)
        try:
            decision, _ = await authorizer.authorize(attrs)
        except Exception:  # noqa: BLE001 - upstream logs the error and goes on
            continue
        if decision == ALLOW:
            return True
    return False


class _SignerCheck:
    def __init__(self, authorizer: Callable[[], Any]) -> None:
        """@param authorizer: C{() -> IAuthorizer} (the server's, set after construction)."""
        self.authorizer = authorizer

    def handles(self, operation: str) -> bool:
        return operation == "UPDATE"


@implementer(IValidationInterface)
class CertificateApproval(_SignerCheck):
    """Approving or denying a CSR needs C{approve} on its (new) signer name."""

    name = "CertificateApproval"

    async def validate(self, a: Any) -> None:
        """@raise StatusError: 403 C{user not permitted to approve requests with signerName
        "x"}."""
        if not _is_csr(a, "approval") or not isinstance(a.object, dict):
            return
        signer = (a.object.get("spec") or {}).get("signerName", "")
        if not await is_authorized_for_signer_name(self.authorizer(), a.user, "approve",
                                                   signer):
            raise forbidden(a, f'user not permitted to approve requests with signerName '
                               f'"{signer}"')


@implementer(IValidationInterface)
class CertificateSigning(_SignerCheck):
    """Setting a CSR's certificate or conditions through C{status} needs C{sign} on its
    signer name."""

    name = "CertificateSigning"

    async def validate(self, a: Any) -> None:
        """@raise StatusError: 403 C{user not permitted to sign requests with signerName
        "x"}."""
        if not _is_csr(a, "status") or not isinstance(a.object, dict) \
                or not isinstance(a.old_object, dict):
            return
        new, old = a.object.get("status") or {}, a.old_object.get("status") or {}
        if new.get("certificate") == old.get("certificate") \
                and (new.get("conditions") or []) == (old.get("conditions") or []):
            return
        signer = (a.old_object.get("spec") or {}).get("signerName", "")
        if not await is_authorized_for_signer_name(self.authorizer(), a.user, "sign", signer):
            raise forbidden(a, f'user not permitted to sign requests with signerName '
                               f'"{signer}"')


def _organizations(request: Any) -> list[str]:
    """The subject organizations of a CSR's C{spec.request} (base64 of PEM in JSON).

    @raise StatusError: 500, upstream's C{failed to parse CSR: ...}.
    """
    import base64

    from cryptography import x509
    from cryptography.x509.oid import NameOID

    try:
        pem = base64.b64decode(request or "")
        block = x509.load_pem_x509_csr(pem)
    except Exception:  # noqa: BLE001 - any parse failure
        raise errors.new_internal_error("failed to parse CSR: PEM block type must be "
                                        "CERTIFICATE REQUEST") from None
    return [attr.value for attr in block.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]


@implementer(IValidationInterface)
class CertificateSubjectRestriction:
    """No C{kubernetes.io/kube-apiserver-client} CSR for the C{system:masters} group."""

    name = "CertificateSubjectRestriction"

    def handles(self, operation: str) -> bool:
        return operation == "CREATE"

    async def validate(self, a: Any) -> None:
        """@raise StatusError: 403 C{use of kubernetes.io/kube-apiserver-client signer with
        system:masters group is not allowed}."""
        if not _is_csr(a, "") or not isinstance(a.object, dict):
            return
        spec = a.object.get("spec") or {}
        if spec.get("signerName") != KUBE_APISERVER_CLIENT_SIGNER:
            return
        if "system:masters" in _organizations(spec.get("request")):
            raise forbidden(a, f"use of {KUBE_APISERVER_CLIENT_SIGNER} signer with "
                               "system:masters group is not allowed")
