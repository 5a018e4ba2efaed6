"""kubetwist.server.workers: the supervisor of C{--workers N} on a fake process reactor."""

from __future__ import annotations

import os
from typing import Any

from twisted.internet.error import ProcessDone, ProcessTerminated
from twisted.internet.task import Clock
from twisted.python.failure import Failure
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.server import workers
from kubetwist.server.hooks import PostStartHooks


class FakeTransport:
    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.signals: list[str] = []

    def signalProcess(self, name: str) -> None:
        self.signals.append(name)


class FakeProcessReactor(Clock):
    """A Clock whose C{spawnProcess} records each call and connects a fake transport."""

    def __init__(self) -> None:
        super().__init__()
        self.spawned: list[dict] = []
        self.readers: list[Any] = []
        self.triggers: list[tuple] = []
        self.next_pid = 100

    def spawnProcess(self, protocol: Any, executable: str, args: list, env: dict,
                     path: str, childFDs: dict) -> Any:
        self.next_pid += 1
        transport = FakeTransport(self.next_pid)
        protocol.makeConnection(transport)
        self.spawned.append({"protocol": protocol, "executable": executable, "args": args,
                             "env": env, "path": path, "childFDs": childFDs})
        return transport

    def addReader(self, reader: Any) -> None:
        self.readers.append(reader)

    def removeReader(self, reader: Any) -> None:
        self.readers.remove(reader)

    def addSystemEventTrigger(self, phase: str, event: str, f: Any, *args: Any) -> None:
        self.triggers.append((phase, event, f))


def _exit(protocol: Any, code: int = 1) -> None:
    reason = ProcessDone(0) if code == 0 else ProcessTerminated(exitCode=code)
    protocol.processEnded(Failure(reason))


def _killed(protocol: Any, sig: int) -> None:
    protocol.processEnded(Failure(ProcessTerminated(signal=sig)))


class ArgvTests(SynchronousTestCase):
    def test_worker_argv(self) -> None:
        """A worker runs twistd in the foreground, no pid file, the same kubeapi arguments,
        then its own --workers and --worker-index (the later flags win)."""
        self.assertEqual(
            workers.worker_argv(["--etcd-servers=http://e:2379", "--workers=3"], 2, 3,
                                ["--reactor=epoll"]),
            ["-c", workers.TWISTD, "-n", "--pidfile=", "--reactor=epoll", "kubeapi",
             "--etcd-servers=http://e:2379", "--workers=3", "--workers=3", "--worker-index=2"])

    def test_passed_twistd_args(self) -> None:
        """Only the reactor choice passes to the workers; daemonising, pid and log files stay
        the supervisor's; without a C{kubeapi} word (not twistd) nothing passes."""
        self.assertEqual(workers.passed_twistd_args(
            ["twistd", "--logfile=x.log", "-r", "poll", "--pidfile=p", "kubeapi", "-r", "x"]),
            ["--reactor=poll"])
        self.assertEqual(workers.passed_twistd_args(
            ["twistd", "-n", "--reactor=epoll", "kubeapi"]), ["--reactor=epoll"])
        self.assertEqual(workers.passed_twistd_args(["trial", "tests"]), [])

    def test_default_grace(self) -> None:
        """The grace period covers the worker's own shutdown delay and drain, plus 10 s."""
        self.assertEqual(workers.default_grace({"shutdown-delay-duration": 5.0,
                                                "request-timeout": 60.0}), 75.0)
        self.assertEqual(workers.default_grace({}), 70.0)


class SupervisorTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.reactor = FakeProcessReactor()
        self.supervisor = workers.WorkerSupervisor(
            self.reactor, ["--etcd-servers=http://e:2379"], 3, executable="/py",
            env={"PATH": "/bin", "NOTIFY_SOCKET": "/run/n", "WATCHDOG_USEC": "1000",
                 "WATCHDOG_PID": "1"}, grace=10.0, path="/work")
        self.supervisor.startService()

    def test_spawns_the_others(self) -> None:
        """Workers 1 and 2 start with the interpreter, the argv, a pipe as standard input,
        the supervisor's own output and error, and no systemd variables."""
        self.assertEqual(len(self.reactor.spawned), 2)
        for index, call in enumerate(self.reactor.spawned, start=1):
            self.assertEqual(call["executable"], "/py")
            self.assertEqual(call["args"], ["/py"] + workers.worker_argv(
                ["--etcd-servers=http://e:2379"], index, 3))
            self.assertEqual(call["env"], {"PATH": "/bin"})
            self.assertEqual(call["childFDs"], {0: "w", 1: 1, 2: 2})
            self.assertEqual(call["path"], "/work")
        self.assertEqual(sorted(self.supervisor.workers), [1, 2])

    def test_restart_with_backoff(self) -> None:
        """A worker that exits is started again after 1 s, then 2 s, 4 s ... up to 30 s
        while it keeps exiting quickly; one that ran 30 s is restarted after 1 s again."""
        delays = []
        for _ in range(7):
            _exit(self.supervisor.workers[1])
            self.assertNotIn(1, self.supervisor.workers)
            spawned = len(self.reactor.spawned)
            waited = 0.0
            while len(self.reactor.spawned) == spawned:
                self.reactor.advance(0.5)
                waited += 0.5
            delays.append(waited)
        self.assertEqual(delays, [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0])
        self.reactor.advance(30)
        _killed(self.supervisor.workers[1], 9)
        self.reactor.advance(1)
        self.assertIn(1, self.supervisor.workers)
        self.assertEqual(self.supervisor.restarts, 8)
        self.assertEqual(self.reactor.spawned[-1]["args"][-1], "--worker-index=1")

    def test_stop_terminates_then_kills(self) -> None:
        """Stop: SIGTERM to each worker; the one still running after the grace period gets
        SIGKILL; the stop fires once both have exited, and nothing is restarted."""
        one, two = self.supervisor.workers[1], self.supervisor.workers[2]
        d = self.supervisor.stopService()
        self.assertEqual((one.transport.signals, two.transport.signals), (["TERM"], ["TERM"]))
        _exit(one, 0)
        self.assertNoResult(d)
        self.reactor.advance(10)
        self.assertEqual((one.transport.signals, two.transport.signals),
                         (["TERM"], ["TERM", "KILL"]))
        _killed(two, 9)
        self.successResultOf(d)
        self.reactor.advance(60)
        self.assertEqual(len(self.reactor.spawned), 2)

    def test_stop_cancels_a_pending_restart(self) -> None:
        """A worker waiting for its restart is not started after the stop."""
        _exit(self.supervisor.workers[1])
        d = self.supervisor.stopService()
        _exit(self.supervisor.workers[2], 0)
        self.successResultOf(d)
        self.reactor.advance(60)
        self.assertEqual(len(self.reactor.spawned), 2)
        self.assertEqual(self.reactor.getDelayedCalls(), [])


class ParentWatchTests(SynchronousTestCase):
    def test_end_of_file_calls_once(self) -> None:
        """The pipe's end-of-file (the supervisor gone) calls on_exit once and stops the
        watch; a hang-up reported by the reactor afterwards changes nothing."""
        reactor = FakeProcessReactor()
        r, w = os.pipe()
        self.addCleanup(os.close, r)
        calls = []
        watch = workers.watch_parent(reactor, lambda: calls.append(1), fd=r)
        self.assertEqual(reactor.readers, [watch])
        watch.doRead()  # nothing to read yet: still watching
        self.assertEqual((calls, reactor.readers), ([], [watch]))
        os.write(w, b"x")
        watch.doRead()
        self.assertEqual(calls, [])
        os.close(w)
        watch.doRead()
        self.assertEqual((calls, reactor.readers), ([1], []))
        watch.connectionLost(None)
        self.assertEqual(calls, [1])

    def test_hang_up(self) -> None:
        """epoll reports a closed pipe as a hang-up (connectionLost): on_exit is called."""
        reactor = FakeProcessReactor()
        r, w = os.pipe()
        self.addCleanup(os.close, r)
        os.close(w)
        calls = []
        watch = workers.watch_parent(reactor, lambda: calls.append(1), fd=r)
        watch.connectionLost(None)
        self.assertEqual(calls, [1])

    def test_shutdown_is_not_the_supervisor_exiting(self) -> None:
        """A worker stopping for another reason stops the watch before the reactor drops
        its readers, so it does not report the supervisor gone."""
        reactor = FakeProcessReactor()
        r, w = os.pipe()
        self.addCleanup(os.close, r)
        self.addCleanup(os.close, w)
        self.patch(os, "set_blocking", lambda fd, flag: None)
        real = workers.watch_parent
        self.patch(workers, "watch_parent", lambda reactor, f: real(reactor, f, fd=r))
        watch = workers.stop_on_parent_exit(reactor)
        [(phase, event, stop)] = reactor.triggers
        self.assertEqual((phase, event), ("before", "shutdown"))
        stop()
        self.assertEqual(reactor.readers, [])
        watch.connectionLost(None)
        self.assertTrue(watch.done)


