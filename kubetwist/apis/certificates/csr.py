# -*- test-case-name: tests.apis.test_certificates -*-
"""
certificates.k8s.io/v1 CertificateSigningRequests: upstream
C{pkg/apis/certificates/validation/validation.go}, C{ValidateSignerName} of
C{pkg/apis/core/validation/certificates.go}, C{pkg/apis/certificates/helpers.go}
(C{ParseCSR}), C{pkg/registry/certificates/certificates/strategy.go} (main, C{status} and
C{approval} strategies) and C{printCertificateSigningRequest} of
C{pkg/printers/internalversion/printers.go}.

C{certificates/v1} has no defaulting functions upstream.  C{spec.request} and
C{status.certificate} are Go C{[]byte}: base64 text in JSON, checked when the body is decoded.

The requesting user is not visible to a L{Strategy}; L{CSRRequestor
<kubetwist.admission.plugins.csrrequestor.CSRRequestor>}, an admission step,
carries it from the request to L{prepare_csr_for_create} (see there).
"""

from __future__ import annotations

import base64
import binascii
import copy
import re
from typing import Any

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from kubetwist.admission.plugins.csrrequestor import REQUESTOR_KEY
from kubetwist.apimachinery.meta import format_rfc3339, human_duration
from kubetwist.apimachinery.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.printers import age_column, column, name_column, now, obj_age, obj_name
from kubetwist.registry.rest import Strategy, TableConvertor
from kubetwist.runtime import errors
from kubetwist.runtime.field import (
    FieldError,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)

__all__ = [
    "ALL_VALID_USAGES",
    "APPROVAL_STRATEGY",
    "CSR_STRATEGY",
    "CSR_TABLE",
    "LEGACY_UNKNOWN_SIGNER_NAME",
    "STATUS_STRATEGY",
    "csr_condition_summary",
    "default_csr",
    "parse_csr",
    "prepare_csr_for_create",
    "validate_certificate",
    "validate_csr",
    "validate_csr_approval_update",
    "validate_csr_status_update",
    "validate_csr_update",
    "validate_signer_name",
]

GROUP = "certificates.k8s.io"

#: Upstream C{certificates.LegacyUnknownSignerName}.
LEGACY_UNKNOWN_SIGNER_NAME = "kubernetes.io/legacy-unknown"

#: Upstream C{allValidUsages}, sorted as C{sets.String.List()} prints them.
ALL_VALID_USAGES = sorted([
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement",
    "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
    "server auth", "client auth", "code signing", "email protection", "s/mime",
    "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
    "microsoft sgc", "netscape sgc",
])

#: Condition types that may only be C{True} (upstream C{trueConditionTypes}).
_TRUE_ONLY_TYPES = ("Approved", "Denied", "Failed")
_ALL_STATUS_VALUES = ["False", "True", "Unknown"]


_DNS1123_SUBDOMAIN_MAX = 253
_DNS1123_LABEL_MAX = 63


class _BytesError(FieldError):
    """A field error whose bad value is a Go C{[]byte}, printed C{%#v}: C{[]byte{0x2d, ...}}."""

    def body(self) -> str:
        data = self.bad_value
        value = "[]byte(nil)" if data is None else \
            "[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}"
        text = f"Invalid value: {value}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text


# --- bytes fields -------------------------------------------------------------------------------

_B64_ALPHABET = re.compile(rb"[A-Za-z0-9+/=\r\n]")


def _go_base64_error(text: str) -> str | None:
    """
    Go's C{base64.StdEncoding.DecodeString} error for C{text} (C{illegal base64 data at input
    byte N}), or C{None} when it decodes.  Newlines are skipped as Go does.
    """
    raw = text.encode("utf-8", "surrogatepass")
    for i, ch in enumerate(raw):
        if not _B64_ALPHABET.fullmatch(bytes([ch])):
            return f"illegal base64 data at input byte {i}"
    stripped = raw.replace(b"\r", b"").replace(b"\n", b"")
    try:
        base64.b64decode(stripped, validate=True)
    except (binascii.Error, ValueError):
        body = stripped.rstrip(b"=")
        pad = stripped.find(b"=")
        if pad >= 0 and pad < len(body):
            return f"illegal base64 data at input byte {pad}"
        return f"illegal base64 data at input byte {len(body) - len(body) % 4}"
    return None


