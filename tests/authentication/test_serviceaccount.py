"""
Tests for L{kubetwist.authentication.serviceaccount} and
L{kubetwist.authentication.serviceaccount_keys}.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.authenticator import AuthenticationError
from kubetwist.authentication.serviceaccount import (
    ServiceAccountTokenAuthenticator,
    TokenGenerator,
    claims,
    jwk,
    jwks,
    openid_configuration,
    signing_algorithm,
)
from kubetwist.authentication.serviceaccount_keys import (
    generate_key_pair,
    key_id,
    load_service_account_keys,
    private_key_from_bytes,
    public_keys_from_bytes,
)
from tests.authentication.fakes import resolved
from tests.support import SA_ISSUER, SA_SIGNING_KEY_PEM

SA = {"apiVersion": "v1", "kind": "ServiceAccount",
      "metadata": {"name": "default", "namespace": "ns1", "uid": "sa-uid"}}
NOW = 1_700_000_000


def _parts(token: str) -> tuple[dict, dict]:
    def dec(p: str) -> dict:
        return json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
    h, p, _ = token.split(".")
    return dec(h), dec(p)


def _raw_payload(token: str) -> bytes:
    p = token.split(".")[1]
    return base64.urlsafe_b64decode(p + "=" * (-len(p) % 4))


class ClaimsTests(SynchronousTestCase):
    """Upstream C{serviceaccount.Claims}."""

    def test_plain(self) -> None:
        """An unbound token's claims: sub, aud list, iat=nbf=now, exp=now+ttl, the
        kubernetes.io namespace and serviceaccount ref, in sorted key order."""
        c = claims(SA, NOW, 3600, ["api"], jti="j-1")
        self.assertEqual(c, {
            "aud": ["api"], "exp": NOW + 3600, "iat": NOW, "jti": "j-1",
            "kubernetes.io": {"namespace": "ns1",
                              "serviceaccount": {"name": "default", "uid": "sa-uid"}},
            "nbf": NOW, "sub": "system:serviceaccount:ns1:default"})
        self.assertEqual(list(c), ["aud", "exp", "iat", "jti", "kubernetes.io", "nbf", "sub"])

    def test_pod_bound(self) -> None:
        """A Pod-bound token names the pod and its node; warnafter is now + seconds."""
        pod = {"metadata": {"name": "p", "uid": "pod-uid"}}
        node = {"metadata": {"name": "n", "uid": "node-uid"}}
        c = claims(SA, NOW, 100, ["a"], pod=pod, node=node, jti="x", warnafter=3607)
        self.assertEqual(c["kubernetes.io"], {
            "namespace": "ns1", "node": {"name": "n", "uid": "node-uid"},
            "pod": {"name": "p", "uid": "pod-uid"},
            "serviceaccount": {"name": "default", "uid": "sa-uid"}, "warnafter": NOW + 3607})

    def test_secret_bound(self) -> None:
        """A Secret-bound token names the secret."""
        c = claims(SA, NOW, 100, ["a"], secret={"metadata": {"name": "s", "uid": "su"}})
        self.assertEqual(c["kubernetes.io"]["secret"], {"name": "s", "uid": "su"})
        self.assertNotIn("pod", c["kubernetes.io"])

    def test_random_jti(self) -> None:
        """Without a jti, each token gets a fresh UUID."""
        a, b = claims(SA, NOW, 1, []), claims(SA, NOW, 1, [])
        self.assertEqual(len(a["jti"]), 36)
        self.assertNotEqual(a["jti"], b["jti"])


class KeyTests(SynchronousTestCase):
    """Key ids, algorithms, loading and generation."""

    def setUp(self) -> None:
        self.key = private_key_from_bytes(SA_SIGNING_KEY_PEM)

    def test_key_id(self) -> None:
        """The kid is the unpadded base64url SHA-256 of the PKIX DER public key."""
        der = self.key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        expected = base64.urlsafe_b64encode(hashlib.sha256(der).digest()).decode().rstrip("=")
        self.assertEqual(key_id(self.key.public_key()), expected)
        self.assertEqual(len(expected), 43)

    def test_algorithms(self) -> None:
        """RS256 for RSA; ES256/384/512 by curve."""
        self.assertEqual(signing_algorithm(self.key), "RS256")
        self.assertEqual(signing_algorithm(ec.generate_private_key(ec.SECP256R1())), "ES256")
        self.assertEqual(signing_algorithm(ec.generate_private_key(ec.SECP384R1())), "ES384")
        self.assertEqual(signing_algorithm(ec.generate_private_key(ec.SECP521R1())), "ES512")
        self.assertRaises(ValueError, signing_algorithm, "not a key")

    def test_public_keys_from_mixed_pem(self) -> None:
        """Public keys come from private and public key blocks alike, in order."""
        other = ec.generate_private_key(ec.SECP256R1())
        pem = SA_SIGNING_KEY_PEM + other.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        keys = public_keys_from_bytes(pem)
        self.assertEqual([key_id(k) for k in keys],
                         [key_id(self.key.public_key()), key_id(other.public_key())])
        with self.assertRaises(ValueError) as e:
            public_keys_from_bytes(b"nothing", "f.pem")
        self.assertEqual(str(e.exception),
                         "data in f.pem does not contain any valid RSA or ECDSA public keys")

    def test_generate_once(self) -> None:
        """Without key files an RSA 2048 sa.key/sa.pub pair is made once, then reused."""
        d = tempfile.mkdtemp()
        self.addCleanup(lambda: [os.unlink(os.path.join(d, f)) for f in os.listdir(d)])
        first = load_service_account_keys(cert_dir=d)
        self.assertEqual(sorted(os.listdir(d)), ["sa.key", "sa.pub"])
        self.assertEqual(os.stat(os.path.join(d, "sa.key")).st_mode & 0o777, 0o600)
        self.assertIsInstance(first.signing_key, rsa.RSAPrivateKey)
        self.assertEqual(first.signing_key.key_size, 2048)
        second = load_service_account_keys(cert_dir=d)
        self.assertEqual(key_id(second.signing_key.public_key()),
                         key_id(first.signing_key.public_key()))
        self.assertEqual([key_id(k) for k in second.public_keys],
                         [key_id(first.signing_key.public_key())])
        self.assertEqual(generate_key_pair(d), (os.path.join(d, "sa.key"),
                                                os.path.join(d, "sa.pub")))


class GeneratorTests(SynchronousTestCase):
    """L{TokenGenerator}: upstream's JWT form."""

    def test_token_form(self) -> None:
        """Header {"alg":"RS256","kid":...} only; payload keys sorted, compact, with iss."""
        key = private_key_from_bytes(SA_SIGNING_KEY_PEM)
        token = TokenGenerator(SA_ISSUER, key).generate(claims(SA, NOW, 3600, ["x"], jti="j"))
        header = _parts(token)[0]
        self.assertEqual(header, {"alg": "RS256", "kid": key_id(key.public_key())})
        self.assertEqual(list(json.loads(base64.urlsafe_b64decode(
            token.split(".")[0] + "==="))), ["alg", "kid"])
        self.assertEqual(_raw_payload(token), (
            b'{"aud":["x"],"exp":1700003600,"iat":1700000000,'
            b'"iss":"https://kubernetes.default.svc.cluster.local","jti":"j",'
            b'"kubernetes.io":{"namespace":"ns1","serviceaccount":{"name":"default",'
            b'"uid":"sa-uid"}},"nbf":1700000000,"sub":"system:serviceaccount:ns1:default"}'
        ))
        decoded = jwt.decode(token, key.public_key(), algorithms=["RS256"], audience="x",
                             options={"verify_exp": False})
        self.assertEqual(decoded["sub"], "system:serviceaccount:ns1:default")

    def test_ecdsa(self) -> None:
        """An ECDSA P-384 key signs ES384."""
        key = ec.generate_private_key(ec.SECP384R1())
        token = TokenGenerator("iss", key).generate(claims(SA, NOW, 1, ["x"]))
        self.assertEqual(_parts(token)[0]["alg"], "ES384")


