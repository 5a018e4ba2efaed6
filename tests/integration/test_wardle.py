"""
The wardle example server (C{twistd wardle}, examples/wardle) as its own process, delegating
authentication and authorization to a real C{twistd kubeapi}.

L{WardleDirectTests} talk to the wardle server directly: a user's bearer token is accepted
through a TokenReview, RBAC on the main server governs access through SubjectAccessReviews,
the front proxy's identity (a client certificate of the C{--requestheader-client-ca-file}
CA) is trusted as the main server's ConfigMap says, flunders are created, read, listed,
watched and deleted, and BanFlunder refuses a banned name.

L{WardleAggregatedTests} is the issue's acceptance test: kubeapi, the wardle server in a
network namespace (Endpoints may not name loopback addresses) and kubectl, everything through
the aggregator's proxy (C{--proxy-client-cert-file}); it needs the aggregator's proxying
(issue 13 items 1-4).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import time
from typing import Any, Optional

import yaml
from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import (
    KubeAPIProcess,
    Response,
    _tail,
    _terminate,
    class_fixture,
    class_units,
    free_port,
    venv_binary,
    with_bytecode_cache,
)
from tests.pki import CA
from tests.support import die_with_parent, repository_root

FLUNDERS = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders"
FISCHERS = "/apis/wardle.example.com/v1alpha1/fischers"
#: The tokens of the main server's C{--token-auth-file}.
TOKENS = "jane-token,jane,1001,\nbob-token,bob,1002,\n"


def flunder(name: str) -> bytes:
    return json.dumps({"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
                       "metadata": {"name": name}, "spec": {"reference": "other"}}).encode()


class WardleProcess:
    """
    A C{twistd -n --pidfile= wardle} process.

    @ivar address: where it listens; C{port} its port.
    @ivar ca_file: the CA of its generated serving certificate (an APIService's caBundle).
    """

    def __init__(self, work_dir: str, kubeconfig: str, address: str = "127.0.0.1",
                 port: Optional[int] = None, extra_args: tuple = (),
                 ca_file: Optional[str] = None) -> None:
        self.work_dir = work_dir
        self.kubeconfig = kubeconfig
        self.address = address
        self.port = port or free_port()
        self.extra_args = list(extra_args)
        self.log_path = os.path.join(work_dir, "wardle.log")
        self.ca_file = ca_file or os.path.join(work_dir, "certs", "ca.crt")
        self.process: Optional[subprocess.Popen] = None

    def command(self) -> list[str]:
        return [venv_binary("twistd"), "-n", "--pidfile=", "wardle",
                f"--secure-port={self.port}", f"--bind-address={self.address}",
                f"--cert-dir={os.path.join(self.work_dir, 'certs')}",
                f"--data-dir={os.path.join(self.work_dir, 'data')}",
                f"--authentication-kubeconfig={self.kubeconfig}",
                f"--authorization-kubeconfig={self.kubeconfig}", *self.extra_args]

    def environment(self) -> dict:
        env = with_bytecode_cache(os.environ)
        env["PYTHONUNBUFFERED"] = "1"
        root = str(repository_root())
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                    else "")
        return env

    def start(self, popen: Any = None, timeout: float = 60.0) -> None:
        """Start (with C{popen}, e.g. a network namespace's) and wait for C{/readyz}."""
        with open(self.log_path, "ab") as log:
            kwargs = dict(stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                          cwd=self.work_dir, env=self.environment())
            if popen is None:
                self.process = subprocess.Popen(self.command(), preexec_fn=die_with_parent,
                                                **kwargs)
            else:
                self.process = popen(self.command(), **kwargs)
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"twistd wardle exited with {self.process.returncode}\n"
                                     f"{_tail(self.log_path)}")
            if os.path.exists(self.ca_file):
                try:
                    r = self.request("GET", "/readyz", timeout=5)
                    if r.status == 200:
                        return
                    last = f"{r.status} {r.body[:200]!r}"
                except (OSError, ssl.SSLError, http.client.HTTPException) as e:
                    last = repr(e)
            time.sleep(0.1)
        self.stop()
        raise AssertionError(f"twistd wardle not ready ({last})\n{_tail(self.log_path)}")

    def stop(self) -> None:
        if self.process is not None:
            _terminate(self.process, 30)
            self.process = None

    def request(self, method: str, path: str, body: Optional[bytes] = None,
                token: Optional[str] = None, cert: Optional[tuple] = None,
                headers: Optional[dict] = None, timeout: float = 30.0) -> Response:
        """One request to the wardle server, verified against its CA."""
        context = ssl.create_default_context(cafile=self.ca_file)
        if cert is not None:
            context.load_cert_chain(*cert)
        h = {"Accept": "application/json"}
        if body is not None:
            h["Content-Type"] = "application/json"
        if token:
            h["Authorization"] = f"Bearer {token}"
        h.update(headers or {})
        conn = http.client.HTTPSConnection(self.address, self.port, context=context,
                                           timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=h)
            response = conn.getresponse()
            return Response(response.status, {k.lower(): v for k, v in response.getheaders()},
                            response.read())
        finally:
            conn.close()


class Cluster:
    """A kubeapi with a front-proxy CA and a token file, and its admin kubeconfig for the
    wardle server (the server address given)."""

    def __init__(self, server_host: str = "127.0.0.1", extra_args: tuple = ()) -> None:
        self.dir = tempfile.mkdtemp(prefix="kubetwist-wardle-")
        self.proxy_ca = CA("front-proxy-ca")
        self.proxy_client = self.proxy_ca.issue("front-proxy-client", client=True)
        self.stranger = self.proxy_ca.issue("someone-else", client=True)
        self.files = {}
        for name, data in (("front-proxy-ca.crt", self.proxy_ca.cert),
                           ("front-proxy-client.crt", self.proxy_client.cert),
                           ("front-proxy-client.key", self.proxy_client.key),
                           ("stranger.crt", self.stranger.cert),
                           ("stranger.key", self.stranger.key),
                           ("tokens.csv", TOKENS.encode())):
            path = self.files[name] = os.path.join(self.dir, name)
            with open(path, "wb") as f:
                f.write(data)
        self.kube = KubeAPIProcess(extra_args=[
            f"--token-auth-file={self.files['tokens.csv']}",
            f"--requestheader-client-ca-file={self.files['front-proxy-ca.crt']}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-", *extra_args])
        self.server_host = server_host

    def start(self) -> None:
        self.kube.start()
        with open(self.kube.kubeconfig) as f:
            config = yaml.safe_load(f)
        cluster = config["clusters"][0]["cluster"]
        cluster["server"] = f"https://{self.server_host}:{self.kube.port}"
        self.wardle_kubeconfig = os.path.join(self.dir, "wardle.kubeconfig")
        with open(self.wardle_kubeconfig, "w") as f:
            yaml.safe_dump(config, f)

    def close(self) -> None:
        self.kube.cleanup()
        shutil.rmtree(self.dir, ignore_errors=True)

    def kubectl(self, *args: str, input: Optional[str] = None, check: bool = True
                ) -> subprocess.CompletedProcess:
        return self.kube.kubectl(*args, input=input, check=check)

    def grant(self, user: str, verbs: str, namespace: str = "default") -> None:
        """RBAC on the main server: C{user} may C{verbs} flunders in C{namespace}."""
        role = f"flunders-{user}"
        self.kubectl("create", "-f", "-", input=json.dumps({
            "apiVersion": "v1", "kind": "List", "items": [
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                 "metadata": {"name": role},
                 "rules": [{"apiGroups": ["wardle.example.com"], "resources": ["flunders"],
                            "verbs": verbs.split(",")}]},
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                 "metadata": {"name": role, "namespace": namespace},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                             "name": role},
                 "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                               "name": user}]}]}))


def _start_direct() -> tuple:
    cluster = Cluster()
    try:
        cluster.start()
        wardle = WardleProcess(tempfile.mkdtemp(prefix="kubetwist-wardle-srv-"),
                               cluster.wardle_kubeconfig)
        wardle.start()
    except BaseException:
        cluster.close()
        raise
    cluster.grant("jane", "get,list,watch,create,delete")
    return cluster, wardle


def _stop_direct(value: tuple) -> None:
    cluster, wardle = value
    wardle.stop()
    shutil.rmtree(wardle.work_dir, ignore_errors=True)
    cluster.close()


class WardleDirectTests(SynchronousTestCase):
    """The wardle server, spoken to directly, trusting the main server."""

    def setUp(self) -> None:
        self.cluster, self.wardle = class_fixture(self, _start_direct, _stop_direct)

    def test_configmap_published(self) -> None:
        """The main server publishes its client CA and the front proxy's trust."""
        cm = json.loads(self.cluster.kubectl(
            "get", "configmap", "-n", "kube-system", "extension-apiserver-authentication",
            "-o", "json").stdout)
        self.assertEqual(cm["data"]["requestheader-allowed-names"], '["front-proxy-client"]')
        self.assertEqual(cm["data"]["requestheader-username-headers"], '["X-Remote-User"]')
        self.assertIn("BEGIN CERTIFICATE", cm["data"]["client-ca-file"])

    def test_token_reviewed_and_rbac(self) -> None:
        """jane's token is accepted (TokenReview) and RBAC lets her list flunders; bob's is
        accepted too, but RBAC does not let him; an unknown token is 401."""
        r = self.wardle.request("GET", FLUNDERS, token="jane-token")
        self.assertEqual(r.status, 200, r.body)
        r = self.wardle.request("GET", FLUNDERS, token="bob-token")
        self.assertEqual(r.status, 403, r.body)
        self.assertEqual(json.loads(r.body)["message"],
                         'flunders.wardle.example.com is forbidden: User "bob" cannot list '
                         'resource "flunders" in API group "wardle.example.com" in the '
                         'namespace "default"')
        r = self.wardle.request("GET", FLUNDERS, token="no-such-token")
        self.assertEqual(r.status, 401, r.body)

    def test_admin_client_certificate(self) -> None:
        """The main server's admin client certificate authenticates (the ConfigMap's client
        CA); as C{system:masters} it may create a Fischer."""
        r = self.wardle.request(
            "POST", FISCHERS, json.dumps({
                "apiVersion": "wardle.example.com/v1alpha1", "kind": "Fischer",
                "metadata": {"name": "f-admin"}, "disallowedFlunders": ["banned"]}).encode(),
            cert=(self.cluster.kube.admin_cert_file, self.cluster.kube.admin_key_file))
        self.assertEqual(r.status, 201, r.body)

    def test_front_proxy_identity(self) -> None:
        """A front-proxy client certificate speaks for the user in C{X-Remote-User}; a
        certificate of that CA with another name is refused."""
        proxy = (self.cluster.files["front-proxy-client.crt"],
                 self.cluster.files["front-proxy-client.key"])
        r = self.wardle.request("GET", FLUNDERS, cert=proxy,
                                headers={"X-Remote-User": "jane", "X-Remote-Group": "people"})
        self.assertEqual(r.status, 200, r.body)
        r = self.wardle.request("GET", FLUNDERS, cert=proxy, headers={"X-Remote-User": "bob"})
        self.assertEqual(r.status, 403, r.body)
        stranger = (self.cluster.files["stranger.crt"], self.cluster.files["stranger.key"])
        r = self.wardle.request("GET", FLUNDERS, cert=stranger,
                                headers={"X-Remote-User": "jane"})
        self.assertEqual(r.status, 401, r.body)

    def test_flunder_lifecycle(self) -> None:
        """jane creates, gets, lists, watches and deletes a flunder."""
        r = self.wardle.request("GET", FLUNDERS, token="jane-token")
        rv = json.loads(r.body)["metadata"]["resourceVersion"]
        context = ssl.create_default_context(cafile=self.wardle.ca_file)
        watch = http.client.HTTPSConnection(self.wardle.address, self.wardle.port,
                                            context=context, timeout=30)
        self.addCleanup(watch.close)
        watch.request("GET", f"{FLUNDERS}?watch=1&resourceVersion={rv}",
                      headers={"Authorization": "Bearer jane-token"})
        stream = watch.getresponse()
        self.assertEqual(stream.status, 200)
        r = self.wardle.request("POST", FLUNDERS, flunder("life"), token="jane-token")
        self.assertEqual(r.status, 201, r.body)
        self.assertEqual(json.loads(r.body)["spec"],
                         {"reference": "other", "referenceType": "Flunder"})
        r = self.wardle.request("GET", FLUNDERS + "/life", token="jane-token")
        self.assertEqual(r.status, 200, r.body)
        r = self.wardle.request("DELETE", FLUNDERS + "/life", token="jane-token")
        self.assertEqual(r.status, 200, r.body)
        events = []
        while len(events) < 2:
            line = stream.readline()
            self.assertTrue(line, "the watch ended early")
            event = json.loads(line)
            if event["object"]["metadata"]["name"] == "life":
                events.append(event["type"])
        self.assertEqual(events, ["ADDED", "DELETED"])

    def test_ban_flunder(self) -> None:
        """A Fischer bans a name; creating a flunder of that name is refused."""
        admin = (self.cluster.kube.admin_cert_file, self.cluster.kube.admin_key_file)
        r = self.wardle.request(
            "POST", FISCHERS, json.dumps({
                "apiVersion": "wardle.example.com/v1alpha1", "kind": "Fischer",
                "metadata": {"name": "f-ban"}, "disallowedFlunders": ["nope"]}).encode(),
            cert=admin)
        self.assertEqual(r.status, 201, r.body)
        r = self.wardle.request("POST", FLUNDERS, flunder("nope"), token="jane-token")
        self.assertEqual(r.status, 403, r.body)
        self.assertEqual(json.loads(r.body)["message"],
                         'flunders.wardle.example.com "nope" is forbidden: this name may not '
                         "be used, please change the resource name")

    def test_namespace_lifecycle(self) -> None:
        """A flunder may only be created in a namespace of the main server."""
        r = self.wardle.request("POST", FLUNDERS.replace("/default/", "/missing/"),
                                flunder("n"), token="jane-token")
        self.assertEqual(r.status, 403, r.body)
        admin = (self.cluster.kube.admin_cert_file, self.cluster.kube.admin_key_file)
        r = self.wardle.request("POST", FLUNDERS.replace("/default/", "/missing/"),
                                flunder("n"), cert=admin)
        self.assertEqual(r.status, 404, r.body)
        self.assertEqual(json.loads(r.body)["message"], 'namespaces "missing" not found')

    def test_health_without_credentials(self) -> None:
        """C{/healthz} is always allowed, without a SubjectAccessReview."""
        r = self.wardle.request("GET", "/healthz")
        self.assertEqual((r.status, r.body), (200, b"ok"))


# --------------------------------------------------------------------------------------------
# The issue's acceptance test: through the aggregator


def _aggregator_flags_missing() -> Optional[str]:
    """What this tree's kubeapi lacks for the acceptance test (the aggregator's proxy)."""
    out = subprocess.run([venv_binary("twistd"), "kubeapi", "--help"], capture_output=True,
                         text=True, env=dict(os.environ), stdin=subprocess.DEVNULL)
    if "--proxy-client-cert-file" not in out.stdout:
        return ("twistd kubeapi has no --proxy-client-cert-file: the aggregator's proxying "
                "(issue 13 items 1-4) is needed")
    return None


def register_wardle(cluster: Cluster, wardle: WardleProcess, address: str) -> None:
    """Upstream's artifacts/example: namespace, a Service without selector with
    Endpoints and an EndpointSlice naming the wardle server, the APIService."""
    with open(wardle.ca_file, "rb") as f:
        ca_bundle = base64.b64encode(f.read()).decode()
    port = wardle.port
    manifests = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "wardle"}},
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "api", "namespace": "wardle"},
         "spec": {"ports": [{"port": 443, "protocol": "TCP", "targetPort": port}]}},
        {"apiVersion": "v1", "kind": "Endpoints",
         "metadata": {"name": "api", "namespace": "wardle"},
         "subsets": [{"addresses": [{"ip": address}], "ports": [{"port": port}]}]},
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {"name": "api-1", "namespace": "wardle",
                      "labels": {"kubernetes.io/service-name": "api"}},
         "addressType": "IPv4",
         "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
         "ports": [{"port": port, "protocol": "TCP"}]},
        {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
         "metadata": {"name": "v1alpha1.wardle.example.com"},
         "spec": {"group": "wardle.example.com", "version": "v1alpha1",
                  "service": {"namespace": "wardle", "name": "api", "port": 443},
                  "caBundle": ca_bundle, "groupPriorityMinimum": 1000,
                  "versionPriority": 15}},
    ]
    cluster.kubectl("create", "-f", "-", input="\n---\n".join(
        json.dumps(m) for m in manifests))


