"""
Tests for L{kubetwist.registry.core.serviceaccount_token}: the C{serviceaccounts/<name>/token}
subresource over the whole chain, and tokens authenticating requests.
"""

from __future__ import annotations

import base64
import json

import jwt

from kubetwist.authentication.serviceaccount_keys import key_id, private_key_from_bytes
from tests.authentication.fakes import resolved
from tests.support import SA_ISSUER, SA_SIGNING_KEY_PEM, KubeTestCase

TOKEN = "/api/v1/namespaces/default/serviceaccounts/{}/token"
NOW = 1_700_000_000


def _payload(token: str) -> dict:
    p = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))


class TokenRequestTests(KubeTestCase):
    """POST of a TokenRequest."""

    def setUp(self) -> None:
        super().setUp()
        code, sa, _ = self.request("POST", "/api/v1/namespaces/default/serviceaccounts",
                                   {"metadata": {"name": "robot"}})
        self.assertEqual(code, 201)
        self.sa_uid = sa["metadata"]["uid"]
        self.key = private_key_from_bytes(SA_SIGNING_KEY_PEM)

    def create(self, body, name="robot", **kw):
        return self.request("POST", TOKEN.format(name), body, **kw)

    def test_issue_defaults(self) -> None:
        """An empty TokenRequest: 201, spec defaulted (3600 s, the API audiences,
        boundObjectRef null), metadata filled, status with token and expiration."""
        code, tr, _ = self.create({"apiVersion": "authentication.k8s.io/v1",
                                   "kind": "TokenRequest", "spec": {}})
        self.assertEqual(code, 201)
        token = tr["status"].pop("token")
        self.assertEqual(tr, {
            "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": "robot", "namespace": "default",
                         "creationTimestamp": "2023-11-14T22:13:20Z"},
            "spec": {"audiences": [SA_ISSUER], "expirationSeconds": 3600,
                     "boundObjectRef": None},
            "status": {"expirationTimestamp": "2023-11-14T23:13:20Z"}})
        header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
        self.assertEqual(header, {"alg": "RS256", "kid": key_id(self.key.public_key())})
        claims = jwt.decode(token, self.key.public_key(), algorithms=["RS256"],
                            audience=SA_ISSUER, options={"verify_exp": False,
                                                         "verify_iat": False})
        jti = claims.pop("jti")
        self.assertEqual(len(jti), 36)
        self.assertEqual(claims, {
            "aud": [SA_ISSUER], "exp": NOW + 3600, "iat": NOW, "iss": SA_ISSUER,
            "kubernetes.io": {"namespace": "default",
                              "serviceaccount": {"name": "robot", "uid": self.sa_uid}},
            "nbf": NOW, "sub": "system:serviceaccount:default:robot"})

    def test_audiences_and_expiration(self) -> None:
        """Requested audiences and lifetime are used as given."""
        code, tr, _ = self.create({"spec": {"audiences": ["vault", "x"],
                                            "expirationSeconds": 7200}})
        self.assertEqual(code, 201)
        self.assertEqual(tr["spec"]["audiences"], ["vault", "x"])
        p = _payload(tr["status"]["token"])
        self.assertEqual((p["aud"], p["exp"] - p["iat"]), (["vault", "x"], 7200))

    def test_missing_service_account(self) -> None:
        """A token for a missing ServiceAccount: 404 serviceaccounts "x" not found."""
        code, status, _ = self.create({"spec": {}}, name="x")
        self.assertEqual(code, 404)
        self.assertEqual((status["reason"], status["message"], status["details"]),
                         ("NotFound", 'serviceaccounts "x" not found',
                          {"name": "x", "kind": "serviceaccounts"}))

    def test_too_short(self) -> None:
        """Less than 10 minutes: 422 with upstream's message and field."""
        code, status, _ = self.create({"spec": {"expirationSeconds": 599}})
        self.assertEqual(code, 422)
        self.assertEqual(status["message"],
                         'TokenRequest.authentication.k8s.io "" is invalid: '
                         'spec.expirationSeconds: Invalid value: 599: may not specify a '
                         'duration less than 10 minutes')
        self.assertEqual(status["details"]["causes"], [{
            "reason": "FieldValueInvalid", "field": "spec.expirationSeconds",
            "message": "Invalid value: 599: may not specify a duration less than 10 minutes"}])

    def test_name_mismatch(self) -> None:
        """metadata.name other than the ServiceAccount's: 422."""
        code, status, _ = self.create({"metadata": {"name": "other"}, "spec": {}})
        self.assertEqual(code, 422)
        self.assertEqual(status["message"],
                         'TokenRequest.authentication.k8s.io "robot" is invalid: metadata.name: '
                         'Invalid value: "other": must match the service account name if '
                         'specified')

    def test_wrong_kind(self) -> None:
        """A body of another kind of the group: 400 with upstream's conversion error (recorded
        from kube-apiserver v1.32)."""
        code, status, _ = self.create({"apiVersion": "authentication.k8s.io/v1",
                                       "kind": "TokenReview"})
        self.assertEqual(code, 400)
        self.assertEqual(status["message"],
                         'TokenReview in version "v1" cannot be handled as a TokenRequest: '
                         'converting (v1.TokenReview) to (authentication.TokenRequest): unknown '
                         'conversion')

    def test_bound_unsupported_kind(self) -> None:
        """Binding to a kind other than Pod/Secret/Node: 400."""
        code, status, _ = self.create({"spec": {"boundObjectRef": {
            "apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}}})
        self.assertEqual(code, 400)
        self.assertEqual(status["message"],
                         "cannot bind token to object of type apps/v1, Kind=Deployment")

    def test_bound_secret(self) -> None:
        """A Secret-bound token names the secret; a wrong uid is 409; a missing one 404."""
        code, secret, _ = self.request("POST", "/api/v1/namespaces/default/secrets",
                                       {"metadata": {"name": "s"}})
        self.assertEqual(code, 201)
        ref = {"apiVersion": "v1", "kind": "Secret", "name": "s"}
        code, tr, _ = self.create({"spec": {"boundObjectRef": ref}})
        self.assertEqual(code, 201)
        self.assertEqual(tr["spec"]["boundObjectRef"], ref)
        self.assertEqual(_payload(tr["status"]["token"])["kubernetes.io"]["secret"],
                         {"name": "s", "uid": secret["metadata"]["uid"]})
        code, status, _ = self.create({"spec": {"boundObjectRef": dict(ref, uid="nope")}})
        self.assertEqual(code, 409)
        self.assertEqual(status["message"],
                         'Operation cannot be fulfilled on Secret "s": the UID in the bound '
                         'object reference (nope) does not match the UID in record. The object '
                         'might have been deleted and then recreated')
        code, status, _ = self.create({"spec": {"boundObjectRef": dict(ref, name="gone")}})
        self.assertEqual((code, status["message"]), (404, 'secrets "gone" not found'))

    def test_bound_pod(self) -> None:
        """A Pod-bound token names the pod; kubelet's 3607 s request becomes a one-year token
        with warnafter (status keeps 3607 s); a Pod of another ServiceAccount is 400."""
        code, pod, _ = self.request("POST", "/api/v1/namespaces/default/pods", {
            "metadata": {"name": "p"}, "spec": {"serviceAccountName": "robot",
                                                "containers": [{"name": "c", "image": "i"}]}})
        self.assertEqual(code, 201, pod)
        ref = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": pod["metadata"]["uid"]}
        code, tr, _ = self.create({"spec": {"boundObjectRef": ref, "expirationSeconds": 3607}})
        self.assertEqual(code, 201)
        p = _payload(tr["status"]["token"])
        self.assertEqual(p["kubernetes.io"]["pod"], {"name": "p", "uid": pod["metadata"]["uid"]})
        self.assertEqual((p["exp"] - p["iat"], p["kubernetes.io"]["warnafter"] - p["iat"]),
                         (365 * 24 * 3600, 3607))
        self.assertEqual(tr["status"]["expirationTimestamp"], "2023-11-14T23:13:27Z")
        code, status, _ = self.create({"spec": {"boundObjectRef": ref}}, name="default")
        self.assertEqual((code, status["message"]), (
            400, ('cannot bind token for serviceaccount "default" to pod running with '
                  'different serviceaccount name.')))

    def test_max_expiration(self) -> None:
        """Above --service-account-max-token-expiration the lifetime is shortened, with a
        warning."""
        self.kube.token_rest.max_expiration_seconds = 4000
        code, tr, response = self.create({"spec": {"expirationSeconds": 9000}})
        self.assertEqual(code, 201)
        self.assertEqual(tr["spec"]["expirationSeconds"], 4000)
        p = _payload(tr["status"]["token"])
        self.assertEqual(p["exp"] - p["iat"], 4000)
        self.assertEqual(response.headers.getRawHeaders("warning"),
                         [('299 - "requested expiration of 9000 seconds shortened to 4000 '
                           'seconds"')])

    def test_protobuf_body(self) -> None:
        """A protobuf TokenRequest (as client-go's typed clients send it) is decoded:
        audiences, expirationSeconds and boundObjectRef; the answer is protobuf too, as
        upstream's (TokenRequest has protobuf tables)."""
        from kubetwist.runtime import protobuf as pb

        spec = (pb._delimited(1, b"aud-1") + pb._key(4, 0) + pb._varint(1200))
        raw = pb._delimited(1, pb._delimited(1, b"robot")) + pb._delimited(2, spec)
        type_meta = pb._delimited(1, b"authentication.k8s.io/v1") + \
            pb._delimited(2, b"TokenRequest")
        body = pb.MAGIC + pb._delimited(1, type_meta) + pb._delimited(2, raw)
        code, _, response = self.create(body, content_type="application/vnd.kubernetes.protobuf",
                                         headers={"Accept": "application/vnd.kubernetes.protobuf, "
                                                            "*/*"})
        self.assertEqual(code, 201)
        self.assertEqual(response.headers.getRawHeaders("content-type"),
                         ["application/vnd.kubernetes.protobuf"])
        tr = pb.decode(self.successResultOf(response.content()))
        self.assertEqual((tr["metadata"]["name"], tr["spec"]["audiences"],
                          tr["spec"]["expirationSeconds"]), ("robot", ["aud-1"], 1200))

    def test_discovery(self) -> None:
        """/api/v1 lists serviceaccounts/token (create, authentication.k8s.io/v1
        TokenRequest)."""
        code, body, _ = self.request("GET", "/api/v1")
        self.assertEqual(code, 200)
        entry = [r for r in body["resources"] if r["name"] == "serviceaccounts/token"]
        self.assertEqual(len(entry), 1)
        self.assertEqual((entry[0]["verbs"], entry[0]["kind"], entry[0].get("group"),
                          entry[0].get("version"), entry[0]["namespaced"]),
                         (["create"], "TokenRequest", "authentication.k8s.io", "v1", True))

    def test_get_not_allowed(self) -> None:
        """Only POST is served on the token subresource."""
        code, _, _ = self.request("GET", TOKEN.format("robot"))
        self.assertEqual(code, 405)


class TokenAuthenticationTests(KubeTestCase):
    """Bearer tokens minted by the server authenticate requests."""

    def mint(self, body=None) -> str:
        code, tr, _ = self.request("POST", TOKEN.format("default"), body or {"spec": {}})
        self.assertEqual(code, 201, tr)
        return tr["status"]["token"]

    def test_authenticates(self) -> None:
        """A minted token makes the request system:serviceaccount:default:default."""
        token = self.mint()
        code, body, _ = self.request(
            "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
            headers={"Authorization": f"Bearer {token}"})
        if code == 404:
            self.assertEqual(self.seen_user(token), "system:serviceaccount:default:default")
            return
        self.assertEqual(code, 201)
        info = body["status"]["userInfo"]
        self.assertEqual(info["username"], "system:serviceaccount:default:default")
        self.assertEqual(info["groups"], ["system:serviceaccounts",
                                          "system:serviceaccounts:default",
                                          "system:authenticated"])

    def seen_user(self, token: str) -> str:
        """The user name the chain authenticates C{token} as (read from the chain's
        authenticator, as no SelfSubjectReview is served)."""
        from twisted.web.test.requesthelper import DummyRequest

        req = DummyRequest([b""])
        req.requestHeaders.setRawHeaders(b"authorization", [f"Bearer {token}".encode()])
        return resolved(self.chain.authenticator.authenticate(req)).name

    def test_authenticated_request_served(self) -> None:
        """A request with the token is served (200), one with a wrong-audience token is 401."""
        token = self.mint()
        code, _, _ = self.request("GET", "/api/v1/namespaces/default/serviceaccounts/default",
                                  headers={"Authorization": f"Bearer {token}"})
        self.assertEqual(code, 200)
        other = self.mint({"spec": {"audiences": ["vault"]}})
        code, status, _ = self.request("GET", "/api/v1/namespaces",
                                       headers={"Authorization": f"Bearer {other}"})
        self.assertEqual((code, status["message"]), (401, "Unauthorized"))

    def test_expired_refused(self) -> None:
        """Once expired (beyond the leeway), the token is refused with 401."""
        token = self.mint({"spec": {"expirationSeconds": 600}})
        self.clock.advance(661)
        code, _, _ = self.request("GET", "/api/v1/namespaces",
                                  headers={"Authorization": f"Bearer {token}"})
        self.assertEqual(code, 401)

    def test_openid_discovery(self) -> None:
        """/.well-known/openid-configuration and /openid/v1/jwks describe the signing key."""
        code, conf, response = self.request("GET", "/.well-known/openid-configuration")
        self.assertEqual(code, 200)
        self.assertEqual(conf, {
            "issuer": SA_ISSUER, "jwks_uri": "https://192.0.2.10:6443/openid/v1/jwks",
            "response_types_supported": ["id_token"], "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"]})
        self.assertEqual(response.headers.getRawHeaders("cache-control"),
                         ["public, max-age=3600"])
        code, keys, response = self.request("GET", "/openid/v1/jwks")
        self.assertEqual(code, 200)
        self.assertEqual(response.headers.getRawHeaders("content-type"),
                         ["application/jwk-set+json"])
        pub = private_key_from_bytes(SA_SIGNING_KEY_PEM).public_key()
        self.assertEqual([k["kid"] for k in keys["keys"]], [key_id(pub)])
        token = self.mint()
        signer = jwt.PyJWKSet.from_dict(keys)[key_id(pub)]
        self.assertEqual(jwt.decode(token, signer.key, algorithms=["RS256"], audience=SA_ISSUER,
                                    options={"verify_exp": False, "verify_iat": False})["sub"],
                         "system:serviceaccount:default:default")