class AuthenticatorTests(SynchronousTestCase):
    """L{ServiceAccountTokenAuthenticator}: upstream C{JWTTokenAuthenticator} + validator."""

    def setUp(self) -> None:
        self.key = private_key_from_bytes(SA_SIGNING_KEY_PEM)
        self.clock = Clock()
        self.clock.advance(NOW)
        self.gen = TokenGenerator(SA_ISSUER, self.key)
        self.auth = ServiceAccountTokenAuthenticator(
            [SA_ISSUER], [self.key.public_key()], [SA_ISSUER], self.clock)

    def mint(self, ttl: int = 3600, aud=(SA_ISSUER,), **kw) -> str:
        return self.gen.generate(claims(SA, NOW, ttl, list(aud), jti="the-jti", **kw))

    def assertRefused(self, token: str, message: str) -> None:
        with self.assertRaises(AuthenticationError) as e:
            resolved(self.auth.authenticate_token(token))
        self.assertEqual(str(e.exception), message)

    def test_accepts(self) -> None:
        """A minted token is the service account user with its groups and credential id."""
        user = resolved(self.auth.authenticate_token(self.mint()))
        self.assertEqual(user.to_user_info(), {
            "username": "system:serviceaccount:ns1:default", "uid": "sa-uid",
            "groups": ["system:serviceaccounts", "system:serviceaccounts:ns1"],
            "extra": {"authentication.kubernetes.io/credential-id": ["JTI=the-jti"]}})

    def test_pod_extra(self) -> None:
        """A Pod-bound token adds pod-name/pod-uid and node-name/node-uid extras."""
        user = resolved(self.auth.authenticate_token(self.mint(
            pod={"metadata": {"name": "p", "uid": "pu"}},
            node={"metadata": {"name": "n", "uid": "nu"}})))
        self.assertEqual(user.extra, {
            "authentication.kubernetes.io/pod-name": ["p"],
            "authentication.kubernetes.io/pod-uid": ["pu"],
            "authentication.kubernetes.io/credential-id": ["JTI=the-jti"],
            "authentication.kubernetes.io/node-name": ["n"],
            "authentication.kubernetes.io/node-uid": ["nu"]})

    def test_expired(self) -> None:
        """Past exp by more than the 60 s leeway: refused; within it: accepted."""
        token = self.mint(ttl=600)
        self.clock.advance(660)
        self.assertIsNotNone(resolved(self.auth.authenticate_token(token)))
        self.clock.advance(1)
        self.assertRefused(token, "service account token has expired")

    def test_not_yet_valid(self) -> None:
        """A token whose nbf is beyond the leeway is refused."""
        self.clock.advance(-61)
        self.assertRefused(self.mint(), "service account token is not valid yet")

    def test_wrong_issuer(self) -> None:
        """Another issuer's token is not ours: no opinion (None)."""
        token = TokenGenerator("https://other", self.key).generate(
            claims(SA, NOW, 3600, [SA_ISSUER]))
        self.assertIsNone(resolved(self.auth.authenticate_token(token)))
        self.assertIsNone(resolved(self.auth.authenticate_token("not-a-jwt")))

    def test_wrong_audience(self) -> None:
        """A token for other audiences is refused with upstream's message."""
        self.assertRefused(self.mint(aud=("foo", "bar")),
                           'token audiences ["foo" "bar"] is invalid for the target audiences '
                           '["https://kubernetes.default.svc.cluster.local"]')

    def test_bad_signature(self) -> None:
        """A token signed by another key is refused."""
        other = TokenGenerator(SA_ISSUER, rsa.generate_private_key(65537, 2048))
        self.assertRefused(other.generate(claims(SA, NOW, 3600, [SA_ISSUER])),
                           "go-jose/go-jose: error in cryptographic primitive")
        good = self.mint()
        h, _, s = good.split(".")
        tampered = h + "." + base64.urlsafe_b64encode(json.dumps(dict(
            _parts(good)[1], sub="system:serviceaccount:ns1:admin")).encode()).decode().rstrip(
            "=") + "." + s
        self.assertRefused(tampered, "go-jose/go-jose: error in cryptographic primitive")


