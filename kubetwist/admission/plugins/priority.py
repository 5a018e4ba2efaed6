# -*- test-case-name: tests.admission.test_plugins -*-
"""
The C{Priority} admission mutation of pods: upstream
C{k8s.io/kubernetes/plugin/pkg/admission/priority} (C{admitPod}).

On create, C{spec.priority} (and C{spec.preemptionPolicy}) are resolved from
C{spec.priorityClassName}, or from the global default PriorityClass, or default to
C{0}/C{PreemptLowerPriority}.  On update the stored values are carried over when the request
omits them.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Iterable, Optional

from zope.interface import implementer

from kubetwist.admission.interfaces import IMutationInterface, IValidationInterface
from kubetwist.runtime import errors
from kubetwist.runtime.errors import new_forbidden

__all__ = ["Priority", "mutate_pod", "SYSTEM_PRIORITY_CLASSES",
           "DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS"]

#: Upstream C{scheduling.DefaultPriorityWhenNoDefaultClassExists}.
DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS = 0

#: The PriorityClasses kube-apiserver bootstraps (C{scheduling.SystemPriorityClasses()}).
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "system-node-critical"}, "value": 2000001000,
        "preemptionPolicy": "PreemptLowerPriority",
        "description": "Used for system critical pods that must not be moved from their current "
                       "node.",
    },
    "system-cluster-critical": {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "system-cluster-critical"}, "value": 2000000000,
        "preemptionPolicy": "PreemptLowerPriority",
        "description": "Used for system critical pods that must run in the cluster, but can be "
                       "moved to another node if necessary.",
    },
}


def _forbidden_name(pod: dict, name: str) -> str:
    """Upstream C{admission.NewForbidden}'s name: the request name, else generateName, else
    Unknown."""
    meta = pod.get("metadata") or {}
    return name or meta.get("name") or meta.get("generateName") or "Unknown"


def mutate_pod(
    pod: dict,
    operation: str = "CREATE",
    old_pod: Optional[dict] = None,
    get_priority_class: Optional[Callable[[str], Optional[dict]]] = None,
    list_priority_classes: Optional[Callable[[], Iterable[dict]]] = None,
    name: str = "",
) -> None:
    """
    Resolve the priority of C{pod} (a v1 Pod dict) in place.

    @param operation: C{CREATE} or C{UPDATE} (others are ignored).
    @param old_pod: the stored pod on update.
    @param get_priority_class: C{name -> PriorityClass dict or None}; the two system classes
        are known without it.
    @param list_priority_classes: all PriorityClasses, to find the C{globalDefault} one (the
        lowest value wins when several are marked).
    @param name: the request's object name, for error messages.
    @raise kubetwist.runtime.errors.StatusError: 403 C{pods "x" is forbidden: no PriorityClass
        with name foo was found}, or when the request sets a C{priority} or
        C{preemptionPolicy} that differs from the computed one.
    """
    spec = pod.setdefault("spec", {})
    if operation == "UPDATE":
        ospec = (old_pod or {}).get("spec") or {}
        if spec.get("priority") is None and ospec.get("priority") is not None:
            spec["priority"] = ospec["priority"]
        if spec.get("preemptionPolicy") is None and ospec.get("preemptionPolicy") is not None:
            spec["preemptionPolicy"] = ospec["preemptionPolicy"]
        return
    if operation != "CREATE":
        return
    pc_name = spec.get("priorityClassName") or ""
    if not pc_name:
        default_pc = None
        for pc in (list_priority_classes() if list_priority_classes else []):
            if pc.get("globalDefault") and (default_pc is None
                                            or default_pc.get("value", 0) > pc.get("value", 0)):
                default_pc = pc
        if default_pc is not None:
            spec["priorityClassName"] = (default_pc.get("metadata") or {}).get("name", "")
            priority = default_pc.get("value", 0)
            preemption = default_pc.get("preemptionPolicy")
        else:
            priority = DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS
            preemption = "PreemptLowerPriority"
    else:
        pc = get_priority_class(pc_name) if get_priority_class else None
        if pc is None:
            pc = SYSTEM_PRIORITY_CLASSES.get(pc_name)
        if pc is None:
            raise new_forbidden("", "pods", _forbidden_name(pod, name),
                                f"no PriorityClass with name {pc_name} was found")
        priority = pc.get("value", 0)
        preemption = pc.get("preemptionPolicy")
    if spec.get("priority") is not None and spec["priority"] != priority:
        raise new_forbidden("", "pods", _forbidden_name(pod, name),
                            f"the integer value of priority ({spec['priority']}) must not be "
                            "provided in pod spec; "
                            f"priority admission controller computed {priority} from the given "
                            "PriorityClass name")
    spec["priority"] = priority
    if preemption is not None:
        if spec.get("preemptionPolicy") is not None and spec["preemptionPolicy"] != preemption:
            raise new_forbidden("", "pods", _forbidden_name(pod, name),
                                "the string value of PreemptionPolicy "
                                f"({spec['preemptionPolicy']}) must not be "
                                "provided in pod spec; priority admission controller computed "
                                f"{preemption} "
                                f"from the given PriorityClass name")
        spec["preemptionPolicy"] = preemption


@implementer(IMutationInterface, IValidationInterface)
class Priority:
    """
    The C{Priority} plugin (upstream C{plugin/pkg/admission/priority}): C{admit} resolves a
    created pod's priority (L{mutate_pod}); C{validate} allows one C{globalDefault}
    PriorityClass at most (C{validatePriorityClass}).
    """

    name = "Priority"

    def __init__(self, list_priority_classes: Callable[[], Awaitable[list[dict]]]) -> None:
        """
        @param list_priority_classes: every stored PriorityClass (upstream reads an
            informer's lister).
        """
        self.list_priority_classes = list_priority_classes

    def handles(self, operation: str) -> bool:
        """Creates and updates."""
        return operation in ("CREATE", "UPDATE")

    async def _by_name(self) -> dict[str, dict]:
        return {(pc.get("metadata") or {}).get("name", ""): pc
                for pc in await self.list_priority_classes()}

    async def admit(self, a: Any) -> None:
        if a.operation != "CREATE" or a.resource.resource != "pods" or a.resource.group \
                or a.subresource or a.object is None:
            return
        classes = await self._by_name()
        mutate_pod(a.object, get_priority_class=classes.get,
                   list_priority_classes=lambda: list(classes.values()))

    async def _default_class(self) -> dict | None:
        """Upstream C{getDefaultPriorityClass}: of the C{globalDefault} classes, the one with
        the lowest value (the first listed among equals)."""
        found: dict | None = None
        for pc in await self.list_priority_classes():
            if pc.get("globalDefault") and (
                    found is None or (found.get("value") or 0) > (pc.get("value") or 0)):
                found = pc
        return found

    async def validate(self, a: Any) -> None:
        """
        Refuse a second C{globalDefault} class: on create, or on an update of another class.

        @raise StatusError: 403 Forbidden (C{priorityclasses.scheduling.k8s.io "<name>" is
            forbidden: PriorityClass <default> is marked as default. Only one default can
            exist}).
        """
        if a.subresource or a.resource.resource != "priorityclasses" \
                or a.resource.group != "scheduling.k8s.io" or a.object is None:
            return
        if not a.object.get("globalDefault"):
            return
        default = await self._default_class()
        if default is None:
            return
        default_name = (default.get("metadata") or {}).get("name") or ""
        if a.operation == "CREATE" or default_name != a.name:
            raise errors.new_forbidden(
                "scheduling.k8s.io", "priorityclasses", a.name,
                f"PriorityClass {default_name} is marked as default. Only one default can exist")
