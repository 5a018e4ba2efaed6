# -*- test-case-name: tests.authentication.test_oidc -*-
"""
JWT (OpenID Connect) token authentication: upstream
C{k8s.io/apiserver/plugin/pkg/authenticator/token/oidc} (v1.32), configured by the structured
C{--authentication-config} file's C{jwt} authenticators or by the legacy C{--oidc-*} flags
(L{kubetwist.authentication.authnconfig} turns both into the same wire-form dicts).

A token whose unverified C{iss} is the authenticator's C{issuer.url} is verified against the
issuer's keys: the OpenID discovery document (C{<url>/.well-known/openid-configuration}, or
C{issuer.discoveryURL}) names the C{jwks_uri}; both are fetched asynchronously with treq
(trusting C{issuer.certificateAuthority}, else the platform's roots), on first use and again
when a token names a key id the cached set lacks (at most every 10 s).  Then: the signature
(an allowed algorithm), C{iss}, C{aud} (any of C{issuer.audiences}), C{exp}, C{nbf}; the
claim mappings (username, groups, uid by claim and prefix or CEL expression, extra by CEL),
the claim validation rules (C{claim}/C{requiredValue} or a CEL expression over C{claims}) and
the user validation rules (CEL over C{user}).  Every failure is an L{AuthenticationError}
whose text (upstream's C{oidc: ...}) is logged only; the client sees 401.

CEL runs on cel-cpp (C{cel-expr-python}) with the standard library; the Kubernetes
extension libraries of upstream's authentication environment are not declared.
"""

from __future__ import annotations

import base64
import json
import threading
from typing import Any, Callable, Optional

import jwt as pyjwt
from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import implementer

from kubetwist.authentication.authenticator import AuthenticationError, ITokenAuthenticator
from kubetwist.authentication.user import CREDENTIAL_ID_KEY, UserInfo
from kubetwist.runtime.gofmt import json_kind

log = Logger()

#: Upstream C{oidc.AllValidSigningAlgorithms()}, sorted.
ALL_SIGNING_ALGORITHMS = ["ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "RS256",
                          "RS384", "RS512"]
#: go-oidc: the clock skew tolerated on C{nbf}, seconds (C{exp} has none).
NBF_SKEW = 300
#: How often an unknown key id may make the key set be fetched again, seconds.
KEY_REFRESH_INTERVAL = 10
WELL_KNOWN = "/.well-known/openid-configuration"


# --- CEL ---------------------------------------------------------------------------------------
_env_lock = threading.Lock()
_envs: dict[str, Any] = {}


def _cel_env(var: str) -> Any:
    from cel_expr_python import cel

    with _env_lock:
        env = _envs.get(var)
        if env is None:
            env = _envs[var] = cel.NewEnv(variables={var: cel.Type.DYN})
        return env


def compile_cel(var: str, expression: str) -> tuple[Any, Optional[str]]:
    """
    Compile C{expression} with one dynamic variable C{var} (C{claims} or C{user}).

    @return: C{(program, None)}, or C{(None, error text)} (upstream's C{compilation failed:
        ...}).
    """
    try:
        return _cel_env(var).compile(expression), None
    except RuntimeError as e:
        text = str(e).strip()
        for prefix in ("INVALID_ARGUMENT: ",):
            if text.startswith(prefix):
                text = text[len(prefix):]
        if text.endswith(" [INVALID_ARGUMENT]"):
            text = text[: -len(" [INVALID_ARGUMENT]")]
        return None, "compilation failed: " + text


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if hasattr(value, "value") and callable(value.value):
        return _plain(value.value())
    return value


def eval_cel(program: Any, var: str, data: Any) -> Any:
    """
    Evaluate a compiled program with C{var} bound to C{data}.

    @return: the result as plain Python values.
    @raise AuthenticationError: an evaluation error (e.g. C{no such key: x}).
    """
    result = program.eval(data={var: data})
    if str(result.type()) == "ERROR":
        text = str(result.value())
        if "Key not found in map" in text:
            text = "no such key: " + text.rsplit(":", 1)[-1].strip().strip('"')
        raise AuthenticationError(text)
    return _plain(result.value())


