# -*- test-case-name: tests.apis.test_certificates -*-
"""
The certificates.k8s.io/v1 resource table: upstream
C{pkg/registry/certificates/rest/storage_certificates.go} (GA resources only: ClusterTrustBundle
is alpha/beta in v1.32 and off by default) and
C{pkg/registry/certificates/certificates/storage/storage.go} (the C{status} and C{approval}
subresources, key root C{/registry/certificatesigningrequests}).
"""

from __future__ import annotations

from kubetwist.apis.certificates.csr import APPROVAL_STRATEGY, CSR_STRATEGY, STATUS_STRATEGY
from kubetwist.registry.rest import ResourceSpec, Strategy

__all__ = ["GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = "certificates.k8s.io"
VERSION = "v1"

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "certificatesigningrequests", "CertificateSigningRequest",
                 "certificatesigningrequest", namespaced=False, short_names=["csr"],
                 subresources=["approval", "status"]),
]

STRATEGIES: dict[str, Strategy] = {
    "certificatesigningrequests": CSR_STRATEGY,
    "certificatesigningrequests/status": STATUS_STRATEGY,
    "certificatesigningrequests/approval": APPROVAL_STRATEGY,
}
