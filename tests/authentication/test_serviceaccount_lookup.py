"""
Tests for L{kubetwist.authentication.serviceaccount_lookup}: a service-account token stops
working when its ServiceAccount, Secret, Pod or Node is gone or replaced (upstream's
validator with the lookup).
"""

from __future__ import annotations

import base64

import jwt
from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.authenticator import AuthenticationError
from kubetwist.authentication.serviceaccount import (
    LEGACY_ISSUER,
    ServiceAccountTokenAuthenticator,
    TokenGenerator,
    claims,
)
from kubetwist.authentication.serviceaccount_keys import private_key_from_bytes
from kubetwist.authentication.serviceaccount_lookup import NotFound, StorageObjectGetter
from tests.authentication.fakes import resolved
from tests.support import SA_ISSUER, SA_SIGNING_KEY_PEM, KubeTestCase

NOW = 1_700_000_000
KEY = private_key_from_bytes(SA_SIGNING_KEY_PEM)


def _obj(kind: str, name: str, uid: str, namespace: str = "ns1", **meta) -> dict:
    md = {"name": name, "uid": uid, **meta}
    if namespace:
        md["namespace"] = namespace
    return {"kind": kind, "metadata": md}


SA = _obj("ServiceAccount", "robot", "sa-uid")
POD = _obj("Pod", "p1", "pod-uid")
SECRET = _obj("Secret", "s1", "secret-uid")
NODE = _obj("Node", "n1", "node-uid", namespace="")


class FakeGetter:
    """Objects by (resource, namespace, name); C{get} answers a fired Deferred."""

    def __init__(self, *objects: tuple[str, dict]) -> None:
        self.objects = {}
        for resource, obj in objects:
            md = obj["metadata"]
            self.objects[(resource, md.get("namespace", ""), md["name"])] = obj

    def get(self, resource, namespace, name):
        obj = self.objects.get((resource, namespace, name))
        if obj is None:
            return defer.fail(NotFound(f'{resource} "{name}" not found'))
        return defer.succeed(obj)


def _authenticator(getter) -> ServiceAccountTokenAuthenticator:
    clock = Clock()
    clock.advance(NOW)
    return ServiceAccountTokenAuthenticator([SA_ISSUER], [KEY.public_key()], [SA_ISSUER], clock,
                                            lookup=getter)


def _bound(**kw) -> str:
    return TokenGenerator(SA_ISSUER, KEY).generate(
        claims(SA, NOW, 3600, [SA_ISSUER], jti="j1", **kw))


def _legacy(secret_name="s1", sa_uid="sa-uid", sub="system:serviceaccount:ns1:robot",
            **extra) -> str:
    payload = {"iss": LEGACY_ISSUER, "sub": sub,
               "kubernetes.io/serviceaccount/namespace": "ns1",
               "kubernetes.io/serviceaccount/secret.name": secret_name,
               "kubernetes.io/serviceaccount/service-account.name": "robot",
               "kubernetes.io/serviceaccount/service-account.uid": sa_uid, **extra}
    return jwt.encode({k: v for k, v in payload.items() if v is not None}, KEY,
                      algorithm="RS256")


def _token_secret(token: str, **meta) -> dict:
    s = _obj("Secret", "s1", "secret-uid", **meta)
    s["data"] = {"token": base64.b64encode(token.encode()).decode()}
    return s


