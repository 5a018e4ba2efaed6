"""
Tests for the create-only review resources: L{kubetwist.registry.review},
L{kubetwist.apis.authentication.reviews} and L{kubetwist.apis.authorization.reviews}.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist import authorization
from kubetwist.authentication.user import UserInfo
from kubetwist.registry.review import go_shape, review_metadata
from kubetwist.runtime import protobuf
from tests.support import KubeTestCase

JANE = {"Authorization": "Bearer jane-token"}
AUTHZ = "/apis/authorization.k8s.io/v1"
AUTHN = "/apis/authentication.k8s.io/v1"
API_AUDIENCE = "https://kubernetes.default.svc.cluster.local"


def ssar(spec: dict) -> dict:
    return {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": None}, "spec": spec}


def sar(spec: dict, metadata: dict | None = None) -> dict:
    return {"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
            "metadata": metadata or {}, "spec": spec}


def token_review(spec: dict) -> dict:
    return {"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1", "spec": spec}


CREATE_PODS = {"resourceAttributes": {"namespace": "default", "verb": "create",
                                      "resource": "pods"}}


class DiscoveryTests(KubeTestCase):
    """The review resources in discovery: verbs C{["create"]} only, no storage hash."""

    def test_authorization_group(self) -> None:
        """C{/apis/authorization.k8s.io/v1} lists the four reviews as upstream does."""
        code, body, _ = self.request("GET", AUTHZ)
        self.assertEqual(code, 200)
        self.assertEqual(body["resources"], [
            {"name": "localsubjectaccessreviews", "singularName": "localsubjectaccessreview",
             "namespaced": True, "kind": "LocalSubjectAccessReview", "verbs": ["create"]},
            {"name": "selfsubjectaccessreviews", "singularName": "selfsubjectaccessreview",
             "namespaced": False, "kind": "SelfSubjectAccessReview", "verbs": ["create"]},
            {"name": "selfsubjectrulesreviews", "singularName": "selfsubjectrulesreview",
             "namespaced": False, "kind": "SelfSubjectRulesReview", "verbs": ["create"]},
            {"name": "subjectaccessreviews", "singularName": "subjectaccessreview",
             "namespaced": False, "kind": "SubjectAccessReview", "verbs": ["create"]},
        ])

    def test_authentication_group(self) -> None:
        """C{/apis/authentication.k8s.io/v1} lists SelfSubjectReview and TokenReview."""
        code, body, _ = self.request("GET", AUTHN)
        self.assertEqual(code, 200)
        self.assertEqual(body["resources"], [
            {"name": "selfsubjectreviews", "singularName": "selfsubjectreview",
             "namespaced": False, "kind": "SelfSubjectReview", "verbs": ["create"]},
            {"name": "tokenreviews", "singularName": "tokenreview", "namespaced": False,
             "kind": "TokenReview", "verbs": ["create"]},
        ])

    def test_no_get(self) -> None:
        """Reviews are never stored: there is no GET route for them."""
        code, body, _ = self.request("GET", AUTHN + "/tokenreviews")
        self.assertEqual(code, 405)
        self.assertEqual(body["reason"], "MethodNotAllowed")


class AccessReviewTests(KubeTestCase):
    """The access reviews under C{--authorization-mode=AlwaysAllow}."""

    def test_self_subject_access_review(self) -> None:
        """A SelfSubjectAccessReview comes back (201) with C{status.allowed} and the spec and
        metadata as sent (C{creationTimestamp: null}, nothing stored)."""
        code, body, _ = self.request("POST", AUTHZ + "/selfsubjectaccessreviews",
                                     ssar(CREATE_PODS), headers=JANE)
        self.assertEqual(code, 201)
        self.assertEqual(body, {
            "kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": None},
            "spec": {"resourceAttributes": {"namespace": "default", "verb": "create",
                                            "resource": "pods"}},
            "status": {"allowed": True},
        })

    def test_self_subject_access_review_protobuf(self) -> None:
        """kubectl's protobuf body (as C{kubectl auth can-i} sends it) decodes."""
        body = protobuf.encode(ssar({"nonResourceAttributes": {"path": "/healthz",
                                                               "verb": "get"}}))
        code, answer, _ = self.request("POST", AUTHZ + "/selfsubjectaccessreviews", body,
                                       content_type="application/vnd.kubernetes.protobuf")
        self.assertEqual(code, 201)
        self.assertEqual(answer["spec"], {"nonResourceAttributes": {"path": "/healthz",
                                                                    "verb": "get"}})
        self.assertEqual(answer["status"], {"allowed": True})

    def test_self_subject_access_review_invalid(self) -> None:
        """Both attribute kinds at once: 422 with upstream's message and cause."""
        spec = dict(CREATE_PODS, nonResourceAttributes={"path": "/x", "verb": "get"})
        code, body, _ = self.request("POST", AUTHZ + "/selfsubjectaccessreviews", ssar(spec))
        self.assertEqual(code, 422)
        self.assertEqual(body["message"], (
            'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: '
            'spec.nonResourceAttributes: Invalid value: '
            'authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: '
            'cannot be specified in combination with resourceAttributes'))
        self.assertEqual(body["details"], {
            "group": "authorization.k8s.io", "kind": "SelfSubjectAccessReview",
            "causes": [{"reason": "FieldValueInvalid", "field": "spec.nonResourceAttributes",
                        "message": 'Invalid value: authorization.NonResourceAttributes'
                                   '{Path:"/x", Verb:"get"}: cannot be specified in '
                                   'combination with resourceAttributes'}]})

    def test_subject_access_review_invalid(self) -> None:
        """No attributes, no user, non-empty metadata: the three errors in upstream's order."""
        code, body, _ = self.request("POST", AUTHZ + "/subjectaccessreviews",
                                     sar({}, {"name": "x"}))
        self.assertEqual(code, 422)
        self.assertEqual(body["reason"], "Invalid")
        self.assertEqual(body["message"], (
            'SubjectAccessReview.authorization.k8s.io "" is invalid: ['
            'spec.resourceAttributes: Invalid value: "null": exactly one of '
            'nonResourceAttributes or resourceAttributes must be specified, '
            'spec.user: Invalid value: "": at least one of user or group must be specified, '
            'metadata: Invalid value: v1.ObjectMeta{Name:"x", GenerateName:"", Namespace:"", '
            'SelfLink:"", UID:"", ResourceVersion:"", Generation:0, '
            'CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC), '
            'DeletionTimestamp:<nil>, DeletionGracePeriodSeconds:(*int64)(nil), '
            'Labels:map[string]string(nil), Annotations:map[string]string(nil), '
            'OwnerReferences:[]v1.OwnerReference(nil), Finalizers:[]string(nil), '
            'ManagedFields:[]v1.ManagedFieldsEntry(nil)}: must be empty]'))

    def test_subject_access_review_groups_only(self) -> None:
        """Groups without a user are enough; the answer keeps them in the spec."""
        spec = {"nonResourceAttributes": {"path": "/api", "verb": "get"},
                "groups": ["devs"]}
        code, body, _ = self.request("POST", AUTHZ + "/subjectaccessreviews", sar(spec))
        self.assertEqual(code, 201)
        self.assertEqual(body["spec"], spec)
        self.assertEqual(body["status"], {"allowed": True})

    def test_subject_access_review_extra(self) -> None:
        """C{spec.extra} (a JSON body) reaches the answer and the authorizer's user."""
        spec = {"resourceAttributes": {"verb": "get", "resource": "pods"}, "user": "jane",
                "extra": {"scopes": ["a"]}}
        code, body, _ = self.request("POST", AUTHZ + "/subjectaccessreviews", sar(spec))
        self.assertEqual(code, 201)
        self.assertEqual(body["spec"], spec)

    def test_subject_access_review_extra_protobuf(self) -> None:
        """C{spec.extra} in a protobuf body (ExtraValue messages C{{items}} on the wire) decodes
        to JSON lists, and a protobuf answer carries it back as the same messages."""
        spec = {"resourceAttributes": {"verb": "get", "resource": "pods"}, "user": "jane",
                "extra": {"scopes": ["a", "b"]}}
        body_bytes = protobuf.encode(sar(spec))
        # map entry {key "scopes", value ExtraValue{items: ["a", "b"]}} as Go marshals it
        self.assertIn(b"\n\x06scopes\x12\x06\n\x01a\n\x01b", body_bytes)
        code, body, _ = self.request(
            "POST", AUTHZ + "/subjectaccessreviews", body_bytes,
            content_type="application/vnd.kubernetes.protobuf")
        self.assertEqual(code, 201)
        self.assertEqual(body["spec"], spec)
        code, _, response = self.request(
            "POST", AUTHZ + "/subjectaccessreviews", body_bytes,
            content_type="application/vnd.kubernetes.protobuf",
            headers={"Accept": "application/vnd.kubernetes.protobuf"})
        self.assertEqual(code, 201)
        self.assertEqual(response.headers.getRawHeaders("content-type"),
                         ["application/vnd.kubernetes.protobuf"])
        answer = protobuf.decode(self.successResultOf(response.content()))
        self.assertEqual(answer["spec"]["extra"], {"scopes": ["a", "b"]})
        self.assertEqual(answer["status"], {"allowed": True})

    def test_selector_validation(self) -> None:
        """A field selector with neither requirements nor rawSelector is refused."""
        spec = {"user": "jane", "resourceAttributes": {"verb": "list", "resource": "pods",
                                                       "fieldSelector": {}}}
        code, body, _ = self.request("POST", AUTHZ + "/subjectaccessreviews", sar(spec))
        self.assertEqual(code, 422)
        self.assertEqual(body["details"]["causes"], [{
            "reason": "FieldValueRequired",
            "field": "spec.resourceAttributes.fieldSelector.requirements",
            "message": "Required value: when spec.resourceAttributes.fieldSelector is "
                       "specified, requirements or rawSelector is required"}])

    def test_local_subject_access_review(self) -> None:
        """The URL's namespace becomes the object's; the answer has the status."""
        body = {"kind": "LocalSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
                "spec": {"user": "jane", "resourceAttributes": {
                    "namespace": "default", "verb": "get", "resource": "pods"}}}
        code, answer, _ = self.request(
            "POST", AUTHZ + "/namespaces/default/localsubjectaccessreviews", body)
        self.assertEqual(code, 201)
        self.assertEqual(answer["metadata"], {"namespace": "default",
                                              "creationTimestamp": None})
        self.assertEqual(answer["status"], {"allowed": True})

    def test_local_subject_access_review_namespace_mismatch(self) -> None:
        """C{spec.resourceAttributes.namespace} must be the object's (URL's) namespace, and
        non-resource attributes are refused."""
        body = {"kind": "LocalSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
                "spec": {"user": "jane", "resourceAttributes": {
                    "namespace": "other", "verb": "get", "resource": "pods"}}}
        code, answer, _ = self.request(
            "POST", AUTHZ + "/namespaces/default/localsubjectaccessreviews", body)
        self.assertEqual(code, 422)
        self.assertEqual(answer["message"], (
            'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: '
            'spec.resourceAttributes.namespace: Invalid value: "other": '
            'must match metadata.namespace'))
        body["spec"] = {"user": "jane", "nonResourceAttributes": {"path": "/x"}}
        code, answer, _ = self.request(
            "POST", AUTHZ + "/namespaces/default/localsubjectaccessreviews", body)
        self.assertEqual(code, 422)
        self.assertEqual(answer["details"]["causes"], [{
            "reason": "FieldValueInvalid", "field": "spec.nonResourceAttributes",
            "message": 'Invalid value: authorization.NonResourceAttributes{Path:"/x", '
                       'Verb:""}: disallowed on this kind of request'}])

    def test_local_subject_access_review_other_namespace_in_body(self) -> None:
        """An object namespace other than the URL's: 400 as upstream's create handler."""
        body = {"kind": "LocalSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
                "metadata": {"namespace": "other"},
                "spec": {"user": "jane", "resourceAttributes": {"namespace": "other"}}}
        code, answer, _ = self.request(
            "POST", AUTHZ + "/namespaces/default/localsubjectaccessreviews", body)
        self.assertEqual(code, 400)
        self.assertEqual(answer["message"], "the namespace of the provided object does not "
                                            "match the namespace sent on the request")

    def test_self_subject_rules_review(self) -> None:
        """AlwaysAllow resolves to everything; the answer is a new object (spec dropped)."""
        body = {"kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1",
                "spec": {"namespace": "default"}}
        code, answer, _ = self.request("POST", AUTHZ + "/selfsubjectrulesreviews", body,
                                       headers=JANE)
        self.assertEqual(code, 201)
        self.assertEqual(answer, {
            "kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": None}, "spec": {},
            "status": {
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                "incomplete": False,
            },
        })

    def test_self_subject_rules_review_needs_namespace(self) -> None:
        """Without C{spec.namespace}: 400 C{no namespace on request}."""
        body = {"kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1",
                "spec": {}}
        code, answer, _ = self.request("POST", AUTHZ + "/selfsubjectrulesreviews", body)
        self.assertEqual(code, 400)
        self.assertEqual(answer["message"], "no namespace on request")
        self.assertEqual(answer["reason"], "BadRequest")


