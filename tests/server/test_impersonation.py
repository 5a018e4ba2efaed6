"""Impersonation (Impersonate-User, -Group, -Uid, -Extra-*), as upstream's WithImpersonation."""

import json

from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.http_headers import Headers
from zope.interface import implementer

from kubetwist.authentication.user import UserInfo
from kubetwist.authorization.authorizer import ALLOW, NO_OPINION, IAuthorizer
from kubetwist.server.filters.chain import HandlerChainConfig, build_handler_chain
from kubetwist.server.filters.impersonation import (
    ImpersonationHeaderError,
    build_impersonation_requests,
    split_service_account_username,
)
from tests.server.test_filters import _OK, _Request, _User
from tests.support import KubeTestCase

JANE = UserInfo("jane", "1", ["devs", "system:authenticated"])


@implementer(IAuthorizer)
class _Recording:
    """Allows the impersonate requests whose (resource, name) is in C{allowed}; records all."""

    def __init__(self, allowed=(), reason=""):
        self.allowed = set(allowed)
        self.reason = reason
        self.seen = []

    def authorize(self, attributes):
        if attributes.verb != "impersonate":
            return defer.succeed((ALLOW, ""))
        self.seen.append(attributes)
        key = (attributes.resource + ("/" + attributes.subresource
                                      if attributes.subresource else ""), attributes.name)
        if key in self.allowed or ("*", "*") in self.allowed:
            return defer.succeed((ALLOW, ""))
        return defer.succeed((NO_OPINION, self.reason))


class _MultiRequest(_Request):
    def __init__(self, headers):
        super().__init__()
        for k, v in headers:
            self.requestHeaders.addRawHeader(k, v)


