# -*- test-case-name: tests.audit.test_policy -*-
"""
Auditing, as upstream's C{k8s.io/apiserver/pkg/audit} and its C{log} and C{webhook} backend
plugins: L{policy} (the C{--audit-policy-file}), L{event} (C{audit.k8s.io/v1 Event}s and the
per-request L{AuditContext <event.AuditContext>}), L{backends}.  The filter that records the
events is C{kubetwist/server/filters/audit.py}.

L{from_options} builds the L{AuditConfig} of the C{--audit-*} flags (C{None} when no policy
file or no backend is given: no auditing, as upstream).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from kubetwist.audit.backends import (
    FORMAT_JSON,
    FORMAT_LEGACY,
    MODE_BATCH,
    MODE_BLOCKING,
    MODES,
    KubeconfigError,
    LogBackend,
    TruncatingBackend,
    UnionBackend,
    WebhookBackend,
    kubeconfig_poster,
    load_webhook_kubeconfig,
)
from kubetwist.audit.policy import Policy, PolicyError, load_policy_file

__all__ = ["AuditConfig", "KubeconfigError", "Policy", "PolicyError", "from_options",
           "validate_options"]


@dataclass
class AuditConfig:
    """
    What the audit filters need.

    @ivar policy: the L{Policy}.
    @ivar backend: an object with C{process_events(list of Event dicts) -> bool}, C{run()}
        and C{shutdown()}.
    """

    policy: Policy
    backend: Any


def _backend_errors(o: Any, plugin: str) -> list[str]:
    """Upstream C{validateBackendBatchOptions} and C{AuditTruncateOptions.Validate} of the
    C{log} or C{webhook} backend."""
    errs: list[str] = []
    mode = o.get(f"audit-{plugin}-mode") or (MODE_BLOCKING if plugin == "log" else MODE_BATCH)
    if mode not in MODES:
        errs.append(f'invalid audit {plugin} mode {mode}, allowed modes are '
                    f'"{MODE_BATCH},{MODE_BLOCKING},blocking-strict"')
    elif mode == MODE_BATCH:
        buffer = int(o.get(f"audit-{plugin}-batch-buffer-size", 10000))
        size = int(o.get(f"audit-{plugin}-batch-max-size", 400 if plugin == "webhook" else 1))
        if buffer <= 0:
            errs.append(f"invalid audit batch {plugin} buffer size {buffer}, must be a positive "
                        "number")
        elif size <= 0:
            errs.append(f"invalid audit batch {plugin} max batch size {size}, must be a positive "
                        "number")
        elif plugin == "webhook" and _flag(o.get("audit-webhook-batch-throttle-enable", "true")):
            qps = float(o.get("audit-webhook-batch-throttle-qps", 10))
            burst = int(o.get("audit-webhook-batch-throttle-burst", 15))
            if qps <= 0:
                errs.append(f"invalid audit batch {plugin} throttle QPS {qps:g}, must be a "
                            "positive number")
            elif burst <= 0:
                errs.append(f"invalid audit batch {plugin} throttle burst {burst}, must be a "
                            "positive number")
    event = int(o.get(f"audit-{plugin}-truncate-max-event-size", 102400))
    batch = int(o.get(f"audit-{plugin}-truncate-max-batch-size", 10485760))
    if event <= 0:
        errs.append(f"invalid audit truncate {plugin} max event size {event}, must be a "
                    "positive number")
    elif batch < event:
        errs.append(f"invalid audit truncate {plugin} max batch size {batch}, must be greater "
                    f"than max event size ({event})")
    return errs


def validate_options(o: Any) -> Optional[str]:
    """
    Upstream C{AuditOptions.Validate} (each backend's options checked only when the backend is
    on: C{--audit-log-path}, C{--audit-webhook-config-file}; several errors as C{[a, b]}),
    then the policy load and the webhook set-up of C{ApplyTo}: the problem of the C{--audit-*}
    flags as one line (C{loading audit policy file: ...}, C{initializing audit webhook:
    invalid configuration: ...}), or C{None}.
    """
    errs: list[str] = []
    if o.get("audit-log-path"):
        errs.extend(_backend_errors(o, "log"))
        fmt = o.get("audit-log-format") or FORMAT_JSON
        if fmt not in (FORMAT_JSON, FORMAT_LEGACY):
            errs.append(f'invalid audit log format {fmt}, allowed formats are '
                        f'"{FORMAT_LEGACY},{FORMAT_JSON}"')
        for key in ("audit-log-maxage", "audit-log-maxbackup", "audit-log-maxsize"):
            if int(o.get(key) or 0) < 0:
                errs.append(f"--{key} {o[key]} can't be a negative number")
    if o.get("audit-webhook-config-file"):
        errs.extend(_backend_errors(o, "webhook"))
    if errs:
        return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
    if o.get("audit-policy-file"):
        try:
            load_policy_file(o["audit-policy-file"])
        except PolicyError as e:
            return f"loading audit policy file: {e}"
    if o.get("audit-webhook-config-file"):
        try:
            load_webhook_kubeconfig(o["audit-webhook-config-file"])
        except KubeconfigError as e:
            return f"initializing audit webhook: {e}"
    return None


def from_options(o: Any, reactor: Any) -> Optional[AuditConfig]:
    """
    The L{AuditConfig} of validated C{--audit-*} options (see L{validate_options}; durations
    already in seconds); the caller starts the backend (C{run()}); C{None} without a
    policy file or without a backend.

    @raise PolicyError: the policy file changed into a bad one since validation.
    @raise KubeconfigError: a bad C{--audit-webhook-config-file}.
    """
    if not o.get("audit-policy-file"):
        return None
    backends: list[Any] = []
    if o.get("audit-log-path"):
        backends.append(_truncating(o, "log", LogBackend.from_path(
            o["audit-log-path"], int(o.get("audit-log-maxsize") or 0),
            int(o.get("audit-log-maxbackup") or 0), int(o.get("audit-log-maxage") or 0),
            _flag(o.get("audit-log-compress")), fmt=o.get("audit-log-format") or FORMAT_JSON,
            mode=o.get("audit-log-mode") or MODE_BLOCKING,
            buffer_size=int(o.get("audit-log-batch-buffer-size") or 10000))))
    if o.get("audit-webhook-config-file"):
        backends.append(_truncating(o, "webhook", WebhookBackend(
            kubeconfig_poster(o["audit-webhook-config-file"], reactor), reactor,
            mode=o.get("audit-webhook-mode") or MODE_BATCH,
            buffer_size=int(o.get("audit-webhook-batch-buffer-size") or 10000),
            max_batch_size=int(o.get("audit-webhook-batch-max-size") or 400),
            max_batch_wait=float(o.get("audit-webhook-batch-max-wait", 30.0)),
            throttle_enable=_flag(o.get("audit-webhook-batch-throttle-enable", "true")),
            throttle_qps=float(o.get("audit-webhook-batch-throttle-qps") or 10),
            throttle_burst=int(o.get("audit-webhook-batch-throttle-burst") or 15),
            initial_backoff=float(o.get("audit-webhook-initial-backoff", 10.0)))))
    if not backends:
        return None
    backend = backends[0] if len(backends) == 1 else UnionBackend(backends)
    return AuditConfig(load_policy_file(o["audit-policy-file"]), backend)


def _truncating(o: Any, prefix: str, backend: Any) -> Any:
    """C{backend} behind upstream's truncate plugin when C{--audit-<prefix>-truncate-enabled}."""
    if not _flag(o.get(f"audit-{prefix}-truncate-enabled", "false")):
        return backend
    return TruncatingBackend(
        backend, int(o.get(f"audit-{prefix}-truncate-max-event-size") or 102400),
        int(o.get(f"audit-{prefix}-truncate-max-batch-size") or 10485760))


def _flag(value: Any) -> bool:
    return str(value).lower() in ("true", "1", "yes")