def _decode_bytes(value: Any) -> bytes | None:
    """The bytes of a JSON C{[]byte} field (base64 text), C{None} when absent."""
    if value is None:
        return None
    return base64.b64decode("".join(str(value).split()))


def default_csr(csr: dict) -> None:
    """
    The decode step of a CertificateSigningRequest body (there are no defaulters upstream):
    C{spec.request} and C{status.certificate} must be base64.

    @raise StatusError: 400 BadRequest C{CertificateSigningRequest in version "v1" cannot be
        handled as a CertificateSigningRequest: illegal base64 data at input byte N}, as the
        Go JSON decoder refuses the body.
    """
    for section, name in (("spec", "request"), ("status", "certificate")):
        part = csr.get(section)
        value = part.get(name) if isinstance(part, dict) else None
        if value is None:
            continue
        problem = _go_base64_error(value) if isinstance(value, str) else \
            "json: cannot unmarshal into Go value of type []uint8"
        if problem:
            raise errors.new_bad_request(
                'CertificateSigningRequest in version "v1" cannot be handled as a '
                f"CertificateSigningRequest: {problem}")


# --- PEM / X.509 ---------------------------------------------------------------------------------

_PEM_RE = re.compile(
    rb"-----BEGIN ([^\r\n-]*)-----\r?\n(.*?)-----END \1-----", re.DOTALL)


def _pem_blocks(data: bytes) -> list[tuple[str, bool, bytes]]:
    """
    The PEM blocks of C{data} in order, as Go's C{pem.Decode} loop finds them:
    C{(type, has_headers, der)}; a block whose body is not base64 ends the scan.
    """
    out = []
    for m in _PEM_RE.finditer(data):
        body = m.group(2)
        headers = False
        lines = body.split(b"\n")
        if lines and b":" in lines[0]:
            headers = True
            while lines and lines[0].strip():
                lines.pop(0)
        try:
            der = base64.b64decode(b"".join(line.strip() for line in lines), validate=True)
        except (binascii.Error, ValueError):
            break
        out.append((m.group(1).decode("latin-1"), headers, der))
    return out


def parse_csr(pem_bytes: bytes) -> x509.CertificateSigningRequest:
    """
    Upstream C{certificates.ParseCSR} and C{CheckSignature}: the first PEM block must be a
    C{CERTIFICATE REQUEST} holding a PKCS#10 request whose self-signature verifies.

    @raise ValueError: with upstream's text (C{PEM block type must be CERTIFICATE REQUEST},
        C{x509: malformed certificate request}, C{crypto/rsa: verification error}, ...).
    """
    blocks = _pem_blocks(pem_bytes)
    if not blocks or blocks[0][0] != "CERTIFICATE REQUEST":
        raise ValueError("PEM block type must be CERTIFICATE REQUEST")
    try:
        req = x509.load_der_x509_csr(blocks[0][2])
        key = req.public_key()
        valid = req.is_signature_valid
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise ValueError("x509: malformed certificate request") from None
    if not valid:
        if isinstance(key, rsa.RSAPublicKey):
            raise ValueError("crypto/rsa: verification error")
        if isinstance(key, ec.EllipticCurvePublicKey):
            raise ValueError("x509: ECDSA verification failure")
        if isinstance(key, ed25519.Ed25519PublicKey):
            raise ValueError("x509: Ed25519 verification failure")
        raise ValueError("x509: signature verification failure")
    return req


def validate_certificate(pem_data: bytes | None) -> str | None:
    """
    Upstream C{validateCertificate}: empty is fine; otherwise every PEM block must be a
    header-less C{CERTIFICATE} that parses, and there must be at least one.

    @return: the error text, or C{None}.
    """
    if not pem_data:
        return None
    blocks = _pem_blocks(pem_data)
    for block_type, headers, der in blocks:
        if block_type != "CERTIFICATE":
            return f'only CERTIFICATE PEM blocks are allowed, found "{block_type}"'
        if headers:
            return "no PEM block headers are permitted"
        try:
            x509.load_der_x509_certificate(der)
        except (ValueError, TypeError, UnsupportedAlgorithm):
            return "x509: malformed certificate"
    if not blocks:
        return "must contain at least one CERTIFICATE PEM block"
    return None