class BoundTokenLookupTests(SynchronousTestCase):
    def check(self, token, getter, error=None):
        d = _authenticator(getter).authenticate_token(token)
        if error is None:
            return resolved(d)
        with self.assertRaises(AuthenticationError) as e:
            resolved(d)
        self.assertEqual(str(e.exception), error)
        return None

    def test_table(self):
        """Each object a bound token names must exist with its uid (upstream's reasons)."""
        deleting_old = _obj("ServiceAccount", "robot", "sa-uid",
                            deletionTimestamp="2023-11-14T22:11:00Z")  # 140 s before NOW
        deleting_now = _obj("ServiceAccount", "robot", "sa-uid",
                            deletionTimestamp="2023-11-14T22:13:00Z")  # 20 s before NOW
        cases = [
            (_bound(), [], 'serviceaccounts "robot" not found'),
            (_bound(), [("serviceaccounts", _obj("ServiceAccount", "robot", "other"))],
             "service account UID (other) does not match claim (sa-uid)"),
            (_bound(), [("serviceaccounts", deleting_old)],
             "service account ns1/robot has been deleted"),
            (_bound(), [("serviceaccounts", deleting_now)], None),
            (_bound(pod=POD), [("serviceaccounts", SA)],
             "service account token has been invalidated"),
            (_bound(pod=POD), [("serviceaccounts", SA), ("pods", _obj("Pod", "p1", "x"))],
             "pod UID (x) does not match service account pod ref claim (pod-uid)"),
            (_bound(pod=POD), [("serviceaccounts", SA), ("pods", POD)], None),
            (_bound(pod=POD, node=NODE), [("serviceaccounts", SA), ("pods", POD)], None),
            (_bound(secret=SECRET), [("serviceaccounts", SA)],
             "service account token has been invalidated"),
            (_bound(secret=SECRET), [("serviceaccounts", SA),
                                     ("secrets", _obj("Secret", "s1", "y"))],
             "secret UID (y) does not match service account secret ref claim (secret-uid)"),
            (_bound(secret=SECRET), [("serviceaccounts", SA), ("secrets", SECRET)], None),
            (_bound(node=NODE), [("serviceaccounts", SA)],
             "service account token has been invalidated"),
            (_bound(node=NODE), [("serviceaccounts", SA),
                                 ("nodes", _obj("Node", "n1", "z", namespace=""))],
             "node UID (z) does not match service account node ref claim (node-uid)"),
            (_bound(node=NODE), [("serviceaccounts", SA), ("nodes", NODE)], None),
        ]
        for token, objects, error in cases:
            user = self.check(token, FakeGetter(*objects), error)
            if error is None:
                self.assertEqual(user.name, "system:serviceaccount:ns1:robot", objects)

    def test_without_lookup(self):
        """Without a getter nothing is looked up (--service-account-lookup=false)."""
        self.assertEqual(self.check(_bound(), None).uid, "sa-uid")


class LegacyTokenTests(SynchronousTestCase):
    def check(self, token, objects, error=None):
        d = _authenticator(FakeGetter(*objects)).authenticate_token(token)
        if error is None:
            return resolved(d)
        with self.assertRaises(AuthenticationError) as e:
            resolved(d)
        self.assertEqual(str(e.exception), error)
        return None

    def test_valid(self):
        """A legacy token held by its Secret authenticates as the ServiceAccount."""
        token = _legacy()
        user = self.check(token, [("secrets", _token_secret(token)), ("serviceaccounts", SA)])
        self.assertEqual((user.name, user.uid, user.groups), (
            "system:serviceaccount:ns1:robot", "sa-uid",
            ["system:serviceaccounts", "system:serviceaccounts:ns1"]))

    def test_table(self):
        token = _legacy()
        sa_deleting = _obj("ServiceAccount", "robot", "sa-uid",
                           deletionTimestamp="2023-11-14T22:13:00Z")
        cases = [
            (token, [("serviceaccounts", SA)], "token has been invalidated"),
            (token, [("secrets", _token_secret(token, deletionTimestamp="2023-11-14T22:13:00Z")),
                     ("serviceaccounts", SA)], "token has been invalidated"),
            (token, [("secrets", _token_secret("other")), ("serviceaccounts", SA)],
             "token does not match server's copy"),
            (token, [("secrets", _token_secret(token))], 'serviceaccounts "robot" not found'),
            (token, [("secrets", _token_secret(token)), ("serviceaccounts", sa_deleting)],
             "ServiceAccount ns1/robot has been deleted"),
            (token, [("secrets", _token_secret(token)),
                     ("serviceaccounts", _obj("ServiceAccount", "robot", "new"))],
             "ServiceAccount UID (new) does not match claim (sa-uid)"),
            (token, [("secrets", _token_secret(
                token, labels={"kubernetes.io/legacy-token-invalid-since": "2023-10-01"})),
                ("serviceaccounts", SA)],
             "the token in secret ns1/s1 for service account ns1/robot has been marked invalid. "
             "Use tokens from the TokenRequest API or manually created secret-based tokens, or "
             "remove the 'kubernetes.io/legacy-token-invalid-since' label from the secret to "
             "temporarily allow use of this token"),
            (_legacy(sub="system:serviceaccount:ns1:other"), [], "sub claim is invalid"),
            (_legacy(sub=None), [], "sub claim is missing"),
            (_legacy(secret_name=None), [], "secretName claim is missing"),
            (_legacy(sa_uid=None), [], "serviceAccountUID claim is missing"),
        ]
        for token, objects, error in cases:
            self.check(token, objects, error)

    def test_without_lookup(self):
        """Without a getter (--service-account-lookup=false) the claims alone decide."""
        user = resolved(_authenticator(None).authenticate_token(_legacy()))
        self.assertEqual((user.name, user.uid), ("system:serviceaccount:ns1:robot", "sa-uid"))
        self.assertEqual(_authenticator(None).verify_token(_legacy()).name,
                         "system:serviceaccount:ns1:robot")
        with self.assertRaises(AuthenticationError):
            resolved(_authenticator(None).authenticate_token(_legacy(sub=None)))


