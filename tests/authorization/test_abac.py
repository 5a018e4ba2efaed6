"""The ABAC mode: upstream pkg/auth/authorizer/abac (matching, legacy lines, file errors)."""

from __future__ import annotations

import json
import os
import tempfile

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.user import UserInfo
from kubetwist.authorization.abac import (
    ABACAuthorizer,
    Policy,
    PolicyLoadError,
    load_policy_file,
    parse_policy_line,
)
from kubetwist.authorization.authorizer import ALLOW, NO_OPINION, Attributes

V1 = "abac.authorization.kubernetes.io/v1beta1"
ALICE = UserInfo(name="alice", groups=["system:authenticated"])
BOB = UserInfo(name="bob", groups=["dev", "system:authenticated"])
ANON = UserInfo(name="system:anonymous", groups=["system:unauthenticated"])


def line(**spec) -> str:
    return json.dumps({"apiVersion": V1, "kind": "Policy", "spec": spec})


def res(user, verb, resource, namespace="", group="") -> Attributes:
    return Attributes(user=user, verb=verb, resource=resource, namespace=namespace,
                      api_group=group, resource_request=True)


def path(user, verb, p) -> Attributes:
    return Attributes(user=user, verb=verb, path=p)


class FileTestCase(SynchronousTestCase):
    def write(self, text: str) -> str:
        fd, p = tempfile.mkstemp(suffix=".jsonl")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        self.addCleanup(os.unlink, p)
        return p


class MatchTests(FileTestCase):
    """Upstream's matches(): subject, readonly, namespace/resource/apiGroup, paths."""

    def decide(self, policies, attributes):
        return self.successResultOf(ABACAuthorizer(policies).authorize(attributes))

    def test_table(self) -> None:
        """Each policy against requests it must and must not allow."""
        cases = [
            (line(user="alice", namespace="*", resource="*", apiGroup="*"),
             res(ALICE, "delete", "pods", "ns"), True),
            (line(user="alice", namespace="*", resource="*", apiGroup="*"),
             res(BOB, "get", "pods", "ns"), False),
            (line(group="dev", namespace="projectCaribou", resource="pods", apiGroup=""),
             res(BOB, "create", "pods", "projectCaribou"), True),
            (line(group="dev", namespace="projectCaribou", resource="pods", apiGroup=""),
             res(BOB, "create", "pods", "other"), False),
            (line(group="dev", namespace="*", resource="deployments", apiGroup=""),
             res(BOB, "get", "deployments", "ns", "apps"), False),
            (line(user="alice", namespace="*", resource="*", apiGroup="*", readonly=True),
             res(ALICE, "watch", "pods", "ns"), True),
            (line(user="alice", namespace="*", resource="*", apiGroup="*", readonly=True),
             res(ALICE, "update", "pods", "ns"), False),
            # "*" subject means every authenticated user (v1beta1 conversion), not anonymous
            (line(user="*", namespace="*", resource="*", apiGroup="*"),
             res(BOB, "get", "pods", "ns"), True),
            (line(user="*", namespace="*", resource="*", apiGroup="*"),
             res(ANON, "get", "pods", "ns"), False),
            (line(group="system:unauthenticated", nonResourcePath="/version"),
             path(ANON, "get", "/version"), True),
            (line(user="alice", nonResourcePath="/apis/*"),
             path(ALICE, "get", "/apis/apps/v1"), True),
            (line(user="alice", nonResourcePath="/apis/*"),
             path(ALICE, "get", "/api/v1"), False),
            (line(user="alice", nonResourcePath="*"), res(ALICE, "get", "pods", "ns"), False),
            (line(user="alice", namespace="*", resource="*", apiGroup="*"),
             path(ALICE, "get", "/healthz"), False),
            # the empty subject matches nobody in v1beta1
            (line(namespace="*", resource="*", apiGroup="*"), res(ALICE, "get", "pods"), False),
            # legacy unversioned lines: empty subject = authenticated, empty = "*" everywhere
            ('{"readonly": true}', res(ALICE, "get", "pods", "ns", "apps"), True),
            ('{"readonly": true}', path(ALICE, "get", "/healthz"), True),
            ('{"readonly": true}', res(ALICE, "create", "pods", "ns"), False),
            ('{"user": "bob", "namespace": "ns"}', res(BOB, "create", "pods", "ns", "x"), True),
            ('{"user": "bob", "namespace": "ns"}', path(BOB, "get", "/healthz"), False),
            ('{"user": "*"}', res(ANON, "get", "pods"), False),
        ]
        for text, attributes, allowed in cases:
            want = (ALLOW, "") if allowed else (NO_OPINION, "No policy matched.")
            self.assertEqual(self.decide([parse_policy_line(text)], attributes), want,
                             f"{text} / {attributes}")

    def test_first_match_and_file(self) -> None:
        """Comments and blank lines are skipped; any matching line allows."""
        p = self.write("# comment\n\n" + line(user="bob", namespace="*", resource="pods",
                                               apiGroup="") +
                       "\n" + line(user="alice", nonResourcePath="*") + "\n")
        authorizer = ABACAuthorizer.from_file(p)
        self.assertEqual(len(authorizer.policies), 2)
        self.assertEqual(self.successResultOf(authorizer.authorize(
            path(ALICE, "get", "/x"))), (ALLOW, ""))

    def test_rules_for(self) -> None:
        """Upstream RulesFor: one rule per policy of the subject in that namespace."""
        authorizer = ABACAuthorizer([
            parse_policy_line(line(user="bob", namespace="ns", resource="pods", apiGroup="",
                                   readonly=True)),
            parse_policy_line(line(group="dev", nonResourcePath="/healthz", namespace="*")),
            parse_policy_line(line(user="alice", namespace="*", resource="*", apiGroup="*")),
        ])
        self.assertEqual(authorizer.rules_for(BOB, "ns"), (
            [{"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods"]}],
            [{"verbs": ["*"], "nonResourceURLs": ["/healthz"]}], False, ""))
        self.assertEqual(authorizer.rules_for(BOB, "other")[0], [])

    def test_policy_conversion(self) -> None:
        """The v0 and v1beta1 conversions as upstream's."""
        self.assertEqual(parse_policy_line('{"user": "a"}'), Policy(
            user="a", api_group="*", resource="*", namespace="*", non_resource_path="*"))
        self.assertEqual(parse_policy_line(line(group="*", resource="pods")), Policy(
            group="system:authenticated", resource="pods"))


