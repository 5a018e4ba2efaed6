# -*- test-case-name: tests.authentication.test_requestheader -*-
"""
The authenticating front proxy: upstream C{k8s.io/apiserver/pkg/authentication/request/
headerrequest} behind C{x509.NewDynamicCAVerifier} (C{--requestheader-*} flags).

A request whose client certificate verifies against C{--requestheader-client-ca-file} (and,
when C{--requestheader-allowed-names} is set, whose common name is one of them) is the proxy
speaking for a user: the first non-empty of the C{--requestheader-username-headers} names
it, every value of the C{--requestheader-group-headers} its groups, the
C{--requestheader-uid-headers} its uid, and the headers starting with a
C{--requestheader-extra-headers-prefix} its extra (key lower-cased and percent-decoded).
Those headers are removed once the user is known.  Without a client certificate the
authenticator has no opinion; a certificate of another CA is an error (collected by the
union, so a regular client certificate still authenticates through the x509 authenticator).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional
from urllib.parse import unquote_to_bytes

from cryptography import x509
from twisted.internet import defer
from twisted.web.iweb import IRequest
from zope.interface import implementer

from kubetwist.authentication.authenticator import AuthenticationError, IAuthenticator
from kubetwist.authentication.user import UserInfo
from kubetwist.authentication.x509 import (
    certificate_identifier,
    peer_certificates,
    verify_client_chain,
)


@dataclass
class RequestHeaderConfig:
    """
    Upstream C{authenticatorfactory.RequestHeaderConfig}.

    @ivar client_cas: the certificates of C{--requestheader-client-ca-file}.
    @ivar allowed_names: C{--requestheader-allowed-names} (empty: any common name).
    """

    client_cas: list = field(default_factory=list)
    username_headers: list[str] = field(default_factory=list)
    uid_headers: list[str] = field(default_factory=list)
    group_headers: list[str] = field(default_factory=list)
    extra_header_prefixes: list[str] = field(default_factory=list)
    allowed_names: list[str] = field(default_factory=list)


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def _unescape(key: str) -> str:
    if re.search(r"%(?![0-9a-fA-F]{2})", key):
        return key
    return unquote_to_bytes(key).decode("utf-8", "surrogateescape")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


@implementer(IAuthenticator)
class RequestHeaderAuthenticator:
    """See the module docstring."""

    def __init__(self, config: RequestHeaderConfig,
                 now: Callable[[], datetime.datetime] = _utcnow,
                 peer_chain: Callable[[IRequest], list[x509.Certificate]] = peer_certificates
                 ) -> None:
        self.config = config
        self._now = now
        self._peer_chain = peer_chain

    def authenticate(self, request: IRequest) -> "defer.Deferred[UserInfo | None]":
        """
        @return: a fired Deferred of the proxied user, of C{None} without a client certificate
            or without a user name header; it fails with L{AuthenticationError}
            (C{verifying certificate ... failed: x509: ...}, C{x509: subject with cn=<cn> is not
            in the allowed list}).
        """
        return defer.maybeDeferred(self.authenticate_now, request)

    def authenticate_now(self, request: IRequest) -> Optional[UserInfo]:
        chain = self._peer_chain(request)
        if not chain:
            return None
        try:
            verified = verify_client_chain(chain, self.config.client_cas, self._now())
        except AuthenticationError as e:
            raise AuthenticationError(
                f"verifying certificate {certificate_identifier(chain[0])} failed: {e}"
            ) from None
        if self.config.allowed_names:
            cns = verified[0].subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
            cn = str(cns[-1].value) if cns else ""
            if cn not in self.config.allowed_names:
                raise AuthenticationError(f"x509: subject with cn={cn} is not in the allowed "
                                          f"list")
        return self.user_from_headers(request)

    def user_from_headers(self, request: IRequest) -> Optional[UserInfo]:
        """Upstream C{requestHeaderAuthRequestHandler.AuthenticateRequest} (the headers part;
        the headers are cleared on success)."""
        headers = request.requestHeaders
        name = _first(headers, self.config.username_headers)
        if not name:
            return None
        uid = _first(headers, self.config.uid_headers)
        groups: list[str] = []
        for h in self.config.group_headers:
            groups += [_text(v) for v in headers.getRawHeaders(h.strip().encode(), []) if v]
        extra: dict[str, list[str]] = {}
        prefixes = [p.lower().encode() for p in self.config.extra_header_prefixes]
        for header, values in list(headers.getAllRawHeaders()):
            lower = header.lower()
            for p in prefixes:
                if lower.startswith(p):
                    key = _unescape(_text(lower[len(p):]))
                    extra.setdefault(key, []).extend(_text(v) for v in values if v)
                    break
        self._clear(headers)
        return UserInfo(name, uid, groups, extra)

    def _clear(self, headers) -> None:
        for h in (self.config.username_headers + self.config.uid_headers
                  + self.config.group_headers):
            headers.removeHeader(h.encode())
        prefixes = [p.lower().encode() for p in self.config.extra_header_prefixes]
        for header, _ in list(headers.getAllRawHeaders()):
            if any(header.lower().startswith(p) for p in prefixes):
                headers.removeHeader(header)


def _first(headers, names: Iterable[str]) -> str:
    for h in names:
        h = h.strip()
        values = headers.getRawHeaders(h.encode(), []) if h else []
        if values and values[0]:
            return _text(values[0])
    return ""


__all__ = ["RequestHeaderAuthenticator", "RequestHeaderConfig"]