def _string_list(value: Any) -> list[str]:
    """Upstream C{convertCELValueToStringList}: a string or a list of strings; C{""} and
    empty strings in a list are dropped."""
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list):
        out = []
        for v in value:
            if not isinstance(v, str):
                raise AuthenticationError("expression must return a string or a list of "
                                          f"strings, got list containing {type(v).__name__}")
            if v:
                out.append(v)
        return out
    if value is None:
        return []
    raise AuthenticationError(f"expression must return a string or a list of strings, got "
                              f"{type(value).__name__}")


# --- keys --------------------------------------------------------------------------------------
def _b64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def has_correct_issuer(issuer_url: str, token: str) -> bool:
    """Upstream C{hasCorrectIssuer}: a compact JWS whose unverified C{iss} is C{issuer_url}."""
    parts = token.split(".")
    if len(parts) != 3:
        return False
    try:
        payload = json.loads(_b64(parts[1]))
    except (ValueError, TypeError):
        return False
    return isinstance(payload, dict) and payload.get("iss") == issuer_url


class RemoteKeySet:
    """
    The issuer's JSON Web Keys, fetched through discovery (go-oidc's C{NewProvider} and
    C{RemoteKeySet}).

    @ivar keys: C{{kid: (PyJWK)}} of the last fetch (a key without C{kid} is keyed C{""}).
    """

    def __init__(self, issuer_url: str, discovery_url: str, fetch: Callable[[str], Any],
                 clock: Any) -> None:
        """
        @param fetch: C{url -> Deferred of bytes} (an HTTPS GET answering 200), e.g.
            L{https_fetcher}.
        @param clock: C{IReactorTime}.
        """
        self.issuer_url = issuer_url
        self.discovery_url = discovery_url or issuer_url.rstrip("/") + WELL_KNOWN
        self.fetch = fetch
        self.clock = clock
        self.keys: Optional[list[Any]] = None
        self.jwks_uri: Optional[str] = None
        self._waiters: list[defer.Deferred] = []
        self._last_error: Optional[AuthenticationError] = None
        self._last_fetch = -1e18

    async def _discover(self) -> str:
        body = await self.fetch(self.discovery_url)
        try:
            doc = json.loads(body)
        except ValueError as e:
            raise AuthenticationError(f"oidc: failed to decode provider discovery object: "
                                      f"{e}") from None
        if not isinstance(doc, dict):
            raise AuthenticationError("oidc: failed to decode provider discovery object")
        if doc.get("issuer") != self.issuer_url:
            raise AuthenticationError(f'oidc: issuer did not match the issuer returned by '
                                      f'provider, expected "{self.issuer_url}" got '
                                      f'"{doc.get("issuer")}"')
        uri = doc.get("jwks_uri")
        if not isinstance(uri, str) or not uri:
            raise AuthenticationError("oidc: provider discovery object has no jwks_uri")
        return uri

    async def _refresh(self) -> list[Any]:
        if self.jwks_uri is None:
            self.jwks_uri = await self._discover()
        body = await self.fetch(self.jwks_uri)
        try:
            data = json.loads(body)
            keys = []
            for k in data.get("keys") or []:
                try:
                    keys.append(pyjwt.PyJWK(k))
                except pyjwt.PyJWTError:
                    continue  # go-jose skips keys it cannot use
        except (ValueError, AttributeError) as e:
            raise AuthenticationError(f"oidc: failed to decode keys: {e}") from None
        self.keys = keys
        return keys

    def refresh(self) -> defer.Deferred:
        """Fetch the keys (one fetch at a time; concurrent callers share it)."""
        d: defer.Deferred = defer.Deferred()
        self._waiters.append(d)
        if len(self._waiters) == 1:
            self._last_fetch = self.clock.seconds()
            defer.ensureDeferred(self._refresh()).addBoth(self._fire)
        return d

    def _fire(self, result: Any) -> None:
        waiters, self._waiters = self._waiters, []
        for w in waiters:
            if isinstance(result, Failure):
                w.errback(result)
            else:
                w.callback(result)

    async def keys_for(self, kid: Optional[str], force: bool = False) -> list[Any]:
        """
        The candidate keys for C{kid}, fetching the set when unknown or C{force}d (at most
        every L{KEY_REFRESH_INTERVAL} seconds; a failed fetch is answered again, without a new
        one, until then).
        """
        recent = self.clock.seconds() - self._last_fetch < KEY_REFRESH_INTERVAL
        if self.keys is None and recent and self._last_error is not None:
            raise self._last_error
        if self.keys is None or (force and not recent):
            try:
                await self.refresh()
            except AuthenticationError as e:
                self._last_error = e
                raise
            self._last_error = None
        keys = self.keys or []
        if kid:
            return [k for k in keys if k.key_id == kid]
        return keys


