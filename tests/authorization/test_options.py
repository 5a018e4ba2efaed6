"""
The authorization flags and --authorization-config: upstream's start errors (recorded from
kube-apiserver v1.32), the structured configuration's validation, and the assembled union.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist import authorization
from kubetwist.authentication.user import UserInfo
from kubetwist.authorization.abac import ABACAuthorizer
from kubetwist.authorization.authorizer import ALLOW, NO_OPINION, Attributes
from kubetwist.authorization.node import NodeAuthorizer
from kubetwist.authorization.options import (
    build_authorizer,
    go_duration,
    parse_go_duration,
    validate_options,
)
from kubetwist.authorization.webhook import WebhookAuthorizer
from kubetwist.tap import Options

KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: w
  cluster: {server: "https://127.0.0.1:24050/authorize"}
users:
- name: u
  user: {}
contexts:
- name: c
  context: {cluster: w, user: u}
current-context: c
"""
HEAD = "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthorizationConfiguration\n"
WEBHOOK = """  webhook:
    timeout: 3s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: Deny
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: %s}
    matchConditions:
    - expression: "request.user != 'ignored'"
"""


class OptionsTestCase(SynchronousTestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp()
        self.addCleanup(lambda: [os.unlink(os.path.join(self.dir, n))
                                 for n in os.listdir(self.dir)] and os.rmdir(self.dir))
        self.kubeconfig = self.write("kc.yaml", KUBECONFIG)
        self.policy = self.write("policy.jsonl", '{"user": "alice"}\n')

    def write(self, name: str, text: str) -> str:
        p = os.path.join(self.dir, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def refused(self, *args: str) -> str:
        """The one line C{twistd kubeapi} prints for C{args} (after C{Error: })."""
        err = io.StringIO()
        self.patch(sys, "stderr", err)
        with self.assertRaises(SystemExit):
            Options().parseOptions(list(args))
        lines = err.getvalue().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertTrue(lines[0].startswith("Error: "), lines[0])
        return lines[0][len("Error: "):]

    def parse(self, *args: str) -> Options:
        o = Options()
        o.parseOptions(list(args))
        return o


class FlagTests(OptionsTestCase):
    """Item 7: the legacy flags' start errors, as kube-apiserver v1.32 prints them."""

    def test_table(self) -> None:
        bad = self.write("bad.jsonl", '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1'
                                      '", "kind": "Policy", "spec": {}}\n{bad json\n')
        cases = [
            (["--authorization-mode=ABAC"],
             "authorization-mode ABAC's authorization policy file not passed"),
            (["--authorization-mode=Webhook"],
             "authorization-mode Webhook's authorization config file not passed"),
            (["--authorization-mode=AlwaysAllow", f"--authorization-policy-file={bad}"],
             "cannot specify --authorization-policy-file without mode ABAC"),
            (["--authorization-mode=AlwaysAllow",
              f"--authorization-webhook-config-file={self.kubeconfig}"],
             "cannot specify --authorization-webhook-config-file without mode Webhook"),
            (["--authorization-mode=Foo"], 'authorization-mode "Foo" is not a valid mode'),
            (["--authorization-mode=AlwaysAllow,AlwaysAllow"],
             'authorization-mode ["AlwaysAllow" "AlwaysAllow"] has mode specified more than '
             "once"),
            (["--authorization-mode=ABAC", "--authorization-policy-file=nofile"],
             "invalid authorization config: open nofile: no such file or directory"),
            (["--authorization-mode=ABAC", f"--authorization-policy-file={bad}"],
             f"invalid authorization config: error reading policy file {bad}, line 2: "
             "{bad json: couldn't get version/kind; json parse error: invalid character 'b' "
             "looking for beginning of object key string"),
            (["--authorization-mode=Webhook", "--authorization-webhook-config-file=nofile"],
             "invalid authorization config: stat nofile: no such file or directory"),
            (["--authorization-mode=Webhook", f"--authorization-webhook-config-file={bad}"],
             f'invalid authorization config: error loading config file "{bad}": no kind '
             '"Policy" is registered for version "abac.authorization.kubernetes.io/v1beta1" in '
             'scheme "k8s.io/client-go/tools/clientcmd/api/latest/latest.go:50"'),
            (["--authorization-mode=Webhook",
              f"--authorization-webhook-config-file={self.kubeconfig}",
              "--authorization-webhook-version=v2"],
             'invalid authorization config: unsupported webhook authorizer version "v2", '
             'supported versions are "v1", "v1beta1"'),
            (["--authorization-config=c.yaml", "--authorization-mode=AlwaysDeny"],
             "--authorization-config can not be specified when --authorization-mode or "
             "--authorization-webhook-* flags are defined"),
            (["--authorization-config=c.yaml", "--authorization-webhook-version=v1"],
             "--authorization-config can not be specified when --authorization-mode or "
             "--authorization-webhook-* flags are defined"),
            (["--authorization-config=c.yaml", "--authorization-webhook-cache-authorized-ttl=1m"],
             "--authorization-config can not be specified when --authorization-mode or "
             "--authorization-webhook-* flags are defined"),
            (["--authorization-config=nofile"], "open nofile: no such file or directory"),
        ]
        for args, want in cases:
            self.assertEqual(self.refused(*args), want, args)

    def test_parsed(self) -> None:
        """Good flags parse: modes listed, TTLs in seconds, the files read."""
        o = self.parse("--authorization-mode=Node,ABAC,Webhook",
                       f"--authorization-policy-file={self.policy}",
                       f"--authorization-webhook-config-file={self.kubeconfig}",
                       "--authorization-webhook-cache-unauthorized-ttl=10s")
        self.assertEqual(o["authorization-mode"], ["Node", "ABAC", "Webhook"])
        self.assertEqual((o["authorization-webhook-cache-authorized-ttl"],
                          o["authorization-webhook-cache-unauthorized-ttl"]), (300.0, 10.0))
        union = build_authorizer(o, authorization.AuthorizerConfig(reactor=Clock(), options=o))
        kinds = [type(a) for a in union.authorizers]
        self.assertEqual(kinds, [authorization.PrivilegedGroups, NodeAuthorizer,
                                 ABACAuthorizer, WebhookAuthorizer])
        webhook = union.authorizers[3]
        self.assertEqual((webhook.version, webhook.authorized_ttl, webhook.unauthorized_ttl,
                          webhook.decision_on_error, webhook.url),
                         ("v1beta1", 300.0, 10.0, NO_OPINION,
                          "https://127.0.0.1:24050/authorize?timeout=30s"))
        alice = Attributes(user=UserInfo(name="alice"), verb="get", path="/x")
        self.assertEqual(self.successResultOf(union.authorize(alice)), (ALLOW, ""))


class ConfigFileTests(OptionsTestCase):
    """--authorization-config: loading and validation, upstream's texts."""

    def config(self, body: str, head: str = HEAD) -> str:
        return self.write("authz.yaml", head + body)

    def test_valid(self) -> None:
        """Entries in order behind system:masters; the webhook's own settings."""
        p = self.config("authorizers:\n- type: Node\n  name: node\n- type: Webhook\n"
                        "  name: web\n" + WEBHOOK % self.kubeconfig +
                        "- type: ABAC\n  name: abac\n- type: AlwaysDeny\n  name: alwaysdeny\n")
        o = self.parse(f"--authorization-config={p}",
                       f"--authorization-policy-file={self.policy}")
        self.assertEqual(o["authorization-mode"], ["Node", "Webhook", "ABAC", "AlwaysDeny"])
        reloading = build_authorizer(o, authorization.AuthorizerConfig(reactor=Clock(),
                                                                        options=o))
        self.addCleanup(reloading.stop)
        union = reloading.current
        webhook = union.authorizers[2]
        self.assertIsInstance(webhook, WebhookAuthorizer)
        self.assertEqual((webhook.version, webhook.timeout, webhook.authorized_ttl,
                          webhook.unauthorized_ttl, webhook.decision_on_error, webhook.name),
                         ("v1", 3.0, 300.0, 30.0, "deny", "web"))
        self.assertIsNotNone(webhook.matcher)
        self.assertIsInstance(union.authorizers[3], ABACAuthorizer)
        self.assertEqual(len(union.authorizers), 5)
        ignored = Attributes(user=UserInfo(name="ignored"), verb="get", path="/x")
        self.assertEqual(self.successResultOf(reloading.authorize(ignored)),
                         (NO_OPINION, "No policy matched.\nEverything is forbidden."))

    def test_errors(self) -> None:
        """Item 7: each bad file gives kube-apiserver v1.32's one-line error."""
        cases = [
            ("authorizers: []\n",
             "authorizers: Required value: at least one authorization mode must be defined"),
            ("", "authorizers: Required value: at least one authorization mode must be defined"),
            ("authorizers:\n- type: Webhook\n  name: web\n  webhook: {}\n- type: Foo\n"
             "  name: x\n- type: AlwaysAllow\n  name: Bad_Name\n- type: Node\n"
             "- type: AlwaysAllow\n  name: r2\n- type: AlwaysDeny\n  name: web\n"
             "  webhook: {timeout: 3s}\n",
             "[authorizers[0].timeout: Required value, authorizers[0].subjectAccessReviewVersion:"
             " Required value, authorizers[0].failurePolicy: Required value, "
             "authorizers[0].connectionInfo.type: Required value, authorizers[1].type: "
             'Unsupported value: "Foo": supported values: "ABAC", "AlwaysAllow", "AlwaysDeny", '
             '"Node", "RBAC", "Webhook", authorizers[2].name: Invalid value: "Bad_Name": '
             "authorizer name is invalid: a lowercase RFC 1123 subdomain must consist of lower "
             "case alphanumeric characters, '-' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), "
             "authorizers[3].name: Required value, authorizers[4].type: Duplicate value: "
             '"AlwaysAllow", authorizers[5].name: Duplicate value: "web", authorizers[5].webhook:'
             ' Invalid value: "non-null": may only be specified when type=Webhook]'),
            ("authorizers:\n- type: Webhook\n  name: web\n  webhook:\n    timeout: 31s\n"
             "    authorizedTTL: -1s\n    subjectAccessReviewVersion: v2\n"
             "    matchConditionSubjectAccessReviewVersion: v1beta1\n"
             "    failurePolicy: Maybe\n"
             "    connectionInfo: {type: KubeConfigFile, kubeConfigFile: kc.yaml}\n"
             "    matchConditions:\n    - expression: \"'a'\"\n    - expression: '  '\n"
             "    - expression: 'true'\n    - expression: 'true'\n",
             '[authorizers[0].timeout: Invalid value: "31s": must be > 0s and <= 30s, '
             'authorizers[0].authorizedTTL: Invalid value: "-1s": must be > 0s, '
             'authorizers[0].subjectAccessReviewVersion: Unsupported value: "v2": supported '
             'values: "v1", "v1beta1", authorizers[0].matchConditionSubjectAccessReviewVersion: '
             'Unsupported value: "v1beta1": supported values: "v1", authorizers[0].failurePolicy:'
             ' Unsupported value: "Maybe": supported values: "NoOpinion", "Deny", '
             'authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "kc.yaml": must be an'
             ' absolute path, authorizers[0].matchConditions[0].expression: Invalid value: '
             "\"'a'\": must evaluate to bool but got string, "
             "authorizers[0].matchConditions[1].expression: Required value, "
             'authorizers[0].matchConditions[3].expression: Duplicate value: "true"]'),
            ("authorizers:\n- type: Webhook\n  name: web\n  webhook:\n    timeout: 3s\n"
             "    subjectAccessReviewVersion: v1\n    failurePolicy: Deny\n"
             "    connectionInfo: {type: InClusterConfig, kubeConfigFile: /x}\n"
             "    matchConditions:\n    - expression: 'true'\n",
             "[authorizers[0].matchConditionSubjectAccessReviewVersion: Required value: required "
             "if match conditions are specified, authorizers[0].connectionInfo.kubeConfigFile: "
             'Invalid value: "/x": can only be set when type=KubeConfigFile]'),
            ("authorizers:\n- type: Webhook\n  name: web\n  webhook:\n    timeout: 3s\n"
             "    subjectAccessReviewVersion: v1\n    failurePolicy: Deny\n"
             "    connectionInfo: {type: KubeConfigFile, kubeConfigFile: /nonexistent}\n",
             'authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "/nonexistent": '
             "error loading file: stat /nonexistent: no such file or directory"),
            ("authorizers:\n- type: Webhook\n  name: web\n  webhook:\n    timeout: 3s\n"
             "    bogus: 1\n",
             "failed to load AuthorizationConfiguration from file: strict decoding error: "
             'unknown field "authorizers[0].webhook.bogus"'),
            ("authorizers:\n- type: Webhook\n  name: web\n  webhook:\n    timeout: 3\n"
             "    bogus: 1\n",
             "failed to load AuthorizationConfiguration from file: json: cannot unmarshal "
             "number into Go struct field WebhookConfiguration.authorizers.webhook.timeout of "
             "type string"),
            ("authorizers:\n- type: 5\n  name: web\n",
             "failed to load AuthorizationConfiguration from file: json: cannot unmarshal "
             "number into Go struct field AuthorizerConfiguration.authorizers.type of type "
             "string"),
            ("authorizers:\n- type: 5\n  name: web\n  webhook:\n    timeout: soon\n",
             'failed to load AuthorizationConfiguration from file: time: invalid duration '
             '"soon"'),
            ("authorizers: {}\n",
             "failed to load AuthorizationConfiguration from file: json: cannot unmarshal "
             "object into Go struct field AuthorizationConfiguration.authorizers of type "
             "[]v1beta1.AuthorizerConfiguration"),
            ("authorizers: [\n", "failed to load AuthorizationConfiguration from file: yaml: "
                                 "line 3: did not find expected node content"),
            ("authorizers:\n- type: AlwaysDeny\n  name: deny\n- type: AlwaysAllow\n"
             "  name: myallow\n",
             "[expected name alwaysdeny for authorizer AlwaysDeny instead of deny, expected "
             "name alwaysallow for authorizer AlwaysAllow instead of myallow]"),
            ("authorizers:\n- type: ABAC\n  name: abac\n",
             "invalid authorization config: open : no such file or directory"),
            ("authorizers:\n- type: Webhook\n  name: web\n" + WEBHOOK.replace(
                "KubeConfigFile, kubeConfigFile: %s", "InClusterConfig"),
             "invalid authorization config: unable to load in-cluster configuration, "
             "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"),
        ]
        for body, want in cases:
            p = self.config(body)
            self.assertEqual(self.refused(f"--authorization-config={p}"), want, body)
        p = self.config("authorizers: []\n", "apiVersion: apiserver.config.k8s.io/v1alpha9\n"
                                             "kind: AuthorizationConfiguration\n")
        self.assertEqual(self.refused(f"--authorization-config={p}"),
                         'failed to load AuthorizationConfiguration from file: no kind '
                         '"AuthorizationConfiguration" is registered for version '
                         '"apiserver.config.k8s.io/v1alpha9" in scheme '
                         '"pkg/apis/apiserver/load/load.go:32"')

    def test_validate_options_mapping(self) -> None:
        """validate_options works on a plain mapping (no defaults: any value counts as set)."""
        options = {"authorization-mode": "AlwaysAllow", "authorization-config": ""}
        validate_options(options)
        self.assertEqual(options["authorization-mode"], ["AlwaysAllow"])


class ReloadTests(OptionsTestCase):
    """Upstream v1.32 reads --authorization-config again every minute and swaps the union."""

    def test_reload(self) -> None:
        node = "authorizers:\n- type: Node\n  name: node\n"
        allow = node + "- type: AlwaysAllow\n  name: alwaysallow\n"
        deny = node + "- type: AlwaysDeny\n  name: alwaysdeny\n"
        p = self.write("authz.yaml", HEAD + allow)
        o = self.parse(f"--authorization-config={p}")
        clock = Clock()
        reloading = build_authorizer(o, authorization.AuthorizerConfig(reactor=clock,
                                                                        options=o))
        self.addCleanup(reloading.stop)
        node_authorizer = reloading.current.authorizers[1]
        jane = Attributes(user=UserInfo(name="jane"), verb="get", path="/x")
        decide = lambda: self.successResultOf(reloading.authorize(jane))  # noqa: E731
        self.assertEqual(decide(), (ALLOW, ""))
        self.write("authz.yaml", HEAD + deny)
        clock.advance(59)
        self.assertEqual(decide(), (ALLOW, ""))
        clock.advance(1)
        self.assertEqual(decide(), (NO_OPINION, "Everything is forbidden."))
        self.assertIs(reloading.current.authorizers[1], node_authorizer)  # built once, reused
        # invalid files and files dropping a start-up type are refused; the union stays
        for bad in ("authorizers: [\n",
                    "authorizers:\n- type: AlwaysAllow\n  name: alwaysallow\n",
                    node + "- type: ABAC\n  name: abac\n"):
            self.write("authz.yaml", HEAD + bad)
            clock.advance(60)
            self.assertEqual(decide(), (NO_OPINION, "Everything is forbidden."))
        self.flushLoggedErrors()
        self.assertEqual(reloading.reloads, 1)
        os.unlink(p)
        clock.advance(60)
        self.write("authz.yaml", HEAD + allow)
        clock.advance(60)
        self.assertEqual(decide(), (ALLOW, ""))
        self.assertEqual(reloading.rules_for(UserInfo(name="jane"), "default")[0],
                         [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}])


class DurationTests(SynchronousTestCase):
    def test_go_durations(self) -> None:
        for text, seconds in (("5m0s", 300.0), ("30s", 30.0), ("1.5s", 1.5), ("-1s", -1.0),
                              ("1h0m0s", 3600.0), ("500ms", 0.5), ("0s", 0.0)):
            self.assertEqual(parse_go_duration(text), seconds)
            self.assertEqual(go_duration(seconds), text)
        with self.assertRaises(ValueError):
            parse_go_duration("soon")
