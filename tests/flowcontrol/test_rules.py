"""FlowSchema matching (upstream rule.go), a table per rule kind."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.user import UserInfo
from kubetwist.endpoints.requestinfo import parse_request_info
from kubetwist.flowcontrol.rules import FlowSchemaMatcher
from kubetwist.flowcontrol.rules import matches_flow_schema as reference

JANE = UserInfo("jane", groups=["devs", "system:authenticated"])
SA = UserInfo("system:serviceaccount:kube-system:robot",
              groups=["system:serviceaccounts", "system:authenticated"])
EVERYTHING = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True,
              "namespaces": ["*"]}


def fs(subjects: list, resource_rules: list = (), non_resource_rules: list = ()) -> dict:
    rule: dict = {"subjects": subjects}
    if resource_rules:
        rule["resourceRules"] = list(resource_rules)
    if non_resource_rules:
        rule["nonResourceRules"] = list(non_resource_rules)
    return {"spec": {"rules": [rule]}}


def matches_flow_schema(flow_schema: dict, request_info, user) -> bool:
    """The reference matcher and the compiled one, which must agree."""
    want = reference(flow_schema, request_info, user)
    if FlowSchemaMatcher(flow_schema).matches(request_info, user) != want:
        raise AssertionError(f"the compiled matcher disagrees: {flow_schema}")
    return want


def info(method: str, path: str):
    return parse_request_info(method, path, "")


class SubjectTests(SynchronousTestCase):
    def test_subjects(self) -> None:
        """User by name or *, Group by membership or *, ServiceAccount by namespace/name or
        namespace/*; the kind must carry its member."""
        req = info("GET", "/api/v1/pods")
        cases = [
            ({"kind": "User", "user": {"name": "jane"}}, JANE, True),
            ({"kind": "User", "user": {"name": "bob"}}, JANE, False),
            ({"kind": "User", "user": {"name": "*"}}, JANE, True),
            ({"kind": "User"}, JANE, False),
            ({"kind": "Group", "group": {"name": "devs"}}, JANE, True),
            ({"kind": "Group", "group": {"name": "ops"}}, JANE, False),
            ({"kind": "Group", "group": {"name": "*"}}, JANE, True),
            ({"kind": "ServiceAccount",
              "serviceAccount": {"namespace": "kube-system", "name": "robot"}}, SA, True),
            ({"kind": "ServiceAccount",
              "serviceAccount": {"namespace": "kube-system", "name": "*"}}, SA, True),
            ({"kind": "ServiceAccount",
              "serviceAccount": {"namespace": "kube", "name": "*"}}, SA, False),
            ({"kind": "ServiceAccount",
              "serviceAccount": {"namespace": "default", "name": "robot"}}, SA, False),
            ({"kind": "ServiceAccount",
              "serviceAccount": {"namespace": "kube-system", "name": "*"}}, JANE, False),
            ({"kind": "Other"}, JANE, False),
        ]
        for subject, user, want in cases:
            self.assertEqual(matches_flow_schema(fs([subject], [EVERYTHING]), req, user), want,
                             (subject, user.name))


class ResourceRuleTests(SynchronousTestCase):
    def test_resource_rules(self) -> None:
        """Verbs, groups, resource/subresource, cluster scope and namespaces all must hold;
        a resource request never meets a non-resource rule."""
        subject = [{"kind": "Group", "group": {"name": "*"}}]
        leases = {"verbs": ["get", "update"], "apiGroups": ["coordination.k8s.io"],
                  "resources": ["leases"], "namespaces": ["kube-system"]}
        nodes = {"verbs": ["*"], "apiGroups": [""], "resources": ["nodes", "nodes/status"],
                 "clusterScope": True}
        cases = [
            (leases, ("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x"),
             True),
            (leases, ("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x"),
             True),
            (leases, ("DELETE",
                      "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x"), False),
            (leases, ("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/x"),
             False),
            (leases, ("GET", "/apis/coordination.k8s.io/v1/leases"), False),
            (nodes, ("GET", "/api/v1/nodes/n1"), True),
            (nodes, ("PATCH", "/api/v1/nodes/n1/status"), True),
            (nodes, ("GET", "/api/v1/nodes/n1/proxy"), False),
            (nodes, ("GET", "/apis/apps/v1/deployments"), False),
            (EVERYTHING, ("GET", "/api/v1/namespaces/a/pods"), True),
            ({**EVERYTHING, "clusterScope": False}, ("GET", "/api/v1/nodes"), False),
        ]
        for rule, (method, path), want in cases:
            self.assertEqual(matches_flow_schema(fs(subject, [rule]), info(method, path), JANE),
                             want, (rule, method, path))
        only_urls = fs(subject, non_resource_rules=[{"verbs": ["*"], "nonResourceURLs": ["*"]}])
        self.assertFalse(matches_flow_schema(only_urls, info("GET", "/api/v1/pods"), JANE))


class NonResourceRuleTests(SynchronousTestCase):
    def test_non_resource_rules(self) -> None:
        """URLs: *, exact, or a /prefix/* (also a bare prefix gets its slash)."""
        subject = [{"kind": "Group", "group": {"name": "*"}}]
        cases = [
            (["*"], "/healthz", True),
            (["/healthz"], "/healthz", True),
            (["/healthz"], "/healthz/etcd", True),
            (["/healthz"], "/healthzz", False),
            (["/metrics/*"], "/metrics/x", True),
            (["/metrics/*"], "/metrics", False),
            (["/apis"], "/api", False),
        ]
        for urls, path, want in cases:
            rule = {"verbs": ["get"], "nonResourceURLs": urls}
            self.assertEqual(matches_flow_schema(fs(subject, non_resource_rules=[rule]),
                                                 info("GET", path), JANE), want, (urls, path))
        rule = {"verbs": ["get"], "nonResourceURLs": ["*"]}
        self.assertFalse(matches_flow_schema(fs(subject, non_resource_rules=[rule]),
                                             info("POST", "/healthz"), JANE))
        self.assertFalse(matches_flow_schema(fs(subject, [EVERYTHING]), info("GET", "/healthz"),
                                             JANE))