def https_fetcher(client: Any) -> Callable[[str], Any]:
    """C{url -> Deferred of bytes} over a treq C{HTTPClient}; a non-200 answer fails."""

    async def fetch(url: str) -> bytes:
        try:
            response = await client.get(url, timeout=30)
            body = await response.content()
        except Exception as e:  # noqa: BLE001 -- connection errors of every kind
            raise AuthenticationError(f"oidc: get {url}: {e}") from None
        if response.code != 200:
            raise AuthenticationError(f"oidc: get {url}: {response.code} {body[:200]!r}")
        return body

    return lambda url: defer.ensureDeferred(fetch(url))


# --- the authenticator -------------------------------------------------------------------------
class _Compiled:
    def __init__(self, authenticator: dict) -> None:
        m = authenticator.get("claimMappings") or {}
        self.username = self._one("claims", (m.get("username") or {}).get("expression"))
        self.groups = self._one("claims", (m.get("groups") or {}).get("expression"))
        self.uid = self._one("claims", (m.get("uid") or {}).get("expression"))
        self.extra = [(e.get("key", ""), self._one("claims", e.get("valueExpression")))
                      for e in m.get("extra") or []]
        self.claim_rules = [(self._one("claims", r.get("expression")), r.get("message") or "",
                             r.get("expression"))
                            for r in authenticator.get("claimValidationRules") or []
                            if r.get("expression")]
        self.user_rules = [(self._one("user", r.get("expression")), r.get("message") or "",
                            r.get("expression"))
                           for r in authenticator.get("userValidationRules") or []
                           if r.get("expression")]

    @staticmethod
    def _one(var: str, expression: Optional[str]) -> Any:
        if not expression:
            return None
        program, err = compile_cel(var, expression)
        if err:
            raise ValueError(err)
        return program


