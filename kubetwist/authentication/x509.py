# -*- test-case-name: tests.authentication.test_x509 -*-
"""
Client certificates: upstream C{k8s.io/apiserver/pkg/authentication/request/x509}.

The user is the verified leaf certificate's subject: the common name is the user name, the
organizations are the groups, and C{extra["authentication.kubernetes.io/credential-id"]} is
C{X509SHA256=<hex sha256 of the DER certificate>} (v1.32 C{CommonNameUserConversion}).

The TLS layer (L{kubetwist.server.tls}) already rejects a certificate that does not chain to
a client CA; this authenticator checks the chain again against its own CA list, as upstream
does, with Go's rules: every certificate in its validity period, each signed by the next,
issuers being CAs, and extended key usages allowing C{clientAuth}.
"""

from __future__ import annotations

import datetime
import hashlib
from typing import Callable, Iterable

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from twisted.internet import defer
from twisted.internet.interfaces import ISSLTransport
from twisted.web.iweb import IRequest
from zope.interface import implementer

from kubetwist.authentication.authenticator import AuthenticationError, IAuthenticator
from kubetwist.authentication.user import CREDENTIAL_ID_KEY, UserInfo

#: Go's C{maxChainLength}-like bound on intermediates.
_MAX_DEPTH = 10


def _tls_transport(request: IRequest) -> object | None:
    transport = getattr(request, "transport", None)
    if transport is None:
        # HTTP/2: the request's channel is an H2Stream, whose connection holds the transport.
        conn = getattr(getattr(request, "channel", None), "_conn", None)
        transport = getattr(conn, "transport", None)
    if transport is None or ISSLTransport(transport, None) is None:
        return None
    return transport


def peer_certificates(request: IRequest) -> list[x509.Certificate]:
    """
    The certificates the client presented in the TLS handshake, leaf first (Go's
    C{req.TLS.PeerCertificates}), for HTTP/1.1 and HTTP/2 requests alike.

    @return: C{[]} for plain-text requests and TLS clients without a certificate.
    """
    transport = _tls_transport(request)
    if transport is None:
        return []
    get_handle = getattr(transport, "getHandle", None)
    if get_handle is None:  # an in-memory TLS stand-in (StubTreq): no certificate
        return []
    handle = get_handle()
    get_leaf = getattr(handle, "get_peer_certificate", None)
    if get_leaf is None:
        return []
    leaf = get_leaf(as_cryptography=True)
    if leaf is None:
        return []
    chain = [leaf]
    for cert in handle.get_peer_cert_chain(as_cryptography=True) or ():
        if cert not in chain:
            chain.append(cert)
    return chain


def _hex_colons(data: bytes) -> str:
    return ":".join(f"{b:02X}" for b in data)


def certificate_identifier(cert: x509.Certificate) -> str:
    """
    Upstream's C{certificateIdentifier}: C{SN=<decimal>, SKID=AB:CD:..., AKID=...} (empty
    identifiers print as nothing).
    """
    try:
        skid = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    except x509.ExtensionNotFound:
        skid = b""
    try:
        akid = (
            cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
            .key_identifier or b""
        )
    except x509.ExtensionNotFound:
        akid = b""
    return f"SN={cert.serial_number}, SKID={_hex_colons(skid)}, AKID={_hex_colons(akid)}"


def _rfc3339(t: datetime.datetime) -> str:
    return t.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _check_time(cert: x509.Certificate, now: datetime.datetime) -> None:
    if now < cert.not_valid_before_utc:
        detail = f"current time {_rfc3339(now)} is before {_rfc3339(cert.not_valid_before_utc)}"
    elif now > cert.not_valid_after_utc:
        detail = f"current time {_rfc3339(now)} is after {_rfc3339(cert.not_valid_after_utc)}"
    else:
        return
    raise AuthenticationError(
        "x509: certificate has expired or is not yet valid: " + detail
    )


def _is_ca(cert: x509.Certificate) -> bool:
    try:
        return cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except x509.ExtensionNotFound:
        return cert.version == x509.Version.v1


