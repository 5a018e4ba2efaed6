"""
KubeTestCase: a whole kubetwist server chain on a fake reactor, driven over HTTP with StubTreq.

The chain is the real one (HandlerChain -> aggregator -> kube-apiserver -> apiextensions),
storage is the embedded SQLite store on C{:memory:} running inline, authentication is the real
token-file authenticator (tokens C{admin-token} for C{system:masters}, C{jane-token} (and
C{bob-token}) for a plain
user), and time is a L{Clock}.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

from treq.testing import StubTreq
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist import authorization
from kubetwist.apis import printers
from kubetwist.app import assemble
from kubetwist.authentication.config import new_request_authenticator
from kubetwist.authentication.tokenfile import TokenFileAuthenticator
from kubetwist.controlplane.instance import ControlPlaneConfig
from kubetwist.storage.cacher import Cacher
from kubetwist.storage.sqlite import SQLiteStorage

ADMIN = {"Authorization": "Bearer admin-token"}

#: The environment variable naming the project's C{shared} directory (manifests, golden answers,
#: the upstream binaries); without it, C{shared} is the sibling of the repository root.
SHARED_ENV = "KUBETWIST_SHARED"


def repository_root() -> Path:
    """The root of the source tree holding this test package (the directory above C{tests})."""
    return Path(__file__).resolve().parent.parent


def shared_dir(*parts: str) -> Path:
    """
    The project's C{shared} directory, or a path inside it: the one way tests find it.

    C{$KUBETWIST_SHARED} when set, else C{../shared} relative to the repository root (a clone
    at C{<dir>/main} or a worktree at C{<dir>/wt/<name>} with a C{shared} link beside it).

    @param parts: path components below C{shared}, e.g. C{("golden", "x.jsonl")}.
    @return: the path; it exists.
    @raise AssertionError: it does not exist.  Tests that need C{shared} fail, never skip, so
        a missing checkout cannot pass for a green run.
    """
    override = os.environ.get(SHARED_ENV)
    base = Path(override) if override else repository_root().parent / "shared"
    path = base.joinpath(*parts)
    if not path.exists():
        source = (f"${SHARED_ENV}={override!r}" if override
                  else f"the sibling of {repository_root()}")
        raise AssertionError(
            f"{path} does not exist: the shared directory is {source}; check shared/ out "
            f"beside the repository or set {SHARED_ENV}"
        )
    return path


#: The fixed service-account signing key of the test chain (RSA 2048, PKCS#1 PEM; a test key,
#: never used outside the tests), so HTTP-level tests can mint and verify tokens.
SA_SIGNING_KEY_PEM = b"""\
-----BEGIN RSA PRIVATE KEY-----
MIIEoQIBAAKCAQEAxsj758XEov00OKe+uPGxtyg3Zqmy8IDgXEJmBH5oZjkUptpa
wgA4B185tI2Y74He6ekILxjqqsffHYXdOICNGV4MU4GWQDJ0boGn+j4TbUZh33bX
eyuMb3ixGfbZQsd+NzfPKUgZvapg/ZRFer2WigwFV8sYjIU48Rt99lXZYso5tk1/
QMaK/IodhN2Qx4XomIlolbG7plvAUb5b4Ix7xbN3jbFZIcJ/QXllWPPdP2liE/uQ
DK0ScHQrVHxc+4OIANvEZg6vXLGgtpMlMkAu8JOat4BaRj5RkT8dxW6aKO3dEP4N
zex23Xw5kCJM7iXZP9SjDQEOXv3x6kFs4T0NIQIDAQABAoH/ZhvXSbbMyuxFZtTD
ozyDjRGbY6DHycJpfPqebLCB8ABiG1MOS5jRLvg7LAOQC3cqifypt4eVAySn9wJM
IDnoQJ+OtVZbV56TMDBpmKFKWVdN7vuctCgqexgD4NJrx2Gx86s3Pn1Ku6JJL/h5
uBKqwT5rgC1S7tt/5Fm62k4+2/8czsdCmlyWffA+GCS663Isi4blimVt92+s7jcx
sIjeC7NDFxDfmmSG14hTLl6DK2EHWaqkNEcMlUewZbqF3PmA97N7NZIDWsfxjkZO
ndmE0s6AUQXf4tUEp9M7nGtIfkoN6Msj2ICop2ERayZkSsPkS1m1AM5/GPsTGo2v
iOuBAoGBAOfWc3P+Q9eZw6VG3QPK5y3IW8K5AJBiMEXFdJdKpbw+kYhZxsUkwf/Z
gN+P/G3Y4a/88jt/wLKdM5A2g8iIb/tf9n0MC2Y3PaMKi+SaTzPvQANRWvZsrDDY
t1uwy5VGWwVfrNDqaBFemv4CXYVN9apoPziNfe/Xlf81lPU+EwfRAoGBANuArCmq
bOouKUxgSt6gx23u73cCFXxTCCkLCkFc//H8x8is82jUkznW0jxdhDL5uPPVcIZx
04vmFEYWWCBwKTkHrOwHLLVWheeaFSWM7cvyF5U2ZzVN+X4wj8MtpiUtYhShEOX8
jCy8IQtHQrcw6rb//onuc4u8A1qxgRM091RRAoGARIoK4dzm06Oayo7zoj5nMArO
zfeBqi3NFaN1f5DLBKb+wW/BKuFeFTSJPA7GUvdOaYf/WQXAw01kRBtJxIxJhuhs
57Ua3aIxL7VbfD7+cV0m8JQprzabhWlcc9gFp+D/4cvSPIVANPpiGfw7B8DvguyE
3ERAWhrDNorxubsbRzECgYB2YlV4O1R2kOLxMFXw8GHe5qj8VIFmBho2mJ+1VQUt
bBoMH0tAVLX60eOdbwpnu8uGpq0DtcxUfYidrFtnU1bITV10BwKT4tBhcvbIw9NU
1YLmlOrhEubmqiY/LBWZo3psidnlUGoBjo172bkfuCA/Bp4vog1rZcGhXm6w/zYN
oQKBgQCexQ+CSYDcheF815HzhpxXs+UylnvuntlOA5m9FQwO/Rdu24DLL2gGxUqy
U1C9E0sKs40wUSvX6reF8twQKGaev552jbxRZ52UmCP6ZT7eCtrjnc+Xjm61HkN7
fGiKQZzZmvstmmjwegUGYOhw4VC6j3x6Oenwdwaasq/YSVsdYg==
-----END RSA PRIVATE KEY-----
"""

#: The test chain's C{--service-account-issuer} (kube-apiserver's usual value).
SA_ISSUER = "https://kubernetes.default.svc.cluster.local"


def service_account_token_config() -> Any:
    """The L{ServiceAccountTokenConfig} of the test chain (the fixed key, L{SA_ISSUER})."""
    from kubetwist.authentication.serviceaccount_keys import private_key_from_bytes
    from kubetwist.registry.core.serviceaccount_token import ServiceAccountTokenConfig

    key = private_key_from_bytes(SA_SIGNING_KEY_PEM)
    return ServiceAccountTokenConfig(issuer=SA_ISSUER, signing_key=key,
                                     public_keys=[key.public_key()])


class InlinePool:
    """A thread pool stand-in that runs work inline (see SQLiteStorage's C{threadpool})."""

    synchronous = True

    def stop(self) -> None:
        pass


class SnapshotSQLiteStorage(SQLiteStorage):
    """
    An inline C{:memory:} SQLite store that opens on a copy of C{snapshot} (the bytes of
    C{sqlite3.Connection.serialize()}): the database, its revision and its event log as a
    server left them.
    """

    def __init__(self, clock: Any, snapshot: bytes) -> None:
        self._snapshot = snapshot
        super().__init__(clock, ":memory:", threadpool=InlinePool())

    def _connect(self) -> sqlite3.Connection:
        conn = super()._connect()
        conn.deserialize(self._snapshot)
        return conn


#: The store of a bootstrapped server, by what shapes the bootstrap (authorization modes,
#: priority and fairness): L{KubeTestCase} builds the first one of each and starts later
#: servers on a copy, so their post-start hooks find their objects and write nothing (the
#: creation path itself stays covered by the first test of each kind and by the tests of the
#: hooks and the integration tests, which always start from empty stores).
_BOOTSTRAPPED: dict[tuple, bytes] = {}


class FakeReactorClock(Clock):
    """A Clock with the extra reactor methods the storage touches."""

    def callFromThread(self, f, *a, **kw):  # pragma: no cover - inline pool never uses it
        f(*a, **kw)


def build_chain(clock: Clock, modes=("AlwaysAllow",), max_inflight: int = 400,
                max_mutating: int = 200, request_timeout: float = 60.0,
                storage: Any = None, shutdown_check: Any = None, audit: Any = None,
                priority_and_fairness: bool = True) -> dict:
    """Assemble the real server chain (L{kubetwist.app.assemble}) over the Cacher in
    front of C{:memory:} SQLite, as the process runs it; returns its parts."""
    storage = storage or Cacher(SQLiteStorage(clock, ":memory:", threadpool=InlinePool()), clock)
    fd, path = tempfile.mkstemp()
    with os.fdopen(fd, "w") as f:
        f.write("admin-token,admin,1,system:masters\njane-token,jane,2,\nbob-token,bob,3,\n")
    tokens = TokenFileAuthenticator.from_file(path)
    os.unlink(path)
    sa_tokens = service_account_token_config()
    parts = assemble(
        storage, clock,
        ControlPlaneConfig(advertise_address="192.0.2.10", root_ca_pem="CA",
                           enable_priority_and_fairness=priority_and_fairness),
        authenticator=new_request_authenticator(
            token_authenticators=[tokens, sa_tokens.authenticator(clock)]),
        authorizer=authorization.from_modes(
            list(modes), authorization.AuthorizerConfig(storage=storage, reactor=clock)),
        version_info={"major": "1", "minor": "32", "gitVersion": "v1.32.0"},
        server_address="192.0.2.10:6443", shutdown_check=shutdown_check,
        max_requests_inflight=max_inflight, max_mutating_requests_inflight=max_mutating,
        request_timeout=request_timeout, service_account_tokens=sa_tokens, audit=audit,
    )
    return {"storage": storage, "kube": parts.kube, "aggregator": parts.aggregator,
            "apiextensions": parts.apiextensions, "front": parts.front, "chain": parts.chain}


class KubeTestCase(SynchronousTestCase):
    """Base class: C{self.request(method, path, body)} against a bootstrapped server."""

    modes = ("AlwaysAllow",)
    #: C{--enable-priority-and-fairness}
    priority_and_fairness = True

    def setUp(self) -> None:
        self.clock = FakeReactorClock()
        self.clock.advance(1_700_000_000)
        old = printers.set_clock(self.clock.seconds)
        self.addCleanup(printers.set_clock, old)
        self.shutting_down = False
        key = (tuple(self.modes), self.priority_and_fairness)
        snapshot = _BOOTSTRAPPED.get(key)
        storage = None
        if snapshot is not None:
            storage = Cacher(SnapshotSQLiteStorage(self.clock, snapshot), self.clock)
        parts = build_chain(self.clock, self.modes, shutdown_check=self._shutdown_check,
                            audit=getattr(self, "audit", None), storage=storage,
                            priority_and_fairness=self.priority_and_fairness)
        self.__dict__.update(parts)
        # start every server's post-start hooks, as the process does once it listens
        for server in self.front.chain():
            server.hooks.startService()
            self.addCleanup(server.hooks.stopService)
        if snapshot is None:
            conn = self.storage.backend._conn
            if conn is not None:
                _BOOTSTRAPPED[key] = conn.serialize()
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


def die_with_parent() -> None:
    """
    C{preexec_fn} for the long-lived processes tests start (etcd, C{twistd kubeapi}): the
    kernel sends them SIGTERM when the test process dies (Linux C{PR_SET_PDEATHSIG}), so a
    trial worker that exits without running its cleanups (C{trial -j}) leaves none behind.
    Elsewhere it does nothing.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)