def validate_signer_name(path: Path, signer_name: str) -> list[FieldError]:
    """
    Upstream C{ValidateSignerName}: C{<domain>/<path>}, the domain made of DNS-1123 labels with
    at least one dot (at most 253 characters), the path of DNS-1123 subdomains separated by
    dots, the whole at most 571 characters.
    """
    if not signer_name:
        return [required(path)]
    segments = signer_name.split("/")
    if len(segments) != 2:
        return [invalid(path, signer_name,
                        "must be a fully qualified domain and path of the form "
                        "'example.com/signer-name'")]
    errs: list[FieldError] = []
    domain, rest = segments
    if len(domain) > _DNS1123_SUBDOMAIN_MAX:
        errs.append(too_long(path, "", _DNS1123_SUBDOMAIN_MAX))
    labels = domain.split(".")
    for label in labels:
        problems = is_dns1123_label(label)
        if problems:
            errs.extend(invalid(path, domain, f'validating label "{label}": {p}')
                        for p in problems)
            break
    if len(labels) < 2:
        errs.append(invalid(path, domain,
                            "should be a domain with at least two segments separated by dots"))
    for label in rest.split("."):
        problems = is_dns1123_subdomain(label)
        if problems:
            errs.extend(invalid(path, rest, f'validating label "{label}": {p}')
                        for p in problems)
            break
    max_total = _DNS1123_SUBDOMAIN_MAX + (_DNS1123_SUBDOMAIN_MAX + _DNS1123_LABEL_MAX + 1) + 1
    if len(signer_name) > max_total:
        errs.append(too_long(path, "", max_total))
    return errs


# --- validation ---------------------------------------------------------------------------------


def _spec(csr: dict) -> dict:
    return csr.get("spec") or {}


def _status(csr: dict) -> dict:
    return csr.get("status") or {}


def _conditions(csr: dict) -> list[dict]:
    return [c or {} for c in (_status(csr).get("conditions") or [])]


def _certificate(csr: dict) -> bytes:
    try:
        return _decode_bytes(_status(csr).get("certificate")) or b""
    except (binascii.Error, ValueError):
        return b""


def _find(csr: dict, condition_type: str) -> list[dict]:
    return [c for c in _conditions(csr) if c.get("type") == condition_type]


def _options(new: dict, old: dict | None) -> dict[str, bool]:
    """Upstream C{getValidationOptions}: what an update may keep of bad stored data."""
    if old is None:
        return {k: False for k in ("both", "legacy", "dup_types", "empty_type", "arbitrary_cert",
                                   "dup_usages", "unknown_usages")}
    old_types = [c.get("type") or "" for c in _conditions(old)]
    usages = _spec(old).get("usages") or []
    return {
        "both": "Approved" in old_types and "Denied" in old_types,
        "legacy": _spec(old).get("signerName") == LEGACY_UNKNOWN_SIGNER_NAME,
        "dup_types": len(set(old_types)) != len(old_types),
        "empty_type": "" in old_types,
        "arbitrary_cert": _certificate(new) == _certificate(old)
        or validate_certificate(_certificate(old)) is not None,
        "dup_usages": len(set(usages)) != len(usages),
        "unknown_usages": any(u not in ALL_VALID_USAGES for u in usages),
    }


