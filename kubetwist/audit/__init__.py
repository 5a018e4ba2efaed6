# -*- test-case-name: tests.audit.test_policy -*-
"""
Auditing, as upstream's C{k8s.io/apiserver/pkg/audit} and its C{log} and C{webhook} backend
plugins: L{policy} (the C{--audit-policy-file}), L{event} (C{audit.k8s.io/v1 Event}s and the
per-request L{AuditContext <event.AuditContext>}), L{backends}.  The filter that records the
events is C{kubetwist/server/filters/audit.py}.

L{from_options} builds the L{AuditConfig} of the C{--audit-*} flags (L{None} when no policy
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


def validate_options(o: Any) -> Optional[str]:
    """
    Upstream C{AuditOptions.Validate} and the policy load of C{ApplyTo}: the first problem
    of the C{--audit-*} flags as one line (C{loading audit policy file: ...},
    C{initializing audit webhook: invalid configuration: ...}), or L{None}.
    """
    for prefix in ("log", "webhook"):
        mode = o.get(f"audit-{prefix}-mode", "")
        if mode and mode not in MODES:
            return (f'invalid audit {prefix} mode {mode}, allowed modes are '
                    f'"{MODE_BATCH},{MODE_BLOCKING},blocking-strict"')
    fmt = o.get("audit-log-format", FORMAT_JSON)
    if fmt not in (FORMAT_JSON, FORMAT_LEGACY):
        return (f'invalid audit log format {fmt}, allowed formats are '
                f'"{FORMAT_LEGACY},{FORMAT_JSON}"')
    for key in ("audit-log-maxage", "audit-log-maxbackup", "audit-log-maxsize"):
        if int(o.get(key) or 0) < 0:
            return f"--{key} {o[key]} can't be a negative number"
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
    already in seconds); the caller starts the backend (C{run()}); L{None} without a
    policy file or without a backend.

    @raise PolicyError: the policy file changed into a bad one since validation.
    @raise KubeconfigError: a bad C{--audit-webhook-config-file}.
    """
    if not o.get("audit-policy-file"):
        return None
    backends: list[Any] = []
    if o.get("audit-log-path"):
        backends.append(LogBackend.from_path(
            o["audit-log-path"], int(o.get("audit-log-maxsize") or 0),
            int(o.get("audit-log-maxbackup") or 0), int(o.get("audit-log-maxage") or 0),
            _flag(o.get("audit-log-compress")), fmt=o.get("audit-log-format") or FORMAT_JSON,
            mode=o.get("audit-log-mode") or MODE_BLOCKING,
            buffer_size=int(o.get("audit-log-batch-buffer-size") or 10000)))
    if o.get("audit-webhook-config-file"):
        backends.append(WebhookBackend(
            kubeconfig_poster(o["audit-webhook-config-file"], reactor), reactor,
            mode=o.get("audit-webhook-mode") or MODE_BATCH,
            buffer_size=int(o.get("audit-webhook-batch-buffer-size") or 10000),
            max_batch_size=int(o.get("audit-webhook-batch-max-size") or 400),
            max_batch_wait=float(o.get("audit-webhook-batch-max-wait", 30.0)),
            throttle_enable=_flag(o.get("audit-webhook-batch-throttle-enable", "true")),
            throttle_qps=float(o.get("audit-webhook-batch-throttle-qps") or 10),
            throttle_burst=int(o.get("audit-webhook-batch-throttle-burst") or 15),
            initial_backoff=float(o.get("audit-webhook-initial-backoff", 10.0))))
    if not backends:
        return None
    backend = backends[0] if len(backends) == 1 else UnionBackend(backends)
    return AuditConfig(load_policy_file(o["audit-policy-file"]), backend)


def _flag(value: Any) -> bool:
    return str(value).lower() in ("true", "1", "yes")

