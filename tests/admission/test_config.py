"""--admission-control-config-file: upstream's AdmissionConfiguration and its start errors
(texts recorded from kube-apiserver v1.32 started with each file)."""

from __future__ import annotations

import io
import os
import sys
import tempfile

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.admission.config import AdmissionConfigError, read_admission_configuration
from kubetwist.tap import Options

PREFIX = "failed to apply admission: failed to read plugin config: "


class ReadTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp()

    def write(self, name: str, text: str) -> str:
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def error(self, text: str, names=("LimitRanger",)) -> str:
        path = self.write("admission.yaml", text)
        with self.assertRaises(AdmissionConfigError) as caught:
            read_admission_configuration(path, names)
        return str(caught.exception)

    def test_no_file(self):
        self.assertEqual(read_admission_configuration("", ["LimitRanger"]), {})

    def test_inline_and_path(self):
        """Inline configurations as given; a relative path resolves against the file's
        directory; every served version is read; the first entry of a name wins."""
        self.write("ps.yaml", "apiVersion: pod-security.admission.config.k8s.io/v1\n"
                              "kind: PodSecurityConfiguration\ndefaults: {enforce: baseline}\n")
        for version in ("apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1alpha1",
                        "apiserver.k8s.io/v1alpha1"):
            path = self.write("admission.yaml", f"""
apiVersion: {version}
kind: AdmissionConfiguration
plugins:
- name: ResourceQuota
  configuration: {{kind: ResourceQuotaConfiguration, limitedResources: []}}
- name: PodSecurity
  path: ps.yaml
- name: ResourceQuota
  configuration: {{kind: Other}}
- name: EventRateLimit
  path: nosuch.yaml
""")
            got = read_admission_configuration(path, ["PodSecurity", "ResourceQuota"])
            self.assertEqual(got, {
                "ResourceQuota": {"kind": "ResourceQuotaConfiguration", "limitedResources": []},
                "PodSecurity": {"apiVersion": "pod-security.admission.config.k8s.io/v1",
                                "kind": "PodSecurityConfiguration",
                                "defaults": {"enforce": "baseline"}},
            })

    def test_json_file(self):
        path = self.write("a.json", '{"apiVersion": "apiserver.config.k8s.io/v1", '
                                    '"kind": "AdmissionConfiguration", "plugins": '
                                    '[{"name": "X", "configuration": {"a": 1}}]}')
        self.assertEqual(read_admission_configuration(path, []), {"X": {"a": 1}})

    def test_unknown_plugin_is_ignored(self):
        """kube-apiserver starts with a configuration for a plugin it does not know."""
        path = self.write("a.yaml", "apiVersion: apiserver.config.k8s.io/v1\n"
                                    "kind: AdmissionConfiguration\nplugins:\n"
                                    "- name: NoSuchPlugin\n  configuration: {a: 1}\n")
        self.assertEqual(read_admission_configuration(path, ["LimitRanger"]),
                         {"NoSuchPlugin": {"a": 1}})

    def test_missing_file(self):
        with self.assertRaises(AdmissionConfigError) as caught:
            read_admission_configuration("/nonexistent/a.yaml", [])
        self.assertEqual(str(caught.exception), PREFIX + 'unable to read admission control '
                         'configuration from "/nonexistent/a.yaml" [open /nonexistent/a.yaml: '
                         'no such file or directory]')

    def test_unknown_field(self):
        self.assertEqual(self.error("apiVersion: apiserver.config.k8s.io/v1\n"
                                    "kind: AdmissionConfiguration\nplugins:\n"
                                    "- name: LimitRanger\n  bogus: 1\n"),
                         PREFIX + 'strict decoding error: unknown field "plugins[0].bogus"')

    def test_missing_kind(self):
        text = "plugins:\n- name: LimitRanger\n"
        self.assertEqual(self.error(text), PREFIX + f"Object 'Kind' is missing in '{text}'")

    def test_unknown_version(self):
        self.assertEqual(
            self.error("apiVersion: apiserver.config.k8s.io/v9\nkind: AdmissionConfiguration\n"),
            PREFIX + 'no kind "AdmissionConfiguration" is registered for version '
            '"apiserver.config.k8s.io/v9" in scheme "pkg/server/options/admission.go:50"')

    def test_malformed_json(self):
        self.assertEqual(self.error("{{{ not yaml\n"),
                         PREFIX + "couldn't get version/kind; json parse error: invalid "
                         "character '{' looking for beginning of object key string")

    def test_unreadable_plugin_file(self):
        """An enabled plugin's path that cannot be opened: upstream's fatal log text."""
        path = self.write("a.yaml", "apiVersion: apiserver.config.k8s.io/v1\n"
                                    "kind: AdmissionConfiguration\nplugins:\n"
                                    "- name: LimitRanger\n  path: nosuch.yaml\n")
        missing = os.path.join(self.dir, "nosuch.yaml")
        with self.assertRaises(AdmissionConfigError) as caught:
            read_admission_configuration(path, ["LimitRanger"])
        self.assertEqual(str(caught.exception),
                         f"Couldn't open admission plugin configuration {missing}: "
                         f'&fs.PathError{{Op:"open", Path:"{missing}", Err:0x2}}')


class FlagTests(SynchronousTestCase):
    def test_flag(self):
        """The flag fills C{admission-configs}; a bad file stops the start."""
        d = tempfile.mkdtemp()
        path = os.path.join(d, "a.yaml")
        with open(path, "w") as f:
            f.write("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n"
                    "plugins:\n- name: PodSecurity\n  configuration: {kind: X}\n")
        o = Options()
        o.parseOptions([f"--admission-control-config-file={path}"])
        self.assertEqual(o["admission-configs"], {"PodSecurity": {"kind": "X"}})
        err = io.StringIO()
        self.patch(sys, "stderr", err)
        with self.assertRaises(SystemExit):
            Options().parseOptions(["--admission-control-config-file=/nonexistent.yaml"])
        self.assertIn(PREFIX + "unable to read admission control configuration", err.getvalue())
        self.assertEqual(Options()["admission-control-config-file"], "")
