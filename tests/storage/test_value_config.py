# -*- test-case-name: tests.storage.test_value_config -*-
"""
C{--encryption-provider-config}: loading, strict decoding and validation of an
EncryptionConfiguration (upstream C{encryptionconfig/config.go} and
C{apis/apiserver/validation/validation_encryption.go}), and the C{twistd kubeapi} flag.
"""

from __future__ import annotations

import base64
import io
import os
import sys

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.storage.value import (
    EncryptionConfigError,
    PrefixTransformers,
    load_encryption_config,
    parse_encryption_config,
)
from kubetwist.tap import Options

K16 = base64.b64encode(b"0123456789abcdef").decode()
K32 = base64.b64encode(bytes(range(32))).decode()
HEAD = "kind: EncryptionConfiguration\napiVersion: apiserver.config.k8s.io/v1\n"


class LoadTests(SynchronousTestCase):
    """Reading the file."""

    def write(self, text: str) -> str:
        path = self.mktemp()
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_valid(self) -> None:
        """A valid file gives one transformer per listed group-resource and wildcard."""
        rt = load_encryption_config(self.write(HEAD + f"""
resources:
- resources: [events]
  providers: [{{identity: {{}}}}]
- resources: [secrets, configmaps, pandas.awesome.bears.example]
  providers:
  - aescbc: {{keys: [{{name: key1, secret: "{K32}"}}]}}
- resources: ["*.apps"]
  providers:
  - aesgcm: {{keys: [{{name: key2, secret: "{K16}"}}]}}
- resources: ["*.*"]
  providers:
  - secretbox: {{keys: [{{name: key3, secret: "{K32}"}}]}}
"""))
        self.assertEqual(
            sorted(rt.transformers),
            [("", "configmaps"), ("", "events"), ("", "secrets"), ("*", "*"), ("apps", "*"),
             ("awesome.bears.example", "pandas")],
        )
        for t in rt.transformers.values():
            self.assertIsInstance(t, PrefixTransformers)
        self.assertTrue(rt.to_storage("/registry/secrets/a/b", b"{}", "/registry")
                        .startswith(b"k8s:enc:aescbc:v1:key1:"))
        self.assertTrue(rt.to_storage("/registry/deployments/a/b", b"{}", "/registry")
                        .startswith(b"k8s:enc:aesgcm:v1:key2:"))
        self.assertTrue(rt.to_storage("/registry/pods/a/b", b"{}", "/registry")
                        .startswith(b"k8s:enc:secretbox:v1:key3:"))
        self.assertEqual(rt.to_storage("/registry/events/a/b", b"{}", "/registry"), b"{}")

    def test_json_and_legacy_kind(self) -> None:
        """JSON works, and so does the legacy C{kind: EncryptionConfig}, C{apiVersion: v1}."""
        rt = load_encryption_config(self.write(
            '{"kind": "EncryptionConfig", "apiVersion": "v1", "resources": [{"resources": '
            f'["secrets"], "providers": [{{"aescbc": {{"keys": [{{"name": "a", "secret": '
            f'"{K32}"}}]}}}}]}}]}}'))
        self.assertEqual(list(rt.transformers), [("", "secrets")])

    def test_missing_and_empty(self) -> None:
        """An unreadable or empty file: upstream's messages."""
        e = self.assertRaises(EncryptionConfigError, load_encryption_config, "/nonexistent/x")
        self.assertEqual(str(e), 'error while parsing file: error while loading file: error '
                                 'reading encryption provider configuration file '
                                 '"/nonexistent/x": open /nonexistent/x: no such file or '
                                 'directory')
        path = self.write("")
        e = self.assertRaises(EncryptionConfigError, load_encryption_config, path)
        self.assertEqual(str(e), f'error while parsing file: error while loading file: '
                                 f'encryption provider configuration file "{path}" is empty')

    def refused(self, text: str) -> str:
        return str(self.assertRaises(EncryptionConfigError, parse_encryption_config,
                                     text.encode(), "enc.yaml"))

    def test_decode_errors(self) -> None:
        """Unknown kinds and fields are refused as by upstream's strict codec."""
        prefix = 'error while parsing file: error decoding encryption provider configuration ' \
                 'file "enc.yaml": '
        self.assertEqual(
            self.refused("kind: EncryptionConfigurations\napiVersion: apiserver.config.k8s.io/v1\n"
                         "resources: []\n"),
            prefix + 'no kind "EncryptionConfigurations" is registered for version '
                     '"apiserver.config.k8s.io/v1"')
        self.assertEqual(
            self.refused(HEAD + f"""
resources:
- resources: [secrets]
  providers:
  - aescbc: {{keys: [{{name: k, secret: "{K32}"}}]}}
  - kms: {{apiVersion: v2, name: p, endpoint: "unix:///tmp/p.sock", pandas: are the best}}
"""),
            prefix + 'strict decoding error: unknown field "resources[0].providers[1].kms.pandas"')
        self.assertEqual(
            self.refused(HEAD + "resources:\n- resources: secrets\n  providers: []\n"),
            prefix + "json: cannot unmarshal string into Go struct field "
                     "ResourceConfiguration.resources[0].resources of type []string")

    def test_validation_errors(self) -> None:
        """Validation messages carry upstream's field paths and texts."""
        self.assertEqual(self.refused(HEAD + "resources: []\n"),
                         "error while parsing file: resources: Required value: at least one "
                         "resources is required")
        self.assertEqual(
            self.refused(HEAD + """
resources:
- resources: [secrets]
  providers:
  - aescbc: {keys: [{name: k, secret: "c2hvcnQ="}]}
"""),
            'error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: Invalid '
            'value: "REDACTED": secret is not of the expected length, got 5, expected one of '
            '[16 24 32]')
        self.assertEqual(
            self.refused(HEAD + """
resources:
- resources: [secrets, "*.", Pods]
  providers:
  - secretbox: {keys: [{name: "", secret: "!!"}]}
  - {}
"""),
            'error while parsing file: [resources[0].resources: Invalid value: []string{"secrets",'
            ' "*.", "Pods"}: using overlapping resources such as \'secrets\' and \'*.\' in the '
            'same resource list is not allowed as they will be masked, '
            'resources[0].resources[2]: Invalid value: "Pods": resource name should not contain '
            'capital letters, '
            'resources[0].providers[0].secretbox.keys[0].name: Required value: name is a '
            'mandatory field for a key, '
            'resources[0].providers[0].secretbox.keys[0].secret: Invalid value: "REDACTED": '
            'secrets must be base64 encoded, '
            'resources[0].providers[1]: Invalid value: apiserver.ProviderConfiguration{'
            'AESGCM:(*apiserver.AESConfiguration)(nil), AESCBC:(*apiserver.AESConfiguration)'
            '(nil), Secretbox:(*apiserver.SecretboxConfiguration)(nil), Identity:'
            '(*apiserver.IdentityConfiguration)(nil), KMS:(*apiserver.KMSConfiguration)(nil)}: '
            'provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, '
            'Secretbox, Identity]')

    def test_resource_name_rules(self) -> None:
        """Each forbidden resource name has its own message."""
        cases = {
            "*": "use '*.' to encrypt all the resources from core API group or *.* to encrypt "
                 "all resources",
            "serviceipallocations": "resources which do not have REST API/s cannot be encrypted",
            "events.events.k8s.io": "'*.events.k8s.io' objects are stored using the 'events' "
                                    "API group in etcd. Use 'events' instead in the config file",
            "ingresses.extensions": "'extensions' group has been removed and cannot be used "
                                    "for encryption",
            "secrets.*": "encrypting the same resource across groups is not supported",
        }
        for name, detail in cases.items():
            self.assertEqual(
                self.refused(HEAD + f'resources:\n- resources: ["{name}"]\n'
                                    "  providers: [{identity: {}}]\n"),
                f'error while parsing file: resources[0].resources[0]: Invalid value: "{name}": '
                f"{detail}")

    def test_duplicate_and_masked(self) -> None:
        """A resource twice in one list; a resource masked by an earlier wildcard entry."""
        self.assertEqual(
            self.refused(HEAD + 'resources:\n- resources: [secrets, secrets]\n'
                                "  providers: [{identity: {}}]\n"),
            'error while parsing file: resources[0].resources: Invalid value: []string{'
            '"secrets", "secrets"}: the same resource cannot be specified multiple times')
        self.assertEqual(
            self.refused(HEAD + 'resources:\n- resources: ["*."]\n  providers: [{identity: {}}]\n'
                                '- resources: [secrets]\n  providers: [{identity: {}}]\n'),
            'error while building transformers: resource "secrets" is masked by earlier rule '
            '"*."')
        self.assertEqual(
            self.refused(HEAD + 'resources:\n- resources: ["*.*"]\n  providers: [{identity: {}}]\n'
                                '- resources: [deployments.apps]\n'
                                "  providers: [{identity: {}}]\n"),
            'error while building transformers: resource "deployments.apps" is masked by '
            'earlier rule "*.*"')

    def test_repeated_resource_joins_providers(self) -> None:
        """A resource in two entries gets the providers of both, in order (upstream)."""
        rt = parse_encryption_config((HEAD + f"""
resources:
- resources: [secrets]
  providers: [{{aescbc: {{keys: [{{name: a, secret: "{K32}"}}]}}}}]
- resources: [secrets]
  providers: [{{identity: {{}}}}]
""").encode())
        t = rt.transformers[("", "secrets")]
        self.assertEqual([p for p, _ in t.transformers], [b"k8s:enc:aescbc:v1:", b""])

    def test_kms_refused(self) -> None:
        """A valid KMS provider is refused when transformers are built."""
        self.assertEqual(
            self.refused(HEAD + 'resources:\n- resources: [secrets]\n  providers:\n'
                                '  - kms: {apiVersion: v2, name: p, endpoint: '
                                '"unix:///tmp/p.sock"}\n'),
            'error while building transformers: KMS provider "p": KMS plugins are not '
            'supported by kubetwist; use aescbc, aesgcm or secretbox')


