# -*- test-case-name: tests.integration.test_certificates -*-
"""
CertificateSigningRequests with the real C{kubectl} against a real C{twistd -n kubeapi}:
C{kubectl get csr} prints upstream's columns, C{kubectl certificate approve} (a protobuf PUT
to the C{approval} subresource) approves, and the requestor is the admin user.
"""

from __future__ import annotations

import json

from twisted.trial.unittest import SynchronousTestCase

from tests.apis.test_certificates import new_csr
from tests.integration.harness import (
    ServerTestMixin,
    class_units,
    parse_table,
    table_headers,
    unique_name,
)


class CertificateSigningRequestAcceptanceTests(ServerTestMixin, SynchronousTestCase):
    """One embedded-store server for the class."""

    def test_get_and_approve(self) -> None:
        """get csr columns, Pending -> Approved through kubectl certificate approve."""
        name = unique_name("csr")
        csr = new_csr(expirationSeconds=3600)
        csr["metadata"]["name"] = name
        self.create(None, csr)
        stored = json.loads(self.server.kubectl("get", "csr", name, "-o", "json").stdout)
        requestor = stored["spec"]["username"]
        self.assertNotEqual(requestor, "")
        out = self.server.kubectl("get", "csr", name).stdout
        self.assertEqual(table_headers(out), [
            "NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"])
        row = parse_table(out)[0]
        self.assertEqual((row["NAME"], row["SIGNERNAME"], row["REQUESTOR"],
                          row["REQUESTEDDURATION"], row["CONDITION"]),
                         (name, "example.com/signer", requestor, "60m", "Pending"))
        out = self.server.kubectl("certificate", "approve", name).stdout
        self.assertEqual(out.strip(),
                         f"certificatesigningrequest.certificates.k8s.io/{name} approved")
        row = parse_table(self.server.kubectl("get", "csr", name).stdout)[0]
        self.assertEqual(row["CONDITION"], "Approved")
        stored = json.loads(self.server.kubectl("get", "csr", name, "-o", "json").stdout)
        condition = stored["status"]["conditions"][0]
        self.assertEqual((condition["type"], condition["status"], condition["reason"]),
                         ("Approved", "True", "KubectlApprove"))


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
