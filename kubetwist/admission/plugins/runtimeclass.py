# -*- test-case-name: tests.admission.test_builtin -*-
"""
The C{RuntimeClass} plugin: upstream C{plugin/pkg/admission/runtimeclass}.  A pod created with
C{spec.runtimeClassName} gets the class's C{overhead.podFixed} as C{spec.overhead} and its
C{scheduling} node selector and tolerations merged into its own; validation refuses a pod whose
overhead differs from its class's, or that has an overhead without a class defining one.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Optional

from zope.interface import implementer

from kubetwist.admission.interfaces import IMutationInterface, IValidationInterface
from kubetwist.admission.plugins.common import forbidden, is_core
from kubetwist.runtime import errors
from kubetwist.runtime.quantity import QuantityError, parse_quantity

__all__ = ["RuntimeClass", "merge_tolerations"]


def _toleration_seconds(t: dict) -> Optional[int]:
    return t.get("tolerationSeconds")


def _is_superset(ss: dict, t: dict) -> bool:
    """Upstream C{isSuperset}: whether toleration C{ss} tolerates everything C{t} does."""
    if ss == t:
        return True
    if t.get("key", "") != ss.get("key", "") and \
            (ss.get("key", "") != "" or ss.get("operator") != "Exists"):
        return False
    if t.get("effect", "") != ss.get("effect", "") and ss.get("effect", "") != "":
        return False
    if ss.get("effect") == "NoExecute" and _toleration_seconds(ss) is not None:
        if _toleration_seconds(t) is None or t["tolerationSeconds"] > ss["tolerationSeconds"]:
            return False
    op = ss.get("operator", "")
    if op in ("Equal", ""):
        return t.get("operator") == "Equal" and t.get("value", "") == ss.get("value", "")
    return op == "Exists"


def merge_tolerations(first: list[dict], second: list[dict]) -> list[dict]:
    """Upstream C{tolerations.MergeTolerations}: both lists, without the tolerations another
    one already covers (of two equal ones the first stays)."""
    every = [*first, *second]
    merged: list[dict] = []
    for i, t in enumerate(every):
        if any(_is_superset(m, t) for m in merged):
            continue
        if any(t != t2 and _is_superset(t2, t) for t2 in every[i + 1:]):
            continue
        merged.append(t)
    return merged


def _same_resources(a: Optional[dict], b: Optional[dict]) -> bool:
    """Upstream C{apiequality.Semantic.DeepEqual} of two ResourceLists (quantities by value;
    nil and empty differ, as reflect does)."""
    if a is None or b is None:
        return a is None and b is None
    if set(a) != set(b):
        return False
    try:
        return all(parse_quantity(a[k]).cmp(parse_quantity(b[k])) == 0 for k in a)
    except QuantityError:
        return a == b


@implementer(IMutationInterface, IValidationInterface)
class RuntimeClass:
    """
    @ivar get_class: C{name -> coroutine of RuntimeClass or None}.
    """

    name = "RuntimeClass"

    def __init__(self, get_class: Callable[[str], Awaitable[Optional[dict]]]) -> None:
        self.get_class = get_class

    def handles(self, operation: str) -> bool:
        return operation == "CREATE"

    async def _prepare(self, a: Any) -> Optional[tuple[dict, Optional[dict]]]:
        if not is_core(a, "pods"):
            return None
        pod = a.object
        if not isinstance(pod, dict):
            raise errors.new_bad_request(
                "Resource was marked with kind Pod but was unable to be converted")
        name = (pod.get("spec") or {}).get("runtimeClassName")
        if name is None:
            return pod, None
        rc = await self.get_class(name)
        if rc is None:
            raise forbidden(a, f'pod rejected: RuntimeClass "{name}" not found')
        return pod, rc

    async def admit(self, a: Any) -> None:
        """
        @raise StatusError: 403 C{pod rejected: RuntimeClass "x" not found}, C{pod rejected:
            Pod's Overhead doesn't match RuntimeClass's defined Overhead}, C{conflict:
            runtimeClass.scheduling.nodeSelector[k] = v; pod.spec.nodeSelector[k] = w}.
        """
        prepared = await self._prepare(a)
        if prepared is None or prepared[1] is None:
            return
        pod, rc = prepared
        spec = pod.setdefault("spec", {})
        fixed = (rc.get("overhead") or {}).get("podFixed")
        if rc.get("overhead") is not None:
            if spec.get("overhead") and not _same_resources(fixed, spec.get("overhead")):
                raise forbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's "
                                   "defined Overhead")
            if fixed is not None:
                spec["overhead"] = dict(fixed)
            else:
                spec.pop("overhead", None)
        scheduling = rc.get("scheduling")
        if scheduling is None:
            return
        runtime_selector = scheduling.get("nodeSelector") or {}
        selector = spec.get("nodeSelector")
        if selector is None:
            selector = dict(runtime_selector) if runtime_selector else None
        else:
            for key in sorted(runtime_selector):
                value = runtime_selector[key]
                if key in selector and selector[key] != value:
                    raise forbidden(a, f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = "
                                       f"{value}; pod.spec.nodeSelector[{key}] = {selector[key]}")
                selector[key] = value
        if selector is not None:
            spec["nodeSelector"] = selector
        merged = merge_tolerations(spec.get("tolerations") or [],
                                   scheduling.get("tolerations") or [])
        if merged:
            spec["tolerations"] = merged

    async def validate(self, a: Any) -> None:
        """@raise StatusError: 403 C{pod rejected: Pod's Overhead doesn't match RuntimeClass's
        defined Overhead}, C{pod rejected: Pod Overhead set without corresponding
        RuntimeClass defined Overhead}."""
        prepared = await self._prepare(a)
        if prepared is None:
            return
        pod, rc = prepared
        overhead = (pod.get("spec") or {}).get("overhead")
        if rc is not None and rc.get("overhead") is not None:
            if not _same_resources(rc["overhead"].get("podFixed"), overhead):
                raise forbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's "
                                   "defined Overhead")
        elif overhead is not None:
            raise forbidden(a, "pod rejected: Pod Overhead set without corresponding "
                               "RuntimeClass defined Overhead")