class BadFileTests(FileTestCase):
    """Item 7: bad policy files are one-line errors with upstream's text."""

    def test_table(self) -> None:
        cases = [
            ('{"apiVersion": "%s", "kind": "Policy", "spec": {"user":"alice"}}\n{bad json\n' % V1,
             "line 2: {bad json: couldn't get version/kind; json parse error: invalid character "
             "'b' looking for beginning of object key string"),
            ('{"apiVersion": "%s", "kind": "Nope", "spec": {}}' % V1,
             'line 1: {"apiVersion": "%s", "kind": "Nope", "spec": {}}: no kind "Nope" is '
             'registered for version "%s" in scheme "pkg/apis/abac/register.go:33"' % (V1, V1)),
            ('{"apiVersion": "abac.authorization.kubernetes.io/v2", "kind": "Policy"}',
             'no kind "Policy" is registered for version '
             '"abac.authorization.kubernetes.io/v2" in scheme "pkg/apis/abac/register.go:33"'),
            ('{"user":"alice", "readonly": "yes"}',
             "line 1: {\"user\":\"alice\", \"readonly\": \"yes\"}: json: cannot unmarshal "
             "string into Go struct field Policy.readonly of type bool"),
            ("[1,2]", "line 1: [1,2]: couldn't get version/kind; json parse error: json: cannot "
                      "unmarshal array into Go value of type struct { APIVersion string "
                      '"json:\\"apiVersion,omitempty\\""; Kind string '
                      '"json:\\"kind,omitempty\\"" }'),
            ("\n\n{", "line 3: {: couldn't get version/kind; json parse error: unexpected end "
                      "of JSON input"),
        ]
        for text, want in cases:
            p = self.write(text)
            with self.assertRaises(PolicyLoadError) as ctx:
                load_policy_file(p)
            self.assertIn(want, str(ctx.exception))
            self.assertTrue(str(ctx.exception).startswith(f"error reading policy file {p}, "))
            self.assertNotIn("\n", str(ctx.exception))

    def test_line_too_long(self) -> None:
        """A line of 64 KiB or more ends the reading (Go's bufio.Scanner)."""
        p = self.write(line(user="a") + "\n" + line(user="x" * 70000) + "\n")
        with self.assertRaises(PolicyLoadError) as ctx:
            load_policy_file(p)
        self.assertEqual(str(ctx.exception),
                         f"error reading policy file {p}: bufio.Scanner: token too long")

    def test_unknown_field_accepted(self) -> None:
        """Unknown fields are ignored (upstream decodes leniently)."""
        p = self.write(line(user="alice", bogus=1))
        self.assertEqual(load_policy_file(p), [Policy(user="alice")])

    def test_missing_file(self) -> None:
        with self.assertRaises(PolicyLoadError) as ctx:
            load_policy_file("/nonexistent/policy.jsonl")
        self.assertEqual(str(ctx.exception),
                         "open /nonexistent/policy.jsonl: no such file or directory")
