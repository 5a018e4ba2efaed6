"""
The RBAC authorizer (kubetwist.authorization.rbac): rule matching, rule comparison, the
resolver's visiting order and upstream's reason strings, the informer-fed indexes, and the
authorizer inside the real chain (403s, SelfSubjectRulesReview).

The expected texts are kube-apiserver v1.32's, recorded from the reference server.
"""

from __future__ import annotations

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from kubetwist import authorization
from kubetwist.authentication.user import UserInfo
from kubetwist.authorization.authorizer import (
    ALLOW,
    NO_OPINION,
    Attributes,
    IAuthorizer,
    IRuleResolver,
)
from kubetwist.authorization.rbac import (
    RBACAuthorizer,
    RBACIndex,
    compact_rules,
    compact_string,
    covers,
    index_for,
    rule_allows,
)
from kubetwist.storage.cacher import Cacher
from kubetwist.storage.sqlite import SQLiteStorage
from tests.support import InlinePool, KubeTestCase

ROBOT = UserInfo(name="system:serviceaccount:demo:robot",
                 groups=["system:serviceaccounts", "system:serviceaccounts:demo",
                         "system:authenticated"])
ALICE = UserInfo(name="alice", groups=["system:authenticated"])
RBAC = "rbac.authorization.k8s.io"


def res(verb, resource, group="", namespace="", name="", subresource="", user=ALICE):
    return Attributes(user=user, verb=verb, namespace=namespace, api_group=group,
                      resource=resource, subresource=subresource, name=name,
                      resource_request=True)


def url(verb, path, user=ALICE):
    return Attributes(user=user, verb=verb, path=path)


class RuleMatchingTests(SynchronousTestCase):
    """Upstream RuleAllows and its helpers."""

    def test_resource_rules(self):
        """Verbs, groups, resources (with subresources and */sub), names; "*" everywhere."""
        rule = {"verbs": ["get", "list"], "apiGroups": ["", "apps"],
                "resources": ["pods", "pods/log", "*/scale"], "resourceNames": ["web"]}
        cases = [
            (res("get", "pods", name="web"), True),
            (res("get", "pods", name="db"), False),
            (res("list", "pods"), False),             # names given: a collection is not one
            (res("get", "pods", name="web", subresource="log"), True),
            (res("get", "pods", name="web", subresource="exec"), False),
            (res("get", "deployments", "apps", name="web", subresource="scale"), True),
            (res("get", "deployments", "apps", name="web"), False),
            (res("get", "pods", "batch", name="web"), False),
            (res("delete", "pods", name="web"), False),
        ]
        for attrs, want in cases:
            self.assertEqual(rule_allows(attrs, rule), want, attrs)
        everything = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
        self.assertTrue(rule_allows(res("escalate", "roles", RBAC, subresource="x"),
                                    everything))
        self.assertFalse(rule_allows(url("get", "/healthz"), everything))

    def test_star_subresource_needs_exact_subresource(self):
        """C{*/scale} matches only the C{scale} subresource, never C{x/scalex}."""
        rule = {"verbs": ["get"], "apiGroups": ["*"], "resources": ["*/scale"]}
        self.assertFalse(rule_allows(res("get", "deployments", subresource="xscale"), rule))
        self.assertFalse(rule_allows(res("get", "scale"), rule))

    def test_non_resource_urls(self):
        """Exact URLs, a trailing C{*} as a prefix, and C{*}; resource requests never match."""
        rule = {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/logs/*"]}
        self.assertTrue(rule_allows(url("get", "/healthz"), rule))
        self.assertFalse(rule_allows(url("get", "/healthz/etcd"), rule))
        self.assertTrue(rule_allows(url("get", "/logs/"), rule))
        self.assertTrue(rule_allows(url("get", "/logs/a/b"), rule))
        self.assertFalse(rule_allows(url("get", "/logs"), rule))
        self.assertFalse(rule_allows(url("post", "/healthz"), rule))
        self.assertTrue(rule_allows(url("put", "/x"), {"verbs": ["*"],
                                                       "nonResourceURLs": ["*"]}))
        self.assertFalse(rule_allows(res("get", "healthz"), rule))


class RuleComparisonTests(SynchronousTestCase):
    """Covers, CompactRules and CompactString (escalation messages)."""

    def test_compact_string(self):
        """Go's %q of each non-empty list, in upstream's field order."""
        self.assertEqual(
            compact_string({"verbs": ["get", "list"], "apiGroups": [""],
                            "resources": ["pods"], "resourceNames": ["a"]}),
            '{APIGroups:[""], Resources:["pods"], ResourceNames:["a"], Verbs:["get" "list"]}')
        self.assertEqual(compact_string({"verbs": ["get"], "nonResourceURLs": ["/logs/*"]}),
                         '{NonResourceURLs:["/logs/*"], Verbs:["get"]}')

    def test_covers(self):
        """Missing rights are the broken-down servant rules no owner rule covers."""
        owner = [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods", "*/log"]},
                 {"verbs": ["*"], "nonResourceURLs": ["/api/*"]}]
        ok, missing = covers(owner, [{"verbs": ["get"], "apiGroups": [""],
                                      "resources": ["pods", "services/log"]},
                                     {"verbs": ["get"], "nonResourceURLs": ["/api/v1"]}])
        self.assertEqual((ok, missing), (True, []))
        ok, missing = covers(owner, [{"verbs": ["get", "list"], "apiGroups": [""],
                                      "resources": ["pods"], "resourceNames": ["a"]}])
        self.assertFalse(ok)
        self.assertEqual(missing, [{"apiGroups": [""], "resources": ["pods"],
                                    "verbs": ["list"], "resourceNames": ["a"]}])
        # an owner limited to names does not cover the whole collection
        ok, _ = covers([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"],
                         "resourceNames": ["a"]}],
                       [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}])
        self.assertFalse(ok)

    def test_compact_rules(self):
        """Simple rules differing in verbs merge; others are kept first, in order."""
        rules = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
                 {"nonResourceURLs": ["/x"], "verbs": ["get"]},
                 {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
                 {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"],
                  "resourceNames": ["a"]}]
        self.assertEqual(compact_rules(rules), [
            {"nonResourceURLs": ["/x"], "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"],
             "resourceNames": ["a"]}])