class OpenIDTests(SynchronousTestCase):
    """OIDC discovery documents."""

    def test_jwks_rsa(self) -> None:
        """An RSA key as go-jose writes it: use, kty, kid, alg, n, e."""
        key = private_key_from_bytes(SA_SIGNING_KEY_PEM).public_key()
        j = jwk(key)
        self.assertEqual(list(j), ["use", "kty", "kid", "alg", "n", "e"])
        self.assertEqual((j["use"], j["kty"], j["kid"], j["alg"], j["e"]),
                         ("sig", "RSA", key_id(key), "RS256", "AQAB"))
        self.assertEqual(jwt.algorithms.RSAAlgorithm.from_jwk(json.dumps(j)).public_numbers(),
                         key.public_numbers())
        self.assertEqual(jwks([key, key]), {"keys": [j]})

    def test_jwks_ec(self) -> None:
        """An EC key: use, kty, kid, crv, alg, x, y."""
        key = ec.generate_private_key(ec.SECP256R1()).public_key()
        j = jwk(key)
        self.assertEqual(list(j), ["use", "kty", "kid", "crv", "alg", "x", "y"])
        self.assertEqual((j["crv"], j["alg"]), ("P-256", "ES256"))

    def test_openid_configuration(self) -> None:
        """The discovery document's fields."""
        key = private_key_from_bytes(SA_SIGNING_KEY_PEM).public_key()
        self.assertEqual(openid_configuration("https://iss", "https://h/openid/v1/jwks", [key]), {
            "issuer": "https://iss", "jwks_uri": "https://h/openid/v1/jwks",
            "response_types_supported": ["id_token"], "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"]})


