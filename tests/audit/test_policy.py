"""
The audit policy (L{kubetwist.audit.policy}): loading with upstream's error messages (as
recorded from kube-apiserver v1.32 started with each bad file) and rule matching as upstream's
C{checker.go}.
"""

from __future__ import annotations

import os
import tempfile

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.audit import validate_options
from kubetwist.audit.policy import (
    METADATA,
    NONE,
    REQUEST,
    REQUEST_RESPONSE,
    PolicyError,
    load_policy,
    load_policy_file,
)
from kubetwist.authentication.user import UserInfo
from kubetwist.endpoints.requestinfo import parse_request_info

HEAD = "apiVersion: audit.k8s.io/v1\nkind: Policy\n"


def info(method, path, query=""):
    return parse_request_info(method, path, query)


class LoadTests(SynchronousTestCase):
    def write(self, text: str) -> str:
        fd, path = tempfile.mkstemp(suffix=".yaml")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        self.addCleanup(os.unlink, path)
        return path

    def error(self, text: str) -> str:
        path = self.write(text)
        e = self.assertRaises(PolicyError, load_policy_file, path)
        return str(e).replace(path, "P")

    def test_unsupported_level(self):
        self.assertEqual(self.error(HEAD + "rules:\n- level: Foo\n"),
                         'rules[0].level: Unsupported value: "Foo": supported values: "None", '
                         '"Metadata", "Request", "RequestResponse": from file P')

    def test_no_rules(self):
        self.assertEqual(self.error(HEAD + "rules: []\n"),
                         "loaded illegal policy with 0 rules: from file P")

    def test_several_errors(self):
        """Several errors are one aggregate, in upstream's order."""
        self.assertEqual(
            self.error(HEAD + 'omitStages: [Bad]\nrules:\n- level: None\n'
                       '  nonResourceURLs: ["x*y"]\n'
                       '  resources: [{group: "", resources: ["pods"]}]\n'),
            '[omitStages[0]: Invalid value: "Bad": allowed stages are RequestReceived,'
            'ResponseStarted,ResponseComplete,Panic, rules[0].nonResourceURLs[0]: Invalid '
            'value: "x*y": non-resource URL rules must begin with a \'/\' character, '
            'rules[0].nonResourceURLs[0]: Invalid value: "x*y": non-resource URL wildcards '
            '\'*\' must be the final character of the rule, rules[0].nonResourceURLs: Invalid '
            'value: []string{"x*y"}: rules cannot apply to both regular resources and '
            'non-resource URLs]: from file P')

    def test_no_api_version(self):
        self.assertEqual(self.error("kind: Policy\nrules:\n- level: None\n"),
                         "unknown group version field audit.k8s.io/__internal, Kind=Policy in "
                         "policy: from file P")

    def test_yaml_error(self):
        self.assertEqual(self.error(": : bad"),
                         "failed decoding: yaml: did not find expected key: from file P")

    def test_missing_file(self):
        e = self.assertRaises(PolicyError, load_policy_file, "/nonexistent/p.yaml")
        self.assertEqual(str(e), 'failed to read file path "/nonexistent/p.yaml": open '
                         '/nonexistent/p.yaml: no such file or directory')

    def test_unknown_fields_are_lenient(self):
        """Unknown fields are ignored (upstream falls back to lenient decoding)."""
        policy = load_policy((HEAD + "rules:\n- level: Metadata\n  foo: 1\n").encode())
        self.assertEqual(policy.rules[0].level, METADATA)

    def test_resource_names_need_resources(self):
        self.assertEqual(
            self.error(HEAD + "rules:\n- level: None\n  resources: [{resourceNames: [a]}]\n"),
            'rules[0].resources.resourceNames: Invalid value: []string{"a"}: using '
            'resourceNames requires at least one resource: from file P')

    def test_options_error_is_one_line(self):
        """The flag check names the file with upstream's prefix."""
        path = self.write(HEAD + "rules: []\n")
        self.assertEqual(validate_options({"audit-policy-file": path}),
                         f"loading audit policy file: loaded illegal policy with 0 rules: "
                         f"from file {path}")
        self.assertEqual(validate_options({"audit-log-path": "/x", "audit-log-mode": "fast"}),
                         'invalid audit log mode fast, allowed modes are '
                         '"batch,blocking,blocking-strict"')

    def test_backend_options_checked_when_on(self):
        """Upstream checks a backend's options only when the backend is on; several errors
        are one aggregate."""
        self.assertIsNone(validate_options({"audit-log-mode": "fast", "audit-log-maxage": -1}))
        self.assertEqual(
            validate_options({"audit-log-path": "/x", "audit-log-maxage": -1,
                              "audit-log-truncate-max-event-size": 0}),
            "[invalid audit truncate log max event size 0, must be a positive number, "
            "--audit-log-maxage -1 can't be a negative number]")
        self.assertEqual(
            validate_options({"audit-webhook-config-file": "/k",
                              "audit-webhook-batch-throttle-qps": 0}),
            "invalid audit batch webhook throttle QPS 0, must be a positive number")
        self.assertEqual(
            validate_options({"audit-webhook-config-file": "/k",
                              "audit-webhook-truncate-max-batch-size": 10}),
            "invalid audit truncate webhook max batch size 10, must be greater than max event "
            "size (102400)")


