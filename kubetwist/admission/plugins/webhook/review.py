# -*- test-case-name: tests.admission.test_webhook -*-
"""
AdmissionReview requests and responses, and the webhook errors: upstream
C{k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go}
(C{CreateAdmissionObjects}, C{VerifyAdmissionResponse}), C{webhook/errors/statuserror.go}
(C{ToStatusErr}, C{NewDryRunUnsupportedErr}) and C{k8s.io/apiserver/pkg/util/webhook/error.go}
(C{ErrCallingWebhook}, C{ErrWebhookRejection}).
"""

from __future__ import annotations

import base64
import uuid
from typing import Any, Optional

from kubetwist.runtime import errors

__all__ = ["CallingWebhookError", "WebhookRejection", "create_review", "verify_response",
           "to_status_error", "dry_run_unsupported"]


class CallingWebhookError(Exception):
    """
    Upstream C{ErrCallingWebhook}: the webhook could not be asked (transport, TLS, timeout, an
    invalid answer).  C{failurePolicy} decides: C{Ignore} skips it, C{Fail} refuses with 500
    C{Internal error occurred: failed calling webhook "x": <reason>}.

    @ivar status: the L{StatusError} the metrics' code comes from.
    """

    def __init__(self, webhook: str, reason: str, status: errors.StatusError) -> None:
        self.webhook = webhook
        self.reason = reason
        self.status = status
        super().__init__(str(self))

    def __str__(self) -> str:
        return f'failed calling webhook "{self.webhook}": {self.reason}'


class WebhookRejection(Exception):
    """Upstream C{ErrWebhookRejection}: the webhook answered and refused."""

    def __init__(self, status: errors.StatusError) -> None:
        self.status = status
        super().__init__(status.message)


def to_status_error(webhook: str, result: Optional[dict]) -> errors.StatusError:
    """
    Upstream C{ToStatusErr}: the webhook's C{response.status} as the request's error, with a
    code of at least 400, C{status: Failure} and the message prefixed
    C{admission webhook "x" denied the request: } (or C{... denied the request without
    explanation}).
    """
    result = dict(result or {})
    denied = f'admission webhook "{webhook}" denied the request'
    code = result.get("code")
    if not isinstance(code, int) or code < 400:
        code = 400
    message = result.get("message") or ""
    reason = result.get("reason") or ""
    if message:
        message = f"{denied}: {message}"
    elif reason:
        message = f"{denied}: {reason}"
    else:
        message = f"{denied} without explanation"
    status: dict[str, Any] = {"kind": "Status", "apiVersion": "v1",
                              "metadata": result.get("metadata") or {}, "status": "Failure",
                              "message": message}
    if reason:
        status["reason"] = reason
    if result.get("details"):
        status["details"] = result["details"]
    status["code"] = code
    return errors.StatusError(status)


def dry_run_unsupported(webhook: str) -> errors.StatusError:
    """Upstream C{NewDryRunUnsupportedErr}: 400 C{admission webhook "x" does not support dry
    run}."""
    return errors.new_bad_request(f'admission webhook "{webhook}" does not support dry run')


def _user_info(user: Any) -> dict:
    out: dict[str, Any] = {}
    if user is None:
        return out
    if getattr(user, "name", ""):
        out["username"] = user.name
    if getattr(user, "uid", ""):
        out["uid"] = user.uid
    if getattr(user, "groups", None):
        out["groups"] = list(user.groups)
    if getattr(user, "extra", None):
        out["extra"] = {k: list(v) for k, v in user.extra.items()}
    return out