class AlwaysDenyTests(KubeTestCase):
    """The reviews under C{--authorization-mode=AlwaysDeny}: only system:masters passes."""

    modes = ("AlwaysDeny",)

    def test_admin_allowed(self) -> None:
        """The admin (system:masters) is allowed by the privileged-group authorizer."""
        code, body, _ = self.request("POST", AUTHZ + "/selfsubjectaccessreviews",
                                     ssar(CREATE_PODS))
        self.assertEqual(code, 201)
        self.assertEqual(body["status"], {"allowed": True})

    def test_subject_access_review_for_plain_user(self) -> None:
        """A plain user is not allowed; AlwaysDeny's reason is reported (no C{denied}: the
        authorizer has no opinion)."""
        code, body, _ = self.request("POST", AUTHZ + "/subjectaccessreviews",
                                     sar(dict(CREATE_PODS, user="jane")))
        self.assertEqual(code, 201)
        self.assertEqual(body["status"], {"allowed": False,
                                          "reason": "Everything is forbidden."})

    def test_rules_review_empty(self) -> None:
        """AlwaysDeny resolves to no rules, complete (the superuser authorizer lists none)."""
        body = {"kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1",
                "spec": {"namespace": "default"}}
        code, answer, _ = self.request("POST", AUTHZ + "/selfsubjectrulesreviews", body)
        self.assertEqual(code, 201)
        self.assertEqual(answer["status"], {"resourceRules": [], "nonResourceRules": [],
                                            "incomplete": False})

    def test_plain_user_cannot_review(self) -> None:
        """Creating a review is itself authorized: a plain user is forbidden."""
        code, body, _ = self.request("POST", AUTHZ + "/selfsubjectaccessreviews",
                                     ssar(CREATE_PODS), headers=JANE)
        self.assertEqual(code, 403)
        self.assertEqual(body["message"], (
            'selfsubjectaccessreviews.authorization.k8s.io is forbidden: User "jane" cannot '
            'create resource "selfsubjectaccessreviews" in API group "authorization.k8s.io" '
            'at the cluster scope: Everything is forbidden.'))