def _issued_by(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    if cert.issuer != issuer.subject:
        return False
    try:
        cert.verify_directly_issued_by(issuer)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _allows_client_auth(cert: x509.Certificate) -> bool:
    try:
        ekus = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return True
    return (
        ExtendedKeyUsageOID.CLIENT_AUTH in ekus
        or ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE in ekus
    )


def verify_client_chain(
    chain: list[x509.Certificate],
    roots: list[x509.Certificate],
    now: datetime.datetime,
) -> list[x509.Certificate]:
    """
    Verify a presented chain as Go's C{Certificate.Verify} with C{KeyUsages: [ClientAuth]}.

    @param chain: leaf first, then intermediates in any order.
    @param roots: trusted CA certificates.
    @param now: an aware datetime.
    @return: the verified chain, leaf to root.
    @raise AuthenticationError: C{x509: certificate has expired or is not yet valid: ...},
        C{x509: certificate signed by unknown authority}, or C{x509: certificate specifies an
        incompatible key usage}.
    """
    leaf = chain[0]
    _check_time(leaf, now)
    intermediates = chain[1:]
    path = [leaf]
    found = None
    while len(path) <= _MAX_DEPTH:
        current = path[-1]
        root = next(
            (
                r for r in roots
                if r == current
                or (_is_ca(r) and _in_period(r, now) and _issued_by(current, r))
            ),
            None,
        )
        if root is not None:
            if root != current:
                path.append(root)
            found = path
            break
        nxt = next(
            (
                c for c in intermediates
                if c not in path and _is_ca(c) and _issued_by(current, c)
                and _in_period(c, now)
            ),
            None,
        )
        if nxt is None:
            break
        path.append(nxt)
    if found is None:
        raise AuthenticationError("x509: certificate signed by unknown authority")
    if not all(_allows_client_auth(c) for c in found):
        raise AuthenticationError("x509: certificate specifies an incompatible key usage")
    return found


def _in_period(cert: x509.Certificate, now: datetime.datetime) -> bool:
    return cert.not_valid_before_utc <= now <= cert.not_valid_after_utc


def user_from_certificate(cert: x509.Certificate) -> UserInfo | None:
    """
    Upstream v1.32 C{CommonNameUserConversion}: name from the (last) common name, groups from
    the organizations in order, extra credential id.

    @return: C{None} when the subject has no common name.
    """
    name = ""
    groups: list[str] = []
    for attr in cert.subject:
        if attr.oid == NameOID.COMMON_NAME:
            name = str(attr.value)
        elif attr.oid == NameOID.ORGANIZATION_NAME:
            groups.append(str(attr.value))
    if not name:
        return None
    fingerprint = hashlib.sha256(cert.public_bytes(Encoding.DER)).hexdigest()
    return UserInfo(
        name=name, groups=groups, extra={CREDENTIAL_ID_KEY: [f"X509SHA256={fingerprint}"]}
    )


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


_CACHE_ATTR = "_kubetwist_x509_user"


def _not_after(cert: x509.Certificate) -> datetime.datetime:
    return cert.not_valid_after_utc


@implementer(IAuthenticator)
class X509Authenticator:
    """
    Authenticates by the client certificate of the request's TLS connection (upstream
    C{x509.Authenticator} with C{CommonNameUserConversion}).
    """

    def __init__(
        self,
        client_ca_certs: Iterable[x509.Certificate],
        now: Callable[[], datetime.datetime] = _utcnow,
        peer_chain: Callable[[IRequest], list[x509.Certificate]] = peer_certificates,
    ) -> None:
        """
        @param client_ca_certs: the trusted client CAs (C{--client-ca-file} and the generated
            CA); the same list given to the TLS context.
        @param now: clock returning an aware datetime.
        @param peer_chain: how to read the presented chain from a request.
        """
        self.client_ca_certs = list(client_ca_certs)
        self._now = now
        self._peer_chain = peer_chain

    def authenticate(self, request: IRequest) -> "defer.Deferred[UserInfo | None]":
        """
        @return: a (fired) Deferred of the certificate's user, of C{None} for requests without
            a client certificate or a certificate without a common name; it fails with
            L{AuthenticationError} C{verifying certificate SN=..., SKID=..., AKID=... failed:
            x509: ...} when the chain does not verify.
        """
        return defer.maybeDeferred(self.authenticate_now, request)

    def authenticate_now(self, request: IRequest) -> UserInfo | None:
        """
        L{authenticate}, synchronously (the TLS layer has the chain already).

        @raise AuthenticationError: see L{authenticate}.
        """
        transport = _tls_transport(request)
        cached = getattr(transport, _CACHE_ATTR, None) if transport is not None else None
        if cached is not None and cached[0] is self:
            _, user, not_after = cached
            if user is None or self._now() < not_after:
                return user
        chain = self._peer_chain(request)
        if not chain:
            user, not_after = None, None
        else:
            user = self.authenticate_chain(chain)
            not_after = _not_after(chain[0])
        if transport is not None:
            # the peer's certificate cannot change within one TLS connection: verify it once
            # per connection (the expiry is still checked on every request)
            try:
                setattr(transport, _CACHE_ATTR, (self, user, not_after))
            except AttributeError:
                pass
        return user

    def authenticate_chain(self, chain: list[x509.Certificate]) -> UserInfo | None:
        """
        The user of a presented chain (leaf first); see L{authenticate}.
        """
        try:
            verified = verify_client_chain(chain, self.client_ca_certs, self._now())
        except AuthenticationError as e:
            raise AuthenticationError(
                f"verifying certificate {certificate_identifier(chain[0])} failed: {e}"
            ) from None
        return user_from_certificate(verified[0])