class ImpersonationFilterTests(SynchronousTestCase):
    def run_chain(self, headers, authorizer):
        self.ok = _OK()
        config = HandlerChainConfig(clock=Clock(), authenticator=_User(JANE),
                                    authorizer=authorizer)
        chain = build_handler_chain(self.ok, config)
        request = _MultiRequest(headers)
        chain.render(request)
        return request

    def status(self, request):
        return json.loads(b"".join(request.written))

    def test_user_groups_extra_uid(self):
        """Every header is authorized in upstream's order; the new user replaces the old."""
        auth = _Recording({("*", "*")})
        request = self.run_chain([
            (b"Impersonate-User", b"bob"), (b"Impersonate-Group", b"g1"),
            (b"Impersonate-Group", b"g2"), (b"Impersonate-Extra-Foo%2Fbar", b"v1"),
            (b"Impersonate-Extra-Foo%2Fbar", b"v2"), (b"Impersonate-Uid", b"u1"),
            (b"Impersonate-Extra-Scopes", b"s")], auth)
        self.assertEqual(request.written, [b"ok"])
        ctx = self.ok.seen[0]
        self.assertEqual(ctx.user, UserInfo("bob", "u1", ["g1", "g2", "system:authenticated"],
                                            {"foo/bar": ["v1", "v2"], "scopes": ["s"]}))
        self.assertEqual(ctx.authenticated_user, JANE)
        self.assertEqual(
            [(a.user.name, a.verb, a.api_group, a.api_version, a.resource, a.subresource,
              a.name, a.namespace, a.resource_request) for a in auth.seen],
            [("jane", "impersonate", "", "", "users", "", "bob", "", True),
             ("jane", "impersonate", "", "", "groups", "", "g1", "", True),
             ("jane", "impersonate", "", "", "groups", "", "g2", "", True),
             ("jane", "impersonate", "authentication.k8s.io", "v1", "userextras", "foo/bar",
              "v1", "", True),
             ("jane", "impersonate", "authentication.k8s.io", "v1", "userextras", "foo/bar",
              "v2", "", True),
             ("jane", "impersonate", "authentication.k8s.io", "v1", "userextras", "scopes",
              "s", "", True),
             ("jane", "impersonate", "authentication.k8s.io", "v1", "uids", "", "u1", "",
              True)])
        # the impersonation headers are gone behind the filter
        self.assertEqual([k for k, _ in request.requestHeaders.getAllRawHeaders()
                          if k.lower().startswith(b"impersonate")], [])

    def test_no_headers_passes_through(self):
        """Without impersonation headers the authorizer is not asked for impersonate."""
        auth = _Recording()
        request = self.run_chain([], auth)
        self.assertEqual(request.written, [b"ok"])
        self.assertEqual((auth.seen, self.ok.seen[0].user, self.ok.seen[0].authenticated_user),
                         ([], JANE, None))

    def test_service_account(self):
        """A service-account user is the serviceaccounts resource in its namespace, and gets
        the service-account groups unless groups are named."""
        auth = _Recording({("serviceaccounts", "sa1"), ("groups", "g")})
        self.run_chain([(b"Impersonate-User", b"system:serviceaccount:ns1:sa1")], auth)
        self.assertEqual((auth.seen[0].resource, auth.seen[0].namespace), ("serviceaccounts",
                                                                          "ns1"))
        self.assertEqual(self.ok.seen[0].user, UserInfo(
            "system:serviceaccount:ns1:sa1", "",
            ["system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"]))
        self.run_chain([(b"Impersonate-User", b"system:serviceaccount:ns1:sa1"),
                        (b"Impersonate-Group", b"g")], auth)
        self.assertEqual(self.ok.seen[0].user.groups, ["g", "system:authenticated"])

    def test_implicit_groups(self):
        """system:authenticated is added unless (un)authenticated is named; anonymous gets
        system:unauthenticated."""
        auth = _Recording({("*", "*")})
        cases = [
            ([(b"Impersonate-User", b"bob"), (b"Impersonate-Group", b"system:unauthenticated")],
             ["system:unauthenticated"]),
            ([(b"Impersonate-User", b"bob"), (b"Impersonate-Group", b"system:authenticated")],
             ["system:authenticated"]),
            ([(b"Impersonate-User", b"system:anonymous")], ["system:unauthenticated"]),
            ([(b"Impersonate-User", b"system:anonymous"), (b"Impersonate-Group", b"g")],
             ["g", "system:unauthenticated"]),
        ]
        for headers, groups in cases:
            self.run_chain(headers, auth)
            self.assertEqual(self.ok.seen[0].user.groups, groups, headers)

    def test_forbidden_messages(self):
        """The first impersonation not allowed is upstream's 403 (recorded from v1.32)."""
        cases = [
            ([(b"Impersonate-User", b"bob")], set(),
             'users "bob" is forbidden: User "jane" cannot impersonate resource "users" in API '
             'group "" at the cluster scope', {"name": "bob", "kind": "users"}),
            ([(b"Impersonate-User", b"system:serviceaccount:ns1:sa1")], set(),
             'serviceaccounts "sa1" is forbidden: User "jane" cannot impersonate resource '
             '"serviceaccounts" in API group "" in the namespace "ns1"',
             {"name": "sa1", "kind": "serviceaccounts"}),
            ([(b"Impersonate-User", b"system:serviceaccount:ns1:sa1:x")], set(),
             'users "system:serviceaccount:ns1:sa1:x" is forbidden: User "jane" cannot '
             'impersonate resource "users" in API group "" at the cluster scope',
             {"name": "system:serviceaccount:ns1:sa1:x", "kind": "users"}),
            ([(b"Impersonate-User", b"bob"), (b"Impersonate-Group", b"g1")], {("users", "bob")},
             'groups "g1" is forbidden: User "jane" cannot impersonate resource "groups" in '
             'API group "" at the cluster scope', {"name": "g1", "kind": "groups"}),
            ([(b"Impersonate-User", b"bob"), (b"Impersonate-Uid", b"u1")], {("users", "bob")},
             'uids.authentication.k8s.io "u1" is forbidden: User "jane" cannot impersonate '
             'resource "uids" in API group "authentication.k8s.io" at the cluster scope',
             {"name": "u1", "group": "authentication.k8s.io", "kind": "uids"}),
            ([(b"Impersonate-User", b"bob"), (b"Impersonate-Extra-Foo%2Fbar", b"v1")],
             {("users", "bob")},
             'userextras.authentication.k8s.io "v1" is forbidden: User "jane" cannot '
             'impersonate resource "userextras/foo/bar" in API group "authentication.k8s.io" '
             'at the cluster scope',
             {"name": "v1", "group": "authentication.k8s.io", "kind": "userextras"}),
        ]
        for headers, allowed, message, details in cases:
            request = self.run_chain(headers, _Recording(allowed))
            st = self.status(request)
            self.assertEqual((request.responseCode, st["reason"], st["message"], st["details"]),
                             (403, "Forbidden", message, details))
            self.assertEqual(request.responseHeaders.getRawHeaders(b"x-content-type-options"),
                             [b"nosniff"])
            self.assertEqual(self.ok.seen, [])

    def test_forbidden_reason_appended(self):
        """The authorizer's reason follows the message, as for any 403."""
        request = self.run_chain([(b"Impersonate-User", b"bob")],
                                 _Recording(reason="Everything is forbidden."))
        self.assertTrue(self.status(request)["message"].endswith(
            'at the cluster scope: Everything is forbidden.'))

    def test_without_user_is_plain_500(self):
        """Groups, extras or a uid without a user: upstream's plain-text 500 (recorded)."""
        cases = [
            ([(b"Impersonate-Group", b"g1"), (b"Impersonate-Group", b"g2")],
             b'Internal Server Error: "/api/v1/namespaces": requested [{Group  g1    } '
             b'{Group  g2    }] without impersonating a user\n'),
            ([(b"Impersonate-Uid", b"u1")],
             b'Internal Server Error: "/api/v1/namespaces": requested [{UID  u1  '
             b'authentication.k8s.io/v1  }] without impersonating a user\n'),
            ([(b"Impersonate-Extra-Foo", b"x")],
             b'Internal Server Error: "/api/v1/namespaces": requested [{UserExtra  x  '
             b'authentication.k8s.io/v1  foo}] without impersonating a user\n'),
            ([(b"Impersonate-User", b""), (b"Impersonate-Group", b"x")],
             b'Internal Server Error: "/api/v1/namespaces": requested [{Group  x    }] without '
             b'impersonating a user\n'),
        ]
        for headers, body in cases:
            auth = _Recording({("*", "*")})
            request = self.run_chain(headers, auth)
            self.assertEqual((request.responseCode, b"".join(request.written)), (500, body))
            self.assertEqual(request.responseHeaders.getRawHeaders(b"content-type"),
                             [b"text/plain; charset=utf-8"])
            self.assertEqual(request.responseHeaders.getRawHeaders(b"x-content-type-options"),
                             [b"nosniff"])
            self.assertEqual((auth.seen, self.ok.seen), ([], []))

    def test_uri_is_quoted_and_sanitized(self):
        """The URI in the 500 is Go's %q, then HTML-sanitized (upstream: "a=&lt;b&gt;")."""
        self.ok = _OK()
        chain = build_handler_chain(self.ok, HandlerChainConfig(
            clock=Clock(), authenticator=_User(JANE), authorizer=_Recording()))
        request = _MultiRequest([(b"Impersonate-Uid", b"u1")])
        request.uri = b"/api/v1/pods?a=<b>"
        chain.render(request)
        self.assertTrue(b"".join(request.written).startswith(
            b'Internal Server Error: "/api/v1/pods?a=&lt;b&gt;": requested'))


