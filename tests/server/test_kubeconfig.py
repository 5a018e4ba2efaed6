"""
Tests for L{kubetwist.server.kubeconfig}: the admin kubeconfig, read by real clients.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import subprocess
import sys

import yaml
from twisted.trial.unittest import SkipTest, SynchronousTestCase

from kubetwist.server.certs import ensure_serving_certs
from kubetwist.server.kubeconfig import kubeconfig_dict, write_kubeconfig
from tests.authentication.tlsserver import TLSServerTestCase

KUBECTL = os.path.join(os.path.dirname(sys.executable), "kubectl")
if not os.path.exists(KUBECTL):
    KUBECTL = shutil.which("kubectl") or ""


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


class WriteKubeconfigTests(SynchronousTestCase):
    """The file's content, mode and atomic replacement."""

    def setUp(self) -> None:
        self.dir = self.mktemp()
        self.certs = ensure_serving_certs(os.path.join(self.dir, "pki"), [], [])
        self.path = os.path.join(self.dir, "admin.kubeconfig")
        write_kubeconfig(
            self.path, "https://127.0.0.1:6443", self.certs.ca_cert_file,
            self.certs.admin_cert_file, self.certs.admin_key_file,
        )

    def test_document(self) -> None:
        """The YAML is one cluster, one user, one current context, PEM data base64-embedded."""
        with open(self.path) as f:
            doc = yaml.safe_load(f)
        b64 = lambda p: base64.b64encode(_read(p)).decode()  # noqa: E731
        self.assertEqual(
            doc,
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "kubetwist", "cluster": {
                    "certificate-authority-data": b64(self.certs.ca_cert_file),
                    "server": "https://127.0.0.1:6443"}}],
                "users": [{"name": "admin", "user": {
                    "client-certificate-data": b64(self.certs.admin_cert_file),
                    "client-key-data": b64(self.certs.admin_key_file)}}],
                "contexts": [{"name": "admin@kubetwist",
                              "context": {"cluster": "kubetwist", "user": "admin"}}],
                "current-context": "admin@kubetwist",
                "preferences": {},
            },
        )

    def test_mode_and_no_leftovers(self) -> None:
        """The file is 0600 and rewriting it leaves no temporary file."""
        self.assertEqual(stat.S_IMODE(os.stat(self.path).st_mode), 0o600)
        os.chmod(self.path, 0o644)
        write_kubeconfig(
            self.path, "https://10.0.0.1:443", self.certs.ca_cert_file,
            self.certs.admin_cert_file, self.certs.admin_key_file, cluster_name="c", user="u",
        )
        self.assertEqual(stat.S_IMODE(os.stat(self.path).st_mode), 0o600)
        self.assertEqual(sorted(os.listdir(self.dir)), ["admin.kubeconfig", "pki"])
        with open(self.path) as f:
            self.assertEqual(yaml.safe_load(f)["current-context"], "u@c")

    def test_missing_input(self) -> None:
        """A missing certificate file is an OSError and nothing is written."""
        other = os.path.join(self.dir, "other")
        self.assertRaises(
            OSError, write_kubeconfig, other, "https://x", "/nonexistent/ca.crt",
            self.certs.admin_cert_file, self.certs.admin_key_file,
        )
        self.assertFalse(os.path.exists(other))

    def test_kubeconfig_dict_names(self) -> None:
        """Cluster, user and context names follow the arguments."""
        doc = kubeconfig_dict("https://h", b"ca", b"c", b"k", cluster_name="kc", user="me")
        self.assertEqual(
            doc["contexts"], [{"name": "me@kc", "context": {"cluster": "kc", "user": "me"}}]
        )
        self.assertEqual(doc["clusters"][0]["cluster"]["certificate-authority-data"], "Y2E=")

    def test_python_client_loads(self) -> None:
        """The official Python client's loader reads server, CA and client credentials."""
        from kubernetes import client, config

        cfg = client.Configuration()
        config.load_kube_config(config_file=self.path, client_configuration=cfg)
        self.assertEqual(cfg.host, "https://127.0.0.1:6443")
        self.assertEqual(_read(cfg.ssl_ca_cert), _read(self.certs.ca_cert_file))
        self.assertEqual(_read(cfg.cert_file), _read(self.certs.admin_cert_file))
        self.assertEqual(_read(cfg.key_file), _read(self.certs.admin_key_file))

    def test_kubectl_config_view(self) -> None:
        """kubectl config view --minify resolves the current context to our cluster and user."""
        if not KUBECTL:
            raise SkipTest("kubectl is not installed")
        out = subprocess.run(
            [KUBECTL, "--kubeconfig", self.path, "config", "view", "--minify", "--raw",
             "-o", "json"],
            capture_output=True, check=True, timeout=30,
        ).stdout
        view = json.loads(out)
        self.assertEqual(view["current-context"], "admin@kubetwist")
        self.assertEqual(view["clusters"][0]["cluster"]["server"], "https://127.0.0.1:6443")
        self.assertEqual(
            base64.b64decode(view["users"][0]["user"]["client-key-data"]),
            _read(self.certs.admin_key_file),
        )


class KubectlOverTLSTests(TLSServerTestCase):
    """kubectl (Go's TLS and HTTP/2) talks to the TLS factory with the generated kubeconfig."""

    async def test_kubectl_get_raw(self) -> None:
        """kubectl verifies the serving certificate by IP SAN, negotiates HTTP/2 and is
        authenticated as kubernetes-admin by its client certificate."""
        if not KUBECTL:
            raise SkipTest("kubectl is not installed")
        path = os.path.join(self.directory, "kubeconfig")
        write_kubeconfig(
            path, f"https://127.0.0.1:{self.port}", self.certs.ca_cert_file,
            self.certs.admin_cert_file, self.certs.admin_key_file,
        )
        env = {"PATH": os.environ.get("PATH", ""), "HOME": self.directory}
        out, err, code = await self.run_process(
            KUBECTL, ["--kubeconfig", path, "get", "--raw", "/whoami"], env=env
        )
        self.assertEqual(code, 0, err.decode())
        body = json.loads(out)
        self.assertEqual(body["proto"], "HTTP/2")
        self.assertEqual(body["chain"][0], "CN=kubernetes-admin,O=system:masters")
        self.assertEqual(body["user"]["username"], "kubernetes-admin")
        self.assertEqual(body["user"]["groups"], ["system:masters"])