def _validate_conditions(path: Path, csr: dict, opts: dict[str, bool]) -> list[FieldError]:
    """Upstream C{validateConditions}."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    has_approved = has_denied = False
    for i, c in enumerate(_conditions(csr)):
        ctype = c.get("type") or ""
        status = c.get("status") or ""
        if not opts["empty_type"] and not ctype:
            errs.append(required(path.index(i).child("type")))
        allowed = ["True"] if ctype in _TRUE_ONLY_TYPES else _ALL_STATUS_VALUES
        if not status:
            errs.append(required(path.index(i).child("status")))
        elif status not in allowed:
            errs.append(not_supported(path.index(i).child("status"), status, allowed))
        if not opts["both"]:
            if ctype == "Approved":
                has_approved = True
                if has_denied:
                    errs.append(invalid(path.index(i).child("type"), ctype,
                                        "Approved and Denied conditions are mutually exclusive"))
            elif ctype == "Denied":
                has_denied = True
                if has_approved:
                    errs.append(invalid(path.index(i).child("type"), ctype,
                                        "Approved and Denied conditions are mutually exclusive"))
        if not opts["dup_types"]:
            if ctype in seen:
                errs.append(duplicate(path.index(i).child("type"), ctype))
            seen.add(ctype)
    return errs


def _validate(csr: dict, opts: dict[str, bool]) -> list[FieldError]:
    """Upstream C{validateCertificateSigningRequest}."""
    errs = validate_object_meta(csr.get("metadata") or {}, False, lambda name, prefix: [],
                                Path("metadata"))
    spec_path = Path("spec")
    spec = _spec(csr)
    try:
        request = _decode_bytes(spec.get("request"))
    except (binascii.Error, ValueError):
        request = b""
    try:
        parse_csr(request or b"")
    except ValueError as e:
        errs.append(_BytesError("Invalid", spec_path.child("request"), request, str(e)))
    usages = spec.get("usages") or []
    if not usages:
        errs.append(required(spec_path.child("usages")))
    if not opts["unknown_usages"]:
        for i, usage in enumerate(usages):
            if usage not in ALL_VALID_USAGES:
                errs.append(not_supported(spec_path.child("usages").index(i), usage,
                                          ALL_VALID_USAGES))
    if not opts["dup_usages"]:
        seen: set[str] = set()
        for i, usage in enumerate(usages):
            if usage in seen:
                errs.append(duplicate(spec_path.child("usages").index(i), usage))
            seen.add(usage)
    signer = spec.get("signerName") or ""
    if not opts["legacy"] and signer == LEGACY_UNKNOWN_SIGNER_NAME:
        errs.append(invalid(spec_path.child("signerName"), signer,
                            "the legacy signerName is not allowed via this API version"))
    else:
        errs.extend(validate_signer_name(spec_path.child("signerName"), signer))
    seconds = spec.get("expirationSeconds")
    if seconds is not None and seconds < 600:
        errs.append(invalid(spec_path.child("expirationSeconds"), seconds,
                            "may not specify a duration less than 600 seconds (10 minutes)"))
    errs.extend(_validate_conditions(Path("status", "conditions"), csr, opts))
    if not opts["arbitrary_cert"]:
        problem = validate_certificate(_certificate(csr))
        if problem:
            errs.append(invalid(Path("status", "certificate"), "<certificate data>", problem))
    return errs


def validate_csr(csr: dict) -> list[FieldError]:
    """
    Upstream C{ValidateCertificateSigningRequestCreate}: ObjectMeta (any name), a parseable
    and correctly self-signed PEM C{spec.request}, known and unique C{spec.usages} (at least
    one), a well-formed C{spec.signerName} other than C{kubernetes.io/legacy-unknown},
    C{spec.expirationSeconds} >= 600, condition rules, a PEM C{status.certificate}.
    """
    return _validate(csr, _options(csr, None))


def _validate_update(new: dict, old: dict, opts: dict[str, bool], approval: bool,
                     status: bool) -> list[FieldError]:
    """Upstream C{validateCertificateSigningRequestUpdate}."""
    errs = _validate(new, opts)
    meta_errs = validate_object_meta_update(new.get("metadata") or {},
                                            old.get("metadata") or {}, Path("metadata"))
    conditions = Path("status", "conditions")
    for ctype in ("Approved", "Denied", "Failed"):
        if len(_find(new, ctype)) < len(_find(old, ctype)):
            errs.append(forbidden(conditions,
                                  f'updates may not remove a condition of type "{ctype}"'))
    if not approval:
        for ctype in ("Approved", "Denied"):
            old_c, new_c = _find(old, ctype), _find(new, ctype)
            if len(new_c) > len(old_c):
                errs.append(forbidden(conditions,
                                      f'updates may not add a condition of type "{ctype}"'))
            elif len(new_c) == len(old_c) and new_c != old_c:
                errs.append(forbidden(
                    conditions, f'updates may not modify a condition of type "{ctype}"\n'
                                f"{_diff(old_c, new_c)}"))
    if _certificate(new) != _certificate(old):
        if not status:
            errs.append(forbidden(Path("status", "certificate"),
                                  "updates may not set certificate content"))
        elif _certificate(old):
            errs.append(forbidden(Path("status", "certificate"),
                                  "updates may not modify existing certificate content"))
    return errs + meta_errs


def _diff(old: list[dict], new: list[dict]) -> str:
    """A short line-per-field account of a condition change (upstream prints a C{cmp.Diff})."""
    lines = []
    for o, n in zip(old, new, strict=False):
        for key in sorted(set(o) | set(n)):
            if o.get(key) != n.get(key):
                lines.append(f"-\t{key}: {o.get(key)!r}\n+\t{key}: {n.get(key)!r}")
    return "\n".join(lines)


def validate_csr_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateCertificateSigningRequestUpdate}: L{validate_csr} with the stored
    object's tolerances; Approved/Denied/Failed conditions may not be removed, Approved/Denied
    not added or changed, C{status.certificate} not set; then the ObjectMeta update rules.
    """
    return _validate_update(new, old, _options(new, old), approval=False, status=False)


