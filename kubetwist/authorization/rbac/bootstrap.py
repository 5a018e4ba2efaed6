# -*- test-case-name: tests.registry.test_rbac_bootstrap -*-
"""
The bootstrap RBAC policy and its reconciliation: upstream C{plugin/pkg/auth/authorizer/rbac/
bootstrappolicy} (the objects) and C{pkg/registry/rbac/reconciliation} (C{computeReconciledRole},
C{computeReconciledRoleBinding}).

The objects are kube-apiserver v1.32's own, recorded from a running server by
C{tools/record_rbac_bootstrap.py} into C{bootstrap_policy.json} beside this module.

Reconciling an expected object with the stored one (both wire-form dicts) gives an operation:
C{"create"} (nothing stored), C{"none"}, C{"update"} (the stored object plus the expected
labels and annotations it lacks, the expected rules it does not cover, the aggregation
selectors and subjects it lacks), or C{"recreate"} (a binding whose C{roleRef} differs: delete
it and create the expected one).  A stored object annotated
C{rbac.authorization.kubernetes.io/autoupdate: "false"} is protected: C{"none"}.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Optional

from kubetwist.authorization.rbac.rules import covers

__all__ = [
    "AUTOUPDATE_ANNOTATION", "bootstrap_policy", "reconcile_binding", "reconcile_role",
]

#: Upstream C{rbacv1.AutoUpdateAnnotationKey}.
AUTOUPDATE_ANNOTATION = "rbac.authorization.kubernetes.io/autoupdate"

_POLICY_FILE = Path(__file__).with_name("bootstrap_policy.json")


@lru_cache(maxsize=1)
def _load() -> dict:
    with open(_POLICY_FILE, encoding="utf-8") as f:
        return json.load(f)


def bootstrap_policy() -> dict:
    """
    A fresh copy of the policy: C{{"clusterRoles": [...], "clusterRoleBindings": [...],
    "roles": [...], "roleBindings": [...]}}, each a list of wire-form objects.
    """
    return copy.deepcopy(_load())


def _merged(expected: Optional[dict], existing: Optional[dict]) -> dict:
    """Upstream C{merge(expected, existing)}: the union, the stored values winning."""
    out = dict(expected or {})
    out.update(existing or {})
    return out


def _merge_meta(result: dict, expected: dict, existing: dict) -> bool:
    """Add the expected labels and annotations to C{result}; whether anything changed."""
    changed = False
    meta = result.setdefault("metadata", {})
    for key in ("annotations", "labels"):
        merged = _merged((expected.get("metadata") or {}).get(key),
                         (existing.get("metadata") or {}).get(key))
        if merged != ((existing.get("metadata") or {}).get(key) or {}):
            changed = True
        if merged:
            meta[key] = merged
    return changed


def _protected(existing: dict) -> bool:
    return ((existing.get("metadata") or {}).get("annotations") or {}).get(
        AUTOUPDATE_ANNOTATION) == "false"


def _selectors(role: dict) -> Optional[list]:
    rule = role.get("aggregationRule")
    if rule is None:
        return None
    return list(rule.get("clusterRoleSelectors") or [])


def reconcile_role(existing: Optional[dict], expected: dict) -> tuple[str, dict]:
    """
    Upstream C{ReconcileRoleOptions.Run} with C{RemoveExtraPermissions: false} (what the
    bootstrap hook uses) for a Role or ClusterRole: C{(operation, object to write)}.
    """
    if existing is None:
        return "create", copy.deepcopy(expected)
    if _protected(existing):
        return "none", existing
    result = copy.deepcopy(existing)
    update = _merge_meta(result, expected, existing)
    _, missing = covers(existing.get("rules") or [], expected.get("rules") or [])
    if missing:
        result["rules"] = list(result.get("rules") or []) + missing
        update = True
    want, have = _selectors(expected), _selectors(existing)
    if want is None and have is not None:
        result.pop("aggregationRule", None)
        update = True
    elif want:
        lacking = [s for s in want if s not in (have or [])]
        if lacking:
            result["aggregationRule"] = {"clusterRoleSelectors": (have or []) + lacking}
            update = True
    return ("update" if update else "none"), result


def _subject_key(subject: dict) -> tuple:
    return (subject.get("apiGroup") or "", subject.get("kind") or "",
            subject.get("name") or "", subject.get("namespace") or "")


def reconcile_binding(existing: Optional[dict], expected: dict) -> tuple[str, dict]:
    """
    Upstream C{ReconcileRoleBindingOptions.Run} with C{RemoveExtraSubjects: false}: a
    missing binding is created, a different C{roleRef} recreates it, missing subjects are
    appended.
    """
    if existing is None:
        return "create", copy.deepcopy(expected)
    if _protected(existing):
        return "none", existing
    if (existing.get("roleRef") or {}) != (expected.get("roleRef") or {}):
        return "recreate", copy.deepcopy(expected)
    result = copy.deepcopy(existing)
    update = _merge_meta(result, expected, existing)
    have = {_subject_key(s) for s in existing.get("subjects") or []}
    missing = [s for s in expected.get("subjects") or [] if _subject_key(s) not in have]
    if missing:
        result["subjects"] = list(result.get("subjects") or []) + missing
        update = True
    return ("update" if update else "none"), result
