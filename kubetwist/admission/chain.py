# -*- test-case-name: tests.admission.test_interfaces -*-
"""
The admission chain: upstream C{k8s.io/apiserver/pkg/admission} (C{chain.go}).

The chain runs, in order, C{admit} of every plugin that provides
L{IMutationInterface <kubetwist.admission.interfaces.IMutationInterface>} and handles the
operation; then (after the strategy's validation) C{validate} of every plugin that provides
L{IValidationInterface <kubetwist.admission.interfaces.IValidationInterface>}.  An object that
declares no admission interface at all is taken by its methods (an C{admit} makes it mutating,
a C{validate} validating), so a test double or a small step may be a plain object.  The plugins
are the ones C{--enable-admission-plugins} / C{--disable-admission-plugins} select (see
L{kubetwist.admission.registry}), followed by kubetwist's internal steps (not plugins: work
upstream's strategies do with the request context, which kubetwist's strategies do not see).
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Optional, Sequence

from kubetwist.admission.interfaces import (
    Attributes,
    GroupVersionKind,
    IAdmissionPlugin,
    IMutationInterface,
    IValidationInterface,
)

__all__ = ["AdmissionChain", "Attributes", "RequestAdmission"]

#: C{(operation, obj, old) -> Awaitable[None]}: one phase bound to one request.
Phase = Callable[[str, Optional[dict], Optional[dict]], Awaitable[None]]


def _has(step: Any, interface: Any, method: str) -> bool:
    """Whether C{step} takes part in a phase: it provides C{interface}, or it declares no
    admission interface and has the phase's C{method}."""
    if interface.providedBy(step):
        return True
    return not IAdmissionPlugin.providedBy(step) and callable(getattr(step, method, None))


async def _settled(result: Any) -> None:
    """Wait for a step's Deferred or coroutine (a plain return value needs no wait)."""
    if inspect.isawaitable(result):
        await result


@dataclass
class RequestAdmission:
    """
    The chain bound to one request: the two phases the registry's Store calls
    (C{mutate(operation, obj, old)}, C{validate(operation, obj, old)}), and C{connect} for
    the connect subresources.
    """

    mutate: Phase
    validate: Phase
    #: C{(options) -> Awaitable[None]}: both phases of a CONNECT (upstream
    #: C{ConnectResource}), C{options} the request's C{PodExecOptions}, ... object
    connect: Optional[Callable[[dict], Awaitable[None]]] = None


