# -*- test-case-name: tests.apis.test_reviews -*-
"""
The reviews of C{authentication.k8s.io/v1}: upstream C{pkg/registry/authentication/tokenreview}
(TokenReview: authenticate a bearer token with the server's own authenticators) and
C{pkg/registry/authentication/selfsubjectreview} (SelfSubjectReview: who the requester is).
Nothing is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from twisted.web.http_headers import Headers

from kubetwist.apimachinery.meta import format_rfc3339
from kubetwist.authentication.authenticator import AuthenticationError, with_audiences
from kubetwist.authentication.serviceaccount import unverified_audiences, unverified_issuer
from kubetwist.registry.rest import ResourceSpec
from kubetwist.registry.review import (
    ReviewContext,
    ReviewREST,
    go_shape,
    review_metadata,
)
from kubetwist.runtime import errors
from kubetwist.runtime.types import authentication_v1

__all__ = ["GROUP", "RESOURCES", "VERSION", "review_rests", "user_info"]

GROUP = "authentication.k8s.io"
VERSION = "v1"
_PKG = authentication_v1.PACKAGE

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "selfsubjectreviews", "SelfSubjectReview",
                 "selfsubjectreview", namespaced=False, verbs=["create"]),
    ResourceSpec(GROUP, VERSION, "tokenreviews", "TokenReview", "tokenreview",
                 namespaced=False, verbs=["create"]),
]

#: The message of an empty C{spec.token} (400 BadRequest), upstream's text.
TOKEN_REQUIRED = "token is required for TokenReview in authentication"


class _TokenRequest:
    """
    The request upstream's TokenReview builds: nothing but C{Authorization: Bearer <token>}
    (no TLS connection, so no client certificate; a path no anonymous rule admits).
    """

    transport = None
    channel = None
    method = b"POST"
    path = uri = b"/apis/authentication.k8s.io/v1/tokenreviews"

    def __init__(self, token: str) -> None:
        self.requestHeaders = Headers(
            {b"authorization": [b"Bearer " + token.encode("utf-8", "surrogateescape")]})
        self.responseHeaders = Headers()

    def getHeader(self, name: bytes) -> bytes | None:
        values = self.requestHeaders.getRawHeaders(name)
        return values[-1] if values else None


def user_info(user: Any) -> dict:
    """
    The C{authentication.k8s.io/v1 UserInfo} of a user:
    C{{"username"?: str, "uid"?: str, "groups"?: [str], "extra"?: {str: [str]}}} (empty fields
    omitted, as Go's C{omitempty}).
    """
    if hasattr(user, "to_user_info"):
        return user.to_user_info()
    return {}


def _intersect(have: Sequence[str], wanted: Sequence[str]) -> list[str]:
    """Upstream C{Audiences.Intersect}: the C{wanted} audiences C{have} holds, in order."""
    return [a for a in wanted if a in have]


def review_rests(authenticator: Any, api_audiences: Sequence[str] = (),
                 service_account_issuers: Sequence[str] = (),
                 now: Callable[[], float] = lambda: 0.0) -> list[ReviewREST]:
    """
    The two review storages, in L{RESOURCES} order.

    @param authenticator: the server's request authenticator (the authentication filter's), or
        C{None} (TokenReviews then come back without a status, as upstream).
    @param api_audiences: C{--api-audiences}: a TokenReview without C{spec.audiences} asks for
        these.
    @param service_account_issuers: the issuers whose JWTs are audience-aware (their C{aud}
        claim decides the audiences answered); any other token is audience-agnostic and good
        for the API audiences only (upstream C{WrapAudienceAgnosticToken}).
    @param now: seconds since the epoch, for a SelfSubjectReview's C{creationTimestamp}.

    TokenReview answers (HTTP 201) the request object with C{status}
    C{{"authenticated"?: true, "user": UserInfo, "audiences"?: [str], "error"?: str}};
    400 C{token is required for TokenReview in authentication} for an empty token.
    SelfSubjectReview answers C{{"metadata": {"creationTimestamp": now}, "status":
    {"userInfo": UserInfo}}}; 400 C{no user present on request} without a user.
    """
    implicit = list(api_audiences)
    issuers = set(service_account_issuers)

    def self_subject(ctx: ReviewContext, obj: dict) -> dict:
        if ctx.user is None:
            raise errors.new_bad_request("no user present on request")
        return {
            "kind": obj["kind"], "apiVersion": obj["apiVersion"],
            "metadata": {"creationTimestamp": format_rfc3339(now())},
            "status": {"userInfo": user_info(ctx.user)},
        }

    async def token_review(ctx: ReviewContext, obj: dict) -> dict:
        if ctx.namespace:
            raise errors.new_bad_request(
                f"namespace is not allowed on this type: {ctx.namespace}")
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        token = spec.get("token") or ""
        if not token:
            raise errors.new_bad_request(TOKEN_REQUIRED)
        answer = {
            "kind": obj["kind"], "apiVersion": obj["apiVersion"],
            "metadata": review_metadata(obj.get("metadata")),
            "spec": go_shape(spec, f"{_PKG}.TokenReviewSpec"),
        }
        if authenticator is None:
            return answer
        auds = list(spec.get("audiences") or []) or implicit
        status: dict = {}
        user = None
        granted: list[str] = []
        agnostic = unverified_issuer(token) not in issuers
        if agnostic and auds and not _intersect(implicit, auds):
            # upstream's audience-agnostic wrapper has no opinion; no other authenticator
            # knows the token either
            status["error"] = "invalid bearer token"
        else:
            try:
                with with_audiences(auds):
                    pending = authenticator.authenticate(_TokenRequest(token))
                user = await pending
            except AuthenticationError as e:
                status["error"] = str(e)
            if user is not None:
                if agnostic:
                    granted = _intersect(implicit, auds)
                else:
                    token_auds = unverified_audiences(token) or implicit
                    granted = _intersect(token_auds, auds)
        if user is not None:
            status = {"authenticated": True, "user": user_info(user)}
            if granted:
                status["audiences"] = granted
        else:
            status = {"user": {}, **status}
        answer["status"] = status
        return answer

    return [ReviewREST(RESOURCES[0], self_subject), ReviewREST(RESOURCES[1], token_review)]
