"""Tests for L{kubetwist.apis.certificates}: CertificateSigningRequests."""

from __future__ import annotations

import base64
import copy
import datetime

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.certificates import csr as csrlib
from kubetwist.apis.certificates import register
from kubetwist.authentication.user import UserInfo
from kubetwist.runtime import protobuf
from kubetwist.runtime.errors import StatusError
from tests.support import KubeTestCase

S = register.STRATEGIES["certificatesigningrequests"]
STATUS = register.STRATEGIES["certificatesigningrequests/status"]
APPROVAL = register.STRATEGIES["certificatesigningrequests/approval"]
CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"

_KEY = ec.generate_private_key(ec.SECP256R1())
_REQ = (x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "jane")]))
        .sign(_KEY, hashes.SHA256()))
CSR_PEM = _REQ.public_bytes(serialization.Encoding.PEM)
_NOW = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
_CERT = (x509.CertificateBuilder().subject_name(_REQ.subject).issuer_name(_REQ.subject)
         .public_key(_KEY.public_key()).serial_number(1).not_valid_before(_NOW)
         .not_valid_after(_NOW + datetime.timedelta(days=1)).sign(_KEY, hashes.SHA256()))
CERT_PEM = _CERT.public_bytes(serialization.Encoding.PEM)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def new_csr(**spec) -> dict:
    body = {"request": b64(CSR_PEM), "signerName": "example.com/signer",
            "usages": ["client auth"]}
    body.update(spec)
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": "jane"}, "spec": body}


def messages(errs) -> list[str]:
    return [e.error() for e in errs]


