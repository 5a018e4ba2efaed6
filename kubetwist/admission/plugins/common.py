# -*- test-case-name: tests.admission.test_builtin -*-
"""
Helpers the built-in plugins share: upstream C{admission.NewForbidden}, C{admission.Handler}
and C{utilerrors.NewAggregate}'s text.
"""

from __future__ import annotations

from typing import Any, Iterable

from kubetwist.runtime import errors

__all__ = ["aggregate", "forbidden", "forbidden_name", "is_core"]


def forbidden_name(a: Any) -> str:
    """Upstream C{extractResourceName}: the request's name, else the object's name, else its
    C{generateName}, else C{Unknown}."""
    meta = (a.object or {}).get("metadata") or {} if isinstance(a.object, dict) else {}
    return a.name or meta.get("name") or meta.get("generateName") or "Unknown"


def forbidden(a: Any, message: str) -> errors.StatusError:
    """
    Upstream C{admission.NewForbidden(a, err)}: 403 C{<resource> "<name>" is forbidden:
    <message>} for the request's resource.
    """
    return errors.new_forbidden(a.resource.group, a.resource.resource, forbidden_name(a), message)


def aggregate(messages: Iterable[str]) -> str:
    """Upstream C{utilerrors.NewAggregate(errs).Error()}: one message as is, several as
    C{[a, b]} (duplicates once)."""
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def is_core(a: Any, resource: str, subresource: str = "") -> bool:
    """Whether C{a} is a request on the core group's C{resource} (and C{subresource})."""
    return (a.resource.group == "" and a.resource.resource == resource
            and a.subresource == subresource)