class FlagTests(SynchronousTestCase):
    """The C{--service-account-*} and C{--api-audiences} flags."""

    def parse(self, *args: str):
        from kubetwist.tap import Options

        o = Options()
        o.parseOptions(["--data-dir", tempfile.mkdtemp(), *args])
        return o

    def test_defaults(self) -> None:
        """Default issuer, no audiences (the issuers are used), no maximum, no key files."""
        o = self.parse()
        self.assertEqual((o["service-account-issuer"], o["api-audiences"],
                          o["service-account-max-token-expiration"],
                          o["service-account-key-file"], o["service-account-signing-key-file"]),
                         ([SA_ISSUER], [], 0, [], ""))

    def test_repeatable(self) -> None:
        """Issuers repeat; audiences are a comma list; the maximum is a duration."""
        o = self.parse("--service-account-issuer=https://a", "--service-account-issuer=b",
                       "--api-audiences=x,y", "--service-account-max-token-expiration=2h")
        self.assertEqual((o["service-account-issuer"], o["api-audiences"],
                          o["service-account-max-token-expiration"]),
                         (["https://a", "b"], ["x", "y"], 7200))

    def test_bad_values(self) -> None:
        """A maximum under an hour, or key files without a signing key, exit with status 1."""
        self.assertRaises(SystemExit, self.parse, "--service-account-max-token-expiration=10m")
        fd, path = tempfile.mkstemp()
        os.write(fd, SA_SIGNING_KEY_PEM)
        os.close(fd)
        self.addCleanup(os.unlink, path)
        self.assertRaises(SystemExit, self.parse, f"--service-account-key-file={path}")
        o = self.parse(f"--service-account-signing-key-file={path}")
        keys = load_service_account_keys(o["service-account-signing-key-file"],
                                         o["service-account-key-file"])
        self.assertEqual([key_id(k) for k in keys.public_keys],
                         [key_id(private_key_from_bytes(SA_SIGNING_KEY_PEM).public_key())])