def role(name, rules, namespace=""):
    meta = {"name": name}
    kind = "ClusterRole"
    if namespace:
        meta["namespace"] = namespace
        kind = "Role"
    return {"apiVersion": f"{RBAC}/v1", "kind": kind, "metadata": meta, "rules": rules}


def binding(name, ref_kind, ref_name, subjects, namespace=""):
    meta = {"name": name}
    kind = "ClusterRoleBinding"
    if namespace:
        meta["namespace"] = namespace
        kind = "RoleBinding"
    return {"apiVersion": f"{RBAC}/v1", "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": RBAC, "kind": ref_kind, "name": ref_name},
            "subjects": subjects}


def key_of(obj):
    resource = {"ClusterRole": "clusterroles", "Role": "roles",
                "ClusterRoleBinding": "clusterrolebindings",
                "RoleBinding": "rolebindings"}[obj["kind"]]
    meta = obj["metadata"]
    if meta.get("namespace"):
        return f"/registry/{resource}/{meta['namespace']}/{meta['name']}"
    return f"/registry/{resource}/{meta['name']}"


SA = {"kind": "ServiceAccount", "name": "robot"}
GROUP_AUTH = {"apiGroup": RBAC, "kind": "Group", "name": "system:authenticated"}


class AuthorizerTests(SynchronousTestCase):
    """RBACAuthorizer over a real storage (the Cacher over in-memory SQLite)."""

    def setUp(self):
        self.clock = Clock()
        self.storage = Cacher(SQLiteStorage(self.clock, ":memory:", threadpool=InlinePool()),
                              self.clock)
        self.addCleanup(self.storage.stop)
        self.put(role("reader", [{"verbs": ["get"], "apiGroups": [""],
                                  "resources": ["secrets"]}], "demo"))
        self.put(role("discovery", [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]))
        self.put(binding("rb1", "Role", "reader", [SA], "demo"))
        self.put(binding("rb-missing", "Role", "nope", [SA], "demo"))
        self.put(binding("disc", "ClusterRole", "discovery", [GROUP_AUTH]))
        self.authorizer = RBACAuthorizer(RBACIndex(self.storage, self.clock))
        self.clock.advance(0)

    def put(self, obj):
        self.successResultOf(self.storage.create(key_of(obj), obj))

    def decide(self, attrs):
        return tuple(self.successResultOf(self.authorizer.authorize(attrs)))

    def test_interfaces(self):
        """It is an IAuthorizer and an IRuleResolver."""
        verifyObject(IAuthorizer, self.authorizer)
        verifyObject(IRuleResolver, self.authorizer)

    def test_role_binding_reason(self):
        """Allowed by a RoleBinding to a ServiceAccount with no namespace (the binding's);
        the missing role visited first does not matter once a rule allows."""
        self.assertEqual(self.decide(res("get", "secrets", namespace="demo", user=ROBOT)), (
            ALLOW, 'RBAC: allowed by RoleBinding "rb1/demo" of Role "reader" to '
                   'ServiceAccount "robot/demo"'))

    def test_cluster_role_binding_reason(self):
        """Allowed by a ClusterRoleBinding to a group."""
        self.assertEqual(self.decide(url("get", "/healthz")), (
            ALLOW, 'RBAC: allowed by ClusterRoleBinding "disc" of ClusterRole "discovery" '
                   'to Group "system:authenticated"'))

    def test_no_opinion(self):
        """Nothing allows: no opinion, no reason; with a missing role, its lister error."""
        self.assertEqual(self.decide(res("get", "secrets", namespace="other", user=ROBOT)),
                         (NO_OPINION, ""))
        self.assertEqual(self.decide(res("delete", "secrets", namespace="demo", user=ROBOT)),
                         (NO_OPINION, 'RBAC: role.rbac.authorization.k8s.io "nope" not found'))
        self.put(binding("crb-missing", "ClusterRole", "nope2",
                         [{"apiGroup": RBAC, "kind": "User", "name": "alice"}]))
        self.assertEqual(self.decide(res("delete", "secrets", namespace="demo")), (
            NO_OPINION, 'RBAC: clusterrole.rbac.authorization.k8s.io "nope2" not found'))
        self.assertEqual(self.decide(res("delete", "secrets", namespace="demo", user=ROBOT)),
                         (NO_OPINION, 'RBAC: role.rbac.authorization.k8s.io "nope" not found'))

    def test_follows_changes(self):
        """A binding created or deleted after the first list changes the next decision."""
        attrs = res("get", "pods", namespace="demo", user=ALICE)
        self.assertEqual(self.decide(attrs)[0], NO_OPINION)
        self.put(role("pods", [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]))
        self.put(binding("alice-pods", "ClusterRole", "pods",
                         [{"apiGroup": RBAC, "kind": "User", "name": "alice"}], "demo"))
        self.clock.advance(0)
        self.assertEqual(self.decide(attrs), (
            ALLOW, 'RBAC: allowed by RoleBinding "alice-pods/demo" of ClusterRole "pods" to '
                   'User "alice"'))
        self.successResultOf(self.storage.delete("/registry/clusterroles/pods"))
        self.clock.advance(0)
        self.assertEqual(self.decide(attrs), (
            NO_OPINION, 'RBAC: clusterrole.rbac.authorization.k8s.io "pods" not found'))
        self.successResultOf(self.storage.delete("/registry/rolebindings/demo/alice-pods"))
        self.clock.advance(0)
        self.assertEqual(self.decide(attrs), (NO_OPINION, ""))

    def test_relists_after_lost_watch(self):
        """A watch that ends is followed, after RELIST_DELAY, by a fresh list: changes made
        meanwhile are seen."""
        from kubetwist.authorization.rbac.informer import RELIST_DELAY

        informer = self.authorizer.index.informers["clusterrolebindings"]
        informer._watch.stop()
        self.put(binding("late", "ClusterRole", "discovery",
                         [{"apiGroup": RBAC, "kind": "User", "name": "late"}]))
        user = UserInfo(name="late", groups=[])
        self.clock.advance(0)
        self.assertEqual(self.decide(url("get", "/healthz", user=user)), (NO_OPINION, ""))
        self.clock.advance(RELIST_DELAY)
        self.assertEqual(self.decide(url("get", "/healthz", user=user))[0], ALLOW)
        self.assertIsNotNone(informer._watch)

    def test_rules_for(self):
        """RulesFor: resource and non-resource rules split, errors as evaluation text."""
        self.assertEqual(self.authorizer.rules_for(ROBOT, "demo"), (
            [{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}],
            [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
            False, 'role.rbac.authorization.k8s.io "nope" not found'))

    def test_waits_for_first_list(self):
        """Before the first list completes a decision is pending, not a denial."""
        pending = Cacher(SQLiteStorage(self.clock, ":memory:", threadpool=InlinePool()),
                         self.clock)
        self.addCleanup(pending.stop)
        index = RBACIndex(pending, self.clock)
        informer = index.informers["clusterroles"]
        informer.started = True  # hold this kind's first list back
        authorizer = RBACAuthorizer(index)
        d = authorizer.authorize(url("get", "/healthz"))
        self.assertNoResult(d)
        self.assertEqual(authorizer.rules_for(ALICE, "demo"), ([], [], True, ""))
        informer.started = False
        informer.start()
        self.assertEqual(tuple(self.successResultOf(d)), (NO_OPINION, ""))

    def test_index_shared_per_storage(self):
        """The mode's factory and the escalation checks share one index per storage."""
        self.assertIs(index_for(self.storage, self.clock), index_for(self.storage, self.clock))
        union = authorization.from_modes(
            ["Node", "RBAC"], authorization.AuthorizerConfig(storage=self.storage,
                                                             reactor=self.clock))
        self.assertIs(union.authorizers[2].index, index_for(self.storage, self.clock))


class ChainTests(KubeTestCase):
    """The default modes (Node,RBAC) in the real chain, with the bootstrap policy."""

    modes = ("Node", "RBAC")
    JANE = {"Authorization": "Bearer jane-token"}

    def test_forbidden_until_bound(self):
        """403 with upstream's message (no reason), then allowed once a RoleBinding grants."""
        code, body, _ = self.request("GET", "/api/v1/namespaces/default/secrets",
                                     headers=self.JANE)
        self.assertEqual(code, 403)
        self.assertEqual(body["message"], 'secrets is forbidden: User "jane" cannot list '
                         'resource "secrets" in API group "" in the namespace "default"')
        code, _, _ = self.request("POST", f"/apis/{RBAC}/v1/namespaces/default/rolebindings",
                                  binding("jane-view", "ClusterRole", "secret-reader", [
                                      {"apiGroup": RBAC, "kind": "User", "name": "jane"}],
                                      "default"))
        self.assertEqual(code, 201)
        code, _, _ = self.request("POST", f"/apis/{RBAC}/v1/clusterroles", role(
            "secret-reader", [{"verbs": ["list"], "apiGroups": [""],
                               "resources": ["secrets"]}]))
        self.assertEqual(code, 201)
        self.clock.advance(0)
        code, body, _ = self.request("GET", "/api/v1/namespaces/default/secrets",
                                     headers=self.JANE)
        self.assertEqual(code, 200, body)

    def test_bootstrap_discovery(self):
        """The bootstrap policy lets every authenticated user discover and review itself."""
        code, _, _ = self.request("GET", "/apis", headers=self.JANE)
        self.assertEqual(code, 200)
        code, body, _ = self.request(
            "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
             "spec": {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}}},
            headers=self.JANE)
        self.assertEqual(code, 201)
        self.assertEqual(body["status"], {
            "allowed": True, "reason": 'RBAC: allowed by ClusterRoleBinding "system:discovery" '
            'of ClusterRole "system:discovery" to Group "system:authenticated"'})

    def test_subject_access_reviews(self):
        """SubjectAccessReview and LocalSubjectAccessReview answer from RBAC with upstream's
        status (recorded: allowed with the binding's reason; denied with the lister error
        of a binding whose role is missing)."""
        self.assertEqual(self.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}})[0], 201)
        for obj in (role("reader", [{"verbs": ["get"], "apiGroups": [""],
                                     "resources": ["secrets"]}], "demo"),
                    binding("rb1", "Role", "reader", [SA], "demo"),
                    binding("rb-missing", "Role", "nope", [SA], "demo")):
            ns = obj["metadata"]["namespace"]
            path = f"/apis/{RBAC}/v1/namespaces/{ns}/" + obj["kind"].lower() + "s"
            self.assertEqual(self.request("POST", path, obj)[0], 201)
        self.clock.advance(0)
        spec = {"user": ROBOT.name, "groups": ROBOT.groups,
                "resourceAttributes": {"namespace": "demo", "verb": "get",
                                       "resource": "secrets"}}
        code, body, _ = self.request(
            "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
             "spec": spec})
        self.assertEqual(code, 201)
        self.assertEqual(body["status"], {
            "allowed": True, "reason": 'RBAC: allowed by RoleBinding "rb1/demo" of Role '
            '"reader" to ServiceAccount "robot/demo"'})
        spec["resourceAttributes"]["verb"] = "delete"
        code, body, _ = self.request(
            "POST", "/apis/authorization.k8s.io/v1/namespaces/demo/localsubjectaccessreviews",
            {"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
             "metadata": {"namespace": "demo"}, "spec": spec})
        self.assertEqual(code, 201)
        self.assertEqual(body["status"], {
            "allowed": False, "reason": 'RBAC: role.rbac.authorization.k8s.io "nope" not found'})