def validate_csr_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateCertificateSigningRequestStatusUpdate}: C{status.certificate} may be
    set once (C{updates may not modify existing certificate content})."""
    return _validate_update(new, old, _options(new, old), approval=False, status=True)


def validate_csr_approval_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateCertificateSigningRequestApprovalUpdate}: Approved/Denied conditions
    may be added (never removed)."""
    return _validate_update(new, old, _options(new, old), approval=True, status=False)


# --- strategies -----------------------------------------------------------------------------------


def prepare_csr_for_create(csr: dict) -> None:
    """
    Upstream C{csrStrategy.PrepareForCreate}: C{spec.username}, C{uid}, C{groups} and
    C{extra} are replaced by the requesting user's (left by the CSRRequestor admission
    step; cleared when no user is known); C{status} is emptied (no pre-approved requests).
    """
    user = csr.pop(REQUESTOR_KEY, None)
    spec = csr.get("spec")
    if not isinstance(spec, dict):
        spec = csr["spec"] = {}
    for key in ("username", "uid", "groups", "extra"):
        spec.pop(key, None)
    if user is not None:
        if getattr(user, "name", ""):
            spec["username"] = user.name
        if getattr(user, "uid", ""):
            spec["uid"] = user.uid
        if getattr(user, "groups", None):
            spec["groups"] = list(user.groups)
        if getattr(user, "extra", None):
            spec["extra"] = {k: list(v) for k, v in user.extra.items()}
    csr["status"] = {}


