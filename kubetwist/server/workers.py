# -*- test-case-name: tests.server.test_workers -*-
"""
C{twistd kubeapi --workers N}: one server process per core, sharing C{--secure-port}.

Upstream kube-apiserver uses every core from one process (goroutines); a Twisted process runs
its Python on one core, so kubetwist runs N processes (kubetwist's own design, no upstream
source).  The process twistd starts is worker 0 and the supervisor (L{WorkerSupervisor}): it
prepares the data directory and certificates, listens, and only then starts workers
1..N-1 (the same interpreter and twistd, the same C{kubeapi} arguments plus
C{--worker-index=i}); each builds its own server chain on the same etcd and listens on the
same port with C{SO_REUSEPORT} (L{kubetwist.server.reuseport}).

Why C{SO_REUSEPORT} rather than one listening socket passed to every worker: the kernel
hashes each new connection to one listener, so a burst of connections (a load tool, many
informers) is spread evenly; with one shared accept queue every idle worker wakes for each
connection and Twisted's port accepts up to a hundred at a time, so the first to wake takes
the burst.  The price: connections still queued on a worker's listener when it dies are reset
(clients retry), and a worker binds on its own (it fails alone, and is restarted).

The supervisor restarts a worker that exits (back-off from 1 s doubling to 30 s, back to 1 s
once a worker has run for 30 s), and on its own stop sends every worker SIGTERM, then SIGKILL
after a grace period.  A worker's standard input is a pipe from the supervisor: when the
supervisor dies (even by SIGKILL) the pipe reads end-of-file and the worker stops
(L{watch_parent}).  Workers write their log to the supervisor's standard output and error
(one stream; the klog header carries each line's process id) and never talk to systemd
(C{NOTIFY_SOCKET} and C{WATCHDOG_*} are removed from their environment).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Optional, Sequence

from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.interfaces import IReadDescriptor
from twisted.internet.protocol import ProcessProtocol
from twisted.logger import Logger
from zope.interface import implementer

log = Logger()

#: The post-start hooks that run in worker 0 only: upstream runs them in
#: kube-controller-manager under leader election (one instance at a time), so N copies would
#: only repeat the same work N times.  Every other hook is one that upstream runs in every
#: kube-apiserver of a cluster (bootstrap writes that are create-or-409 or compare-and-swap,
#: informers that feed this process's caches, discovery documents and the priority-and-
#: fairness configuration): it runs in every worker.
SINGLETON_HOOKS = frozenset({
    "start-garbage-collector",
    "start-pod-garbage-collector",
    "start-storage-protection-controller",
    "start-resource-quota-controller",
    "start-clusterrole-aggregation-controller",
    "validatingadmissionpolicy-status-controller",
})

#: Environment variables a worker must not inherit: systemd talks to worker 0 only.
_SYSTEMD_ENV = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID",
                "LISTEN_FDNAMES")

#: The twistd program run by a worker: C{python -c <this> <twistd arguments>}.
TWISTD = "from twisted.scripts.twistd import run; run()"


def worker_argv(kubeapi_args: Sequence[str], index: int, count: int,
                twistd_args: Sequence[str] = ()) -> list[str]:
    """
    The arguments after the interpreter that start worker C{index}: C{-c TWISTD -n --pidfile=
    [twistd_args] kubeapi <kubeapi_args> --workers=count --worker-index=index} (later flags
    win, so the supervisor's own C{--workers}/C{--worker-index} are overridden).

    @param kubeapi_args: the supervisor's C{kubeapi} arguments as given (C{Options["argv"]}).
    @param twistd_args: twistd options to pass on (L{passed_twistd_args}).
    """
    return (["-c", TWISTD, "-n", "--pidfile=", *twistd_args, "kubeapi", *kubeapi_args,
             f"--workers={count}", f"--worker-index={index}"])


def passed_twistd_args(argv: Sequence[str]) -> list[str]:
    """
    The twistd options of the supervisor's command line C{argv} (C{sys.argv}: twistd's own
    options, then C{kubeapi} and its flags) that a worker takes too: the reactor
    (C{--reactor=x}, C{-r x}).  Daemonising, the pid file and the log file stay the
    supervisor's: a worker runs in the foreground and logs to the supervisor's streams.
    """
    try:
        end = list(argv).index("kubeapi")
    except ValueError:
        return []
    out: list[str] = []
    args = list(argv[1:end])
    for i, arg in enumerate(args):
        if arg.startswith("--reactor="):
            out.append(arg)
        elif arg in ("--reactor", "-r") and i + 1 < len(args):
            out.append(f"--reactor={args[i + 1]}")
    return out


class _WorkerProtocol(ProcessProtocol):
    """One worker process: tells its L{WorkerSupervisor} when it ends."""

    def __init__(self, supervisor: "WorkerSupervisor", index: int) -> None:
        self.supervisor = supervisor
        self.index = index
        self.started_at = 0.0
        self.ended: defer.Deferred = defer.Deferred()
        self.pid: Optional[int] = None

    def connectionMade(self) -> None:
        self.pid = self.transport.pid

    def processEnded(self, reason: Any) -> None:
        status = getattr(reason.value, "exitCode", None)
        sig = getattr(reason.value, "signal", None)
        self.supervisor._ended(self, status, sig)
        self.ended.callback(None)


class WorkerSupervisor(Service):
    """
    Starts, restarts and stops workers 1..C{count}-1 (worker 0 is this process).

    @param reactor: C{IReactorProcess} and C{IReactorTime}.
    @param kubeapi_args: the C{kubeapi} arguments as given (C{Options["argv"]}).
    @param count: the number of workers, this process included (C{--workers}).
    @param twistd_args: twistd options a worker takes too (L{passed_twistd_args}).
    @param executable: the interpreter (this one's).
    @param env: the environment (this process's, without systemd's variables).
    @param grace: seconds between SIGTERM and SIGKILL at stop.
    @param initial_backoff: seconds before restarting a worker that exited; doubled after each
        quick exit up to C{max_backoff}, back to C{initial_backoff} once a worker has run
        C{stable_after} seconds.
    @ivar workers: C{{index: _WorkerProtocol}} of the running workers.
    """

    name = "workers"

    def __init__(self, reactor: Any, kubeapi_args: Sequence[str], count: int,
                 twistd_args: Sequence[str] = (), executable: str = sys.executable,
                 env: Optional[dict] = None, grace: float = 70.0,
                 initial_backoff: float = 1.0, max_backoff: float = 30.0,
                 stable_after: float = 30.0, path: Optional[str] = None) -> None:
        self.reactor = reactor
        self.kubeapi_args = list(kubeapi_args)
        self.count = count
        self.twistd_args = list(twistd_args)
        self.executable = executable
        base = dict(os.environ if env is None else env)
        self.env = {k: v for k, v in base.items() if k not in _SYSTEMD_ENV}
        self.grace = grace
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.stable_after = stable_after
        self.path = path if path is not None else os.getcwd()
        self.workers: dict[int, _WorkerProtocol] = {}
        self.backoff: dict[int, float] = {}
        self.restarts = 0
        self._pending: dict[int, Any] = {}

    def startService(self) -> None:
        super().startService()
        for index in range(1, self.count):
            self._spawn(index)

    def _spawn(self, index: int) -> None:
        self._pending.pop(index, None)
        if not self.running:
            return
        protocol = _WorkerProtocol(self, index)
        argv = [self.executable] + worker_argv(self.kubeapi_args, index, self.count,
                                               self.twistd_args)
        # 0: a pipe from here (its end-of-file tells the worker this process died);
        # 1, 2: this process's own streams, so one log has every worker's lines
        self.reactor.spawnProcess(protocol, self.executable, argv, env=self.env,
                                  path=self.path, childFDs={0: "w", 1: 1, 2: 2})
        protocol.started_at = self.reactor.seconds()
        self.workers[index] = protocol
        log.info("started worker {index} (pid {pid})", index=index, pid=protocol.pid)

    def _ended(self, protocol: _WorkerProtocol, status: Any, sig: Any) -> None:
        if self.workers.get(protocol.index) is protocol:
            del self.workers[protocol.index]
        if not self.running:
            return
        index = protocol.index
        lived = self.reactor.seconds() - protocol.started_at
        delay = self.backoff.get(index, self.initial_backoff)
        if lived >= self.stable_after:
            delay = self.initial_backoff
        self.backoff[index] = min(delay * 2, self.max_backoff)
        how = f"signal {sig}" if sig is not None else f"status {status}"
        log.warn("worker {index} (pid {pid}) exited with {how}; restarting in {delay:g}s",
                 index=index, pid=protocol.pid, how=how, delay=delay)
        self.restarts += 1
        self._pending[index] = self.reactor.callLater(delay, self._spawn, index)

    def stopService(self) -> defer.Deferred:
        """
        SIGTERM every worker (each shuts down gracefully), SIGKILL those still running after
        C{grace} seconds; fires once all have exited.
        """
        super().stopService()
        for call in self._pending.values():
            if call.active():
                call.cancel()
        self._pending.clear()
        running = list(self.workers.values())
        for protocol in running:
            _signal(protocol, "TERM")
        if not running:
            return defer.succeed(None)
        kill = self.reactor.callLater(self.grace, self._kill, running)
        done = defer.DeferredList([p.ended for p in running])

        def finished(result: Any) -> None:
            if kill.active():
                kill.cancel()

        return done.addCallback(finished)

    def _kill(self, protocols: list) -> None:
        for protocol in protocols:
            if not protocol.ended.called:
                log.warn("worker {index} (pid {pid}) did not stop in {grace:g}s: SIGKILL",
                         index=protocol.index, pid=protocol.pid, grace=self.grace)
                _signal(protocol, "KILL")


def _signal(protocol: _WorkerProtocol, name: str) -> None:
    try:
        protocol.transport.signalProcess(name)
    except Exception:  # noqa: BLE001 -- it exited meanwhile (ProcessExitedAlready)
        pass


@implementer(IReadDescriptor)
class ParentWatch:
    """
    Reads a worker's standard input, a pipe from its supervisor; end-of-file (the
    supervisor exited, however) calls C{on_exit()} once.

    @param reactor: C{IReactorFDSet}.
    @param fd: the pipe's descriptor (0).
    @param on_exit: C{() -> None}.
    """

    def __init__(self, reactor: Any, fd: int, on_exit: Callable[[], Any]) -> None:
        self.reactor = reactor
        self.fd = fd
        self.on_exit = on_exit
        self.done = False

    def fileno(self) -> int:
        return self.fd

    def logPrefix(self) -> str:
        return "supervisor-pipe"

    def doRead(self) -> None:
        try:
            data = os.read(self.fd, 4096)
        except BlockingIOError:
            return None
        except OSError:
            data = b""
        if not data:
            self._gone()
        return None

    def _gone(self) -> None:
        if not self.done:
            self.stop()
            self.on_exit()

    def stop(self) -> None:
        """Stop watching (C{on_exit} is not called afterwards)."""
        if not self.done:
            self.done = True
            self.reactor.removeReader(self)

    def connectionLost(self, reason: Any) -> None:
        """The reactor saw the pipe hang up (epoll's C{EPOLLHUP} with no data left)."""
        self._gone()

    readConnectionLost = connectionLost


def watch_parent(reactor: Any, on_exit: Callable[[], Any], fd: int = 0) -> ParentWatch:
    """
    Call C{on_exit()} when the supervisor dies: watch descriptor C{fd} (the pipe the
    supervisor gave as standard input) for end-of-file.

    @return: the L{ParentWatch} (its C{stop()} ends the watch).
    """
    os.set_blocking(fd, False)
    watch = ParentWatch(reactor, fd, on_exit)
    reactor.addReader(watch)
    return watch


def stop_on_parent_exit(reactor: Any) -> ParentWatch:
    """A worker's L{watch_parent}: log, then stop the reactor (a graceful shutdown)."""

    ppid = os.getppid()

    def gone() -> None:
        log.warn("the supervisor (pid {ppid}) exited: stopping", ppid=ppid)
        if getattr(reactor, "running", False):
            reactor.stop()

    watch = watch_parent(reactor, gone)
    # a shutdown for another reason (SIGTERM) drops every reader: not the supervisor's exit
    reactor.addSystemEventTrigger("before", "shutdown", watch.stop)
    return watch


def skip_singleton_hooks(hooks: Any) -> list[str]:
    """
    In a worker above 0: make each L{SINGLETON_HOOKS} hook of C{hooks} (a server's
    C{PostStartHooks}) finish at once without running, so its C{/readyz} check still passes.

    @return: the names skipped.
    """
    skipped = []
    for service in list(hooks):
        if getattr(service, "name", None) in SINGLETON_HOOKS:
            service.hook = _nothing
            skipped.append(service.name)
    return skipped


async def _nothing() -> None:
    return None


def default_grace(options: dict) -> float:
    """Seconds a worker gets between SIGTERM and SIGKILL: its own graceful shutdown
    (C{--shutdown-delay-duration}, then up to C{--request-timeout} of draining) plus 10 s."""
    return float(options.get("shutdown-delay-duration") or 0) + \
        max(float(options.get("request-timeout") or 60), 1.0) + 10.0


__all__ = ["SINGLETON_HOOKS", "WorkerSupervisor", "ParentWatch", "watch_parent",
           "stop_on_parent_exit", "skip_singleton_hooks", "worker_argv", "passed_twistd_args",
           "default_grace"]