def start_aggregated(owner: Any) -> tuple:
    """
    The acceptance test's processes: a network namespace, kubeapi with the front-proxy flags
    (listening on every address, advertising the namespace's host side), the wardle server
    inside the namespace with a serving certificate for C{api.wardle.svc}, and its
    registration (Service, Endpoints, EndpointSlice, APIService).  C{owner.addCleanup}
    undoes it all.

    @return: C{(namespace, cluster, wardle)}.
    """
    from tests.netns import new_network_namespace

    ns = new_network_namespace(owner)
    cluster = Cluster(server_host=ns.host_address, extra_args=(
        "--bind-address=0.0.0.0", f"--advertise-address={ns.host_address}"))
    owner.addCleanup(cluster.close)
    # the aggregator presents the front-proxy client certificate to the wardle server
    cluster.kube.extra_args += [
        f"--proxy-client-cert-file={cluster.files['front-proxy-client.crt']}",
        f"--proxy-client-key-file={cluster.files['front-proxy-client.key']}"]
    cluster.start()
    # the aggregator verifies the backend as <service>.<namespace>.svc (upstream's e2e
    # test gives sample-apiserver such a certificate with --tls-cert-file)
    work_dir = tempfile.mkdtemp(prefix="kubetwist-wardle-srv-")
    owner.addCleanup(shutil.rmtree, work_dir, True)
    ca = CA("wardle-ca")
    serving = ca.issue("api", dns_names=["api.wardle.svc"], ip_addresses=[ns.address])
    files = {}
    for name, data in (("ca.crt", ca.cert), ("tls.crt", serving.cert),
                       ("tls.key", serving.key)):
        files[name] = os.path.join(work_dir, name)
        with open(files[name], "wb") as f:
            f.write(data)
    wardle = WardleProcess(work_dir, cluster.wardle_kubeconfig, address=ns.address, port=8443,
                           extra_args=(f"--tls-cert-file={files['tls.crt']}",
                                       f"--tls-private-key-file={files['tls.key']}"),
                           ca_file=files["ca.crt"])
    owner.addCleanup(wardle.stop)
    wardle.start(popen=ns.popen)
    register_wardle(cluster, wardle, ns.address)
    return ns, cluster, wardle


