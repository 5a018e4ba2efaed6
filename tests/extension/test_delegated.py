"""
Delegated authentication and authorization (L{kubetwist.extension.delegated}) against a real
kube-apiserver chain in memory (L{tests.support.build_chain}, RBAC): TokenReview,
SubjectAccessReview and the published C{extension-apiserver-authentication} ConfigMap.
"""

from __future__ import annotations

import json
import os

from treq.testing import StubTreq
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authorization.authorizer import ALLOW, NO_OPINION, Attributes
from kubetwist.controlplane import clusterauthenticationtrust as trust
from kubetwist.extension.delegated import (
    AlwaysAllowPathsAuthorizer,
    DelegatingAuthenticationOptions,
    DelegatingAuthorizationOptions,
    DelegationError,
    authentication_configmap_data,
    build_delegated_authentication,
    build_delegated_authorizer,
)
from tests.extension.helpers import ExtensionTestCase, http_request
from tests.pki import CA
from tests.support import ADMIN, build_chain

FLUNDERS = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders"


def write_kubeconfig(path: str, token: str) -> str:
    """A kubeconfig naming the in-memory main server with a bearer token."""
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "main",
                   "clusters": [{"name": "main", "cluster": {
                       "server": "https://kubetwist.test"}}],
                   "users": [{"name": "u", "user": {"token": token}}],
                   "contexts": [{"name": "main",
                                 "context": {"cluster": "main", "user": "u"}}]}, f)
    return path


class PathAuthorizerTests(SynchronousTestCase):
    """Upstream C{path.NewAuthorizer}."""

    def decide(self, authorizer: AlwaysAllowPathsAuthorizer, path: str,
               resource: bool = False) -> str:
        return self.successResultOf(authorizer.authorize(
            Attributes(verb="get", path=path, resource_request=resource)))[0]

    def test_paths_and_prefixes(self) -> None:
        """Exact paths, trailing-C{*} prefixes, the leading C{/} optional; resource
        requests have no opinion."""
        a = AlwaysAllowPathsAuthorizer(["/healthz", "livez", "/metrics/*"])
        self.assertEqual(self.decide(a, "/healthz"), ALLOW)
        self.assertEqual(self.decide(a, "/livez"), ALLOW)
        self.assertEqual(self.decide(a, "/metrics/x"), ALLOW)
        self.assertEqual(self.decide(a, "/healthz/etcd"), NO_OPINION)
        self.assertEqual(self.decide(a, "/readyz"), NO_OPINION)
        self.assertEqual(self.decide(a, "/healthz", resource=True), NO_OPINION)

    def test_star_not_last(self) -> None:
        """A C{*} that is not last is upstream's error."""
        with self.assertRaises(ValueError) as caught:
            AlwaysAllowPathsAuthorizer(["/a*/b"])
        self.assertEqual(str(caught.exception), 'only trailing * allowed in "a*/b"')


class ConfigMapDataTests(SynchronousTestCase):
    """Reading the published trust."""

    def test_round_trip(self) -> None:
        """What the main server publishes (L{trust.configmap_data}) is what an extension
        server reads back."""
        client, proxy = CA("client-ca"), CA("front-proxy-ca")
        info = trust.ClusterAuthenticationInfo(
            client_ca=client.cert, requestheader_ca=proxy.cert,
            username_headers=["X-Remote-User"], group_headers=["X-Remote-Group"],
            extra_header_prefixes=["X-Remote-Extra-"], allowed_names=["front-proxy-client"])
        read = authentication_configmap_data({"data": trust.configmap_data(info)})
        self.assertEqual(len(read["client_cas"]), 1)
        rh = read["requestheader"]
        self.assertEqual(rh.username_headers, ["X-Remote-User"])
        self.assertEqual(rh.uid_headers, [])
        self.assertEqual(rh.group_headers, ["X-Remote-Group"])
        self.assertEqual(rh.extra_header_prefixes, ["X-Remote-Extra-"])
        self.assertEqual(rh.allowed_names, ["front-proxy-client"])
        self.assertEqual(len(rh.client_cas), 1)
        self.assertNotEqual(rh.client_cas[0], read["client_cas"][0])

    def test_no_requestheader(self) -> None:
        """Without C{requestheader-client-ca-file} there is no front proxy to trust."""
        read = authentication_configmap_data({"data": {}})
        self.assertEqual(read, {"client_cas": [], "requestheader": None})

    def test_bad_list(self) -> None:
        """A header list that is not a JSON array of strings is an error."""
        proxy = CA("front-proxy-ca")
        with self.assertRaises(DelegationError):
            authentication_configmap_data({"data": {
                "requestheader-client-ca-file": proxy.cert.decode(),
                "requestheader-username-headers": "X-Remote-User"}})