def prepare_csr_for_update(new: dict, old: dict) -> None:
    """Upstream C{csrStrategy.PrepareForUpdate}: spec and status stay as stored."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})
    new["status"] = copy.deepcopy(old.get("status") or {})


def _populate_condition_timestamps(new: dict, old: dict) -> None:
    """Upstream C{populateConditionTimestamps}: missing C{lastUpdateTime} is now; missing
    C{lastTransitionTime} is the stored one of the same type and status, else now."""
    stamp = format_rfc3339(now())
    old_conditions = _conditions(old)
    for c in _status(new).get("conditions") or []:
        if not isinstance(c, dict):
            continue
        if not c.get("lastUpdateTime"):
            c["lastUpdateTime"] = stamp
        if not c.get("lastTransitionTime"):
            c["lastTransitionTime"] = stamp
            for o in old_conditions:
                if o.get("type") == c.get("type") and o.get("status") == c.get("status") \
                        and o.get("lastTransitionTime"):
                    c["lastTransitionTime"] = o["lastTransitionTime"]
                    break


def prepare_csr_status_for_update(new: dict, old: dict) -> None:
    """
    Upstream C{csrStatusStrategy.PrepareForUpdate}: spec as stored; Approved/Denied conditions
    kept as stored when their count is unchanged (a changed count fails validation); condition
    timestamps filled.
    """
    new["spec"] = copy.deepcopy(old.get("spec") or {})
    status = new.get("status")
    if not isinstance(status, dict):
        status = new["status"] = {}
    conditions = status.get("conditions") or []
    for ctype in ("Approved", "Denied"):
        old_c = _find(old, ctype)
        new_idx = [i for i, c in enumerate(conditions) if (c or {}).get("type") == ctype]
        if len(old_c) == len(new_idx):
            for i, o in zip(new_idx, old_c, strict=False):
                conditions[i] = copy.deepcopy(o)
    _populate_condition_timestamps(new, old)


def prepare_csr_approval_for_update(new: dict, old: dict) -> None:
    """Upstream C{csrApprovalStrategy.PrepareForUpdate}: only C{status.conditions} change
    (timestamps filled); spec and C{status.certificate} as stored."""
    _populate_condition_timestamps(new, old)
    conditions = _status(new).get("conditions")
    new["spec"] = copy.deepcopy(old.get("spec") or {})
    status = copy.deepcopy(old.get("status") or {})
    status.pop("conditions", None)
    if conditions:
        status["conditions"] = conditions
    new["status"] = status


# --- printing -------------------------------------------------------------------------------------


def csr_condition_summary(csr: dict) -> str:
    """Upstream C{extractCSRStatus}: C{Denied}/C{Approved}/C{Pending}, then C{,Failed} and
    C{,Issued}."""
    types = {c.get("type") for c in _conditions(csr)}
    text = "Denied" if "Denied" in types else "Approved" if "Approved" in types else "Pending"
    if "Failed" in types:
        text += ",Failed"
    if _status(csr).get("certificate"):
        text += ",Issued"
    return text


def _csr_row(csr: dict) -> list:
    spec = _spec(csr)
    seconds = spec.get("expirationSeconds")
    return [
        obj_name(csr), obj_age(csr), spec.get("signerName") or "<none>",
        spec.get("username") or "",
        "<none>" if seconds is None else human_duration(float(seconds)),
        csr_condition_summary(csr),
    ]


_DOCS = {
    "signerName": (
        "Requested signer for the request. It is a qualified name in the form: "
        "`scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet "
        "client certificate, it is assigned\n    \"kubernetes.io/kube-apiserver-client-kubelet\"."
        "\n 2. If it's a kubelet serving certificate, it is assigned\n    "
        "\"kubernetes.io/kubelet-serving\".\n 3. Otherwise, it is assigned "
        "\"kubernetes.io/legacy-unknown\".\nDistribution of trust for signers happens out of "
        "band. You can select on this field using `spec.signerName`."
    ),
    "request": "Base64-encoded PKCS#10 CSR data",
    "expirationSeconds": (
        "expirationSeconds is the requested duration of validity of the issued certificate. "
        "The certificate signer may issue a certificate with a different validity duration so "
        "a client must check the delta between the notBefore and and notAfter fields in the "
        "issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree "
        "implementations of the well-known Kubernetes signers will honor this field as long as "
        "the requested duration is not greater than the maximum duration they will honor per "
        "the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\n"
        "Certificate signers may not honor this field for various reasons:\n\n  1. Old signer "
        "that is unaware of the field (such as the in-tree\n     implementations prior to "
        "v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n"
        "  3. Signer whose configured minimum is longer than the requested duration\n\nThe "
        "minimum valid value for expirationSeconds is 600, i.e. 10 minutes."
    ),
    "conditions": "Conditions applied to the request, such as approval or denial.",
}

#: Upstream C{certificateSigningRequestColumnDefinitions} / C{printCertificateSigningRequest}
#: (the column descriptions are upstream's, the v1beta1 swagger docs).
CSR_TABLE = TableConvertor(
    columns=[
        name_column(),
        age_column(),
        column("SignerName", "string", _DOCS["signerName"]),
        column("Requestor", "string", _DOCS["request"]),
        column("RequestedDuration", "string", _DOCS["expirationSeconds"]),
        column("Condition", "string", _DOCS["conditions"]),
    ],
    row=_csr_row,
)


def _csr_fields(csr: dict) -> dict[str, str]:
    """Upstream C{SelectableFields}: C{spec.signerName} besides the metadata fields."""
    return {"spec.signerName": _spec(csr).get("signerName") or ""}


CSR_STRATEGY = Strategy(
    kind="CertificateSigningRequest",
    group=GROUP,
    namespaced=False,
    default=default_csr,
    prepare_for_create=prepare_csr_for_create,
    prepare_for_update=prepare_csr_for_update,
    validate=validate_csr,
    validate_update=validate_csr_update,
    field_attrs=_csr_fields,
    table=CSR_TABLE,
)

STATUS_STRATEGY = Strategy(
    kind="CertificateSigningRequest",
    group=GROUP,
    namespaced=False,
    default=default_csr,
    prepare_for_update=prepare_csr_status_for_update,
    validate=validate_csr,
    validate_update=validate_csr_status_update,
    field_attrs=_csr_fields,
    table=CSR_TABLE,
)

APPROVAL_STRATEGY = Strategy(
    kind="CertificateSigningRequest",
    group=GROUP,
    namespaced=False,
    default=default_csr,
    prepare_for_update=prepare_csr_approval_for_update,
    validate=validate_csr,
    validate_update=validate_csr_approval_update,
    field_attrs=_csr_fields,
    table=CSR_TABLE,
)
