# -*- test-case-name: tests.integration.test_authorization_modes -*-
"""
The C{Node} and C{ABAC} authorization modes with the real C{kubectl} against a real
C{twistd -n kubeapi --authorization-mode=Node,ABAC}: a kubelet's token reads the secret of
a pod bound to its node and nothing else (upstream's reasons), an ABAC user reads but does
not write; C{--authorization-mode=Webhook} asks a real HTTPS webhook.
"""

from __future__ import annotations

import http.server
import json
import os
import ssl
import subprocess
import threading

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import (
    KubeAPIProcess,
    ServerFixture,
    ServerTestMixin,
    class_units,
    kubectl,
)

POLICY = [
    {"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy",
     "spec": {"user": "alice", "namespace": "*", "resource": "*", "apiGroup": "*",
              "readonly": True}},
    {"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy",
     "spec": {"group": "system:authenticated", "nonResourcePath": "*", "readonly": True}},
]


class NodeAndABACTests(ServerTestMixin, SynchronousTestCase):
    """One server (Node,ABAC; token-file users for node n1 and alice) for the class."""

    @classmethod
    def start_fixture(cls) -> ServerFixture:
        server = KubeAPIProcess()
        tokens = os.path.join(server.work_dir, "tokens.csv")
        with open(tokens, "w") as f:
            f.write('node-token,system:node:n1,10,"system:nodes"\nalice-token,alice,11,\n')
        policy = os.path.join(server.work_dir, "policy.jsonl")
        with open(policy, "w") as f:
            f.write("\n".join(json.dumps(p) for p in POLICY) + "\n")
        server.extra_args += [f"--token-auth-file={tokens}", "--authorization-mode=Node,ABAC",
                              f"--authorization-policy-file={policy}"]
        try:
            server.start()
        except BaseException:
            server.cleanup()
            raise
        return ServerFixture(server, None)

    def as_token(self, token: str, *args: str):
        return kubectl(f"--server={self.server.url}",
                       f"--certificate-authority={self.server.ca_file}", f"--token={token}",
                       *args, kubeconfig=os.devnull, check=False,
                       env={"KUBECACHEDIR": self.server.cache_dir + "-" + token})

    def test_node_reads_secrets_of_its_pods(self) -> None:
        ns = self.namespace()
        self.create(ns, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}},
                    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s2"}},
                    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"},
                     "spec": {"nodeName": "n1", "automountServiceAccountToken": False,
                              "containers": [{"name": "c", "image": "x", "env": [
                                  {"name": "A", "valueFrom": {"secretKeyRef": {
                                      "name": "s1", "key": "a"}}}]}]}})
        r = None
        for _ in range(50):  # the graph follows storage asynchronously
            r = self.as_token("node-token", "get", "secret", "s1", "-n", ns, "-o", "name")
            if r.returncode == 0:
                break
        self.assertEqual(r.stdout, "secret/s1\n")
        r = self.as_token("node-token", "get", "secret", "s2", "-n", ns)
        self.assertEqual(r.stderr.strip(), (
            f'Error from server (Forbidden): secrets "s2" is forbidden: User "system:node:n1" '
            f'cannot get resource "secrets" in API group "" in the namespace "{ns}": no '
            "relationship found between node 'n1' and this object\nNo policy matched."))
        r = self.as_token("node-token", "get", "pods", "-n", ns)
        self.assertIn("can only list/watch pods with spec.nodeName field selector", r.stderr)
        r = self.as_token("node-token", "get", "pods", "-n", ns,
                          "--field-selector=spec.nodeName=n1", "-o", "name")
        self.assertEqual(r.stdout, "pod/p1\n")

    def test_abac_readonly(self) -> None:
        ns = self.namespace()
        r = self.as_token("alice-token", "get", "configmaps", "-n", ns, "-o", "name")
        self.assertEqual((r.returncode, r.stdout), (0, "configmap/kube-root-ca.crt\n"))
        r = self.as_token("alice-token", "create", "configmap", "x", "-n", ns)
        self.assertIn(f'configmaps is forbidden: User "alice" cannot create resource '
                      f'"configmaps" in API group "" in the namespace "{ns}": No policy '
                      "matched.", r.stderr)