@implementer(ITokenAuthenticator)
class JWTAuthenticator:
    """
    One C{jwt} authenticator of the configuration (a validated wire-form dict: C{issuer},
    C{claimMappings}, C{claimValidationRules}, C{userValidationRules}).
    """

    def __init__(self, config: dict, fetch: Callable[[str], Any], clock: Any,
                 signing_algorithms: Optional[list[str]] = None) -> None:
        """
        @param fetch: C{url -> Deferred of bytes}, see L{RemoteKeySet}.
        @param clock: C{IReactorTime}.
        @param signing_algorithms: allowed C{alg}s (default L{ALL_SIGNING_ALGORITHMS}, as with
            the configuration file; C{--oidc-signing-algs} defaults to C{RS256}).
        @raise ValueError: an expression does not compile.
        """
        self.config = config
        issuer = config.get("issuer") or {}
        self.issuer_url = issuer.get("url", "")
        self.audiences = list(issuer.get("audiences") or [])
        self.clock = clock
        self.algorithms = list(signing_algorithms or ALL_SIGNING_ALGORITHMS)
        self.key_set = RemoteKeySet(self.issuer_url, issuer.get("discoveryURL") or "", fetch,
                                    clock)
        self.compiled = _Compiled(config)
        self.required_claims = {r["claim"]: r.get("requiredValue", "")
                                for r in config.get("claimValidationRules") or []
                                if r.get("claim")}

    def authenticate_token(self, token: str) -> "defer.Deferred[UserInfo | None]":
        """
        @return: a Deferred of the user; of C{None} when the token is not a JWT of this
            issuer; it fails with L{AuthenticationError} (module docstring).
        """
        if not has_correct_issuer(self.issuer_url, token):
            return defer.succeed(None)
        return defer.ensureDeferred(self._authenticate(token))

    async def _verify(self, token: str) -> dict:
        try:
            header = pyjwt.get_unverified_header(token)
        except pyjwt.PyJWTError as e:
            raise AuthenticationError(f"oidc: verify token: oidc: malformed jwt: {e}") from None
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise AuthenticationError(
                f'oidc: verify token: oidc: id token signed with unsupported algorithm, '
                f'expected {json.dumps(self.algorithms)} got "{alg}"')
        kid = header.get("kid")
        payload = None
        for attempt in (False, True):
            try:
                keys = await self.key_set.keys_for(kid, force=attempt)
            except AuthenticationError as e:
                raise AuthenticationError(f"oidc: authenticator not initialized: {e}") from None
            for key in keys:
                try:
                    payload = pyjwt.decode(token, key.key, algorithms=[alg], options={
                        "verify_signature": True, "verify_exp": False, "verify_nbf": False,
                        "verify_iat": False, "verify_aud": False, "verify_iss": False,
                        "verify_sub": False, "verify_jti": False})
                    break
                except (pyjwt.InvalidSignatureError, pyjwt.InvalidKeyError,
                        pyjwt.InvalidAlgorithmError):
                    continue
                except pyjwt.PyJWTError as e:
                    raise AuthenticationError(f"oidc: verify token: oidc: malformed jwt: {e}") \
                        from None
            if payload is not None:
                break
        if payload is None:
            raise AuthenticationError("oidc: verify token: failed to verify signature: failed "
                                      "to verify id token signature")
        if payload.get("iss") != self.issuer_url:
            raise AuthenticationError(f'oidc: verify token: oidc: id token issued by a '
                                      f'different provider, expected "{self.issuer_url}" got '
                                      f'"{payload.get("iss")}"')
        aud = payload.get("aud")
        token_auds = [aud] if isinstance(aud, str) else [a for a in aud or []
                                                          if isinstance(a, str)]
        if not any(a in self.audiences for a in token_auds):
            if len(self.audiences) == 1:
                raise AuthenticationError(
                    f'oidc: verify token: oidc: expected audience "{self.audiences[0]}" got '
                    f'{json.dumps(token_auds)}')
            raise AuthenticationError(
                f"oidc: verify token: oidc: expected audience in {json.dumps(self.audiences)} "
                f"got {json.dumps(token_auds)}")
        now = self.clock.seconds()
        exp = payload.get("exp")
        if not isinstance(exp, (int, float)) or isinstance(exp, bool):
            raise AuthenticationError("oidc: verify token: oidc: malformed jwt payload: "
                                      "missing or invalid exp")
        if exp < now:
            raise AuthenticationError(f"oidc: verify token: oidc: token is expired (Token "
                                      f"Expiry: {int(exp)})")
        nbf = payload.get("nbf")
        if isinstance(nbf, (int, float)) and not isinstance(nbf, bool) and now + NBF_SKEW < nbf:
            raise AuthenticationError(f"oidc: verify token: oidc: current time is before the "
                                      f"nbf (not before) time: {int(nbf)}")
        return payload

    async def _authenticate(self, token: str) -> UserInfo:
        claims = await self._verify(token)
        mappings = self.config.get("claimMappings") or {}
        user = UserInfo(self._username(claims, mappings.get("username") or {}))
        user.groups = self._groups(claims, mappings.get("groups") or {})
        user.uid = self._uid(claims, mappings.get("uid") or {})
        user.extra = self._extra(claims)
        for claim, value in self.required_claims.items():
            if claim not in claims:
                raise AuthenticationError(f"oidc: required claim {claim} not present in ID "
                                          f"token")
            got = "" if claims[claim] is None else claims[claim]
            if not isinstance(got, str):
                raise AuthenticationError(f"oidc: parse claim {claim}: json: cannot unmarshal "
                                          f"{json_kind(got)} into Go value of type string")
            if got != value:
                raise AuthenticationError(f"oidc: required claim {claim} value does not match. "
                                          f"Got = {got}, want = {value}")
        for program, message, expression in self.compiled.claim_rules:
            ok = self._eval_bool(program, "claims", claims, "claim validation", expression)
            if not ok:
                raise AuthenticationError(
                    f"oidc: error evaluating claim validation expression: validation "
                    f"expression '{expression}' failed: {message}" if message else
                    f"oidc: error evaluating claim validation expression: validation "
                    f"expression '{expression}' failed")
        if self.compiled.user_rules:
            data = {"username": user.name, "uid": user.uid, "groups": list(user.groups),
                    "extra": {k: list(v) for k, v in user.extra.items()}}
            for program, message, expression in self.compiled.user_rules:
                ok = self._eval_bool(program, "user", data, "user info validation",
                                     expression)
                if not ok:
                    raise AuthenticationError(
                        f"oidc: error evaluating user info validation rule: validation "
                        f"expression '{expression}' failed: {message}" if message else
                        f"oidc: error evaluating user info validation rule: validation "
                        f"expression '{expression}' failed")
        return user

    @staticmethod
    def _eval_bool(program: Any, var: str, data: Any, what: str, expression: str) -> bool:
        try:
            value = eval_cel(program, var, data)
        except AuthenticationError as e:
            raise AuthenticationError(f"oidc: error evaluating {what} expression: {e}") from None
        if not isinstance(value, bool):
            raise AuthenticationError(f"oidc: error evaluating {what} expression: rule "
                                      f"'{expression}' must return a boolean")
        return value

    def _username(self, claims: dict, mapping: dict) -> str:
        if self.compiled.username is not None:
            try:
                value = eval_cel(self.compiled.username, "claims", claims)
            except AuthenticationError as e:
                raise AuthenticationError(f"oidc: error evaluating username claim expression: "
                                          f"{e}") from None
            if not isinstance(value, str):
                raise AuthenticationError("oidc: error evaluating username claim expression: "
                                          "username claim expression must return a string")
            if not value:
                raise AuthenticationError("oidc: empty username via CEL expression is not "
                                          "allowed")
            return value
        claim = mapping.get("claim", "")
        if claim not in claims:
            raise AuthenticationError(f'oidc: parse username claims "{claim}": claim not '
                                      f'present')
        value = "" if claims[claim] is None else claims[claim]  # Go: null leaves ""
        if not isinstance(value, str):
            raise AuthenticationError(f'oidc: parse username claims "{claim}": json: cannot '
                                      f'unmarshal {json_kind(value)} into Go value of type '
                                      f'string')
        if claim == "email" and "email_verified" in claims:
            verified = claims["email_verified"] or False  # Go: null leaves false
            if not isinstance(verified, bool):
                raise AuthenticationError(f"oidc: parse 'email_verified' claim: json: cannot "
                                          f"unmarshal {json_kind(verified)} into Go value of "
                                          f"type bool")
            if not verified:
                raise AuthenticationError("oidc: email not verified")
        prefix = mapping.get("prefix")
        return (prefix or "") + value

    def _groups(self, claims: dict, mapping: dict) -> list[str]:
        claim = mapping.get("claim", "")
        if claim and claim in claims:
            value = claims[claim]
            if value is None:  # Go: null leaves the list empty
                groups = []
            elif isinstance(value, str):
                groups = [value]
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                groups = list(value)
            else:
                raise AuthenticationError(f'oidc: parse groups claim "{claim}": json: cannot '
                                          f'unmarshal {json_kind(value)} into Go value of '
                                          f'type string')
            prefix = mapping.get("prefix") or ""
            return [prefix + g for g in groups]
        if self.compiled.groups is None:
            return []
        try:
            return _string_list(eval_cel(self.compiled.groups, "claims", claims))
        except AuthenticationError as e:
            raise AuthenticationError(f"oidc: error evaluating group claim expression: {e}") \
                from None

    def _uid(self, claims: dict, mapping: dict) -> str:
        claim = mapping.get("claim", "")
        if claim:
            if claim not in claims:
                raise AuthenticationError(f'oidc: parse uid claim "{claim}": claim not present')
            value = "" if claims[claim] is None else claims[claim]
            if not isinstance(value, str):
                raise AuthenticationError(f'oidc: parse uid claim "{claim}": json: cannot '
                                          f'unmarshal {json_kind(value)} into Go value of '
                                          f'type string')
            return value
        if self.compiled.uid is None:
            return ""
        try:
            value = eval_cel(self.compiled.uid, "claims", claims)
        except AuthenticationError as e:
            raise AuthenticationError(f"oidc: error evaluating uid claim expression: {e}") \
                from None
        if not isinstance(value, str):
            raise AuthenticationError("oidc: error evaluating uid claim expression: uid claim "
                                      "expression must return a string")
        return value

    def _extra(self, claims: dict) -> dict[str, list[str]]:
        extra: dict[str, list[str]] = {}
        jti = claims.get("jti")
        if isinstance(jti, str):
            extra[CREDENTIAL_ID_KEY] = [f"JTI={jti}"]
        for key, program in self.compiled.extra:
            try:
                values = _string_list(eval_cel(program, "claims", claims))
            except AuthenticationError as e:
                raise AuthenticationError(f"oidc: error evaluating extra claim expression: "
                                          f"{e}") from None
            if values:
                extra[key] = values
        return extra


__all__ = ["ALL_SIGNING_ALGORITHMS", "JWTAuthenticator", "RemoteKeySet", "compile_cel",
           "eval_cel", "has_correct_issuer", "https_fetcher"]