POLICY = HEAD + """omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: None
  users: ["system:kube-proxy"]
- level: RequestResponse
  userGroups: ["auditors"]
  omitStages: [ResponseStarted]
  omitManagedFields: false
- level: Request
  resources: [{group: "", resources: ["pods/log", "*/status"]}]
- level: Metadata
  resources: [{group: "apps", resources: ["deployments/*"]}]
- level: Request
  resources: [{group: "", resources: ["configmaps"], resourceNames: ["special"]}]
- level: Metadata
  namespaces: ["kube-system"]
- level: RequestResponse
  verbs: ["delete"]
  resources: [{group: "*"}]
- level: Metadata
  nonResourceURLs: ["/healthz*", "/version"]
"""

JANE = UserInfo("jane", groups=["system:authenticated"])


class EvaluateTests(SynchronousTestCase):
    def setUp(self):
        self.policy = load_policy(POLICY.encode())

    def level(self, method, path, user=JANE, query=""):
        return self.policy.evaluate(user, info(method, path, query)).level

    def test_first_match_wins(self):
        self.assertEqual(self.level("GET", "/api/v1/nodes",
                                    UserInfo("system:kube-proxy", groups=["auditors"])), NONE)
        self.assertEqual(self.level("GET", "/api/v1/nodes", UserInfo("bob", groups=["auditors"])),
                         REQUEST_RESPONSE)

    def test_subresources(self):
        self.assertEqual(self.level("GET", "/api/v1/namespaces/a/pods/p/log"), REQUEST)
        self.assertEqual(self.level("PUT", "/api/v1/namespaces/a/pods/p/status"), REQUEST)
        self.assertEqual(self.level("GET", "/api/v1/namespaces/a/pods/p"), NONE)
        self.assertEqual(self.level("GET", "/apis/apps/v1/namespaces/a/deployments/d/scale"),
                         METADATA)
        # upstream: "deployments/*" also matches the resource itself
        self.assertEqual(self.level("GET", "/apis/apps/v1/namespaces/a/deployments/d"),
                         METADATA)
        self.assertEqual(self.level("GET", "/apis/apps/v1/namespaces/a/replicasets/d"), NONE)

    def test_resource_names(self):
        self.assertEqual(self.level("GET", "/api/v1/namespaces/a/configmaps/special"), REQUEST)
        self.assertEqual(self.level("GET", "/api/v1/namespaces/a/configmaps/other"), NONE)

    def test_namespaces_and_verbs(self):
        self.assertEqual(self.level("GET", "/api/v1/namespaces/kube-system/secrets"), METADATA)
        self.assertEqual(self.level("DELETE", "/apis/batch/v1/namespaces/a/jobs/j"),
                         REQUEST_RESPONSE)

    def test_non_resource_urls(self):
        self.assertEqual(self.level("GET", "/healthz/etcd"), METADATA)
        self.assertEqual(self.level("GET", "/version"), METADATA)
        self.assertEqual(self.level("GET", "/versions"), NONE)
        self.assertEqual(self.level("GET", "/metrics"), NONE)

    def test_stages_and_managed_fields(self):
        """A rule's omitStages are united with the policy's; omitManagedFields per rule."""
        auditor = UserInfo("bob", groups=["auditors"])
        cfg = self.policy.evaluate(auditor, info("GET", "/api/v1/nodes"))
        self.assertEqual(cfg.omit_stages, ("RequestReceived", "ResponseStarted"))
        self.assertFalse(cfg.omit_managed_fields)
        cfg = self.policy.evaluate(JANE, info("GET", "/version"))
        self.assertEqual(cfg.omit_stages, ("RequestReceived",))
        self.assertTrue(cfg.omit_managed_fields)

    def test_no_user(self):
        """Rules naming users or groups never match a request without a user."""
        self.assertEqual(self.level("GET", "/version", None), METADATA)
        self.assertEqual(self.level("GET", "/api/v1/nodes", None), NONE)


class FlagTests(SynchronousTestCase):
    """C{twistd kubeapi --audit-*}: a bad policy file or value is one line and exit 1."""

    write = LoadTests.write

    def refused(self, *args) -> str:
        import io
        import sys

        from kubetwist.tap import Options

        err = io.StringIO()
        self.patch(sys, "stderr", err)
        with self.assertRaises(SystemExit) as caught:
            Options().parseOptions(list(args))
        self.assertEqual(caught.exception.code, 1)
        lines = err.getvalue().splitlines()
        self.assertEqual(len(lines), 1, lines)
        return lines[0]

    def test_bad_policy_file(self):
        path = self.write(HEAD + "rules:\n- level: Foo\n")
        self.assertEqual(self.refused(f"--audit-policy-file={path}"),
                         'Error: loading audit policy file: rules[0].level: Unsupported value: '
                         '"Foo": supported values: "None", "Metadata", "Request", '
                         f'"RequestResponse": from file {path}')

    def test_bad_values(self):
        self.assertEqual(self.refused("--audit-log-path=/x", "--audit-log-maxage=-1"),
                         "Error: --audit-log-maxage -1 can't be a negative number")
        self.assertEqual(self.refused("--audit-log-path=/x", "--audit-log-format=xml"),
                         'Error: invalid audit log format xml, allowed formats are '
                         '"legacy,json"')

    def test_defaults(self):
        from kubetwist.tap import Options

        o = Options()
        o.parseOptions([])
        self.assertEqual((o["audit-log-mode"], o["audit-webhook-mode"], o["audit-log-format"],
                          o["audit-webhook-batch-max-wait"],
                          o["audit-webhook-initial-backoff"]),
                         ("blocking", "batch", "json", 30.0, 10.0))