class StorageLookupTests(KubeTestCase):
    """Through the real storage (the Cacher over SQLite) and the token API."""

    def setUp(self):
        super().setUp()
        self.auth = ServiceAccountTokenAuthenticator(
            [SA_ISSUER], [KEY.public_key()], [SA_ISSUER], self.clock,
            lookup=StorageObjectGetter(self.storage))

    def authenticate(self, token):
        d = self.auth.authenticate_token(token)
        self.treq.flush()
        results = []
        d.addBoth(results.append)
        self.assertEqual(len(results), 1)
        return results[0]

    def create(self, path, body):
        code, obj, _ = self.request("POST", path, body)
        self.assertEqual(code, 201, obj)
        return obj

    def test_deleted_service_account_or_pod(self):
        """The token works until its ServiceAccount (or bound Pod) is deleted; a new
        ServiceAccount of the same name has another uid."""
        base = "/api/v1/namespaces/default"
        self.create(base + "/serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                                "metadata": {"name": "robot"}})
        pod = self.create(base + "/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"},
            "spec": {"serviceAccountName": "robot", "containers": [{"name": "c",
                                                                     "image": "i"}]}})
        token = self.create(base + "/serviceaccounts/robot/token", {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}})[
            "status"]["token"]
        pod_token = self.create(base + "/serviceaccounts/robot/token", {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {
                "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p1",
                                   "uid": pod["metadata"]["uid"]}}})["status"]["token"]
        self.assertEqual(self.authenticate(token).name, "system:serviceaccount:default:robot")
        self.assertEqual(self.authenticate(pod_token).extra[
            "authentication.kubernetes.io/pod-name"], ["p1"])
        code, _, _ = self.request("DELETE", base + "/pods/p1?gracePeriodSeconds=0")
        self.assertEqual(code, 200)
        self.assertEqual(self.authenticate(pod_token).getErrorMessage(),
                         "service account token has been invalidated")
        self.assertEqual(self.authenticate(token).name, "system:serviceaccount:default:robot")
        code, _, _ = self.request("DELETE", base + "/serviceaccounts/robot")
        self.assertEqual(code, 200)
        self.assertEqual(self.authenticate(token).getErrorMessage(),
                         'serviceaccounts "robot" not found')
        self.create(base + "/serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                                "metadata": {"name": "robot"}})
        self.assertIn("does not match claim", self.authenticate(token).getErrorMessage())