class ValidationTests(SynchronousTestCase):
    def test_valid(self) -> None:
        """A signed PEM request with a signer and a usage is valid."""
        self.assertEqual(S.validate(new_csr()), [])

    def test_request_not_a_csr(self) -> None:
        """A missing request, or a PEM block of another type, fails as upstream's ParseCSR,
        printing the bytes the way Go prints a []byte value."""
        csr = new_csr()
        del csr["spec"]["request"]
        self.assertEqual(messages(S.validate(csr)), [
            ("spec.request: Invalid value: []byte(nil): PEM block type must be CERTIFICATE "
            "REQUEST")])
        csr = new_csr(request=b64(b"-----BEGIN X-----\nAA==\n-----END X-----\n"))
        self.assertTrue(messages(S.validate(csr))[0].startswith(
            "spec.request: Invalid value: []byte{0x2d, 0x2d, 0x2d, 0x2d, 0x2d, 0x42, 0x45,"))
        self.assertTrue(messages(S.validate(csr))[0].endswith(
            ": PEM block type must be CERTIFICATE REQUEST"))

    def test_bad_signature(self) -> None:
        """A request whose self-signature does not verify is refused (Go's ECDSA text)."""
        der = bytearray(_REQ.public_bytes(serialization.Encoding.DER))
        der[-1] ^= 0x01
        pem = (b"-----BEGIN CERTIFICATE REQUEST-----\n" + base64.encodebytes(bytes(der))
               + b"-----END CERTIFICATE REQUEST-----\n")
        errs = S.validate(new_csr(request=b64(pem)))
        self.assertEqual(len(errs), 1)
        self.assertEqual(errs[0].field, "spec.request")
        self.assertIn(errs[0].detail, ("x509: ECDSA verification failure",
                                       "x509: malformed certificate request"))

    def test_usages(self) -> None:
        """Usages are required, from the known set (listed sorted), and unique."""
        self.assertEqual(messages(S.validate(new_csr(usages=[]))),
                         ["spec.usages: Required value"])
        errs = messages(S.validate(new_csr(usages=["client auth", "bogus", "client auth"])))
        self.assertTrue(errs[0].startswith(
            'spec.usages[1]: Unsupported value: "bogus": supported values: "any", "cert sign", '
            '"client auth", "code signing", '))
        self.assertTrue(errs[0].endswith('"signing", "timestamping"'))
        self.assertEqual(errs[1], 'spec.usages[2]: Duplicate value: "client auth"')

    def test_signer_name(self) -> None:
        """signerName: required, domain/path, no legacy signer via v1, valid labels."""
        cases = {
            "": ["spec.signerName: Required value"],
            "nodomain": [("spec.signerName: Invalid value: \"nodomain\": must be a fully "
                         "qualified domain and path of the form 'example.com/signer-name'")],
            "kubernetes.io/legacy-unknown": [
                ('spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy '
                "signerName is not allowed via this API version")],
            "example/x": [('spec.signerName: Invalid value: "example": should be a domain with '
                          "at least two segments separated by dots")],
            "Example.com/x": [
                ('spec.signerName: Invalid value: "Example.com": validating label "Example": '
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',"
                "  or '123-abc', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")],
        }
        for signer, expected in cases.items():
            self.assertEqual(messages(S.validate(new_csr(signerName=signer))), expected, signer)

    def test_expiration_seconds(self) -> None:
        """expirationSeconds below 600 is refused; 600 is fine."""
        self.assertEqual(messages(S.validate(new_csr(expirationSeconds=599))), [
            ("spec.expirationSeconds: Invalid value: 599: may not specify a duration less than "
            "600 seconds (10 minutes)")])
        self.assertEqual(S.validate(new_csr(expirationSeconds=600)), [])

    def test_conditions(self) -> None:
        """Approved/Denied are exclusive, True-only, and types are unique."""
        csr = new_csr()
        csr["status"] = {"conditions": [
            {"type": "Approved", "status": "True"},
            {"type": "Denied", "status": "False"},
            {"type": "Approved", "status": "True"},
            {"type": "Custom"},
        ]}
        self.assertEqual(messages(S.validate(csr)), [
            'status.conditions[1].status: Unsupported value: "False": supported values: "True"',
            ('status.conditions[1].type: Invalid value: "Denied": Approved and Denied '
            "conditions are mutually exclusive"),
            ('status.conditions[2].type: Invalid value: "Approved": Approved and Denied '
            "conditions are mutually exclusive"),
            'status.conditions[2].type: Duplicate value: "Approved"',
            "status.conditions[3].status: Required value",
        ])

    def test_certificate(self) -> None:
        """status.certificate must hold CERTIFICATE PEM blocks only."""
        csr = new_csr()
        csr["status"] = {"certificate": b64(CSR_PEM)}
        self.assertEqual(messages(S.validate(csr)), [
            ('status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM '
            'blocks are allowed, found "CERTIFICATE REQUEST"')])
        csr["status"] = {"certificate": b64(b"junk")}
        self.assertEqual(messages(S.validate(csr)), [
            ('status.certificate: Invalid value: "<certificate data>": must contain at least '
            "one CERTIFICATE PEM block")])
        csr["status"] = {"certificate": b64(CERT_PEM)}
        self.assertEqual(S.validate(csr), [])

    def test_bad_base64_is_a_decode_error(self) -> None:
        """A request that is not base64 fails decoding with 400, as Go's JSON decoder."""
        with self.assertRaises(StatusError) as cm:
            S.default(new_csr(request="not base64!"))
        self.assertEqual(cm.exception.code, 400)
        self.assertEqual(cm.exception.status["message"],
                         'CertificateSigningRequest in version "v1" cannot be handled as a '
                         "CertificateSigningRequest: illegal base64 data at input byte 3")


