# -*- test-case-name: tests.apis.test_reviews -*-
"""
The access reviews of C{authorization.k8s.io/v1}: upstream
C{pkg/registry/authorization/{subjectaccessreview,selfsubjectaccessreview,
localsubjectaccessreview,selfsubjectrulesreview}}, C{pkg/registry/authorization/util} and the
validation of C{pkg/apis/authorization/validation}.

Each review asks the server's authorizer (an L{IAuthorizer
<kubetwist.authorization.authorizer.IAuthorizer>}: C{authorize(attributes) -> Deferred of
(decision, reason)}) and answers with the request object and its C{status}; the rules review
asks its L{IRuleResolver <kubetwist.authorization.authorizer.IRuleResolver>}.  Nothing is
stored.
"""

from __future__ import annotations

from typing import Any

from kubetwist import authorization
from kubetwist.authentication.user import UserInfo
from kubetwist.authorization.authorizer import Attributes, IRuleResolver
from kubetwist.registry.rest import ResourceSpec
from kubetwist.registry.review import (
    ReviewContext,
    ReviewREST,
    go_shape,
    review_metadata,
)
from kubetwist.runtime import errors, field, gofmt
from kubetwist.runtime.field import FieldError
from kubetwist.runtime.types import authorization_v1

__all__ = [
    "GROUP",
    "RESOURCES",
    "VERSION",
    "attributes_from_spec",
    "review_rests",
    "validate_local_subject_access_review",
    "validate_self_subject_access_review",
    "validate_subject_access_review",
]

GROUP = "authorization.k8s.io"
VERSION = "v1"
_PKG = authorization_v1.PACKAGE
_CREATE = ["create"]

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "localsubjectaccessreviews", "LocalSubjectAccessReview",
                 "localsubjectaccessreview", namespaced=True, verbs=_CREATE),
    ResourceSpec(GROUP, VERSION, "selfsubjectaccessreviews", "SelfSubjectAccessReview",
                 "selfsubjectaccessreview", namespaced=False, verbs=_CREATE),
    ResourceSpec(GROUP, VERSION, "selfsubjectrulesreviews", "SelfSubjectRulesReview",
                 "selfsubjectrulesreview", namespaced=False, verbs=_CREATE),
    ResourceSpec(GROUP, VERSION, "subjectaccessreviews", "SubjectAccessReview",
                 "subjectaccessreview", namespaced=False, verbs=_CREATE),
]


# --- Go's %#v of the bad values upstream's validation reports ------------------------------------
def _q(text: Any) -> str:
    return gofmt.quote(text if isinstance(text, str) else "")


def _go_map(value: Any) -> str:
    return gofmt.string_map(value or None)


def _go_object_meta(meta: dict) -> str:
    """C{%#v} of a C{metav1.ObjectMeta} holding the usual request fields."""
    finalizers = meta.get("finalizers")
    return (
        f"v1.ObjectMeta{{Name:{_q(meta.get('name'))}, "
        f"GenerateName:{_q(meta.get('generateName'))}, "
        f"Namespace:{_q(meta.get('namespace'))}, SelfLink:{_q(meta.get('selfLink'))}, "
        f"UID:{_q(meta.get('uid'))}, ResourceVersion:{_q(meta.get('resourceVersion'))}, "
        f"Generation:{int(meta.get('generation') or 0)}, "
        "CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC), "
        "DeletionTimestamp:<nil>, DeletionGracePeriodSeconds:(*int64)(nil), "
        f"Labels:{_go_map(meta.get('labels'))}, Annotations:{_go_map(meta.get('annotations'))}, "
        "OwnerReferences:[]v1.OwnerReference(nil), "
        f"Finalizers:{field.go_string_slice(finalizers) if finalizers else '[]string(nil)'}, "
        "ManagedFields:[]v1.ManagedFieldsEntry(nil)}"
    )


def _go_non_resource(attrs: Any) -> str:
    attrs = attrs if isinstance(attrs, dict) else {}
    return (f"authorization.NonResourceAttributes{{Path:{_q(attrs.get('path'))}, "
            f"Verb:{_q(attrs.get('verb'))}}}")


def _invalid_go(path: str, go_value: str, detail: str) -> FieldError:
    """An C{Invalid} error whose bad value is already in Go's C{%#v} form."""
    return field.invalid(path, field.OMIT, f"{go_value}: {detail}")


def _meta_empty(meta: Any, ignore: tuple[str, ...] = ()) -> bool:
    if not isinstance(meta, dict):
        return True
    for k, v in meta.items():
        if k in ("managedFields",) + ignore:
            continue
        if v not in (None, "", 0, {}, []):
            return False
    return True