class BuildRequestsTests(SynchronousTestCase):
    def test_extra_key_decoding(self):
        """Extra keys are lower-cased and path-unescaped; a malformed escape is kept."""
        headers = Headers()
        headers.addRawHeader(b"Impersonate-User", b"bob")
        headers.addRawHeader(b"Impersonate-Extra-A_B", b"x")
        headers.addRawHeader(b"Impersonate-Extra-%zz", b"y")
        headers.addRawHeader(b"Impersonate-Extra-K%C3%A9y", b"z")
        self.assertEqual([(r.kind, r.field_path, r.name)
                          for r in build_impersonation_requests(headers)],
                         [("User", "", "bob"), ("UserExtra", "a_b", "x"),
                          ("UserExtra", "%zz", "y"), ("UserExtra", "k\u00e9y", "z")])

    def test_without_user(self):
        headers = Headers({b"Impersonate-Group": [b"g"]})
        self.assertRaises(ImpersonationHeaderError, build_impersonation_requests, headers)

    def test_split_username(self):
        """Upstream SplitUsername: exactly namespace and name, both valid names."""
        self.assertEqual(split_service_account_username("system:serviceaccount:ns:sa.b"),
                         ("ns", "sa.b"))
        for bad in ("system:serviceaccount:ns", "system:serviceaccount:ns:a:b",
                    "system:serviceaccount:NS:a", "system:serviceaccount:ns:A",
                    "system:serviceaccount::a", "system:serviceaccount:n.s:a",
                    "serviceaccount:ns:a", "system:serviceaccount:" + "a" * 64 + ":a"):
            self.assertIsNone(split_service_account_username(bad), bad)


class ImpersonationServerTests(KubeTestCase):
    """Through the whole server: the admin (system:masters) may impersonate anyone."""

    def whoami(self, headers):
        d = self.treq.request(
            "POST", "https://kubetwist.test/apis/authentication.k8s.io/v1/selfsubjectreviews",
            data=json.dumps({"apiVersion": "authentication.k8s.io/v1",
                             "kind": "SelfSubjectReview"}).encode(),
            headers=headers)
        self.treq.flush()
        response = self.successResultOf(d)
        return response.code, json.loads(self.successResultOf(response.content()))

    def test_admin_impersonates(self):
        code, body = self.whoami({"Authorization": ["Bearer admin-token"],
                                  "Content-Type": ["application/json"],
                                  "Impersonate-User": ["bob"],
                                  "Impersonate-Group": ["system:masters"],
                                  "Impersonate-Uid": ["u1"]})
        self.assertEqual((code, body["status"]["userInfo"]), (201, {
            "username": "bob", "uid": "u1", "groups": ["system:masters",
                                                        "system:authenticated"]}))


class ImpersonationDeniedServerTests(KubeTestCase):
    modes = ("AlwaysDeny",)

    def test_plain_user_may_not_impersonate(self):
        code, st, _ = self.request("GET", "/api/v1/namespaces", headers={
            "Authorization": "Bearer jane-token", "Impersonate-User": "bob"})
        self.assertEqual((code, st["message"]), (
            403, 'users "bob" is forbidden: User "jane" cannot impersonate resource "users" in '
                 'API group "" at the cluster scope: Everything is forbidden.'))