def request_fields(attributes: Any, kind: tuple, resource: tuple, obj: Optional[dict],
                   old: Optional[dict], uid: str = "") -> dict:
    """
    The C{AdmissionRequest} of upstream C{CreateV1AdmissionReview} (also the C{request}
    variable of match conditions, without C{uid}, C{object} and C{oldObject}).

    @param kind: C{(group, version, kind)} the webhook is sent (the request's, or an
        equivalent's under C{matchPolicy: Equivalent}); C{requestKind} is the request's own.
    @param resource: C{(group, version, resource)} likewise.
    """
    req: dict[str, Any] = {}
    if uid:
        req["uid"] = uid
    req["kind"] = {"group": kind[0], "version": kind[1], "kind": kind[2]}
    req["resource"] = {"group": resource[0], "version": resource[1], "resource": resource[2]}
    if attributes.subresource:
        req["subResource"] = attributes.subresource
    rk, rr = attributes.kind, attributes.resource
    req["requestKind"] = {"group": rk.group, "version": rk.version, "kind": rk.kind}
    req["requestResource"] = {"group": rr.group, "version": rr.version,
                              "resource": rr.resource}
    if attributes.subresource:
        req["requestSubResource"] = attributes.subresource
    if attributes.name:
        req["name"] = attributes.name
    namespace = attributes.namespace
    if not namespace and rr.group == "" and rr.resource == "namespaces" and \
            attributes.operation != "CREATE":
        namespace = attributes.name
    if namespace:
        req["namespace"] = namespace
    req["operation"] = attributes.operation
    req["userInfo"] = _user_info(attributes.user)
    if uid:
        req["object"] = obj
        req["oldObject"] = old
    req["dryRun"] = bool(attributes.dry_run)
    req["options"] = attributes.options
    return req


def create_review(versions: list, attributes: Any, kind: tuple, resource: tuple,
                  obj: Optional[dict], old: Optional[dict]) -> tuple[str, str, dict]:
    """
    Upstream C{CreateAdmissionObjects}: the first of the webhook's C{admissionReviewVersions}
    kubetwist speaks (C{v1}, C{v1beta1}).

    @return: C{(uid, review version, AdmissionReview dict)}.
    @raise ValueError: C{webhook does not accept known AdmissionReview versions (v1,
        v1beta1)}.
    """
    for version in versions or ():
        if version in ("v1", "v1beta1"):
            uid = str(uuid.uuid4())
            return uid, version, {
                "kind": "AdmissionReview",
                "apiVersion": f"admission.k8s.io/{version}",
                "request": request_fields(attributes, kind, resource, obj, old, uid),
            }
    raise ValueError("webhook does not accept known AdmissionReview versions (v1, v1beta1)")


def verify_response(uid: str, version: str, mutating: bool, review: Any) -> dict:
    """
    Upstream C{VerifyAdmissionResponse}.

    @return: C{{"allowed", "patch" (bytes or None), "patchType", "status", "warnings",
        "auditAnnotations"}}.
    @raise ValueError: the answer is not a valid review (upstream's texts: C{webhook response
        was absent}, C{expected response.uid="a", got "b"}, C{expected webhook response of
        admission.k8s.io/v1, Kind=AdmissionReview, got ...}, patch/patchType errors).
    """
    if not isinstance(review, dict) or not isinstance(review.get("response"), dict):
        raise ValueError("webhook response was absent")
    r = review["response"]
    patch = None
    patch_type = ""
    raw = r.get("patch")
    if raw:
        try:
            patch = base64.b64decode(raw, validate=True) if isinstance(raw, str) else None
        except ValueError:
            patch = None
        if patch is None:
            raise ValueError("illegal base64 data in response.patch")
    if version == "v1":
        if r.get("uid") != uid:
            raise ValueError(f'expected response.uid="{uid}", got "{r.get("uid") or ""}"')
        got_version = review.get("apiVersion") or ""
        got_kind = review.get("kind") or ""
        if (got_version, got_kind) != ("admission.k8s.io/v1", "AdmissionReview"):
            raise ValueError("expected webhook response of admission.k8s.io/v1, "
                             f"Kind=AdmissionReview, got {got_version}, Kind={got_kind}")
        if mutating:
            pt = r.get("patchType")
            if patch and pt is None:
                raise ValueError("webhook returned response.patch but not response.patchType")
            if not patch and pt is not None:
                raise ValueError("webhook returned response.patchType but not response.patch")
            if pt is not None:
                patch_type = pt
                if not pt:
                    raise ValueError(f'webhook returned invalid response.patchType of "{pt}"')
        else:
            if patch:
                raise ValueError("validating webhook may not return response.patch")
            if r.get("patchType") is not None:
                raise ValueError("validating webhook may not return response.patchType")
    else:
        if not mutating:
            patch = None
        elif patch:
            patch_type = "JSONPatch"
    return {
        "allowed": bool(r.get("allowed")),
        "patch": patch if mutating else None,
        "patchType": patch_type,
        "status": r.get("status") if isinstance(r.get("status"), dict) else None,
        "warnings": [w for w in r.get("warnings") or [] if isinstance(w, str)],
        "auditAnnotations": {k: v for k, v in (r.get("auditAnnotations") or {}).items()
                             if isinstance(v, str)},
    }