class AdmissionChain:
    """
    @ivar plugins: the enabled plugins, in upstream's order.
    @ivar internal: kubetwist's internal steps, run after the plugins in each phase.
    """

    def __init__(self, plugins: Sequence[Any] = (), internal: Sequence[Any] = (),
                 metrics: Any = None, timer: Callable[[], float] = time.perf_counter) -> None:
        """
        @param metrics: an L{AdmissionMetrics <kubetwist.admission.metrics.AdmissionMetrics>}
            (may be set later as C{self.metrics}), or C{None}: no metrics.
        @param timer: C{() -> seconds} for the durations the metrics record.
        """
        self.plugins = list(plugins)
        self.internal = list(internal)
        self.metrics = metrics
        self.timer = timer

    def steps(self) -> list[Any]:
        """The plugins, then the internal steps."""
        return self.plugins + self.internal

    async def _phase(self, step_type: str, interface: Any, method: str,
                     attributes: Attributes) -> None:
        """Run one phase, observing upstream's step and per-plugin durations."""
        steps = [p for p in self.steps()
                 if _has(p, interface, method) and p.handles(attributes.operation)]
        if not steps:
            return  # upstream's handlers skip a chain that handles nothing: no observation
        metrics = self.metrics
        plugins = set(map(id, self.plugins))
        start = self.timer() if metrics is not None else 0.0
        rejected = True
        try:
            for p in steps:
                if metrics is None or id(p) not in plugins:
                    await _settled(getattr(p, method)(attributes))
                    continue
                began, failed = self.timer(), True
                try:
                    await _settled(getattr(p, method)(attributes))
                    failed = False
                finally:
                    metrics.observe_controller(getattr(p, "name", type(p).__name__), step_type,
                                               attributes.operation, failed,
                                               self.timer() - began)
            rejected = False
        finally:
            if metrics is not None:
                metrics.observe_step(step_type, attributes.operation, rejected,
                                     self.timer() - start)

    async def admit(self, attributes: Attributes) -> None:
        """The mutating phase: every mutating step that handles the operation, in order; a
        second round when a step asked for it (upstream C{reinvoker.Admit}: a mutating
        webhook changed the object and webhooks with C{reinvocationPolicy: IfNeeded} ran
        before)."""
        await self._phase("admit", IMutationInterface, "admit", attributes)
        if attributes.reinvocation.should_reinvoke and not attributes.reinvocation.is_reinvoke:
            attributes.reinvocation.is_reinvoke = True
            await self._phase("admit", IMutationInterface, "admit", attributes)

    async def validate(self, attributes: Attributes) -> None:
        """The validating phase: every validating step that handles the operation, in order."""
        await self._phase("validate", IValidationInterface, "validate", attributes)

    def for_request(
        self, spec: Any, subresource: str, namespace: str, name: str, user: Any,
        dry_run: bool, options: Optional[dict] = None,
        annotate: Optional[Callable[[str, str], None]] = None,
        warn: Optional[Callable[[str], None]] = None,
    ) -> RequestAdmission:
        """
        Bind the chain to one request on the resource C{spec} (a C{ResourceSpec}) describes.

        A subresource's object names its kind (upstream's C{scope.Kind} of the subresource:
        C{autoscaling/v1 Scale}, C{v1 Binding}, C{policy/v1 Eviction},
        C{authentication.k8s.io/v1 TokenRequest}, C{v1 PodExecOptions} on CONNECT, the
        parent's kind for C{status}), which becomes C{Attributes.kind}.

        @param options: the request's options by operation (C{{"CREATE": CreateOptions,
            "UPDATE": UpdateOptions, "DELETE": DeleteOptions}}, each a C{meta.k8s.io/v1}
            object as a dict), if any: a patch holds both C{UPDATE} and C{CREATE} (an apply
            that creates), as upstream's patcher does.
        @param annotate: C{(key, value) -> None}, given the audit annotations the plugins
            added (L{Attributes.add_annotation}) after each phase, even a refusing one.
        @param warn: C{(text) -> None}, given the warnings the plugins added
            (L{Attributes.add_warning}) after each phase, even a refusing one.
        """

        def attributes(operation: str, obj: Optional[dict], old: Optional[dict]) -> Attributes:
            attrs = Attributes.for_spec(
                operation, spec, subresource, namespace,
                name or (obj or {}).get("metadata", {}).get("name", ""),
                obj, old, user, dry_run, (options or {}).get(operation),
            )
            if subresource and isinstance(obj, dict) and obj.get("kind") \
                    and obj.get("apiVersion"):
                # a subresource's kind is its object's (Scale, Binding, Eviction,
                # TokenRequest, PodExecOptions...; the parent's own for status)
                group, _, version = str(obj["apiVersion"]).rpartition("/")
                attrs.kind = GroupVersionKind(group, version, str(obj["kind"]))
            return attrs

        async def run(phase: Any, attrs: Attributes) -> None:
            try:
                await phase(attrs)
            finally:
                if annotate is not None:
                    for key, value in attrs.annotations.items():
                        annotate(key, value)
                if warn is not None:
                    for text in attrs.warnings:
                        warn(text)

        async def mutate(operation: str, obj: Optional[dict], old: Optional[dict]) -> None:
            await run(self.admit, attributes(operation, obj, old))

        async def validate(operation: str, obj: Optional[dict], old: Optional[dict]) -> None:
            await run(self.validate, attributes(operation, obj, old))

        async def connect(connect_options: dict) -> None:
            # upstream ConnectResource: both phases, the options object as the object
            await run(self.admit, attributes("CONNECT", connect_options, None))
            await run(self.validate, attributes("CONNECT", connect_options, None))

        return RequestAdmission(mutate=mutate, validate=validate, connect=connect)
