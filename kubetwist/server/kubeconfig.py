# -*- test-case-name: tests.server.test_kubeconfig -*-
"""
Writing a kubeconfig for the generated admin credentials: the file format of upstream
C{k8s.io/client-go/tools/clientcmd/api/v1} (C{Config}), as kubeadm writes C{admin.conf}.
"""

from __future__ import annotations

import base64

import yaml

from kubetwist.server.certs import write_file_atomically


def kubeconfig_dict(
    server_url: str,
    ca_data: bytes,
    client_cert_data: bytes,
    client_key_data: bytes,
    cluster_name: str = "kubetwist",
    user: str = "admin",
) -> dict:
    """
    A C{kind: Config} document with one cluster, one user and one context
    (C{<user>@<cluster_name>}, the current one); the PEM data is embedded base64-encoded.

    @return: C{{"apiVersion": "v1", "kind": "Config", "clusters": [...], "users": [...],
        "contexts": [...], "current-context": str, "preferences": {}}}.
    """
    context = f"{user}@{cluster_name}"

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode("ascii")

    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster_name,
                "cluster": {
                    "certificate-authority-data": b64(ca_data),
                    "server": server_url,
                },
            }
        ],
        "users": [
            {
                "name": user,
                "user": {
                    "client-certificate-data": b64(client_cert_data),
                    "client-key-data": b64(client_key_data),
                },
            }
        ],
        "contexts": [{"name": context, "context": {"cluster": cluster_name, "user": user}}],
        "current-context": context,
        "preferences": {},
    }


def write_kubeconfig(
    path: str,
    server_url: str,
    ca_file: str,
    client_cert_file: str,
    client_key_file: str,
    cluster_name: str = "kubetwist",
    user: str = "admin",
) -> None:
    """
    Write a kubeconfig at C{path} (mode 0600, atomically: a temporary file renamed over it)
    that reaches C{server_url} as the client certificate's user.

    @param server_url: e.g. C{https://127.0.0.1:6443}.
    @param ca_file: PEM CA bundle that verifies the serving certificate.
    @param client_cert_file: PEM client certificate; C{client_key_file} its PEM key.
    @raise OSError: an input file cannot be read or the directory is not writable.
    """
    with open(ca_file, "rb") as f:
        ca = f.read()
    with open(client_cert_file, "rb") as f:
        cert = f.read()
    with open(client_key_file, "rb") as f:
        key = f.read()
    doc = kubeconfig_dict(server_url, ca, cert, key, cluster_name=cluster_name, user=user)
    text = yaml.safe_dump(doc, default_flow_style=False, sort_keys=True)
    write_file_atomically(path, text.encode("utf-8"), 0o600)
