"""
An extension server (the wardle example by default) on a fake reactor, driven over HTTP with
StubTreq, as L{tests.support.KubeTestCase} drives kube-apiserver.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Optional

from treq.testing import StubTreq
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis import printers
from kubetwist.authentication.config import new_request_authenticator
from kubetwist.authentication.tokenfile import TokenFileAuthenticator
from kubetwist.authorization import AlwaysAllow
from kubetwist.extension import assemble_extension
from kubetwist.storage.cacher import Cacher
from kubetwist.storage.sqlite import SQLiteStorage
from tests.support import FakeReactorClock, InlinePool


def token_authenticator() -> Any:
    """Tokens C{admin-token} (C{system:masters}) and C{jane-token} (no group)."""
    fd, path = tempfile.mkstemp()
    with os.fdopen(fd, "w") as f:
        f.write("admin-token,admin,1,system:masters\njane-token,jane,2,\n")
    try:
        return new_request_authenticator(
            token_authenticators=[TokenFileAuthenticator.from_file(path)])
    finally:
        os.unlink(path)


def http_request(testcase: SynchronousTestCase, treq: StubTreq, method: str, url: str,
                 body: Any = None, headers: Optional[dict] = None,
                 content_type: str = "application/json",
                 also_flush: tuple = ()) -> tuple[int, Any, Any]:
    """
    One request through C{treq}: C{(code, decoded JSON or text, response)}.

    @param also_flush: other StubTreqs the server calls while answering (the main server of
        delegated authentication), flushed in turn until the answer is there.
    """
    h = dict(headers or {})
    data = body
    if body is not None and not isinstance(body, (bytes, str)):
        data = json.dumps(body)
    if isinstance(data, str):
        data = data.encode()
    if data is not None:
        h.setdefault("Content-Type", content_type)
    d = treq.request(method, url, data=data, headers={k: [v] for k, v in h.items()})
    for _ in range(20):
        treq.flush()
        if d.called:
            break
        for other in also_flush:
            other.flush()
    response = testcase.successResultOf(d)
    raw = testcase.successResultOf(response.content())
    try:
        decoded: Any = json.loads(raw)
    except ValueError:
        decoded = raw.decode("utf-8", "replace")
    return response.code, decoded, response


def isolate_type_registry(testcase: SynchronousTestCase) -> None:
    """Undo, after the test, every kind the test registers (L{kubetwist.runtime.types} is
    process-wide, and other tests count its kinds)."""
    from kubetwist.runtime import types as typedefs

    saved_types, saved_kinds = dict(typedefs.TYPES), dict(typedefs.KINDS)

    def restore() -> None:
        typedefs.TYPES.clear()
        typedefs.TYPES.update(saved_types)
        typedefs.KINDS.clear()
        typedefs.KINDS.update(saved_kinds)

    testcase.addCleanup(restore)


class ExtensionTestCase(SynchronousTestCase):
    """C{self.request(method, path, body)} against an assembled extension server."""

    #: the token sent by L{request} unless told otherwise
    token = "admin-token"

    def config(self) -> Any:
        from examples.wardle.server import wardle_config

        return wardle_config()

    def authorizer(self) -> Any:
        return AlwaysAllow()

    def authenticator(self) -> Any:
        return token_authenticator()

    def setUp(self) -> None:
        isolate_type_registry(self)
        self.clock = FakeReactorClock()
        self.clock.advance(1_700_000_000)
        old = printers.set_clock(self.clock.seconds)
        self.addCleanup(printers.set_clock, old)
        self.storage = Cacher(SQLiteStorage(self.clock, ":memory:",
                                            "/registry/wardle.example.com",
                                            threadpool=InlinePool()), self.clock)
        self.extension = assemble_extension(
            self.storage, self.clock, self.config(), authenticator=self.authenticator(),
            authorizer=self.authorizer(), server_address="192.0.2.20:8443",
            process_metrics=False)
        self.extension.server.hooks.startService()
        self.addCleanup(self.extension.server.hooks.stopService)
        self.treq = StubTreq(self.extension.chain)

    def request(self, method: str, path: str, body: Any = None,
                headers: Optional[dict] = None, token: Optional[str] = None,
                content_type: str = "application/json") -> tuple[int, Any, Any]:
        h = {"Authorization": f"Bearer {token or self.token}"}
        h.update(headers or {})
        return http_request(self, self.treq, method, "https://wardle.test" + path, body, h,
                            content_type)
