"""
Tests for L{kubetwist.authentication.oidc} and L{kubetwist.authentication.authnconfig}: JWT
authenticators with keys from a (fake, asynchronous) issuer, claim mappings, CEL rules, and
the configuration file's validation.
"""

from __future__ import annotations

import json
import os
import tempfile

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.authenticator import AuthenticationError
from kubetwist.authentication.authnconfig import (
    ConfigError,
    authentication_config,
    load_authentication_config,
    oidc_flags_config,
)
from kubetwist.authentication.oidc import JWTAuthenticator

ISSUER = "https://issuer.example"
NOW = 1_700_000_000
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _jwk(key, kid, alg):
    j = json.loads(jwt.algorithms.get_default_algorithms()[alg].to_jwk(key.public_key()))
    j.update(kid=kid, alg=alg, use="sig")
    return j


class FakeIssuer:
    """Answers the discovery document and the key set; fetches wait until C{release}."""

    def __init__(self, keys=None, issuer=ISSUER, hold=False):
        self.keys = keys if keys is not None else [_jwk(RSA_KEY, "k1", "RS256"),
                                                   _jwk(EC_KEY, "k2", "ES256")]
        self.issuer = issuer
        self.fetched = []
        self.hold = hold
        self.pending = []

    def fetch(self, url):
        self.fetched.append(url)
        if url == ISSUER + "/.well-known/openid-configuration":
            body = json.dumps({"issuer": self.issuer, "jwks_uri": ISSUER + "/keys"}).encode()
        elif url == ISSUER + "/keys":
            body = json.dumps({"keys": self.keys}).encode()
        else:
            return defer.fail(AuthenticationError(f"oidc: get {url}: 404"))
        if self.hold:
            d = defer.Deferred()
            self.pending.append((d, body))
            return d
        return defer.succeed(body)

    def release(self):
        while self.pending:
            d, body = self.pending.pop(0)
            d.callback(body)


def token(claims=None, key=RSA_KEY, kid="k1", alg="RS256", **overrides):
    payload = {"iss": ISSUER, "aud": "kubernetes", "sub": "u1", "exp": NOW + 600,
               "iat": NOW, **(claims or {})}
    payload.update(overrides)
    payload = {k: v for k, v in payload.items() if v is not None}
    return jwt.encode(payload, key, algorithm=alg, headers={"kid": kid})


def config(**kw):
    out = {"issuer": {"url": ISSUER, "audiences": ["kubernetes"]},
           "claimMappings": {"username": {"claim": "sub", "prefix": ""}}}
    for k, v in kw.items():
        out[k] = v
    return out


