# -*- test-case-name: tests.integration.test_tokens -*-
"""
Issue 5 (service-account tokens) with the real C{kubectl} against a real C{twistd -n kubeapi}:
C{kubectl create token} returns a JWT with upstream's claims, verifiable with the generated
C{sa.pub}, that authenticates requests as the ServiceAccount.
"""

from __future__ import annotations

import base64
import json
import os
import time

import jwt
from cryptography.hazmat.primitives import serialization
from twisted.trial.unittest import SkipTest, SynchronousTestCase

from kubetwist.authentication.serviceaccount_keys import key_id
from tests.integration.harness import ServerTestMixin, class_units, kubectl

ISSUER = "https://kubernetes.default.svc.cluster.local"


class TokenAcceptanceTests(ServerTestMixin, SynchronousTestCase):
    """C{kubectl create token} and the token's use, on the embedded store."""

    def wait_default_sa(self, namespace: str = "default", timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            r = self.server.kubectl("get", "sa", "default", "-n", namespace, "-o", "json",
                                    check=False)
            if r.returncode == 0:
                return json.loads(r.stdout)
            if time.monotonic() > deadline:
                raise AssertionError(f"no default ServiceAccount: {r.stderr}")
            time.sleep(0.2)

    def public_key(self):
        with open(os.path.join(self.server.data_dir, "pki", "sa.pub"), "rb") as f:
            return serialization.load_pem_public_key(f.read())

    def test_create_token_claims(self) -> None:
        """The JWT of C{kubectl create token default}: RS256 with the kid of sa.pub, and
        iss, sub, aud, exp = iat + 3600 = nbf + 3600, jti, kubernetes.io as upstream."""
        sa = self.wait_default_sa()
        before = int(time.time())
        token = self.server.kubectl("create", "token", "default").stdout.strip()
        after = int(time.time())
        header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
        key = self.public_key()
        self.assertEqual(header, {"alg": "RS256", "kid": key_id(key)})
        claims = jwt.decode(token, key, algorithms=["RS256"], audience=ISSUER, issuer=ISSUER)
        self.assertTrue(before <= claims["iat"] <= after)
        self.assertEqual((claims["nbf"], claims["exp"]), (claims["iat"], claims["iat"] + 3600))
        self.assertEqual(len(claims.pop("jti")), 36)
        for k in ("iat", "nbf", "exp"):
            claims.pop(k)
        self.assertEqual(claims, {
            "aud": [ISSUER], "iss": ISSUER, "sub": "system:serviceaccount:default:default",
            "kubernetes.io": {"namespace": "default", "serviceaccount": {
                "name": "default", "uid": sa["metadata"]["uid"]}}})

    def test_create_token_options(self) -> None:
        """C{--duration} and C{--audience} reach the TokenRequest; C{-o json} shows it."""
        self.wait_default_sa()
        out = self.server.kubectl("create", "token", "default", "--duration=2h",
                                  "--audience=vault", "-o", "json").stdout
        tr = json.loads(out)
        self.assertEqual((tr["kind"], tr["apiVersion"]),
                         ("TokenRequest", "authentication.k8s.io/v1"))
        self.assertEqual(tr["spec"], {"audiences": ["vault"], "expirationSeconds": 7200,
                                      "boundObjectRef": None})
        claims = jwt.decode(tr["status"]["token"], self.public_key(), algorithms=["RS256"],
                            audience="vault")
        self.assertEqual(claims["exp"] - claims["iat"], 7200)
        r = self.server.kubectl("create", "token", "missing", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.stderr.strip(),
                         'error: failed to create token: serviceaccounts "missing" not found')

    def test_token_authenticates(self) -> None:
        """The token (no client certificate) is the ServiceAccount: refused by RBAC (the
        default mode) as that user until a RoleBinding grants it, then served; a token for
        another audience or a tampered one is 401."""
        self.wait_default_sa()
        token = self.server.kubectl("create", "token", "default").stdout.strip()
        path = "/api/v1/namespaces/default/serviceaccounts/default"
        r = self.server.request("GET", path, client_cert=False, token=token)
        self.assertEqual(r.status, 403)
        self.assertEqual(r.json()["message"], (
            'serviceaccounts "default" is forbidden: User "system:serviceaccount:default:'
            'default" cannot get resource "serviceaccounts" in API group "" in the namespace '
            '"default"'))
        self.server.kubectl("create", "role", "sa-reader", "--verb=get",
                            "--resource=serviceaccounts")
        self.server.kubectl("create", "rolebinding", "default-sa-reader", "--role=sa-reader",
                            "--serviceaccount=default:default")
        deadline = time.monotonic() + 10
        while True:
            r = self.server.request("GET", path, client_cert=False, token=token)
            if r.status != 403 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json()["metadata"]["name"], "default")
        r = self.server.request("GET", "/api/v1/namespaces", client_cert=False,
                                token=token[:-4] + ("AAAA" if not token.endswith("AAAA")
                                                    else "BBBB"))
        self.assertEqual(r.status, 401)
        other = self.server.kubectl("create", "token", "default", "--audience=vault").stdout
        r = self.server.request("GET", "/api/v1/namespaces", client_cert=False,
                                token=other.strip())
        self.assertEqual(r.status, 401)

    def test_whoami(self) -> None:
        """C{kubectl auth whoami} with only the token (no client certificate) names the
        ServiceAccount and its groups; skipped while SelfSubjectReview is not served."""
        self.wait_default_sa()
        r = self.server.request("GET", "/apis/authentication.k8s.io/v1")
        if r.status != 200 or "selfsubjectreviews" not in r.body.decode():
            raise SkipTest("authentication.k8s.io/v1 selfsubjectreviews is not served")
        token = self.server.kubectl("create", "token", "default").stdout.strip()
        out = kubectl("auth", "whoami", "-o", "json", f"--server={self.server.url}",
                      f"--certificate-authority={self.server.ca_file}", f"--token={token}",
                      kubeconfig=os.devnull).stdout
        info = json.loads(out)["status"]["userInfo"]
        self.assertEqual((info["username"], info["groups"]), (
            "system:serviceaccount:default:default",
            ["system:serviceaccounts", "system:serviceaccounts:default",
             "system:authenticated"]))

    def test_openid_discovery(self) -> None:
        """The JWKS served at /openid/v1/jwks verifies the tokens."""
        self.wait_default_sa()
        conf = self.server.request("GET", "/.well-known/openid-configuration").json()
        self.assertEqual((conf["issuer"], conf["id_token_signing_alg_values_supported"]),
                         (ISSUER, ["RS256"]))
        keys = self.server.request("GET", "/openid/v1/jwks").json()
        token = self.server.kubectl("create", "token", "default").stdout.strip()
        kid = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))["kid"]
        signer = jwt.PyJWKSet.from_dict(keys)[kid]
        self.assertEqual(jwt.decode(token, signer.key, algorithms=["RS256"],
                                    audience=ISSUER)["sub"],
                         "system:serviceaccount:default:default")


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
