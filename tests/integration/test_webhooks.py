# -*- test-case-name: tests.integration.test_webhooks -*-
"""
Acceptance of issue 12 item 2 (admission webhooks): a real C{twistd -n kubeapi}, the real
C{kubectl} and a real HTTPS webhook server (L{tests.integration.webhook_server}, its own
process with its own certificate) registered by C{url} on 127.0.0.1 and by C{service} with
Endpoints naming an address in a network namespace (L{tests.netns}).

Expected texts are kube-apiserver v1.32's (upstream C{webhook/errors/statuserror.go},
C{util/webhook/error.go} and Go's HTTP client for transport failures).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units, free_port, unique_name
from tests.pki import CA

_ROOT = str(Path(__file__).resolve().parents[2])


class WebhookProcess:
    """The test webhook server as a process (see L{tests.integration.webhook_server})."""

    def __init__(self, ca: CA, host: str = "127.0.0.1", port: int = 0,
                 dns_names: tuple = (), ip_addresses: tuple = ("127.0.0.1",),
                 popen=subprocess.Popen) -> None:
        self.dir = tempfile.mkdtemp(prefix="kubetwist-webhook-")
        pair = ca.issue("webhook", dns_names=dns_names, ip_addresses=ip_addresses)
        cert, key = os.path.join(self.dir, "tls.crt"), os.path.join(self.dir, "tls.key")
        Path(cert).write_bytes(pair.cert)
        Path(key).write_bytes(pair.key)
        self.log = os.path.join(self.dir, "reviews.jsonl")
        env = dict(os.environ, PYTHONPATH=_ROOT)
        self.process = popen([sys.executable, "-m", "tests.integration.webhook_server",
                              "--cert", cert, "--key", key, "--host", host,
                              "--port", str(port), "--log", self.log],
                             stdout=subprocess.PIPE, text=True, env=env, cwd=_ROOT)
        line = self.process.stdout.readline()
        if not line.startswith("listening"):
            raise AssertionError(f"webhook server did not start: {line!r}")
        self.port = int(line.split()[1])

    def reviews(self, path: str | None = None) -> list[dict]:
        """The reviews received so far (on C{path} only, if given)."""
        try:
            with open(self.log, encoding="utf-8") as f:
                entries = [json.loads(line) for line in f]
        except FileNotFoundError:
            return []
        return [e for e in entries if path is None or e["path"] == path]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _webhook(name: str, client_config: dict, namespace: str, *, operations=("CREATE",),
             failure_policy: str = "Fail", timeout: int | None = None,
             mutating: bool = False, reinvoke: bool = False) -> dict:
    hook = {
        "name": name,
        "clientConfig": client_config,
        "rules": [{"operations": list(operations), "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": ["configmaps"]}],
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
        "failurePolicy": failure_policy,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    if timeout is not None:
        hook["timeoutSeconds"] = timeout
    if mutating and reinvoke:
        hook["reinvocationPolicy"] = "IfNeeded"
    return hook


class WebhookTests(ServerTestMixin, SynchronousTestCase):
    """Webhooks registered by C{url} on 127.0.0.1."""

    @classmethod
    def start_fixture(cls):
        fixture = super().start_fixture()
        try:
            fixture.ca = CA("webhook-ca")
            fixture.hook = WebhookProcess(fixture.ca)
        except BaseException:
            fixture.close()
            raise
        server_cleanup = fixture.server.cleanup

        def cleanup() -> None:  # the class fixture's closer ends the server with this
            fixture.hook.stop()
            server_cleanup()

        fixture.server.cleanup = cleanup
        return fixture

    def setUp(self) -> None:
        super().setUp()
        self.ca, self.hook = self.fixture.ca, self.fixture.hook
        self.ns = self.namespace()

    def url(self, path: str, host: str = "127.0.0.1", port: int | None = None) -> dict:
        return {"url": f"https://{host}:{port or self.hook.port}{path}",
                "caBundle": base64.b64encode(self.ca.cert).decode()}

    def register(self, *hooks: dict, mutating: bool = False) -> str:
        """Create a webhook configuration (deleted at cleanup) and wait until it is in
        force (a probe ConfigMap the webhook sees)."""
        kind = "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration"
        name = unique_name(f"{self.ns}-cfg")
        self.server.kubectl("create", "-f", "-", input=json.dumps({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": name}, "webhooks": list(hooks)}))
        self.addCleanup(self.server.kubectl, "delete", kind.lower(), name, "--wait=false",
                        check=False)
        return name

    def apply_configmap(self, name: str, check: bool = False) -> subprocess.CompletedProcess:
        return self.server.kubectl("apply", "-n", self.ns, "-f", "-", check=check,
                                   input=json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                                                     "metadata": {"name": name},
                                                     "data": {"k": "v"}}))

    def configmap_exists(self, name: str) -> bool:
        return self.server.kubectl("get", "configmap", "-n", self.ns, name,
                                   check=False).returncode == 0

    def test_deny_through_kubectl_apply(self) -> None:
        """A refusing webhook's status becomes the error kubectl shows, with upstream's
        prefix; nothing is written.  The configuration is in force at once."""
        self.register(_webhook("deny.example.com", self.url("/deny"), self.ns))
        out = self.apply_configmap("refused")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn('Error from server: error when creating "STDIN": admission '
                      'webhook "deny.example.com" denied the request: no ConfigMap named '
                      "refused today", out.stderr)
        self.assertFalse(self.configmap_exists("refused"))
        review = self.hook.reviews("/deny")[-1]
        self.assertEqual(review["review"]["apiVersion"], "admission.k8s.io/v1")
        request = review["review"]["request"]
        self.assertEqual(request["operation"], "CREATE")
        self.assertEqual(request["namespace"], self.ns)
        self.assertEqual(request["kind"], {"group": "", "version": "v1", "kind": "ConfigMap"})
        self.assertEqual(request["resource"], {"group": "", "version": "v1",
                                               "resource": "configmaps"})
        self.assertEqual(request["userInfo"]["username"], "kubernetes-admin")
        self.assertEqual(request["object"]["data"], {"k": "v"})
        self.assertEqual(request["options"]["kind"], "CreateOptions")
        self.assertEqual(review["query"], {"timeout": ["10s"]})

    def test_mutate_and_reinvoke(self) -> None:
        """Two mutating webhooks patch in name order; the first (IfNeeded) is called again
        after the second changed the object, and sees its label."""
        a = _webhook("a.example.com", self.url("/label-a"), self.ns, mutating=True,
                     reinvoke=True)
        b = _webhook("b.example.com", self.url("/label-b"), self.ns, mutating=True)
        before = len(self.hook.reviews("/label-a"))
        self.register(a, mutating=True)
        self.register(b, mutating=True)
        out = self.server.kubectl("create", "-n", self.ns, "-o", "json", "-f", "-",
                                  input=json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                                                    "metadata": {"name": "mutated"}}))
        labels = json.loads(out.stdout)["metadata"]["labels"]
        self.assertEqual(labels, {"a": "set", "b": "set"})
        self.assertEqual(len(self.hook.reviews("/label-a")) - before, 2)

    def test_warnings(self) -> None:
        """A webhook's warnings reach kubectl as C{Warning:} lines."""
        self.register(_webhook("allow.example.com", self.url("/allow"), self.ns))
        out = self.apply_configmap("warned", check=True)
        self.assertIn("Warning: the allow webhook saw this", out.stderr)

    def test_down_ignore_and_fail(self) -> None:
        """A webhook nobody answers: C{Ignore} lets the write through, C{Fail} refuses it
        with upstream's 500 and Go's dial error."""
        port = free_port()
        self.register(_webhook("down-ignore.example.com", self.url("/allow", port=port),
                               self.ns, failure_policy="Ignore"))
        self.apply_configmap("ignored", check=True)
        self.assertTrue(self.configmap_exists("ignored"))
        self.register(_webhook("down-fail.example.com", self.url("/allow", port=port),
                               self.ns))
        out = self.apply_configmap("failed")
        self.assertIn(
            'Error from server (InternalError): error when creating "STDIN": Internal error '
            'occurred: failed calling webhook "down-fail.example.com": failed to call webhook: '
            f'Post "https://127.0.0.1:{port}/allow?timeout=10s": dial tcp 127.0.0.1:{port}: '
            "connect: connection refused", out.stderr)
        self.assertFalse(self.configmap_exists("failed"))

    def test_timeout(self) -> None:
        """A webhook slower than its C{timeoutSeconds} fails the request (C{Fail})."""
        self.register(_webhook("slow.example.com", self.url("/slow"), self.ns, timeout=1))
        started = time.monotonic()
        out = self.apply_configmap("slow")
        self.assertLess(time.monotonic() - started, 4.5)
        self.assertIn(
            'Internal error occurred: failed calling webhook "slow.example.com": failed to call '
            f'webhook: Post "https://127.0.0.1:{self.hook.port}/slow?timeout=1s": context '
            "deadline exceeded", out.stderr)
        self.assertFalse(self.configmap_exists("slow"))

    def test_garbage(self) -> None:
        """An answer that is not JSON is a failure to call the webhook."""
        self.register(_webhook("garbage.example.com", self.url("/garbage"), self.ns))
        out = self.apply_configmap("garbage")
        self.assertIn('Internal error occurred: failed calling webhook "garbage.example.com": '
                      "failed to call webhook: couldn't get version/kind; json parse error: "
                      "json: cannot unmarshal string into Go value of type struct { APIVersion "
                      'string "json:\\"apiVersion,omitempty\\""; Kind string '
                      '"json:\\"kind,omitempty\\"" }', out.stderr)
        self.assertFalse(self.configmap_exists("garbage"))

    def test_patch_breaking_the_schema(self) -> None:
        """A patch whose result does not decode as the kind is refused (500), nothing
        written."""
        self.register(_webhook("bad-patch.example.com", self.url("/bad-patch"), self.ns,
                               mutating=True), mutating=True)
        out = self.apply_configmap("bad-patch")
        self.assertIn("Error from server (InternalError)", out.stderr)
        self.assertIn("Internal error occurred: json: cannot unmarshal number into Go struct "
                      "field ConfigMap.data of type map[string]string", out.stderr)
        self.assertFalse(self.configmap_exists("bad-patch"))

    def test_certificate_for_another_name(self) -> None:
        """The webhook's certificate names 127.0.0.1 only: called as C{localhost}, the TLS
        check fails."""
        self.register(_webhook("wrong-name.example.com",
                               self.url("/allow", host="localhost"), self.ns))
        out = self.apply_configmap("wrong-name")
        self.assertIn('Internal error occurred: failed calling webhook "wrong-name.example.com":'
                      f' failed to call webhook: Post "https://localhost:{self.hook.port}/allow'
                      '?timeout=10s": tls: failed to verify certificate: x509: certificate is '
                      "not valid for any names, but wanted to match localhost", out.stderr)
        self.assertFalse(self.configmap_exists("wrong-name"))

    def test_metrics(self) -> None:
        """Calls are counted in upstream's webhook metrics."""
        self.register(_webhook("counted.example.com", self.url("/allow"), self.ns))
        self.apply_configmap("counted", check=True)
        body = self.server.request("GET", "/metrics").body.decode()
        self.assertIn('apiserver_admission_webhook_request_total{code="200",'
                      'name="counted.example.com",operation="CREATE",rejected="false",'
                      'type="validating"} 1.0', body)


