"""
KubeTestCase: a whole kubetwist server chain on a fake reactor, driven over HTTP with StubTreq.

The chain is the real one (HandlerChain -> aggregator -> kube-apiserver -> apiextensions),
storage is the embedded SQLite store on C{:memory:} running inline, authentication is the real
token-file authenticator (tokens C{admin-token} for C{system:masters}, C{jane-token} for a plain
user), and time is a L{Clock}.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Optional

from treq.testing import StubTreq
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist import authorization
from kubetwist.apis import printers
from kubetwist.authentication.config import new_request_authenticator
from kubetwist.authentication.tokenfile import TokenFileAuthenticator
from kubetwist.controlplane.instance import ControlPlaneConfig
from kubetwist.server.run import assemble
from kubetwist.storage.cacher import Cacher
from kubetwist.storage.sqlite import SQLiteStorage

ADMIN = {"Authorization": "Bearer admin-token"}


class InlinePool:
    """A thread pool stand-in that runs work inline (see SQLiteStorage's C{threadpool})."""

    synchronous = True

    def stop(self) -> None:
        pass


class FakeReactorClock(Clock):
    """A Clock with the extra reactor methods the storage touches."""

    def callFromThread(self, f, *a, **kw):  # pragma: no cover - inline pool never uses it
        f(*a, **kw)


def build_chain(clock: Clock, modes=("AlwaysAllow",), max_inflight: int = 400,
                max_mutating: int = 200, request_timeout: float = 60.0,
                storage: Any = None, shutdown_check: Any = None) -> dict:
    """Assemble the real server chain (L{kubetwist.server.run.assemble}) over the Cacher in
    front of C{:memory:} SQLite, as the process runs it; returns its parts."""
    storage = storage or Cacher(SQLiteStorage(clock, ":memory:", threadpool=InlinePool()), clock)
    fd, path = tempfile.mkstemp()
    with os.fdopen(fd, "w") as f:
        f.write("admin-token,admin,1,system:masters\njane-token,jane,2,\n")
    tokens = TokenFileAuthenticator.from_file(path)
    os.unlink(path)
    parts = assemble(
        storage, clock,
        ControlPlaneConfig(advertise_address="192.0.2.10", root_ca_pem="CA"),
        authenticator=new_request_authenticator(token_authenticators=[tokens]),
        authorizer=authorization.from_modes(list(modes)),
        version_info={"major": "1", "minor": "32", "gitVersion": "v1.32.0"},
        server_address="192.0.2.10:6443", shutdown_check=shutdown_check,
        max_requests_inflight=max_inflight, max_mutating_requests_inflight=max_mutating,
        request_timeout=request_timeout,
    )
    return {"storage": storage, "kube": parts.kube, "aggregator": parts.aggregator,
            "apiextensions": parts.apiextensions, "front": parts.front, "chain": parts.chain}


class KubeTestCase(SynchronousTestCase):
    """Base class: C{self.request(method, path, body)} against a bootstrapped server."""

    modes = ("AlwaysAllow",)

    def setUp(self) -> None:
        self.clock = FakeReactorClock()
        self.clock.advance(1_700_000_000)
        old = printers.set_clock(self.clock.seconds)
        self.addCleanup(printers.set_clock, old)
        self.shutting_down = False
        parts = build_chain(self.clock, self.modes, shutdown_check=self._shutdown_check)
        self.__dict__.update(parts)
        # start every server's post-start hooks, as the process does once it listens
        for server in self.front.chain():
            server.hooks.startService()
            self.addCleanup(server.hooks.stopService)
        self.treq = StubTreq(self.chain)

    def _shutdown_check(self) -> None:
        if self.shutting_down:
            raise RuntimeError("process is shutting down")

    def request(self, method: str, path: str, body: Any = None, headers: Optional[dict] = None,
                content_type: str = "application/json") -> tuple[int, Any, Any]:
        """Send one request; returns C{(code, decoded JSON body or text, response)}."""
        h = dict(ADMIN)
        if body is not None:
            h["Content-Type"] = content_type
        h.update(headers or {})
        data = body
        if body is not None and not isinstance(body, (bytes, str)):
            data = json.dumps(body)
        if isinstance(data, str):
            data = data.encode()
        d = self.treq.request(method, "https://kubetwist.test" + path, data=data,
                              headers={k: [v] for k, v in h.items() if v is not None})
        self.treq.flush()
        response = self.successResultOf(d)
        raw = self.successResultOf(response.content())
        try:
            decoded: Any = json.loads(raw)
        except ValueError:
            decoded = raw.decode("utf-8", "replace")
        return response.code, decoded, response