class FlagTests(SynchronousTestCase):
    """C{--encryption-provider-config} of C{twistd kubeapi}."""

    def test_valid_file(self) -> None:
        """A valid file is accepted and kept as an absolute path."""
        path = self.mktemp()
        with open(path, "w") as f:
            f.write(HEAD + f'resources:\n- resources: [secrets]\n  providers:\n'
                           f'  - aescbc: {{keys: [{{name: k, secret: "{K32}"}}]}}\n')
        o = Options()
        o.parseOptions([f"--encryption-provider-config={path}"])
        self.assertEqual(o["encryption-provider-config"], os.path.abspath(path))

    def test_default_empty(self) -> None:
        """Without the flag nothing is encrypted."""
        o = Options()
        o.parseOptions([])
        self.assertEqual(o["encryption-provider-config"], "")

    def test_invalid_file_one_line(self) -> None:
        """An invalid file stops start-up with one line on stderr and status 1."""
        path = self.mktemp()
        with open(path, "w") as f:
            f.write(HEAD + "resources: []\n")
        err = io.StringIO()
        self.patch(sys, "stderr", err)
        o = Options()
        with self.assertRaises(SystemExit) as caught:
            o.parseOptions([f"--encryption-provider-config={path}"])
        self.assertEqual(caught.exception.code, 1)
        self.assertEqual(err.getvalue(), "Error: error while parsing file: resources: Required "
                                         "value: at least one resources is required\n")

    def test_listed_in_etcd_flags(self) -> None:
        """C{--help} lists the flag in the C{Etcd flags} group, as kube-apiserver does."""
        usage = Options().getUsage()
        etcd = usage.split("Etcd flags:")[1].split("Secure serving flags:")[0]
        self.assertIn("--encryption-provider-config=", etcd)
