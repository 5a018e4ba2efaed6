# -*- test-case-name: tests.integration.test_authenticators -*-
"""
Issue 11 item 3 against a real C{twistd -n kubeapi}: a JWT authenticator of
C{--authentication-config} with keys from a local HTTPS issuer, anonymous conditions,
bootstrap tokens, webhook token authentication against a local HTTPS webhook, and the
requestheader front proxy with its own CA; bad credentials of each kind are 401.
"""

from __future__ import annotations

import atexit
import datetime
import http.client
import http.server
import json
import os
import shutil
import ssl
import tempfile
import threading
import time

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units, free_port

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
NOW = datetime.datetime.now(datetime.timezone.utc)


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(cn: str, issuer=None, ca=False, server_ip=None, client=False):
    key = ec.generate_private_key(ec.SECP256R1())
    issuer_name, issuer_key = issuer if issuer else (_name(cn), key)
    b = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(issuer_name)
         .public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(NOW - datetime.timedelta(days=1))
         .not_valid_after(NOW + datetime.timedelta(days=1))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if server_ip:
        import ipaddress

        b = b.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address(server_ip))]), critical=False)
        b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                            critical=False)
    if client:
        b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]),
                            critical=False)
    return b.sign(issuer_key, hashes.SHA256()), key


def _pem(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


class _Files:
    """Certificates, keys and configuration files of the test class, and the local HTTPS
    issuer/webhook (one thread)."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="kubetwist-authn-")
        atexit.register(shutil.rmtree, self.dir, True)
        self.ca, ca_key = _cert("local-ca", ca=True)
        server, server_key = _cert("127.0.0.1", (self.ca.subject, ca_key), server_ip="127.0.0.1")
        self.proxy_ca, proxy_key = _cert("proxy-ca", ca=True)
        self.proxy, self.proxy_key = _cert("front-proxy-client", (self.proxy_ca.subject,
                                                                  proxy_key), client=True)
        self.stranger, self.stranger_key = _cert("front-proxy-client", None, client=True)
        self.signing_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.write("ca.pem", _pem(self.ca))
        self.write("server.pem", _pem(server) + _key_pem(server_key))
        self.write("proxy-ca.pem", _pem(self.proxy_ca))
        self.write("proxy.pem", _pem(self.proxy))
        self.write("proxy.key", _key_pem(self.proxy_key))
        self.write("stranger.pem", _pem(self.stranger))
        self.write("stranger.key", _key_pem(self.stranger_key))
        self.port = free_port()
        self.issuer = f"https://127.0.0.1:{self.port}"
        self.reviews: list = []
        self._serve()
        ca_inline = "\n".join("      " + line for line in _pem(self.ca).decode().splitlines())
        self.write("authn.yaml", f"""apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: {self.issuer}
    audiences: [kubetwist]
    certificateAuthority: |
{ca_inline}
  claimMappings:
    username: {{expression: "'oidc:' + claims.sub"}}
    groups: {{claim: groups, prefix: "oidc:"}}
  claimValidationRules:
  - expression: "claims.tenant == 'acme'"
    message: wrong tenant
anonymous:
  enabled: true
  conditions: [{{path: /livez}}, {{path: /version}}]
""".encode())
        self.write("hook.yaml", f"""apiVersion: v1
kind: Config
clusters:
- name: hook
  cluster: {{server: "{self.issuer}/tokenreview", certificate-authority: ca.pem}}
users:
- name: api
  user: {{}}
contexts:
- name: c
  context: {{cluster: hook, user: api}}
current-context: c
""".encode())

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def write(self, name: str, data: bytes) -> None:
        with open(self.path(name), "wb") as f:
            f.write(data)

    def token(self, **claims) -> str:
        payload = {"iss": self.issuer, "aud": "kubetwist", "sub": "jane",
                   "exp": int(time.time()) + 600, "groups": ["dev"], "tenant": "acme"}
        payload.update(claims)
        return jwt.encode(payload, self.signing_key, algorithm="RS256",
                          headers={"kid": "k1"})

    def _serve(self) -> None:
        files = self
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.signing_key.public_key()))
        jwk.update(kid="k1", alg="RS256", use="sig")

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def answer(self, obj: dict) -> None:
                body = json.dumps(obj).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path == "/.well-known/openid-configuration":
                    self.answer({"issuer": files.issuer, "jwks_uri": files.issuer + "/keys"})
                elif self.path == "/keys":
                    self.answer({"keys": [jwk]})
                else:
                    self.send_error(404)

            def do_POST(self) -> None:
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                files.reviews.append(review)
                ok = review["spec"]["token"] == "webhook-token"
                self.answer({"apiVersion": review["apiVersion"], "kind": "TokenReview",
                             "status": {"authenticated": ok, "user": {
                                 "username": "hooked", "groups": ["hook-group"]} if ok else {}}})

        server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.path("server.pem"))
        server.socket = context.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        atexit.register(server.shutdown)


class AuthenticatorsTests(ServerTestMixin, SynchronousTestCase):
    files: _Files | None = None

    @classmethod
    def start_fixture(cls):
        cls.files = f = _Files()
        cls.server_args = (
            "--authorization-mode=AlwaysAllow",
            f"--authentication-config={f.path('authn.yaml')}",
            "--enable-bootstrap-token-auth=true",
            f"--authentication-token-webhook-config-file={f.path('hook.yaml')}",
            "--authentication-token-webhook-version=v1",
            f"--requestheader-client-ca-file={f.path('proxy-ca.pem')}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        )
        return super().start_fixture()

    def whoami(self, **kw) -> tuple[int, dict]:
        body = json.dumps({"apiVersion": "authentication.k8s.io/v1",
                           "kind": "SelfSubjectReview"}).encode()
        r = self.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body,
                         **kw)
        data = json.loads(r[1]) if r[1] else {}
        return r[0], (data.get("status") or {}).get("userInfo", data)

    def request(self, method, path, body=None, token=None, cert=None, headers=None):
        context = ssl.create_default_context(cafile=self.server.ca_file)
        if cert:
            context.load_cert_chain(self.files.path(cert + ".pem"),
                                    self.files.path(cert + ".key"))
        h = {"Accept": "application/json", "Content-Type": "application/json"}
        if token:
            h["Authorization"] = f"Bearer {token}"
        h.update(headers or {})
        c = http.client.HTTPSConnection("127.0.0.1", self.server.port, context=context,
                                        timeout=30)
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def test_jwt(self) -> None:
        """A JWT of the configured issuer: the mapped user; bad ones are 401."""
        code, user = self.whoami(token=self.files.token())
        self.assertEqual((code, user), (201, {
            "username": "oidc:jane", "groups": ["oidc:dev", "system:authenticated"]}))
        for bad in (self.files.token(tenant="other"), self.files.token(aud="other"),
                    self.files.token(exp=int(time.time()) - 10),
                    jwt.encode({"iss": self.files.issuer, "sub": "x"},
                               rsa.generate_private_key(public_exponent=65537, key_size=2048),
                               algorithm="RS256", headers={"kid": "k1"})):
            code, body = self.request("GET", "/api", token=bad)
            self.assertEqual((code, json.loads(body)), (401, UNAUTHORIZED))

    def test_anonymous_conditions(self) -> None:
        """Anonymous only on the configured paths (even with AlwaysAllow: the file says so)."""
        self.assertEqual(self.request("GET", "/livez")[0], 200)
        self.assertEqual(self.request("GET", "/version")[0], 200)
        code, body = self.request("GET", "/readyz")
        self.assertEqual((code, json.loads(body)), (401, UNAUTHORIZED))
        self.assertEqual(self.request("GET", "/api/v1/namespaces")[0], 401)

    def test_bootstrap_token(self) -> None:
        """A bootstrap token Secret in kube-system authenticates system:bootstrap:<id>."""
        data = {"token-id": "abcdef", "token-secret": "0123456789abcdef",
                "usage-bootstrap-authentication": "true",
                "auth-extra-groups": "system:bootstrappers:worker"}
        secret = {"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
                  "metadata": {"name": "bootstrap-token-abcdef", "namespace": "kube-system"},
                  "stringData": data}
        self.server.kubectl("apply", "-f", "-", input=json.dumps(secret))
        deadline = time.monotonic() + 10
        while True:
            code, user = self.whoami(token="abcdef.0123456789abcdef")
            if code == 201 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual((code, user), (201, {"username": "system:bootstrap:abcdef", "groups": [
            "system:bootstrappers", "system:bootstrappers:worker", "system:authenticated"]}))
        self.assertEqual(self.request("GET", "/api", token="abcdef.0123456789abcdeX")[0], 401)
        self.server.kubectl("delete", "secret", "-n", "kube-system", "bootstrap-token-abcdef")
        deadline = time.monotonic() + 20  # the 10 s token cache, then the watch cache
        while (code := self.request("GET", "/api", token="abcdef.0123456789abcdef")[0]) == 200 \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(code, 401)

    def test_webhook(self) -> None:
        """An unknown token goes to the webhook as a TokenReview v1."""
        code, user = self.whoami(token="webhook-token")
        self.assertEqual((code, user), (201, {"username": "hooked", "groups": [
            "hook-group", "system:authenticated"]}))
        self.assertEqual(self.files.reviews[-1]["apiVersion"], "authentication.k8s.io/v1")
        self.assertEqual(self.request("GET", "/api", token="refused-token")[0], 401)
        self.assertEqual(self.files.reviews[-1]["spec"]["token"], "refused-token")

    def test_requestheader(self) -> None:
        """The proxy's certificate lets X-Remote-* name the user; a certificate of another CA
        with the same name is refused by the TLS handshake (Go's VerifyClientCertIfGiven)."""
        code, user = self.whoami(cert="proxy", headers={
            "X-Remote-User": "proxied", "X-Remote-Group": "pg", "X-Remote-Extra-Scope": "s"})
        self.assertEqual((code, user), (201, {"username": "proxied", "groups": [
            "pg", "system:authenticated"], "extra": {"scope": ["s"]}}))
        # without the headers the proxy's certificate is nobody (not an x509 user)
        self.assertEqual(self.request("GET", "/api", cert="proxy")[0], 401)
        with self.assertRaises(ssl.SSLError):
            self.request("GET", "/api", cert="stranger", headers={"X-Remote-User": "proxied"})


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
