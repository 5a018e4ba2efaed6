# -*- test-case-name: tests.server.test_genericapiserver -*-
"""
Health endpoints: upstream C{k8s.io/apiserver/pkg/server/healthz}.

C{/healthz}, C{/livez} and C{/readyz} each run a list of named checks; C{?verbose} lists them
(C{[+]ping ok}, C{[-]etcd failed: reason withheld}), C{?exclude=name} skips one, and
C{/<endpoint>/<check>} runs one check alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional


@dataclass
class HealthCheck:
    """A named check: C{check()} returns (or awaits to) C{None} when healthy, raises otherwise."""

    name: str
    check: Callable[[], Any]


async def run_check(check: HealthCheck) -> Optional[str]:
    """Run one check; fire with C{None} if it passed, else the failure text."""
    try:
        result = check.check()
        if hasattr(result, "__await__") or hasattr(result, "addCallbacks"):
            await result
    except Exception as e:  # a failing check is a value here, not an error
        return str(e) or type(e).__name__
    return None


async def render_health(endpoint: str, checks: list[HealthCheck], sub: str,
                        query: dict[str, list[str]]) -> tuple[int, bytes]:
    """
    Answer C{GET /<endpoint>[/<sub>]}: C{(code, body)} with upstream's texts.

    @param endpoint: C{healthz}, C{livez} or C{readyz}.
    """
    if sub:
        for c in checks:
            if c.name == sub:
                failure = await run_check(c)
                if failure is None:
                    return 200, b"ok"
                return 500, f"internal server error: {failure}\n".encode()
        return 404, b"404 page not found\n"
    exclude = set()
    for e in query.get("exclude", []):
        exclude.update(x.strip() for x in e.split(","))
    verbose = "verbose" in query
    lines = []
    failed = False
    for c in checks:
        if c.name in exclude:
            lines.append(f"[+]{c.name} excluded: ok")
            continue
        failure = await run_check(c)
        if failure is None:
            lines.append(f"[+]{c.name} ok")
        else:
            failed = True
            lines.append(f"[-]{c.name} failed: reason withheld")
    for e in sorted(exclude - {c.name for c in checks}):
        lines.append(f"warn: some health checks cannot be excluded: no matches for \"{e}\"")
    if failed:
        return 500, ("\n".join(lines) + f"\n{endpoint} check failed\n").encode()
    if verbose:
        return 200, ("\n".join(lines) + f"\n{endpoint} check passed\n").encode()
    return 200, b"ok"


def storage_health_check(storage: Any, name: str) -> Callable[[], Any]:
    """
    The C{etcd} health check over C{storage.check_health()} (upstream's etcd probe).  A
    failure keeps its reason out of the C{/healthz} body (C{[-]etcd failed: reason withheld})
    and logs it instead, as upstream's healthz handler does.
    """
    from twisted.internet import defer
    from twisted.logger import Logger

    log = Logger()

    def check() -> Any:
        probe = getattr(storage, "check_health", None)
        if probe is None:
            return None

        def failed(failure: Any) -> Any:
            log.warn("{check} check failed: {reason}", check=name,
                     reason=failure.getErrorMessage())
            return failure

        return defer.maybeDeferred(probe).addErrback(failed)

    return check


def install_generic_checks(server: Any, storage: Any) -> None:
    """
    Upstream's generic checks of a server over C{storage}: C{ping}, C{log} and C{etcd} first
    among the health checks, C{etcd-readiness} among the readiness checks (the main server
    and extension servers built with L{kubetwist.extension} alike).
    """
    server.health_checks[:0] = [
        HealthCheck("ping", lambda: None),
        HealthCheck("log", lambda: None),
        HealthCheck("etcd", storage_health_check(storage, "etcd")),
    ]
    server.readiness_checks.append(
        HealthCheck("etcd-readiness", storage_health_check(storage, "etcd-readiness")))