class SingletonHookTests(SynchronousTestCase):
    def test_skipped_hooks_finish_without_running(self) -> None:
        """In a worker above 0 the kube-controller-manager controllers' hooks finish at once
        without running (their readyz checks pass); the others run."""
        clock = Clock()
        hooks = PostStartHooks()
        ran = []

        async def gc() -> None:
            ran.append("gc")

        async def bootstrap() -> None:
            ran.append("bootstrap")

        hooks.add_hook("start-garbage-collector", gc, clock)
        hooks.add_hook("bootstrap-controller", bootstrap, clock)
        self.assertEqual(workers.skip_singleton_hooks(hooks), ["start-garbage-collector"])
        hooks.startService()
        self.assertEqual(ran, ["bootstrap"])
        self.assertTrue(all(h.finished for h in hooks))


class _Server:
    def __init__(self, hooks: PostStartHooks) -> None:
        self.hooks = hooks


class _Front:
    def __init__(self, *servers: _Server) -> None:
        self.servers = servers

    def chain(self) -> tuple:
        return self.servers


class _Port:
    def getHost(self) -> str:
        return "127.0.0.1:6443"

    def stopListening(self) -> Any:
        from twisted.internet.defer import succeed

        return succeed(None)


class ServiceWiringTests(SynchronousTestCase):
    """How L{KubeAPIService} uses the supervisor once it listens, and stops it."""

    def service(self, index: int, count: int) -> Any:
        from kubetwist.app import KubeAPIService

        reactor = FakeProcessReactor()
        service = KubeAPIService(reactor, {
            "workers": count, "worker-index": index, "argv": ["--etcd-servers=http://e:1"],
            "request-timeout": 60.0, "shutdown-delay-duration": 0.0}, "v1.32.0")
        hooks = PostStartHooks()
        self.ran: list[str] = []

        async def gc() -> None:
            self.ran.append("gc")

        async def informers() -> None:
            self.ran.append("informers")

        hooks.add_hook("start-garbage-collector", gc, reactor)
        hooks.add_hook("start-kube-aggregator-informers", informers, reactor)
        service.front = _Front(_Server(hooks))
        service.running = True  # the hooks start as they join it
        return service

    def test_worker_0_starts_and_stops_the_others(self) -> None:
        """Worker 0 of three starts workers 1 and 2 once it listens, runs every hook, and
        its stop sends the workers SIGTERM and waits for them."""
        service = self.service(0, 3)
        service._listening(_Port())
        self.assertEqual(self.ran, ["gc", "informers"])
        supervisor = service.supervisor
        self.assertEqual(
            [call["args"][-1] for call in service.reactor.spawned],
            ["--worker-index=1", "--worker-index=2"])
        self.assertEqual(supervisor.grace, 70.0)
        d = service.stopService()
        for protocol in list(supervisor.workers.values()):
            self.assertEqual(protocol.transport.signals, ["TERM"])
        self.assertNoResult(d)
        for protocol in list(supervisor.workers.values()):
            _exit(protocol, 0)
        self.successResultOf(d)

    def test_one_worker_starts_nobody(self) -> None:
        """--workers=1: no supervisor."""
        service = self.service(0, 1)
        service._listening(_Port())
        self.assertEqual(service.reactor.spawned, [])
        self.assertIsNone(getattr(service, "supervisor", None))

    def test_other_workers_skip_the_singletons(self) -> None:
        """Worker 1 runs no kube-controller-manager controller and starts no worker."""
        service = self.service(1, 3)
        service._listening(_Port())
        self.assertEqual(self.ran, ["informers"])
        self.assertEqual(service.reactor.spawned, [])