class AuthenticationReviewTests(KubeTestCase):
    """TokenReview and SelfSubjectReview."""

    def test_self_subject_review(self) -> None:
        """The requesting user, with the time of the review as C{creationTimestamp}."""
        code, body, _ = self.request("POST", AUTHN + "/selfsubjectreviews",
                                     {"kind": "SelfSubjectReview",
                                      "apiVersion": "authentication.k8s.io/v1"}, headers=JANE)
        self.assertEqual(code, 201)
        self.assertEqual(body, {
            "kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": "2023-11-14T22:13:20Z"},
            "status": {"userInfo": {"username": "jane", "uid": "2",
                                    "groups": ["", "system:authenticated"]}},
        })

    def test_token_review_admin(self) -> None:
        """A token-file token authenticates, for the API audiences."""
        code, body, _ = self.request("POST", AUTHN + "/tokenreviews",
                                     token_review({"token": "admin-token"}))
        self.assertEqual(code, 201)
        self.assertEqual(body, {
            "kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": None},
            "spec": {"token": "admin-token"},
            "status": {"authenticated": True,
                       "user": {"username": "admin", "uid": "1",
                                "groups": ["system:masters", "system:authenticated"]},
                       "audiences": [API_AUDIENCE]},
        })

    def test_token_review_unknown_token(self) -> None:
        """An unknown token: not authenticated, an empty user, upstream's error text."""
        code, body, _ = self.request("POST", AUTHN + "/tokenreviews",
                                     token_review({"token": "nope"}))
        self.assertEqual(code, 201)
        self.assertEqual(body["status"], {"user": {}, "error": "invalid bearer token"})

    def test_token_review_empty_token(self) -> None:
        """An empty token: 400 with upstream's message."""
        code, body, _ = self.request("POST", AUTHN + "/tokenreviews", token_review({}))
        self.assertEqual(code, 400)
        self.assertEqual(body["message"], "token is required for TokenReview in authentication")
        self.assertEqual(body["reason"], "BadRequest")

    def test_token_review_foreign_audience(self) -> None:
        """An audience-agnostic token asked for an audience the server does not serve."""
        code, body, _ = self.request("POST", AUTHN + "/tokenreviews",
                                     token_review({"token": "admin-token",
                                                   "audiences": ["vault"]}))
        self.assertEqual(code, 201)
        self.assertEqual(body["status"], {"user": {}, "error": "invalid bearer token"})

    def _service_account_token(self, audiences: list[str]) -> str:
        code, _, _ = self.request("POST", "/api/v1/namespaces/default/serviceaccounts", {
            "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}})
        self.assertIn(code, (201, 409))
        code, body, _ = self.request(
            "POST", "/api/v1/namespaces/default/serviceaccounts/robot/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
             "spec": {"audiences": audiences}})
        self.assertEqual(code, 201, body)
        return body["status"]["token"]

    def test_token_review_service_account_audiences(self) -> None:
        """A service-account token for C{vault}: good when the review asks for C{vault},
        refused with the JWT authenticator's error for the API audiences."""
        token = self._service_account_token(["vault"])
        code, body, _ = self.request("POST", AUTHN + "/tokenreviews",
                                     token_review({"token": token, "audiences": ["vault"]}))
        self.assertEqual(code, 201)
        status = body["status"]
        self.assertEqual(status["authenticated"], True)
        self.assertEqual(status["audiences"], ["vault"])
        self.assertEqual(status["user"]["username"], "system:serviceaccount:default:robot")
        self.assertEqual(status["user"]["groups"], [
            "system:serviceaccounts", "system:serviceaccounts:default",
            "system:authenticated"])
        code, body, _ = self.request("POST", AUTHN + "/tokenreviews",
                                     token_review({"token": token}))
        self.assertEqual(code, 201)
        self.assertEqual(body["status"], {
            "user": {},
            "error": f'token audiences ["vault"] is invalid for the target audiences '
                     f'["{API_AUDIENCE}"]'})


class HelperTests(SynchronousTestCase):
    """The pure helpers."""

    def test_go_shape(self) -> None:
        """Struct order, unknown keys dropped, empty omitempty fields omitted."""
        self.assertEqual(
            go_shape({"user": "", "bogus": 1, "resourceAttributes": {"verb": "get",
                                                                     "namespace": ""},
                      "groups": ["g"]},
                     "io.k8s.api.authorization.v1.SubjectAccessReviewSpec"),
            {"resourceAttributes": {"verb": "get"}, "groups": ["g"]})

    def test_go_shape_extra_in_struct_order(self) -> None:
        """C{extra} comes where the Go struct has it."""
        shaped = go_shape({"uid": "u", "extra": {"k": ["v"]}, "groups": ["g"], "user": "x"},
                          "io.k8s.api.authorization.v1.SubjectAccessReviewSpec")
        self.assertEqual(list(shaped.items()), [
            ("user", "x"), ("groups", ["g"]), ("extra", {"k": ["v"]}), ("uid", "u")])

    def test_review_metadata(self) -> None:
        """ObjectMeta order and C{creationTimestamp: null}."""
        self.assertEqual(list(review_metadata({"labels": {"a": "b"}, "name": "x"}).items()),
                         [("name", "x"), ("creationTimestamp", None), ("labels", {"a": "b"})])

    def test_union_rules(self) -> None:
        """The union's rules concatenate its resolvers' and skip the superuser authorizer."""
        union = authorization.from_modes(["AlwaysDeny", "AlwaysAllow"])
        rules, non_rules, incomplete, err = union.rules_for(UserInfo("jane"), "default")
        self.assertEqual(rules, [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}])
        self.assertEqual(non_rules, [{"verbs": ["*"], "nonResourceURLs": ["*"]}])
        self.assertEqual((incomplete, err), (False, ""))