class DelegatedTestCase(ExtensionTestCase):
    """The wardle server delegating to an in-memory kube-apiserver with RBAC."""

    def setUp(self) -> None:
        from tests.support import FakeReactorClock

        main_clock = FakeReactorClock()
        main_clock.advance(1_700_000_000)
        self.main = build_chain(main_clock, modes=("Node", "RBAC"))
        for server in self.main["front"].chain():
            server.hooks.startService()
            self.addCleanup(server.hooks.stopService)
        self.main_treq = StubTreq(self.main["chain"])
        self.client_ca, self.proxy_ca = CA("client-ca"), CA("front-proxy-ca")
        stores = self.main["kube"].stores
        self.successResultOf(trust.sync_configmap(
            stores[("", "configmaps")], stores[("", "namespaces")],
            trust.ClusterAuthenticationInfo(
                client_ca=self.client_ca.cert, requestheader_ca=self.proxy_ca.cert,
                username_headers=["X-Remote-User"], group_headers=["X-Remote-Group"],
                extra_header_prefixes=["X-Remote-Extra-"],
                allowed_names=["front-proxy-client"])))
        self.kubeconfig = write_kubeconfig(self.mktemp(), "admin-token")
        super().setUp()

    def config(self) -> object:
        from kubetwist.extension.namespaces import namespace_lifecycle

        config = super().config()
        config.admission_plugins = [namespace_lifecycle(
            self.clock, self.kubeconfig, self.client_factory), *config.admission_plugins]
        return config

    def client_factory(self, target: object) -> StubTreq:
        return self.main_treq

    def authenticator(self) -> object:
        d = build_delegated_authentication(
            self.clock, DelegatingAuthenticationOptions(remote_kubeconfig=self.kubeconfig),
            self.client_factory)
        from twisted.internet.defer import ensureDeferred

        self.authentication = self.successResultOf(ensureDeferred(d))
        return self.authentication.authenticator

    def authorizer(self) -> object:
        return build_delegated_authorizer(
            self.clock, DelegatingAuthorizationOptions(remote_kubeconfig=self.kubeconfig),
            self.client_factory)

    def request(self, method: str, path: str, body: object = None, headers: object = None,
                token: object = None, content_type: str = "application/json") -> tuple:
        """One request to the wardle server, the main server answering its reviews."""
        h = {"Authorization": f"Bearer {token or self.token}"}
        h.update(headers or {})
        return http_request(self, self.treq, method, "https://wardle.test" + path, body, h,
                            content_type, also_flush=[self.main_treq])

    def main_request(self, method: str, path: str, body: object = None) -> tuple:
        return http_request(self, self.main_treq, method, "https://kubetwist.test" + path,
                            body, dict(ADMIN))