# --- validation ----------------------------------------------------------------------------------
def _validate_selector(selector: Any, path: str) -> list[FieldError]:
    if selector is None:
        return []
    selector = selector if isinstance(selector, dict) else {}
    errs: list[FieldError] = []
    raw = selector.get("rawSelector") or ""
    reqs = selector.get("requirements") or []
    if raw and reqs:
        errs.append(field.invalid(f"{path}.rawSelector", raw,
                                  "may not specified at the same time as requirements"))
    if not raw and not reqs:
        errs.append(field.required(
            f"{path}.requirements",
            f"when {path} is specified, requirements or rawSelector is required"))
    return errs


def _validate_spec(spec: dict, require_user: bool) -> list[FieldError]:
    """Upstream C{ValidateSubjectAccessReviewSpec} / C{ValidateSelfSubjectAccessReviewSpec}."""
    errs: list[FieldError] = []
    ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if ra is not None and nra is not None:
        errs.append(_invalid_go("spec.nonResourceAttributes", _go_non_resource(nra),
                                "cannot be specified in combination with resourceAttributes"))
    if ra is None and nra is None:
        errs.append(_invalid_go(
            "spec.resourceAttributes", '"null"',
            "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
    if require_user and not spec.get("user") and not spec.get("groups"):
        errs.append(field.invalid("spec.user", spec.get("user") or "",
                                  "at least one of user or group must be specified"))
    if isinstance(ra, dict):
        errs += _validate_selector(ra.get("fieldSelector"),
                                   "spec.resourceAttributes.fieldSelector")
        errs += _validate_selector(ra.get("labelSelector"),
                                   "spec.resourceAttributes.labelSelector")
    return errs


def validate_subject_access_review(obj: dict) -> list[FieldError]:
    """
    Upstream C{ValidateSubjectAccessReview}: the spec (exactly one of the attribute kinds, a
    user or groups) and an empty C{metadata} (C{metadata: Invalid value: v1.ObjectMeta{...}:
    must be empty}).
    """
    errs = _validate_spec(obj.get("spec") or {}, require_user=True)
    meta = obj.get("metadata") or {}
    if not _meta_empty(meta):
        errs.append(_invalid_go("metadata", _go_object_meta(meta), "must be empty"))
    return errs


def validate_self_subject_access_review(obj: dict) -> list[FieldError]:
    """Upstream C{ValidateSelfSubjectAccessReview} (no user needed)."""
    errs = _validate_spec(obj.get("spec") or {}, require_user=False)
    meta = obj.get("metadata") or {}
    if not _meta_empty(meta):
        errs.append(_invalid_go("metadata", _go_object_meta(meta), "must be empty"))
    return errs


def validate_local_subject_access_review(obj: dict) -> list[FieldError]:
    """
    Upstream C{ValidateLocalSubjectAccessReview}: as L{validate_subject_access_review}, the
    metadata may hold the namespace, C{spec.resourceAttributes.namespace} must equal it, and
    C{spec.nonResourceAttributes} is refused.
    """
    spec = obj.get("spec") or {}
    errs = _validate_spec(spec, require_user=True)
    meta = obj.get("metadata") or {}
    if not _meta_empty(meta, ("namespace",)):
        errs.append(_invalid_go("metadata", _go_object_meta(meta),
                                "must be empty except for namespace"))
    ra = spec.get("resourceAttributes")
    if isinstance(ra, dict) and (ra.get("namespace") or "") != (meta.get("namespace") or ""):
        errs.append(field.invalid("spec.resourceAttributes.namespace",
                                  ra.get("namespace") or "", "must match metadata.namespace"))
    if spec.get("nonResourceAttributes") is not None:
        errs.append(_invalid_go("spec.nonResourceAttributes",
                                _go_non_resource(spec["nonResourceAttributes"]),
                                "disallowed on this kind of request"))
    return errs


# --- evaluation ----------------------------------------------------------------------------------
def attributes_from_spec(spec: dict, user: Any = None) -> Attributes:
    """
    Upstream C{ResourceAttributesFrom} / C{NonResourceAttributesFrom}: the authorization
    L{Attributes} a review's C{resourceAttributes} or C{nonResourceAttributes} describe, for
    C{user}.
    """
    ra = spec.get("resourceAttributes")
    if isinstance(ra, dict):
        return Attributes(
            user=user, resource_request=True, verb=ra.get("verb") or "",
            api_group=ra.get("group") or "", api_version=ra.get("version") or "",
            namespace=ra.get("namespace") or "", resource=ra.get("resource") or "",
            subresource=ra.get("subresource") or "", name=ra.get("name") or "",
        )
    nra = spec.get("nonResourceAttributes") or {}
    return Attributes(user=user, resource_request=False, path=nra.get("path") or "",
                      verb=nra.get("verb") or "")


def _user_from_spec(spec: dict) -> UserInfo:
    """Upstream C{AuthorizationAttributesFrom}'s user: C{spec.user uid groups extra}."""
    extra = spec.get("extra") if isinstance(spec.get("extra"), dict) else {}
    return UserInfo(name=spec.get("user") or "", uid=spec.get("uid") or "",
                    groups=list(spec.get("groups") or []),
                    extra={k: list(v or []) for k, v in extra.items()})


async def _decide(authorizer: Any, attributes: Attributes) -> dict:
    """The C{SubjectAccessReviewStatus} of one decision of C{authorizer} (an IAuthorizer)."""
    result = await authorizer.authorize(attributes)
    decision, reason = result[0], result[1]
    status: dict = {"allowed": decision == authorization.ALLOW}
    if decision == authorization.DENY:
        status["denied"] = True
    if reason:
        status["reason"] = reason
    if len(result) > 2 and result[2]:
        status["evaluationError"] = str(result[2])
    return status


def _answer(obj: dict, spec_type: str, status: dict) -> dict:
    return {
        "kind": obj["kind"], "apiVersion": obj["apiVersion"],
        "metadata": review_metadata(obj.get("metadata")),
        "spec": go_shape(obj.get("spec") or {}, f"{_PKG}.{spec_type}"),
        "status": status,
    }


def _invalid(kind: str, errs: list[FieldError]) -> errors.StatusError:
    return errors.new_invalid(GROUP, kind, "", errs)


def review_rests(authorizer: Any) -> list[ReviewREST]:
    """
    The four review storages over C{authorizer}, in L{RESOURCES} order.

    Answers (HTTP 201): the request object with C{status}
    C{{"allowed": bool, "denied"?: true, "reason"?: str, "evaluationError"?: str}}, or for the
    rules review a new object with C{status} C{{"resourceRules": [...], "nonResourceRules":
    [...], "incomplete": bool, "evaluationError"?: str}}.

    Errors: 422 C{Invalid} (C{SubjectAccessReview.authorization.k8s.io "" is invalid: ...});
    400 C{no user present on request} (self reviews without a user), C{no namespace on request}
    (rules review without C{spec.namespace}).
    """

    async def local(ctx: ReviewContext, obj: dict) -> dict:
        errs = validate_local_subject_access_review(obj)
        if errs:
            raise _invalid("LocalSubjectAccessReview", errs)
        meta = obj.get("metadata") or {}
        if not ctx.namespace:
            raise errors.new_bad_request(
                f"namespace is required on this type: {ctx.namespace}")
        if ctx.namespace != (meta.get("namespace") or ""):
            raise errors.new_bad_request(
                f"spec.resourceAttributes.namespace must match namespace: {ctx.namespace}")
        spec = obj.get("spec") or {}
        status = await _decide(authorizer, attributes_from_spec(spec, _user_from_spec(spec)))
        return _answer(obj, "SubjectAccessReviewSpec", status)

    async def self_access(ctx: ReviewContext, obj: dict) -> dict:
        errs = validate_self_subject_access_review(obj)
        if errs:
            raise _invalid("SelfSubjectAccessReview", errs)
        if ctx.user is None:
            raise errors.new_bad_request("no user present on request")
        spec = obj.get("spec") or {}
        status = await _decide(authorizer, attributes_from_spec(spec, ctx.user))
        return _answer(obj, "SelfSubjectAccessReviewSpec", status)

    def self_rules(ctx: ReviewContext, obj: dict) -> dict:
        if ctx.user is None:
            raise errors.new_bad_request("no user present on request")
        namespace = (obj.get("spec") or {}).get("namespace") or ""
        if not namespace:
            raise errors.new_bad_request("no namespace on request")
        if not IRuleResolver.providedBy(authorizer):
            rules, non_rules, incomplete, error = [], [], True, ""
        else:
            rules, non_rules, incomplete, error = authorizer.rules_for(ctx.user, namespace)
        status: dict = {
            "resourceRules": [go_shape(r, f"{_PKG}.ResourceRule") for r in rules],
            "nonResourceRules": [go_shape(r, f"{_PKG}.NonResourceRule") for r in non_rules],
            "incomplete": bool(incomplete),
        }
        if error:
            status["evaluationError"] = error
        return {"kind": obj["kind"], "apiVersion": obj["apiVersion"],
                "metadata": {"creationTimestamp": None}, "spec": {}, "status": status}

    async def subject(ctx: ReviewContext, obj: dict) -> dict:
        errs = validate_subject_access_review(obj)
        if errs:
            raise _invalid("SubjectAccessReview", errs)
        spec = obj.get("spec") or {}
        status = await _decide(authorizer, attributes_from_spec(spec, _user_from_spec(spec)))
        return _answer(obj, "SubjectAccessReviewSpec", status)

    funcs = [local, self_access, self_rules, subject]
    return [ReviewREST(spec, fn) for spec, fn in zip(RESOURCES, funcs, strict=False)]