class JWTAuthenticatorTests(SynchronousTestCase):
    def authn(self, cfg=None, issuer=None, algs=None):
        self.clock = Clock()
        self.clock.advance(NOW)
        self.issuer = issuer or FakeIssuer()
        return JWTAuthenticator(cfg or config(), self.issuer.fetch, self.clock, algs)

    def result(self, d):
        out = []
        d.addBoth(out.append)
        self.assertEqual(len(out), 1, "not fired")
        if hasattr(out[0], "raiseException"):
            out[0].raiseException()
        return out[0]

    def test_user(self):
        """A valid token is the user of the mappings; credential id from jti."""
        a = self.authn(config(claimMappings={
            "username": {"claim": "email", "prefix": "oidc:"},
            "groups": {"claim": "groups", "prefix": "g:"},
            "uid": {"claim": "sub"}}))
        user = self.result(a.authenticate_token(token(
            {"email": "jane@example.com", "email_verified": True, "groups": ["a", "b"],
             "jti": "t1"})))
        self.assertEqual((user.name, user.uid, user.groups, user.extra), (
            "oidc:jane@example.com", "u1", ["g:a", "g:b"],
            {"authentication.kubernetes.io/credential-id": ["JTI=t1"]}))

    def test_keys_fetched_once_asynchronously(self):
        """Keys come from discovery then the JWKS, without blocking; later tokens reuse
        them; an unknown kid refetches the set."""
        issuer = FakeIssuer(hold=True)
        a = self.authn(issuer=issuer)
        d = a.authenticate_token(token())
        out = []
        d.addBoth(out.append)
        self.assertEqual(out, [])
        issuer.release()
        issuer.release()
        self.assertEqual(out[0].name, "u1")
        issuer.hold = False
        self.assertEqual(self.result(a.authenticate_token(token(kid="k2", key=EC_KEY,
                                                                alg="ES256"))).name, "u1")
        self.assertEqual(len(issuer.fetched), 2)
        issuer.keys.append(_jwk(OTHER_KEY, "k3", "RS256"))
        self.clock.advance(11)
        self.assertEqual(self.result(a.authenticate_token(token(kid="k3", key=OTHER_KEY))).name,
                         "u1")
        self.assertEqual(issuer.fetched[-1], ISSUER + "/keys")

    def test_other_issuer_is_not_ours(self):
        a = self.authn()
        self.assertIsNone(self.result(a.authenticate_token(token(iss="https://other"))))
        self.assertIsNone(self.result(a.authenticate_token("not-a-jwt")))
        self.assertEqual(self.issuer.fetched, [])

    def test_bad_tokens(self):
        """Table: each bad token fails with upstream's reason."""
        cases = [
            (token(key=OTHER_KEY), "oidc: verify token: failed to verify signature: failed to "
                                   "verify id token signature"),
            (token(aud="other"), 'oidc: verify token: oidc: expected audience "kubernetes" '
                                 'got ["other"]'),
            (token(exp=NOW - 1), "oidc: verify token: oidc: token is expired (Token Expiry: "
                                 f"{NOW - 1})"),
            (token(nbf=NOW + 301), "oidc: verify token: oidc: current time is before the nbf "
                                   f"(not before) time: {NOW + 301}"),
            (token(key=EC_KEY, kid="k2", alg="ES256"),
             'oidc: verify token: oidc: id token signed with unsupported algorithm, expected '
             '["RS256"] got "ES256"'),
            (token(sub=None), 'oidc: parse username claims "sub": claim not present'),
            (token(sub=5), 'oidc: parse username claims "sub": json: cannot unmarshal number '
                           'into Go value of type string'),
            (token(exp=None), "oidc: verify token: oidc: malformed jwt payload: missing or "
                              "invalid exp"),
        ]
        a = self.authn(algs=["RS256"])
        for t, message in cases:
            with self.assertRaises(AuthenticationError) as e:
                self.result(a.authenticate_token(t))
            self.assertEqual(str(e.exception), message)

    def test_issuer_discovery_mismatch(self):
        """A discovery document of another issuer: not initialized."""
        a = self.authn(issuer=FakeIssuer(issuer="https://evil"))
        with self.assertRaises(AuthenticationError) as e:
            self.result(a.authenticate_token(token()))
        self.assertIn("oidc: authenticator not initialized: oidc: issuer did not match",
                      str(e.exception))

    def test_unreachable_issuer_not_hammered(self):
        """A failed key fetch answers later tokens at once, until 10 s have passed."""
        issuer = FakeIssuer()
        a = self.authn(issuer=issuer)
        a.key_set.fetch = lambda url: (issuer.fetched.append(url), defer.fail(
            AuthenticationError(f"oidc: get {url}: connection refused")))[1]
        for _ in range(3):
            with self.assertRaises(AuthenticationError) as e:
                self.result(a.authenticate_token(token()))
        self.assertEqual(str(e.exception), "oidc: authenticator not initialized: oidc: get "
                         "https://issuer.example/.well-known/openid-configuration: connection "
                         "refused")
        self.assertEqual(len(issuer.fetched), 1)
        self.clock.advance(10)
        a.key_set.fetch = issuer.fetch
        self.assertEqual(self.result(a.authenticate_token(token())).name, "u1")

    def test_null_claims(self):
        """JSON null claims read as Go reads them: no groups, empty strings, false."""
        a = self.authn(config(claimMappings={"username": {"claim": "sub", "prefix": "p:"},
                                             "groups": {"claim": "groups", "prefix": "g:"}}))
        def raw(**claims):
            payload = {"iss": ISSUER, "aud": "kubernetes", "sub": "u1", "exp": NOW + 600,
                       **claims}
            return jwt.encode(payload, RSA_KEY, algorithm="RS256", headers={"kid": "k1"})

        user = self.result(a.authenticate_token(raw(groups=None)))
        self.assertEqual((user.name, user.groups), ("p:u1", []))
        a = self.authn(config(claimMappings={"username": {"claim": "email", "prefix": ""}}))
        with self.assertRaises(AuthenticationError) as e:
            self.result(a.authenticate_token(raw(email="x@y", email_verified=None)))
        self.assertEqual(str(e.exception), "oidc: email not verified")

    def test_email_verified(self):
        a = self.authn(config(claimMappings={"username": {"claim": "email", "prefix": ""}}))
        with self.assertRaises(AuthenticationError) as e:
            self.result(a.authenticate_token(token({"email": "x@y", "email_verified": False})))
        self.assertEqual(str(e.exception), "oidc: email not verified")
        self.assertEqual(self.result(a.authenticate_token(token({"email": "x@y"}))).name, "x@y")

    def test_cel_mappings_and_rules(self):
        """Username, groups, uid and extra by CEL; claim and user validation rules."""
        a = self.authn(config(
            claimMappings={
                "username": {"expression": "claims.sub + ':ext'"},
                "groups": {"expression": "claims.roles.map(r, 'role:' + r)"},
                "uid": {"expression": "'uid-' + claims.sub"},
                "extra": [{"key": "example.com/tenant", "valueExpression": "claims.tenant"},
                          {"key": "example.com/empty", "valueExpression": "''"}]},
            claimValidationRules=[{"expression": "claims.tenant == 'acme'",
                                   "message": "wrong tenant"},
                                  {"claim": "hd", "requiredValue": "example.com"}],
            userValidationRules=[{"expression": "!user.username.startsWith('system:')",
                                  "message": "no system users"}]))
        good = {"roles": ["a", "b"], "tenant": "acme", "hd": "example.com"}
        user = self.result(a.authenticate_token(token(good)))
        self.assertEqual((user.name, user.uid, user.groups, user.extra), (
            "u1:ext", "uid-u1", ["role:a", "role:b"], {"example.com/tenant": ["acme"]}))
        cases = [
            ({**good, "tenant": "other"}, "oidc: error evaluating claim validation expression: "
             "validation expression 'claims.tenant == 'acme'' failed: wrong tenant"),
            ({**good, "hd": "x"}, "oidc: required claim hd value does not match. Got = x, "
             "want = example.com"),
            ({k: v for k, v in good.items() if k != "hd"},
             "oidc: required claim hd not present in ID token"),
            ({**good, "sub": "system:x"}, "oidc: error evaluating user info validation rule: "
             "validation expression '!user.username.startsWith('system:')' failed: no system "
             "users"),
            ({k: v for k, v in good.items() if k != "roles"},
             "oidc: error evaluating group claim expression: no such key: roles"),
        ]
        for claims, message in cases:
            with self.assertRaises(AuthenticationError) as e:
                self.result(a.authenticate_token(token(claims)))
            self.assertEqual(str(e.exception), message)

    def test_empty_username_expression(self):
        a = self.authn(config(claimMappings={"username": {"expression": "''"}}))
        with self.assertRaises(AuthenticationError) as e:
            self.result(a.authenticate_token(token()))
        self.assertEqual(str(e.exception),
                         "oidc: empty username via CEL expression is not allowed")