class _Hook(http.server.BaseHTTPRequestHandler):
    """A webhook authorizer: allows alice, and everyone on non-resource paths (discovery),
    denies the rest; in C{garbage} mode it answers junk."""

    mode = "normal"
    reviews: list = []

    def do_POST(self) -> None:  # noqa: N802 -- http.server's name
        review = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        type(self).reviews.append((self.path, review))
        if type(self).mode == "garbage":
            body = b"<garbage>"
        else:
            user = review["spec"].get("user")
            discovery = "nonResourceAttributes" in review["spec"]
            status = ({"allowed": True} if user == "alice" or discovery
                      else {"allowed": False, "denied": True, "reason": "alice only"})
            body = json.dumps({"apiVersion": review["apiVersion"], "kind": "SubjectAccessReview",
                               "status": status}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


class WebhookModeTests(ServerTestMixin, SynchronousTestCase):
    """A real C{twistd kubeapi --authorization-mode=Webhook} asking a real HTTPS webhook."""

    @classmethod
    def start_fixture(cls) -> ServerFixture:
        server = KubeAPIProcess()
        d = server.work_dir
        j = os.path.join
        ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        run = lambda *a: subprocess.run(["openssl", *a], check=True, capture_output=True)  # noqa: E731
        run("req", "-x509", *ec, "-days", "1", "-subj", "/CN=hook-ca",
            "-keyout", j(d, "hook-ca.key"), "-out", j(d, "hook-ca.crt"))
        with open(j(d, "ext"), "w") as f:
            f.write("subjectAltName=IP:127.0.0.1\n")
        run("req", *ec, "-subj", "/CN=127.0.0.1", "-keyout", j(d, "hook.key"),
            "-out", j(d, "hook.csr"))
        run("x509", "-req", "-in", j(d, "hook.csr"), "-CA", j(d, "hook-ca.crt"), "-CAkey",
            j(d, "hook-ca.key"), "-CAcreateserial", "-days", "1", "-extfile", j(d, "ext"),
            "-out", j(d, "hook.crt"))
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(j(d, "hook.crt"), j(d, "hook.key"))
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        with open(j(d, "hook.kubeconfig"), "w") as f:
            f.write(f"apiVersion: v1\nkind: Config\nclusters:\n- name: hook\n  cluster:\n"
                    f"    server: https://127.0.0.1:{httpd.server_address[1]}/authorize\n"
                    f"    certificate-authority: hook-ca.crt\n")
        with open(j(d, "tokens.csv"), "w") as f:
            f.write("alice-token,alice,11,\nbob-token,bob,12,\n")
        server.extra_args += [f"--token-auth-file={j(d, 'tokens.csv')}",
                              "--authorization-mode=Webhook",
                              f"--authorization-webhook-config-file={j(d, 'hook.kubeconfig')}",
                              "--authorization-webhook-cache-authorized-ttl=0s",
                              "--authorization-webhook-cache-unauthorized-ttl=0s"]
        try:
            server.start()
        except BaseException:
            server.cleanup()
            httpd.shutdown()
            raise
        fixture = ServerFixture(server, None)
        original = fixture.close

        def close() -> None:
            httpd.shutdown()
            original()

        fixture.close = close  # type: ignore[method-assign]
        return fixture

    def as_token(self, token: str, *args: str):
        return kubectl(f"--server={self.server.url}",
                       f"--certificate-authority={self.server.ca_file}", f"--token={token}",
                       *args, kubeconfig=os.devnull, check=False,
                       env={"KUBECACHEDIR": self.server.cache_dir + "-" + token})

    def test_decisions(self) -> None:
        _Hook.mode = "normal"
        r = self.as_token("alice-token", "get", "configmaps", "-n", "default", "-o", "name")
        self.assertEqual((r.returncode, r.stdout), (0, "configmap/kube-root-ca.crt\n"))
        path, review = _Hook.reviews[-1]
        self.assertEqual(path, "/authorize?timeout=30s")
        self.assertEqual(review["apiVersion"], "authorization.k8s.io/v1beta1")
        self.assertEqual(review["spec"]["resourceAttributes"],
                         {"namespace": "default", "verb": "list", "version": "v1",
                          "resource": "configmaps"})
        r = self.as_token("bob-token", "get", "configmaps", "-n", "default")
        self.assertEqual(r.stderr.strip(), (
            'Error from server (Forbidden): configmaps is forbidden: User "bob" cannot list '
            'resource "configmaps" in API group "" in the namespace "default": alice only'))

    def test_broken_webhook(self) -> None:
        _Hook.mode = "garbage"
        self.addCleanup(setattr, _Hook, "mode", "normal")
        r = self.server.request("GET", "/api/v1/namespaces/default/configmaps",
                                client_cert=False, token="alice-token")
        self.assertEqual((r.status, r.headers["content-type"]),
                         (500, "text/plain; charset=utf-8"))
        self.assertEqual(r.body.decode(), (
            'Internal Server Error: "/api/v1/namespaces/default/configmaps": couldn\'t get '
            "version/kind; json parse error: json: cannot unmarshal string into Go value of "
            'type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
            '"json:\\"kind,omitempty\\"" }\n'))


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
