"""
The baseline of C{bench_get.py}: a bare C{twisted.web} resource answering every GET with fixed
bytes, served with kubetwist's own TLS context factory (same certificate, ciphers, ALPN and
client-certificate verification as C{twistd kubeapi}) on the default reactor.

    python benchmarks/bare_server.py PORT PKI_DIR BODY_FILE

Prints C{READY} once listening; stops on SIGTERM.
"""

from __future__ import annotations

import os
import sys

from common import ROOT  # noqa: F401  (puts the repository on sys.path)
from twisted.internet import reactor
from twisted.internet.endpoints import SSL4ServerEndpoint
from twisted.web.resource import Resource
from twisted.web.server import Site

from kubetwist.server.tls import server_context_factory


class Fixed(Resource):
    """Every GET answers 200 with the same body and C{Content-Type: application/json}."""

    isLeaf = True

    def __init__(self, body: bytes) -> None:
        super().__init__()
        self.body = body

    def render_GET(self, request) -> bytes:
        request.setHeader(b"content-type", b"application/json")
        return self.body


def main(port: int, pki: str, body_file: str) -> None:
    with open(body_file, "rb") as f:
        body = f.read()
    tls = server_context_factory(
        os.path.join(pki, "apiserver.crt"),
        os.path.join(pki, "apiserver.key"),
        [os.path.join(pki, "ca.crt")],
    )
    site = Site(Fixed(body))
    site.noisy = False
    endpoint = SSL4ServerEndpoint(reactor, port, tls, interface="127.0.0.1")

    def listening(_port) -> None:
        print("READY", flush=True)

    endpoint.listen(site).addCallbacks(listening, lambda f: (print(f), reactor.stop()))
    reactor.run()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3])