class DelegatedAuthenticationTests(DelegatedTestCase):
    """Who the user is: the main server's answer."""

    def test_trust_read_from_configmap(self) -> None:
        """The client CA and the front proxy's trust come from the ConfigMap; the TLS layer
        accepts both CAs."""
        rh = self.authentication.request_header
        self.assertIsNotNone(rh)
        self.assertEqual(rh.allowed_names, ["front-proxy-client"])
        self.assertEqual(rh.username_headers, ["X-Remote-User"])
        self.assertEqual(len(self.authentication.client_cas), 2)

    def test_reload(self) -> None:
        """A changed ConfigMap is taken on the next reload (a new front-proxy CA, other
        allowed names); an unchanged one changes nothing."""
        from twisted.internet.defer import ensureDeferred

        def reload() -> bool:
            d = ensureDeferred(self.authentication.reload())
            for _ in range(5):
                self.main_treq.flush()
            return self.successResultOf(d)

        self.assertFalse(reload())
        stores = self.main["kube"].stores
        rotated = CA("front-proxy-ca-2")
        self.successResultOf(trust.sync_configmap(
            stores[("", "configmaps")], stores[("", "namespaces")],
            trust.ClusterAuthenticationInfo(
                client_ca=self.client_ca.cert, requestheader_ca=rotated.cert,
                username_headers=["X-Remote-User"], allowed_names=["aggregator"])))
        self.assertTrue(reload())
        rh = self.authentication.request_header
        self.assertEqual(rh.allowed_names, ["front-proxy-client", "aggregator"])
        self.assertEqual(len(rh.client_cas), 2)
        self.assertEqual(len(self.authentication.client_cas), 3)
        self.assertFalse(reload())

    def test_token_reviewed(self) -> None:
        """A token the main server knows authenticates (TokenReview); C{system:masters} may
        do everything without a SubjectAccessReview."""
        code, body, _ = self.request("POST", FLUNDERS, {
            "apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
            "metadata": {"name": "a"}})
        self.assertEqual(code, 201, body)

    def test_namespace_must_exist(self) -> None:
        """NamespaceLifecycle reads the main server's namespaces: a flunder in a namespace it
        does not have is 404."""
        code, body, _ = self.request(
            "POST", "/apis/wardle.example.com/v1alpha1/namespaces/nope/flunders", {
                "apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
                "metadata": {"name": "a"}})
        self.assertEqual(code, 404, body)
        self.assertEqual(body["message"], 'namespaces "nope" not found')

    def test_unknown_token(self) -> None:
        """A token the main server does not know is 401."""
        code, body, _ = self.request("GET", FLUNDERS, token="nobody-token")
        self.assertEqual(code, 401)
        self.assertEqual(body["message"], "Unauthorized")

    def test_anonymous_health(self) -> None:
        """Anonymous requests pass authentication; C{/healthz} is always allowed."""
        code, body, _ = http_request(self, self.treq, "GET", "https://wardle.test/healthz")
        self.assertEqual((code, body), (200, "ok"))


class DelegatedAuthorizationTests(DelegatedTestCase):
    """What the user may do: RBAC on the main server, through SubjectAccessReviews."""

    def test_rbac_governs(self) -> None:
        """jane is forbidden until the main server's RBAC lets her list flunders (after the
        10 s the refusal is cached)."""
        code, body, _ = self.request("GET", FLUNDERS, token="jane-token")
        self.assertEqual(code, 403)
        self.assertTrue(body["message"].startswith(
            'flunders.wardle.example.com is forbidden: User "jane" cannot list resource '
            '"flunders" in API group "wardle.example.com" in the namespace "default"'),
            body["message"])
        code, _, _ = self.main_request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "flunder-reader"},
            "rules": [{"apiGroups": ["wardle.example.com"], "resources": ["flunders"],
                       "verbs": ["get", "list", "watch"]}]})
        self.assertEqual(code, 201)
        code, _, _ = self.main_request(
            "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", {
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "jane-reads"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                            "name": "flunder-reader"},
                "subjects": [{"kind": "User", "name": "jane",
                              "apiGroup": "rbac.authorization.k8s.io"}]})
        self.assertEqual(code, 201)
        self.main["front"].clock.advance(1)  # the RBAC index follows its watch
        self.main_treq.flush()
        code, _, _ = self.request("GET", FLUNDERS, token="jane-token")
        self.assertEqual(code, 403, "the refusal is cached for 10 s")
        self.clock.advance(11)
        code, body, _ = self.request("GET", FLUNDERS, token="jane-token")
        self.assertEqual(code, 200, body)
        code, _, _ = self.request("POST", FLUNDERS, {
            "apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
            "metadata": {"name": "a"}}, token="jane-token")
        self.assertEqual(code, 403)

    def test_no_kubeconfig_forbids(self) -> None:
        """Without C{--authorization-kubeconfig} only the groups and paths are allowed."""
        authorizer = build_delegated_authorizer(
            self.clock, DelegatingAuthorizationOptions(remote_kubeconfig_optional=True))
        decision = self.successResultOf(authorizer.authorize(Attributes(
            verb="list", resource="flunders", resource_request=True, path="/apis/x")))[0]
        self.assertEqual(decision, NO_OPINION)


