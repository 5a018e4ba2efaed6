# -*- test-case-name: tests.integration.test_encryption -*-
"""
Encryption at rest with real processes: C{twistd kubeapi --encryption-provider-config} on a
real etcd, driven by C{kubectl}; the raw values are read from etcd's gateway
(C{/v3/kv/range}), bypassing the server.  Mirrors upstream's
C{test/integration/controlplane/transformation} (secrets encrypted, rotation, key removal).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import shutil
import subprocess
import tempfile

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import (
    EtcdProcess,
    KubeAPIProcess,
    class_units,
    etcd_skip_reason,
    venv_binary,
)

KEY1 = base64.b64encode(bytes(range(32))).decode()
KEY2 = base64.b64encode(bytes(range(100, 132))).decode()
PLAINTEXT = "correct-horse-battery-staple"


def encryption_config(*keys: tuple[str, str]) -> str:
    """Secrets under C{aescbc} with C{keys} (first one encrypts); everything else plain."""
    listed = "\n".join(f"          - name: {name}\n            secret: {secret}"
                       for name, secret in keys)
    return (
        "apiVersion: apiserver.config.k8s.io/v1\n"
        "kind: EncryptionConfiguration\n"
        "resources:\n"
        "  - resources:\n"
        "      - secrets\n"
        "    providers:\n"
        "      - aescbc:\n"
        "          keys:\n"
        f"{listed}\n"
        "      - identity: {}\n"
    )


def etcd_value(etcd: EtcdProcess, key: str) -> bytes:
    """The raw value etcd holds at C{key}, read through its gRPC gateway."""
    connection = http.client.HTTPConnection("127.0.0.1", etcd.client_port, timeout=10)
    try:
        body = json.dumps({"key": base64.b64encode(key.encode()).decode()})
        connection.request("POST", "/v3/kv/range", body=body,
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        data = json.loads(response.read())
    finally:
        connection.close()
    kvs = data.get("kvs") or []
    if len(kvs) != 1:
        raise AssertionError(f"etcd has no single value at {key}: {data}")
    return base64.b64decode(kvs[0].get("value", ""))


class EncryptionAtRestTests(SynchronousTestCase):
    """Secrets encrypted in etcd survive restarts and key rotation."""

    skip = etcd_skip_reason()

    def setUp(self) -> None:
        self.work = tempfile.mkdtemp(prefix="kubetwist-it-enc-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.config = os.path.join(self.work, "encryption.yaml")
        self.write_config(("key1", KEY1))
        self.etcd = EtcdProcess()
        self.etcd.start()
        self.addCleanup(self.etcd.stop)
        self.server = KubeAPIProcess(
            etcd_url=self.etcd.url,
            extra_args=[f"--encryption-provider-config={self.config}"],
        )
        self.addCleanup(self.server.cleanup)
        self.server.start()

    def write_config(self, *keys: tuple[str, str]) -> None:
        with open(self.config, "w") as f:
            f.write(encryption_config(*keys))

    def secret_password(self, name: str) -> str:
        out = self.server.kubectl("get", "secret", name, "-n", "default", "-o", "json").stdout
        return base64.b64decode(json.loads(out)["data"]["password"]).decode()

    def assertEncryptedWith(self, name: str, key_name: str) -> None:
        raw = etcd_value(self.etcd, f"/registry/secrets/default/{name}")
        prefix = f"k8s:enc:aescbc:v1:{key_name}:".encode()
        self.assertEqual(raw[:len(prefix)], prefix)
        self.assertNotIn(PLAINTEXT.encode(), raw)
        self.assertNotIn(base64.b64encode(PLAINTEXT.encode()), raw)
        self.assertNotIn(name.encode(), raw[len(prefix):])

    def test_restart_and_rotation(self) -> None:
        """
        A Secret is stored as C{k8s:enc:aescbc:v1:key1:...}; it reads back after a restart;
        after rotation (key2 listed first, restart) it still reads, new and rewritten Secrets
        use key2; once key1 is removed a Secret never rewritten answers 500 InternalError.
        """
        for name in ("s1", "stale"):
            self.server.kubectl("create", "secret", "generic", name, "-n", "default",
                                f"--from-literal=password={PLAINTEXT}")
            self.assertEncryptedWith(name, "key1")
        self.server.kubectl("create", "configmap", "plain", "-n", "default",
                            "--from-literal=k=visible-value")
        self.assertIn(b"visible-value", etcd_value(self.etcd, "/registry/configmaps/default/plain"))

        self.server.restart()
        self.assertEqual(self.secret_password("s1"), PLAINTEXT)

        self.write_config(("key2", KEY2), ("key1", KEY1))
        self.server.restart()
        self.assertEqual(self.secret_password("s1"), PLAINTEXT)
        self.assertEncryptedWith("s1", "key1")
        current = self.server.kubectl("get", "secret", "s1", "-n", "default", "-o",
                                      "json").stdout
        self.server.kubectl("replace", "-f", "-", input=current)
        self.assertEncryptedWith("s1", "key2")
        self.assertEqual(self.secret_password("s1"), PLAINTEXT)
        self.server.kubectl("create", "secret", "generic", "s2", "-n", "default",
                            f"--from-literal=password={PLAINTEXT}")
        self.assertEncryptedWith("s2", "key2")

        self.write_config(("key2", KEY2))
        self.server.restart()
        self.assertEqual(self.secret_password("s1"), PLAINTEXT)
        self.assertEqual(self.secret_password("s2"), PLAINTEXT)
        response = self.server.request("GET", "/api/v1/namespaces/default/secrets/stale")
        reason = "no matching key was found for the provided AES transformer"
        self.assertEqual(response.status, 500)
        self.assertEqual(response.json(), {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"Internal error occurred: {reason}", "reason": "InternalError",
            "details": {"causes": [{"message": reason}]}, "code": 500,
        })


class InvalidConfigTests(SynchronousTestCase):
    """A bad configuration stops C{twistd kubeapi} before it serves."""

    def test_one_line_error(self) -> None:
        """An invalid key length: exit status 1 and upstream's message on one line."""
        work = tempfile.mkdtemp(prefix="kubetwist-it-enc-")
        self.addCleanup(shutil.rmtree, work, True)
        path = os.path.join(work, "encryption.yaml")
        with open(path, "w") as f:
            f.write(encryption_config(("key1", base64.b64encode(b"short").decode())))
        result = subprocess.run(
            [venv_binary("twistd"), "-n", "--pidfile=", "kubeapi",
             f"--data-dir={os.path.join(work, 'data')}",
             f"--encryption-provider-config={path}"],
            capture_output=True, text=True, timeout=60, cwd=work, stdin=subprocess.DEVNULL,
            check=False,
        )
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertEqual(
            result.stderr.strip().splitlines()[-1],
            'Error: error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: '
            'Invalid value: "REDACTED": secret is not of the expected length, got 5, expected '
            'one of [16 24 32]',
        )


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
