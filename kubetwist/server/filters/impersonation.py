# -*- test-case-name: tests.server.test_impersonation -*-
"""
Impersonation: upstream C{k8s.io/apiserver/pkg/endpoints/filters/impersonation.go
WithImpersonation} (v1.32).

The headers C{Impersonate-User} (first value), C{Impersonate-Group} (every value),
C{Impersonate-Uid} (first value) and C{Impersonate-Extra-<key>} (every value; the key
lower-cased and percent-decoded) each become one impersonation request, checked in that order
with the authorizer as the authenticated user, verb C{impersonate}::

    user system:serviceaccount:<ns>:<name>     serviceaccounts, group "", namespace <ns>
    any other user                           users, group ""
    a group                                  groups, group ""
    an extra value                           userextras/<key>, group authentication.k8s.io
    the uid                                  uids, group authentication.k8s.io

The first one not allowed is 403 C{Forbidden} with upstream's message (C{users "bob" is
forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster
scope}).  Groups, extras or a uid without a user is upstream's plain-text 500 (C{Internal
Server Error: "<uri>": requested [...] without impersonating a user}, the bracket holding
Go's C{%v} of the impersonation requests).

The impersonated user gets C{system:authenticated} (C{system:unauthenticated} for
C{system:anonymous}) unless the named groups include it; a service account without named
groups gets C{system:serviceaccounts} and C{system:serviceaccounts:<ns>}.  It replaces
C{context.user}; the user the credentials named is kept as C{context.authenticated_user}
(audit's C{user}, with the new one as C{impersonatedUser}).  The impersonation headers are
removed before the request goes on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Optional
from urllib.parse import unquote_to_bytes

from twisted.internet import defer
from twisted.logger import Logger

from kubetwist.authentication.serviceaccount import (
    make_group_names,
    make_username,
    split_username,
)
from kubetwist.authentication.user import (
    ALL_AUTHENTICATED,
    ALL_UNAUTHENTICATED,
    ANONYMOUS,
    UserInfo,
)
from kubetwist.authorization.authorizer import ALLOW, Attributes
from kubetwist.endpoints.responses import write_body
from kubetwist.server.filters.authorization import forbidden
from kubetwist.server.filters.base import Handler
from kubetwist.server.filters.context import context_of

log = Logger()

IMPERSONATE_USER = b"impersonate-user"
IMPERSONATE_GROUP = b"impersonate-group"
IMPERSONATE_UID = b"impersonate-uid"
IMPERSONATE_EXTRA_PREFIX = b"impersonate-extra-"

AUTHENTICATION_GROUP_VERSION = "authentication.k8s.io/v1"


def split_service_account_username(username: str) -> Optional[tuple[str, str]]:
    """Upstream C{serviceaccount.SplitUsername} (L{split_username})."""
    return split_username(username)


@dataclass(frozen=True)
class ImpersonationRequest:
    """
    One thing to impersonate (upstream uses a C{v1.ObjectReference}).

    @ivar kind: C{ServiceAccount}, C{User}, C{Group}, C{UserExtra} or C{UID}.
    @ivar field_path: the extra key of a C{UserExtra}.
    """

    kind: str
    name: str
    namespace: str = ""
    api_version: str = ""
    field_path: str = ""

    def go_string(self) -> str:
        """Go's C{%v} of the C{ObjectReference}: C{{Kind Namespace Name UID APIVersion
        ResourceVersion FieldPath}}."""
        return "{" + " ".join([self.kind, self.namespace, self.name, "", self.api_version, "",
                               self.field_path]) + "}"

    def attributes(self, requestor: Any) -> Attributes:
        """The C{impersonate} request to authorize for C{requestor}."""
        group = self.api_version.rpartition("/")[0] if "/" in self.api_version else ""
        version = self.api_version.rpartition("/")[2]
        resource, subresource = {
            "ServiceAccount": ("serviceaccounts", ""),
            "User": ("users", ""),
            "Group": ("groups", ""),
            "UserExtra": ("userextras", self.field_path),
            "UID": ("uids", ""),
        }[self.kind]
        return Attributes(user=requestor, verb="impersonate", namespace=self.namespace,
                          api_group=group, api_version=version, resource=resource,
                          subresource=subresource, name=self.name, resource_request=True)


class ImpersonationHeaderError(Exception):
    """Impersonation headers that name no user (upstream's 500)."""


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _unescape_extra_key(key: str) -> str:
    """Upstream C{unescapeExtraKey} (Go's C{url.PathUnescape}; the key as sent when malformed)."""
    if re.search(r"%(?![0-9a-fA-F]{2})", key):
        return key
    return unquote_to_bytes(key).decode("utf-8", "surrogateescape")


def build_impersonation_requests(headers: Any) -> list[ImpersonationRequest]:
    """
    Upstream C{buildImpersonationRequests}: the impersonation requests of C{headers} (a
    twisted C{Headers}), in upstream's order (user, groups, extras, uid).

    @raise ImpersonationHeaderError: groups, extras or a uid without a user (C{requested
        [...] without impersonating a user}).
    """
    out: list[ImpersonationRequest] = []
    users = headers.getRawHeaders(IMPERSONATE_USER) or []
    requested_user = _text(users[0]) if users else ""
    if requested_user:
        sa = split_service_account_username(requested_user)
        if sa is not None:
            out.append(ImpersonationRequest("ServiceAccount", sa[1], namespace=sa[0]))
        else:
            out.append(ImpersonationRequest("User", requested_user))
    groups = headers.getRawHeaders(IMPERSONATE_GROUP) or []
    for g in groups:
        out.append(ImpersonationRequest("Group", _text(g)))
    has_extra = False
    for name, values in headers.getAllRawHeaders():
        lower = name.lower()
        if not lower.startswith(IMPERSONATE_EXTRA_PREFIX):
            continue
        has_extra = True
        key = _unescape_extra_key(_text(lower[len(IMPERSONATE_EXTRA_PREFIX):]))
        for v in values:
            out.append(ImpersonationRequest("UserExtra", _text(v),
                                            api_version=AUTHENTICATION_GROUP_VERSION,
                                            field_path=key))
    uids = headers.getRawHeaders(IMPERSONATE_UID) or []
    requested_uid = _text(uids[0]) if uids else ""
    if requested_uid:
        out.append(ImpersonationRequest("UID", requested_uid,
                                        api_version=AUTHENTICATION_GROUP_VERSION))
    if (groups or has_extra or requested_uid) and not requested_user:
        raise ImpersonationHeaderError(
            "requested [" + " ".join(r.go_string() for r in out) + "] without impersonating a "
            "user")
    return out


def impersonated_user(requests: Iterable[ImpersonationRequest],
                      groups_specified: bool) -> UserInfo:
    """
    The user the (authorized) C{requests} name, with upstream's implicit groups (see the module
    docstring).

    @param groups_specified: the request had C{Impersonate-Group} headers.
    """
    username, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for r in requests:
        if r.kind == "ServiceAccount":
            username = make_username(r.namespace, r.name)
            if not groups_specified:
                groups = make_group_names(r.namespace)
        elif r.kind == "User":
            username = r.name
        elif r.kind == "Group":
            groups.append(r.name)
        elif r.kind == "UserExtra":
            extra.setdefault(r.field_path, []).append(r.name)
        elif r.kind == "UID":
            uid = r.name
    if username != ANONYMOUS:
        if not any(g in (ALL_AUTHENTICATED, ALL_UNAUTHENTICATED) for g in groups):
            groups.append(ALL_AUTHENTICATED)
    elif ALL_UNAUTHENTICATED not in groups:
        groups.append(ALL_UNAUTHENTICATED)
    return UserInfo(username, uid, groups, extra)


def _go_quote(s: str) -> str:
    """Go's C{%q} of a printable string (the request URI)."""
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x10000 and ord(ch) > 0xff:
            out.append(f"\\u{ord(ch):04x}")
        elif ord(ch) > 0xffff:
            out.append(f"\\U{ord(ch):08x}")
        else:
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch, f"\\x{ord(ch):02x}"))
    return '"' + "".join(out) + '"'