class ConfigFileTests(SynchronousTestCase):
    def write(self, text):
        fd, path = tempfile.mkstemp(suffix=".yaml")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        self.addCleanup(os.unlink, path)
        return path

    def test_load(self):
        path = self.write("""
apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer: {url: "https://issuer.example", audiences: [kubernetes]}
  claimMappings: {username: {claim: sub, prefix: ""}}
anonymous:
  enabled: true
  conditions: [{path: /livez}]
""")
        cfg = authentication_config(path, True, False, None, [])
        self.assertEqual(cfg["anonymous"], {"enabled": True, "conditions": [{"path": "/livez"}]})
        self.assertEqual(cfg["jwt"][0]["issuer"]["url"], "https://issuer.example")

    def test_errors_are_one_line(self):
        """Table: bad files and combinations give upstream's one-line errors."""
        head = "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n"
        jwt0 = ('jwt:\n- issuer: {url: "%s", audiences: %s}\n'
                '  claimMappings: {username: %s}\n')
        cases = [
            ("", None, "empty config file"),
            ("apiVersion: v1\nkind: Pod\n", None, 'no kind "Pod" is registered for version '
                                                  '"v1"'),
            (head + ": :\n  - [", None, "error converting YAML to JSON"),
            (head + jwt0 % ("http://i", "[k]", '{claim: sub, prefix: ""}'), None,
             'jwt[0].issuer.url: Invalid value: '
             '"http://i": URL scheme must be https'),
            (head + jwt0 % ("https://i", "[]", '{claim: sub, prefix: ""}'), None,
             "jwt[0].issuer.audiences: Required value: "
             "at least one jwt[0].issuer.audiences is required"),
            (head + jwt0 % ("https://i", "[k]", "{claim: sub}"), None,
             "jwt[0].claimMappings.username.prefix: "
             "Required value: prefix is required when claim is set. It can be set to an empty "
             "string to disable prefixing"),
            (head + jwt0 % ("https://i", "[k]", '{expression: "claims.sub +"}'), None,
             "jwt[0].claimMappings.username.expression: Invalid value: \"claims.sub +\": "
             "compilation failed: ERROR: <input>:1:"),
            (head + jwt0 % ("https://kubernetes.default.svc", "[k]",
                            '{claim: sub, prefix: ""}'), None,
             "URL must not overlap with disallowed issuers: [https://kubernetes.default.svc]"),
            (head + "anonymous: {enabled: false, conditions: [{path: /livez}]}\n", None,
             "anonymous.conditions: Invalid value: "
             '[]apiserver.AnonymousAuthCondition{apiserver.AnonymousAuthCondition{Path:"/livez"}}: '
             "enabled should be set to true when conditions are defined"),
        ]
        for text, flag, message in cases:
            path = self.write(text)
            with self.assertRaises(ConfigError) as e:
                authentication_config(path, True, flag == "flag", None,
                                      ["https://kubernetes.default.svc"])
            self.assertIn(message, str(e.exception), text)
            self.assertNotIn("\n", str(e.exception))

    def test_missing_file(self):
        with self.assertRaises(ConfigError) as e:
            load_authentication_config("/nonexistent/authn.yaml")
        self.assertEqual(str(e.exception), 'failed to load authentication configuration from '
                         'file "/nonexistent/authn.yaml": open /nonexistent/authn.yaml: no '
                         'such file or directory')

    def test_oidc_flags(self):
        """Upstream's conversion of --oidc-*: issuer# prefix unless email or given; '-'."""
        self.assertEqual(oidc_flags_config(ISSUER, "k")["claimMappings"],
                         {"username": {"claim": "sub", "prefix": ISSUER + "#"}})
        self.assertEqual(oidc_flags_config(ISSUER, "k", "email")["claimMappings"]["username"],
                         {"claim": "email", "prefix": ""})
        self.assertEqual(oidc_flags_config(ISSUER, "k", username_prefix="-")["claimMappings"][
            "username"], {"claim": "sub", "prefix": ""})
        cfg = oidc_flags_config(ISSUER, "k", groups_claim="g", groups_prefix="p:",
                                required_claims={"hd": "x"})
        self.assertEqual((cfg["claimMappings"]["groups"], cfg["claimValidationRules"]),
                         ({"claim": "g", "prefix": "p:"}, [{"claim": "hd",
                                                             "requiredValue": "x"}]))