class WardleAggregatedTests(SynchronousTestCase):
    """kubeapi + the wardle server (in a network namespace) + kubectl, through the
    aggregator."""

    def setUp(self) -> None:
        missing = _aggregator_flags_missing()
        if missing:
            self.fail(missing)
        self.ns, self.cluster, self.wardle = start_aggregated(self)
        self.wait_available("True")

    def available(self) -> tuple:
        cond = json.loads(self.cluster.kubectl(
            "get", "apiservice", "v1alpha1.wardle.example.com", "-o", "json").stdout)
        for c in (cond.get("status") or {}).get("conditions") or []:
            if c["type"] == "Available":
                return c["status"], c.get("reason", "")
        return "", ""

    def wait_available(self, status: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        seen: tuple = ()
        while time.monotonic() < deadline:
            seen = self.available()
            if seen[0] == status:
                return seen[1]
            time.sleep(0.5)
        self.fail(f"APIService Available is {seen}, not {status}, after {timeout}s")

    def test_through_the_aggregator(self) -> None:
        """api-resources lists flunders; RBAC on the main server governs jane; create, get,
        get -w and delete work through the proxy (the wardle server sees jane: its own
        SubjectAccessReview for the proxied identity allows only her); BanFlunder refuses;
        explain works; the APIService turns unavailable when the server stops and recovers
        when it is back."""
        resources = self.cluster.kubectl("api-resources", "--api-group=wardle.example.com")
        self.assertIn("flunders", resources.stdout)
        manifest = flunder("through").decode()
        jane = [venv_binary("kubectl"), f"--server={self.cluster.kube.url}",
                f"--certificate-authority={self.cluster.kube.ca_file}", "--token=jane-token"]
        # jane is not allowed until RBAC on the main server says so
        denied = subprocess.run(jane + ["create", "-f", "-"], input=manifest,
                                capture_output=True, text=True)
        self.assertNotEqual(denied.returncode, 0)
        self.assertIn("forbidden", denied.stderr)
        self.cluster.grant("jane", "get,list,watch,create,delete")
        watch = subprocess.Popen(jane + ["get", "flunders", "-w", "-o", "name"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(_terminate, watch, 5)
        created = subprocess.run(jane + ["create", "-f", "-"], input=manifest,
                                 capture_output=True, text=True)
        self.assertEqual(created.returncode, 0, created.stderr)
        got = subprocess.run(jane + ["get", "flunder", "through", "-o", "json"],
                             capture_output=True, text=True)
        self.assertEqual(json.loads(got.stdout)["spec"]["referenceType"], "Flunder")
        self.assertEqual(watch.stdout.readline().strip(), "flunder.wardle.example.com/through")
        deleted = subprocess.run(jane + ["delete", "flunder", "through"], capture_output=True,
                                 text=True)
        self.assertEqual(deleted.returncode, 0, deleted.stderr)
        # BanFlunder, through the proxy
        self.cluster.kubectl("create", "-f", "-", input=json.dumps({
            "apiVersion": "wardle.example.com/v1alpha1", "kind": "Fischer",
            "metadata": {"name": "f"}, "disallowedFlunders": ["banned"]}))
        banned = subprocess.run(jane + ["create", "-f", "-"], input=flunder("banned").decode(),
                                capture_output=True, text=True)
        self.assertIn("this name may not be used, please change the resource name",
                      banned.stderr)
        explained = self.cluster.kubectl("explain", "flunder.spec")
        self.assertIn("referenceType", explained.stdout)
        # the server goes away: Available=False within 30 s, requests 503; and comes back
        self.wardle.stop()
        self.assertEqual(self.wait_available("False"), "FailedDiscoveryCheck")
        r = self.cluster.kube.request("GET", FLUNDERS)
        self.assertEqual(r.status, 503, r.body)
        self.wardle.start(popen=self.ns.popen)
        self.wait_available("True")
        r = self.cluster.kube.request("GET", FLUNDERS)
        self.assertEqual(r.status, 200, r.body)


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
