# -*- test-case-name: tests.authentication.test_serviceaccount -*-
"""
Service-account tokens: upstream C{pkg/serviceaccount} (C{claims.go} the claims, C{jwt.go} the
signer and the token authenticator, C{openidmetadata.go} the OIDC discovery documents) and
C{k8s.io/apiserver/pkg/authentication/serviceaccount} (user names and groups).

A token is a compact JWS (C{{"alg": "RS256"|"ES256"|..., "kid": <key id>}} header) over the
claims C{aud exp iat iss jti kubernetes.io nbf sub} (keys sorted, as go-jose writes them).
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from twisted.internet import defer
from zope.interface import implementer

from kubetwist.authentication.authenticator import (
    AuthenticationError,
    ITokenAuthenticator,
    audiences_from,
)
from kubetwist.authentication.serviceaccount_keys import key_id
from kubetwist.authentication.user import CREDENTIAL_ID_KEY, UserInfo

#: C{--service-account-issuer}'s usual value (kubeadm's; kubetwist's default).
DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
#: The C{iss} of legacy (Secret-based) tokens, C{serviceaccount.LegacyIssuer}.
LEGACY_ISSUER = "kubernetes/serviceaccount"
#: go-jose's C{jwt.DefaultLeeway}: clock skew tolerated on C{nbf}, C{exp} and C{iat}, seconds.
DEFAULT_LEEWAY = 60

SERVICE_ACCOUNT_USERNAME_PREFIX = "system:serviceaccount:"
ALL_SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"
SERVICE_ACCOUNT_GROUP_PREFIX = "system:serviceaccounts:"
POD_NAME_KEY = "authentication.kubernetes.io/pod-name"
POD_UID_KEY = "authentication.kubernetes.io/pod-uid"
NODE_NAME_KEY = "authentication.kubernetes.io/node-name"
NODE_UID_KEY = "authentication.kubernetes.io/node-uid"


def make_username(namespace: str, name: str) -> str:
    """Upstream C{MakeUsername}: C{system:serviceaccount:<namespace>:<name>}."""
    return f"{SERVICE_ACCOUNT_USERNAME_PREFIX}{namespace}:{name}"


# apimachinery's DNS-1123 label (namespaces) and subdomain (service accounts)
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def split_username(username: str) -> tuple[str, str] | None:
    """
    Upstream C{serviceaccount.SplitUsername}: C{(namespace, name)} of
    C{system:serviceaccount:<namespace>:<name>}, or C{None} when C{username} is not one (wrong
    prefix, not exactly two parts, a namespace that is no DNS-1123 label of at most 63
    characters, a name that is no DNS-1123 subdomain of at most 253).
    """
    if not username.startswith(SERVICE_ACCOUNT_USERNAME_PREFIX):
        return None
    parts = username[len(SERVICE_ACCOUNT_USERNAME_PREFIX):].split(":")
    if len(parts) != 2:
        return None
    namespace, name = parts
    if len(namespace) > 63 or not _LABEL.match(namespace):
        return None
    if len(name) > 253 or not _SUBDOMAIN.match(name):
        return None
    return namespace, name


def make_group_names(namespace: str) -> list[str]:
    """Upstream C{MakeGroupNames}: C{["system:serviceaccounts", "system:serviceaccounts:<ns>"]}."""
    return [ALL_SERVICE_ACCOUNTS_GROUP, SERVICE_ACCOUNT_GROUP_PREFIX + namespace]


def signing_algorithm(key: Any) -> str:
    """
    Upstream C{jwt.go}: C{RS256} for RSA keys; C{ES256}/C{ES384}/C{ES512} for ECDSA keys on
    P-256/P-384/P-521.

    @raise ValueError: another key type or curve.
    """
    if isinstance(key, (rsa.RSAPrivateKey, rsa.RSAPublicKey)):
        return "RS256"
    if isinstance(key, (ec.EllipticCurvePrivateKey, ec.EllipticCurvePublicKey)):
        alg = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}.get(key.curve.name)
        if alg:
            return alg
        raise ValueError(f"unknown private key curve, must be 256, 384, or 521: {key.curve.name}")
    raise ValueError(f"unknown private key type {type(key).__name__}, must be *rsa.PrivateKey, "
                     f"*ecdsa.PrivateKey, or jose.OpaqueSigner")


def _ref(obj: dict) -> dict:
    meta = obj.get("metadata") or {}
    out = {}
    if meta.get("name"):
        out["name"] = meta["name"]
    if meta.get("uid"):
        out["uid"] = meta["uid"]
    return out


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    return value


def claims(service_account: dict, now: int, expiration_seconds: int, audiences: Sequence[str],
           *, pod: dict | None = None, secret: dict | None = None,
           node: dict | None = None, jti: str | None = None, warnafter: int = 0) -> dict:
    """
    Upstream C{serviceaccount.Claims} (C{iss} is added by L{TokenGenerator}).

    @param service_account: the ServiceAccount object.
    @param now: the issue time, whole seconds since the epoch.
    @param expiration_seconds: the lifetime; C{exp = now + expiration_seconds}.
    @param pod: a bound Pod (then C{node} is the Pod's node, when known); else C{secret} or
        C{node} is the bound object.
    @param jti: the token id (default: a new random UUID).
    @param warnafter: seconds after C{now} for C{kubernetes.io.warnafter} (0: none).
    @return: C{{"aud": [...], "exp", "iat", "jti", "kubernetes.io": {"namespace",
        ["node"], ["pod"], ["secret"], "serviceaccount": {"name", "uid"}, ["warnafter"]},
        "nbf", "sub"}}, keys sorted.
    """
    meta = service_account.get("metadata") or {}
    k8s: dict[str, Any] = {}
    if meta.get("namespace"):
        k8s["namespace"] = meta["namespace"]
    k8s["serviceaccount"] = _ref(service_account)
    if pod is not None:
        k8s["pod"] = _ref(pod)
        if node is not None:
            k8s["node"] = _ref(node)
    elif secret is not None:
        k8s["secret"] = _ref(secret)
    elif node is not None:
        k8s["node"] = _ref(node)
    if warnafter:
        k8s["warnafter"] = now + warnafter
    out = {
        "aud": list(audiences),
        "exp": now + expiration_seconds,
        "iat": now,
        "jti": jti if jti is not None else str(uuid.uuid4()),
        "kubernetes.io": k8s,
        "nbf": now,
        "sub": make_username(meta.get("namespace", ""), meta.get("name", "")),
    }
    return _sorted(out)


class TokenGenerator:
    """
    Upstream C{JWTTokenGenerator}: signs claims with one private key, adding C{iss}.

    @ivar issuer: the C{iss} claim.
    @ivar kid: the key id in every token's header (L{key_id} of the public key).
    @ivar algorithm: L{signing_algorithm} of the key.
    """

    def __init__(self, issuer: str, private_key: Any) -> None:
        self.issuer = issuer
        self.private_key = private_key
        self.algorithm = signing_algorithm(private_key)
        self.kid = key_id(private_key.public_key())

    def generate(self, token_claims: dict) -> str:
        """
        @param token_claims: from L{claims}.
        @return: the compact JWS, header C{{"alg": ..., "kid": ...}} (no C{typ}, as go-jose).
        """
        payload = _sorted(dict(token_claims, iss=self.issuer))
        return jwt.encode(payload, self.private_key, algorithm=self.algorithm,
                          headers={"kid": self.kid, "typ": None})


def _b64decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def unverified_audiences(token: str) -> list[str] | None:
    """
    The C{aud} claim of a JWT before any signature check (C{[]} when absent), or C{None} when
    C{token} is not a JWT; for answering which audiences an authenticated token is good for.
    """
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = json.loads(_b64decode(parts[1]))
    except (ValueError, TypeError):
        return None
    if not isinstance(payload, dict):
        return None
    aud = payload.get("aud")
    if isinstance(aud, str):
        return [aud]
    return [a for a in aud if isinstance(a, str)] if isinstance(aud, list) else []


def unverified_issuer(token: str) -> str | None:
    """The C{iss} claim of a JWT before any signature check, or C{None}."""
    return _unverified_issuer(token)


def _unverified_issuer(token: str) -> str | None:
    """Upstream C{hasCorrectIssuer}'s parse: the payload's C{iss} before any signature check."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = json.loads(_b64decode(parts[1]))
    except (ValueError, TypeError):
        return None
    iss = payload.get("iss") if isinstance(payload, dict) else None
    return iss if isinstance(iss, str) else None


def _numeric(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


@implementer(ITokenAuthenticator)
class ServiceAccountTokenAuthenticator:
    """
    Upstream C{JWTTokenAuthenticator} with the bound-token C{validator}: tokens whose C{iss} is
    one of C{issuers}, signed by one of C{public_keys}, with an audience among the API
    audiences, and within C{nbf}/C{exp}/C{iat} (60 s leeway).

    The user: C{system:serviceaccount:<ns>:<name>}, uid the ServiceAccount's uid, groups
    C{system:serviceaccounts}, C{system:serviceaccounts:<ns>}; extra C{pod-name}/C{pod-uid},
    C{credential-id} C{["JTI=<jti>"]}, C{node-name}/C{node-uid} when present (the
    authenticated group is added by the chain).

    With a C{lookup} (a L{StorageObjectGetter
    <kubetwist.authentication.serviceaccount_lookup.StorageObjectGetter>}; kube-apiserver's
    default, C{--service-account-lookup=true}) the ServiceAccount and the bound Secret, Pod or
    Node must still exist with the claimed uids (upstream's validator); legacy Secret-based
    tokens (C{iss} C{kubernetes/serviceaccount}, no expiry) are accepted after the lookup of
    their Secret and ServiceAccount (or on their claims alone without a lookup), as upstream.
    """

    def __init__(self, issuers: Sequence[str], public_keys: Iterable[Any],
                 implicit_audiences: Sequence[str], clock: Any, lookup: Any = None) -> None:
        """
        @param issuers: C{--service-account-issuer} values (the first one signs).
        @param implicit_audiences: C{--api-audiences}.
        @param clock: C{IReactorTime}.
        @param lookup: a C{StorageObjectGetter}, or C{None} (no lookups: the claims alone
            decide, as upstream with C{--service-account-lookup=false}).
        """
        self.lookup = lookup
        self.issuers = list(issuers)
        self.keys = [(k, signing_algorithm(k)) for k in public_keys]
        self.implicit_audiences = list(implicit_audiences)
        self.clock = clock

    def authenticate_token(self, token: str) -> "defer.Deferred[UserInfo | None]":
        """
        @return: a Deferred of the service account's user, of C{None} when the token is not a
            JWT of one of our issuers (another authenticator may know it); it fails with
            L{AuthenticationError} for a token of our issuer that fails: no key verifies it,
            audience mismatch (C{token audiences ["x"] is invalid for the target audiences
            [...]}), C{service account token has expired}, C{service account token is not
            valid yet}, or malformed claims; with a lookup also for a deleted or replaced
            ServiceAccount, Secret, Pod or Node (see
            L{kubetwist.authentication.serviceaccount_lookup}).
        """
        try:
            verified = self._verify(token)
            if verified is None:
                return defer.succeed(None)
            payload, legacy = verified
            if legacy:
                return defer.ensureDeferred(self._legacy(token, payload))
            user = self._validate(payload)
        except AuthenticationError:
            return defer.fail()
        if self.lookup is None:
            return defer.succeed(user)
        from kubetwist.authentication.serviceaccount_lookup import validate_bound

        d = defer.ensureDeferred(validate_bound(self.lookup, self.clock.seconds(),
                                                payload["kubernetes.io"]))
        return d.addCallback(lambda _: user)

    async def _legacy(self, token: str, payload: dict) -> UserInfo:
        """
        Upstream C{legacyValidator.Validate}: the claims C{sub},
        C{kubernetes.io/serviceaccount/namespace}, C{.../secret.name},
        C{.../service-account.name}, C{.../service-account.uid}, then the lookup.

        @raise AuthenticationError: C{<claim> claim is missing}, C{sub claim is invalid}, or
            the lookup's reason.
        """
        from kubetwist.authentication.serviceaccount_lookup import validate_legacy

        def claim(name: str, what: str) -> str:
            value = payload.get(f"kubernetes.io/serviceaccount/{name}")
            if not isinstance(value, str) or not value:
                raise AuthenticationError(f"{what} claim is missing")
            return value

        sub = payload.get("sub")
        if not isinstance(sub, str) or not sub:
            raise AuthenticationError("sub claim is missing")
        namespace = claim("namespace", "namespace")
        secret_name = claim("secret.name", "secretName")
        sa_name = claim("service-account.name", "serviceAccountName")
        sa_uid = claim("service-account.uid", "serviceAccountUID")
        if split_username(sub) != (namespace, sa_name):
            raise AuthenticationError("sub claim is invalid")
        if self.lookup is not None:
            await validate_legacy(self.lookup, token, namespace, secret_name, sa_name, sa_uid)
        return UserInfo(make_username(namespace, sa_name), sa_uid, make_group_names(namespace))

    def verify_token(self, token: str) -> UserInfo | None:
        """
        L{authenticate_token}, synchronously: the signature and claims only.

        @raise AuthenticationError: see L{authenticate_token}.
        """
        verified = self._verify(token)
        if verified is None:
            return None
        if verified[1]:
            if self.lookup is not None:
                raise AuthenticationError("legacy service account tokens need the lookup")
            return _resolve(self._legacy("", verified[0]))
        return self._validate(verified[0])

    def _verify(self, token: str) -> tuple[dict, bool] | None:
        """
        The signature, issuer and audience checks: C{(payload, legacy)}, or C{None} when the
        token is not a JWT of our issuers (nor a legacy token).

        @raise AuthenticationError: see L{authenticate_token}.
        """
        issuer = _unverified_issuer(token)
        legacy = issuer == LEGACY_ISSUER
        if issuer not in self.issuers and not legacy:
            return None
        try:
            jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        payload = None
        errs: list[Exception] = []
        for key, alg in self.keys:
            try:
                payload = jwt.decode(token, key, algorithms=[alg], options={
                    "verify_signature": True, "verify_exp": False, "verify_nbf": False,
                    "verify_iat": False, "verify_aud": False, "verify_iss": False,
                })
                break
            except jwt.PyJWTError as e:
                errs.append(AuthenticationError("go-jose/go-jose: error in cryptographic "
                                                "primitive") if isinstance(
                    e, (jwt.InvalidSignatureError, jwt.InvalidAlgorithmError)) else e)
        if payload is None:
            raise AuthenticationError.aggregate(errs) or AuthenticationError(
                "no keys to verify the token")
        if payload.get("iss") not in self.issuers and not (
                legacy and payload.get("iss") == LEGACY_ISSUER):
            raise AuthenticationError(f'token issuer "{payload.get("iss")}" is invalid')
        aud = payload.get("aud")
        token_auds = [aud] if isinstance(aud, str) else list(aud or [])
        if not token_auds:
            token_auds = list(self.implicit_audiences)
        requested = audiences_from()
        target = list(self.implicit_audiences) if requested is None else requested
        common = [a for a in target if a in token_auds]
        if not common and self.implicit_audiences:
            raise AuthenticationError(
                f"token audiences {_go_quoted(token_auds)} is invalid for the target audiences "
                f"{_go_quoted(target)}")
        return payload, legacy

    def _validate(self, payload: dict) -> UserInfo:
        now = self.clock.seconds()
        nbf, exp, iat = (_numeric(payload.get(k)) for k in ("nbf", "exp", "iat"))
        if nbf is not None and now + DEFAULT_LEEWAY < nbf:
            raise AuthenticationError("service account token is not valid yet")
        if exp is not None and now - DEFAULT_LEEWAY > exp:
            raise AuthenticationError("service account token has expired")
        if iat is not None and now + DEFAULT_LEEWAY < iat:
            raise AuthenticationError("service account token claims could not be validated "
                                      "due to unexpected validation error")
        private = payload.get("kubernetes.io")
        if not isinstance(private, dict):
            raise AuthenticationError("service account token claims could not be validated "
                                      "due to unexpected private claim")
        namespace = private.get("namespace") or ""
        sa = private.get("serviceaccount") or {}
        if not namespace or not isinstance(sa, dict) or not sa.get("name"):
            raise AuthenticationError("service account token claims could not be validated "
                                      "due to unexpected private claim")
        extra: dict[str, list[str]] = {}
        pod = private.get("pod")
        if isinstance(pod, dict) and pod.get("name") and pod.get("uid"):
            extra[POD_NAME_KEY] = [pod["name"]]
            extra[POD_UID_KEY] = [pod["uid"]]
        jti = payload.get("jti")
        if isinstance(jti, str) and jti:
            extra[CREDENTIAL_ID_KEY] = [f"JTI={jti}"]
        node = private.get("node")
        if isinstance(node, dict) and node.get("name"):
            extra[NODE_NAME_KEY] = [node["name"]]
            if node.get("uid"):
                extra[NODE_UID_KEY] = [node["uid"]]
        return UserInfo(make_username(namespace, sa["name"]), sa.get("uid", ""),
                        make_group_names(namespace), extra)


def _resolve(coroutine: Any) -> Any:
    """Run a coroutine that never awaits anything unfinished (no lookup) to its result."""
    d = defer.ensureDeferred(coroutine)
    out: list = []
    d.addBoth(out.append)
    if isinstance(out[0], Exception) or hasattr(out[0], "raiseException"):
        out[0].raiseException()
    return out[0]


def _go_quoted(values: Sequence[str]) -> str:
    """Go's C{%q} of a string slice: C{["a" "b"]}."""
    return "[" + " ".join(json.dumps(v) for v in values) + "]"


# --- OIDC discovery ------------------------------------------------------------------------------
def _b64uint(n: int) -> str:
    raw = n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def jwk(public_key: Any) -> dict:
    """
    One JSON Web Key as go-jose writes it: C{{"use": "sig", "kty": "RSA", "kid", "alg",
    "n", "e"}} or C{{"use": "sig", "kty": "EC", "kid", "crv", "alg", "x", "y"}}.
    """
    alg = signing_algorithm(public_key)
    if isinstance(public_key, rsa.RSAPublicKey):
        nums = public_key.public_numbers()
        return {"use": "sig", "kty": "RSA", "kid": key_id(public_key), "alg": alg,
                "n": _b64uint(nums.n), "e": _b64uint(nums.e)}
    nums = public_key.public_numbers()
    size = (public_key.curve.key_size + 7) // 8
    crv = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}[alg]

    def coord(v: int) -> str:
        return base64.urlsafe_b64encode(v.to_bytes(size, "big")).rstrip(b"=").decode()

    return {"use": "sig", "kty": "EC", "kid": key_id(public_key), "crv": crv, "alg": alg,
            "x": coord(nums.x), "y": coord(nums.y)}


def jwks(public_keys: Iterable[Any]) -> dict:
    """Upstream C{publicJWKSFromKeys}: C{{"keys": [jwk, ...]}} (one per distinct key id)."""
    seen: set[str] = set()
    keys = []
    for k in public_keys:
        j = jwk(k)
        if j["kid"] not in seen:
            seen.add(j["kid"])
            keys.append(j)
    return {"keys": keys}


def openid_configuration(issuer: str, jwks_uri: str, public_keys: Iterable[Any]) -> dict:
    """
    Upstream C{openIDMetadata}: C{{"issuer", "jwks_uri", "response_types_supported":
    ["id_token"], "subject_types_supported": ["public"],
    "id_token_signing_alg_values_supported": [algs, sorted]}}.
    """
    algs = sorted({signing_algorithm(k) for k in public_keys})
    return {
        "issuer": issuer,
        "jwks_uri": jwks_uri,
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": algs,
    }



__all__ = [
    "DEFAULT_ISSUER", "ServiceAccountTokenAuthenticator", "TokenGenerator", "claims",
    "jwk", "jwks", "make_group_names", "make_username",
    "openid_configuration", "signing_algorithm", "split_username", "unverified_audiences",
    "unverified_issuer",
]