class LookupFailureTests(SynchronousTestCase):
    """A ConfigMap the extension server may not read."""

    def test_forbidden_is_fatal(self) -> None:
        """jane may not read the ConfigMap: upstream's start-up error, unless tolerated."""
        from tests.support import FakeReactorClock

        clock = FakeReactorClock()
        clock.advance(1_700_000_000)
        main = build_chain(clock, modes=("RBAC",))
        for server in main["front"].chain():
            server.hooks.startService()
            self.addCleanup(server.hooks.stopService)
        treq = StubTreq(main["chain"])
        kubeconfig = write_kubeconfig(self.mktemp(), "jane-token")
        from twisted.internet.defer import ensureDeferred

        d = ensureDeferred(build_delegated_authentication(
            clock, DelegatingAuthenticationOptions(remote_kubeconfig=kubeconfig),
            lambda target: treq))
        treq.flush()
        failure = self.failureResultOf(d, DelegationError)
        self.assertEqual(
            failure.getErrorMessage(),
            'unable to load configmap based request-header-client-ca-file: configmaps '
            '"extension-apiserver-authentication" is forbidden: User "jane" cannot get '
            'resource "configmaps" in API group "" in the namespace "kube-system"')
        d = ensureDeferred(build_delegated_authentication(
            clock, DelegatingAuthenticationOptions(remote_kubeconfig=kubeconfig,
                                                   tolerate_lookup_failure=True),
            lambda target: treq))
        treq.flush()
        self.assertIsNone(self.successResultOf(d).request_header)

    def test_no_kubeconfig(self) -> None:
        """Without a kubeconfig (and no in-cluster configuration) the server cannot start,
        unless the kubeconfig is optional."""
        from twisted.internet.defer import ensureDeferred
        from twisted.internet.task import Clock

        d = ensureDeferred(build_delegated_authentication(
            Clock(), DelegatingAuthenticationOptions()))
        self.assertEqual(self.failureResultOf(d, DelegationError).getErrorMessage(),
                         "failed to get delegated authentication kubeconfig: unable to load "
                         "in-cluster configuration, KUBERNETES_SERVICE_HOST and "
                         "KUBERNETES_SERVICE_PORT must be defined")
        with self.assertRaises(DelegationError):
            build_delegated_authorizer(Clock(), DelegatingAuthorizationOptions())
        d = ensureDeferred(build_delegated_authentication(
            Clock(), DelegatingAuthenticationOptions(remote_kubeconfig_optional=True)))
        self.assertIsNone(self.successResultOf(d).request_header)

    def test_missing_kubeconfig(self) -> None:
        """An unreadable kubeconfig is a start-up error."""
        from twisted.internet.defer import ensureDeferred
        from twisted.internet.task import Clock

        d = ensureDeferred(build_delegated_authentication(
            Clock(), DelegatingAuthenticationOptions(
                remote_kubeconfig=os.path.join(self.mktemp(), "none"))))
        self.failureResultOf(d, DelegationError)