class ServiceWebhookTests(ServerTestMixin, SynchronousTestCase):
    """A webhook registered by C{service}: its Endpoints name an address inside a network
    namespace, where the webhook process listens with a certificate for
    C{<service>.<namespace>.svc}."""

    def test_deny_by_service(self) -> None:
        from tests.netns import new_network_namespace

        netns = new_network_namespace(self)
        ns = self.namespace()
        ca = CA("service-webhook-ca")
        hook = WebhookProcess(ca, host=netns.address, port=8443,
                              dns_names=(f"hook.{ns}.svc",), ip_addresses=(),
                              popen=netns.popen)
        self.addCleanup(hook.stop)
        self.server.kubectl("create", "-n", ns, "-f", "-", input="\n".join(json.dumps(o) for o in (
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hook"},
             "spec": {"ports": [{"port": 443, "targetPort": 8443}]}},
            {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "hook"},
             "subsets": [{"addresses": [{"ip": netns.address}], "ports": [{"port": 8443}]}]},
        )))
        name = unique_name("svc-cfg")
        config = _webhook("deny-svc.example.com", {
            "service": {"namespace": ns, "name": "hook", "path": "/deny"},
            "caBundle": base64.b64encode(ca.cert).decode()}, ns)
        self.server.kubectl("create", "-f", "-", input=json.dumps({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration", "metadata": {"name": name},
            "webhooks": [config]}))
        self.addCleanup(self.server.kubectl, "delete", "validatingwebhookconfiguration", name,
                        check=False)
        out = self.server.kubectl("apply", "-n", ns, "-f", "-", check=False, input=json.dumps(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "via-service"}}))
        self.assertIn('admission webhook "deny-svc.example.com" denied the request: no '
                      "ConfigMap named via-service today", out.stderr)
        self.assertEqual(len(hook.reviews("/deny")), 1)

    def test_mutate_by_service_with_endpointslice(self) -> None:
        """The same through an EndpointSlice (no Endpoints): a mutating webhook's JSONPatch
        is applied, and a server-side dry run reaches it with C{dryRun: true}."""
        from tests.netns import new_network_namespace

        netns = new_network_namespace(self)
        ns = self.namespace()
        ca = CA("service-webhook-ca")
        hook = WebhookProcess(ca, host=netns.address, port=9443,
                              dns_names=(f"hook.{ns}.svc",), ip_addresses=(),
                              popen=netns.popen)
        self.addCleanup(hook.stop)
        self.server.kubectl("create", "-n", ns, "-f", "-", input="\n".join(json.dumps(o) for o in (
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hook"},
             "spec": {"ports": [{"name": "https", "port": 8443, "targetPort": 9443}]}},
            {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
             "metadata": {"name": "hook-1", "labels": {"kubernetes.io/service-name": "hook"}},
             "addressType": "IPv4",
             "endpoints": [{"addresses": [netns.address], "conditions": {"ready": True}}],
             "ports": [{"name": "https", "port": 9443}]},
        )))
        name = unique_name("svc-cfg")
        config = _webhook("label-svc.example.com", {
            "service": {"namespace": ns, "name": "hook", "path": "/label-b", "port": 8443},
            "caBundle": base64.b64encode(ca.cert).decode()}, ns, mutating=True)
        self.server.kubectl("create", "-f", "-", input=json.dumps({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration", "metadata": {"name": name},
            "webhooks": [config]}))
        self.addCleanup(self.server.kubectl, "delete", "mutatingwebhookconfiguration", name,
                        check=False)
        document = json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                               "metadata": {"name": "via-slice"}})
        out = self.server.kubectl("create", "-n", ns, "-f", "-", "--dry-run=server", "-o",
                                  "json", input=document)
        self.assertEqual(json.loads(out.stdout)["metadata"]["labels"], {"b": "set"})
        self.assertTrue(hook.reviews("/label-b")[-1]["review"]["request"]["dryRun"])
        out = self.server.kubectl("create", "-n", ns, "-f", "-", "-o", "json", input=document)
        self.assertEqual(json.loads(out.stdout)["metadata"]["labels"], {"b": "set"})
        self.assertEqual(len(hook.reviews("/label-b")), 2)


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