class StrategyTests(SynchronousTestCase):
    def test_prepare_for_create(self) -> None:
        """The requestor comes from the request's user, never from the body; status is
        emptied; without a user the fields are cleared."""
        csr = new_csr(username="mallory", groups=["system:masters"], uid="x")
        csr["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
        csr[csrlib.REQUESTOR_KEY] = UserInfo("jane", "42", ["dev", "system:authenticated"],
                                             {"scopes": ["a"]})
        S.prepare_for_create(csr)
        self.assertEqual(csr["spec"]["username"], "jane")
        self.assertEqual(csr["spec"]["uid"], "42")
        self.assertEqual(csr["spec"]["groups"], ["dev", "system:authenticated"])
        self.assertEqual(csr["spec"]["extra"], {"scopes": ["a"]})
        self.assertEqual(csr["status"], {})
        self.assertNotIn(csrlib.REQUESTOR_KEY, csr)
        anonymous = new_csr(username="mallory")
        S.prepare_for_create(anonymous)
        self.assertNotIn("username", anonymous["spec"])

    def stored(self) -> dict:
        csr = new_csr(username="jane")
        csr["metadata"]["resourceVersion"] = "5"
        csr["status"] = {}
        return csr

    def test_main_update_keeps_spec_and_status(self) -> None:
        """A plain update changes neither spec nor status."""
        old = self.stored()
        new = copy.deepcopy(old)
        new["spec"]["usages"] = ["server auth"]
        new["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
        S.prepare_for_update(new, old)
        self.assertEqual(new["spec"], old["spec"])
        self.assertEqual(new["status"], {})

    def test_approval(self) -> None:
        """The approval subresource takes the conditions only and stamps their times."""
        old = self.stored()
        new = copy.deepcopy(old)
        new["spec"]["usages"] = ["server auth"]
        new["status"] = {"certificate": b64(CERT_PEM), "conditions": [
            {"type": "Approved", "status": "True", "reason": "KubectlApprove"}]}
        APPROVAL.prepare_for_update(new, old)
        self.assertEqual(new["spec"], old["spec"])
        self.assertNotIn("certificate", new["status"])
        cond = new["status"]["conditions"][0]
        self.assertEqual(cond["lastUpdateTime"], cond["lastTransitionTime"])
        self.assertEqual(APPROVAL.validate_update(new, old), [])

    def test_update_rules(self) -> None:
        """Without the approval subresource Approved may not be added; no subresource may
        remove it; only status may set the certificate, once."""
        old = self.stored()
        new = copy.deepcopy(old)
        new["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
        self.assertEqual(messages(STATUS.validate_update(new, old)), [
            'status.conditions: Forbidden: updates may not add a condition of type "Approved"'])
        self.assertEqual(messages(APPROVAL.validate_update(old, new)), [
            ('status.conditions: Forbidden: updates may not remove a condition of type '
            '"Approved"')])
        issued = copy.deepcopy(old)
        issued["status"] = {"certificate": b64(CERT_PEM)}
        self.assertEqual(STATUS.validate_update(issued, old), [])
        self.assertEqual(messages(APPROVAL.validate_update(issued, old)), [
            "status.certificate: Forbidden: updates may not set certificate content"])
        again = copy.deepcopy(old)
        again["status"] = {"certificate": b64(CERT_PEM + CERT_PEM)}
        self.assertEqual(messages(STATUS.validate_update(again, issued)), [
            ("status.certificate: Forbidden: updates may not modify existing certificate "
            "content")])

    def test_table(self) -> None:
        """Columns and cells as upstream's printCertificateSigningRequest."""
        self.assertEqual([c["name"] for c in S.table.columns], [
            "Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"])
        csr = new_csr(username="jane", expirationSeconds=3600)
        csr["status"] = {"certificate": b64(CERT_PEM), "conditions": [
            {"type": "Approved", "status": "True"}, {"type": "Failed", "status": "True"}]}
        self.assertEqual(S.table.row(csr)[2:], [
            "example.com/signer", "jane", "60m", "Approved,Failed,Issued"])
        self.assertEqual(S.table.row(new_csr(signerName=""))[2:], [
            "<none>", "", "<none>", "Pending"])


class HTTPTests(KubeTestCase):
    def create(self) -> dict:
        code, body, _ = self.request("POST", CSRS, new_csr(username="mallory"))
        self.assertEqual(code, 201, body)
        return body

    def test_create_fills_requestor(self) -> None:
        """The server records the authenticated user as the requestor."""
        body = self.create()
        self.assertEqual(body["spec"]["username"], "admin")
        self.assertEqual(body["spec"]["uid"], "1")
        self.assertEqual(body["spec"]["groups"], ["system:masters", "system:authenticated"])
        self.assertEqual(body["status"], {})
        self.assertNotIn("generation", body["metadata"])

    def test_approve_via_subresource(self) -> None:
        """PUT to approval (what kubectl certificate approve sends) adds the condition;
        the table then says Approved."""
        csr = self.create()
        csr["status"]["conditions"] = [{
            "type": "Approved", "status": "True", "reason": "KubectlApprove",
            "message": "This CSR was approved by kubectl certificate approve.",
            "lastUpdateTime": "2023-11-14T22:13:20Z"}]
        code, body, _ = self.request("PUT", CSRS + "/jane/approval", csr)
        self.assertEqual(code, 200, body)
        self.assertEqual(body["status"]["conditions"][0]["type"], "Approved")
        self.assertEqual(body["status"]["conditions"][0]["lastTransitionTime"],
                         "2023-11-14T22:13:20Z")
        code, table, _ = self.request(
            "GET", CSRS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        self.assertEqual(code, 200)
        self.assertEqual(table["rows"][0]["cells"][2:], [
            "example.com/signer", "admin", "<none>", "Approved"])

    def test_deny_via_subresource_protobuf(self) -> None:
        """A protobuf body (kubectl's typed client) to approval decodes; Denied is set and
        the condition's missing times are stamped from the clock."""
        csr = self.create()
        csr["status"]["conditions"] = [{"type": "Denied", "status": "True",
                                        "reason": "KubectlDeny"}]
        code, body, _ = self.request("PUT", CSRS + "/jane/approval", protobuf.encode(csr),
                                     content_type="application/vnd.kubernetes.protobuf")
        self.assertEqual(code, 200, body)
        cond = body["status"]["conditions"][0]
        self.assertEqual((cond["type"], cond["lastUpdateTime"], cond["lastTransitionTime"]),
                         ("Denied", "2023-11-14T22:13:20Z", "2023-11-14T22:13:20Z"))

    def test_plain_update_cannot_approve(self) -> None:
        """Conditions sent to the main resource are dropped (status is kept as stored)."""
        csr = self.create()
        csr["status"]["conditions"] = [{"type": "Approved", "status": "True"}]
        code, body, _ = self.request("PUT", CSRS + "/jane", csr)
        self.assertEqual(code, 200, body)
        self.assertEqual(body["status"], {})

    def test_invalid_create(self) -> None:
        """A bad request is a 422 naming the kind and the field."""
        code, body, _ = self.request("POST", CSRS, new_csr(signerName="", usages=[]))
        self.assertEqual(code, 422)
        self.assertEqual(body["message"],
                         'CertificateSigningRequest.certificates.k8s.io "jane" is invalid: '
                         "[spec.usages: Required value, spec.signerName: Required value]")

    def test_discovery_and_field_selector(self) -> None:
        """Discovery lists csr with its approval and status subresources; spec.signerName is
        a selectable field."""
        self.create()
        code, body, _ = self.request("GET", "/apis/certificates.k8s.io/v1")
        self.assertEqual(code, 200)
        names = {r["name"]: r for r in body["resources"]}
        self.assertEqual(sorted(names), [
            "certificatesigningrequests", "certificatesigningrequests/approval",
            "certificatesigningrequests/status"])
        self.assertEqual(names["certificatesigningrequests"]["shortNames"], ["csr"])
        self.assertFalse(names["certificatesigningrequests"]["namespaced"])
        code, body, _ = self.request("GET", CSRS + "?fieldSelector=spec.signerName%3Dother.io/x")
        self.assertEqual((code, body["items"]), (200, []))
        code, body, _ = self.request(
            "GET", CSRS + "?fieldSelector=spec.signerName%3Dexample.com/signer")
        self.assertEqual([i["metadata"]["name"] for i in body["items"]], ["jane"])

    def test_openapi_schema(self) -> None:
        """/openapi/v3 publishes the kind from its type table (for kubectl explain)."""
        _, root, _ = self.request("GET", "/openapi/v3")
        _, doc, _ = self.request(
            "GET", root["paths"]["apis/certificates.k8s.io/v1"]["serverRelativeURL"])
        schema = doc["components"]["schemas"][
            "io.k8s.api.certificates.v1.CertificateSigningRequest"]
        self.assertEqual(schema["x-kubernetes-group-version-kind"], [
            {"group": "certificates.k8s.io", "version": "v1",
             "kind": "CertificateSigningRequest"}])
        spec = doc["components"]["schemas"][
            "io.k8s.api.certificates.v1.CertificateSigningRequestSpec"]
        self.assertEqual(spec["properties"]["usages"]["x-kubernetes-list-type"], "atomic")