def write_internal_error_text(request: Any, message: str) -> None:
    """
    Upstream C{responsewriters.InternalError}: Go's C{http.Error} with C{Internal Server Error:
    "<request URI>": <message>} (C{&}, C{<}, C{>} escaped as HTML entities), C{text/plain;
    charset=utf-8}, C{X-Content-Type-Options: nosniff}, 500.
    """
    text = f"Internal Server Error: {_go_quote(_text(request.uri))}: {message}"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    request.setHeader(b"X-Content-Type-Options", b"nosniff")
    write_body(request, 500, text.encode("utf-8", "surrogateescape") + b"\n",
               "text/plain; charset=utf-8")


def _user_string(u: Any) -> str:
    name = getattr(u, "name", "") or "<empty>"
    groups = getattr(u, "groups", None) or []
    return name + (f"[{','.join(groups)}]" if groups else "")


def _remove_headers(headers: Any) -> None:
    for name in (IMPERSONATE_USER, IMPERSONATE_GROUP, IMPERSONATE_UID):
        headers.removeHeader(name)
    for name, _ in list(headers.getAllRawHeaders()):
        if name.lower().startswith(IMPERSONATE_EXTRA_PREFIX):
            headers.removeHeader(name)


def with_impersonation(handler: Handler, authorizer: Any) -> Handler:
    """
    Impersonate, then hand on; see the module docstring.

    @param authorizer: the chain's C{IAuthorizer}.
    """

    async def check(request: Any, requests: list[ImpersonationRequest]) -> Any:
        ctx = context_of(request)
        requestor = ctx.user
        for r in requests:
            attributes = r.attributes(requestor)
            result = await authorizer.authorize(attributes)
            decision, reason = result[0], result[1]
            if decision != ALLOW or (len(result) > 2 and result[2]):
                log.debug("Forbidden impersonation {uri}: {reason}",
                          uri=request.uri, reason=reason)
                # upstream responsewriters.Forbidden
                request.setHeader(b"X-Content-Type-Options", b"nosniff")
                raise forbidden(attributes, reason)
        groups_specified = bool(request.requestHeaders.getRawHeaders(IMPERSONATE_GROUP))
        new_user = impersonated_user(requests, groups_specified)
        log.debug("{old} is impersonating {new}", old=_user_string(requestor),
                  new=_user_string(new_user))
        ctx.authenticated_user = requestor
        ctx.user = new_user
        _remove_headers(request.requestHeaders)
        return await defer.maybeDeferred(handler, request)

    def handle(request: Any) -> Any:
        try:
            requests = build_impersonation_requests(request.requestHeaders)
        except ImpersonationHeaderError as e:
            log.debug("{err}", err=str(e))
            write_internal_error_text(request, str(e))
            return None
        if not requests:
            return handler(request)
        if context_of(request).user is None:
            write_internal_error_text(request, "no user found for request")
            return None
        return defer.ensureDeferred(check(request, requests))

    return handle
