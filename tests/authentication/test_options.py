"""
Tests for L{kubetwist.authentication.options}: the authentication flags of C{twistd kubeapi}
(one-line errors) and the authenticator they assemble (anonymous as upstream).
"""

from __future__ import annotations

import io
import os
import sys
import tempfile

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.authentication.options import anonymous_enabled, build_authentication
from kubetwist.tap import Options
from tests.authentication.fakes import FakeRequest, resolved

HEAD = "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n"


class FlagTests(SynchronousTestCase):
    def write(self, text: str) -> str:
        fd, path = tempfile.mkstemp(suffix=".yaml")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        self.addCleanup(os.unlink, path)
        return path

    def parse(self, *args) -> Options:
        o = Options()
        o.parseOptions(list(args))
        return o

    def refused(self, *args) -> str:
        err = io.StringIO()
        self.patch(sys, "stderr", err)
        with self.assertRaises(SystemExit):
            self.parse(*args)
        lines = err.getvalue().splitlines()
        self.assertEqual(len(lines), 1, lines)
        return lines[0]

    def test_defaults(self):
        o = self.parse()
        self.assertEqual((o["authentication-token-webhook-version"],
                          o["authentication-token-webhook-cache-ttl"],
                          o["enable-bootstrap-token-auth"], o["oidc-username-claim"],
                          o["oidc-signing-algs"], o["requestheader-username-headers"],
                          o["service-account-lookup"]),
                         ("v1beta1", 120.0, False, "sub", ["RS256"], [], True))
        self.assertEqual(o["authentication-config-parsed"]["anonymous"],
                         {"enabled": True, "flag": True})

    def test_bad_flags_are_one_line_errors(self):
        """Table: bad authentication flags and files stop the start with one line."""
        cases = [
            (["--authentication-config=/nonexistent"],
             'Error: failed to load authentication configuration from file "/nonexistent": '
             'open /nonexistent: no such file or directory'),
            (["--oidc-issuer-url=http://i", "--oidc-client-id=k"],
             'Error: jwt[0].issuer.url: Invalid value: '
             '"http://i": URL scheme must be https'),
            (["--oidc-issuer-url=https://i", "--oidc-client-id=k", "--oidc-signing-algs=HS256"],
             'Error: oidc: unsupported signing alg: "HS256"'),
            (["--oidc-required-claim=novalue"],
             'Error: invalid argument "novalue" for "--oidc-required-claim" flag: malformed '
             'pair, expect string=string'),
            (["--authentication-token-webhook-version=v2"],
             'Error: unsupported authentication webhook version "v2", supported versions are '
             '"v1", "v1beta1"'),
            (["--authentication-token-webhook-config-file=/nonexistent"],
             "Error: invalid configuration: stat /nonexistent: no such file or directory"),
            (["--requestheader-client-ca-file=" + self.write("not pem")],
             "data does not contain any valid RSA or ECDSA certificates"),
            (["--requestheader-username-headers=X-Remote-User,"],
             "Error: empty value in requestheader-username-headers"),
        ]
        for args, message in cases:
            self.assertIn(message, self.refused(*args), args)

    def test_as_the_binary_does(self):
        """What v1.32.0 starts with, silently: an issuer without client id (no OIDC); the
        --oidc-* flags next to a file (ignored); --anonymous-auth next to a file's anonymous
        (the file wins)."""
        self.assertEqual(self.parse("--oidc-issuer-url=https://i")[
            "authentication-config-parsed"]["jwt"], [])
        path = self.write(HEAD + "anonymous: {enabled: true, conditions: [{path: /livez}]}\n")
        o = self.parse("--authentication-config=" + path, "--oidc-issuer-url=https://i",
                       "--oidc-client-id=k", "--anonymous-auth=false")
        self.assertEqual(o["authentication-config-parsed"], {
            "jwt": [], "anonymous": {"enabled": True, "conditions": [{"path": "/livez"}]}})

    def test_oidc_flags_parsed(self):
        o = self.parse("--oidc-issuer-url=https://i", "--oidc-client-id=k",
                       "--oidc-required-claim=a=b", "--oidc-required-claim=c=d=e",
                       "--oidc-groups-claim=groups")
        jwt = o["authentication-config-parsed"]["jwt"][0]
        self.assertEqual(jwt["claimValidationRules"], [{"claim": "a", "requiredValue": "b"},
                                                       {"claim": "c", "requiredValue": "d=e"}])
        self.assertEqual(jwt["claimMappings"]["username"], {"claim": "sub",
                                                            "prefix": "https://i#"})


class AnonymousTests(SynchronousTestCase):
    def test_rules(self):
        """--anonymous-auth is switched off by AlwaysAllow (upstream ApplyAuthorization);
        the file's anonymous is not; conditions restrict the paths."""
        flag = {"anonymous": {"enabled": True, "flag": True}}
        self.assertEqual(anonymous_enabled(flag, ["AlwaysAllow"]), (False, None))
        self.assertEqual(anonymous_enabled(flag, ["Node", "RBAC"]), (True, None))
        conditions = {"anonymous": {"enabled": True, "conditions": [{"path": "/livez"}]}}
        self.assertEqual(anonymous_enabled(conditions, ["AlwaysAllow"]), (True, ["/livez"]))
        self.assertEqual(anonymous_enabled({"anonymous": {"enabled": False}}, ["RBAC"]),
                         (False, None))

    def test_conditions_in_the_chain(self):
        """Anonymous only on the condition paths; other paths get no user (401)."""
        o = {"authentication-config-parsed": {"jwt": [], "anonymous": {
            "enabled": True, "conditions": [{"path": "/livez"}]}}, "authorization-mode": []}
        authn = build_authentication(o, Clock(), [], [])
        user = resolved(authn.authenticator.authenticate(FakeRequest(path=b"/livez")))
        self.assertEqual((user.name, user.groups), ("system:anonymous",
                                                    ["system:unauthenticated"]))
        self.assertIsNone(resolved(authn.authenticator.authenticate(
            FakeRequest(path=b"/readyz"))))
        o = {"anonymous-auth": True, "authorization-mode": ["RBAC"]}
        authn = build_authentication(o, Clock(), [], [])
        self.assertEqual(resolved(authn.authenticator.authenticate(
            FakeRequest(path=b"/api/v1/pods"))).name, "system:anonymous")
